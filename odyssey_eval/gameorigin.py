"""One line saying what a run's game is relative to the paper, from ``results.json``'s ``game_origin``.

The report and the viewer print it beside the game's name, so that a run on odyssey's own Remnant-sized game
is never read as one on the paper's Remnant (issue 26). ``game_origin`` comes from a run directory, which may
be anyone's: only its string fields are read, and a malformed value gives ``None`` (nothing is printed).
"""

from __future__ import annotations

from typing import Any

__all__ = ["origin_text"]

_KINDS = {
    "paper": "the paper's game",
    "odyssey": "odyssey's own game, not one of the paper's",
    "user": "a user's game folder, not one of the paper's",
}
MAX_CHARS = 300  # a summary longer than this is cut: it is one line beside a heading


def origin_text(origin: Any) -> str | None:
    """``"the paper's game AgentOdyssey/Remnant-v0: imported from agentodyssey 0.1.0 (sha256 d849dd9d6ae4)"``,
    ``"odyssey's own game, not one of the paper's (Odyssey/Mossfall-v0)"``; ``None`` when ``origin`` is not
    the mapping :func:`odyssey_env.userdir.origin` writes."""
    if not isinstance(origin, dict):
        return None
    kind, env_id, summary = origin.get("kind"), origin.get("env_id"), origin.get("summary")
    if kind not in _KINDS or not isinstance(env_id, str):
        return None
    env_id = "".join(ch for ch in env_id if ch.isprintable())[:100]
    if kind == "paper":
        text = f"{_KINDS[kind]} {env_id}"
        if isinstance(summary, str) and summary.strip():
            text += ": " + "".join(ch for ch in summary if ch.isprintable()).strip()
        return text[:MAX_CHARS]
    return f"{_KINDS[kind]} ({env_id})"
