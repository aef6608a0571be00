"""Environment throughput, per game: run ``python benchmarks/env_throughput.py [games...]``.

For each game, in a fresh process (so peak memory is the game's own):

* **steps/s with valid actions**: a seeded random agent picks a verb uniformly, then one of that
  verb's valid actions; valid actions are computed every step (the reference's measuring protocol);
* **steps/s without valid actions**: the same command sequence replayed, valid actions never computed;
* **reset**: milliseconds per ``reset(seed)`` (world generation included);
* **peak RSS** of the process;
* **drift**: the per-step cost of steps 9,000-10,000 against steps 0-1,000 (1.00 = flat); the first
  thousand steps are often dearer because the agent starts where the most lies about, so the steady
  drift (against steps 1,000-2,000) is printed too: both detect growth, which shows as a ratio above 1;
* **where a step goes**: the same commands once more, each phase timed apart (microseconds per step):
  listing the valid actions, the engine step (parsing, the verb, the step rules, rewards), rendering the
  observation, building ``info``, and the rest of ``env.step``; a regression shows where it comes from;
* **vector envs** (``--no-vector`` to skip): sync and async vector envs of 2 and 8 against one env, beside
  the lockstep ceiling, one short round each (``benchmarks/vector_envs.py`` measures them properly).

Times are CPU times of the worker process (user + system): on a shared machine other load stretches
wall-clock times but hardly the CPU a process spends. Rates are the best of ``--repeats`` runs. Two yardsticks
are measured in the same run: Gymnasium's CartPole-v1 stepped with a fixed action, and a *calibrator*, a
fixed pure-Python workload (dicts, strings, small loops, like the engine's) whose time says how fast this
machine runs Python right now. The reference implementation's rates are fixed figures (issue 14: the same
random agent, valid actions every step, steps 0-2,000, side by side on a quiet 2-core machine, where the
calibrator takes about ``CALIBRATOR_QUIET_MS``): ``vs ref`` divides the rate *calibrated* to that machine
speed (rate x calibrator time / CALIBRATOR_QUIET_MS) by them; the target is 10x.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time

#: The reference implementation, steps/s with valid actions every step (issue 14's side-by-side run:
#: odyssey 6,938 / 5,474 / 6,639 steps/s was 4.3x / 7.5x / 6.8x the reference).
REFERENCE_STEPS_PER_S = {"mossfall": 6938 / 4.3, "quiet_bell": 5474 / 7.5, "tallowmere": 6639 / 6.8}
#: The calibrator's time on the quiet development machine (2 cores, CPython 3.11), the machine kind of
#: the reference figures; on a busy or slower machine it takes longer and calibrated rates scale up.
CALIBRATOR_QUIET_MS = 14.0
PHASES = ("valid_actions", "step", "render", "info", "other")


def _random_run(env, steps: int, seed: int) -> tuple[list[str], list[float]]:
    """Random agent with valid actions every step; returns its commands and per-1000-step block times."""
    engine = env.engine
    rng = random.Random(seed)
    commands: list[str] = []
    blocks: list[float] = []
    start = time.process_time()
    for i in range(steps):
        valid = engine.valid_actions("player")
        verb = rng.choice(list(valid))
        command = rng.choice(valid[verb])
        commands.append(command)
        env.step(command)
        if (i + 1) % 1000 == 0:
            now = time.process_time()
            blocks.append(now - start)
            start = now
    return commands, blocks


def _phase_split(env, commands: list[str]) -> dict[str, float]:
    """Microseconds (CPU) per step spent in each phase of ``env.step`` plus the listing, for ``commands``.

    The phases are timed by wrapping the engine's and the env's own methods on these instances, so the
    env steps exactly as it does for its users.
    """
    spent = dict.fromkeys(PHASES, 0.0)
    perf = time.process_time

    def timed(owner, name: str, phase: str) -> None:
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            start = perf()
            try:
                return original(*args, **kwargs)
            finally:
                spent[phase] += perf() - start

        setattr(owner, name, wrapper)

    engine = env.engine
    timed(engine, "step", "step")
    timed(env, "_observe", "render")
    timed(env, "_info", "info")
    total = 0.0
    for command in commands:
        start = perf()
        engine.valid_actions("player")
        middle = perf()
        env.step(command)
        end = perf()
        spent["valid_actions"] += middle - start
        total += end - middle
    spent["other"] = total - spent["step"] - spent["render"] - spent["info"]
    for attr in ("step",):
        del engine.__dict__[attr]
    for attr in ("_observe", "_info"):
        del env.__dict__[attr]
    return {phase: seconds / len(commands) * 1e6 for phase, seconds in spent.items()}


def worker(game: str, steps: int, repeats: int, seed: int) -> dict:
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game)
    best_va = best_plain = float("inf")
    drift, steady = [], []
    commands: list[str] = []
    for _ in range(repeats):
        env.reset(seed=seed)
        commands, blocks = _random_run(env, steps, seed)
        best_va = min(best_va, sum(blocks))
        drift.append(blocks[-1] / blocks[0])
        steady.append(blocks[-1] / blocks[1] if len(blocks) > 2 else float("nan"))
        env.reset(seed=seed)
        start = time.process_time()
        for command in commands:
            env.step(command)
        best_plain = min(best_plain, time.process_time() - start)
    env.reset(seed=seed)
    phases = _phase_split(env, commands)
    resets = []
    for i in range(200):
        start = time.process_time()
        env.reset(seed=i)
        resets.append(time.process_time() - start)
    resets.sort()
    return {
        "game": game,
        "steps": steps,
        "va_steps_per_s": steps / best_va,
        "plain_steps_per_s": steps / best_plain,
        "reset_ms_median": resets[len(resets) // 2] * 1000,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "drift": min(drift),
        "drift_steady": min(steady),
        "phases_us": phases,
        "areas_at_end": len(env.engine.state.areas),
        "npcs_at_end": len(env.engine.state.npcs),
    }


def cartpole_steps_per_s(steps: int = 20000) -> float:
    import gymnasium as gym

    env = gym.make("CartPole-v1").unwrapped
    env.reset(seed=0)
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for _ in range(steps):
            _, _, terminated, _, _ = env.step(0)
            if terminated:
                env.reset()
        best = min(best, time.process_time() - start)
    return steps / best


def calibrator_ms(repeats: int = 7) -> float:
    """CPU milliseconds of a fixed pure-Python workload (best of ``repeats``): how fast this machine runs Python."""

    def work() -> int:
        stock = {f"item_{i}": i for i in range(16)}
        lines: list[str] = []
        total = 0
        for i in range(40_000):
            key = f"item_{i % 16}"
            n = stock.get(key, 0) + 1
            stock[key] = n
            if n % 3:
                lines.append(f"take {n} {key}")
            if len(lines) > 32:
                total += len(", ".join(lines))
                lines.clear()
        return total

    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best * 1000


def import_cost() -> dict:
    code = (
        "import sys, time; t = time.process_time(); import odyssey_env; "
        "print(time.process_time() - t, 'torch' in sys.modules, 'transformers' in sys.modules)"
    )
    best = float("inf")
    for _ in range(5):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
        best = min(best, float(out[0]))
    return {"import_ms": best * 1000, "imports_torch": out[1] == "True", "imports_transformers": out[2] == "True"}


def main(argv: list[str] | None = None) -> int:
    from odyssey_env import available_games

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*", default=None)
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    parser.add_argument(
        "--no-vector",
        dest="vector",
        action="store_false",
        help="skip the vector-env figures (they need idle cores to mean much)",
    )
    parser.add_argument("--vector-game", default="quiet_bell")
    parser.add_argument("--vector-seconds", type=float, default=1.0)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps, args.repeats, args.seed)))
        return 0
    games = args.games or available_games()
    rows = []
    for game in games:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--worker",
                game,
                "--steps",
                str(args.steps),
                "--repeats",
                str(args.repeats),
                "--seed",
                str(args.seed),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(out.stdout))
    baseline = cartpole_steps_per_s()
    calibrator = calibrator_ms()
    scale = calibrator / CALIBRATOR_QUIET_MS
    imports = import_cost()
    if args.json:
        print(
            json.dumps(
                {
                    "games": rows,
                    "cartpole_steps_per_s": baseline,
                    "calibrator_ms": calibrator,
                    "calibrator_quiet_ms": CALIBRATOR_QUIET_MS,
                    "reference_steps_per_s": REFERENCE_STEPS_PER_S,
                    **imports,
                },
                indent=2,
            )
        )
        return 0
    print(f"baseline: CartPole-v1 {baseline:,.0f} steps/s in this run")
    print(
        f"calibrator: {calibrator:.1f} ms in this run, {CALIBRATOR_QUIET_MS:.1f} ms on the quiet reference "
        f"machine: calibrated rates = rates x {scale:.2f}"
    )
    print(
        f"import odyssey_env: {imports['import_ms']:.0f} ms; imports torch: {imports['imports_torch']}; "
        f"imports transformers: {imports['imports_transformers']}\n"
    )
    header = (
        f"{'game':<10}{'steps/s +VA':>13}{'calibrated':>12}{'ref':>7}{'vs ref':>8}{'steps/s':>10}"
        f"{'vs CartPole':>13}{'reset ms':>10}{'RSS MB':>9}{'drift 9k/0k':>13}{'9k/1k':>7}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        ref = REFERENCE_STEPS_PER_S.get(r["game"])
        calibrated = r["va_steps_per_s"] * scale
        vs_ref = f"{calibrated / ref:.1f}x" if ref else "-"
        print(
            f"{r['game']:<10}{r['va_steps_per_s']:>13,.0f}{calibrated:>12,.0f}{ref or 0:>7,.0f}{vs_ref:>8}"
            f"{r['plain_steps_per_s']:>10,.0f}{r['plain_steps_per_s'] / baseline:>12.3f}x"
            f"{r['reset_ms_median']:>10.2f}{r['peak_rss_mb']:>9.0f}{r['drift']:>13.2f}{r['drift_steady']:>7.2f}"
        )
    print("\nwhere a step goes, us per step (with valid actions every step):")
    header = f"{'game':<10}" + "".join(f"{p:>15}" for p in PHASES) + f"{'total':>10}"
    print(header)
    print("-" * len(header))
    for r in rows:
        phases = r["phases_us"]
        total = sum(phases.values())
        cells = "".join(f"{phases[p]:>8.1f} ({100 * phases[p] / total:>2.0f}%)" for p in PHASES)
        print(f"{r['game']:<10}{cells}{total:>10.1f}")
    if args.vector:
        vector_figures(args.vector_game, args.vector_seconds)
    return 0


def vector_figures(game: str, seconds: float) -> None:
    """A short look at vector envs (``benchmarks/vector_envs.py`` does it properly: rounds, medians, more
    configurations): env-steps/s of sync and async vector envs of 2 and 8 against one env, beside the
    lockstep ceiling (a perfect async vector env with the same shares) measured in the same run."""
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    import vector_envs as v

    print(
        f"\nvector envs, {game}, ValidActions + masked random policy, one round of {seconds:.1f} s per figure "
        "(ratios to one env; python benchmarks/vector_envs.py for medians over rounds):"
    )
    print(f"{'envs':<6}{'one env steps/s':>17}{'sync':>8}{'async':>8}{'lockstep ceiling':>18}")
    for n in (2, 8):
        single = v._single(game, "valid", n, seconds)
        ratios = [v.CONFIGS[c](game, "valid", n, seconds) / single for c in ("sync", "async", "lockstep ceiling")]
        print(f"{n:<6}{single:>17,.0f}" + "".join(f"{r:>{w}.2f}x" for r, w in zip(ratios, (7, 7, 17), strict=True)))


if __name__ == "__main__":
    sys.exit(main())
