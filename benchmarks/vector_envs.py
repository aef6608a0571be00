"""Vector-env throughput against one env, measured in the same run: ``python benchmarks/vector_envs.py``.

For ``--num-envs`` N (default 2) it steps, in turn:

* **single**: one env, the baseline every ratio divides by;
* **sync**: ``gym.make_vec(..., vectorization_mode="sync")`` with N envs;
* **async**: ``vectorization_mode="async"`` (observations through shared memory, the default);
* **async, no shm**: ``vector_kwargs={"shared_memory": False}`` (observations pickled through the pipes).

and prints total env-steps per second and the ratio to the single env. Two workloads:

* ``valid``: the RL set-up of ``odyssey_env.wrappers.ValidActions``: valid actions listed every step, a
  seeded random policy over ``info["action_mask"]`` (what a masked policy costs the env);
* ``text``: plain text commands from a fixed cycle, valid actions never computed (the cheapest steps,
  where vector overhead shows most).

Targets (issue 14): async with 2 envs >= 1.5x one env's steps/s on 2 cores; sync costs <= 1.1x N
single steps, i.e. a sync ratio >= 0.91. This machine is shared and noisy, so the configurations are
interleaved round by round (``--rounds``) and each figure is the median over rounds, each ratio the
median of the per-round ratios. Run it on an otherwise idle machine for figures worth quoting.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np

import odyssey_env
from odyssey_env.wrappers import ValidActions

TEXT_COMMANDS = ["wait", "defend", "pick up stick", "enter nowhere", "inspect coin", "wait"]


def _policy(workload: str, infos: Any, rng: np.random.Generator, num_envs: int, step: int) -> Any:
    if workload == "valid":
        masks = infos["action_mask"]
        return np.array([rng.choice(np.flatnonzero(m)) for m in masks])
    return [TEXT_COMMANDS[(step + i) % len(TEXT_COMMANDS)] for i in range(num_envs)]


def _single(game: str, workload: str, seconds: float) -> float:
    env = gym.make(odyssey_env.env_id(game))
    if workload == "valid":
        env = ValidActions(env)
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(50):
            if workload == "valid":
                action = rng.choice(np.flatnonzero(info["action_mask"]))
            else:
                action = TEXT_COMMANDS[steps % len(TEXT_COMMANDS)]
            _, _, terminated, truncated, info = env.step(action)
            steps += 1
            if terminated or truncated:
                _, info = env.reset()
    rate = steps / (time.perf_counter() - start)
    env.close()
    return rate


def _vector(game: str, workload: str, mode: str, num_envs: int, seconds: float, **vector_kwargs: Any) -> float:
    wrappers = [ValidActions] if workload == "valid" else []
    envs = gym.make_vec(odyssey_env.env_id(game), num_envs=num_envs, vectorization_mode=mode,
                        vector_kwargs=vector_kwargs, wrappers=wrappers)
    try:
        _, infos = envs.reset(seed=0)
        envs.step(_policy(workload, infos, np.random.default_rng(1), num_envs, 0))  # workers warm
        rng = np.random.default_rng(0)
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(25):
                _, _, _, _, infos = envs.step(_policy(workload, infos, rng, num_envs, steps))
                steps += 1
        return steps * num_envs / (time.perf_counter() - start)
    finally:
        envs.close()


CONFIGS = {
    "single": lambda g, w, n, s: _single(g, w, s),
    "sync": lambda g, w, n, s: _vector(g, w, "sync", n, s),
    "async": lambda g, w, n, s: _vector(g, w, "async", n, s),
    "async, no shm": lambda g, w, n, s: _vector(g, w, "async", n, s, shared_memory=False),
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="remnant", choices=odyssey_env.available_games())
    ap.add_argument("--num-envs", type=int, default=2)
    ap.add_argument("--workloads", nargs="+", default=["valid", "text"], choices=["valid", "text"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    args = ap.parse_args(argv)
    print(f"game {args.game}, {args.num_envs} envs, {os.cpu_count()} CPUs, {args.rounds} rounds of "
          f"{args.seconds:.1f} s per configuration (medians; ratios are to the single env of the same round)")
    for workload in args.workloads:
        rates: dict[str, list[float]] = {name: [] for name in CONFIGS}
        ratios: dict[str, list[float]] = {name: [] for name in CONFIGS}
        for _ in range(args.rounds):
            single = CONFIGS["single"](args.game, workload, args.num_envs, args.seconds)
            rates["single"].append(single)
            ratios["single"].append(1.0)
            for name, run in CONFIGS.items():
                if name != "single":
                    rate = run(args.game, workload, args.num_envs, args.seconds)
                    rates[name].append(rate)
                    ratios[name].append(rate / single)
        print(f"\nworkload {workload!r}")
        print(f"  {'configuration':16} {'env-steps/s':>12} {'ratio':>7}   per-round ratios")
        for name in CONFIGS:
            print(f"  {name:16} {statistics.median(rates[name]):12,.0f} {statistics.median(ratios[name]):7.2f}   "
                  + " ".join(f"{r:.2f}" for r in ratios[name]))


if __name__ == "__main__":
    main()
