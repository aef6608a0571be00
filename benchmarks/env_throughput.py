"""Environment throughput, per game: run ``python benchmarks/env_throughput.py [games...]``.

For each game, in a fresh process (so peak memory is the game's own):

* **steps/s with valid actions**: a seeded random agent picks a verb uniformly, then one of that
  verb's valid actions; valid actions are computed every step (the reference's measuring protocol);
* **steps/s without valid actions**: the same command sequence replayed, valid actions never computed;
* **reset**: milliseconds per ``reset(seed)`` (world generation included);
* **peak RSS** of the process;
* **drift**: the per-step cost of steps 9,000-10,000 against steps 0-1,000 (1.00 = flat); the first
  thousand steps are often dearer because the agent starts where the most lies about, so the steady
  drift (against steps 1,000-2,000) is printed too: both detect growth, which shows as a ratio above 1.

Rates are the best of ``--repeats`` runs (this machine is shared and noisy). A baseline measured in the
same run, Gymnasium's CartPole-v1 stepped with a fixed action, puts the figures in proportion, and the
reference implementation's published rates on this machine kind (base ~6,500 steps/s, Remnant ~3,150,
measured with the same random agent) give the speed-up.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time

REFERENCE_STEPS_PER_S = {"base": 6500.0, "remnant": 3150.0}


def _random_run(env, steps: int, seed: int) -> tuple[list[str], list[float]]:
    """Random agent with valid actions every step; returns its commands and per-1000-step block times."""
    engine = env.engine
    rng = random.Random(seed)
    commands: list[str] = []
    blocks: list[float] = []
    start = time.perf_counter()
    for i in range(steps):
        valid = engine.valid_actions("player")
        verb = rng.choice(list(valid))
        command = rng.choice(valid[verb])
        commands.append(command)
        env.step(command)
        if (i + 1) % 1000 == 0:
            now = time.perf_counter()
            blocks.append(now - start)
            start = now
    return commands, blocks


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
        start = time.perf_counter()
        for command in commands:
            env.step(command)
        best_plain = min(best_plain, time.perf_counter() - start)
    resets = []
    for i in range(200):
        start = time.perf_counter()
        env.reset(seed=i)
        resets.append(time.perf_counter() - start)
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
        "areas_at_end": len(env.engine.state.areas),
        "npcs_at_end": len(env.engine.state.npcs),
    }


def cartpole_steps_per_s(steps: int = 20000) -> float:
    import gymnasium as gym

    env = gym.make("CartPole-v1").unwrapped
    env.reset(seed=0)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(steps):
            _, _, terminated, _, _ = env.step(0)
            if terminated:
                env.reset()
        best = min(best, time.perf_counter() - start)
    return steps / best


def import_cost() -> dict:
    code = ("import sys, time; t = time.perf_counter(); import odyssey_env; "
            "print(time.perf_counter() - t, 'torch' in sys.modules, 'transformers' in sys.modules)")
    best = float("inf")
    for _ in range(5):
        out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                             check=True).stdout.split()
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
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps, args.repeats, args.seed)))
        return 0
    games = args.games or available_games()
    rows = []
    for game in games:
        out = subprocess.run([sys.executable, __file__, "--worker", game, "--steps", str(args.steps),
                              "--repeats", str(args.repeats), "--seed", str(args.seed)],
                             capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout))
    baseline = cartpole_steps_per_s()
    imports = import_cost()
    if args.json:
        print(json.dumps({"games": rows, "cartpole_steps_per_s": baseline, **imports}, indent=2))
        return 0
    print(f"baseline: CartPole-v1 {baseline:,.0f} steps/s in this run")
    print(f"import odyssey_env: {imports['import_ms']:.0f} ms; imports torch: {imports['imports_torch']}; "
          f"imports transformers: {imports['imports_transformers']}\n")
    header = (f"{'game':<10}{'steps/s +VA':>13}{'vs ref':>8}{'steps/s':>10}{'vs CartPole':>13}"
              f"{'reset ms':>10}{'RSS MB':>9}{'drift 9k/0k':>13}{'9k/1k':>7}")
    print(header)
    print("-" * len(header))
    for r in rows:
        ref = REFERENCE_STEPS_PER_S.get(r["game"])
        vs_ref = f"{r['va_steps_per_s'] / ref:.1f}x" if ref else "-"
        print(f"{r['game']:<10}{r['va_steps_per_s']:>13,.0f}{vs_ref:>8}{r['plain_steps_per_s']:>10,.0f}"
              f"{r['plain_steps_per_s'] / baseline:>12.3f}x{r['reset_ms_median']:>10.2f}{r['peak_rss_mb']:>9.0f}"
              f"{r['drift']:>13.2f}{r['drift_steady']:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
