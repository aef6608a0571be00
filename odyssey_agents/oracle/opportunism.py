"""Cheap things worth a step whatever the goal: a bag to wear, a better weapon or armor lying right
here, food when hurt, and what a later stage wants carried.

Each costs one step now and saves more later (a trip back, a lost fight, a juggle of full hands). It
is skipped in the tutorial, whose lessons are gated on doing things in order, and while the agent
is calming down after a stall (opportunism may be what undoes the plan).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from odyssey_agents.oracle.core import LET_GO_STEPS

if TYPE_CHECKING:
    from odyssey_agents.oracle.core import Memory
    from odyssey_agents.oracle.foresight import Foresight
    from odyssey_agents.oracle.tactics import Tactics
    from odyssey_agents.oracle.view import View


class Opportunism:
    """Spots a cheap step worth taking now.

    It writes nothing. It reads ``memory.let_go`` (what a goal put down is not picked up again on a
    whim) and ``memory.banned`` (gear that did not help), and what foresight says later stages want.
    """

    def __init__(self, memory: Memory, foresight: Foresight, tactics: Tactics) -> None:
        self.memory = memory
        self.foresight = foresight
        self.tactics = tactics

    def opportunity(self, v: View) -> str | None:
        """The command of a cheap step worth taking here and now, or None."""
        agent = v.agent
        if agent.in_tutorial:
            return None
        if not agent.hands:  # empty-handed: take up my best weapon (never fights for a hand)
            arm = self.tactics.arm()
            if arm is not None:
                return arm
        here = v.objects_at(v.here)
        best_attack = max((v.game.objects[t].attack for t, n in v.carried.items() if n), default=0)
        let_go, banned = self.memory.let_go, self.memory.banned
        for handle in here:
            if v.state.step - let_go.get(handle, -LET_GO_STEPS) < LET_GO_STEPS:
                continue  # a goal put it down: do not undo that
            ot = v.otype(handle)
            if ot.category == "container" and v.pack is None and handle in v.state.instances:
                return f"equip {handle}"
            if ot.category == "armor":
                slot = ot.equip_slot or "body"
                if slot not in agent.equipment and ("armor", ot.name) not in banned:
                    return f"equip {handle}"
            if (
                ot.category == "weapon"
                and ot.attack > best_attack
                and ("weapon", ot.name) not in banned
                and (v.fits_hands(handle) or (v.pack is not None and v.pack_room() >= ot.size))
            ):
                return f"pick up {handle}"
            if ot.category == "food" and "eat" in v.verbs and agent.max_hp - agent.hp >= ot.hp_restore:
                return f"eat {handle}"
            later = self.foresight.wanted_later.get(ot.name)
            if later is not None and later[1] != v.here and v.owned(ot.name) < later[0] and ot.portable:
                if v.hands_free() >= 1:
                    return f"pick up {handle}"
                if v.pack is not None and not ot.instanced and ot.category != "container" and v.pack_room() >= ot.size:
                    return f"store 1 {handle} {v.pack}"
        return None
