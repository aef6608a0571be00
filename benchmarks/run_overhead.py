"""Runner overhead: steps/s of ``odyssey run``'s loop against the bare env, in the same process.

Both sides play the same random agent (a uniform verb, then one of its valid commands) for the same
number of steps on the same seeds, so the only difference is what the runner adds: one JSON line
written and flushed per step, checkpoints every ``checkpoint_every`` steps, and the bookkeeping.
QA diagnostics are switched off on the runner side (they run before and after play, not per step).

    python benchmarks/run_overhead.py [--game mossfall] [--steps 3000] [--repeats 9]

Each repeat plays both sides back to back. Times are CPU times of this process (user + system, so
the runner's writes count) and the best of the repeats is kept: on a shared machine other load
stretches wall-clock times but hardly the CPU a process itself spends. Wall-clock rates are printed
too.

Target (issue 14): runner overhead at most 15% of CPU time over the bare env, on a quiet and on a
loaded machine, still writing and flushing one line per step; at least 3,000 steps/s end to end (50x the
reference's ~60 steps/s).

On a busy machine, count instructions instead (load-independent; user space only, so the write
system calls are not in it). A fixed hash seed, no address randomisation and OpenBLAS without its
worker threads (numpy comes with gymnasium; its idle threads spin under valgrind) make the counts
repeat to within about 0.1%; without them two runs of the same code differ by tens of millions:

    export PYTHONHASHSEED=0 OPENBLAS_NUM_THREADS=1
    for side in imports bare runner; do
      setarch -R valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        python benchmarks/run_overhead.py --only $side --steps 3000 --checkpoint-every 1000000000
    done
    # overhead = (runner - imports) / (bare - imports) - 1, from the "Collected" lines

(Under valgrind every decision takes longer than 0.1 ms, so the counts miss the tiny decision times
that fast agents write: a slightly different path through the line encoder.)
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


def _clocks() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def bare(game: str, steps: int, seed: int) -> tuple[float, float]:
    """Seconds for ``steps`` steps of env + random agent, no I/O (tutorial off: every step is play)."""
    env = OdysseyEnv(game, valid_actions=True)
    agent = RandomAgent()
    g = load_game(game)
    agent.reset(Task(g.name, g.title, tuple(env.verbs()), seed, steps))
    obs, info = env.reset(seed=seed)
    cpu, wall = _clocks()
    for _ in range(steps):
        decision = agent.act(obs, info)
        obs, _, terminated, _, info = env.step(decision.action)
        if terminated:
            obs, info = env.reset(seed=seed + 1)
    cpu2, wall2 = _clocks()
    return cpu2 - cpu, wall2 - wall


def runner(game: str, steps: int, seed: int, out: str, checkpoint_every: int) -> tuple[float, float]:
    cfg = {
        "game": {"name": game},
        "agent": {"name": "random"},
        "llm": {"name": "none"},
        "seed": seed,
        "max_steps": steps,
        "tutorial": False,
        "eval": {
            "output_dir": out,
            "checkpoint_every": checkpoint_every,
            "progress": False,
            # by step count only: under valgrind a run lasts minutes, and time-based checkpoints
            # (eval.checkpoint_max_seconds) would make instruction counts depend on the machine's load
            "checkpoint_max_seconds": None,
            "qa": {"enabled": False},
        },
    }
    cpu, wall = _clocks()
    outcome = run_cell(cfg, log=lambda _msg: None)
    cpu2, wall2 = _clocks()
    scale = steps / max(1, outcome.results["play_steps"])  # the quest may end early: scale to the steps played
    return (cpu2 - cpu) * scale, (wall2 - wall) * scale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="mossfall", choices=available_games())
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--checkpoint-every", type=int, default=25)
    parser.add_argument(
        "--only",
        choices=("imports", "bare", "runner"),
        help="run one side once and print nothing (for instruction counting, see the docstring)",
    )
    args = parser.parse_args()
    if args.only:
        with tempfile.TemporaryDirectory() as tmp:
            if args.only == "bare":
                bare(args.game, args.steps, 0)
            elif args.only == "runner":
                runner(args.game, args.steps, 0, tmp, args.checkpoint_every)
        return 0
    bare_t, run_t = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):  # interleaved, so drifts in machine load hit both sides alike
            bare_t.append(bare(args.game, args.steps, r))
            run_t.append(runner(args.game, args.steps, r, os.path.join(tmp, str(r)), args.checkpoint_every))
        traj_bytes = os.path.getsize(
            os.path.join(tmp, "0", args.game, "random", "none", "seed_0_no_tutorial", "trajectory.jsonl")
        )
    b, t = min(c for c, _ in bare_t), min(c for c, _ in run_t)
    bw, tw = min(w for _, w in bare_t), min(w for _, w in run_t)
    print(
        f"game {args.game}, {args.steps} steps x {args.repeats} repeats (best of), checkpoint every "
        f"{args.checkpoint_every} steps (at most every 5 s), Python {sys.version.split()[0]}"
    )
    print("                            CPU time       wall clock")
    print(f"bare env + random agent : {args.steps / b:8.0f} steps/s {args.steps / bw:8.0f} steps/s")
    print(
        f"odyssey runner          : {args.steps / t:8.0f} steps/s {args.steps / tw:8.0f} steps/s"
        "   (whole cell: setup, run dir, metrics, results)"
    )
    print(
        f"runner / bare           : {t / b:8.3f}         {tw / bw:8.3f}"
        f"          (overhead {100 * (t / b - 1):.1f}% CPU; target <= 15%)"
    )
    print(f"trajectory.jsonl        : {traj_bytes / args.steps:9.0f} bytes/step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
