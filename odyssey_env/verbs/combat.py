"""Fighting: attack, and the optional throw.

Combat has a rhythm (paper §5.2, skill learning): each enemy repeats its own pattern of stances, one
per step. A blow against a defending enemy does a tenth of its damage; consecutive attacks tire me
(stamina falls by a fifth per attack, to no less than a fifth), and waiting or defending restores it.
The enemy's side of the exchange runs in the ``combat_rhythm`` step rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from odyssey_env.engine import Engine
from odyssey_env.rules import ActionRule, Fact, action_rule
from odyssey_env.state import Npc
from odyssey_env.turn import Turn
from odyssey_env.world import add, materialize, npc_here, remove, type_of

if TYPE_CHECKING:
    from odyssey_env.game import Game

STAMINA_COST = 0.2
STAMINA_FLOOR = 0.2
DEFEND_FACTOR = 0.1


def blow_damage(attack: int, defense: int, *, guarded: bool = False) -> int:
    """The damage of one blow, whoever strikes whom: attack less defense, at least 1; a tenth of that
    (rounded down, so possibly 0) against a guard. The one formula of the engine, the games and the oracle."""
    damage = max(1, attack - defense)
    return int(damage * DEFEND_FACTOR) if guarded else damage


def stance(engine: Engine, npc: Npc) -> str:
    pattern = engine.game.npcs[npc.type].pattern
    return pattern[npc.stance_index % len(pattern)] if pattern else "wait"


def engage(turn: Turn, npc: Npc) -> None:
    npc.engaged = turn.agent.id
    turn.agent.combat = npc.handle


def strike(turn: Turn, npc: Npc, damage: int, how: str) -> None:
    """Deal damage to an NPC, engage it, and settle its defeat."""
    npc.hp -= damage
    if npc.hp > 0:
        engage(turn, npc)
        turn.say(f"{how} {npc.handle} for {damage} damage ({npc.hp}/{npc.max_hp} health left).")
        return
    turn.say(f"{how} {npc.handle} for {damage} damage.")
    defeat(turn.engine, npc, turn.agent.id)


def defeat(engine: Engine, npc: Npc, agent_id: str) -> None:
    """Remove a defeated NPC, leave its belongings on the ground, and credit the agent."""
    state = engine.state
    area = state.areas[npc.area]
    area.npcs.remove(npc.handle)
    del state.npcs[npc.handle]
    loot = dict(npc.inventory)
    currency = engine.game.currency
    if npc.coins and currency:
        loot[currency] = loot.get(currency, 0) + npc.coins
    for handle, n in loot.items():
        for piece, k in materialize(engine.game, state, handle, n):
            add(area.objects, piece, k)
    agent = state.agents[agent_id]
    agent.kills[npc.type] = agent.kills.get(npc.type, 0) + 1
    if agent.combat == npc.handle:
        agent.combat = next((h for h in area.npcs if state.npcs[h].engaged == agent_id), None)
    dropped = ", ".join(f"{n} {h}" for h, n in loot.items())
    engine.say(agent_id, f"I defeated {npc.handle}!" + (f" It dropped {dropped}." if dropped else ""))
    t = engine.game.npcs[npc.type]
    engine.emit(
        "npc_defeated",
        agent_id,
        npc=npc.handle,
        type=npc.type,
        level=npc.level,
        area=npc.area,
        xp=t.experience,
        boss=t.role == "boss",
        first=engine.first(agent, "defeated", npc.type),
    )


def _target(turn: Turn, handle: str, verb: str) -> Npc | None:
    npc = npc_here(turn.state, turn.area, handle)
    if npc is None:
        turn.fail(f"Cannot {verb} {handle}: there is no such creature here.")
        return None
    if not turn.game.npcs[npc.type].hostile:
        turn.fail(f"Cannot {verb} {handle}: they are not hostile.")
        return None
    return npc


def _enemies(turn: Turn) -> Iterator[str]:
    npcs, kinds = turn.state.npcs, turn.game.npcs
    for handle in turn.area.npcs:
        if kinds[npcs[handle].type].hostile:
            yield handle


@action_rule
class Attack(ActionRule):
    verb = "attack"
    params = (("npc_name", "npc"),)
    description = "Strike an enemy here with my attack (the best weapon in hand counts)."
    depends_on = ("npcs",)

    def apply(self, turn: Turn, handle: str) -> None:
        npc = _target(turn, handle, "attack")
        if npc is None:
            return
        agent = turn.agent
        guarded = stance(turn.engine, npc) == "defend"
        damage = blow_damage(round(agent.attack * agent.stamina), npc.defense, guarded=guarded)
        if guarded:
            turn.say(f"{npc.handle} guards against my blow.")
        agent.stamina = max(STAMINA_FLOOR, agent.stamina - STAMINA_COST)
        turn.emit("npc_attacked", npc=npc.handle, type=npc.type, damage=damage)
        strike(turn, npc, damage, "I hit")

    def candidates(self, turn: Turn) -> Iterable[str]:
        for handle in _enemies(turn):
            yield f"attack {handle}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "combat",
            "What happens to my blows when I attack several turns in a row?",
            "they weaken as I tire",
            ("they grow stronger", "nothing changes", "they always miss"),
        )
        yield Fact(
            "combat",
            "How much damage does a blow do against an enemy that is guarding?",
            "a tenth",
            ("half", "none", "double"),
        )


@action_rule
class Throw(ActionRule):
    verb = "throw"
    params = (("object_name", "object"), ("npc_name", "npc"))
    description = "Throw a held object at an enemy here; it lands on the ground. Heavier hits harder."
    optional = True
    depends_on = ("hands", "npcs")

    def apply(self, turn: Turn, handle: str, target: str) -> None:
        if handle not in turn.agent.hands:
            return turn.fail(f"Cannot throw {handle}: I am not holding it.")
        npc = _target(turn, target, "throw at")
        if npc is None:
            return
        t = turn.game.objects[type_of(turn.state, handle)]
        damage = blow_damage(t.attack + 2 * t.size, npc.defense)
        remove(turn.agent.hands, handle)
        add(turn.area.objects, handle)
        turn.emit("object_thrown", object=t.name, handle=handle, npc=npc.handle, damage=damage)
        strike(turn, npc, damage, f"I threw {handle} at")

    def candidates(self, turn: Turn) -> Iterable[str]:
        enemies = list(_enemies(turn))
        for handle in turn.agent.hands:
            for npc in enemies:
                yield f"throw {handle} {npc}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "combat",
            "Where does a thrown object end up?",
            "on the ground of the area",
            ("back in my hand", "it is destroyed", "with the enemy"),
        )
