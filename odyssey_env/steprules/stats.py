"""The agent's numbers: attack from what is held, and experience and levels from achievements."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule
from odyssey_env.world import attack_of, defense_of

if TYPE_CHECKING:
    from odyssey_env.game import Game


@step_rule
class AttackUpdate(StepRule):
    name = "attack_update"
    description = "Attack is base attack plus the best attack among held objects; defense sums worn armor."

    def apply(self, engine: Engine) -> None:
        game, state = engine.game, engine.state
        for agent in state.agents.values():
            agent.attack = attack_of(game, state, agent)
            agent.defense = defense_of(game, agent)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "combat",
            "If I hold two weapons, what is my attack?",
            "my base attack plus the better weapon's attack",
            ("the sum of both weapons", "my base attack only", "the weaker weapon's attack"),
        )


_EXPERIENCE_EVENTS = frozenset(
    {
        "npc_defeated",
        "quest_stage_completed",
        "side_quest_completed",
        "area_entered",
        "object_crafted",
        "object_bought",
        "object_sold",
    }
)


@step_rule
class Experience(StepRule):
    name = "experience"
    description = "Achievements give experience; every xp_per_level points raise the level, health and attack."

    @dataclass(frozen=True)
    class Params:
        explore: int = 5
        craft: int = 5
        trade: int = 10
        quest: int = 20
        side_quest: int = 5

    def apply(self, engine: Engine) -> None:
        if engine.kinds.isdisjoint(_EXPERIENCE_EVENTS):
            return
        p = self.settings
        gains: dict[str, int] = {}
        for ev in engine.events:
            kind, data = ev.kind, ev.data
            if kind == "npc_defeated":
                xp = data["xp"]
            elif kind == "quest_stage_completed":
                xp = p.quest
            elif kind == "side_quest_completed":
                xp = p.side_quest
            elif not data.get("first"):
                continue
            elif kind == "area_entered":
                xp = p.explore
            elif kind == "object_crafted":
                xp = p.craft
            elif kind in ("object_bought", "object_sold"):
                xp = p.trade
            else:
                continue
            if ev.agent is not None:
                gains[ev.agent] = gains.get(ev.agent, 0) + xp
        if gains:
            self._grow(engine, gains)

    def _grow(self, engine: Engine, gains: dict[str, int]) -> None:
        body = engine.game.spec.agent
        for agent_id, xp in gains.items():
            agent = engine.state.agents[agent_id]
            if agent.in_tutorial:
                continue
            agent.xp += xp
            level = 1 + agent.xp // body.xp_per_level
            while agent.level < level:
                agent.level += 1
                agent.max_hp += body.hp_per_level
                agent.hp += body.hp_per_level
                agent.base_attack += body.attack_per_level
                agent.attack += body.attack_per_level
                engine.say(agent_id, f"I reached level {agent.level}!")
                engine.emit("level_up", agent_id, level=agent.level)

    def facts(self, game: Game) -> Iterable[Fact]:
        body = game.spec.agent
        yield Fact(
            "growth",
            "How much experience does each new level take?",
            f"{body.xp_per_level} points",
            tuple(f"{body.xp_per_level * k} points" for k in (2, 3, 5)),
        )
