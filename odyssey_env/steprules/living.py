"""Shared helpers for the optional world-dynamics rules (patrols, regrowth, shifting paths, rumor notes).

The dynamics are cheap on purpose: they run on period ticks or react to this step's events, and
these helpers only look at what they are given (one area, the agents, the NPC table once per tick).
Tutorial rooms are never touched by the living world: it is the player's practice ground.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from odyssey_env.quests.tutorial import PLACE as TUTORIAL_PLACE

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.state import Area, Npc, WorldState

T = TypeVar("T")

#: NPCs whose place in the world is part of a story or a lesson: the living world leaves them be.
FIXED_ORIGINS = ("quest", "tutorial")


def is_world_area(area: Area) -> bool:
    """True for real areas (shipped or expanded), False for the tutorial's rooms."""
    return area.place != TUTORIAL_PLACE


def occupied(state: WorldState) -> set[str]:
    """Areas where some agent stands now (only membership is asked of it, never its order)."""
    return {a.area for a in state.agents.values()}


def tell(engine: Engine, area: str, text: str) -> None:
    """Say ``text`` to every agent standing in ``area``."""
    for agent in engine.state.agents.values():
        if agent.area == area:
            engine.say(agent.id, text)


def roams(engine: Engine, npc: Npc) -> bool:
    """Whether an NPC may drift between areas: common enemies and non-unique merchants, when free."""
    if npc.origin in FIXED_ORIGINS or npc.engaged is not None:
        return False
    t = engine.game.npcs[npc.type]
    return t.common_enemy or (t.merchant and not t.unique)


def move_npc(engine: Engine, npc: Npc, to: str) -> None:
    """Move an NPC between areas, telling agents at both ends."""
    state = engine.state
    frm = npc.area
    state.areas[frm].npcs.remove(npc.handle)
    state.areas[to].npcs.append(npc.handle)
    npc.area = to
    tell(engine, frm, f"{npc.handle} moves off toward {to}.")
    tell(engine, to, f"{npc.handle} arrives from {frm}.")


def pick(engine: Engine, options: list[T]) -> T:
    """A seeded choice from a list (lists only: never an unordered collection)."""
    return options[engine.rng.randrange(len(options))]


def chance(engine: Engine, p: float) -> bool:
    """A seeded draw that succeeds with probability ``p``; a certain outcome (``p`` of 0 or 1) draws
    nothing, so switching a process fully on or off leaves every other draw of the episode as it was."""
    if p >= 1.0:
        return True
    if p <= 0.0:
        return False
    return engine.rng.random() < p
