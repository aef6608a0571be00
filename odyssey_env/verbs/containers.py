"""Containers: store, take out, discard.

A container can be used while held in a hand or worn as the pack. Its capacity bounds the total size
of what it holds; containers never go inside containers. ``store`` takes from my hands first and
then from the ground here, so a bag can be filled without juggling hands.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from odyssey_env.rules import ActionRule, Fact, action_rule
from odyssey_env.turn import Turn
from odyssey_env.verbs.common import acquire, ground, reachable_containers
from odyssey_env.world import (
    add,
    container_room,
    fits_in_hands,
    held_containers,
    known_object,
    remove,
    type_of,
)

if TYPE_CHECKING:
    from odyssey_env.game import Game


def _reachable(turn: Turn, handle: str) -> bool:
    return handle in held_containers(turn.game, turn.state, turn.agent)


def _storable(turn: Turn, handle: str, container: str) -> str | None:
    """Why ``handle`` cannot go into ``container`` at all (independent of amounts), or None."""
    t = known_object(turn.game, turn.state, handle)
    assert t is not None, "a handle in hand or on the ground has a loaded type"
    if handle == container or t.category == "container":
        return "containers do not go inside containers"
    if not t.portable:
        return "it is fixed in place"
    return None


@action_rule
class Store(ActionRule):
    verb = "store"
    params = (("amount", "amount"), ("object_name", "object"), ("container_name", "container"))
    description = "Put objects from my hands (then from the ground here) into a container I hold or wear."
    depends_on = ("hands", "worn", "containers", "ground")

    def apply(self, turn: Turn, n: int, handle: str, container: str) -> None:
        agent, area, state, game = turn.agent, turn.area, turn.state, turn.game
        if not _reachable(turn, container):
            return turn.fail(f"Cannot store into {container}: I hold or wear no such container.")
        in_hands = agent.hands.get(handle, 0)
        on_ground = area.objects.get(handle, 0)
        if in_hands + on_ground < n:
            return turn.fail(f"Cannot store {n} {handle}: I have {in_hands} in hand and see {on_ground} here.")
        why = _storable(turn, handle, container)
        if why:
            return turn.fail(f"Cannot store {handle} in {container}: {why}.")
        t = known_object(game, state, handle)
        assert t is not None, "a handle in hand or on the ground has a loaded type"
        need = t.size * n
        room = container_room(game, state, container)
        if need > room:
            return turn.fail(
                f"Cannot store {n} {handle} in {container}: it needs room {need}, and {container} has {room} left."
            )
        from_hands = min(in_hands, n)
        if from_hands:
            remove(agent.hands, handle, from_hands)
        if n > from_hands:
            remove(area.objects, handle, n - from_hands)
            acquire(turn, handle, n - from_hands, how="stored")
        add(state.instances[container].contents, handle, n)
        turn.say(f"I stored {n} {handle} in {container}.")
        turn.emit("object_stored", object=type_of(state, handle), handle=handle, amount=n, container=container)

    def candidates(self, turn: Turn) -> Iterable[str]:
        agent, area, state, game = turn.agent, turn.area, turn.state, turn.game
        containers = reachable_containers(turn)
        if not containers:
            return
        hands, lying = agent.hands, area.objects
        instances, objects = state.instances, game.objects
        options = []  # (handle, units available, size): the _storable test, once per handle
        for handle in hands:
            inst = instances.get(handle)
            t = objects[inst.type if inst is not None else handle]
            if t.category not in ("container", "station"):
                options.append((handle, hands[handle] + lying.get(handle, 0), t.size))
        for handle, t in ground(turn):
            if t.category not in ("container", "station") and handle not in hands:
                options.append((handle, lying[handle], t.size))
        for container in containers:
            room = container_room(game, state, container)
            for handle, have, size in options:
                most = min(have, room // size) if size else have
                if most >= 1:
                    yield f"store 1 {handle} {container}"
                if most > 1:
                    yield f"store {most} {handle} {container}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "containers",
            "Can a container be stored inside another container?",
            "no",
            ("yes", "only when empty", "only small ones"),
        )


def _amounts(verb: str, most: int, *rest: str) -> Iterator[str]:
    """Valid-action summary for an amount: the smallest and the largest feasible amount."""
    tail = " ".join(rest)
    if most >= 1:
        yield f"{verb} 1 {tail}"
    if most > 1:
        yield f"{verb} {most} {tail}"


@action_rule
class TakeOut(ActionRule):
    verb = "take out"
    params = (("object_name", "object"), ("container_name", "container"))
    description = "Take one object (or all the coins) out of a container I hold or wear, into a free hand."
    depends_on = ("hands", "worn", "containers")

    def apply(self, turn: Turn, handle: str, container: str) -> None:
        agent, state, game = turn.agent, turn.state, turn.game
        if not _reachable(turn, container):
            return turn.fail(f"Cannot take anything out of {container}: I hold or wear no such container.")
        contents = state.instances[container].contents
        have = contents.get(handle, 0)
        if not have:
            return turn.fail(f"Cannot take {handle} out of {container}: it is not in there.")
        n = have if handle == game.currency else 1
        if not fits_in_hands(game, agent, handle, n):
            return turn.fail(f"Cannot take {handle} out of {container}: my hands are full.")
        remove(contents, handle, n)
        add(agent.hands, handle, n)
        turn.say(f"I took {n} {handle} out of {container}.")
        turn.emit("object_taken_out", object=type_of(state, handle), handle=handle, amount=n, container=container)

    def candidates(self, turn: Turn) -> Iterable[str]:
        agent, state, game = turn.agent, turn.state, turn.game
        for container in reachable_containers(turn):
            for handle in state.instances[container].contents:
                if fits_in_hands(game, agent, handle):
                    yield f"take out {handle} {container}"


@action_rule
class Discard(ActionRule):
    verb = "discard"
    params = (("amount", "amount"), ("object_name", "object"), ("container_name", "container"))
    description = "Empty objects from a container I hold or wear onto the ground here."
    depends_on = ("hands", "worn", "containers")

    def apply(self, turn: Turn, n: int, handle: str, container: str) -> None:
        state = turn.state
        if not _reachable(turn, container):
            return turn.fail(f"Cannot discard from {container}: I hold or wear no such container.")
        contents = state.instances[container].contents
        have = contents.get(handle, 0)
        if have < n:
            return turn.fail(f"Cannot discard {n} {handle}: {container} holds {have}.")
        remove(contents, handle, n)
        add(turn.area.objects, handle, n)
        turn.say(f"I discarded {n} {handle} from {container} onto the ground.")
        turn.emit(
            "object_discarded",
            object=type_of(state, handle),
            handle=handle,
            amount=n,
            container=container,
            area=turn.agent.area,
        )

    def candidates(self, turn: Turn) -> Iterable[str]:
        state = turn.state
        for container in reachable_containers(turn):
            for handle, have in state.instances[container].contents.items():
                yield from _amounts(self.verb, have, handle, container)
