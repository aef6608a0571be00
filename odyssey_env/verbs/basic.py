"""Waiting and defending: the verbs that always apply."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from odyssey_env.rules import ActionRule, Fact, action_rule
from odyssey_env.turn import Turn

if TYPE_CHECKING:
    from odyssey_env.game import Game


@action_rule
class Wait(ActionRule):
    verb = "wait"
    description = "Let time pass; catching my breath restores all stamina."
    depends_on = ()

    def apply(self, turn: Turn) -> None:
        turn.agent.stamina = 1.0
        turn.say("I waited for a while.")

    def candidates(self, turn: Turn) -> Iterable[str]:
        yield "wait"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "stamina",
            "How much attack stamina does waiting restore?",
            "all of it",
            ("half of what is missing", "none", "a fifth"),
        )


@action_rule
class Defend(ActionRule):
    verb = "defend"
    description = "Raise my guard this turn: blows hit for a tenth, and half the missing stamina returns."
    depends_on = ()

    def apply(self, turn: Turn) -> None:
        agent = turn.agent
        agent.defending = True
        agent.stamina += (1.0 - agent.stamina) * 0.5
        turn.say("I raised my guard.")

    def candidates(self, turn: Turn) -> Iterable[str]:
        yield "defend"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "combat",
            "What fraction of an enemy's blow gets through while I defend?",
            "one tenth",
            ("one half", "none", "one quarter"),
        )
