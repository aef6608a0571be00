"""``odyssey challenge RUN_DIR...``: the TTCL challenge aggregation.

The ranking score of a submission (one agent configuration) is the mean, over the ranking games
(odyssey's own Quiet Bell, Tallowmere and Gavelmoor, at the sizes of the paper's three), of its mean
raw main-quest reward across that game's runs; the mean supplementary reward breaks ties. Raw rewards
are used as the challenge defines them, so games with more stages weigh more (24, 17 and 31 stages:
Gavelmoor counts almost twice as much as Tallowmere). ``--aggregate normalized`` scores the mean
*fraction* of each game's stages instead, so that every game weighs the same. Protocol problems are
listed as warnings and mark the submission, rather than silently changing its score.

    odyssey challenge runs/ --budget 500
    odyssey challenge runs/ --aggregate normalized
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from typing import Any

from odyssey_eval.collect import Run, load_runs
from odyssey_eval.rundir import RunDirError

__all__ = ["AGGREGATIONS", "RANKING_GAMES", "aggregate", "main"]

#: The games that rank submissions: the reference challenge's three, the paper's Remnant, Mark and Metropolis
#: (imported with ``odyssey paper import``). ``--games quiet_bell tallowmere gavelmoor`` ranks odyssey's own
#: games of the same sizes instead.
RANKING_GAMES: tuple[str, ...] = ("remnant", "mark", "metropolis")
#: The paper's games by the reference's names (what ``odyssey paper import`` writes).
PAPER_GAMES: tuple[str, ...] = ("base", "remnant", "mark", "metropolis", "quarantine", "robot_kingdom", "saltglass")
MIN_RUNS = 3
#: ``raw``: mean main-quest reward (stages completed), the challenge's own score. ``normalized``: mean
#: fraction of the game's stages completed, so each game weighs the same whatever its size.
AGGREGATIONS: tuple[str, ...] = ("raw", "normalized")


def aggregate(
    runs: Sequence[Run],
    games: Sequence[str] = RANKING_GAMES,
    budget: int = 500,
    min_runs: int = MIN_RUNS,
    aggregation: str = "raw",
) -> list[dict[str, Any]]:
    """Ranked submissions: score, tie-break, per-game means and protocol warnings. A submission with
    no run of any ranking game has no score and is not ranked (see :func:`unranked`).

    Each game's entry has ``main`` (mean stages completed), ``supplementary``, and, where the runs'
    trajectories record the size of the main quest, ``stages`` and ``fraction`` (mean share of the
    stages completed); ``aggregation="normalized"`` makes the score the mean of the fractions."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {aggregation!r}; choose one of {', '.join(AGGREGATIONS)}")
    by_label: dict[str, list[Run]] = {}
    for r in runs:
        if r.game in games:
            by_label.setdefault(r.label, []).append(r)
    others: dict[str, set[str]] = {}
    for r in runs:
        if r.game not in games and r.label in by_label:
            others.setdefault(r.label, set()).add(r.game)
    table = []
    for label, members in by_label.items():
        warnings: list[str] = []
        per_game: dict[str, dict[str, Any]] = {}
        seeds: dict[str, list[int]] = {}
        for game in games:
            gruns = [r for r in members if r.game == game]
            if not gruns:
                warnings.append(f"no runs of {game}: the score averages over the games present")
                continue
            seeds[game] = sorted(r.results["seed"] for r in gruns)
            if len(gruns) < min_runs:
                warnings.append(f"{game}: {len(gruns)} run(s), the protocol asks for at least {min_runs}")
            if len(set(seeds[game])) != len(seeds[game]):
                warnings.append(f"{game}: the same seed appears more than once")
            for r in gruns:
                m = r.metrics
                where = f"{game} seed {r.results['seed']}"
                if r.results.get("max_steps") != budget:
                    warnings.append(f"{where}: max_steps {r.results.get('max_steps')}, the budget is {budget}")
                if m["play_steps"] > budget:
                    warnings.append(f"{where}: {m['play_steps']} play steps exceed the budget {budget}")
                if m["play_steps"] < budget and not m["terminated"]:
                    warnings.append(
                        f"{where}: ended after {m['play_steps']} play steps "
                        f"({r.results.get('end_reason')}) without completing the quest"
                    )
                if not r.results.get("tutorial", True):
                    warnings.append(f"{where}: run without the tutorial")
                warnings += [f"{where}: {w}" for w in r.warnings]
            per_game[game] = {
                "runs": len(gruns),
                "main": statistics.fmean(r.metrics["main_reward"] for r in gruns),
                "supplementary": statistics.fmean(r.metrics["supplementary_reward"] for r in gruns),
                **_fraction(game, gruns, warnings if aggregation == "normalized" else []),
            }
        if len({tuple(s) for s in seeds.values()}) > 1:
            warnings.append("different seeds in different games: " + "; ".join(f"{g} {s}" for g, s in seeds.items()))
        if others.get(label):
            warnings.append(f"runs of non-ranking games ignored: {', '.join(sorted(others[label]))}")
        key = "fraction" if aggregation == "normalized" else "main"
        scored = [v[key] for v in per_game.values() if v[key] is not None]
        score = statistics.fmean(scored) if scored else None
        tie = statistics.fmean(v["supplementary"] for v in per_game.values()) if per_game else None
        table.append(
            {
                "submission": label,
                "score": score,
                "tiebreak": tie,
                "games": per_game,
                "complete": set(per_game) == set(games),
                "warnings": warnings,
            }
        )
    table.sort(key=lambda t: (t["score"] is None, -(t["score"] or 0.0), -(t["tiebreak"] or 0.0), t["submission"]))
    rank = 0
    previous = None
    for i, t in enumerate(table, 1):
        key = (t["score"], t["tiebreak"])
        if key != previous:
            rank = i
        t["rank"] = rank
        previous = key
    return table


def _fraction(game: str, runs: Sequence[Run], warnings: list[str]) -> dict[str, Any]:
    """``stages`` and the mean ``fraction`` of them completed, over the runs that know their quest's size
    (``None`` when none does); what stands in the way of normalising goes to ``warnings``."""
    sizes = [r.metrics.get("main_stages") for r in runs]
    known = [(r, n) for r, n in zip(runs, sizes, strict=True) if isinstance(n, int) and n > 0]
    for r, n in zip(runs, sizes, strict=True):
        if not (isinstance(n, int) and n > 0):
            warnings.append(
                f"{game} seed {r.results.get('seed')}: its trajectory records no main-quest size, "
                "so it cannot be normalised (left out of the fraction)"
            )
    distinct = sorted({n for _, n in known})
    if len(distinct) > 1:
        warnings.append(
            f"{game}: runs report main quests of different sizes ({', '.join(map(str, distinct))} "
            "stages); each run is normalised by its own"
        )
    if not known:
        return {"stages": None, "fraction": None}
    return {
        "stages": distinct[0] if len(distinct) == 1 else None,
        "fraction": statistics.fmean(r.metrics["main_reward"] / n for r, n in known),
    }


def unranked(runs: Sequence[Run], games: Sequence[str] = RANKING_GAMES) -> list[str]:
    """Submissions that played none of the ranking games: they are listed, not ranked last."""
    ranked = {r.label for r in runs if r.game in games}
    return sorted({r.label for r in runs} - ranked)


def unknown_games(runs: Sequence[Run], games: Sequence[str]) -> list[str]:
    """Ranking games that are neither shipped nor played by any run: a typo, most likely."""
    from odyssey_env.game import available_games
    from odyssey_env.userdir import user_games

    known = set(available_games()) | set(user_games()) | set(PAPER_GAMES) | {r.game for r in runs}
    return [g for g in games if g not in known]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="odyssey challenge", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="run directories or folders that hold them")
    parser.add_argument("--games", nargs="+", default=list(RANKING_GAMES), help="ranking games")
    parser.add_argument("--budget", type=int, default=500, help="play steps per run (protocol)")
    parser.add_argument("--min-runs", type=int, default=MIN_RUNS, help="runs per game the protocol asks for")
    parser.add_argument(
        "--aggregate",
        choices=AGGREGATIONS,
        default="raw",
        help="raw: mean stages completed, the challenge's score (games with more stages weigh "
        "more); normalized: mean fraction of each game's stages",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    try:
        runs, unfinished = load_runs(args.paths)
    except (FileNotFoundError, RunDirError) as exc:  # a path that is not there, a damaged run directory
        print(f"odyssey challenge: {exc}", file=sys.stderr)
        return 2
    if not runs:
        print(f"odyssey challenge: no finished runs under {', '.join(args.paths)}", file=sys.stderr)
        return 1
    unknown = unknown_games(runs, args.games)
    if unknown:
        played = ", ".join(sorted({r.game for r in runs}))
        print(
            f"odyssey challenge: no game {', '.join(map(repr, unknown))}: it is not a shipped game and no run "
            f"played it (the runs played: {played})",
            file=sys.stderr,
        )
        return 2
    table = aggregate(runs, args.games, args.budget, args.min_runs, args.aggregate)
    left_out = unranked(runs, args.games)
    if args.json:
        print(
            json.dumps(
                {
                    "games": args.games,
                    "budget": args.budget,
                    "aggregation": args.aggregate,
                    "ranking": table,
                    "unranked": left_out,
                    "unfinished": [str(p) for p in unfinished],
                },
                indent=1,
            )
        )
        return 0
    if not table:
        print(
            f"odyssey challenge: no finished run played {', '.join(args.games)} (the runs played: "
            f"{', '.join(sorted({r.game for r in runs}))})"
            + (
                "; the paper's games are played after `odyssey paper import`"
                if set(args.games) & set(PAPER_GAMES)
                else ""
            ),
            file=sys.stderr,
        )
        return 1
    normalized = args.aggregate == "normalized"
    what = (
        "mean fraction of each game's main-quest stages (every game weighs the same)"
        if normalized
        else "mean raw main-quest reward"
    )
    print(
        f"TTCL challenge: ranking games {', '.join(args.games)}; score = {what}; "
        f"tie-break = mean supplementary reward; budget {args.budget} play steps"
    )
    header = f"{'rank':>4}  {'submission':<32} {'score':>7} {'tiebreak':>8}  " + "  ".join(
        f"{g + ' main/sup (n)':>24}" for g in args.games
    )
    print(header)
    print("-" * len(header))
    for t in table:
        cells = []
        for g in args.games:
            v = t["games"].get(g)
            share = f" {v['fraction']:.0%}" if v and v["fraction"] is not None else ""
            cells.append(f"{v['main']:.2f}{share}/{v['supplementary']:.2f} ({v['runs']})" if v else "-")
        score = "-" if t["score"] is None else (f"{t['score']:.1%}" if normalized else f"{t['score']:.2f}")
        tie = "-" if t["tiebreak"] is None else f"{t['tiebreak']:.2f}"
        print(f"{t['rank']:>4}  {t['submission']:<32} {score:>7} {tie:>8}  " + "  ".join(f"{c:>24}" for c in cells))
    for t in table:
        for w in t["warnings"]:
            print(f"warning: {t['submission']}: {w}")
    for label in left_out:
        print(f"not ranked: {label} (no runs of {', '.join(args.games)})")
    for p in unfinished:
        print(f"warning: unfinished run {p} is not counted")
    return 0
