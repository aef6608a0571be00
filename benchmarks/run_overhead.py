"""Runner overhead: steps/s of ``odyssey run``'s loop against the bare env, in the same process.

Both sides play the same random agent (a uniform verb, then one of its valid commands) for the same
number of steps on the same seeds, so the only difference is what the runner adds: one JSON line
written and flushed per step, checkpoints every ``checkpoint_every`` steps, and the bookkeeping.
QA diagnostics are switched off on the runner side (they run before and after play, not per step).

    python benchmarks/run_overhead.py [--game base] [--steps 5000] [--repeats 3]

Target (issue: Evaluation): runner overhead at most 20% over the bare env, and at least 3,000 steps/s
end to end (50x the reference's ~60 steps/s).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from odyssey_agents.base import Task
from odyssey_agents.random_agent import RandomAgent
from odyssey_env.env import OdysseyEnv
from odyssey_env.game import available_games, load_game
from odyssey_eval.runner import run_cell


def bare(game: str, steps: int, seed: int) -> float:
    """Seconds for ``steps`` steps of env + random agent, no I/O (tutorial off: every step is play)."""
    env = OdysseyEnv(game, valid_actions=True)
    agent = RandomAgent()
    g = load_game(game)
    agent.reset(Task(g.name, g.title, tuple(env.verbs()), seed, steps))
    obs, info = env.reset(seed=seed)
    start = time.perf_counter()
    for _ in range(steps):
        decision = agent.act(obs, info)
        obs, _, terminated, _, info = env.step(decision.action)
        if terminated:
            obs, info = env.reset(seed=seed + 1)
    return time.perf_counter() - start


def runner(game: str, steps: int, seed: int, out: str, checkpoint_every: int) -> float:
    cfg = {"game": {"name": game}, "agent": {"name": "random"}, "llm": {"name": "none"}, "seed": seed,
           "max_steps": steps, "tutorial": False,
           "eval": {"output_dir": out, "checkpoint_every": checkpoint_every, "progress": False,
                    "qa": {"enabled": False}}}
    start = time.perf_counter()
    outcome = run_cell(cfg, log=lambda _msg: None)
    seconds = time.perf_counter() - start
    if outcome.results["play_steps"] < steps:  # the quest ended early: scale to the steps played
        seconds *= steps / max(1, outcome.results["play_steps"])
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="base", choices=available_games())
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--checkpoint-every", type=int, default=50)
    args = parser.parse_args()
    bare_t, run_t = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):  # interleaved, so drifts in machine load hit both sides alike
            bare_t.append(bare(args.game, args.steps, r))
            run_t.append(runner(args.game, args.steps, r, os.path.join(tmp, str(r)), args.checkpoint_every))
        traj_bytes = os.path.getsize(os.path.join(tmp, "0", args.game, "random", "none", "seed_0",
                                                  "trajectory.jsonl"))
    b, t = min(bare_t), min(run_t)
    print(f"game {args.game}, {args.steps} steps x {args.repeats} repeats (best of), "
          f"checkpoint every {args.checkpoint_every} steps, Python {sys.version.split()[0]}")
    print(f"bare env + random agent : {args.steps / b:9.0f} steps/s")
    print(f"odyssey runner          : {args.steps / t:9.0f} steps/s (whole cell: setup, run dir, results)")
    print(f"runner / bare time      : {t / b:9.3f}  (overhead {100 * (t / b - 1):.1f}%, target <= 20%)")
    print(f"trajectory.jsonl        : {traj_bytes / args.steps:9.0f} bytes/step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
