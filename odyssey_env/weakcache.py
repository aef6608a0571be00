"""One cache for what is worked out once per object and must not outlive it.

The engine works some things out once per quest condition, main quest or game rather than at every
step (which events a condition waits for, the stage plan of a main quest, the ``info`` fields a game
reports). Those objects are frozen dataclasses: they compare by value and may hold dicts, so they
cannot be dictionary keys, and two equal objects are still two (a value belongs to the one it was
made from). A plain dict keyed by ``id(...)`` keeps every object alive for the process (a generator that
validates thousands of candidate games in one process would keep them all) and, were it not to, could
hand a dead object's value to a new one that got its address.

:class:`IdentityCache` keys by identity and holds its objects weakly: an entry leaves when its object is
collected (a weak reference's callback, which runs before the object's memory, and so its id, can be
reused), so a hit is always the living object's own value. ``odyssey_env.listing`` keeps its plans in a
``weakref.WeakKeyDictionary`` for the same reason; a rule book compares by identity, so it can be a key.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

__all__ = ["IdentityCache"]


class IdentityCache(Generic[K, V]):
    """``cache(obj)``: ``make(obj)``, made once per living object (by identity), dropped with it.

    ``make`` must not keep ``obj`` itself in the value (the entry would then keep its object alive).
    """

    __slots__ = ("__weakref__", "entries", "make")

    def __init__(self, make: Callable[[K], V]) -> None:
        self.make = make
        #: ``id(obj)`` -> (a weak reference to ``obj``, the value): a hot path may read it without a call
        #: (``entries.get(id(obj))``); an entry is there only while its object lives.
        self.entries: dict[int, tuple[weakref.ref[K], V]] = {}

    def __call__(self, obj: K) -> V:
        hit = self.entries.get(id(obj))
        if hit is not None:
            return hit[1]
        value = self.make(obj)
        key, entries = id(obj), self.entries
        entries[key] = (weakref.ref(obj, lambda _ref: entries.pop(key, None)), value)
        return value

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"<IdentityCache of {getattr(self.make, '__qualname__', self.make)!r}: {len(self)} live>"
