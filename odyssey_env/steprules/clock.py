"""The day: enemies are fiercer in the midnight hour and weaker in the noon hour (paper §3.2).

Nothing announces it; agents must infer the pattern from how hard blows land and how often they are
ambushed. Other rules read the effect from ``state.modifiers``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule

if TYPE_CHECKING:
    from odyssey_env.game import Game


@step_rule
class DayNight(StepRule):
    name = "day_night"
    description = "Enemy attack and ambush odds follow the hour: strongest around midnight, weakest around noon."

    @dataclass(frozen=True)
    class Params:
        night_hour: int = 0
        night_attack: float = 1.5
        night_ambush: float = 2.0
        noon_hour: int = 12
        noon_attack: float = 0.5
        noon_ambush: float = 0.5

    def start(self, engine: Engine) -> None:
        self.apply(engine)

    def apply(self, engine: Engine) -> None:
        p, mods = self.settings, engine.state.modifiers
        hour = engine.state.minute // 60 % 24
        if hour == p.night_hour:
            mods["enemy_attack"], mods["ambush"] = p.night_attack, p.night_ambush
        elif hour == p.noon_hour:
            mods["enemy_attack"], mods["ambush"] = p.noon_attack, p.noon_ambush
        else:
            mods["enemy_attack"], mods["ambush"] = 1.0, 1.0

    def attack_at(self, hour: int) -> float:
        """The enemy-attack modifier at an hour of the day (what a planner forecasts with)."""
        p = self.settings
        return p.night_attack if hour == p.night_hour else p.noon_attack if hour == p.noon_hour else 1.0

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "time",
            "At what time of day are enemies strongest?",
            "around midnight",
            ("around noon", "at dawn", "at dusk"),
        )
        yield Fact(
            "time", "At what time of day are enemies weakest?", "around noon", ("around midnight", "at dawn", "at dusk")
        )
