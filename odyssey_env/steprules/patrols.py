"""Creatures on the move: wandering patrols, and noise that draws listeners (optional dynamics).

* ``wandering_patrols``: common enemies and non-unique merchants drift to neighbouring areas, so a
  map the agent remembers is a map of *where things were*; re-checking is part of the game.
* ``noise``: fighting, crafting, throwing and failed lockpicks make noise in an area. Noise fades
  with time; when it piles up, an idle enemy from next door comes to see (or, failing one, a scout
  appears), which then may ambush. Loud work has a cost that the agent must learn to budget.

Both are bounded: patrols create nothing, and noise scouts are capped in number.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule
from odyssey_env.state import WorldState
from odyssey_env.steprules.living import FIXED_ORIGINS, is_world_area, move_npc, pick, roams, tell
from odyssey_env.weakcache import IdentityCache
from odyssey_env.worldgen import spawn_npc, spawnable_enemies

if TYPE_CHECKING:
    from odyssey_env.game import Game

NOISE = "noise"
#: Event kinds that make noise, and the ``Noise.Params`` field that says how much.
_SOURCES = {
    "object_crafted": "craft",
    "npc_attacked": "attack",
    "object_thrown": "throw",
    "lockpick_failed": "lockpick",
}


def noise_at(state: WorldState, area: str) -> int:
    """Current noise in ``area`` (0 when the ``noise`` rule is not active in this game)."""
    data = state.rule_data.get(NOISE)
    return data["levels"].get(area, 0) if data else 0


def _roaming_types(game: Game) -> frozenset[str]:
    """The NPC types that may wander (common enemies, travelling merchants): ``living.roams`` of each type,
    worked out once per game."""
    return frozenset(name for name, t in game.npcs.items() if t.common_enemy or (t.merchant and not t.unique))


_roamers: IdentityCache[Game, frozenset[str]] = IdentityCache(_roaming_types)


@step_rule
class WanderingPatrols(StepRule):
    name = "wandering_patrols"
    optional = True
    description = "Every so often, free common enemies and travelling merchants walk to a neighbouring area."

    @dataclass(frozen=True)
    class Params:
        period: int = 12  # steps between patrol moves
        chance: float = 0.3  # chance that a free wanderer moves on a patrol tick
        max_level_drop: int = 1  # enemies do not wander into areas more than this below their level
        avoid_spawn: bool = True  # enemies never wander into the spawn area
        # the paper's Remnant and Mark (their reference's WanderingPatrolsStepRule): a wanderer walks only into
        # an area holding fewer non-unique NPCs than its level (so no area fills up)
        room_by_level: bool = False

    def apply(self, engine: Engine) -> None:
        state = engine.state
        if state.step % self.settings.period:
            return
        areas, kinds, rng, chance = state.areas, engine.game.npcs, engine.rng, self.settings.chance
        room = self.settings.room_by_level
        known = _roamers.entries.get(id(engine.game))  # the cache read inline: asked of every NPC each tick
        roamers = known[1] if known is not None else _roamers(engine.game)
        for npc in list(state.npcs.values()):
            if npc.engaged is not None or npc.origin in FIXED_ORIGINS:
                continue
            if npc.type not in roamers or rng.random() >= chance:
                continue  # the same test as living.roams, of the type: this loop is the rule's whole cost
            t = kinds[npc.type]
            hostile = t.hostile
            options = []
            for name, ex in areas[npc.area].exits.items():
                there = areas[name]
                if ex.locked or not is_world_area(there):
                    continue
                if hostile and (
                    (self.settings.avoid_spawn and name == state.spawn)
                    or there.level < npc.level - self.settings.max_level_drop
                ):
                    continue
                if room and sum(not kinds[state.npcs[h].type].unique for h in there.npcs) >= there.level:
                    continue
                options.append(name)
            if options:
                to = pick(engine, options)
                frm = npc.area
                move_npc(engine, npc, to)
                engine.emit("npc_wandered", None, npc=npc.handle, type=npc.type, frm=frm, to=to)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "world",
            "Do creatures and travelling merchants stay where I first saw them?",
            "no, common ones wander between neighbouring areas",
            ("yes, always", "only at night", "only bosses move"),
        )
        if self.settings.avoid_spawn:
            yield Fact(
                "world",
                "Which area do wandering enemies never walk into?",
                "the area where I start",
                ("the deepest area", "areas with merchants", "none; they go anywhere"),
            )


@step_rule
class Noise(StepRule):
    name = NOISE
    optional = True
    description = "Fighting, crafting and failed lockpicks make noise; enough noise draws an enemy to the area."

    @dataclass(frozen=True)
    class Params:
        craft: int = 2
        attack: int = 1
        throw: int = 1
        lockpick: int = 3
        threshold: int = 6  # noise that draws a listener
        cap: int = 12
        fade_period: int = 6  # every this many steps, each noisy area quiets by one
        draw_chance: float = 0.7  # chance that reaching the threshold draws someone
        max_scouts: int = 3  # scouts alive at once (summoned when no neighbour can come)

    def start(self, engine: Engine) -> None:
        engine.state.rule_data[self.name] = {"levels": {}}

    def apply(self, engine: Engine) -> None:
        state = engine.state
        levels: dict[str, int] = state.rule_data[self.name]["levels"]
        if levels and state.step % self.settings.fade_period == 0:
            for area in list(levels):
                if levels[area] <= 1:
                    del levels[area]
                else:
                    levels[area] -= 1
        for ev in engine.events:
            source = _SOURCES.get(ev.kind)
            if source is None or ev.agent is None:
                continue
            agent = state.agents[ev.agent]
            if agent.in_tutorial:
                continue
            area = ev.data.get("area", agent.area)
            if area not in state.areas:
                continue
            level = min(self.settings.cap, levels.get(area, 0) + getattr(self.settings, source))
            levels[area] = level
            if level >= self.settings.threshold:
                levels[area] = level // 2
                if engine.rng.random() < self.settings.draw_chance:
                    self._draw(engine, area)

    def _draw(self, engine: Engine, area_name: str) -> None:
        state, kinds = engine.state, engine.game.npcs
        if area_name == state.spawn:
            return  # the spawn area stays a refuge: noise there draws nobody
        area = state.areas[area_name]
        listeners = []
        for name, ex in area.exits.items():
            if ex.locked or not is_world_area(state.areas[name]):
                continue
            for handle in state.areas[name].npcs:
                npc = state.npcs[handle]
                if roams(engine, npc) and kinds[npc.type].hostile:
                    listeners.append(npc)
        if listeners:
            npc = pick(engine, listeners)
            frm = npc.area
            move_npc(engine, npc, area_name)
            tell(engine, area_name, f"The noise has carried: {npc.handle} comes to look.")
            engine.emit("noise_drew", None, npc=npc.handle, type=npc.type, area=area_name, frm=frm)
            return
        scouts = sum(1 for n in state.npcs.values() if n.origin == "noise")
        kinds_here = spawnable_enemies(engine.game, area.level)
        if scouts >= self.settings.max_scouts or not kinds_here:
            return
        npc = spawn_npc(engine.game, state, pick(engine, kinds_here), area_name, origin="noise")
        tell(engine, area_name, f"Drawn by the noise, {npc.handle} creeps in.")
        engine.emit("noise_drew", None, npc=npc.handle, type=npc.type, area=area_name, frm=None)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "world",
            "What can happen when I fight or craft a lot in one area?",
            "the noise draws an enemy to the area",
            ("merchants lower their prices", "nothing", "the area collapses"),
        )
        loudness = {
            "a failed lockpick": self.settings.lockpick,
            "crafting": self.settings.craft,
            "a blow in a fight": self.settings.attack,
        }
        loudest = max(loudness, key=loudness.__getitem__)
        if list(loudness.values()).count(loudness[loudest]) == 1:
            others = tuple(k for k in loudness if k != loudest)
            yield Fact("world", "Which of these makes the most noise?", loudest, (*others, "talking"))
