"""Stochastic spawns and bounded respawns (the world changes, but never grows without limit).

* ``night_spawn``: as midnight strikes, an enemy may appear beside each agent outside the spawn area
  (paper §3.2: "spawning an NPC near the agent at midnight with a 50% chance"); at most ``max_alive``
  such enemies exist at once.
* ``respawn``: every ``period`` steps, food slowly grows back and areas that lost enemies may regain
  one of the kinds they started with, never beyond their starting numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule
from odyssey_env.steprules.living import is_world_area
from odyssey_env.worldgen import spawn_npc, spawnable_enemies

if TYPE_CHECKING:
    from odyssey_env.game import Game


@step_rule
class NightSpawn(StepRule):
    name = "night_spawn"
    description = "At midnight an enemy may appear beside an agent away from the spawn area."

    @dataclass(frozen=True)
    class Params:
        chance: float = 0.5
        max_alive: int = 4

    def apply(self, engine: Engine) -> None:
        state = engine.state
        if state.minute % 1440 >= engine.game.spec.game.minutes_per_step:
            return  # not the first step after midnight
        alive = sum(1 for npc in state.npcs.values() if npc.origin == "spawn")
        for agent in state.agents.values():
            if alive >= self.settings.max_alive or agent.in_tutorial or agent.area == state.spawn:
                continue
            area = state.areas[agent.area]
            if not is_world_area(area):
                continue  # the tutorial's rooms have no wildlife (expanded places do)
            kinds = spawnable_enemies(engine.game, area.level)
            if not kinds or engine.rng.random() >= self.settings.chance:
                continue
            t = kinds[engine.rng.randrange(len(kinds))]
            npc = spawn_npc(engine.game, state, t, area.name, origin="spawn")
            alive += 1
            engine.say(agent.id, f"Something stirs in the dark: {npc.handle} appears.")
            engine.emit("npc_spawned", agent.id, npc=npc.handle, type=t.name, area=area.name)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "time",
            "When do enemies sometimes appear out of nowhere?",
            "at midnight",
            ("at noon", "when I craft", "never"),
        )


@step_rule
class Respawn(StepRule):
    name = "respawn"
    description = "Food grows back and lost enemies return slowly, never beyond an area's starting numbers."

    @dataclass(frozen=True)
    class Params:
        period: int = 40
        enemy_chance: float = 0.5

    def start(self, engine: Engine) -> None:
        game, state = engine.game, engine.state
        food, enemies = {}, {}
        for name, area in state.areas.items():
            f = {h: n for h, n in area.objects.items() if h in game.objects and game.objects[h].category == "food"}
            if f:
                food[name] = f
            e = [
                state.npcs[h].type
                for h in area.npcs
                if game.npcs[state.npcs[h].type].hostile and not game.npcs[state.npcs[h].type].unique
            ]
            if e:
                enemies[name] = e
        state.rule_data[self.name] = {"food": food, "enemies": enemies}

    def apply(self, engine: Engine) -> None:
        state = engine.state
        if state.step % self.settings.period:
            return
        data = state.rule_data[self.name]
        occupied = {a.area for a in state.agents.values()}
        for name, foods in data["food"].items():
            objects = state.areas[name].objects
            for food, n in foods.items():
                if objects.get(food, 0) < n:
                    objects[food] = objects.get(food, 0) + 1
        for name, kinds in data["enemies"].items():
            if name in occupied:
                continue
            area = state.areas[name]
            present = [state.npcs[h].type for h in area.npcs if state.npcs[h].origin in ("world", "respawn")]
            missing = list(kinds)
            for kind in present:
                if kind in missing:
                    missing.remove(kind)
            if missing and engine.rng.random() < self.settings.enemy_chance:
                t = engine.game.npcs[missing[engine.rng.randrange(len(missing))]]
                spawn_npc(engine.game, state, t, name, origin="respawn")

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "world",
            "Does food that I take come back?",
            "yes, slowly, up to what was there",
            ("never", "immediately", "only if I pay a merchant"),
        )
