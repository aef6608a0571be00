"""Enemies' side of combat: the stance rhythm of engaged enemies, and ambushes.

An engaged enemy acts on its pattern every step (``attack`` hits me; a raised guard cuts my blows to
a tenth; ``wait`` is an opening). Enemies that are not fighting may ambush me, more often in deeper
areas and at night, with half their strength; an ambush engages them, so I cannot simply walk away.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule
from odyssey_env.state import Agent, Npc
from odyssey_env.steprules.living import pick
from odyssey_env.verbs.combat import blow_damage, stance

if TYPE_CHECKING:
    from odyssey_env.game import Game


def enemy_blow(engine: Engine, npc: Npc, agent: Agent, strength: float = 1.0) -> int:
    raw = round(npc.attack * strength * engine.state.modifiers.get("enemy_attack", 1.0))
    damage = blow_damage(raw, agent.defense, guarded=agent.defending)
    agent.hp -= damage
    return damage


@step_rule
class CombatRhythm(StepRule):
    name = "combat_rhythm"
    description = "Each engaged enemy takes the next stance of its repeating pattern: attack, guard or pause."

    def apply(self, engine: Engine) -> None:
        state = engine.state
        for agent in state.agents.values():
            if agent.combat is None:
                continue
            area = state.areas[agent.area]
            engaged = False
            for handle in area.npcs:
                npc = state.npcs[handle]
                if npc.engaged != agent.id:
                    continue
                engaged = True
                self.act(engine, agent, npc)
            if not engaged:
                agent.combat = None

    def act(self, engine: Engine, agent: Agent, npc: Npc) -> None:
        """One engaged enemy's turn: it takes the next stance of its pattern against ``agent``.

        A game that changes how a single enemy acts (a jammed arm, a stunned beast) overrides this
        method in a subclass registered under the same name, rather than copying the whole loop.
        """
        move = stance(engine, npc)
        npc.stance_index += 1
        if move == "attack":
            damage = enemy_blow(engine, npc, agent)
            guard = " through my guard" if agent.defending else ""
            engine.say(agent.id, f"{npc.handle} strikes me{guard} for {damage} damage.")
            engine.emit("agent_hit", agent.id, npc=npc.handle, type=npc.type, damage=damage)
        elif move == "defend":
            engine.say(agent.id, f"{npc.handle} holds its guard.")
        else:
            engine.say(agent.id, f"{npc.handle} pauses to catch its breath.")

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "combat",
            "How do enemies behave in a fight?",
            "each repeats its own fixed pattern of attacking, guarding and pausing",
            ("they act at random", "they always attack", "they copy my moves"),
        )


def ambush_chance(table: tuple[float, ...], level: int, modifiers: dict[str, float]) -> float:
    """The chance of an ambush in an area of ``level`` this step: the table's odds for the level, plus what
    the hour adds, times what it multiplies; or the hour's fixed odds (``ambush_set``: a calm noon)."""
    if "ambush_set" in modifiers:
        return modifiers["ambush_set"]
    return (table[min(level, len(table)) - 1] + modifiers.get("ambush_add", 0.0)) * modifiers.get("ambush", 1.0)


@step_rule
class Ambush(StepRule):
    name = "ambush"
    description = "Idle enemies in my area may attack by surprise (odds grow with area level) and engage me."

    @dataclass(frozen=True)
    class Params:
        chance_by_level: tuple[float, ...] = (0.05, 0.075, 0.1, 0.125, 0.15)
        strength: float = 0.5

    def apply(self, engine: Engine) -> None:
        state, kinds = engine.state, engine.game.npcs
        table = self.settings.chance_by_level
        for agent in state.agents.values():
            if agent.combat is not None or agent.in_tutorial:
                continue
            area = state.areas[agent.area]
            if not area.npcs:
                continue
            idle = [h for h in area.npcs if state.npcs[h].engaged is None and kinds[state.npcs[h].type].hostile]
            if not idle:
                continue
            if engine.rng.random() >= ambush_chance(table, area.level, state.modifiers):
                continue
            npc = state.npcs[pick(engine, idle)]
            damage = enemy_blow(engine, npc, agent, self.settings.strength)
            npc.engaged = agent.id
            agent.combat = npc.handle
            engine.say(agent.id, f"{npc.handle} ambushes me for {damage} damage!")
            engine.emit("agent_ambushed", agent.id, npc=npc.handle, type=npc.type, damage=damage)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "combat",
            "Where are ambushes most likely?",
            "in higher-level areas",
            ("in the starting area", "near merchants", "nowhere; enemies never ambush"),
        )
