"""Sampling the initial world of an episode from a game's content and a seeded RNG.

Placement is conditioned on level (paper §3.2): a type's weight in an area falls by
``placement.level_decay`` per level of difference and types far above the area's level are left out,
so stronger enemies and richer objects appear deeper in the world. Every choice iterates lists in
file order and draws from the one RNG it is given, so a seed gives the same world in any process.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from odyssey_env.content import NpcType, ObjectType
from odyssey_env.state import Agent, Area, Exit, Npc, WorldState
from odyssey_env.world import add, make_objects

if TYPE_CHECKING:
    from odyssey_env.game import Game


def parse_clock(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def generate(
    game: Game, rng: random.Random, agent_ids: tuple[str, ...] = ("player",), *, supply: int = 1
) -> WorldState:
    """A fresh world for ``agent_ids``. ``supply`` multiplies the supplies a game's author placed (portable
    objects listed in areas, merchants' stock), so that a world shared by several agents can hold what
    each of them needs; random scatter, stations and NPCs are not multiplied."""
    state = _draw(game, rng, supply)
    if game.spec.placement.style == "agentodyssey":
        from odyssey_env.paperworld import REDRAWS, opens_up

        # a world whose locked ways cannot all be opened is drawn again (paperworld.opens_up); after
        # REDRAWS refusals the first draw stands: a game whose author locked an area for good stays so
        first = state
        for _ in range(REDRAWS):
            if opens_up(game, state):
                break
            state = _draw(game, rng, supply)
        else:
            state = first
    for agent_id in agent_ids:
        state.agents[agent_id] = new_agent(game, agent_id, game.spec.spawn)
    return state


def _draw(game: Game, rng: random.Random, supply: int) -> WorldState:
    spec = game.spec
    state = WorldState(
        step=0,
        minute=parse_clock(spec.game.start_time),
        spawn=spec.spawn,
        areas={},
        npcs={},
        instances={},
        agents={},
    )
    for place in spec.places:
        for a in place.areas:
            state.areas[a.name] = Area(name=a.name, place=place.name, level=a.level, description=a.description)
    if spec.graph.mode == "agentodyssey":
        from odyssey_env.paperworld import connect

        connect(game, state, rng, link)
    else:
        _connect(game, state, rng)
    paper_style = spec.placement.style == "agentodyssey"
    for place in spec.places:
        for a in place.areas:
            area = state.areas[a.name]
            for obj, n in a.objects.items():
                if supply > 1 and game.objects[obj].portable:
                    n *= supply
                for handle, k in make_objects(game, state, obj, n):
                    add(area.objects, handle, k)
            for npc_type in a.npcs:
                npc = spawn_npc(game, state, game.npcs[npc_type], a.name)
                if supply > 1 and npc.inventory and game.npcs[npc_type].merchant:
                    npc.inventory = {h: k * supply for h, k in npc.inventory.items()}
            if a.scatter and not paper_style:
                _scatter(game, state, rng, area)
    if paper_style:
        from odyssey_env.paperworld import populate

        populate(game, state, rng, spawn_npc)
    return state


def new_agent(game: Game, agent_id: str, area: str) -> Agent:
    body = game.spec.agent
    return Agent(
        id=agent_id,
        name=agent_id,
        area=area,
        hp=body.hp,
        max_hp=body.hp,
        base_attack=body.attack,
        attack=body.attack,
        defense=body.defense,
        home=area,
    )


def npc_stats(t: NpcType, level: int) -> tuple[int, int]:
    """hp and attack of an instance of ``t`` at ``level`` (types whose level follows their area grow per level)."""
    if not t.level_with_area:
        return t.hp, t.attack
    up = max(0, level - 1)
    return t.hp + t.hp_per_level * up, t.attack + t.attack_per_level * up


def spawn_npc(
    game: Game, state: WorldState, t: NpcType, area: str, origin: str = "world", level: int | None = None
) -> Npc:
    """Put a new instance of ``t`` in ``area``. A type whose level follows its area takes ``level``, else the area's."""
    handle = t.name if t.unique else state.new_handle(t.name)
    stock = t.stock if t.merchant else t.drops
    level = (level if level is not None else state.areas[area].level) if t.level_with_area else t.level
    hp, attack = npc_stats(t, level)
    npc = Npc(
        handle=handle,
        type=t.name,
        area=area,
        hp=hp,
        max_hp=hp,
        attack=attack,
        defense=t.defense,
        level=level,
        inventory=dict(stock),
        coins=t.coins,
        origin=origin,
    )
    state.npcs[handle] = npc
    state.areas[area].npcs.append(handle)
    return npc


def spawnable_enemies(game: Game, max_level: int | None = None) -> list[NpcType]:
    """Enemy kinds that may appear after world generation (night spawns, noise scouts, expansion), in file order.

    Common enemies with a positive spawn weight, at most ``max_level`` when given.
    """
    return [
        t
        for t in game.spec.npcs
        if t.common_enemy and t.spawn_weight > 0 and (max_level is None or t.level <= max_level)
    ]


def link(
    state: WorldState, a: str, b: str, *, locked: bool = False, key: str | None = None, pickable: bool = True
) -> None:
    state.areas[a].exits[b] = Exit(locked=locked, key=key, pickable=pickable)
    state.areas[b].exits[a] = Exit(locked=locked, key=key, pickable=pickable)


def _connect(game: Game, state: WorldState, rng: random.Random) -> None:
    g = game.spec.graph
    for c in g.connections:
        link(state, c.a, c.b, locked=c.locked, key=c.key, pickable=c.pickable)
    if g.mode == "fixed":
        return
    places = sorted(game.spec.places, key=lambda p: min(a.level for a in p.areas))  # stable
    for place in places:  # a random spanning tree inside each place
        names = [a.name for a in place.areas]
        rng.shuffle(names)
        for i in range(1, len(names)):
            other = names[rng.randrange(i)]
            if other not in state.areas[names[i]].exits:
                link(state, names[i], other)
        pairs = [(x, y) for i, x in enumerate(names) for y in names[i + 1 :] if y not in state.areas[x].exits]
        for x, y in rng.sample(pairs, min(g.extra_links, len(pairs))):
            link(state, x, y)
    bridges = []
    for prev, nxt in itertools.pairwise(places):  # places chained from low to high level
        lowest = min(a.level for a in nxt.areas)
        entry = [a.name for a in nxt.areas if a.level == lowest]
        a = rng.choice([x.name for x in prev.areas])
        b = rng.choice(entry)
        if b not in state.areas[a].exits:
            link(state, a, b)
            bridges.append((a, b))
    if g.locked_links and bridges:
        for a, b in rng.sample(bridges, min(g.locked_links, len(bridges))):
            link(state, a, b, locked=True, key=g.lock_key)


def _weights(game: Game, level: int, types: Sequence[ObjectType | NpcType], area: str) -> list[float]:
    p = game.spec.placement
    out = []
    for t in types:
        if t.spawn_weight <= 0 or t.level > level + p.max_level_above or (t.areas and area not in t.areas):
            out.append(0.0)
        else:
            out.append(t.spawn_weight * p.level_decay ** abs(level - t.level))
    return out


def _scatter(game: Game, state: WorldState, rng: random.Random, area: Area) -> None:
    p = game.spec.placement
    objects = [o for o in game.spec.objects if o.portable and o.category != "quest"]
    weights = _weights(game, area.level, objects, area.name)
    if any(weights):
        for t in rng.choices(objects, weights, k=rng.randint(*p.objects_per_area)):
            for handle, k in make_objects(game, state, t.name, 1):
                add(area.objects, handle, k)
    if area.name == game.spec.spawn:
        return  # nothing hostile wanders into the spawn area at the start
    npcs = [n for n in game.spec.npcs if n.common_enemy]
    weights = _weights(game, area.level, npcs, area.name)
    if any(weights):
        for npc_type in rng.choices(npcs, weights, k=rng.randint(*p.npcs_per_area)):
            spawn_npc(game, state, npc_type, area.name)
