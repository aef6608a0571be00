"""The reference release's world layout and distribution, for games imported from it.

The games imported from AgentOdyssey 0.1.0 (``odyssey paper import``) keep the reference's way of
building a world from a seed, written here from its description in the reference's ``World.generate``
(facts, not code): what goes where and with which probabilities. It draws from odyssey's one seeded
RNG, so a seed gives the same world in any process, but not the reference's world for the same seed
(its five RNG streams and set iteration order are not reproduced; see docs/fidelity.md).

* **Graph** (``graph.mode = "agentodyssey"``): the areas of each place form a chain in shuffled order;
  the places form a chain in shuffled order, each link between a random area of one and of the next.
  A path inside a locked place is locked with probability 0.6; a link between an open and a locked
  place is always locked, one between two locked places with probability 0.5; the key is drawn from
  ``graph.lock_keys``.
* **Objects** (``placement.style = "agentodyssey"``): every area except the spawn draws ``k`` objects with
  replacement, ``k`` uniform in ``[min(2n, 2d), min(4n, 4d)]`` (``n`` candidates, ``d = 5 + max level -
  level``). Candidates and weights: objects restricted to the area without a recipe (0.8 at the area's
  level, 0.4 within one level, 0.1 otherwise), with a recipe (0.4 / 0.2 / 0.05), objects restricted
  nowhere without a recipe (0.03) and writables without stations (0.03 again), and keys and lockpicks
  (0.001). At most one unit of a station per area. Then every area gets coins with probability 0.5
  (1 to 2 x level). The spawn area holds exactly what the game lists there.
* **NPCs**: each unique NPC lives in a random area; each area then walks the non-unique types in order,
  placing one with probability ``0.6 + 0.4 (level - 1) / max level`` until ``uniform[floor(L/2),
  ceil(L/1.5)]`` enemies stand there. An instance's level is the area's (one more or less with
  probability 0.2 each; at level 1, one more with 0.2); its purse is 20 to 50 coins per level and it
  carries 1 to 2 x level of each of its type's objects (the reference draws 0 to 2 x level, but a draw of 0
  leaves the one its type's copy holds: ``NPC.create_instance`` overwrites a count only when the draw is
  above 0).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from odyssey_env.world import add, make_objects

if TYPE_CHECKING:
    from odyssey_env.content import NpcType, ObjectType
    from odyssey_env.game import Game
    from odyssey_env.state import Area, Npc, WorldState

__all__ = ["connect", "populate"]


def _sub(rng: random.Random) -> random.Random:
    """An independent stream for one stage, so that one stage's draws do not shift the next one's."""
    return random.Random(rng.getrandbits(64))


def connect(game: Game, state: WorldState, rng: random.Random, link: Callable[..., None]) -> None:
    """Lay out the paths (``link`` is :func:`odyssey_env.worldgen.link`, passed in: worldgen calls this module)."""
    draw = _sub(rng)
    keys = list(game.spec.graph.lock_keys)
    for c in game.spec.graph.connections:
        link(state, c.a, c.b, locked=c.locked, key=c.key, pickable=c.pickable)
    places = list(game.spec.places)
    for place in places:
        names = [a.name for a in place.areas]
        draw.shuffle(names)
        for a, b in itertools.pairwise(names):
            locked = bool(place.locked and keys and draw.random() < 0.6)
            key = draw.choice(keys) if locked else None
            link(state, a, b, locked=locked, key=key)
    draw.shuffle(places)
    for u, v in itertools.pairwise(places):
        a = draw.choice([x.name for x in u.areas])
        b = draw.choice([x.name for x in v.areas])
        if not u.locked and not v.locked:
            locked = False
        elif u.locked != v.locked:
            locked = bool(keys)
        else:
            locked = bool(keys) and draw.random() < 0.5
        link(state, a, b, locked=locked, key=draw.choice(keys) if locked else None)


def _level_near(draw: random.Random, level: int) -> int:
    if level > 1:
        return draw.choices([level - 1, level, level + 1], weights=[0.2, 0.6, 0.2])[0]
    return draw.choices([level, level + 1], weights=[0.8, 0.2])[0]


def _weight(o: ObjectType, level: int, near: tuple[float, float, float]) -> float:
    if o.level == level:
        return near[0]
    return near[1] if abs(o.level - level) <= 1 else near[2]


def populate(game: Game, state: WorldState, rng: random.Random, spawn_npc: Callable[..., Npc]) -> None:
    """Fill the areas (``spawn_npc`` is :func:`odyssey_env.worldgen.spawn_npc`, passed in as ``link`` is)."""
    objects_rng, coins_rng, npc_rng = _sub(rng), _sub(rng), _sub(rng)
    spawn = game.spec.spawn
    areas = [state.areas[a] for a in game.areas]
    spread = [a for a in areas if a.name != spawn]
    eligible = [
        o for o in game.spec.objects if o.portable and o.category != "quest" and not o.quest and o.spawn_weight > 0
    ]
    stations = [o for o in game.spec.objects if o.category == "station" and o.spawn_weight > 0 and not o.quest]
    levels = sorted({a.level for a in spread}) or [1]
    top = levels[-1]
    for area in spread:
        pool: list[ObjectType] = []
        weights: list[float] = []
        for o in eligible + stations:
            if o.areas and area.name in o.areas:
                pool.append(o)
                weights.append(_weight(o, area.level, (0.4, 0.2, 0.05) if o.recipe else (0.8, 0.4, 0.1)))
        for o in eligible:
            if not o.areas and not o.recipe:
                pool.append(o)
                weights.append(0.03)
        for o in eligible:
            if o.category == "writable" and not (o.recipe and o.recipe.stations):
                pool.append(o)
                weights.append(0.03)
        for o in eligible:
            if {"unlock", "lockpick"} & set(o.uses):
                pool.append(o)
                weights.append(0.001)
        if not pool:
            continue
        d = 5 + (top - area.level)
        k = objects_rng.randint(min(2 * len(pool), 2 * d), min(4 * len(pool), 4 * d))
        for o in objects_rng.choices(pool, weights=weights, k=k):
            if o.category == "station" and area.objects.get(o.name, 0) > 0:
                continue
            for handle, n in make_objects(game, state, o.name, 1):
                add(area.objects, handle, n)
    if game.currency is not None:
        for area in areas:
            if area.name != spawn and coins_rng.random() < 0.5:
                add(area.objects, game.currency, coins_rng.randint(1, 2 * area.level))
    _place_npcs(game, state, npc_rng, spread, top, spawn_npc)


def _place_npcs(
    game: Game, state: WorldState, draw: random.Random, spread: list[Area], top: int, spawn_npc: Callable[..., Npc]
) -> None:
    if not spread:
        return
    placed = {n for a in game.areas.values() for n in a.npcs}
    unique = [t for t in game.spec.npcs if t.unique and not t.quest and t.spawn_weight > 0 and t.name not in placed]
    common = [t for t in game.spec.npcs if not t.unique and not t.quest and t.spawn_weight > 0]
    for t in unique:
        home = draw.choice(spread)
        _spawn(game, state, draw, t, home, spawn_npc)
    for home in spread:
        enemies = draw.randint(math.floor(home.level / 2), math.ceil(home.level / 1.5))
        chance = 0.6 + (home.level - 1) * 0.4 / top
        for t in common:
            if draw.random() < 1.0 - chance:
                continue
            if enemies <= 0:
                break
            _spawn(game, state, draw, t, home, spawn_npc)
            if t.hostile:
                enemies -= 1


def _spawn(
    game: Game, state: WorldState, draw: random.Random, t: NpcType, home: Area, spawn_npc: Callable[..., Npc]
) -> None:
    level = _level_near(draw, home.level) if t.level_with_area else t.level
    npc = spawn_npc(game, state, t, home.name, level=level)
    if t.level_with_area:
        npc.coins = draw.randint(20 * level, 50 * level)
        carried = t.stock if t.merchant else t.drops
        npc.inventory = {}
        for obj, placeholder in carried.items():
            # the reference copies its type (holding one of each) and overwrites a count only when the draw
            # is above 0: a draw of 0 leaves the one, so every instance holds at least one of each
            n = draw.randint(0, 2 * level) or placeholder
            if n > 0:
                npc.inventory[obj] = n
