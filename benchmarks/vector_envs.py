"""Vector-env throughput against one env, measured in the same run: ``python benchmarks/vector_envs.py``.

For ``--num-envs`` N (default 2) it steps, in turn:

* **single**: one env (over the same seeds as the sub-envs), the baseline every ratio divides by;
* **sync** / **async** / **async, pipes**: odyssey's vector envs, what ``gym.make_vec(id, N)`` builds
  (``asynchronous=True``: worker processes plus the calling one, messages through shared memory;
  ``spin_s=0``: through pipes only, as on CPUs where shared-memory messages are not safe); infos are
  merged key by key as the policy reads them (``action_mask`` in ``valid``, nothing in ``text``);
  **..., eager infos** (``lazy_infos=False``) merge every key every step, as Gymnasium does;
* **gym sync** / **gym async** / **gym async, no shm**: Gymnasium's own classes
  (``vectorization_mode="sync"`` / ``"async"``), with this package's shared-memory text codec.

and prints total env-steps per second and the ratio to the single env. Two workloads:

* ``valid``: the RL set-up of ``odyssey_env.wrappers.ValidActions``: valid actions listed every step, a
  seeded random policy over ``info["action_mask"]`` (what a masked policy costs the env);
* ``text``: plain text commands from a fixed cycle, valid actions never computed (the cheapest steps,
  where vector overhead shows most).

**round-robin ceiling** steps N envs one after the other in one process with nothing around them:
what a sync vector env that costs nothing would reach (below 1: N envs' data do not stay in the CPU
caches as one env's does). **lockstep ceiling** steps the async vector env's shares (the calling
process's and each worker's) in lockstep with nothing but a token crossing the processes, each
process computing its own actions: what a perfect async vector env with those shares would reach,
since it must still wait every step for the slower share. **ceiling** is N processes stepping one
env each on their own, never talking to each other: the
parallel speed-up the machine gives right now, and what no vector env can exceed (a vector env adds
lockstep, messages and the info merge). When it is far below N, the cores are busy with other work
(or share caches and memory bandwidth) and no async figure of that run says much about this
package; ``async / ceiling`` is the share of the available speed-up the async vector env turns into
throughput.

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
import multiprocessing as mp
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


def _vector(
    game: str,
    workload: str,
    num_envs: int,
    seconds: float,
    *,
    gymnasium: bool,
    asynchronous: bool,
    shared_memory: bool = True,
    spin_s: float | None = None,
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
        envs = gym.make_vec(
            odyssey_env.env_id(game),
            num_envs=num_envs,
            asynchronous=asynchronous,
            **({"spin_s": spin_s} if asynchronous else {}),
            max_actions=DEFAULT_MAX_ACTIONS if workload == "valid" else None,
            lazy_infos=lazy_infos,
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


def _alone(game: str, workload: str, seed: int, seconds: float, start: Any, out: Any) -> None:
    env = gym.make(odyssey_env.env_id(game), **ENV_KWARGS)
    if workload == "valid":
        env = ValidActions(env)
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    start.wait()
    steps, begin = 0, time.perf_counter()
    while time.perf_counter() - begin < seconds:
        for _ in range(25):
            action = (
                rng.choice(np.flatnonzero(info["action_mask"]))
                if workload == "valid"
                else TEXT_COMMANDS[steps % len(TEXT_COMMANDS)]
            )
            _, _, terminated, truncated, info = env.step(action)
            steps += 1
            if terminated or truncated:
                _, info = env.reset()
    out.put(steps / (time.perf_counter() - begin))


def _ceiling(game: str, workload: str, num_envs: int, seconds: float) -> float:
    """N processes stepping one env each, never talking to each other: what N cores give right now.

    No vector env can beat it (it has no lockstep, no messages, no info merge); its ratio to the
    single env is the parallel speed-up this machine offers at this moment (below N when cores are
    busy with other work, or share caches and memory bandwidth).
    """
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


class _Share:
    """One process's share of sub-envs for the lockstep ceiling: steps each with the benchmark's policy."""

    def __init__(self, game: str, workload: str, seeds: list[int]):
        self.workload, self.envs, self.infos, self.rngs, self.steps = workload, [], [], [], 0
        for seed in seeds:
            env = gym.make(odyssey_env.env_id(game), **ENV_KWARGS)
            if workload == "valid":
                env = ValidActions(env)
            self.envs.append(env)
            self.infos.append(env.reset(seed=seed)[1])
            self.rngs.append(np.random.default_rng(seed))

    def step(self) -> None:
        for i, env in enumerate(self.envs):
            action = (
                self.rngs[i].choice(np.flatnonzero(self.infos[i]["action_mask"]))
                if self.workload == "valid"
                else TEXT_COMMANDS[self.steps % len(TEXT_COMMANDS)]
            )
            _, _, terminated, truncated, self.infos[i] = env.step(action)
            if terminated or truncated:
                self.infos[i] = env.reset()[1]
        self.steps += 1


def _lockstep_worker(link: Any, other_end: Any, game: str, workload: str, seeds: list[int]) -> None:
    other_end.close()
    share = _Share(game, workload, seeds)
    link.send("ready")
    while link.recv():
        share.step()
        link.send(True)


def _lockstep(game: str, workload: str, num_envs: int, seconds: float) -> float:
    """The async vector env's shares stepped in lockstep with nothing but a token exchanged per step.

    Each process computes its own sub-envs' actions and nothing crosses the processes but "go" and
    "done": what a perfect async vector env with the same shares would reach (it still waits, each
    step, for the slower of the two shares). The async figure's gap to it is the vector env's own
    cost: the policy computed in one process, observations and infos sent, merged.
    """
    from odyssey_env.vector.channel import make_link
    from odyssey_env.vector.parallel import _share_sizes, _usable_cpus

    sizes = _share_sizes(num_envs, min(num_envs, _usable_cpus()) - 1)
    ctx = mp.get_context()
    links, processes, first = [], [], sizes[0]
    for size in sizes[1:]:
        link, child = make_link(ctx, 1 << 10)
        process = ctx.Process(
            target=_lockstep_worker, args=(child, link, game, workload, list(range(first, first + size)))
        )
        process.start()
        child.close()
        links.append(link)
        processes.append(process)
        first += size
    local = _Share(game, workload, list(range(sizes[0])))
    for link in links:
        link.recv()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(25):
            for link in links:
                link.send(True)
            local.step()
            for link in links:
                link.recv()
            steps += 1
    elapsed = time.perf_counter() - start
    for link, process in zip(links, processes, strict=True):
        link.send(False)
        process.join()
        link.close()
    return steps * num_envs / elapsed


def _round_robin(game: str, workload: str, num_envs: int, seconds: float) -> float:
    """N envs stepped one after the other in this process, each with its own policy and info: what a
    sync vector env that cost nothing would reach. Below 1 because N envs' data do not fit the CPU
    caches that one env's does."""
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
    "async, pipes": functools.partial(_vector, gymnasium=False, asynchronous=True, spin_s=0.0),
    "gym sync": functools.partial(_vector, gymnasium=True, asynchronous=False),
    "gym async": functools.partial(_vector, gymnasium=True, asynchronous=True),
    "gym async, no shm": functools.partial(_vector, gymnasium=True, asynchronous=True, shared_memory=False),
    "round-robin ceiling": _round_robin,
    "lockstep ceiling": _lockstep,
    "ceiling": _ceiling,
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="quiet_bell", choices=odyssey_env.available_games())
    ap.add_argument("--num-envs", type=int, default=2)
    ap.add_argument("--workloads", nargs="+", default=["valid", "text"], choices=["valid", "text"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
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
    configs = ["single", *(c for c in args.configs if c != "single")]
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"game {args.game}, {args.num_envs} envs, {cpus} CPUs, {args.rounds} rounds of "
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
        print(f"  {'configuration':18} {'env-steps/s':>12} {'ratio':>7}   per-round ratios")
        for name in configs:
            print(
                f"  {name:18} {statistics.median(rates[name]):12,.0f} {statistics.median(ratios[name]):7.2f}   "
                + " ".join(f"{r:.2f}" for r in ratios[name])
            )
        for ceiling in (c for c in ("round-robin ceiling", "lockstep ceiling", "ceiling") if c in configs):
            for name in (c for c in configs if c.startswith("sync" if ceiling.startswith("round") else "async")):
                shares = [a / c for a, c in zip(ratios[name], ratios[ceiling], strict=True)]
                print(f"  {name} reaches {statistics.median(shares):.2f} of the {ceiling}'s throughput")


if __name__ == "__main__":
    main()
