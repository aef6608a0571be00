"""Reading the parts of an observation back out of its text.

The engine writes observations in a fixed layout (``odyssey_env.observation``: a header, what happened,
then a fixed tail of twelve lines) so that agents and parsers can rely on it. The viewer takes the
per-step stats, inventory and exits from it rather than from any saved world state: a trajectory holds
no world state, and the text is exactly what the agent was shown.

An observation that does not have the layout (a future engine, a hand-written trajectory) is not an
error: :func:`parse_observation` returns None and the viewer shows the text alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["STATS", "Observation", "parse_exits", "parse_observation"]

#: The numbers of the tail, in their order: (key, line prefix).
STATS: tuple[tuple[str, str], ...] = (
    ("level", "My level is "),
    ("attack", "My attack is at "),
    ("defense", "My defense is at "),
    ("health", "My health is at "),
    ("xp", "My experience is at "),
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_TAIL = 12  # holding, equipped, ground, beings, blank, five stats, blank, exits: counted from the end


@dataclass(frozen=True)
class Observation:
    """What one observation says, as text fields (the viewer shows them as they are)."""

    time: str
    place: str
    area: str
    feedback: str  # what happened this step, one message per line ("" when nothing was said)
    holding: str  # "1 torch, 10 coin" or "" (no objects)
    equipped: str
    ground: str  # objects lying here
    beings: str  # NPCs and other agents here
    stats: tuple[float | None, ...]  # in the order of STATS
    exits: tuple[tuple[str, bool], ...]  # (area, locked)


def _after(line: str, prefix: str, suffix: str) -> str | None:
    if not (line.startswith(prefix) and line.endswith(suffix)):
        return None
    return line[len(prefix) : len(line) - len(suffix)]


def _listing(text: str | None, nothing: str) -> str | None:
    return None if text is None else "" if text == nothing else text


def _number(line: str, prefix: str) -> float | None:
    text = _after(line, prefix, ".")
    if text is None or not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return int(value) if value.is_integer() else value


def parse_exits(line: str) -> tuple[tuple[str, bool], ...] | None:
    """``Neighboring areas: armory, library (locked).`` -> ``(("armory", False), ("library", True))``."""
    text = _after(line, "Neighboring areas: ", ".")
    if text is None:
        return None
    if text == "none":
        return ()
    out = []
    for part in text.split(", "):
        name = part.removesuffix(" (locked)")
        if not name:
            return None
        out.append((name, name != part))
    return tuple(out)


def parse_observation(text: str) -> Observation | None:
    """The fields of an observation in the engine's layout, or None when it does not have it."""
    if not isinstance(text, str):
        return None
    lines = text.split("\n")
    if len(lines) < 3 + _TAIL:
        return None
    time = _after(lines[0], "Current Time: ", "")
    location = _after(lines[1], "Current Location: ", "")
    if time is None or location is None or ", " not in location or lines[2] != "":
        return None
    place, _, area = location.rpartition(", ")
    tail = lines[-_TAIL:]
    holding = _listing(_after(tail[0], "I am holding ", "."), "no objects")
    equipped = _listing(_after(tail[1], "I have equipped ", "."), "no objects")
    ground = _listing(_after(tail[2], "I see ", " near me."), "no objects")
    beings = _listing(_after(tail[3], "I see ", " nearby."), "no one")
    exits = parse_exits(tail[11])
    if holding is None or equipped is None or ground is None or beings is None or exits is None:
        return None
    if tail[4] != "" or tail[10] != "":
        return None
    stats = tuple(_number(line, prefix) for line, (_, prefix) in zip(tail[5:10], STATS, strict=True))
    feedback = lines[3 : len(lines) - _TAIL]
    while feedback and feedback[-1] == "":
        feedback.pop()
    return Observation(time, place, area, "\n".join(feedback), holding, equipped, ground, beings, stats, exits)
