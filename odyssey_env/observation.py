"""The first-person observation text of paper appendix A5.2.

Instance names (``goblin_raider_3``, ``small_bag_0``) are shown as they are because commands accept
exactly these handles. The layout is fixed so that agents and parsers can rely on it::

    Current Time: 0001-01-01 08:10:00
    Current Location: Old Castle, hall

    <what happened this step, one message per line>

    I am holding 1 torch.
    I have equipped 1 small_bag_0.
    I see 10 coin, 1 key near me.
    I see goblin_raider_2 nearby.

    My level is 1.
    ...
    Neighboring areas: armory, library (locked).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from odyssey_env.world import describe_holding

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.state import Agent


def render(engine: Engine, agent_id: str) -> str:
    # One f-string of joined lists: the observation is rendered every step, so this is on the hot path.
    state = engine.state
    agent = state.agents[agent_id]
    area = state.areas[agent.area]
    feedback = state.feedback.get(agent_id)
    said = "\n".join(feedback) + "\n\n" if feedback else ""
    equipment, hands = agent.equipment, agent.hands
    worn = ", ".join(["1 " + h for h in equipment.values()]) if equipment else ""  # often empty: no list made
    veil = _veil(engine, agent) if engine.rules.veils else None
    if veil is None:
        if len(state.agents) > 1:
            others = [a.name for a in state.agents.values() if a.area == area.name and a is not agent]
            beings = ", ".join(area.npcs + others if others else area.npcs)
        else:
            beings = ", ".join(area.npcs)
        around = (
            f"I see {describe_holding(area.objects) or 'no objects'} near me.\nI see {beings or 'no one'} nearby.\n\n"
        )
    else:  # a rule hides my surroundings (darkness): the lines keep their place and say why
        around = f"I see no objects near me ({veil}).\nI see no one nearby ({veil}).\n\n"
    exits = ", ".join([f"{name} (locked)" if ex.locked else name for name, ex in area.exits.items()])
    return (
        f"Current Time: {engine.clock()}\nCurrent Location: {area.place}, {area.name}\n\n{said}"
        f"I am holding {describe_holding(hands) if hands else 'no objects'}.\n"
        f"I have equipped {worn or 'no objects'}.\n"
        f"{around}"
        f"My level is {agent.level}.\nMy attack is at {agent.attack}.\nMy defense is at {agent.defense}.\n"
        f"My health is at {agent.hp}.\nMy experience is at {agent.xp}.\n\n"
        f"Neighboring areas: {exits or 'none'}."
    )


def _veil(engine: Engine, agent: Agent) -> str | None:
    for rule in engine.rules.veils:
        why = rule.veil(engine, agent)
        if why is not None:
            return why
    return None
