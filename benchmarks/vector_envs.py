"""Vector-env throughput against one env, measured in the same run: ``python benchmarks/vector_envs.py``.

**Scaling** (the default): async vector envs of 1, 2, 4, 8 and 16 sub-envs (``--envs``), what
``gym.make_vec(id, N, asynchronous=True)`` builds (``workers`` processes, one fewer than the CPUs, plus
the calling process), each against one env stepped in the same round, with two more figures per row:

* **ceiling**: N processes stepping one env each, never talking to each other: the parallel speed-up
  the machine gives right now, which no vector env can exceed (it adds lockstep, messages and the info
  merge). Far below min(N, CPUs) means the cores are busy with other work, and no async figure of
  that run says much about this package;
* **outside env code**: the share of the vector env's CPU time, over all its processes, spent outside
  the sub-envs' own ``step`` and ``reset`` (messages, pickling, batching, merging infos) and outside the
  benchmark's policy (given apart, **policy**). Each sub-env is wrapped to count its own CPU time; each
  process reports its CPU time through ``call``.

It prints a Markdown table ready for ``docs/engine.md``, with the command and the machine. Two
workloads (``--workload``): ``valid``, the RL set-up of ``odyssey_env.wrappers.ValidActions`` (valid
actions listed every step, a seeded random policy over ``info["action_mask"]``), and ``text``, plain
text commands from a fixed cycle (valid actions never computed: the cheapest steps, where vector
overhead shows most).

**Comparison** (``--compare``, at ``--num-envs`` N): odyssey's sync and async vector envs (lazy and
eager infos), Gymnasium's own classes (``vectorization_mode="sync"`` / ``"async"``), and three
ceilings: **round-robin** (N envs stepped one after the other in one process: a sync vector env that
costs nothing), **lockstep** (the async env's shares stepped in lockstep with only a token crossing
the processes, each computing its own actions: a perfect async vector env with those shares) and the
independent-process **ceiling** above.

The configurations are interleaved round by round (``--rounds``); each figure is the median over rounds,
each ratio the median of the per-round ratios. ``--cpus 0,1`` pins the run (and the workers it starts)
to those cores. ``--info-keys invalid_action`` (any subset of ``odyssey_env.env.INFO_KEYS``) measures
envs that report only what an RL loop reads.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing as mp
import os
import platform
import statistics
import sys
import time
from typing import Any

import gymnasium as gym
import numpy as np

import odyssey_env
from odyssey_env.env import OdysseyEnv
from odyssey_env.vector import OdysseyAsyncVectorEnv, make_vector_env
from odyssey_env.vector.parallel import _share_sizes, _usable_cpus
from odyssey_env.wrappers import DEFAULT_MAX_ACTIONS, ValidActions

TEXT_COMMANDS = ["wait", "defend", "pick up stick", "enter nowhere", "inspect coin", "wait"]
ENV_KWARGS: dict[str, Any] = {}  # --info-keys


def _env(game: str, workload: str) -> gym.Env:
    """A sub-env as ``make_vector_env`` builds it (no ``gym.make`` wrappers: none in a vector env either)."""
    env: gym.Env = OdysseyEnv(**{"game": game, **ENV_KWARGS})
    return ValidActions(env, DEFAULT_MAX_ACTIONS) if workload == "valid" else env


def _action(workload: str, info: dict[str, Any], rng: np.random.Generator, step: int) -> Any:
    if workload == "valid":
        return rng.choice(np.flatnonzero(info["action_mask"]))
    return TEXT_COMMANDS[step % len(TEXT_COMMANDS)]


def _policy(workload: str, infos: Any, rng: np.random.Generator, num_envs: int, step: int) -> Any:
    if workload == "valid":
        return np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
    return [TEXT_COMMANDS[(step + i) % len(TEXT_COMMANDS)] for i in range(num_envs)]


def _single(game: str, workload: str, num_envs: int, seconds: float) -> float:
    """One env's steps/s, over the sub-envs' seeds (each for its share of the time): every ratio's baseline."""
    steps, elapsed = 0, 0.0
    for seed in range(num_envs):
        env = _env(game, workload)
        _, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        start = time.perf_counter()
        while time.perf_counter() - start < seconds / num_envs:
            for _ in range(25):
                _, _, terminated, truncated, info = env.step(_action(workload, info, rng, steps))
                steps += 1
                if terminated or truncated:
                    _, info = env.reset()
        elapsed += time.perf_counter() - start
        env.close()
    return steps / elapsed


# ------------------------------------------------------------------ scaling: async envs and where their CPU goes
class _Timed(gym.Wrapper):
    """A sub-env that counts the CPU time of its own ``step`` and ``reset``, and reports its process's."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.in_env_s = 0.0

    def step(self, action: Any) -> Any:
        start = time.process_time()
        try:
            return self.env.step(action)
        finally:
            self.in_env_s += time.process_time() - start

    def reset(self, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return self.env.reset(**kwargs)
        finally:
            self.in_env_s += time.process_time() - start

    def cpu_report(self) -> tuple[int, float, float]:
        return os.getpid(), self.in_env_s, time.process_time()


def _timed_sub_env(game: str, workload: str) -> gym.Env:
    return _Timed(_env(game, workload))


def _cpu(envs: Any) -> tuple[float, float]:
    """CPU seconds so far of the vector env's processes (each counted once) and inside its sub-envs."""
    processes: dict[int, float] = {}
    in_env = 0.0
    for pid, inside, process_cpu in envs.call("cpu_report"):
        processes[pid] = process_cpu
        in_env += inside
    return sum(processes.values()), in_env


def _async_split(game: str, workload: str, num_envs: int, seconds: float) -> dict[str, float]:
    """An async vector env of ``num_envs`` (as ``make_vector_env(asynchronous=True)`` builds it, each sub-env
    timed): its env-steps/s and the shares of its CPU spent in the sub-envs, in the policy, and elsewhere."""
    make = functools.partial(_timed_sub_env, game, workload)
    envs = OdysseyAsyncVectorEnv([make] * num_envs, copy=False, lazy_infos=True)
    try:
        _, infos = envs.reset(seed=0)
        rng = np.random.default_rng(0)
        envs.step(_policy(workload, infos, rng, num_envs, 0))  # workers warm
        total_before, in_env_before = _cpu(envs)
        policy_s = 0.0
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(25):
                begin = time.process_time()
                actions = _policy(workload, infos, rng, num_envs, steps)
                policy_s += time.process_time() - begin
                _, _, _, _, infos = envs.step(actions)
                steps += 1
        elapsed = time.perf_counter() - start
        total_after, in_env_after = _cpu(envs)
        processes = len(envs._workers) + 1
    finally:
        envs.close()
    total = total_after - total_before
    in_env = in_env_after - in_env_before
    return {
        "rate": steps * num_envs / elapsed,
        "processes": processes,
        "in_env": in_env / total,
        "policy": policy_s / total,
        "outside": (total - in_env - policy_s) / total,
    }


def _alone(game: str, workload: str, seed: int, seconds: float, start: Any, out: Any) -> None:
    env = _env(game, workload)
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    start.wait()
    steps, begin = 0, time.perf_counter()
    while time.perf_counter() - begin < seconds:
        for _ in range(25):
            _, _, terminated, truncated, info = env.step(_action(workload, info, rng, steps))
            steps += 1
            if terminated or truncated:
                _, info = env.reset()
    out.put(steps / (time.perf_counter() - begin))


def _ceiling(game: str, workload: str, num_envs: int, seconds: float) -> float:
    """N processes stepping one env each, never talking to each other: what N cores give right now."""
    ctx = mp.get_context()
    start, out = ctx.Barrier(num_envs), ctx.Queue()
    processes = [
        ctx.Process(target=_alone, args=(game, workload, seed, seconds, start, out)) for seed in range(num_envs)
    ]
    for process in processes:
        process.start()
    rates = [out.get(timeout=seconds + 120) for _ in processes]
    for process in processes:
        process.join()
    return sum(rates)


def scaling(args: argparse.Namespace) -> None:
    cpus = _usable_cpus()
    rows: dict[int, dict[str, list[float]]] = {n: {} for n in args.envs}
    for _ in range(args.rounds):
        for n in args.envs:
            single = _single(args.game, args.workload, min(n, 4), args.seconds)
            split = _async_split(args.game, args.workload, n, args.seconds)
            figures = {
                "single": single,
                "async": split["rate"],
                "ratio": split["rate"] / single,
                "processes": split["processes"],
                "outside": split["outside"],
                "policy": split["policy"],
            }
            if not args.no_ceiling:
                figures["ceiling"] = _ceiling(args.game, args.workload, n, args.seconds) / single
            for key, value in figures.items():
                rows[n].setdefault(key, []).append(value)
    command = "python benchmarks/vector_envs.py " + " ".join(sys.argv[1:])
    print(
        f"Async vector envs against one env, {args.game}, workload `{args.workload}`, info keys: "
        f"{'all' if args.info_keys is None else ', '.join(args.info_keys) or 'none'}; {cpus} CPUs "
        f"({platform.processor() or platform.machine()}), load {os.getloadavg()[0]:.1f}, Python "
        f"{platform.python_version()}; {args.rounds} rounds of {args.seconds:.1f} s per figure, medians "
        f"(`{command.strip()}`):\n"
    )
    ceiling = "" if args.no_ceiling else " ceiling / one env |"
    print(
        f"| envs | processes | one env, steps/s | async, env-steps/s | async / one env |{ceiling}"
        " outside env code | policy |"
    )
    print("|---|---|---|---|---|" + ("---|" if ceiling else "") + "---|---|")
    for n, figures in rows.items():
        med = {key: statistics.median(values) for key, values in figures.items()}
        cells = [
            f"{n}",
            f"{med['processes']:.0f}",
            f"{med['single']:,.0f}",
            f"{med['async']:,.0f}",
            f"{med['ratio']:.2f}",
            *([f"{med['ceiling']:.2f}"] if ceiling else []),
            f"{100 * med['outside']:.0f}%",
            f"{100 * med['policy']:.0f}%",
        ]
        print("| " + " | ".join(cells) + " |")


# ------------------------------------------------------------------ comparison of configurations at one N
def _vector(
    game: str,
    workload: str,
    num_envs: int,
    seconds: float,
    *,
    gymnasium: bool,
    asynchronous: bool,
    shared_memory: bool = True,
    lazy_infos: bool = True,
) -> float:
    if gymnasium:
        envs = gym.make_vec(
            odyssey_env.env_id(game),
            num_envs=num_envs,
            vectorization_mode="async" if asynchronous else "sync",
            vector_kwargs={"shared_memory": shared_memory} if asynchronous else {},
            wrappers=[ValidActions] if workload == "valid" else [],
            **ENV_KWARGS,
        )
    else:
        envs = make_vector_env(
            num_envs,
            asynchronous=asynchronous,
            max_actions=DEFAULT_MAX_ACTIONS if workload == "valid" else None,
            lazy_infos=lazy_infos,
            game=game,
            **ENV_KWARGS,
        )
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


class _Share:
    """One process's share of sub-envs for the lockstep and round-robin ceilings: steps each with the policy."""

    def __init__(self, game: str, workload: str, seeds: list[int]):
        self.workload, self.envs, self.infos, self.rngs, self.steps = workload, [], [], [], 0
        for seed in seeds:
            env = _env(game, workload)
            self.envs.append(env)
            self.infos.append(env.reset(seed=seed)[1])
            self.rngs.append(np.random.default_rng(seed))

    def step(self) -> None:
        for i, env in enumerate(self.envs):
            action = _action(self.workload, self.infos[i], self.rngs[i], self.steps)
            _, _, terminated, truncated, self.infos[i] = env.step(action)
            if terminated or truncated:
                self.infos[i] = env.reset()[1]
        self.steps += 1


def _lockstep_worker(pipe: Any, other_end: Any, game: str, workload: str, seeds: list[int]) -> None:
    other_end.close()
    share = _Share(game, workload, seeds)
    pipe.send("ready")
    while pipe.recv():
        share.step()
        pipe.send(True)


def _lockstep(game: str, workload: str, num_envs: int, seconds: float) -> float:
    """The async vector env's shares stepped in lockstep with nothing but a token exchanged per step.

    Each process computes its own sub-envs' actions and nothing crosses the processes but "go" and
    "done" (through pipes, as the async env's messages): what a perfect async vector env with the same
    shares would reach. The async figure's gap to it is the vector env's own cost: the policy computed
    in one process, observations and infos sent, merged.
    """
    sizes = _share_sizes(num_envs, min(num_envs, _usable_cpus()) - 1)
    ctx = mp.get_context()
    pipes, processes, first = [], [], sizes[0]
    for size in sizes[1:]:
        pipe, child = ctx.Pipe(duplex=True)
        seeds = list(range(first, first + size))
        process = ctx.Process(target=_lockstep_worker, args=(child, pipe, game, workload, seeds))
        process.start()
        child.close()
        pipes.append(pipe)
        processes.append(process)
        first += size
    local = _Share(game, workload, list(range(sizes[0])))
    for pipe in pipes:
        pipe.recv()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(25):
            for pipe in pipes:
                pipe.send(True)
            local.step()
            for pipe in pipes:
                pipe.recv()
            steps += 1
    elapsed = time.perf_counter() - start
    for pipe, process in zip(pipes, processes, strict=True):
        pipe.send(False)
        process.join()
        pipe.close()
    return steps * num_envs / elapsed


def _round_robin(game: str, workload: str, num_envs: int, seconds: float) -> float:
    """N envs stepped one after the other in this process: a sync vector env that cost nothing."""
    share = _Share(game, workload, list(range(num_envs)))
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(25):
            share.step()
            steps += 1
    return steps * num_envs / (time.perf_counter() - start)


CONFIGS = {
    "single": _single,
    "sync": functools.partial(_vector, gymnasium=False, asynchronous=False),
    "sync, eager infos": functools.partial(_vector, gymnasium=False, asynchronous=False, lazy_infos=False),
    "async": functools.partial(_vector, gymnasium=False, asynchronous=True),
    "async, eager infos": functools.partial(_vector, gymnasium=False, asynchronous=True, lazy_infos=False),
    "gym sync": functools.partial(_vector, gymnasium=True, asynchronous=False),
    "gym async": functools.partial(_vector, gymnasium=True, asynchronous=True),
    "gym async, no shm": functools.partial(_vector, gymnasium=True, asynchronous=True, shared_memory=False),
    "round-robin ceiling": _round_robin,
    "lockstep ceiling": _lockstep,
    "ceiling": _ceiling,
}


def compare(args: argparse.Namespace) -> None:
    configs = ["single", *(c for c in args.configs if c != "single")]
    print(
        f"game {args.game}, {args.num_envs} envs, {_usable_cpus()} CPUs, {args.rounds} rounds of "
        f"{args.seconds:.1f} s per configuration (medians; ratios are to the single env of the same round); "
        f"info keys: {'all' if args.info_keys is None else ', '.join(args.info_keys) or 'none'}"
    )
    for workload in args.workloads:
        rates: dict[str, list[float]] = {name: [] for name in configs}
        ratios: dict[str, list[float]] = {name: [] for name in configs}
        for _ in range(args.rounds):
            single = _single(args.game, workload, args.num_envs, args.seconds)
            rates["single"].append(single)
            ratios["single"].append(1.0)
            for name in configs[1:]:
                rate = CONFIGS[name](args.game, workload, args.num_envs, args.seconds)
                rates[name].append(rate)
                ratios[name].append(rate / single)
        print(f"\nworkload {workload!r}")
        print(f"  {'configuration':20} {'env-steps/s':>12} {'ratio':>7}   per-round ratios")
        for name in configs:
            print(
                f"  {name:20} {statistics.median(rates[name]):12,.0f} {statistics.median(ratios[name]):7.2f}   "
                + " ".join(f"{r:.2f}" for r in ratios[name])
            )
        for ceiling in (c for c in ("round-robin ceiling", "lockstep ceiling", "ceiling") if c in configs):
            for name in (c for c in configs if c.startswith("sync" if ceiling.startswith("round") else "async")):
                shares = [a / c for a, c in zip(ratios[name], ratios[ceiling], strict=True)]
                print(f"  {name} reaches {statistics.median(shares):.2f} of the {ceiling}'s throughput")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="quiet_bell", choices=odyssey_env.available_games())
    ap.add_argument("--envs", type=int, nargs="+", default=[1, 2, 4, 8, 16], help="scaling: sub-env counts")
    ap.add_argument("--workload", default="valid", choices=["valid", "text"], help="scaling: the workload")
    ap.add_argument("--no-ceiling", action="store_true", help="scaling: skip the independent-process ceiling")
    ap.add_argument("--compare", action="store_true", help="compare vector-env configurations at --num-envs")
    ap.add_argument("--num-envs", type=int, default=2, help="compare: sub-envs")
    ap.add_argument("--workloads", nargs="+", default=["valid", "text"], choices=["valid", "text"])
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS), help="compare: which")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    ap.add_argument("--cpus", help="comma-separated CPU ids to run on (Linux), e.g. 0,1")
    ap.add_argument(
        "--info-keys",
        nargs="*",
        metavar="KEY",
        help="OdysseyEnv(info_keys=...) for every env (default: the full info); e.g. invalid_action",
    )
    args = ap.parse_args(argv)
    if args.info_keys is not None:
        ENV_KWARGS["info_keys"] = args.info_keys
    if args.cpus:
        os.sched_setaffinity(0, {int(c) for c in args.cpus.split(",")})  # inherited by the async workers
    if args.compare:
        compare(args)
    else:
        scaling(args)


if __name__ == "__main__":
    main()
