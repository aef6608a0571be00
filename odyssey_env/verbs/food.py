"""Eating (optional verb): food from my hands, my containers or the ground restores health."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from odyssey_env.rules import ActionRule, Fact, action_rule
from odyssey_env.turn import Turn
from odyssey_env.verbs.common import carried_handles
from odyssey_env.world import carried_count, remove, take_carried

if TYPE_CHECKING:
    from odyssey_env.game import Game


@action_rule
class Eat(ActionRule):
    verb = "eat"
    params = (("object_name", "object"),)
    description = "Eat one food item that I carry or see here to restore health."
    optional = True
    depends_on = ("hands", "worn", "containers", "ground")

    def apply(self, turn: Turn, name: str) -> None:
        game, state, agent, area = turn.game, turn.state, turn.agent, turn.area
        t = game.objects.get(name)
        if t is None or t.category != "food":
            return turn.fail(f"Cannot eat {name}: it is not food.")
        if carried_count(game, state, agent, name):
            take_carried(game, state, agent, name, 1)
        elif name in area.objects:
            remove(area.objects, name)
        else:
            return turn.fail(f"Cannot eat {name}: I have none and see none here.")
        before = agent.hp
        agent.hp = min(agent.max_hp, agent.hp + t.hp_restore)
        turn.say(f"I ate {name} and recovered {agent.hp - before} health.")
        turn.emit("object_eaten", object=name, restored=agent.hp - before)

    def candidates(self, turn: Turn) -> Iterable[str]:
        objects = turn.game.objects
        for name in {**carried_handles(turn), **turn.area.objects}:
            t = objects.get(name)
            if t is not None and t.category == "food":
                yield f"eat {name}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "food",
            "Can eating raise my health above its maximum?",
            "no",
            ("yes", "only at night", "only with cooked food"),
        )
