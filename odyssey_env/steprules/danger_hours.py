"""Danger hours (optional dynamics): hours of the day, drawn per episode, when enemies are fiercer.

Besides the base midnight/noon rhythm, each episode draws a few hours from its seed in which enemies
hit harder and ambush more. Nothing announces them: an agent can only learn them from experience (or
from a rumor note), and they differ between episodes.
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
class DangerHours(StepRule):
    name = "danger_hours"
    optional = True
    description = "A few hours a day, drawn per episode and never announced, enemies hit harder and ambush more."

    @dataclass(frozen=True)
    class Params:
        count: int = 3
        attack: float = 1.4
        ambush: float = 2.0

        def __post_init__(self) -> None:
            if not 0 <= self.count <= 24:
                raise ValueError(f"count: {self.count} danger hours a day must lie between 0 and 24")

    def start(self, engine: Engine) -> None:
        hours = sorted(engine.rng.sample(range(24), min(self.settings.count, 24)))
        # Without day_night nobody resets the modifiers each step, so this rule must do it.
        alone = engine.rules.step_rule("day_night") is None and engine.rules.step_rule("day_cycle") is None
        engine.state.rule_data[self.name] = {"hours": hours, "alone": alone}
        self.apply(engine)

    def apply(self, engine: Engine) -> None:
        state = engine.state
        mods = state.modifiers
        data = state.rule_data[self.name]
        if data["alone"]:
            mods["enemy_attack"] = mods["ambush"] = 1.0
        if (state.minute // 60) % 24 in data["hours"]:
            mods["enemy_attack"] = mods.get("enemy_attack", 1.0) * self.settings.attack
            mods["ambush"] = mods.get("ambush", 1.0) * self.settings.ambush

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "time",
            "Are there hours of the day when enemies are unusually dangerous?",
            f"yes, {self.settings.count} hours a day, different in every world, that nothing announces",
            ("no, danger never changes", "only at noon", "only on the full moon"),
        )
