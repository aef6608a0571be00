"""Moving between areas: enter, and the optional lockpick.

A locked path opens for good when I enter holding its key (the key stays in the lock) or after a
successful lockpick. Nobody leaves a fight: while an enemy here is engaged with me, exits are barred.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from odyssey_env.rules import ActionRule, Dependency, Fact, action_rule
from odyssey_env.turn import Turn
from odyssey_env.world import held_for, remove, type_of

if TYPE_CHECKING:
    from odyssey_env.game import Game


def in_combat(turn: Turn) -> str | None:
    """Handle of an NPC here that is fighting this agent, if any."""
    agent = turn.agent
    if agent.combat is None:
        return None
    npcs = turn.state.npcs
    for handle in turn.area.npcs:
        if npcs[handle].engaged == agent.id:
            return handle
    return None


def unlock(turn: Turn, a: str, b: str) -> None:
    areas = turn.state.areas
    areas[a].exits[b].locked = False
    areas[b].exits[a].locked = False


def _held_key(turn: Turn, key: str | None) -> str | None:
    if key is None:
        return None
    for handle in turn.agent.hands:
        if type_of(turn.state, handle) == key:
            return handle
    return None


@action_rule
class Enter(ActionRule):
    verb = "enter"
    params = (("area_name", "area"),)
    description = "Walk to a neighboring area; a locked way needs its key in my hand."
    depends_on: ClassVar[tuple[Dependency, ...] | None] = ("place", "exits", "combat", "hands")  # games widen it

    def apply(self, turn: Turn, target: str) -> None:
        agent, area = turn.agent, turn.area
        if target == agent.area:
            return turn.fail(f"I am already in {target}.")
        exit_ = area.exits.get(target)
        if exit_ is None:
            return turn.fail(f"Cannot enter {target}: it is not a neighboring area.")
        foe = in_combat(turn)
        if foe is not None:
            return turn.fail(f"Cannot leave while fighting {foe}.")
        if exit_.locked:
            key = _held_key(turn, exit_.key)
            if key is None:
                need = f"; {exit_.key} would open it" if exit_.key else ""
                return turn.fail(f"Cannot enter {target}: the way is locked{need}.")
            remove(agent.hands, key)
            unlock(turn, agent.area, target)
            turn.say(f"I unlocked the way to {target} with {key}; the key stays in the lock.")
            turn.emit("path_unlocked", a=agent.area, b=target, by="key")
        agent.area = target
        agent.combat = None
        turn.say(f"I entered {target}.")
        turn.emit("area_entered", area=target, first=turn.first("visited", target))

    def candidates(self, turn: Turn) -> Iterable[str]:
        if in_combat(turn) is not None:
            return
        for name, exit_ in turn.area.exits.items():
            if not exit_.locked or _held_key(turn, exit_.key) is not None:
                yield f"enter {name}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "movement",
            "Can I leave an area while an enemy there is fighting me?",
            "no",
            ("yes", "only by running", "only at night"),
        )


@action_rule
class Lockpick(ActionRule):
    """Pick a lock with a tool in hand: each tool type may have its own odds (the paper's Remnant: a
    lockpick 20%, a tension wrench 10%), and the best held tool is the one tried."""

    verb = "lockpick"
    params = (("area_name", "area"),)
    description = "Try to pick the lock of a neighboring way with a lockpick in hand; picks can break."
    optional = True
    depends_on = ("exits", "combat", "hands")

    @dataclass(frozen=True)
    class Params:
        chance: float = 0.35  # a try's chance to open the lock (tools that ``chances`` does not name)
        break_chance: float = 0.25  # a failed try's chance to snap the tool
        chances: dict[str, float] = field(default_factory=dict)  # a tool type's own chance to open
        success_break_chance: float = 0.0  # a successful try's chance to use the tool up (1: every try does)
        hurt_chance: float = 0.0  # a failed try's chance to hurt me
        hurt: int = 1  # the damage of that, less my defense, and at least 1

        def __post_init__(self) -> None:
            # (the fields named *chance are checked by the parameter conventions; the map is not)
            for tool, value in self.chances.items():
                if not 0.0 <= value <= 1.0:
                    raise ValueError(f"chances.{tool}: {value!r} must be a probability between 0 and 1")
            if self.hurt < 0:
                raise ValueError(f"hurt: {self.hurt!r} must not be negative")

    def chance_of(self, tool: str) -> float:
        """The chance that a try with a tool of type ``tool`` opens the lock."""
        return float(self.settings.chances.get(tool, self.settings.chance))

    def tool(self, turn: Turn) -> str | None:
        """The held tool a try uses: the one with the best chance (the first held of those)."""
        game, state, agent = turn.game, turn.state, turn.agent
        best, odds = None, -1.0
        for handle in agent.hands:
            kind = type_of(state, handle)
            if "lockpick" in game.objects[kind].uses and self.chance_of(kind) > odds:
                best, odds = handle, self.chance_of(kind)
        return best

    def apply(self, turn: Turn, target: str) -> None:
        agent, area = turn.agent, turn.area
        exit_ = area.exits.get(target)
        if exit_ is None:
            return turn.fail(f"Cannot lockpick {target}: it is not a neighboring area.")
        if not exit_.locked:
            return turn.fail(f"Cannot lockpick {target}: the way is not locked.")
        if not exit_.pickable:
            return turn.fail(f"Cannot lockpick {target}: this lock cannot be picked.")
        foe = in_combat(turn)
        if foe is not None:
            return turn.fail(f"Cannot pick a lock while fighting {foe}.")
        pick = self.tool(turn)
        if pick is None:
            return turn.fail(f"Cannot lockpick {target}: I need a lockpick in my hand.")
        p = self.settings
        if turn.rng.random() < self.chance_of(type_of(turn.state, pick)):
            unlock(turn, agent.area, target)
            if p.success_break_chance and turn.rng.random() < p.success_break_chance:
                remove(agent.hands, pick)
                turn.say(f"The lock clicks: the way to {target} is open. {pick} is spent.")
            else:
                turn.say(f"The lock clicks: the way to {target} is open.")
            turn.emit("path_unlocked", a=agent.area, b=target, by="lockpick")
            return
        if turn.rng.random() < p.break_chance:
            remove(agent.hands, pick)
            turn.say(f"The lock resists and {pick} snaps.")
        else:
            turn.say("The lock resists.")
        hurt = 0
        if p.hurt_chance and turn.rng.random() < p.hurt_chance:
            hurt = max(1, p.hurt - agent.defense)
            agent.hp -= hurt
            turn.say(f"I take {hurt} damage while working the lock.")
        turn.emit("lockpick_failed", a=agent.area, b=target, **({"hurt": hurt} if hurt else {}))

    def candidates(self, turn: Turn) -> Iterable[str]:
        if held_for(turn.game, turn.state, turn.agent, "lockpick") is None or in_combat(turn) is not None:
            return
        for name, exit_ in turn.area.exits.items():
            if exit_.locked and exit_.pickable:
                yield f"lockpick {name}"

    def facts(self, game: Game) -> Iterable[Fact]:
        p = self.settings
        tools = sorted(o.name for o in game.spec.objects if "lockpick" in o.uses)
        odds = {round(self.chance_of(t) * 100) for t in tools}
        if len(odds) <= 1:
            yield Fact(
                "locks",
                "How often does picking a lock succeed?",
                f"about {round((self.chance_of(tools[0]) if tools else p.chance) * 100)}% of tries",
                ("always", "never", "only at night"),
            )
        else:
            for t in tools:
                yield Fact(
                    "locks",
                    f"How often does picking a lock with a {t} succeed?",
                    f"about {round(self.chance_of(t) * 100)}% of tries",
                    ("always", "never", "only at night"),
                )
        if p.break_chance == 1.0 and p.success_break_chance == 1.0:
            yield Fact(
                "locks",
                "What becomes of the tool I pick a lock with?",
                "every try uses it up, whether the lock opens or not",
                ("it never wears out", "it breaks only when the lock opens", "it goes back to my pack"),
            )
