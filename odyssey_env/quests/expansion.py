"""Online expansion (paper A3.4): once every reachable area is explored, new places appear.

The default expander is procedural and seeded from the episode's RNG, so expansion never depends on
an API key and never makes a run irreproducible. It adds one or two places of two or three areas at
levels above the world's deepest, linked to the area furthest from the spawn, and populates them with
the game's own object types and stronger versions of its enemies. A game (or a generated one) may
use another expander by overriding this rule by name in its ``rules.py``.

Expansion content may also be written ahead of play as *packs* (:class:`ExpansionPack`: places, their
areas, new object and NPC types and what lies where) — the paper's LLM expander writes them
(:mod:`odyssey_eval.expansion`), a person may too. Packs are data, never code: :func:`with_packs` checks
them as a game's own content is checked (schema, names, references, the world checks of
``odyssey_env.game``) and returns the game with their types added (the world each seed generates is
unchanged: new types are placed only by their pack); the k-th expansion of a run then adds the k-th
pack, and the procedural expander takes over if there are fewer packs than expansions.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from odyssey_env import schema
from odyssey_env.checks.world import check_world
from odyssey_env.content import AreaSpec, Connection, NpcType, ObjectType, PlaceSpec
from odyssey_env.limits import LIMITS
from odyssey_env.rules import StepRule, step_rule
from odyssey_env.state import Area
from odyssey_env.world import add, breadth_first, make_objects
from odyssey_env.worldgen import link, spawn_npc, spawnable_enemies

if TYPE_CHECKING:
    import random

    from odyssey_env.engine import Engine
    from odyssey_env.game import Game

NAME = "expansion"
_SYLLABLES = (
    "vor",
    "ash",
    "mel",
    "dun",
    "keth",
    "rin",
    "sol",
    "bar",
    "ith",
    "gal",
    "mor",
    "tess",
    "und",
    "wyr",
    "cal",
    "fen",
    "oru",
    "zel",
    "quin",
    "hal",
)
_AREA_NOUNS = (
    "hollow",
    "reach",
    "spire",
    "vale",
    "crossing",
    "barrow",
    "terrace",
    "deep",
    "gallery",
    "yard",
    "fold",
    "scar",
)


class Expander(Protocol):
    def expand(self, engine: Engine) -> list[str]:
        """Add areas to ``engine.state`` and return their names."""


def reachable(engine: Engine) -> list[str]:
    """Areas connected to the spawn (locked paths included), nearest first (breadth first, stable).

    Locked ways count: the world is not "explored" while a locked part of it is still unseen.
    """
    return list(breadth_first(engine.state, engine.state.spawn))


class ProceduralExpander:
    def expand(self, engine: Engine) -> list[str]:
        spec, game, state, rng = engine.game.quest.expansion, engine.game, engine.state, engine.rng
        anchor = reachable(engine)[-1]  # furthest from the spawn
        level = max(a.level for a in state.areas.values()) + 1
        taken = set(state.areas) | set(game.objects) | set(game.npcs)
        created: list[str] = []
        previous = anchor
        for p in range(rng.randint(*spec.places)):
            place = self._word(rng).capitalize() + " " + _AREA_NOUNS[rng.randrange(len(_AREA_NOUNS))].capitalize()
            names = []
            for _ in range(rng.randint(*spec.areas_per_place)):
                name = self._word(rng) + "_" + _AREA_NOUNS[rng.randrange(len(_AREA_NOUNS))]
                while name in taken:
                    name = self._word(rng) + "_" + name
                taken.add(name)
                names.append(name)
                state.areas[name] = Area(
                    name=name,
                    place=place,
                    level=level + p,
                    description=f"A newly revealed part of {place}, strange and unmapped.",
                )
            link(state, previous, names[0])
            for a, b in itertools.pairwise(names):
                link(state, a, b)
            for name in names:
                self._populate(engine, state.areas[name])
            previous = names[-1]
            created += names
        return created

    @staticmethod
    def _word(rng: random.Random) -> str:
        return "".join(_SYLLABLES[rng.randrange(len(_SYLLABLES))] for _ in range(rng.randint(2, 3)))

    @staticmethod
    def _populate(engine: Engine, area: Area) -> None:
        game, state, rng = engine.game, engine.state, engine.rng
        objects = [o for o in game.spec.objects if o.portable and o.category != "quest" and o.spawn_weight > 0]
        if objects:
            weights = [o.spawn_weight * (0.6 ** max(0, area.level - o.level - 1)) for o in objects]
            for t in rng.choices(objects, weights, k=rng.randint(2, 4)):
                for handle, k in make_objects(game, state, t.name, 1):
                    add(area.objects, handle, k)
        enemies = spawnable_enemies(game)
        if enemies:
            for enemy in rng.choices(enemies, [n.spawn_weight for n in enemies], k=rng.randint(1, 2)):
                npc = spawn_npc(game, state, enemy, area.name, origin="expansion")
                factor = 1 + 0.25 * max(0, area.level - enemy.level)
                npc.max_hp = npc.hp = round(enemy.hp * factor)
                npc.attack = round(enemy.attack * factor)
                npc.defense = round(enemy.defense * factor)
                npc.level = area.level


# ----------------------------------------------------------------------------- packs
#: What a pack's new object types may be: things found and carried (no containers, writables, stations,
#: currency, keys or quest objects, whose rules the world's design fixes).
PACK_CATEGORIES = ("material", "tool", "weapon", "armor", "food", "misc")
PACK_ROLES = ("fighter", "villager")


@dataclass(frozen=True)
class PackArea:
    name: str
    description: str
    objects: dict[str, int] = field(default_factory=dict)  # placed on the ground when the area appears
    npcs: tuple[str, ...] = ()  # NPC types placed there (one each)


@dataclass(frozen=True)
class PackPlace:
    name: str
    description: str
    areas: tuple[PackArea, ...]


@dataclass(frozen=True)
class ExpansionPack:
    """One expansion's content: places (linked in order, the first to the area furthest from the spawn),
    and the new object and NPC types they hold."""

    places: tuple[PackPlace, ...]
    objects: tuple[ObjectType, ...] = ()
    npcs: tuple[NpcType, ...] = ()
    provenance: dict[str, Any] = field(default_factory=dict)  # who wrote it (not read by the engine)


def _pack_problems(game: Game, packs: Sequence[ExpansionPack]) -> list[schema.Problem]:
    """Everything wrong with ``packs`` for ``game``: the world checks of a game folder on the game's world
    with the packs' places and types added, then what a pack may hold."""
    out: list[schema.Problem] = []
    deepest = max(a.level for a in game.areas.values())
    places, objects, npcs = list(game.spec.places), list(game.spec.objects), list(game.spec.npcs)
    links = list(game.spec.graph.connections)
    for k, pack in enumerate(packs):
        chain = [game.spec.spawn, *(a.name for place in pack.places for a in place.areas)]  # reachable, as played
        links += [Connection(a, b) for a, b in itertools.pairwise(chain)]
        f = f"expansion pack {k}"
        if not pack.places or not all(p.areas for p in pack.places):
            out.append(schema.Problem(f, "places", "a pack needs at least one place, and each place an area"))
        for i, place in enumerate(pack.places):
            areas = tuple(
                AreaSpec(a.name, a.description, deepest + 1 + i, dict(a.objects), tuple(a.npcs), scatter=False)
                for a in place.areas
            )
            places.append(PlaceSpec(place.name, place.description, areas))
        for i, o in enumerate(pack.objects):
            if o.category not in PACK_CATEGORIES or o.recipe is not None or o.uses or o.named:
                kinds = ", ".join(PACK_CATEGORIES)
                out.append(
                    schema.Problem(f, f"objects[{i}]", f"a pack's object is a plain {kinds} (no recipe or uses)")
                )
        for i, n in enumerate(pack.npcs):
            if n.role not in PACK_ROLES or n.unique or n.stock:
                out.append(schema.Problem(f, f"npcs[{i}]", "a pack's NPC is a fighter or a villager, not unique"))
        objects += [dataclasses.replace(o, spawn_weight=0.0) for o in pack.objects]
        npcs += [dataclasses.replace(n, spawn_weight=0.0) for n in pack.npcs]
    graph = dataclasses.replace(game.spec.graph, connections=tuple(links))
    merged = dataclasses.replace(game.spec, places=tuple(places), objects=tuple(objects), npcs=tuple(npcs), graph=graph)
    out += [dataclasses.replace(p, file="expansion packs") for p in check_world(merged)]
    return out


def with_packs(game: Game, packs: Sequence[Mapping[str, Any] | ExpansionPack]) -> Game:
    """``game`` with expansion ``packs`` (plain data, as :class:`ExpansionPack`) checked and their types
    added; raises :class:`~odyssey_env.game.GameError` naming every problem."""
    from odyssey_env.game import GameError

    loaded = []
    problems: list[schema.Problem] = []
    for k, raw in enumerate(packs):
        if isinstance(raw, ExpansionPack):
            loaded.append(raw)
            continue
        try:
            loaded.append(schema.load(ExpansionPack, dict(raw), file=f"expansion pack {k}", limits=LIMITS))
        except schema.FormatError as exc:
            problems += exc.problems
    if not problems:
        problems = _pack_problems(game, loaded)
    if problems:
        raise GameError(problems)
    objects = dict(game.objects)
    npcs = dict(game.npcs)
    for pack in loaded:
        objects.update({o.name: dataclasses.replace(o, spawn_weight=0.0) for o in pack.objects})
        npcs.update({n.name: dataclasses.replace(n, spawn_weight=0.0) for n in pack.npcs})
    return dataclasses.replace(game, objects=objects, npcs=npcs, expansion_packs=tuple(loaded))


class PackExpander:
    """Adds the next written pack (see the module docstring)."""

    def expand(self, engine: Engine) -> list[str]:
        game, state = engine.game, engine.state
        pack = game.expansion_packs[state.rule_data[NAME]["expansions"]]
        anchor = reachable(engine)[-1]  # furthest from the spawn
        level = max(a.level for a in state.areas.values()) + 1
        created: list[str] = []
        previous = anchor
        for p, place in enumerate(pack.places):
            names = [a.name for a in place.areas]
            for a in place.areas:
                state.areas[a.name] = Area(name=a.name, place=place.name, level=level + p, description=a.description)
            link(state, previous, names[0])
            for a, b in itertools.pairwise(names):
                link(state, a, b)
            for a in place.areas:
                area = state.areas[a.name]
                for type_name, n in a.objects.items():
                    for handle, k in make_objects(game, state, type_name, n):
                        add(area.objects, handle, k)
                for type_name in a.npcs:
                    t = game.npcs[type_name]
                    npc = spawn_npc(game, state, t, area.name, origin="expansion")
                    npc.level = max(npc.level, area.level) if t.hostile else npc.level
            previous = names[-1]
            created += names
        return created


@step_rule
class ExpansionRule(StepRule):
    name = NAME
    description = "When every reachable area has been explored, new places of higher level appear."
    expander: Expander = ProceduralExpander()

    def active(self, game: Game) -> bool:
        return game.quest.expansion.enabled

    def start(self, engine: Engine) -> None:
        if self._enabled(engine):
            engine.state.rule_data[NAME] = {"expansions": 0}

    def apply(self, engine: Engine) -> None:
        if "area_entered" not in engine.kinds or not self._enabled(engine):  # the cheaper test first
            return
        if not any(ev.kind == "area_entered" and ev.data.get("first") for ev in engine.events):
            return  # exploring is the only way to finish exploring
        data = engine.state.rule_data[NAME]
        if data["expansions"] >= engine.game.quest.expansion.max_expansions:
            return
        area_names = reachable(engine)
        for agent in engine.state.agents.values():
            if agent.in_tutorial or any(a not in agent.visited for a in area_names):
                continue
            packs = engine.game.expansion_packs
            expander = PackExpander() if data["expansions"] < len(packs) else self.expander
            created = expander.expand(engine)
            data["expansions"] += 1
            engine.say(agent.id, f"The world shifts: new ways open toward {', '.join(created)}.")
            engine.emit("world_expanded", agent.id, areas=created)
            return

    @staticmethod
    def _enabled(engine: Engine) -> bool:
        return engine.game.quest.expansion.enabled and engine.options.get("expansion", True)
