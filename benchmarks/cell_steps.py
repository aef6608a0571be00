"""Steps/s of whole cells, each in a fresh process: this checkout against another source tree.

    git archive main | tar -x -C /tmp/main_tree
    python benchmarks/cell_steps.py --against /tmp/main_tree [--steps 2000] [--repeats 7]

A cell of one random agent and a cell of two (``agents=[random,random]``) play ``--steps`` play
steps on mossfall (no tutorial, QA off, checkpoints every 25 steps as by default), each run in a new
interpreter, so imports, caches and the allocator start alike. The two trees alternate run by run
(A B A B ...), so drifts in machine load hit both alike. Times are the CPU time (user + system) of the
``run_cell`` call in the child, best of the repeats; the ratio is this tree's steps/s over the other's
(above 1: this tree is faster). Without ``--against`` only this tree is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

_CHILD = """
import json, sys, time
cfg = json.loads(sys.argv[1])
from odyssey_eval import runner
play = getattr(runner, "run_multi_cell", None) if "agents" in cfg else runner.run_cell
if play is None:  # a tree from before the runner held both entry points
    from odyssey_eval.multirunner import run_multi_cell as play
start = time.process_time()
out = play(cfg, log=lambda _m: None)
cpu = time.process_time() - start
steps = out.results["steps"]
print(json.dumps({"cpu": cpu, "steps": steps, "file": runner.__file__}))
"""


def _config(shape: str, steps: int, out: str) -> dict:
    cfg = {
        "game": {"name": "mossfall"},
        "llm": {"name": "none"},
        "seed": 0,
        "max_steps": steps,
        "tutorial": False,
        "eval": {"output_dir": out, "progress": False, "checkpoint_max_seconds": None, "qa": {"enabled": False}},
    }
    if shape == "solo":
        cfg["agent"] = {"name": "random"}
    else:
        cfg["agents"] = ["random", "random"]
    return cfg


def _run(tree: Path, cfg: dict, cwd: str) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "PYTHONHASHSEED": "0"}
    done = subprocess.run(  # run elsewhere: `python -c` puts the working directory first on sys.path
        [sys.executable, "-c", _CHILD, json.dumps(cfg)], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree}: the cell failed:\n{done.stderr[-2000:]}")
    row = json.loads(done.stdout.strip().splitlines()[-1])
    if not row["file"].startswith(str(tree)):
        raise SystemExit(f"{tree}: the child imported {row['file']}, not this tree (an installed copy first?)")
    return row["cpu"], row["steps"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="another source tree (a git archive of main, say)")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--shapes", default="solo,team")
    args = parser.parse_args()
    trees = {"this": HERE}
    if args.against is not None:
        trees["other"] = args.against.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            best: dict[str, float] = {}
            for r in range(args.repeats):
                for name, tree in trees.items():  # interleaved
                    cpu, steps = _run(tree, _config(shape, args.steps, os.path.join(tmp, f"{shape}_{name}_{r}")), tmp)
                    best[name] = min(best.get(name, float("inf")), cpu / steps)
            line = f"{shape}: " + ", ".join(f"{n} {1 / s:,.0f} steps/s" for n, s in best.items())
            if "other" in best:
                line += f"; this/other {best['other'] / best['this']:.3f}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
