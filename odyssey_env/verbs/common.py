"""Small helpers several verbs share (acquiring, receiving, naming what an agent carries)."""

from __future__ import annotations

from odyssey_env.engine import Turn
from odyssey_env.world import add, fits_in_hands, type_of


def acquire(turn: Turn, handle: str, n: int = 1, how: str = "picked") -> None:
    """Record that the agent came to hold an object (metrics: objects acquired)."""
    kind = type_of(turn.state, handle)
    turn.emit("object_acquired", object=kind, handle=handle, amount=n, how=how,
              first=turn.first("acquired", kind))


def receive(turn: Turn, handle: str, n: int) -> str:
    """Give objects to the agent's hands if they fit, else put them on the ground; say where."""
    if fits_in_hands(turn.game, turn.agent, handle, n):
        add(turn.agent.hands, handle, n)
        acquire(turn, handle, n, how="received")
        return "in my hands"
    add(turn.area.objects, handle, n)
    return "on the ground"


def carried_handles(turn: Turn) -> dict[str, int]:
    """Everything in hands and in reachable containers, summed per handle."""
    from odyssey_env.world import held_containers

    out = dict(turn.agent.hands)
    for c in held_containers(turn.game, turn.state, turn.agent):
        for h, n in turn.state.instances[c].contents.items():
            out[h] = out.get(h, 0) + n
    return out
