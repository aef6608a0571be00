"""What must hold of a world state whatever the rules did: the execution test's state assertions.

Rules change the state directly, so a generated rule can break what every other rule assumes (an
NPC listed in an area it is not in, an object handle nobody knows, three things in two hands). These
checks catch it on the step it happens rather than as a crash a hundred steps later.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from odyssey_env.world import container_load, hand_slots_used

if TYPE_CHECKING:
    from odyssey_env.content import NpcType, ObjectType, WorldSpec
    from odyssey_env.state import WorldState

__all__ = ["GameFacts", "World", "state_problems", "world_size"]


class GameFacts(Protocol):
    """What the checks read of a game: a loaded :class:`odyssey_env.game.Game`, or the sandbox's reading
    of the game's data alone (:class:`odyssey_gen.validate.sandbox.GameData`: that process runs no
    game code, so it has no Game)."""

    @property
    def spec(self) -> WorldSpec: ...

    @property
    def objects(self) -> Mapping[str, ObjectType]: ...

    @property
    def npcs(self) -> Mapping[str, NpcType]: ...

    @property
    def currency(self) -> str | None: ...


class World(Protocol):
    """A game and a state of it: an :class:`odyssey_env.engine.Engine`, or the sandbox's view of a state
    its worker returned."""

    @property
    def game(self) -> GameFacts: ...

    @property
    def state(self) -> WorldState: ...


def _known(engine: World, handle: str) -> bool:
    state = engine.state
    inst = state.instances.get(handle)
    return (inst is not None and inst.type in engine.game.objects) or (
        inst is None and handle in engine.game.objects and not engine.game.objects[handle].instanced
    )


def state_problems(engine: World, limit: int = 5) -> list[str]:
    """Broken invariants of ``engine.state`` (at most ``limit``), each one line."""
    game, state = engine.game, engine.state
    out: list[str] = []

    def bad(text: str) -> None:
        if len(out) < limit:
            out.append(text)

    for name, area in state.areas.items():
        for handle, n in area.objects.items():
            if not isinstance(n, int) or n < 1:
                bad(f"area {name} holds {n!r} of {handle}")
            elif not _known(engine, handle):
                bad(f"area {name} holds an unknown object {handle!r}")
        for handle in area.npcs:
            npc = state.npcs.get(handle)
            if npc is None:
                bad(f"area {name} lists NPC {handle!r}, which does not exist")
            elif npc.area != name:
                bad(f"area {name} lists NPC {handle!r}, which is in {npc.area}")
        for other, ex in area.exits.items():
            back = state.areas.get(other)
            if back is None:
                bad(f"area {name} has an exit to {other!r}, which does not exist")
            elif name not in back.exits or back.exits[name].locked != ex.locked:
                bad(f"the path {name} - {other} is not the same both ways")
    for handle, npc in state.npcs.items():
        if npc.type not in game.npcs:
            bad(f"NPC {handle} has unknown type {npc.type!r}")
        home = state.areas.get(npc.area)
        if home is None or handle not in home.npcs:
            bad(f"NPC {handle} is in {npc.area!r} but that area does not list it")
        if npc.hp > npc.max_hp:
            bad(f"NPC {handle} has {npc.hp} health, above its maximum {npc.max_hp}")
    for handle, inst in state.instances.items():
        t = game.objects.get(inst.type)
        if t is None:
            bad(f"instance {handle} has unknown type {inst.type!r}")
            continue
        for inner, n in inst.contents.items():
            if n < 1 or not _known(engine, inner):
                bad(f"container {handle} holds {n!r} of {inner!r}")
        if t.category == "container" and container_load(game, state, inst) > t.capacity:
            bad(f"container {handle} holds more than its capacity {t.capacity}")
    for aid, agent in state.agents.items():
        if agent.area not in state.areas:
            bad(f"agent {aid} stands in {agent.area!r}, which does not exist")
        if hand_slots_used(game, agent) > game.spec.agent.hands:
            bad(f"agent {aid} holds {dict(agent.hands)} in {game.spec.agent.hands} hands")
        for handle, n in agent.hands.items():
            if n < 1 or not _known(engine, handle):
                bad(f"agent {aid} holds {n!r} of {handle!r}")
        for slot, handle in agent.equipment.items():
            if handle not in state.instances and handle not in game.objects:
                bad(f"agent {aid} wears an unknown {handle!r} in slot {slot}")
        if agent.hp > agent.max_hp:
            bad(f"agent {aid} has {agent.hp} health, above its maximum {agent.max_hp}")
    return out


def world_size(engine: World) -> int:
    """Things in the world: object units on the ground and in containers (coins aside: trade makes
    them), NPCs, instances and areas."""
    state, coin = engine.state, engine.game.currency

    def units(holding: dict[str, int]) -> int:
        return sum(n for h, n in holding.items() if h != coin)

    return (
        sum(units(a.objects) for a in state.areas.values())
        + len(state.npcs)
        + len(state.areas)
        + len(state.instances)
        + sum(units(i.contents) for i in state.instances.values())
    )
