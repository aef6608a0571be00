"""Vector-env throughput against one env, measured in the same run: ``python benchmarks/vector_envs.py``.

For ``--num-envs`` N (default 2) it steps, in turn:

* **single**: one env (over the same seeds as the sub-envs), the baseline every ratio divides by;
* **sync** / **async** / **async, no shm**: odyssey's vector env, what ``gym.make_vec(id, N)`` builds
  (``asynchronous=True``; ``shared_memory=False`` pickles observations through the pipes);
* **gym sync** / **gym async** / **gym async, no shm**: Gymnasium's own classes
  (``vectorization_mode="sync"`` / ``"async"``), with this package's shared-memory text codec.

and prints total env-steps per second and the ratio to the single env. Two workloads:

* ``valid``: the RL set-up of ``odyssey_env.wrappers.ValidActions``: valid actions listed every step, a
  seeded random policy over ``info["action_mask"]`` (what a masked policy costs the env);
* ``text``: plain text commands from a fixed cycle, valid actions never computed (the cheapest steps,
  where vector overhead shows most).

**calibrator async** is a pure-Python env of about a step's cost, with no overhead of its own, in
Gymnasium's ``AsyncVectorEnv`` against itself in one process: the parallel speed-up the machine gives
right now. When it is far below N, the cores are busy with other work and no async figure of that
run says anything about this package.

``--info-keys invalid_action`` (any subset of ``odyssey_env.env.INFO_KEYS``) measures envs that report
only what an RL loop reads: Gymnasium's vector envs merge infos leaf by leaf, so a full odyssey info
(about 25 leaves with ``ValidActions``) costs a sync vector env a good part of a step.

Targets (issue 14): async with 2 envs >= 1.5x one env's steps/s on 2 cores; sync costs <= 1.1x N
single steps, i.e. a sync ratio >= 0.91. This machine is shared and noisy, so the configurations are
interleaved round by round (``--rounds``) and each figure is the median over rounds, each ratio the
median of the per-round ratios. Parallel speed-up needs idle cores: on a loaded machine async
ratios say more about the other users than about the code. ``--cpus 0,1`` pins the run (and the
workers it starts) to those cores, to measure "2 cores" on a bigger machine.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np

import odyssey_env
from odyssey_env.wrappers import DEFAULT_MAX_ACTIONS, ValidActions

TEXT_COMMANDS = ["wait", "defend", "pick up stick", "enter nowhere", "inspect coin", "wait"]


def _policy(workload: str, infos: Any, rng: np.random.Generator, num_envs: int, step: int) -> Any:
    if workload == "valid":
        masks = infos["action_mask"]
        return np.array([rng.choice(np.flatnonzero(m)) for m in masks])
    return [TEXT_COMMANDS[(step + i) % len(TEXT_COMMANDS)] for i in range(num_envs)]


ENV_KWARGS: dict[str, Any] = {}  # --info-keys


def _single(game: str, workload: str, num_envs: int, seconds: float) -> float:
    steps, elapsed = 0, 0.0
    for seed in range(num_envs):  # the sub-envs' seeds, each for its share of the time
        env = gym.make(odyssey_env.env_id(game), **ENV_KWARGS)
        if workload == "valid":
            env = ValidActions(env)
        _, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        start = time.perf_counter()
        while time.perf_counter() - start < seconds / num_envs:
            for _ in range(25):
                if workload == "valid":
                    action = rng.choice(np.flatnonzero(info["action_mask"]))
                else:
                    action = TEXT_COMMANDS[steps % len(TEXT_COMMANDS)]
                _, _, terminated, truncated, info = env.step(action)
                steps += 1
                if terminated or truncated:
                    _, info = env.reset()
        elapsed += time.perf_counter() - start
        env.close()
    return steps / elapsed


def _vector(game: str, workload: str, num_envs: int, seconds: float, *, gymnasium: bool,
            asynchronous: bool, shared_memory: bool = True) -> float:
    if gymnasium:
        envs = gym.make_vec(odyssey_env.env_id(game), num_envs=num_envs,
                            vectorization_mode="async" if asynchronous else "sync",
                            vector_kwargs={"shared_memory": shared_memory} if asynchronous else {},
                            wrappers=[ValidActions] if workload == "valid" else [], **ENV_KWARGS)
    else:
        envs = gym.make_vec(odyssey_env.env_id(game), num_envs=num_envs, asynchronous=asynchronous,
                            shared_memory=shared_memory,
                            max_actions=DEFAULT_MAX_ACTIONS if workload == "valid" else None, **ENV_KWARGS)
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


class _Burn(gym.Env):
    """A calibrator: a step that is pure Python work of about an odyssey step's size, and nothing else.

    Its async ratio in the same round is the parallel speed-up this machine gives right now to an env
    with no overhead of its own: on a shared machine whose cores are busy it falls far below 2.
    """

    observation_space = gym.spaces.Discrete(1)
    action_space = gym.spaces.Discrete(1)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[int, dict]:
        super().reset(seed=seed)
        return 0, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict]:
        total = 0
        for i in range(2_000):
            total += i * i
        return 0, float(total & 1), False, False, {}


def _burn(game: str, workload: str, num_envs: int, seconds: float, *, asynchronous: bool) -> float:
    if asynchronous:
        envs: Any = gym.vector.AsyncVectorEnv([_Burn] * num_envs)
        step = functools.partial(envs.step, np.zeros(num_envs, dtype=np.int64))
    else:
        envs, num_envs = _Burn(), 1
        step = functools.partial(envs.step, 0)
    try:
        envs.reset(seed=0)
        step()
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(25):
                step()
                steps += 1
        return steps * num_envs / (time.perf_counter() - start)
    finally:
        envs.close()


CONFIGS = {
    "single": _single,
    "sync": functools.partial(_vector, gymnasium=False, asynchronous=False),
    "async": functools.partial(_vector, gymnasium=False, asynchronous=True),
    "async, no shm": functools.partial(_vector, gymnasium=False, asynchronous=True, shared_memory=False),
    "gym sync": functools.partial(_vector, gymnasium=True, asynchronous=False),
    "gym async": functools.partial(_vector, gymnasium=True, asynchronous=True),
    "gym async, no shm": functools.partial(_vector, gymnasium=True, asynchronous=True, shared_memory=False),
    "calibrator async": functools.partial(_burn, asynchronous=True),
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="remnant", choices=odyssey_env.available_games())
    ap.add_argument("--num-envs", type=int, default=2)
    ap.add_argument("--workloads", nargs="+", default=["valid", "text"], choices=["valid", "text"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--cpus", help="comma-separated CPU ids to run on (Linux), e.g. 0,1")
    ap.add_argument("--info-keys", nargs="*", metavar="KEY",
                    help="OdysseyEnv(info_keys=...) for every env (default: the full info); e.g. invalid_action")
    args = ap.parse_args(argv)
    if args.info_keys is not None:
        ENV_KWARGS["info_keys"] = args.info_keys
    if args.cpus:
        os.sched_setaffinity(0, {int(c) for c in args.cpus.split(",")})  # inherited by the async workers
    configs = ["single", *(c for c in args.configs if c != "single")]
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"game {args.game}, {args.num_envs} envs, {cpus} CPUs, {args.rounds} rounds of "
          f"{args.seconds:.1f} s per configuration (medians; ratios are to the single env of the same round); "
          f"info keys: {'all' if args.info_keys is None else ', '.join(args.info_keys) or 'none'}")
    for workload in args.workloads:
        rates: dict[str, list[float]] = {name: [] for name in configs}
        ratios: dict[str, list[float]] = {name: [] for name in configs}
        for _ in range(args.rounds):
            single = _single(args.game, workload, args.num_envs, args.seconds)
            rates["single"].append(single)
            ratios["single"].append(1.0)
            burn_single = None
            for name in configs[1:]:
                rate = CONFIGS[name](args.game, workload, args.num_envs, args.seconds)
                rates[name].append(rate)
                if name == "calibrator async":  # against the calibrator's own single env
                    burn_single = burn_single or _burn(args.game, workload, args.num_envs, args.seconds,
                                                       asynchronous=False)
                    ratios[name].append(rate / burn_single)
                else:
                    ratios[name].append(rate / single)
        print(f"\nworkload {workload!r}")
        print(f"  {'configuration':18} {'env-steps/s':>12} {'ratio':>7}   per-round ratios")
        for name in configs:
            print(f"  {name:18} {statistics.median(rates[name]):12,.0f} {statistics.median(ratios[name]):7.2f}   "
                  + " ".join(f"{r:.2f}" for r in ratios[name]))


if __name__ == "__main__":
    main()
