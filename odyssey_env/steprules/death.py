"""Death and respawn (paper A3.4): belongings stay where I fell; I wake at the spawn area, healed.

Remembering where I died, and going back for my things, is an episodic-memory test.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule
from odyssey_env.state import Agent
from odyssey_env.world import attack_of, defense_of, drop_all

if TYPE_CHECKING:
    from odyssey_env.game import Game


def fall(engine: Engine, agent: Agent) -> None:
    """The agent dies: what it holds and wears stays where it fell, and it wakes at home, healed.

    Shared with games that replace the death rule (a game may delay or commute a death, not redo it).
    """
    state = engine.state
    area = state.areas[agent.area]
    dropped = drop_all(engine.game, state, agent, area)
    # attack_update ran before this rule: refresh now, or the weapon and armor just lost
    # would still count in this observation and in next step's blows.
    agent.attack = attack_of(engine.game, state, agent)
    agent.defense = defense_of(engine.game, agent)
    for handle in area.npcs:
        npc = state.npcs[handle]
        if npc.engaged == agent.id:
            npc.engaged = None
            npc.stance_index = 0
    where = agent.area
    agent.area = agent.home
    agent.hp = agent.max_hp
    agent.stamina = 1.0
    agent.combat = None
    agent.deaths += 1
    lost = f" My belongings ({', '.join(dropped)}) lie in {where}." if dropped else ""
    engine.say(agent.id, f"I was defeated and woke up in {agent.home}.{lost}")
    engine.emit("agent_died", agent.id, area=where, dropped=dropped)


@step_rule
class Death(StepRule):
    name = "death"
    description = "At zero health I drop everything I hold and wear where I fell and wake at the spawn area."

    def apply(self, engine: Engine) -> None:
        for agent in engine.state.agents.values():
            if agent.hp <= 0:
                fall(engine, agent)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "death",
            "What happens to my belongings when I die?",
            "they stay on the ground where I fell",
            ("they are lost forever", "I keep them", "they return to the spawn area"),
        )
