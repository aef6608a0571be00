"""Stochastic spawns and bounded respawns (the world changes, but never grows without limit).

* ``night_spawn``: as midnight strikes, an enemy may appear beside each agent outside the spawn area
  (paper §3.2: "spawning an NPC near the agent at midnight with a 50% chance"); at most ``max_alive``
  such enemies exist at once.
* ``respawn``: food slowly grows back and areas that lost enemies regain them, never beyond their
  starting numbers. One rule for every game; its parameters choose how eager the world is (each
  tick or only once an area is emptied, kind by kind or by headcount, watched or not).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule
from odyssey_env.steprules.living import chance, is_world_area, occupied, pick, tell
from odyssey_env.world import add
from odyssey_env.worldgen import spawn_npc, spawnable_enemies

if TYPE_CHECKING:
    from odyssey_env.game import Game

#: Origins of the world's own NPCs: placed at the start, or respawned in their place.
RESIDENT = ("world", "respawn")

#: ``respawn`` parameters for a quieter world, each for one half of the rule (Quiet Bell and Tallowmere
#: use both; the procedural generator offers them as choices of their own): enemies come back only to an
#: area emptied of them, after a quiet spell, one at a time while nobody watches and never beyond the
#: world's starting number; food regrows by chance, where nobody stands, every 30 steps.
QUIET_ENEMIES: dict[str, object] = {"refill": "headcount", "emptied_delay": 80, "world_cap": True}
QUIET_FOOD: dict[str, object] = {"food_period": 30, "food_chance": 0.5, "food_unwatched": True}


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
            t = pick(engine, kinds)
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
    """The world's one respawn rule: food and enemies come back where they were at the start, and never
    beyond it. Its parameters choose how: the engine's default refills each area kind by kind on every
    tick; a game that wants a quieter world (Quiet Bell, Tallowmere) waits until an area is emptied,
    then refills its headcount slowly while nobody watches, capped for the whole world."""

    name = "respawn"
    description = "Food grows back and lost enemies return slowly, never beyond an area's starting numbers."

    @dataclass(frozen=True)
    class Params:
        enemy_period: int = 40  # steps between the enemies' ticks
        enemy_chance: float = 0.5  # per area short of enemies and tick: one comes back (0: enemies never do)
        # What an area is refilled to. residents: each enemy it started with, kind by kind, counting only
        # the world's own (placed at the start or respawned); headcount: as many common enemies as it
        # started with, counting any there (night spawns, noise scouts, wanderers).
        refill: Literal["residents", "headcount"] = "residents"
        # None: an area short of enemies may regain one on any tick; a number: only once it has been
        # emptied of them, that many steps later (then until it is full again).
        emptied_delay: int | None = None
        world_cap: bool = False  # never more of the world's own common enemies alive than at the start
        food_period: int = 40  # steps between the food's ticks
        food_chance: float = 1.0  # per kind of food short and tick: one unit grows back (0: food never does)
        food_unwatched: bool = False  # food grows back only where nobody stands
        # The paper's Remnant and Mark (their reference's EnemyRespawnStepRule): instead of refilling areas,
        # a wave every so many steps (drawn in this range) puts one common enemy, of a kind drawn from all of
        # them, at the area's level, into each of 1 to ``wave_areas`` areas that have no enemy (never the
        # spawn), watched or not. None: no waves (the refill above).
        waves: tuple[int, int] | None = None
        wave_areas: int = 3

    def start(self, engine: Engine) -> None:
        game, state = engine.game, engine.state
        food: dict[str, dict[str, int]] = {}
        enemies: dict[str, list[str]] = {}
        for name, area in state.areas.items():
            if not is_world_area(area):
                continue
            f = {h: n for h, n in area.objects.items() if h in game.objects and game.objects[h].category == "food"}
            if f:
                food[name] = f
            e = [
                state.npcs[h].type
                for h in area.npcs
                if state.npcs[h].origin == "world" and game.npcs[state.npcs[h].type].common_enemy
            ]
            if e:
                enemies[name] = e
        total = sum(len(kinds) for kinds in enemies.values())
        state.rule_data[self.name] = {"food": food, "enemies": enemies, "total": total, "emptied": {}}

    def apply(self, engine: Engine) -> None:
        step, p = engine.state.step, self.settings
        if p.waves is not None:
            if p.enemy_chance:
                self._wave(engine)
        elif p.enemy_chance and not step % p.enemy_period:
            self._enemies(engine)
        if p.food_chance and not step % p.food_period:
            self._food(engine)

    def _enemies(self, engine: Engine) -> None:
        state, p = engine.state, self.settings
        data = state.rule_data[self.name]
        kinds = engine.game.npcs
        headcount = p.refill == "headcount"
        live = 0
        if p.world_cap:
            live = sum(1 for n in state.npcs.values() if n.origin in RESIDENT and kinds[n.type].common_enemy)
        here = occupied(state)
        emptied: dict[str, int] = data["emptied"]
        for name, types in data["enemies"].items():
            area = state.areas.get(name)
            if area is None:
                continue
            npcs = [state.npcs[h] for h in area.npcs]
            if headcount:
                present = [n.type for n in npcs if kinds[n.type].common_enemy]
            else:
                present = [n.type for n in npcs if n.origin in RESIDENT]
            missing = list(types)
            for t in present:
                if t in missing:
                    missing.remove(t)
            full = len(present) >= len(types) if headcount else not missing
            if p.emptied_delay is not None:
                if full:
                    emptied.pop(name, None)
                    continue
                if not present and name not in emptied:
                    emptied[name] = state.step
                since = emptied.get(name)
                if since is None or state.step - since < p.emptied_delay:
                    continue
            if full or name in here or (p.world_cap and live >= data["total"]):
                continue
            if not chance(engine, p.enemy_chance):
                continue
            npc = spawn_npc(engine.game, state, kinds[pick(engine, missing)], name, origin="respawn")
            live += 1
            engine.emit("npc_respawned", None, npc=npc.handle, type=npc.type, area=name)
            if p.emptied_delay is not None and (len(present) + 1 >= len(types) if headcount else len(missing) == 1):
                del emptied[name]

    def _wave(self, engine: Engine) -> None:
        """The reference's enemy waves: bounded by areas, not by numbers (an area that has an enemy gets none,
        and wanderers leaving one free it for the next wave)."""
        state, p = engine.state, self.settings
        assert p.waves is not None
        if any(agent.in_tutorial for agent in state.agents.values()):
            return  # the reference's waves wait for the tutorial to end, and only then draw the first
        data = state.rule_data[self.name]
        if "next_wave" not in data:
            data["next_wave"] = state.step + engine.rng.randint(*p.waves)
        if state.step < data["next_wave"]:
            return
        data["next_wave"] = state.step + engine.rng.randint(*p.waves)
        kinds = engine.game.npcs
        common = [t for t in engine.game.spec.npcs if t.common_enemy and not t.quest]
        free = [
            name
            for name, area in state.areas.items()
            if name != state.spawn
            and is_world_area(area)
            and not any(kinds[state.npcs[h].type].hostile for h in area.npcs)
        ]
        if not common or not free:
            return
        engine.rng.shuffle(free)
        for name in free[: engine.rng.randint(1, min(p.wave_areas, len(free)))]:
            npc = spawn_npc(engine.game, state, pick(engine, common), name, origin="respawn")
            tell(engine, name, f"{npc.handle} prowls into the area.")
            engine.emit("npc_respawned", None, npc=npc.handle, type=npc.type, area=name)

    def _food(self, engine: Engine) -> None:
        state, p = engine.state, self.settings
        here = occupied(state) if p.food_unwatched else ()
        for name, foods in state.rule_data[self.name]["food"].items():
            area = state.areas.get(name)
            if area is None or name in here:
                continue
            objects = area.objects
            for food, n in foods.items():
                if objects.get(food, 0) < n and chance(engine, p.food_chance):
                    add(objects, food)
                    engine.emit("food_regrew", None, object=food, area=name)

    def facts(self, game: Game) -> Iterable[Fact]:
        if self.settings.enemy_chance and self.settings.waves is not None:
            yield Fact(
                "world",
                "Do enemies come back to an area I cleared?",
                "yes, every so often a new one prowls into areas that have none",
                ("never", "only where they were at first", "only when I sleep"),
            )
        elif self.settings.enemy_chance:
            yield Fact(
                "world",
                "Do enemies come back to an area I cleared?",
                "yes, slowly, but never more than were there at first",
                ("never", "immediately, twice as many", "only when I sleep"),
            )
        if self.settings.food_chance:
            yield Fact(
                "world",
                "Does food that I take grow back?",
                "yes, where it grew, up to the amount there was",
                ("never", "anywhere at random", "only if I plant it"),
            )
