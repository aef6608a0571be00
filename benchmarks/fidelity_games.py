"""The paper's games on both engines, side by side: ``python benchmarks/fidelity_games.py [--seeds 20] [--steps 500]``.

For each imported paper game (``odyssey paper import`` first; games are read from the user games directory)
the same protocol runs on the reference engine (agentodyssey 0.1.0 from its wheel, in a subprocess, see
``benchmarks/reference.py``) and on odyssey: a seeded random player (verb, then one of its valid actions),
``--seeds`` seeds x ``--steps`` steps, tutorial off on both (``--tutorial``: on, as each engine starts it).
Printed per game: mean rewards
by kind (exploration, craft, defeat = new NPC types defeated, death), invalid-action and failed-action rates,
valid actions per step, observation length, steps in the tutorial; then the oracle's solve on odyssey
(main-quest stages within the budget, seeds 0..4). ``--markdown`` prints the table docs/fidelity.md holds.
The two engines do not share a world for a seed (different RNG streams), so figures agree in
distribution, not step by step; a mean outside twice the pooled standard error is marked ``*``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference

KEYS = (
    "exploration",
    "craft",
    "defeat",
    "death",
    "invalid_rate",
    "failed_rate",
    "valid_actions",
    "obs_chars",
    "tutorial_steps",
)
GAMES = ("remnant", "mark", "metropolis", "base", "quarantine", "robot_kingdom", "saltglass")


def ours(game: str, seed: int, steps: int, tutorial: bool) -> dict[str, float]:
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game, tutorial=tutorial, valid_actions=True)
    obs, info = env.reset(seed=seed)
    rng = random.Random(seed)
    out = dict.fromkeys(("exploration", "craft", "defeat", "trade", "quest", "side_quest", "death"), 0.0)
    invalid = failed = tutorial = n_valid = chars = 0
    for _ in range(steps):
        listing = info["valid_actions"]
        n_valid += sum(len(c) for c in listing.values())
        verb = rng.choice([v for v, c in listing.items() if c])
        tutorial += bool(info.get("in_tutorial"))
        obs, _, terminated, _, info = env.step(rng.choice(listing[verb]))
        for k, v in info["reward_breakdown"].items():
            if k in out:
                out[k] += v
        chars += len(obs)
        invalid += bool(info["invalid_action"])
        failed += bool(info["action_failed"])
        if terminated:
            break
    return {
        **out,
        "invalid_rate": invalid / steps,
        "failed_rate": failed / steps,
        "valid_actions": n_valid / steps,
        "obs_chars": chars / steps,
        "tutorial_steps": tutorial,
    }


def theirs(game: str, seed: int, steps: int, tutorial: bool) -> dict[str, float]:
    args = [game, str(seed), str(steps), *([] if tutorial else ["notutorial"])]
    return reference.run_json(reference.DRIVERS / "episode_stats.py", args)  # type: ignore[return-value]


def _mean_se(values: list[float]) -> tuple[float, float]:
    m = statistics.fmean(values)
    se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return m, se


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--games", nargs="+", default=list(GAMES))
    p.add_argument("--oracle-seeds", type=int, default=5)
    p.add_argument("--tutorial", action="store_true", help="start in the tutorial (default: off on both engines)")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--json", type=Path, help="also write the raw figures here")
    args = p.parse_args(argv)
    from odyssey_env.userdir import find

    missing = [g for g in args.games if find(g) is None]
    if missing:
        print(f"not imported: {', '.join(missing)}; run: odyssey paper import", file=sys.stderr)
        return 2
    raw: dict[str, dict[str, list[dict[str, float]]]] = {}
    rows = []
    for game in args.games:
        a = [ours(game, s, args.steps, args.tutorial) for s in range(args.seeds)]
        b = [theirs(game, s, args.steps, args.tutorial) for s in range(args.seeds)]
        raw[game] = {"odyssey": a, "reference": b}
        cells = []
        for k in KEYS:
            (ma, sa), (mb, sb) = _mean_se([r[k] for r in a]), _mean_se([r[k] for r in b])
            off = abs(ma - mb) > 2 * math.hypot(sa, sb) and abs(ma - mb) > 1e-9
            cells.append(f"{ma:.2f} / {mb:.2f}{' *' if off else ''}")
        oracle = ""
        if args.oracle_seeds:
            from odyssey_agents.oracle.solve import solve

            sols = [solve(game, s, budget=args.steps) for s in range(args.oracle_seeds)]
            oracle = f"{sum(s.solved for s in sols)}/{len(sols)} solved, stages " + ",".join(
                f"{s.stages}/{s.total}" for s in sols
            )
        rows.append((game, cells, oracle))
        print(f"{game}: done", file=sys.stderr, flush=True)
    header = ["game", *KEYS, "oracle (odyssey)"]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for game, cells, oracle in rows:
            print(f"| {game} | " + " | ".join(cells) + f" | {oracle} |")
    else:
        for game, cells, oracle in rows:
            print(game)
            for k, c in zip(KEYS, cells, strict=True):
                print(f"  {k:16s} {c}")
            print(f"  oracle           {oracle}")
    print(f"(odyssey / reference, mean of {args.seeds} seeds x {args.steps} steps; * beyond 2 standard errors)")
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
