"""Plan hints: the conditions a verb's ``needs`` hands to planners that cannot read its code (the oracle).

Each builder returns one shared instance per distinct content, made once: planners memoise by
identity, and the engine's condition cache keeps what it has seen, so a hint rebuilt every step would
grow both. Rules written in Python and the rule language's interpreter both build their hints here.
"""

from __future__ import annotations

import functools
from typing import Any

from odyssey_env.quests.spec import Condition

__all__ = ["any_has", "did", "has", "in_area", "text_written"]


@functools.cache
def has(obj: str, count: int = 1) -> Condition:
    """Carry at least ``count`` of ``obj``."""
    return Condition(type="has_item_count", object=obj, count=count)


@functools.cache
def any_has(*objects: str) -> Condition:
    """Carry one of ``objects`` (just ``has`` for one)."""
    if len(objects) == 1:
        return has(objects[0])
    return Condition(type="any_of", conditions=tuple(has(o) for o in objects))


@functools.cache
def in_area(area: str) -> Condition:
    """Stand in ``area``."""
    return Condition(type="in_area", area=area)


@functools.cache
def text_written(text: str) -> Condition:
    """Have written ``text`` on a writable."""
    return Condition(type="text_written", text=text)


def did(kind: str, /, **match: Any) -> Condition:
    """Cause an event ``kind`` whose data hold ``match`` (the engine's ``did`` predicate); the values
    must be hashable (names, numbers)."""
    return _did(kind, tuple(match.items()))


@functools.cache
def _did(kind: str, match: tuple[tuple[str, Any], ...]) -> Condition:
    return Condition(type="predicate", name="did", args={"kind": kind, **dict(match)})
