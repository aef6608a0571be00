"""``odyssey challenge RUN_DIR...``: the TTCL challenge aggregation.

The ranking score of a submission (one agent configuration) is the mean, over the ranking games
(odyssey's own Quiet Bell, Tallowmere and Gavelmoor, at the sizes of the paper's three), of its mean
raw main-quest reward across that game's runs; the mean supplementary reward breaks ties. Raw rewards
are used as the challenge defines them, so games with more stages weigh more (24, 17 and 31 stages:
Gavelmoor counts almost twice as much as Tallowmere). ``--aggregate normalized`` scores the mean
*fraction* of each game's stages instead, so that every game weighs the same. Protocol problems are
listed as warnings and mark the submission, rather than silently changing its score.

The challenge's protocol is the reference's (``protocol=paper``: the 500-step budget counts the
tutorial's steps too; ``odyssey_eval.protocol``); runs of another protocol are ranked with a warning.
Runs of different protocols are never ranked together: they are refused in one line that names them
(``--protocol`` also refuses runs of any protocol but the one it names).

    odyssey challenge runs/ --budget 500
    odyssey challenge runs/ --aggregate normalized
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from typing import Any, TypedDict

from odyssey_env.safeio import printable
from odyssey_eval import protocol
from odyssey_eval.collect import Run, load_runs
from odyssey_eval.rundir import RunDirError

__all__ = ["AGGREGATIONS", "CHALLENGE_PROTOCOL", "RANKING_GAMES", "MixedProtocols", "Standing", "aggregate", "main"]

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
#: The protocol the challenge is played under (``odyssey_eval.protocol``).
CHALLENGE_PROTOCOL = "paper"


class MixedProtocols(ValueError):
    """Runs of different protocols asked to be ranked together: their budgets count different steps."""


class Standing(TypedDict):
    """One submission's line of the ranking (``--json`` prints these as they are)."""

    submission: str
    score: float | None  # None: no run of a ranking game, so not ranked
    tiebreak: float | None
    games: dict[str, dict[str, Any]]  # per game: runs, main, supplementary, and stages/fraction where known
    complete: bool
    warnings: list[str]
    rank: int  # 1 for the best; equal scores and tie-breaks share a rank


def shared_protocol(runs: Sequence[Run], expected: str | None = None) -> str:
    """The one protocol of ``runs`` (``expected``, when given); else :class:`MixedProtocols`, in one line
    naming the runs of each protocol: a run of another protocol spent its budget on other steps, so its
    score does not compare."""
    by_protocol: dict[str, list[str]] = {}
    for r in runs:
        by_protocol.setdefault(protocol.of(r.results), []).append(str(r.path))
    if expected is not None and set(by_protocol) - {expected}:
        named = "; ".join(f"{p}: {', '.join(paths)}" for p, paths in by_protocol.items() if p != expected)
        raise MixedProtocols(f"runs not of protocol {expected} cannot be ranked under it ({named})")
    if len(by_protocol) > 1:
        named = "; ".join(f"{p}: {', '.join(paths)}" for p, paths in by_protocol.items())
        raise MixedProtocols(f"runs of different protocols cannot be ranked together ({named})")
    return expected or next(iter(by_protocol), CHALLENGE_PROTOCOL)


def aggregate(
    runs: Sequence[Run],
    games: Sequence[str] = RANKING_GAMES,
    budget: int = 500,
    min_runs: int = MIN_RUNS,
    aggregation: str = "raw",
    protocol_name: str | None = None,
) -> list[Standing]:
    """Ranked submissions: score, tie-break, per-game means and protocol warnings. A submission with
    no run of any ranking game has no score and is not ranked (see :func:`unranked`).

    Each game's entry has ``main`` (mean stages completed), ``supplementary``, and, where the runs'
    trajectories record the size of the main quest, ``stages`` and ``fraction`` (mean share of the
    stages completed); ``aggregation="normalized"`` makes the score the mean of the fractions.

    The runs of the ranking games must share one protocol (``protocol_name``, when given), else
    :class:`MixedProtocols`; their steps are counted against ``budget`` as it counts them, and a protocol
    other than the challenge's (``paper``) is a warning on every submission."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {aggregation!r}; choose one of {', '.join(AGGREGATIONS)}")
    played = shared_protocol(
        [r for r in runs if r.game in games], None if protocol_name is None else protocol.check(protocol_name)
    )
    counted = "steps" if protocol.budget_counter(played) == "total" else "play steps"
    by_label: dict[str, list[Run]] = {}
    for r in runs:
        if r.game in games:
            by_label.setdefault(r.label, []).append(r)
    others: dict[str, set[str]] = {}
    for r in runs:
        if r.game not in games and r.label in by_label:
            others.setdefault(r.label, set()).add(r.game)
    table: list[Standing] = []
    for label, members in by_label.items():
        warnings: list[str] = []
        if played != CHALLENGE_PROTOCOL:
            warnings.append(
                f"played under protocol {played}, not the challenge's {CHALLENGE_PROTOCOL} "
                "(whose budget counts the tutorial's steps too)"
            )
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
                spent = protocol.spent({**r.results, "play_steps": m["play_steps"]})
                if spent > budget:
                    warnings.append(f"{where}: {spent} {counted} exceed the budget {budget}")
                if spent < budget and not m["terminated"]:
                    warnings.append(
                        f"{where}: ended after {spent} {counted} "
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
                "rank": 0,  # set below, once all are sorted
            }
        )
    table.sort(key=lambda t: (t["score"] is None, -(t["score"] or 0.0), -(t["tiebreak"] or 0.0), t["submission"]))
    rank = 0
    previous: tuple[float | None, float | None] | None = None
    for i, t in enumerate(table, 1):
        scores = (t["score"], t["tiebreak"])
        if scores != previous:
            rank = i
        t["rank"] = rank
        previous = scores
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


def budget_steps(runs: Sequence[Run], games: Sequence[str]) -> str:
    """What the budget counts for these runs (they share one protocol: :func:`aggregate` checked it)."""
    ranked = [r for r in runs if r.game in games]
    total = bool(ranked) and protocol.budget_counter(protocol.of(ranked[0].results)) == "total"
    return f"steps, tutorial included (protocol {protocol.of(ranked[0].results)})" if total else "play steps"


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


def _say(text: str = "", file: Any = None) -> None:
    """Print one line whose parts came from run directories (names, tags, models): control characters
    escaped, so nothing in a run directory can drive the terminal or forge a line."""
    print(printable(text), file=file)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="odyssey challenge", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="run directories or folders that hold them")
    parser.add_argument("--games", nargs="+", default=list(RANKING_GAMES), help="ranking games")
    parser.add_argument("--budget", type=int, default=500, help="steps per run, counted as the protocol counts them")
    parser.add_argument(
        "--protocol",
        choices=tuple(protocol.PROTOCOLS),
        default=None,
        help="the protocol every ranked run must have been played under (default: the one they share; "
        "paper, the challenge's: the budget counts the tutorial's steps, as the reference's; odyssey: "
        "play steps only)",
    )
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
        _say(f"odyssey challenge: {exc}", file=sys.stderr)
        return 2
    if not runs:
        _say(f"odyssey challenge: no finished runs under {', '.join(args.paths)}", file=sys.stderr)
        return 1
    unknown = unknown_games(runs, args.games)
    if unknown:
        played = ", ".join(sorted({r.game for r in runs}))
        _say(
            f"odyssey challenge: no game {', '.join(map(repr, unknown))}: it is not a shipped game and no run "
            f"played it (the runs played: {played})",
            file=sys.stderr,
        )
        return 2
    try:
        table = aggregate(runs, args.games, args.budget, args.min_runs, args.aggregate, args.protocol)
    except MixedProtocols as exc:
        print(f"odyssey challenge: {exc}", file=sys.stderr)
        return 2
    left_out = unranked(runs, args.games)
    if args.json:
        print(  # json.dumps escapes every control character itself
            json.dumps(
                {
                    "games": args.games,
                    "budget": args.budget,
                    "protocol": protocol.of(next((r.results for r in runs if r.game in args.games), {})),
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
        _say(
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
    _say(
        f"TTCL challenge: ranking games {', '.join(args.games)}; score = {what}; "
        f"tie-break = mean supplementary reward; budget {args.budget} {budget_steps(runs, args.games)}"
    )
    header = f"{'rank':>4}  {'submission':<32} {'score':>7} {'tiebreak':>8}  " + "  ".join(
        f"{g + ' main/sup (n)':>24}" for g in args.games
    )
    _say(header)
    _say("-" * len(header))
    for t in table:
        cells = []
        for g in args.games:
            v = t["games"].get(g)
            share = f" {v['fraction']:.0%}" if v and v["fraction"] is not None else ""
            cells.append(f"{v['main']:.2f}{share}/{v['supplementary']:.2f} ({v['runs']})" if v else "-")
        score = "-" if t["score"] is None else (f"{t['score']:.1%}" if normalized else f"{t['score']:.2f}")
        tie = "-" if t["tiebreak"] is None else f"{t['tiebreak']:.2f}"
        _say(f"{t['rank']:>4}  {t['submission']:<32} {score:>7} {tie:>8}  " + "  ".join(f"{c:>24}" for c in cells))
    for t in table:
        for w in t["warnings"]:
            _say(f"warning: {t['submission']}: {w}")
    for label in left_out:
        _say(f"not ranked: {label} (no runs of {', '.join(args.games)})")
    for p in unfinished:
        _say(f"warning: unfinished run {p} is not counted")
    return 0
