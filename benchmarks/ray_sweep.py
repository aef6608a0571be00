"""One sweep, played by each launcher: wall-clock time of ``odyssey run -m`` with ``launcher=basic``,
``joblib``, ``ray`` (a Ray started for the sweep) and ``ray`` on a running cluster (``ray start --head``
on 127.0.0.1, started by this script before timing and stopped after), in the same run.

    pip install -e ".[ray]"
    python benchmarks/ray_sweep.py [--cells 8] [--steps 3000] [--cpus 2] [--repeats 1]

Every launcher plays the same cells (random agent on mossfall, quiet_bell and tallowmere, seeds 0, 1, ...; QA off)
into a directory of its own; the script checks that each wrote the same trajectories as ``basic``
(every line, less its wall-clock fields) and prints each launcher's time and speed-up over ``basic``.
Times are whole commands, Hydra's start and Ray's included: what a user waits for. With ``--cpus``
cores the parallel launchers can at best be ``--cpus`` times faster; Ray pays a fixed start (its
processes, or the connection and a worker per CPU) that a longer sweep amortises.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GAMES = ("mossfall", "quiet_bell", "tallowmere")
RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


def sweep_args(cells: int, steps: int) -> list[str]:
    games = GAMES[: min(cells, len(GAMES))]
    seeds = -(-cells // len(games))
    if len(games) * seeds != cells:
        raise SystemExit(f"--cells {cells}: use a multiple of {len(games)} (games x seeds)")
    return [
        "agent=random",
        f"game={','.join(games)}",
        f"seed={','.join(map(str, range(seeds)))}",
        f"max_steps={steps}",
        "eval.qa.enabled=false",
        "eval.progress=false",
    ]


def play(args: list[str], out: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "odyssey_eval.cli", "run", "-m", *args, f"eval.output_dir={out}"],
        env=env,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return took


#: the only fields two plays of a cell may differ in
WALL_CLOCK = {"decision_time", "seconds", "wall_time"}


def trajectories(root: Path) -> dict[str, list[dict]]:
    """Per cell, its trajectory's lines less their wall-clock fields."""
    cells = {}
    for path in sorted(root.rglob("trajectory.jsonl")):
        steps = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        cells[str(path.parent.relative_to(root))] = [{k: v for k, v in s.items() if k not in WALL_CLOCK} for s in steps]
    return cells


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_head(cpus: int, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    log = Path(env["RAY_TMPDIR"]) / "head.log"
    with open(log, "w") as out:
        head = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ray.scripts.scripts",
                "start",
                "--head",
                "--block",
                "--node-ip-address",
                "127.0.0.1",
                "--port",
                str(port),
                "--num-cpus",
                str(cpus),
                "--include-dashboard=false",
                "--disable-usage-stats",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    while "Ray runtime started" not in log.read_text():
        if head.poll() is not None:
            raise SystemExit(f"ray start --head failed:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)
    return head, f"127.0.0.1:{port}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=6)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 1, help="CPUs for joblib and Ray")
    parser.add_argument("--repeats", type=int, default=1, help="the best of this many runs per launcher")
    opts = parser.parse_args()
    try:
        import ray  # noqa: F401
    except ImportError:
        raise SystemExit('this benchmark needs the ray extra: pip install "odyssey-gym[ray]"') from None

    args = sweep_args(opts.cells, opts.steps)
    work = Path(tempfile.mkdtemp(prefix="oraybench", dir="/tmp"))  # Ray's socket paths must stay short
    env = {**os.environ, **RAY_ENV, "RAY_TMPDIR": str(work), "HF_HUB_OFFLINE": "1"}
    head, address = start_head(opts.cpus, env)
    launchers = {
        "basic": ["launcher=basic"],
        "joblib": ["launcher=joblib", f"hydra.launcher.n_jobs={opts.cpus}"],
        "ray (local)": ["launcher=ray", f"+hydra.launcher.init.num_cpus={opts.cpus}"],
        "ray (cluster)": ["launcher=ray", f"hydra.launcher.address={address}"],
    }
    times: dict[str, float] = {}
    try:
        for name, extra in launchers.items():
            best = float("inf")
            for i in range(opts.repeats):
                out = work / f"{''.join(c for c in name if c.isalnum())}_{i}"
                best = min(best, play([*args, *extra], out, env))
                if trajectories(out) != trajectories(work / "basic_0"):
                    raise SystemExit(f"{name}: the trajectories differ from launcher=basic's")
            times[name] = best
    finally:
        head.terminate()
        head.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)

    print(
        f"sweep: {opts.cells} cells x {opts.steps} steps ({' '.join(args)}); {opts.cpus} CPUs for the parallel "
        f"launchers; best of {opts.repeats}; same trajectories as basic: yes"
    )
    for name, took in times.items():
        print(f"  {name:14s} {took:7.1f} s   {times['basic'] / took:4.2f}x basic")


if __name__ == "__main__":
    main()
