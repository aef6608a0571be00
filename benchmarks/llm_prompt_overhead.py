"""LLM-agent overhead: prompt building + reply parsing per step, and prompt tokens per step.

Every paradigm plays the same game on the scripted backend (instant, deterministic), so what is
timed is the agent's own work: building the memory sections and the prompt, parsing the reply,
updating memory. The backend's time (the scripted player and its word counter) is measured apart
and subtracted. Times are CPU times of this process (``time.process_time``): other load on a shared
machine stretches wall-clock times but hardly what the process itself spends.

    python benchmarks/llm_prompt_overhead.py [--game tallowmere] [--steps 400] [--seed 0]

Prints, per paradigm (and with reflection + summarisation): mean and 95th-percentile agent time
per step, and the act prompt's input tokens at steps 10 and ``--steps`` (words and punctuation,
the scripted backend's tokenizer; real BPE counts are about 1.3x higher).

Targets (issue: LLM agents): under 1 ms per step for prompt building and parsing; the prompts of
NoMemory, ShortTermMemory and Mem1 stay bounded; Long Context grows linearly with the step.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from timed_llm import Timed

from odyssey_agents.base import Task
from odyssey_agents.llm.scripted import ScriptedLLM
from odyssey_agents.paradigms import LongContextAgent, Mem1Agent, NoMemoryAgent, ShortTermMemoryAgent
from odyssey_env.env import OdysseyEnv
from odyssey_env.game import available_games

PARADIGMS = [NoMemoryAgent, LongContextAgent, ShortTermMemoryAgent, Mem1Agent]


def measure(cls: type, addons: tuple[str, ...], game: str, steps: int, seed: int) -> dict[str, Any]:
    llm = Timed(ScriptedLLM(seed=seed))
    agent = cls(llm, addons=addons)
    env = OdysseyEnv(game)
    obs, info = env.reset(seed=seed)
    agent.reset(Task(game, game, tuple(env.verbs()), seed))
    per_step: list[float] = []
    tokens: list[int] = []
    for _ in range(steps):
        before_llm = llm.seconds
        start = time.process_time()
        decision = agent.act(obs, info)
        elapsed = time.process_time() - start - (llm.seconds - before_llm)
        per_step.append(elapsed)
        tokens.append(next(c.input_tokens for c in decision.usage.calls if c.purpose == "act"))
        obs, _, terminated, _, info = env.step(decision.action)
        if terminated:
            break
    ordered = sorted(per_step)
    return {
        "label": agent.label,
        "steps": len(per_step),
        "mean_ms": 1e3 * sum(per_step) / len(per_step),
        "p95_ms": 1e3 * ordered[int(0.95 * (len(ordered) - 1))],
        "tokens_10": tokens[9],
        "tokens_last": tokens[-1],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    games = available_games()
    parser.add_argument("--game", default="tallowmere" if "tallowmere" in games else "mossfall", choices=games)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.steps < 10:
        parser.error("--steps must be at least 10")
    print(
        f"game {args.game}, {args.steps} steps, scripted backend, seed {args.seed}; CPU time per step "
        "without the backend's own time"
    )
    header = f"{'agent':<46} {'ms/step':>8} {'p95 ms':>8} {'tok@10':>8} {'tok@' + str(args.steps):>9}"
    print(header)
    print("-" * len(header))
    worst = 0.0
    for addons in ((), ("reflection", "summarisation")):
        for cls in PARADIGMS:
            r = measure(cls, addons, args.game, args.steps, args.seed)
            worst = max(worst, r["mean_ms"])
            print(
                f"{r['label']:<46} {r['mean_ms']:>8.3f} {r['p95_ms']:>8.3f} {r['tokens_10']:>8} {r['tokens_last']:>9}"
            )
    print(f"\nworst mean agent overhead: {worst:.3f} ms/step (target < 1 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
