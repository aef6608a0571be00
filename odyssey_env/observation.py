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
    state = engine.state
    agent = state.agents[agent_id]
    area = state.areas[agent.area]
    lines = [f"Current Time: {engine.clock()}", f"Current Location: {area.place}, {area.name}", ""]
    feedback = state.feedback.get(agent_id)
    if feedback:
        lines.extend(feedback)
        lines.append("")
    lines.append(f"I am holding {describe_holding(agent.hands) or 'no objects'}.")
    worn = ", ".join(f"1 {h}" for h in agent.equipment.values())
    lines.append(f"I have equipped {worn or 'no objects'}.")
    veil = _veil(engine, agent) if engine.rules.veils else None
    if veil is None:
        lines.append(f"I see {describe_holding(area.objects) or 'no objects'} near me.")
        others = [a.name for a in state.agents.values() if a.area == area.name and a is not agent]
        beings = area.npcs + others if others else area.npcs
        lines.append(f"I see {', '.join(beings) or 'no one'} nearby.")
    else:  # a rule hides my surroundings (darkness): the lines keep their place and say why
        lines.append(f"I see no objects near me ({veil}).")
        lines.append(f"I see no one nearby ({veil}).")
    lines.append("")
    lines.append(f"My level is {agent.level}.")
    lines.append(f"My attack is at {agent.attack}.")
    lines.append(f"My defense is at {agent.defense}.")
    lines.append(f"My health is at {agent.hp}.")
    lines.append(f"My experience is at {agent.xp}.")
    lines.append("")
    exits = [f"{name} (locked)" if ex.locked else name for name, ex in area.exits.items()]
    lines.append(f"Neighboring areas: {', '.join(exits) or 'none'}.")
    return "\n".join(lines)


def _veil(engine: Engine, agent: Agent) -> str | None:
    for rule in engine.rules.veils:
        why = rule.veil(engine, agent)
        if why is not None:
            return why
    return None
