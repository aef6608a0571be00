"""The day cycle (optional dynamics): the day in seven periods, each with its own danger and gifts.

The paper's Remnant and Mark run their day this way (the reference's ``DayCycleStepRule``, bound by
``odyssey paper import``): the midnight hour is the most dangerous (enemies hit harder and ambush far more
often), the small hours stay fierce, the noon hour and the afternoon are calm, dawn leaves a few coins
where merchants trade, and in the evening a craft may give one unit more. The change of period is felt,
not explained: a line in the observation when a period begins, never its numbers.

It takes the place of the base ``day_night`` rhythm (a game has one or the other: both set the hour's
modifiers for the step) and, like it, sets ``state.modifiers`` for the rules that fight and ambush.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule
from odyssey_env.world import add, make_objects

if TYPE_CHECKING:
    from odyssey_env.game import Game

#: Each period: (name, first hour). A period lasts until the next one begins.
PERIODS: tuple[tuple[str, int], ...] = (
    ("midnight", 0),
    ("small_hours", 1),
    ("dawn", 6),
    ("morning", 7),
    ("noon", 12),
    ("afternoon", 13),
    ("evening", 18),
)
#: What an agent feels as a period begins (odyssey's words; the reference's are its own).
FELT: dict[str, str] = {
    "midnight": "The dark thickens. Whatever hunts out here is restless now.",
    "small_hours": "The night wears on, and the things in it have not grown any gentler.",
    "morning": "The light is full now; the land seems to breathe out.",
    "noon": "The sun stands high, and everything that fights seems slow and heavy with it.",
    "afternoon": "The heat stays, and with it a drowsy calm.",
    "evening": "The day cools; my hands feel sure and my thoughts clear.",
}


def period_of(hour: int) -> str:
    """The period an hour of the day (0-23) belongs to."""
    name = PERIODS[0][0]
    for period, first in PERIODS:
        if hour >= first:
            name = period
    return name


#: The period of each hour of the day, and the first hour of each period (looked up every step).
PERIOD_AT: tuple[str, ...] = tuple(period_of(h) for h in range(24))
FIRST_HOUR: dict[str, int] = dict(PERIODS)


@step_rule
class DayCycle(StepRule):
    name = "day_cycle"
    optional = True
    description = (
        "The day runs in periods: a fierce midnight hour and small hours, a calm noon and afternoon, coins at "
        "dawn where merchants trade, and evening crafts that may give one more."
    )

    @dataclass(frozen=True)
    class Params:
        midnight_ambush: float = 0.30  # added to the ambush odds in the midnight hour
        midnight_attack: float = 1.3  # enemy blows x this in the midnight hour
        small_hours_attack: float = 1.2  # 01:00-06:00
        noon_ambush: float = 0.05  # the ambush odds in the noon hour, whatever the area's level
        noon_attack: float = 0.8
        afternoon_attack: float = 0.8  # 13:00-18:00
        dawn_coins: tuple[int, int] = (1, 3)  # drawn per area with a merchant at the first step of 06:00
        evening_bonus: float = 0.25  # 18:00-24:00: the chance that a craft gives one unit more

        def __post_init__(self) -> None:
            low, high = self.dawn_coins
            if not 0 <= low <= high:
                raise ValueError(f"dawn_coins: {self.dawn_coins} must be (low, high) with 0 <= low <= high")
            if not 0.0 <= self.evening_bonus <= 1.0:
                raise ValueError(f"evening_bonus: {self.evening_bonus} is a chance, between 0 and 1")

    def start(self, engine: Engine) -> None:
        self.set_modifiers(engine)

    @functools.cached_property
    def _attack_by_hour(self) -> tuple[float, ...]:
        p = self.settings
        by_period = {
            "midnight": p.midnight_attack,
            "small_hours": p.small_hours_attack,
            "noon": p.noon_attack,
            "afternoon": p.afternoon_attack,
        }
        return tuple(by_period.get(period, 1.0) for period in PERIOD_AT)

    def attack_at(self, hour: int) -> float:
        """The enemy-attack modifier at an hour of the day (also what a planner forecasts with)."""
        return self._attack_by_hour[hour % 24]

    def set_modifiers(self, engine: Engine) -> None:
        p, mods = self.settings, engine.state.modifiers
        hour = engine.state.minute // 60 % 24
        mods["enemy_attack"], mods["ambush"] = self.attack_at(hour), 1.0
        mods["ambush_add"] = p.midnight_ambush if hour == 0 else 0.0
        if hour == 12:
            mods["ambush_set"] = p.noon_ambush
        else:
            mods.pop("ambush_set", None)

    def apply(self, engine: Engine) -> None:
        self.set_modifiers(engine)
        state = engine.state
        minute = state.minute % 1440
        per_step = engine.game.spec.game.minutes_per_step
        hour = minute // 60
        period = PERIOD_AT[hour]
        if minute % 60 < per_step and hour == FIRST_HOUR[period]:  # the first step of a period
            if period in FELT:
                for agent in state.agents.values():
                    if not agent.in_tutorial:
                        engine.say(agent.id, FELT[period])
            if period == "dawn":
                self._dawn_coins(engine)
        if period == "evening" and self.settings.evening_bonus > 0:
            self._evening_bonus(engine)

    def _dawn_coins(self, engine: Engine) -> None:
        game, state = engine.game, engine.state
        if game.currency is None:
            return
        low, high = self.settings.dawn_coins
        for area in state.areas.values():
            if not any(game.npcs[state.npcs[h].type].merchant for h in area.npcs):
                continue
            n = engine.rng.randint(low, high)
            if n <= 0:
                continue
            add(area.objects, game.currency, n)
            for agent in state.agents.values():
                if agent.area == area.name and not agent.in_tutorial:
                    engine.say(agent.id, f"With the dawn, {n} {game.currency} lie glinting on the ground.")
            engine.emit("dawn_coins", None, area=area.name, amount=n)

    def _evening_bonus(self, engine: Engine) -> None:
        game, state = engine.game, engine.state
        for ev in engine.events:
            if ev.kind != "object_crafted" or ev.agent is None or state.agents[ev.agent].in_tutorial:
                continue
            if engine.rng.random() >= self.settings.evening_bonus:
                continue
            name, area = ev.data["object"], state.areas[ev.data["area"]]
            for handle, k in make_objects(game, state, name, 1):
                add(area.objects, handle, k)
            engine.say(ev.agent, f"The evening's clear head pays off: one more {name} than I planned.")
            engine.emit("evening_bonus", ev.agent, object=name, area=area.name)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "time",
            "At what time of day are enemies most dangerous?",
            "in the hour after midnight",
            ("in the hour after noon", "at dawn", "in the evening"),
        )
        yield Fact(
            "time",
            "When are ambushes rarest?",
            "in the hour after noon",
            ("in the hour after midnight", "at dawn", "in the evening"),
        )
        if game.currency is not None:
            yield Fact(
                "time",
                "What appears at dawn where merchants trade?",
                f"a few {game.currency} on the ground",
                ("a new merchant", "a locked chest", "nothing"),
            )
