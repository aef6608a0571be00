"""Small helpers several verbs share (acquiring, receiving, naming what an agent carries)."""

from __future__ import annotations

from odyssey_env.content import ObjectType
from odyssey_env.turn import Turn
from odyssey_env.world import give, held_containers, type_of


def acquire(turn: Turn, handle: str, n: int = 1, how: str = "picked") -> None:
    """Record that the agent came to hold an object (metrics: objects acquired)."""
    kind = type_of(turn.state, handle)
    turn.emit("object_acquired", object=kind, handle=handle, amount=n, how=how, first=turn.first("acquired", kind))


def receive(turn: Turn, handle: str, n: int) -> str:
    """Give objects to the agent's hands if they fit, else put them on the ground; say where."""
    where = give(turn.game, turn.state, turn.agent, handle, n)
    if where == "in my hands":
        acquire(turn, handle, n, how="received")
    return where


def reachable_containers(turn: Turn) -> list[str]:
    """The containers the agent holds, then its pack (read-only; shared by the verbs while listing)."""
    memo = turn.memo
    if memo is None:
        return list(held_containers(turn.game, turn.state, turn.agent))
    found = memo.get("containers")
    if found is None:
        found = memo["containers"] = list(held_containers(turn.game, turn.state, turn.agent))
    return found


def carried_handles(turn: Turn) -> dict[str, int]:
    """Everything in hands and in reachable containers, summed per handle (read-only)."""
    memo = turn.memo
    if memo is not None and "carried" in memo:
        return memo["carried"]
    out = dict(turn.agent.hands)
    for c in reachable_containers(turn):
        for h, n in turn.state.instances[c].contents.items():
            out[h] = out.get(h, 0) + n
    if memo is not None:
        memo["carried"] = out
    return out


def ground(turn: Turn) -> list[tuple[str, ObjectType]]:
    """``(handle, type)`` of every object on the ground here (read-only)."""
    memo = turn.memo
    if memo is not None and "ground" in memo:
        return memo["ground"]
    objects, get = turn.game.objects, turn.state.instances.get
    out = [(handle, objects[handle if (inst := get(handle)) is None else inst.type]) for handle in turn.area.objects]
    if memo is not None:
        memo["ground"] = out
    return out


def coins_carried(turn: Turn) -> int:
    memo = turn.memo
    if memo is not None and "coins" in memo:
        return memo["coins"]
    currency = turn.game.currency
    n = carried_handles(turn).get(currency, 0) if currency else 0
    if memo is not None:
        memo["coins"] = n
    return n
