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
* **Objects** (``placement.style = "agentodyssey"``): every area except the spawn first gets, where the game
  asks for it (``placement.guarantee``: Base, Metropolis, Quarantine, Robot Kingdom and Saltglass, not Mark nor
  Remnant), each material that lists the area among its areas: ``max(1, level)`` units of one without a recipe,
  one unit of one with a recipe. Then it draws ``k`` objects with replacement, ``k`` uniform in ``[min(a n, a
  d), min(b n, b d)]`` (whole numbers rounded down; ``n`` candidates, ``d = 5 + max level - level``, ``(a, b) =
  placement.draws``: ``(2, 4)``, in Mark ``(2.5, 5)``). Candidates and weights: objects restricted to the area
  without a recipe (0.8 at the area's level, 0.4 within one level, 0.1 otherwise), with a recipe (0.4 / 0.2 /
  0.05), objects restricted nowhere without a recipe (0.03) and writables without stations (0.03 again), and
  keys and lockpicks (0.001). At most one unit of a station per area. Then every area gets coins with
  probability 0.5 (1 to 2 x level). The spawn area holds exactly what the game lists there.
* **NPCs**: each unique NPC lives in a random area; each area then walks the non-unique types in order,
  placing one with probability ``0.6 + 0.4 (level - 1) / max level`` until an enemy count drawn
  uniformly between the game's bounds for the level (``placement.enemies_per_level``, read from each
  reference game's own ``_assign_npcs_to_areas``: Remnant ``[floor(L/2), ceil(L/1.5)]``, Mark ``[1, L]``,
  the other five ``[floor(L/2), L]``) stand there. An instance's level is the area's (one more or less with
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

from odyssey_env.world import add, make_objects, type_of

if TYPE_CHECKING:
    from odyssey_env.content import NpcType, ObjectType
    from odyssey_env.game import Game
    from odyssey_env.state import Area, Npc, WorldState

__all__ = ["REDRAWS", "connect", "opens_up", "populate"]


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
    place = game.spec.placement
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
        if place.guarantee:
            for o in pool:
                if o.areas and area.name in o.areas:
                    for handle, n in make_objects(game, state, o.name, 1 if o.recipe else max(1, area.level)):
                        add(area.objects, handle, n)
        d = 5 + (top - area.level)
        lo, hi = place.draws
        k = objects_rng.randint(min(int(len(pool) * lo), int(d * lo)), min(int(len(pool) * hi), int(d * hi)))
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


def _enemy_bounds(game: Game, level: int) -> tuple[int, int]:
    """The bounds of an area's enemy count: the game's own (``placement.enemies_per_level``), else Remnant's."""
    table = game.spec.placement.enemies_per_level
    if 1 <= level <= len(table):
        low, high = table[level - 1]
        return low, high
    return math.floor(level / 2), math.ceil(level / 1.5)


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
        enemies = draw.randint(*_enemy_bounds(game, home.level))
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


#: How often a world that :func:`opens_up` refuses is drawn again before the first draw is kept.
REDRAWS = 20


def opens_up(game: Game, state: WorldState) -> bool:
    """Whether every area joined to the spawn can be reached, each locked way opened with what lies before it.

    The reference's random scatter can leave a world whose next locked way has no key anywhere in front of
    it (the paper's Mark: its first key opens the armory, the second is cut from a copper bar that some
    draws put nowhere before the market's lock): such a world cannot be won, and the worlds are drawn again.
    The reckoning is generous, so that it refuses only worlds that no play can open: what lies on the
    ground, what any NPC there holds (bought, taken, looted), what those give taken apart (where the game
    has ``disassemble``), what those make by their recipes (stations before it, or made), a lockpick opens
    every lock that can be picked and is never used up; only keys are counted, one spent per lock (as
    ``enter`` spends them), and every order of opening the locks is tried (which lock a key is spent on
    matters). A search longer than :data:`_SEARCH` states gives the world the benefit of the doubt.
    """
    joined = _joined(state, state.spawn)
    salvage = "disassemble" in game.rules.actions
    Node = tuple[frozenset[str], tuple[tuple[str, int], ...]]  # (region, keys spent by type)
    seen: set[Node] = set()
    todo: list[Node] = [(frozenset(_joined(state, state.spawn, locked=False)), ())]
    while todo:
        region, spent_items = todo.pop()
        if region >= joined:
            return True
        if (region, spent_items) in seen:
            continue
        seen.add((region, spent_items))
        if len(seen) > _SEARCH:
            return True
        spent: dict[str, int] = dict(spent_items)
        have = _holdings(game, state, region, salvage)
        memo: dict[str, float] = {}
        picks = any("lockpick" in o.uses and _units(game, o.name, have, memo, set()) >= 1 for o in game.spec.objects)
        for a in sorted(region):
            for b, ex in state.areas[a].exits.items():
                if b in region or not ex.locked:
                    continue
                grown = region | _joined(state, b, locked=False)
                if ex.pickable and picks:
                    todo.append((grown, spent_items))
                elif ex.key is not None and _units(game, ex.key, have, memo, set()) - spent.get(ex.key, 0) >= 1:
                    more = {**spent, ex.key: spent.get(ex.key, 0) + 1}
                    todo.append((grown, tuple(sorted(more.items()))))
    return False


#: How many (region, keys spent) states :func:`opens_up` looks at before it stops refusing.
_SEARCH = 2_000


def _joined(state: WorldState, start: str, *, locked: bool = True) -> set[str]:
    """The areas reached from ``start`` over paths (``locked``: locked ones too)."""
    seen, todo = {start}, [start]
    while todo:
        for b, ex in state.areas[todo.pop()].exits.items():
            if b not in seen and (locked or not ex.locked):
                seen.add(b)
                todo.append(b)
    return seen


def _holdings(game: Game, state: WorldState, region: frozenset[str], salvage: bool) -> dict[str, int]:
    have: dict[str, int] = {}
    for a in region:
        area = state.areas[a]
        for handle, n in area.objects.items():
            t = type_of(state, handle)
            have[t] = have.get(t, 0) + n
        for h in area.npcs:
            for obj, n in state.npcs[h].inventory.items():
                t = type_of(state, obj)
                have[t] = have.get(t, 0) + n
    if salvage:  # what lies or is held there, taken apart (once: what it gives is not taken apart again)
        for kind, n in list(have.items()):
            o = game.objects.get(kind)
            # (not keys: a key taken apart gives at most the one key back, which it already counts as)
            if o is not None and o.recipe and o.salvageable and o.recipe.yields == 1 and "unlock" not in o.uses:
                for part, k in o.recipe.salvage().items():
                    have[part] = have.get(part, 0) + n * k
    return have


def _units(game: Game, kind: str, have: dict[str, int], memo: dict[str, float], busy: set[str]) -> float:
    """Units of ``kind`` to be had: lying or held before the lock, or made of such (each recipe alone)."""
    if kind in memo:
        return memo[kind]
    n = float(have.get(kind, 0))
    o = game.objects.get(kind)
    if o is not None and o.recipe is not None and kind not in busy:
        busy = busy | {kind}
        stations = all(have.get(s, 0) > 0 or _units(game, s, have, memo, busy) >= 1 for s in o.recipe.stations)
        if stations and o.recipe.ingredients:
            n += o.recipe.yields * min(
                math.floor(_units(game, i, have, memo, busy) / float(k)) for i, k in o.recipe.ingredients.items()
            )
    memo[kind] = n
    return n
