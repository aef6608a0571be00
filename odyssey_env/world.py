"""Operations on the world state that several rules share: where objects are, moving them, sizes, paths.

Verbs and step rules call these instead of touching dicts directly, so that every rule agrees on
what "held", "carried" and "fits" mean, and on which areas are how far apart (the breadth-first paths
at the end, the one search every rule and the rule language use). The object functions are small and
allocation-free on purpose: they sit on the per-step hot path.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Container, Iterator, Mapping
from typing import TYPE_CHECKING, Protocol, cast

from odyssey_env.content import ObjectType
from odyssey_env.state import Agent, Area, Exit, Instance, Npc, WorldState

if TYPE_CHECKING:
    from odyssey_env.game import Game


class Catalogue(Protocol):
    """What counting hands and container loads reads of a game: its object types and its currency. A
    :class:`~odyssey_env.game.Game` is one; so is a validator's reading of a game's data alone (a
    process that must not import the game's rules has no Game)."""

    @property
    def objects(self) -> Mapping[str, ObjectType]: ...

    @property
    def currency(self) -> str | None: ...


def type_of(state: WorldState, handle: str) -> str:
    """Object type name of a handle (instance names map to their type)."""
    inst = state.instances.get(handle)
    return inst.type if inst is not None else handle


def add(holding: dict[str, int], handle: str, n: int = 1) -> None:
    holding[handle] = holding.get(handle, 0) + n


def remove(holding: dict[str, int], handle: str, n: int = 1) -> None:
    left = holding[handle] - n
    if left > 0:
        holding[handle] = left
    else:
        del holding[handle]


def describe_holding(holding: dict[str, int]) -> str:
    """``"2 apple, 1 small_bag_0"``, the way observations list objects."""
    return ", ".join([f"{n} {h}" for h, n in holding.items()])


# ------------------------------------------------------------------ hands
def hand_slots_used(game: Catalogue, agent: Agent) -> int:
    """Hands in use: every object takes a hand, but a pile of coins takes one hand in all."""
    used = 0
    currency = game.currency
    for handle, n in agent.hands.items():
        used += 1 if handle == currency else n
    return used


def hands_free(game: Game, agent: Agent) -> int:
    return game.spec.agent.hands - hand_slots_used(game, agent)


def held_for(game: Game, state: WorldState, agent: Agent, use: str) -> str | None:
    """The first object in the agent's hands with ``use`` (a pen to write, a lockpick to pick locks)."""
    objects, instances = game.objects, state.instances
    for handle in agent.hands:
        inst = instances.get(handle)
        if use in objects[inst.type if inst is not None else handle].uses:
            return handle
    return None


def fits_in_hands(game: Game, agent: Agent, handle: str, n: int = 1) -> bool:
    if handle == game.currency and handle in agent.hands:
        return True
    need = 1 if handle == game.currency else n
    return hands_free(game, agent) >= need


def give(game: Game, state: WorldState, agent: Agent, handle: str, n: int) -> str:
    """Hand objects to the agent if they fit in its hands, else lay them at its feet; say which."""
    if fits_in_hands(game, agent, handle, n):
        add(agent.hands, handle, n)
        return "in my hands"
    add(state.areas[agent.area].objects, handle, n)
    return "on the ground"


# ------------------------------------------------------------------ containers
def container_load(game: Catalogue, state: WorldState, inst: Instance) -> int:
    objects = game.objects
    instances = state.instances
    total = 0
    for handle, n in inst.contents.items():
        sub = instances.get(handle)
        total += objects[sub.type if sub is not None else handle].size * n
    return total


def container_room(game: Game, state: WorldState, handle: str) -> int:
    inst = state.instances[handle]
    return game.objects[inst.type].capacity - container_load(game, state, inst)


def held_containers(game: Game, state: WorldState, agent: Agent) -> Iterator[str]:
    """Containers in the agent's hands, then the worn pack (the order objects are drawn from)."""
    instances = state.instances
    for handle in agent.hands:
        inst = instances.get(handle)
        if inst is not None and game.objects[inst.type].category == "container":
            yield handle
    pack = agent.equipment.get("pack")
    if pack is not None:
        yield pack


# ------------------------------------------------------------------ counting and taking
def carried_count(game: Game, state: WorldState, agent: Agent, handle: str) -> int:
    """Units of ``handle`` in hands, in the pack and in held containers (what crafting and trade use)."""
    # held_containers inlined: recipes ask this of every ingredient at every step (forge alerts, hints)
    hands = agent.hands
    n = hands.get(handle, 0)
    instances, objects = state.instances, game.objects
    for h in hands:
        inst = instances.get(h)
        if inst is not None and objects[inst.type].category == "container":
            n += inst.contents.get(handle, 0)
    pack = agent.equipment.get("pack")
    if pack is not None:
        n += instances[pack].contents.get(handle, 0)
    return n


def take_carried(game: Game, state: WorldState, agent: Agent, handle: str, n: int) -> None:
    """Remove ``n`` units carried by the agent: hands first, then held containers, then the pack.

    The caller has checked :func:`carried_count`.
    """
    in_hands = agent.hands.get(handle, 0)
    if in_hands:
        k = min(in_hands, n)
        remove(agent.hands, handle, k)
        n -= k
    if n:
        for c in held_containers(game, state, agent):
            contents = state.instances[c].contents
            have = contents.get(handle, 0)
            if have:
                k = min(have, n)
                remove(contents, handle, k)
                n -= k
                if not n:
                    break


def make_objects(game: Game, state: WorldState, type_name: str, n: int) -> list[tuple[str, int]]:
    """New objects of a type as ``(handle, count)`` pieces: instanced kinds get one fresh name each."""
    if game.objects[type_name].instanced:
        pieces = []
        for _ in range(n):
            handle = state.new_handle(type_name)
            state.instances[handle] = Instance(type=type_name)
            pieces.append((handle, 1))
        return pieces
    return [(type_name, n)]


def materialize(game: Game, state: WorldState, handle: str, n: int) -> list[tuple[str, int]]:
    """Objects leaving an NPC's or a recipe's bookkeeping (type names) to enter the world.

    NPC inventories count instanced kinds by type name; in the world each one needs its own name.
    """
    t = game.objects.get(handle)
    if t is not None and t.instanced:
        return make_objects(game, state, handle, n)
    return [(handle, n)]


def drop_all(game: Game, state: WorldState, agent: Agent, area: Area) -> list[str]:
    """Everything held and worn goes to the ground (death); returns the handles dropped."""
    dropped = []
    for handle, n in agent.hands.items():
        add(area.objects, handle, n)
        dropped.append(handle)
    agent.hands.clear()
    for handle in agent.equipment.values():
        add(area.objects, handle, 1)
        dropped.append(handle)
    agent.equipment.clear()
    return dropped


# ------------------------------------------------------------------ stats
def attack_of(game: Game, state: WorldState, agent: Agent) -> int:
    """Base attack plus the best attack among held objects (weapons and tools)."""
    best = 0
    objects = game.objects
    instances = state.instances
    for handle in agent.hands:
        inst = instances.get(handle)
        a = objects[inst.type if inst is not None else handle].attack
        if a > best:
            best = a
    return agent.base_attack + best


def defense_of(game: Game, agent: Agent) -> int:
    total = game.spec.agent.defense
    objects = game.objects
    for slot, handle in agent.equipment.items():  # a loop, not sum() of a generator: asked every step
        if slot != "pack":
            total += objects[handle].defense
    return total


def npc_here(state: WorldState, area: Area, handle: str) -> Npc | None:
    npc = state.npcs.get(handle)
    return npc if npc is not None and npc.area == area.name else None


def known_object(game: Game, state: WorldState, handle: str) -> ObjectType | None:
    inst = state.instances.get(handle)
    return game.objects.get(inst.type if inst is not None else handle)


# ---------------------------------------------------------------------------- paths over the area graph
#: Whether a search may cross from area ``here`` to its neighbour ``there`` through ``exit``.
Passable = Callable[[str, str, Exit], bool]


def unlocked(here: str, there: str, exit: Exit) -> bool:
    """Paths open now (a locked one needs its key or a pick first)."""
    return not exit.locked


def breadth_first(
    state: WorldState,
    start: str,
    passable: Passable | None = None,
    *,
    until: Callable[[str], bool] | None = None,
) -> dict[str, str | None]:
    """Every area reachable from ``start``, nearest first, each with the area it is reached from (None
    for ``start``): a breadth-first search over the area graph, ties in exit order, so the same world
    gives the same order in any process.

    ``passable`` (default: every path, locked or not) says which paths count; exits to areas no longer in
    the world are skipped. With ``until``, the search stops at the first area reached for which it holds
    (``start`` included), which is then the last key.
    """
    areas = state.areas
    came_from: dict[str, str | None] = {start: None}
    if until is not None and until(start):
        return came_from
    queue = deque((start,))
    while queue:
        here = queue.popleft()
        for there, exit in areas[here].exits.items():
            if there in came_from or there not in areas or (passable is not None and not passable(here, there, exit)):
                continue
            came_from[there] = here
            if until is not None and until(there):
                return came_from
            queue.append(there)
    return came_from


def nearest(
    state: WorldState, start: str, wanted: Callable[[str], bool], passable: Passable | None = None
) -> str | None:
    """The area nearest to ``start`` (``start`` itself included) for which ``wanted`` holds, or None."""
    found = breadth_first(state, start, passable, until=wanted)
    last = next(reversed(found))
    return last if wanted(last) else None


def first_step(state: WorldState, start: str, targets: Container[str], passable: Passable | None = None) -> str | None:
    """The neighbour of ``start`` that begins a shortest path to the nearest of ``targets`` (``start``
    itself never counts as one), or None when none is reachable."""
    found = breadth_first(state, start, passable, until=lambda area: area != start and area in targets)
    area = next(reversed(found))
    if area == start or area not in targets:
        return None
    while (previous := found[area]) != start:
        area = cast(str, previous)  # only ``start`` is reached from None, and the walk stops before it
    return area
