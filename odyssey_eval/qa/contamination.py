"""The before/after filter of paper §3.4: flag games whose world an untrained model already knows.

A game is meant to hold knowledge that must be learned by playing. If a model answers its
World-Knowledge questions well *before* playing, the game overlaps what the model learned in
pre-training, and its results say little about learning at test time. The paper filtered such games
out; this module computes the same verdict from the ``before`` rounds recorded in run directories.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from odyssey_eval.qa.ask import answered

__all__ = ["DEFAULT_MARGIN", "contamination_report"]

#: A game is flagged when accuracy before play exceeds chance by more than this (absolute).
DEFAULT_MARGIN = 0.25


def contamination_report(
    rounds: Iterable[Mapping[str, Any]], *, margin: float = DEFAULT_MARGIN, threshold: float | None = None
) -> dict[str, dict[str, Any]]:
    """Per game: mean before/after World-Knowledge accuracy, chance level, and whether it is flagged.

    ``rounds`` are dicts with ``game`` plus a QA round (``phase``, ``kind``, ``accuracy``, ``chance``).
    A game is flagged when its before-play accuracy exceeds ``threshold`` if given, otherwise chance +
    ``margin``. Agents that cannot answer (accuracy 0 with every reply unusable) tell nothing and are
    left out.
    """
    per_game: dict[str, dict[str, list[float]]] = {}
    for r in rounds:
        if r.get("kind") != "world_knowledge" or not answered(r):
            continue
        g = per_game.setdefault(r["game"], {"before": [], "after": [], "chance": []})
        if r["phase"] in ("before", "after"):
            g[r["phase"]].append(r["accuracy"])
        if r.get("chance") is not None:
            g["chance"].append(r["chance"])
    out = {}
    for game in sorted(per_game):
        g = per_game[game]
        before = sum(g["before"]) / len(g["before"]) if g["before"] else None
        after = sum(g["after"]) / len(g["after"]) if g["after"] else None
        chance = sum(g["chance"]) / len(g["chance"]) if g["chance"] else None
        limit = threshold if threshold is not None else (chance + margin if chance is not None else None)
        out[game] = {
            "before": before,
            "after": after,
            "gain": None if before is None or after is None else after - before,
            "chance": chance,
            "limit": limit,
            "flagged": before is not None and limit is not None and before > limit,
        }
    return out
