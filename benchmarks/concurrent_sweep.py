"""A sweep of LLM cells against a real local OpenAI-compatible server, played by each launcher in the same run.

    pip install -e ".[bench]"
    python benchmarks/concurrent_sweep.py --cells 32 --steps 20 --latency 0.5 --launchers concurrent
    python benchmarks/concurrent_sweep.py --cells 64 --steps 50 --latency 1.0 --launchers basic,joblib,concurrent \\
        --basic-cells 4 --joblib-jobs 32 [--rpm 1200] [--error-rate 0.05]

The server is :mod:`chat_server` (aiohttp, in its own process): every call waits ``--latency`` seconds,
``--rpm`` bounds the requests a minute (``429`` with ``Retry-After`` beyond), ``--error-rate`` answers that
share of calls ``503``. Its replies are the scripted player's, seeded by the prompt, so every launcher must
end with the same trajectories: the script checks it (every line, less its wall-clock fields).

Per launcher: the wall time of the whole ``odyssey run -m`` command, the peak resident memory of its process
tree (psutil, sampled every 0.2 s, every process of the tree added up), the server's counts (requests, 429s,
errors, most in flight at once) and the cells that wrote ``results.json``. The ideal is ``steps x latency``:
every cell waiting on the server together. ``basic`` can be played on fewer cells (``--basic-cells``) and is
then scaled to the sweep (marked ``scaled``): at 1 s a call, 64 x 50 cells one after another take an hour.
The agent is ``no_memory`` on mossfall, no tutorial, QA off (a QA round is many calls more per cell, the same for all).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

from chat_server import fetch_stats, start

WALL_CLOCK = {"decision_time"}


def sweep_args(cells: int, steps: int, url: str) -> list[str]:
    seeds = ",".join(str(i) for i in range(cells))
    return [
        "agent=no_memory",
        "llm=vllm",
        "llm.model=bench",
        f"llm.base_url={url}",
        "game=mossfall",
        f"seed={seeds}",
        f"max_steps={steps}",
        "eval.qa.enabled=false",
        "eval.progress=false",
        "tutorial=false",  # max_steps play steps exactly: steps x latency is the ideal
    ]


def peak_rss(proc: subprocess.Popen[bytes], stop: threading.Event, out: list[int]) -> None:
    import psutil

    try:
        root = psutil.Process(proc.pid)
    except psutil.NoSuchProcess:
        return
    peak = 0
    while not stop.is_set():
        total = 0
        try:
            for p in [root, *root.children(recursive=True)]:
                with contextlib.suppress(psutil.NoSuchProcess):
                    total += p.memory_info().rss
        except psutil.NoSuchProcess:
            break
        peak = max(peak, total)
        stop.wait(0.2)
    out.append(peak)


def run(launcher: str, cells: int, args: argparse.Namespace, url: str, root: Path) -> dict:
    out = root / launcher
    cmd = [sys.executable, "-m", "odyssey_eval.cli", "run", "-m", *sweep_args(cells, args.steps, url)]
    cmd.append(f"eval.output_dir={out}")
    if launcher == "joblib":
        cmd += ["launcher=joblib", f"hydra.launcher.n_jobs={args.joblib_jobs}"]
    elif launcher == "concurrent":
        cmd += ["launcher=concurrent", f"hydra.launcher.max_concurrency={args.max_concurrency}"]
    before = fetch_stats(url)
    start_time = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stop, rss = threading.Event(), []
    sampler = threading.Thread(target=peak_rss, args=(proc, stop, rss))
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start_time
    stop.set()
    sampler.join()
    after = fetch_stats(url)
    if proc.returncode != 0:
        print(err.decode()[-2000:], file=sys.stderr)
    done = len(list(out.rglob("results.json")))
    return {
        "launcher": launcher,
        "cells": cells,
        "rc": proc.returncode,
        "wall_s": round(wall, 2),
        "peak_rss_mb": round((rss[0] if rss else 0) / 2**20),
        "results": done,
        **{k: after[k] - before[k] for k in ("requests", "replies", "rate_limited", "errors")},
        "server_peak_in_flight": after["peak_in_flight"],
    }


def trajectories(root: Path) -> dict[str, list[dict]]:
    out = {}
    for p in sorted(root.rglob("trajectory.jsonl")):
        lines = [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines()]
        out[p.parent.name] = [{k: v for k, v in line.items() if k not in WALL_CLOCK} for line in lines]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=32)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--rpm", type=float, default=None)
    parser.add_argument("--error-rate", type=float, default=0.0)
    parser.add_argument("--launchers", default="concurrent", help="comma-separated: basic, joblib, concurrent")
    parser.add_argument("--basic-cells", type=int, default=None, help="cells basic plays (scaled to --cells)")
    parser.add_argument("--joblib-jobs", type=int, default=32)
    parser.add_argument("--max-concurrency", type=int, default=64)
    args = parser.parse_args()
    options = ["--latency", str(args.latency), "--error-rate", str(args.error_rate)]
    if args.rpm:
        options += ["--rpm", str(args.rpm)]
    server, url = start(*options)
    ideal = args.steps * args.latency
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="odyssey-concurrent-") as tmp:
            root = Path(tmp)
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            for launcher in args.launchers.split(","):
                cells = args.basic_cells or args.cells if launcher == "basic" else args.cells
                row = run(launcher, cells, args, url, root)
                row["scaled_wall_s"] = round(row["wall_s"] * args.cells / cells, 1) if cells != args.cells else None
                row["vs_ideal"] = round((row["scaled_wall_s"] or row["wall_s"]) / ideal, 2)
                rows.append(row)
                print(json.dumps(row), flush=True)
            names = [r["launcher"] for r in rows]
            if len(names) > 1:
                first = trajectories(root / names[0])
                for name in names[1:]:
                    other = trajectories(root / name)
                    same = all(other.get(k) == v for k, v in first.items() if k in other)
                    print(f"trajectories of {name} equal {names[0]}'s on the cells both played: {same}")
    finally:
        server.kill()
    print(f"ideal (every cell waiting together): {ideal:.1f} s")


if __name__ == "__main__":
    main()
