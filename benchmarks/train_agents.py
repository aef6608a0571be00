"""What learning costs: seconds per update and peak memory of each learning paradigm, on CPU.

Every paradigm plays the same steps of the same game with the embedded SmolLM2-135M model
(``llm=embedded``: guided JSON, CPU), each in its own process so that peak memory (the process's
maximum resident set) is its own; ``no_memory`` plays the same steps as the baseline the others are
read against (same model, same prompts, no learning).

    python benchmarks/train_agents.py [--steps 6] [--game mossfall] [--threads 1] [--grpo-steps 2]

Columns: steps played, updates made, tokens read per update (all epochs), seconds per update (the
``train`` calls; for ``kv_window``, ``memoryllm`` and ``mplus`` a write into the memory, every step),
seconds per act call, the
share of the step time spent learning, peak RSS and the extra over the baseline. A last row times
``odyssey train grpo`` on the same model (seconds per GRPO step: generation of the group plus the
update). Settings are the paradigms' defaults except where the table says (so that several updates
happen within a few steps).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

#: paradigm -> (agent settings, what differs from its defaults)
PARADIGMS: dict[str, tuple[dict[str, Any], str]] = {
    "no_memory": ({}, "baseline"),
    "lora_sft": ({"train_every": 2}, "train_every=2 (2 examples, 2 epochs, batch 2)"),
    "rl_lora": ({"update_every": 2, "horizon": 0, "batch_size": 2}, "update_every=2, horizon=0"),
    "kv_window": ({"pool_size": 2048}, "pool_size=2048"),
    "memoryllm": ({"pool_size": 1024, "update_tokens": 256}, "pool_size=1024 update_tokens=256"),
    "mplus": (
        {"pool_size": 1024, "update_tokens": 256, "long_term_size": 2048, "retrieve_tokens": 256},
        "pool 1024, K 256, long-term 2048, retrieve 256",
    ),
}


def child(name: str, steps: int, game: str, threads: int) -> dict[str, Any]:
    from odyssey_agents.base import Task
    from odyssey_env.env import OdysseyEnv
    from odyssey_eval.factory import build_agent

    settings, _ = PARADIGMS[name]
    agent = build_agent({"name": name, **settings}, {"name": "embedded", "threads": threads}, seed=0)
    env = OdysseyEnv(game)
    obs, info = env.reset(seed=0)
    agent.reset(Task(game, env.game.title, tuple(env.verbs()), 0))
    update_seconds: list[float] = []
    update_tokens: list[int] = []
    act_seconds: list[float] = []
    total = 0.0
    for _ in range(steps):
        start = time.perf_counter()
        decision = agent.act(obs, info)
        total += time.perf_counter() - start
        for call in decision.usage.calls:
            if call.purpose in ("train", "memorise"):
                update_seconds.append(call.seconds)
                update_tokens.append(call.input_tokens)
            elif call.purpose == "act":
                act_seconds.append(call.seconds)
        obs, _, terminated, _, info = env.step(decision.action)
        if terminated:
            break
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "name": name,
        "steps": len(act_seconds),
        "updates": len(update_seconds),
        "update_s": sum(update_seconds) / len(update_seconds) if update_seconds else None,
        "update_tokens": sum(update_tokens) / len(update_tokens) if update_tokens else None,
        "act_s": sum(act_seconds) / len(act_seconds),
        "learn_share": sum(update_seconds) / total,
        "peak_mb": peak_kb / 1024,
    }


def grpo_child(steps: int, game: str, threads: int) -> dict[str, Any]:
    import torch

    from odyssey_agents.training.grpo import GRPOSettings, train_grpo

    torch.set_num_threads(threads)
    with tempfile.TemporaryDirectory() as out:
        summary = train_grpo(
            GRPOSettings(
                game=game,
                model="embedded",
                steps=steps,
                states=8,
                num_generations=2,
                batch_size=2,
                max_completion_length=48,
                output_dir=out,
                device="cpu",
            ),
            log=lambda _: None,
        )
    return {
        "name": "grpo (odyssey train)",
        "steps": summary["steps"],
        "updates": summary["steps"],
        "update_s": summary["seconds_per_step"],
        "update_tokens": None,
        "act_s": None,
        "learn_share": None,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--game", default="mossfall")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest on a busy machine)")
    parser.add_argument("--grpo-steps", type=int, default=2, help="0 skips the GRPO row")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = (
            grpo_child(args.grpo_steps, args.game, args.threads)
            if args.child == "grpo"
            else child(args.child, args.steps, args.game, args.threads)
        )
        print(json.dumps(result))
        return 0
    names = [*PARADIGMS, *(["grpo"] if args.grpo_steps else [])]
    rows = []
    for name in names:
        done = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                name,
                "--steps",
                str(args.steps),
                "--game",
                args.game,
                "--threads",
                str(args.threads),
                "--grpo-steps",
                str(args.grpo_steps),
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode:
            print(f"{name}: failed\n{done.stderr[-3000:]}", file=sys.stderr)
            return 1
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    base = rows[0]["peak_mb"]
    print(
        f"embedded SmolLM2-135M on CPU, {args.threads} thread(s), game {args.game}, {args.steps} steps; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(
        f"{'paradigm':<22}{'steps':>6}{'updates':>8}{'tok/update':>11}{'s/update':>10}{'s/act':>8}{'learning':>10}"
        f"{'peak MB':>9}{'+MB':>7}  settings"
    )
    for r in rows:
        note = PARADIGMS.get(r["name"], ({}, f"{args.grpo_steps} steps, 2 generations of 48 tokens"))[1]
        fmt = lambda v, spec: format(v, spec) if v is not None else "-"  # noqa: E731
        share = "-" if r["learn_share"] is None else f"{100 * r['learn_share']:.0f}%"
        print(
            f"{r['name']:<22}{r['steps']:>6}{r['updates']:>8}{fmt(r['update_tokens'], '11.0f'):>11}"
            f"{fmt(r['update_s'], '10.2f'):>10}"
            f"{fmt(r['act_s'], '8.2f'):>8}{share:>10}"
            f"{r['peak_mb']:>9.0f}{r['peak_mb'] - base:>7.0f}  {note}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
