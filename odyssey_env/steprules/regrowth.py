"""The world refills and reclaims itself (optional dynamics), always within fixed bounds.

* ``enemy_respawn``: an area emptied of its enemies regains them slowly, after a quiet spell, one
  at a time and only while nobody watches; never beyond what it started with, and the world's count
  of common enemies never beyond its start (wanderers cannot make it grow).
* ``food_respawn``: food regrows where it grew at the start, up to the starting amount.
* ``forgotten_caches``: an area nobody has visited yet may gain a small cache of useful things; at
  most once per area, so exploring late is rewarded but nothing accumulates.
* ``carrion_scavengers``: loot that defeated enemies leave on the ground is eaten after a while by
  scavengers, who leave a few coins behind. Story items, keys and boss drops are never touched.

Each checks on a period tick or reacts to this step's events; none scans the world every step.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule
from odyssey_env.steprules.living import is_world_area, occupied, pick
from odyssey_env.world import add, make_objects, remove
from odyssey_env.worldgen import spawn_npc

if TYPE_CHECKING:
    from odyssey_env.game import Game


@step_rule
class EnemyRespawn(StepRule):
    name = "enemy_respawn"
    optional = True
    description = "Areas emptied of enemies slowly regain some of them, never beyond their starting numbers."

    @dataclass(frozen=True)
    class Params:
        period: int = 40
        delay: int = 80  # quiet steps after an area is emptied before enemies return
        chance: float = 0.5

    def start(self, engine: Engine) -> None:
        state, kinds = engine.state, engine.game.npcs
        start: dict[str, list[str]] = {}
        for name, area in state.areas.items():
            if not is_world_area(area):
                continue
            found = [
                state.npcs[h].type
                for h in area.npcs
                if state.npcs[h].origin == "world" and kinds[state.npcs[h].type].common_enemy
            ]
            if found:
                start[name] = found
        state.rule_data[self.name] = {"start": start, "total": sum(len(v) for v in start.values()), "emptied": {}}

    def apply(self, engine: Engine) -> None:
        state = engine.state
        if state.step % self.settings.period:
            return
        data = state.rule_data[self.name]
        kinds = engine.game.npcs
        live = sum(1 for n in state.npcs.values() if n.origin in ("world", "respawn") and kinds[n.type].common_enemy)
        here = occupied(state)
        emptied: dict[str, int] = data["emptied"]
        for name, types in data["start"].items():
            area = state.areas.get(name)
            if area is None:
                continue
            present = [state.npcs[h].type for h in area.npcs if kinds[state.npcs[h].type].common_enemy]
            if len(present) >= len(types):
                emptied.pop(name, None)
                continue
            if not present and name not in emptied:
                emptied[name] = state.step
            since = emptied.get(name)
            if since is None or state.step - since < self.settings.delay or name in here or live >= data["total"]:
                continue
            if engine.rng.random() >= self.settings.chance:
                continue
            missing = list(types)
            for t in present:
                if t in missing:
                    missing.remove(t)
            npc = spawn_npc(engine.game, state, kinds[pick(engine, missing)], name, origin="respawn")
            live += 1
            engine.emit("npc_respawned", None, npc=npc.handle, type=npc.type, area=name)
            if len(present) + 1 >= len(types):
                del emptied[name]

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "world",
            "Do enemies come back to an area I cleared?",
            "yes, slowly, but never more than were there at first",
            ("never", "immediately, twice as many", "only when I sleep"),
        )


@step_rule
class FoodRespawn(StepRule):
    name = "food_respawn"
    optional = True
    description = "Food regrows in the areas where it grew at the start, up to the starting amount."

    @dataclass(frozen=True)
    class Params:
        period: int = 30
        chance: float = 0.5

    def start(self, engine: Engine) -> None:
        game, state = engine.game, engine.state
        food: dict[str, dict[str, int]] = {}
        for name, area in state.areas.items():
            if not is_world_area(area):
                continue
            f = {h: n for h, n in area.objects.items() if h in game.objects and game.objects[h].category == "food"}
            if f:
                food[name] = f
        state.rule_data[self.name] = {"food": food}

    def apply(self, engine: Engine) -> None:
        state = engine.state
        if state.step % self.settings.period:
            return
        here = occupied(state)
        for name, foods in state.rule_data[self.name]["food"].items():
            if name in here or name not in state.areas:
                continue
            objects = state.areas[name].objects
            for food, n in foods.items():
                if objects.get(food, 0) < n and engine.rng.random() < self.settings.chance:
                    add(objects, food)
                    engine.emit("food_regrew", None, object=food, area=name)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "world",
            "Does food that I take grow back?",
            "yes, where it grew, up to the amount there was",
            ("never", "anywhere at random", "only if I plant it"),
        )


@step_rule
class ForgottenCaches(StepRule):
    name = "forgotten_caches"
    optional = True
    description = "An area nobody has visited yet may gain a small cache of useful objects (once per area)."

    @dataclass(frozen=True)
    class Params:
        period: int = 50
        chance: float = 0.4
        items: tuple[int, int] = (2, 3)
        objects: tuple[str, ...] = ()  # what caches may hold; empty: any scattered kind of fitting level
        coins: int = 0  # coins added to every cache

    def start(self, engine: Engine) -> None:
        unknown = [o for o in self.settings.objects if o not in engine.game.objects]
        if unknown:
            raise ValueError(f"forgotten_caches: unknown object(s) {', '.join(unknown)}")
        engine.state.rule_data[self.name] = {"cached": []}

    def apply(self, engine: Engine) -> None:
        state = engine.state
        if state.step % self.settings.period:
            return
        cached: list[str] = state.rule_data[self.name]["cached"]
        agents = list(state.agents.values())
        candidates = [
            name
            for name, area in state.areas.items()
            if is_world_area(area)
            and name != state.spawn
            and name not in cached
            and not any(name in a.visited or a.area == name for a in agents)
        ]
        if not candidates or engine.rng.random() >= self.settings.chance:
            return
        name = pick(engine, candidates)
        area = state.areas[name]
        game = engine.game
        if self.settings.objects:
            kinds = [game.objects[o] for o in self.settings.objects if game.objects[o].level <= area.level]
        else:
            kinds = [
                o
                for o in game.spec.objects
                if o.portable
                and o.spawn_weight > 0
                and o.level <= area.level
                and o.category not in ("quest", "currency", "key")
            ]
        if not kinds:
            return
        cached.append(name)
        chosen = engine.rng.choices(
            kinds, [max(o.spawn_weight, 0.1) for o in kinds], k=engine.rng.randint(*self.settings.items)
        )
        for t in chosen:
            for handle, k in make_objects(game, state, t.name, 1):
                add(area.objects, handle, k)
        if self.settings.coins and game.currency:
            add(area.objects, game.currency, self.settings.coins)
        engine.emit("cache_appeared", None, area=name, objects=[t.name for t in chosen])

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "world",
            "Where do forgotten caches of useful objects turn up?",
            "in areas nobody has visited yet",
            ("in the starting area", "next to merchants", "where I died"),
        )


@step_rule
class CarrionScavengers(StepRule):
    name = "carrion_scavengers"
    optional = True
    description = "Loot left on the ground by defeated enemies is eaten by scavengers after a while, leaving coins."

    @dataclass(frozen=True)
    class Params:
        delay: int = 25  # steps loot lies untouched before scavengers come (they wait while I am there)
        coin_ratio: float = 0.5  # coins left per unit of value eaten (rounded down)
        spared: tuple[str, ...] = ("quest", "key", "container", "writable", "currency")
        max_pending: int = 64

    def start(self, engine: Engine) -> None:
        engine.state.rule_data[self.name] = {"pending": []}

    def apply(self, engine: Engine) -> None:
        state, game = engine.state, engine.game
        pending: list = state.rule_data[self.name]["pending"]
        for ev in engine.events:
            if ev.kind != "npc_defeated" or ev.data.get("boss"):
                continue
            t = game.npcs[ev.data["type"]]
            if t.unique or ev.agent is None or state.agents[ev.agent].in_tutorial:
                continue
            loot = {o: n for o, n in t.drops.items() if game.objects[o].category not in self.settings.spared}
            if loot:
                pending.append([state.step + self.settings.delay, ev.data["area"], loot])
        if len(pending) > self.settings.max_pending:
            del pending[: len(pending) - self.settings.max_pending]
        if not pending or not any(entry[0] <= state.step for entry in pending):
            return
        here = occupied(state)
        keep = []
        for entry in pending:
            due, area_name, loot = entry
            if due > state.step:
                keep.append(entry)
                continue
            area = state.areas.get(area_name)
            if area is None:
                continue
            if area_name in here:
                entry[0] = state.step + 5  # scavengers keep their distance while someone is there
                keep.append(entry)
                continue
            coins, eaten = 0, {}
            for obj, n in loot.items():
                k = min(n, area.objects.get(obj, 0))
                if k:
                    remove(area.objects, obj, k)
                    eaten[obj] = k
                    coins += int(game.objects[obj].value * self.settings.coin_ratio) * k
            if coins and game.currency:
                add(area.objects, game.currency, coins)
            if eaten:
                engine.emit("loot_scavenged", None, area=area_name, eaten=eaten, coins=coins)
        pending[:] = keep

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "world",
            "What happens to loot I leave lying where an enemy fell?",
            "scavengers eat it after a while and leave a few coins",
            ("it stays forever", "it turns into an enemy", "a merchant collects it for me"),
        )
