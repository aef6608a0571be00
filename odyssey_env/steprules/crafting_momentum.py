"""Crafting momentum (optional dynamics): crafting again soon in the same area refunds a few coins.

A working rhythm at one station pays: each craft after the first, within a few steps and in the same
area, gives back a few coins, so planning a batch of crafts at one station pays off.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule
from odyssey_env.world import give

if TYPE_CHECKING:
    from odyssey_env.game import Game


@step_rule
class CraftingMomentum(StepRule):
    name = "crafting_momentum"
    optional = True
    description = "Crafting again within a few steps in the same area refunds a few coins per craft."

    @dataclass(frozen=True)
    class Params:
        window: int = 5  # steps within which the next craft keeps the rhythm
        max_refund: int = 2  # coins per crafted unit, drawn from 1..max_refund
        cap: int = 4  # most coins refunded for one craft command

        def __post_init__(self) -> None:
            if self.max_refund < 1:
                raise ValueError(f"max_refund: {self.max_refund} must be at least 1 (refunds are drawn from 1..max)")

    def start(self, engine: Engine) -> None:
        engine.state.rule_data[self.name] = {}

    def apply(self, engine: Engine) -> None:
        game, state = engine.game, engine.state
        if game.currency is None:
            return
        for ev in engine.events:
            if ev.kind != "object_crafted" or ev.agent is None:
                continue
            agent = state.agents[ev.agent]
            if agent.in_tutorial:
                continue
            streaks = state.rule_data[self.name]
            last = streaks.get(agent.id)
            here = ev.data["area"]
            rhythm = last is not None and last["area"] == here and state.step - last["step"] <= self.settings.window
            streak = last["streak"] + 1 if rhythm else 1
            streaks[agent.id] = {"step": state.step, "area": here, "streak": streak}
            if streak < 2:
                continue
            coins = min(
                self.settings.cap,
                sum(
                    engine.rng.randint(1, self.settings.max_refund)
                    for _ in range(min(ev.data.get("amount", 1), self.settings.cap))
                ),
            )
            where = give(game, state, agent, game.currency, coins)
            engine.say(agent.id, f"Working in a steady rhythm, I waste less: {coins} {game.currency} saved ({where}).")
            engine.emit("craft_momentum", agent.id, coins=coins, streak=streak, area=here)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "crafting",
            "What do I gain by crafting several times in a row in the same area?",
            "a few coins back for each craft after the first",
            ("nothing", "double the output", "experience only"),
        )
