"""The world reclaims itself (optional dynamics), always within fixed bounds.

(Food and enemies come back through the engine's one ``respawn`` rule, ``spawning.py``.)

* ``forgotten_caches``: an area nobody has visited yet may gain a small cache of useful things; at
  most once per area, so exploring late is rewarded but nothing accumulates.
* ``carrion_scavengers``: loot that defeated enemies leave on the ground is eaten after a while by
  scavengers, who leave a few coins behind. Story items, keys and boss drops are never touched.

Each checks on a period tick or reacts to this step's events; none scans the world every step.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule
from odyssey_env.steprules.living import is_world_area, occupied, pick
from odyssey_env.world import add, make_objects, remove

if TYPE_CHECKING:
    from odyssey_env.game import Game


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
        pending: list[list[Any]] = state.rule_data[self.name]["pending"]
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
