"""Online expansion (paper A3.4): once every reachable area is explored, new places appear.

The default expander is procedural and seeded from the episode's RNG, so expansion never depends on
an API key and never makes a run irreproducible. It adds one or two places of two or three areas at
levels above the world's deepest, linked to the area furthest from the spawn, and populates them with
the game's own object types and stronger versions of its enemies. A game (or a generated one) may
use another expander by overriding this rule by name in its ``rules.py``.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Protocol

from odyssey_env.rules import StepRule, step_rule
from odyssey_env.state import Area
from odyssey_env.world import add, breadth_first, make_objects
from odyssey_env.worldgen import link, spawn_npc, spawnable_enemies

if TYPE_CHECKING:
    from odyssey_env.engine import Engine

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
    def _word(rng) -> str:
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
            for t in rng.choices(enemies, [n.spawn_weight for n in enemies], k=rng.randint(1, 2)):
                npc = spawn_npc(game, state, t, area.name, origin="expansion")
                factor = 1 + 0.25 * max(0, area.level - t.level)
                npc.max_hp = npc.hp = round(t.hp * factor)
                npc.attack = round(t.attack * factor)
                npc.defense = round(t.defense * factor)
                npc.level = area.level


@step_rule
class ExpansionRule(StepRule):
    name = NAME
    description = "When every reachable area has been explored, new places of higher level appear."
    expander: Expander = ProceduralExpander()

    def active(self, game) -> bool:
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
            created = self.expander.expand(engine)
            data["expansions"] += 1
            engine.say(agent.id, f"The world shifts: new ways open toward {', '.join(created)}.")
            engine.emit("world_expanded", agent.id, areas=created)
            return

    @staticmethod
    def _enabled(engine: Engine) -> bool:
        return engine.game.quest.expansion.enabled and engine.options.get("expansion", True)
