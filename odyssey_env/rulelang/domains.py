"""Where a verb's slot values come from: the candidates listed for it, and the membership a command is held to.

One function per domain gives the values in a stable order (the engine's own: hands, then bags, then the
pack; the ground as it lies; NPCs as they stand). Listing a verb is the product of its slots' values
filtered by its preconditions, and applying a command first asks that each argument is in its domain,
so the listed commands are exactly the ones that would not be refused: sound and complete by construction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from odyssey_env.rulelang import spec as s
from odyssey_env.verbs.common import carried_handles, ground
from odyssey_env.world import type_of

if TYPE_CHECKING:
    from odyssey_env.rules import ParamKind
    from odyssey_env.turn import Turn

Values = Callable[["Turn"], list[Any]]

PARAM_KIND: dict[str, ParamKind] = {
    "held": "object",
    "carried": "object",
    "worn": "object",
    "ground": "object",
    "near": "object",
    "type": "object",
    "npc": "npc",
    "exit": "area",
    "area": "area",
    "amount": "amount",
    "text": "text",
    "any": "object",  # a name, as any thing, creature or area is
}
#: What each domain reads, in the listing cache's vocabulary (``odyssey_env.rules.DEPENDENCIES``).
READS: dict[str, set[str]] = {
    "held": {"hands"},
    "carried": {"hands", "containers", "worn"},  # the worn pack is one of the containers
    "worn": {"worn"},
    "ground": {"ground", "place"},
    "near": {"hands", "containers", "worn", "ground", "place"},
    "type": set(),  # the world's object types: fixed for the game
    "npc": {"npcs", "place"},
    "exit": {"exits", "place"},
    "area": {"exits", "place"},
    "amount": set(),
    "text": set(),
    "any": set(),  # what its domains read (:func:`reads`)
}


def reads(slot: s.Slot) -> set[str]:
    """What a slot's values read, in the listing cache's vocabulary (an ``any`` slot: all its domains')."""
    if slot.domain == "any":
        return set().union(*(READS[d] for d in slot.of))
    return READS[slot.domain]


def values(slot: s.Slot, game: Any) -> Values:
    """The function listing ``slot``'s values for a turn (an ``any`` slot: its domains' in turn, each once)."""
    if slot.domain == "any":
        parts = tuple(_raw(s.Slot(name=slot.name, domain=d)) for d in slot.of)
        if len(parts) == 1:
            return parts[0]

        def joined(turn: Turn) -> list[Any]:
            seen: dict[Any, None] = {}
            for part in parts:
                seen.update(dict.fromkeys(part(turn)))
            return list(seen)

        return joined
    if slot.domain == "type":
        cats = frozenset(slot.categories)
        named = [t for t in slot.types if not cats or game.objects[t].category in cats]
        if not slot.types:
            named = [name for name, t in game.objects.items() if t.category in cats]
        kinds = tuple(named)
        return lambda turn: list(kinds)
    raw = _raw(slot)
    if slot.domain in ("held", "carried", "worn", "ground", "near") and (slot.types or slot.categories):
        types, cats = frozenset(slot.types), frozenset(slot.categories)
        objects = game.objects

        def narrowed(turn: Turn) -> list[Any]:
            state = turn.state
            out = []
            for h in raw(turn):
                t = type_of(state, h)
                if (not types or t in types) and (not cats or objects[t].category in cats):
                    out.append(h)
            return out

        return narrowed
    if slot.domain == "npc" and (slot.types or slot.hostile is not None):
        types, hostile = frozenset(slot.types), slot.hostile
        kinds = game.npcs

        def npcs(turn: Turn) -> list[Any]:
            table = turn.state.npcs
            out = []
            for h in raw(turn):
                t = table[h].type
                if (not types or t in types) and (hostile is None or kinds[t].hostile == hostile):
                    out.append(h)
            return out

        return npcs
    return raw


def member(slot: s.Slot, game: Any, listed: Values) -> Callable[[Turn, Any], bool]:
    """Whether a value is among ``slot``'s values now (``listed``: :func:`values` of the slot), asked when a
    command is applied. A held or carried slot asks the hands (or everything carried, a dict) for the one value
    and then its type, without building the list; any other domain looks in its list."""
    if slot.domain in ("held", "carried"):
        types, cats = frozenset(slot.types), frozenset(slot.categories)
        objects = game.objects
        carried = slot.domain == "carried"

        def has(turn: Turn, value: Any) -> bool:
            if value not in (carried_handles(turn) if carried else turn.agent.hands):
                return False
            if not types and not cats:
                return True
            t = type_of(turn.state, value)
            return (not types or t in types) and (not cats or objects[t].category in cats)

        return has
    return lambda turn, value: value in listed(turn)


def _raw(slot: s.Slot) -> Values:
    d = slot.domain
    if d == "held":
        return lambda turn: list(turn.agent.hands)
    if d == "carried":
        return lambda turn: list(carried_handles(turn))
    if d == "worn":
        return lambda turn: list(turn.agent.equipment.values())
    if d == "ground":
        return lambda turn: [h for h, _ in ground(turn)]
    if d == "near":

        def near(turn: Turn) -> list[Any]:
            seen = dict.fromkeys(carried_handles(turn))
            seen.update(dict.fromkeys(turn.agent.equipment.values()))
            seen.update(dict.fromkeys(turn.area.objects))
            return list(seen)

        return near
    if d == "npc":
        return lambda turn: list(turn.area.npcs)
    if d == "exit":
        if slot.locked is None:
            return lambda turn: list(turn.area.exits)
        want = slot.locked
        return lambda turn: [a for a, way in turn.area.exits.items() if way.locked == want]
    if d == "area":
        return lambda turn: [turn.agent.area, *turn.area.exits]
    if d == "amount":
        top = slot.max
        return lambda turn: list(range(1, top + 1))
    example = slot.example
    return lambda turn: [example]
