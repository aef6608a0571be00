"""Odyssey before and after a change, side by side: ``python benchmarks/before_after.py --before TREE [games...]``.

``TREE`` is another checkout of the project (``git worktree add``, or ``git archive REV | tar -x -C TREE``);
``--after`` is this one by default. The protocol and its worker are ``benchmarks/env_throughput.py``'s (a
seeded random player, valid actions every step, ``--steps`` from reset, CPU time of the process), run from
this checkout for both, with ``odyssey_env`` imported from each tree in turn (the child checks it was). Each
measurement is a fresh process; per game the two run interleaved ``--rounds`` times, the order alternating,
and each round's ratio divides the after rate by the before rate of the same round: nothing is compared with
a figure from another run. On a loaded machine read it beside an instruction or bytecode count
(``benchmarks/step_bytecodes.py``; docs/engine.md, "Performance").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
#: The child: this environment's editable-install finders set aside, so that ``odyssey_env`` comes from the tree.
BOOT = """
import json, sys
tree, here, game, steps, seed = sys.argv[1:6]
sys.meta_path[:] = [f for f in sys.meta_path
                    if "editable" not in getattr(f, "__module__", "") and "odyssey_gym_hook" not in repr(f)]
sys.path[:0] = [tree, here]
import odyssey_env
if not odyssey_env.__file__.startswith(tree):
    raise SystemExit(f"odyssey_env came from {odyssey_env.__file__}, not from {tree}")
import env_throughput
print(json.dumps(env_throughput.odyssey_worker(game, int(steps), int(seed), [], False)))
"""


def measure(tree: Path, game: str, steps: int, seed: int) -> float:
    """Steps per CPU-second of the protocol on ``game`` with ``odyssey_env`` from ``tree``, in a fresh process."""
    command = [sys.executable, "-c", BOOT, str(tree.resolve()), str(HERE), game, str(steps), str(seed)]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{game} from {tree}: {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return steps / float(result["cpu_s"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*", default=["mossfall"])
    parser.add_argument("--before", type=Path, required=True, help="the checkout before the change")
    parser.add_argument("--after", type=Path, default=HERE.parent, help="the checkout after it (default: this one)")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    trees = {"before": args.before, "after": args.after}
    print(f"steps per CPU-second, steps 0-{args.steps:,}, {args.rounds} rounds of fresh processes interleaved, medians")
    print("\n| game | before | after | after / before, median | range |\n|---|---|---|---|---|")
    for game in args.games:
        rates: dict[str, list[float]] = {"before": [], "after": []}
        ratios = []
        for r in range(args.rounds):
            got = {}
            for which in ("before", "after") if r % 2 == 0 else ("after", "before"):
                got[which] = measure(trees[which], game, args.steps, args.seed)
                rates[which].append(got[which])
            ratios.append(got["after"] / got["before"])
        before, after = statistics.median(rates["before"]), statistics.median(rates["after"])
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
        print(f"| {game} | {before:,.0f} | {after:,.0f} | {statistics.median(ratios):.2f}x | {spread} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
