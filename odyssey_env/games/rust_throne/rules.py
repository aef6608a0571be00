"""Rust Throne's own rules: six verbs of a scrap tinker and eight pressures of a kingdom of broken war machines.

Verbs (``world.json`` switches them on in ``game.verbs``; their tables live in ``game.params``):

* ``salvage <object>``: strip a wreck for the parts its table lists;
* ``scavenge``: search the area; each area hides a few listed things, then it is picked clean;
* ``rally <npc>``: a woken sentinel of the old host fights beside me (it strikes my foe every turn);
* ``siphon <object> <npc>``: pour a charged cell into a friendly machine (mending and waking it), or drain a
  hostile machine into an empty cell (hurting it and charging the cell);
* ``jam <object> <npc>``: a wedge in a hostile machine's gears: its strikes fail for a few turns;
* ``overload <object>``: a charged component bursts and strikes every hostile machine here.

Step rules (``game.step_rules``): ``corrosion`` (what is left lying rusts into scrap), ``intimidation``
(friendlies lose health near enemies), ``reclamation`` (war machines return to land left alone, bounded),
``united_presence`` (agents sharing an area guard each other), ``tactical_warnings`` (friendlies call the next
enemy move), ``forge_migration`` (peddlers move to the forges), ``scrap_mending`` (wounded machines eat
scrap to mend) and ``devil_drain`` (carrying more than three devil-forged things burns). The base
``combat_rhythm`` is replaced by a subclass in which jammed machines cannot strike and rallied allies strike
first.

Every rule keeps its memory in ``state.rule_data`` under its own name, except the alliance of sentinels
(``rule_data["rally"]``: ``allies`` handle -> leader, ``awake`` handle -> step woken), which siphon, rally,
combat and intimidation share. Each verb also counts what an agent used it on (``rule_data[verb]["log"]``),
which the quest predicate ``has_used`` reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from odyssey_env.rules import ActionRule, Fact, StepRule, action_rule, predicate, step_rule
from odyssey_env.steprules.combat import CombatRhythm
from odyssey_env.steprules.living import FIXED_ORIGINS, is_world_area, move_npc, occupied, pick, roams, tell
from odyssey_env.verbs.combat import blow_damage, defeat, engage, stance, strike
from odyssey_env.verbs.common import carried_handles, receive
from odyssey_env.world import (
    add,
    attack_of,
    breadth_first,
    carried_count,
    describe_holding,
    first_step,
    held_containers,
    make_objects,
    npc_here,
    remove,
    take_carried,
    type_of,
)
from odyssey_env.worldgen import spawn_npc, spawnable_enemies

if TYPE_CHECKING:
    from odyssey_env.content import NpcType
    from odyssey_env.engine import Engine
    from odyssey_env.game import Game
    from odyssey_env.state import Agent, Npc, WorldState
    from odyssey_env.turn import Turn
    from odyssey_env.world import Passable

RALLY = "rally"
JAM = "jam"
STANCE_WORDS = {"attack": "strike", "defend": "raise its guard", "wait": "pause"}


# ============================================================================ shared helpers
def _note(turn: Turn, verb: str, *targets: str) -> None:
    """Count one use of ``verb`` by the agent (under "" and under each target) for ``has_used``."""
    log = turn.state.rule_data.setdefault(verb, {}).setdefault("log", {}).setdefault(turn.agent.id, {})
    for key in ("", *targets):
        log[key] = log.get(key, 0) + 1


def _holding(turn: Turn, handle: str, *, ground: bool) -> dict[str, int] | None:
    """Where the agent can take ``handle`` from: its hands, then its containers (then the ground here)."""
    agent, state = turn.agent, turn.state
    if handle in agent.hands:
        return agent.hands
    for c in held_containers(turn.game, state, agent):
        contents = state.instances[c].contents
        if handle in contents:
            return contents
    if ground and handle in turn.area.objects:
        return turn.area.objects
    return None


def _host(state: WorldState) -> dict[str, Any]:
    """The alliance memory (allies: handle -> leader, awake: handle -> step), created on first write."""
    host: dict[str, Any] = state.rule_data.setdefault(RALLY, {})
    host.setdefault("allies", {})
    host.setdefault("awake", {})
    return host


def _allies(state: WorldState) -> dict[str, str]:
    allies: dict[str, str] = state.rule_data.get(RALLY, {}).get("allies", {})
    return allies


def _awake(state: WorldState) -> dict[str, int]:
    awake: dict[str, int] = state.rule_data.get(RALLY, {}).get("awake", {})
    return awake


def _jammed(state: WorldState, handle: str) -> bool:
    """Whether a machine's gears are jammed: a jam is remembered (``until``: its last jammed step) from the
    step it is driven in until the combat rhythm has played that last step, and not a step longer."""
    return handle in state.rule_data.get(JAM, {}).get("until", {})


def _near_numbers(n: int) -> tuple[str, str, str]:
    """Three wrong answers to a question whose answer is the count ``n`` (>= 0): distinct, and never ``n``."""
    return str(n + 1), str(n + 2), str(2 * n + 3)


def is_machine(engine: Engine, npc_type: str) -> bool:
    """Whether an NPC type runs on power: the siphon rule's ``machines``, else every enemy and fighter."""
    rule = engine.rules.actions.get("siphon")
    machines = rule.settings.machines if rule is not None else ()
    if machines:
        return npc_type in machines
    t = engine.game.npcs[npc_type]
    return t.hostile or t.role == "fighter"


def _power_down(engine: Engine, npc: Npc) -> None:
    """A woken machine whose power runs low goes dormant again and leaves its leader."""
    host = _host(engine.state)
    host["awake"].pop(npc.handle, None)
    leader = host["allies"].pop(npc.handle, None)
    tell(
        engine,
        npc.area,
        f"{npc.handle}'s cells fail: it sinks back into dormancy"
        + (f" and leaves {leader}'s side." if leader else "."),
    )
    engine.emit("npc_powered_down", leader, npc=npc.handle, type=npc.type, area=npc.area)


# ============================================================================ verbs
@action_rule
class Salvage(ActionRule):
    verb = "salvage"
    params = (("object_name", "object"),)
    description = "Strip a wreck in my hands, my pack or on the ground here for parts; the parts fall at my feet."
    optional = True
    # what is carried (hands, containers held or worn) and what lies here; a handle names its type for good
    depends_on = ("hands", "worn", "containers", "ground")

    @dataclass(frozen=True)
    class Params:
        parts: dict[str, dict[str, int]] = field(default_factory=dict)  # wreck type -> parts it gives
        # the paper's Robot Kingdom: material type -> (units used up, attack gained for good), with ``tool``
        # in my hands; a type with parts is stripped for them instead
        upgrades: dict[str, tuple[int, int]] = field(default_factory=dict)
        tool: str = ""

        def __post_init__(self) -> None:
            bad = [k for k, (n, _) in self.upgrades.items() if n < 1]
            if bad:
                raise ValueError(f"upgrades: {', '.join(bad)} must use at least 1 unit")

    def _upgrade(self, turn: Turn, handle: str) -> tuple[int, int] | str:
        """(units used, attack gained) of salvaging the carried material ``handle`` into a component, or why not."""
        need, gain = self.settings.upgrades[type_of(turn.state, handle)]
        tool = self.settings.tool
        if tool and not any(type_of(turn.state, h) == tool for h in turn.agent.hands):
            return f"Cannot salvage {handle}: I need a {tool} in my hands to work it."
        have = carried_count(turn.game, turn.state, turn.agent, handle)
        if have < need:
            return f"Cannot salvage {handle}: it takes {need} of it, and I carry {have}."
        return need, gain

    def apply(self, turn: Turn, handle: str) -> None:
        holding = _holding(turn, handle, ground=True)
        if holding is None:
            return turn.fail(f"Cannot salvage {handle}: it is not in my hands, my pack or on the ground here.")
        kind = type_of(turn.state, handle)
        if kind in self.settings.upgrades and kind not in self.settings.parts:
            return self._apply_upgrade(turn, handle)
        parts = self.settings.parts.get(kind)
        if not parts:
            return turn.fail(f"Cannot salvage {handle}: there is nothing in it worth stripping.")
        remove(holding, handle)
        area = turn.area
        for part, n in parts.items():
            for piece, k in make_objects(turn.game, turn.state, part, n):
                add(area.objects, piece, k)
        turn.say(f"I strip {handle} for parts: {describe_holding(parts)} now lie at my feet.")
        turn.emit("object_salvaged", object=kind, handle=handle, parts=dict(parts), area=area.name)
        _note(turn, self.verb, kind)

    def _apply_upgrade(self, turn: Turn, handle: str) -> None:
        checked = self._upgrade(turn, handle)
        if isinstance(checked, str):
            return turn.fail(checked)
        need, gain = checked
        agent = turn.agent
        take_carried(turn.game, turn.state, agent, handle, need)
        agent.base_attack += gain
        agent.attack = attack_of(turn.game, turn.state, agent)
        turn.say(f"I work {need} {handle} into a devil-forged component: my attack rises by {gain} for good.")
        kind = type_of(turn.state, handle)
        turn.emit("object_salvaged", object=kind, handle=handle, parts={}, area=agent.area, attack=gain)
        _note(turn, self.verb, kind)

    def candidates(self, turn: Turn) -> Iterable[str]:
        state, parts, upgrades = turn.state, self.settings.parts, self.settings.upgrades
        carried = carried_handles(turn)
        for handle in {**carried, **turn.area.objects}:
            kind = type_of(state, handle)
            upgrade = kind in upgrades and handle in carried and not isinstance(self._upgrade(turn, handle), str)
            if kind in parts or upgrade:
                yield f"salvage {handle}"

    def facts(self, game: Game) -> Iterable[Fact]:
        if self.settings.parts:
            kind, parts = next(iter(self.settings.parts.items()))
            answer = describe_holding(parts)
            others = [describe_holding(p) for p in self.settings.parts.values() if describe_holding(p) != answer]
            wrong = tuple(dict.fromkeys([*others, "nothing: it crumbles to dust", "a handful of brass bits"]))[:3]
            yield Fact("crafting", f"What does salvaging a {kind} give?", answer, wrong)
        yield Fact(
            "crafting",
            "Where do the parts of a salvaged wreck end up?",
            "on the ground at my feet",
            ("in my pack", "in a merchant's stock", "they vanish"),
        )


@action_rule
class Scavenge(ActionRule):
    verb = "scavenge"
    params = ()
    description = "Search this area for something useful hidden in the wreckage; each area hides only a few things."
    optional = True
    depends_on = ("place", "data")  # what each area still hides lives in rule_data (any agent's search)
    reads_data = ("scavenge",)

    @dataclass(frozen=True)
    class Params:
        finds: dict[str, tuple[str, ...]] = field(default_factory=dict)  # area -> what it hides

    def _left(self, turn: Turn) -> list[str] | tuple[str, ...]:
        """What this area still hides (read-only)."""
        area = turn.agent.area
        left: dict[str, list[str]] = turn.state.rule_data.get(self.name, {}).get("left", {})
        return left[area] if area in left else self.settings.finds.get(area, ())

    def apply(self, turn: Turn) -> None:
        area = turn.agent.area
        if not self._left(turn):
            if area in self.settings.finds:
                return turn.fail(f"I search {area} again, but it has been picked clean.")
            return turn.fail(f"I search {area}, but nothing useful is hidden here.")
        memory = turn.state.rule_data.setdefault(self.name, {}).setdefault("left", {})
        left = memory.setdefault(area, list(self.settings.finds[area]))
        found = left.pop(turn.rng.randrange(len(left)))
        where = receive(turn, found, 1)
        turn.say(f"Searching {area}, I turn up 1 {found} ({where}).")
        turn.emit("object_scavenged", object=found, area=area, left=len(left))
        _note(turn, self.verb, area)

    def candidates(self, turn: Turn) -> Iterable[str]:
        if self._left(turn):
            yield "scavenge"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "world",
            "What happens when I scavenge the same area again and again?",
            "it runs out of finds and is picked clean",
            ("it finds something every time", "enemies appear", "the area collapses"),
        )


@action_rule
class Rally(ActionRule):
    verb = "rally"
    params = (("npc_name", "npc"),)
    description = "Call a woken sentinel here to my side: it strikes my foe every turn while we stand together."
    optional = True
    # no depends_on: who is awake and who follows whom live in rule_data (siphon, intimidation, other agents)

    @dataclass(frozen=True)
    class Params:
        recruits: tuple[str, ...] = ()  # NPC types that answer a rally
        max_allies: int = 2
        wake: bool = True  # a recruit must be woken (siphoned) first
        cost: int = 0  # coins a rally costs (the paper's Robot Kingdom: 8, and 4 more per level of the recruit)
        cost_per_level: int = 0

    def _cost(self, npc: Npc) -> int:
        cost: int = self.settings.cost + self.settings.cost_per_level * npc.level
        return cost

    def _check(self, turn: Turn, handle: str) -> Npc | str:
        npc = npc_here(turn.state, turn.area, handle)
        if npc is None:
            return f"Cannot rally {handle}: there is no one by that name here."
        if turn.game.npcs[npc.type].hostile:
            return f"Cannot rally {handle}: it is hostile."
        if npc.type not in self.settings.recruits:
            return f"Cannot rally {handle}: only the sentinels of the old host answer a rally."
        allies = _allies(turn.state)
        leader = allies.get(handle)
        if leader == turn.agent.id:
            return f"Cannot rally {handle}: it already fights at my side."
        if leader is not None:
            return f"Cannot rally {handle}: it already follows {leader}."
        if self.settings.wake and handle not in _awake(turn.state):
            return f"Cannot rally {handle}: it is dormant. Siphon power into it first."
        mine = sum(1 for h, a in allies.items() if a == turn.agent.id and h in turn.state.npcs)
        if mine >= self.settings.max_allies:
            return f"Cannot rally {handle}: I already lead {mine} allies, as many as I can."
        cost = self._cost(npc)
        if cost:
            have = carried_count(turn.game, turn.state, turn.agent, turn.game.currency or "")
            if have < cost:
                return f"Cannot rally {handle}: it asks {cost} {turn.game.currency}, and I carry {have}."
        return npc

    def apply(self, turn: Turn, handle: str) -> None:
        npc = self._check(turn, handle)
        if isinstance(npc, str):
            return turn.fail(npc)
        cost = self._cost(npc)
        if cost and turn.game.currency:
            take_carried(turn.game, turn.state, turn.agent, turn.game.currency, cost)
            turn.say(f"I pay {handle} {cost} {turn.game.currency}.")
        _host(turn.state)["allies"][handle] = turn.agent.id
        turn.say(f"{handle}'s eyes flare: it falls in at my side and will strike whatever I fight.")
        turn.emit("npc_rallied", npc=handle, type=npc.type, area=npc.area)
        _note(turn, self.verb, npc.type)

    def candidates(self, turn: Turn) -> Iterable[str]:
        for handle in turn.area.npcs:
            if not isinstance(self._check(turn, handle), str):
                yield f"rally {handle}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "allies",
            "What must I do before a dormant sentinel answers a rally?",
            "siphon power into it",
            ("pay it coins", "defeat it", "give it a weapon"),
        )
        yield Fact(
            "allies",
            "What does a rallied sentinel do?",
            "it strikes my foe every turn while we stand together",
            ("it carries my things", "it sells me parts", "it guards the camp"),
        )


@action_rule
class Siphon(ActionRule):
    verb = "siphon"
    params = (("object_name", "object"), ("npc_name", "npc"))
    description = (
        "Pour a charged cell I carry into a friendly machine here (mending and waking it), or drain a "
        "hostile machine into an empty cell (hurting it and charging the cell)."
    )
    optional = True
    # no depends_on: a friendly machine's health and whether it is awake (rule_data) are in no fingerprint

    @dataclass(frozen=True)
    class Params:
        cells: dict[str, str] = field(default_factory=dict)  # charged cell type -> its drained type
        charge: int = 40  # health a charge restores
        drain: int = 15  # damage a drain does
        machines: tuple[str, ...] = ()  # NPC types that run on power; empty: every enemy and fighter
        # the paper's Robot Kingdom: any object of these categories with a coin value, held in hand, is a
        # conduit against a hostile machine I fight: used up, it gives me its value in health and takes a
        # third of it from the machine's attack
        conduits: tuple[str, ...] = ()

    def _conduit(self, turn: Turn, handle: str, target: str) -> tuple[str, Npc] | str:
        kind = type_of(turn.state, handle)
        if handle not in turn.agent.hands:
            return f"Cannot siphon through {handle}: I must hold it in my hand."
        t = turn.game.objects[kind]
        if t.category not in self.settings.conduits or t.value < 1:
            return f"Cannot siphon through {handle}: it holds nothing worth draining into."
        npc = npc_here(turn.state, turn.area, target)
        if npc is None:
            return f"Cannot siphon {target}: there is no one by that name here."
        if not turn.game.npcs[npc.type].hostile or not is_machine(turn.engine, npc.type):
            return f"Cannot siphon {target}: it is no hostile machine."
        if npc.engaged != turn.agent.id:
            return f"Cannot siphon {target}: I must be fighting it."
        return kind, npc

    def _apply_conduit(self, turn: Turn, handle: str, target: str) -> None:
        checked = self._conduit(turn, handle, target)
        if isinstance(checked, str):
            return turn.fail(checked)
        kind, npc = checked
        value = turn.game.objects[kind].value
        remove(turn.agent.hands, handle)
        agent = turn.agent
        gained = min(value, agent.max_hp - agent.hp)
        agent.hp += gained
        weaker = min(npc.attack, value // 3)
        npc.attack -= weaker
        turn.say(
            f"I siphon {target}'s dark power through {handle}, which crumbles: I regain {gained} health and "
            f"{target} loses {weaker} attack."
        )
        turn.emit("power_siphoned", direction="conduit", npc=target, type=npc.type, object=kind, amount=gained)
        _note(turn, self.verb, npc.type, "conduit")

    def _check(self, turn: Turn, handle: str, target: str) -> tuple[dict[str, int], str, Npc] | str:
        holding = _holding(turn, handle, ground=False)
        if holding is None:
            return f"Cannot siphon with {handle}: I do not carry it."
        kind = type_of(turn.state, handle)
        if kind not in self.settings.cells and kind not in self.settings.cells.values():
            return f"Cannot siphon with {handle}: it cannot hold power."
        npc = npc_here(turn.state, turn.area, target)
        if npc is None:
            return f"Cannot siphon {target}: there is no one by that name here."
        if not is_machine(turn.engine, npc.type):
            return f"Cannot siphon {target}: they are flesh and blood, not a machine."
        hostile = turn.game.npcs[npc.type].hostile
        if kind in self.settings.cells:
            if hostile:
                return f"Cannot siphon {handle} into {target}: feeding power to a hostile machine would only mend it."
            if npc.hp >= npc.max_hp and target in _awake(turn.state):
                return f"Cannot siphon {handle} into {target}: it is awake and fully charged."
        elif not hostile:
            return f"Cannot siphon {target} into {handle}: I will not drain an ally."
        return holding, kind, npc

    def apply(self, turn: Turn, handle: str, target: str) -> None:
        cells = self.settings.cells
        kind = type_of(turn.state, handle)
        if self.settings.conduits and kind not in cells and kind not in cells.values():
            return self._apply_conduit(turn, handle, target)
        checked = self._check(turn, handle, target)
        if isinstance(checked, str):
            return turn.fail(checked)
        holding, kind, npc = checked
        remove(holding, handle)
        if kind in self.settings.cells:
            empty = self.settings.cells[kind]
            add(holding, empty)
            gained = min(self.settings.charge, npc.max_hp - npc.hp)
            npc.hp += gained
            _host(turn.state)["awake"][target] = turn.state.step
            turn.say(
                f"I pour the charge of {handle} into {target}: it stirs and stands awake "
                f"(+{gained} health, {npc.hp}/{npc.max_hp}). My cell is now a {empty}."
            )
            turn.emit("power_siphoned", direction="charge", npc=target, type=npc.type, object=kind, amount=gained)
            _note(turn, self.verb, npc.type, "charge")
            return
        full = next(c for c, e in self.settings.cells.items() if e == kind)
        add(holding, full)
        amount = min(self.settings.drain, npc.hp)
        turn.say(f"I drain {target}'s power into {handle}; the cell hums, a {full} now.")
        turn.emit("power_siphoned", direction="drain", npc=target, type=npc.type, object=kind, amount=amount)
        _note(turn, self.verb, npc.type, "drain")
        strike(turn, npc, amount, "The siphon drains")

    def candidates(self, turn: Turn) -> Iterable[str]:
        cells = self.settings.cells
        kinds = {*cells, *cells.values()}
        state = turn.state
        mine = [h for h in carried_handles(turn) if type_of(state, h) in kinds]
        for handle in mine:
            for target in turn.area.npcs:
                if not isinstance(self._check(turn, handle, target), str):
                    yield f"siphon {handle} {target}"
        if self.settings.conduits and turn.agent.combat is not None:
            for handle in turn.agent.hands:
                if type_of(state, handle) not in kinds:
                    for target in turn.area.npcs:
                        if not isinstance(self._conduit(turn, handle, target), str):
                            yield f"siphon {handle} {target}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "power",
            "What happens when I siphon a hostile war machine into an empty cell?",
            "it loses health and the cell becomes charged",
            ("it joins my side", "the cell explodes", "it heals fully"),
        )
        yield Fact(
            "power",
            "What does pouring a charged cell into a dormant sentinel do?",
            "it wakes and mends it",
            ("it destroys it", "it makes it hostile", "nothing at all"),
        )


@action_rule
class Jam(ActionRule):
    verb = "jam"
    params = (("object_name", "object"), ("npc_name", "npc"))
    description = (
        "Drive a wedge I carry into a hostile machine's gears here: its strikes fail for a few turns "
        "(the wedge drops when it falls)."
    )
    optional = True
    # the wedges I carry (a handle names its type for good), the machines here and the jams in force
    # (rule_data, which another agent's jam or the combat rhythm changes)
    depends_on = ("hands", "worn", "containers", "npcs", "data")
    reads_data = (JAM,)

    @dataclass(frozen=True)
    class Params:
        wedges: dict[str, int] = field(default_factory=dict)  # wedge type -> turns it jams

        def __post_init__(self) -> None:
            short = [w for w, turns in self.wedges.items() if turns < 1]
            if short:
                raise ValueError(f"wedges: {', '.join(short)} must jam for at least 1 turn")

    def _check(self, turn: Turn, handle: str, target: str) -> tuple[dict[str, int], str, Npc] | str:
        holding = _holding(turn, handle, ground=False)
        if holding is None:
            return f"Cannot jam with {handle}: I do not carry it."
        kind = type_of(turn.state, handle)
        if kind not in self.settings.wedges:
            return f"Cannot jam with {handle}: it is nothing to drive into gears."
        npc = npc_here(turn.state, turn.area, target)
        if npc is None:
            return f"Cannot jam {target}: there is no such creature here."
        if not turn.game.npcs[npc.type].hostile:
            return f"Cannot jam {target}: they are not hostile."
        if _jammed(turn.state, target):
            return f"Cannot jam {target}: its gears are already jammed."
        return holding, kind, npc

    def apply(self, turn: Turn, handle: str, target: str) -> None:
        checked = self._check(turn, handle, target)
        if isinstance(checked, str):
            return turn.fail(checked)
        holding, kind, npc = checked
        turns = self.settings.wedges[kind]
        remove(holding, handle)
        add(npc.inventory, kind)  # it falls out with the rest when the machine is defeated
        until = turn.state.rule_data.setdefault(JAM, {}).setdefault("until", {})
        until[target] = turn.state.step + turns - 1  # this step's turn is the first
        if npc.engaged is None:
            engage(turn, npc)
        elif npc.engaged == turn.agent.id and turn.agent.combat is None:
            turn.agent.combat = npc.handle
        turn.say(f"I drive {handle} into {target}'s gears: its strikes will fail for {turns} turns.")
        turn.emit("npc_jammed", npc=target, type=npc.type, object=kind, turns=turns)
        _note(turn, self.verb, npc.type)

    def candidates(self, turn: Turn) -> Iterable[str]:
        state = turn.state
        wedges = [h for h in carried_handles(turn) if type_of(state, h) in self.settings.wedges]
        if not wedges:
            return
        for target in turn.area.npcs:
            for handle in wedges:
                if not isinstance(self._check(turn, handle, target), str):
                    yield f"jam {handle} {target}"

    def facts(self, game: Game) -> Iterable[Fact]:
        if self.settings.wedges:
            kind, turns = next(iter(self.settings.wedges.items()))
            yield Fact(
                "combat",
                f"For how many turns does a {kind} stop a war machine's strikes?",
                str(turns),
                _near_numbers(turns),
            )
        yield Fact(
            "combat",
            "What becomes of a wedge jammed into a machine?",
            "it falls out when the machine is defeated",
            ("it is lost for good", "it comes back to my pack", "it explodes"),
        )


@action_rule
class Overload(ActionRule):
    verb = "overload"
    params = (("object_name", "object"),)
    description = "Overload a charged component I carry: it bursts, striking every hostile machine here."
    optional = True
    depends_on = ("hands", "worn", "containers")  # what is carried; a handle names its type for good

    @dataclass(frozen=True)
    class Params:
        components: dict[str, int] = field(default_factory=dict)  # component type -> blast damage

    def _check(self, turn: Turn, handle: str) -> dict[str, int] | str:
        holding = _holding(turn, handle, ground=False)
        if holding is None:
            return f"Cannot overload {handle}: I do not carry it."
        if type_of(turn.state, handle) not in self.settings.components:
            return f"Cannot overload {handle}: it holds no charge to release."
        return holding

    def apply(self, turn: Turn, handle: str) -> None:
        holding = self._check(turn, handle)
        if isinstance(holding, str):
            return turn.fail(holding)
        kind = type_of(turn.state, handle)
        blast = self.settings.components[kind]
        remove(holding, handle)
        state, area = turn.state, turn.area
        foes = [state.npcs[h] for h in area.npcs if turn.game.npcs[state.npcs[h].type].hostile]
        turn.say(f"I overload {handle}: it bursts in a crackling wave!")
        turn.emit("component_overloaded", object=kind, area=area.name, hits=[n.handle for n in foes])
        _note(turn, self.verb, area.name)
        if not foes:
            turn.say(f"The burst crackles harmlessly across {area.name}: nothing hostile is here.")
        for npc in foes:
            strike(turn, npc, blow_damage(blast, npc.defense), "The burst hits")

    def candidates(self, turn: Turn) -> Iterable[str]:
        state = turn.state
        for handle in carried_handles(turn):
            if type_of(state, handle) in self.settings.components:
                yield f"overload {handle}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "combat",
            "Whom does an overloaded component strike?",
            "every hostile machine in the area",
            ("only the machine I fight", "me and my allies", "nobody: it only makes light"),
        )


# ============================================================================ combat with jams and allies
@step_rule
class Skirmish(CombatRhythm):
    """The base combat rhythm, with this kingdom's two additions to a fight."""

    name = "combat_rhythm"
    description = (
        "Each engaged enemy takes the next stance of its pattern, but a jammed machine cannot strike; "
        "rallied allies strike their leader's foe first."
    )

    def apply(self, engine: Engine) -> None:
        state = engine.state
        if _allies(state):
            self._allies_strike(engine)
        CombatRhythm.apply(self, engine)
        until = state.rule_data.get(JAM, {}).get("until")
        if until:
            for handle in [h for h, last in until.items() if last <= state.step or h not in state.npcs]:
                del until[handle]

    def act(self, engine: Engine, agent: Agent, npc: Npc) -> None:
        if _jammed(engine.state, npc.handle) and stance(engine, npc) == "attack":
            npc.stance_index += 1
            engine.say(agent.id, f"{npc.handle} strains to strike, but its jammed gears lock its arm.")
            engine.emit("strike_jammed", agent.id, npc=npc.handle, type=npc.type)
            return
        CombatRhythm.act(self, engine, agent, npc)

    @staticmethod
    def _allies_strike(engine: Engine) -> None:
        state = engine.state
        allies = _host(state)["allies"]
        for handle, leader_id in list(allies.items()):
            ally, leader = state.npcs.get(handle), state.agents.get(leader_id)
            if ally is None or leader is None:
                del allies[handle]
                continue
            foe = state.npcs.get(leader.combat) if leader.combat is not None else None
            if foe is None or foe.area != ally.area or leader.area != ally.area:
                continue
            damage = blow_damage(ally.attack, foe.defense, guarded=stance(engine, foe) == "defend")
            foe.hp -= damage
            engine.emit("ally_struck", leader_id, npc=handle, target=foe.handle, damage=damage)
            if foe.hp > 0:
                engine.say(
                    leader_id, f"{handle} strikes {foe.handle} for {damage} damage ({foe.hp}/{foe.max_hp} health left)."
                )
            else:
                engine.say(leader_id, f"{handle} strikes {foe.handle} for {damage} damage.")
                defeat(engine, foe, leader_id)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield from CombatRhythm.facts(self, game)
        yield Fact("combat", "What can a jammed war machine not do?", "strike", ("move its eyes", "guard", "pause"))


# ============================================================================ step rules
@step_rule
class UnitedPresence(StepRule):
    name = "united_presence"
    after = ("attack_update",)  # after attack_update (which sets defense from armor), before any blow lands
    before = ("combat_rhythm",)
    optional = True
    description = "Agents who share an area guard each other: each gains defense for every other agent there."

    @dataclass(frozen=True)
    class Params:
        bonus: int = 3  # defense per other agent in the area
        cap: int = 9

    def apply(self, engine: Engine) -> None:
        state = engine.state
        memory = state.rule_data.get(self.name)
        if len(state.agents) < 2 and not memory:
            return
        memory = state.rule_data.setdefault(self.name, {})
        together: dict[str, list[str]] = {}
        for agent in state.agents.values():
            if not agent.in_tutorial:
                together.setdefault(agent.area, []).append(agent.id)
        for agent in state.agents.values():
            others = [a for a in together.get(agent.area, ()) if a != agent.id] if not agent.in_tutorial else []
            bonus = min(self.settings.cap, self.settings.bonus * len(others))
            agent.defense += bonus
            if bonus == memory.get(agent.id, 0):
                continue
            if bonus:
                memory[agent.id] = bonus
                engine.say(
                    agent.id, f"Standing with {', '.join(others)}, we cover each other: my defense rises by {bonus}."
                )
            else:
                del memory[agent.id]
                engine.say(agent.id, "No one stands with me now: I lose the cover of a shared guard.")
            engine.emit("united_presence", agent.id, bonus=bonus, allies=others)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "allies",
            "What do two agents gain by standing in the same area?",
            f"{self.settings.bonus} defense each",
            ("double attack", "nothing", "they heal each other"),
        )


@step_rule
class ScrapMending(StepRule):
    name = "scrap_mending"
    after = ("combat_rhythm",)  # mends after this step's blows, before ambushes
    optional = True
    description = "A wounded war machine standing by scrap on the ground eats a piece each turn to mend itself."

    @dataclass(frozen=True)
    class Params:
        heal: int = 6
        scrap: tuple[str, ...] = ("rust_scrap",)  # what a machine eats, the first found first

        def __post_init__(self) -> None:
            if not self.scrap:
                raise ValueError("scrap: name at least one object (switch the rule off in game.disable instead)")

    def apply(self, engine: Engine) -> None:
        state, kinds = engine.state, engine.game.npcs
        for npc in state.npcs.values():
            if npc.hp >= npc.max_hp or not kinds[npc.type].hostile:
                continue
            ground = state.areas[npc.area].objects
            piece = next((s for s in self.settings.scrap if s in ground), None)
            if piece is None:
                continue
            remove(ground, piece)
            gained = min(self.settings.heal, npc.max_hp - npc.hp)
            npc.hp += gained
            tell(
                engine,
                npc.area,
                f"{npc.handle} wrenches up a piece of {piece} and bolts it into its frame "
                f"(+{gained} health, {npc.hp}/{npc.max_hp}).",
            )
            engine.emit("npc_mended", None, npc=npc.handle, type=npc.type, object=piece, amount=gained, area=npc.area)

    def facts(self, game: Game) -> Iterable[Fact]:
        scrap = self.settings.scrap[0]
        yield Fact(
            "combat",
            f"Why fight a war machine away from {scrap} lying on the ground?",
            f"a wounded machine eats {scrap} to mend itself",
            (f"{scrap} makes it explode", f"{scrap} slows me down", f"{scrap} calls more machines"),
        )


@step_rule
class Intimidation(StepRule):
    name = "intimidation"
    after = ("scrap_mending",)
    optional = True
    description = (
        "Friendly people and machines lose health while enemies share their area: people recover when "
        "safe, woken machines power down, and frightened traders flee."
    )

    @dataclass(frozen=True)
    class Params:
        loss: int = 2  # health lost per enemy in the area, per step (never below 1)
        recover: int = 1  # health people regain per step with no enemy about
        shutdown: float = 0.25  # a woken machine at or below this share of its health powers down
        flee_below: float = 0.34  # a roaming trader at or below this share of its health runs

    #: (rule book, game, hostile types, machine types) of the last engine seen: the types depend on the
    #: game and the rule book alone, and this rule walks every NPC of the world at every step
    _kinds: tuple[Any, Any, frozenset[str], frozenset[str]] | None = None

    def _types(self, engine: Engine) -> tuple[frozenset[str], frozenset[str]]:
        kinds = self._kinds
        if kinds is None or kinds[0] is not engine.rules or kinds[1] is not engine.game:
            npcs = engine.game.npcs
            hostile = frozenset(name for name, kind in npcs.items() if kind.hostile)
            machines = frozenset(name for name in npcs if is_machine(engine, name))
            kinds = self._kinds = (engine.rules, engine.game, hostile, machines)
        return kinds[2], kinds[3]

    def apply(self, engine: Engine) -> None:
        state = engine.state
        hostile, machines = self._types(engine)
        threat: dict[str, int] = {}
        friends: list[Npc] = []
        for npc in state.npcs.values():
            if npc.type in hostile:
                threat[npc.area] = threat.get(npc.area, 0) + 1
            else:
                friends.append(npc)
        recover = self.settings.recover
        for npc in friends:
            enemies = threat.get(npc.area, 0)
            if enemies:
                self._frighten(engine, npc, enemies, threat)
            elif npc.type not in machines:
                npc.hp = min(npc.max_hp, npc.hp + recover)

    def _frighten(self, engine: Engine, npc: Npc, enemies: int, threat: dict[str, int]) -> None:
        loss = min(self.settings.loss * enemies, npc.hp - 1)
        if loss <= 0:
            return
        npc.hp -= loss
        tell(
            engine,
            npc.area,
            f"{npc.handle} is shaken by the war machines here (-{loss} health, {npc.hp}/{npc.max_hp}).",
        )
        engine.emit("npc_intimidated", None, npc=npc.handle, type=npc.type, amount=loss, area=npc.area)
        state, kind = engine.state, engine.game.npcs[npc.type]
        if is_machine(engine, npc.type):
            if npc.hp <= npc.max_hp * self.settings.shutdown and npc.handle in _awake(state):
                _power_down(engine, npc)
        elif kind.merchant and npc.origin not in FIXED_ORIGINS and npc.hp <= npc.max_hp * self.settings.flee_below:
            refuge = next(
                (
                    a
                    for a, ex in state.areas[npc.area].exits.items()
                    if not ex.locked and a in state.areas and not threat.get(a) and is_world_area(state.areas[a])
                ),
                None,
            )
            if refuge is not None:
                frm = npc.area
                move_npc(engine, npc, refuge)
                engine.emit("npc_fled", None, npc=npc.handle, type=npc.type, frm=frm, to=refuge)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "allies",
            "What happens to friendly folk and sentinels that share an area with war machines?",
            "they lose health",
            ("they grow stronger", "they turn hostile", "nothing"),
        )


@step_rule
class DevilDrain(StepRule):
    name = "devil_drain"
    after = ("intimidation",)
    before = ("ambush",)
    optional = True
    description = "Carrying more devil-forged things than the limit (worn and packed alike) burns health every step."

    @dataclass(frozen=True)
    class Params:
        objects: tuple[str, ...] = ()  # the devil-forged object types
        limit: int = 3
        drain: int = 2  # health lost per step for each piece over the limit

        def __post_init__(self) -> None:
            if self.limit < 0:
                raise ValueError(f"limit: {self.limit} must be at least 0")

    def apply(self, engine: Engine) -> None:
        devil = self.settings.objects
        if not devil:
            return
        state, game = engine.state, engine.game
        get = state.instances.get
        for agent in state.agents.values():
            if agent.in_tutorial:
                continue
            # type_of inlined (asked of everything carried, at every step): a handle with no instance is its type
            n = 0
            for h, k in agent.hands.items():
                inst = get(h)
                if (h if inst is None else inst.type) in devil:
                    n += k
            for h in agent.equipment.values():
                inst = get(h)
                if (h if inst is None else inst.type) in devil:
                    n += 1
            for c in held_containers(game, state, agent):
                for h, k in state.instances[c].contents.items():
                    inst = get(h)
                    if (h if inst is None else inst.type) in devil:
                        n += k
            if n <= self.settings.limit:
                continue
            damage = self.settings.drain * (n - self.settings.limit)
            agent.hp -= damage
            engine.say(
                agent.id,
                f"The devil-forged things I carry ({n} pieces) sear me for {damage} damage: more "
                f"than {self.settings.limit} is more than I can bear.",
            )
            engine.emit("devil_burn", agent.id, count=n, damage=damage)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "items",
            "How many devil-forged things can I carry before they start to burn me?",
            str(self.settings.limit),
            _near_numbers(self.settings.limit),
        )


@step_rule
class TacticalWarnings(StepRule):
    name = "tactical_warnings"
    after = ("ambush",)  # after the combat rhythm and ambushes: the stance it names is the one coming next
    optional = True
    description = "A friendly beside me in a fight calls out the next move of every enemy fighting me."

    def apply(self, engine: Engine) -> None:
        state, kinds = engine.state, engine.game.npcs
        for agent in state.agents.values():
            if agent.combat is None:
                continue
            here = state.areas[agent.area].npcs
            friends = [h for h in here if not kinds[state.npcs[h].type].hostile]
            if not friends:
                continue
            allies = _allies(state)
            mine = [h for h in friends if allies.get(h) == agent.id]
            warner = (mine or friends)[0]
            for handle in here:
                foe = state.npcs[handle]
                if foe.engaged != agent.id:
                    continue
                move = stance(engine, foe)
                warning = f"{handle} will {STANCE_WORDS[move]} next!"
                if move == "attack" and _jammed(state, handle):  # (a jam whose time is up is gone by now)
                    warning = f"{handle} will try to strike next, but its gears are jammed!"
                engine.say(agent.id, f'{warner} warns: "{warning}"')
                engine.emit("tactical_warning", agent.id, by=warner, npc=handle, stance=move)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "allies",
            "How can I learn a war machine's next move in a fight?",
            "a friendly in the area calls it out",
            ("inspect the sky", "it is printed on the machine", "I cannot"),
        )


@step_rule
class Reclamation(StepRule):
    name = "reclamation"
    after = ("night_spawn",)  # between the night's spawns and respawn
    optional = True
    description = (
        "War machines reclaim open land nobody has visited for a while: a machine of its level moves in "
        "(a few at most in the whole world, one per area)."
    )

    @dataclass(frozen=True)
    class Params:
        period: int = 25
        delay: int = 60  # steps since an area was last visited before it may be reclaimed
        chance: float = 0.5
        max_alive: int = 3
        per_area: int = 1

    def start(self, engine: Engine) -> None:
        engine.state.rule_data[self.name] = {"last_seen": {}}

    def apply(self, engine: Engine) -> None:
        state = engine.state
        seen = state.rule_data[self.name]["last_seen"]
        for agent in state.agents.values():
            seen[agent.area] = state.step
        if state.step % self.settings.period:
            return
        alive: dict[str, int] = {}
        for npc in state.npcs.values():
            if npc.origin == "reclaim":
                alive[npc.area] = alive.get(npc.area, 0) + 1
        if sum(alive.values()) >= self.settings.max_alive:
            return
        here = occupied(state)
        options = [
            name
            for name in _open_land(state)
            if name != state.spawn
            and name not in here
            and state.step - seen.get(name, 0) >= self.settings.delay
            and alive.get(name, 0) < self.settings.per_area
            and _claimant(engine, state.areas[name].level)
        ]
        if not options or engine.rng.random() >= self.settings.chance:
            return
        name = pick(engine, options)
        kind = _claimant(engine, state.areas[name].level)
        assert kind is not None, "options holds only areas with a claimant"
        npc = spawn_npc(engine.game, state, kind, name, origin="reclaim")
        for agent in state.agents.values():
            engine.say(agent.id, f"Far off, gears grind: a {kind.name} has come to reclaim {name}.")
        engine.emit("territory_reclaimed", None, area=name, npc=npc.handle, type=kind.name)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "world",
            "What happens to open land nobody visits for a long time?",
            "war machines move back in",
            ("it crumbles away", "traders settle there", "nothing"),
        )


def _open_land(state: WorldState) -> list[str]:
    """World areas reachable from the spawn over unlocked paths (breadth first, stable)."""
    return list(breadth_first(state, state.spawn, _open_way(state)))


def _open_way(state: WorldState) -> Passable:
    """Unlocked paths into world areas (never through the tutorial)."""
    return lambda here, there, exit: not exit.locked and is_world_area(state.areas[there])


def _claimant(engine: Engine, level: int) -> NpcType | None:
    """The common enemy that claims land of ``level``: the strongest kind not above it (file order breaks ties)."""
    kinds = spawnable_enemies(engine.game, max_level=level)
    return max(kinds, key=lambda t: t.level) if kinds else None


@step_rule
class Corrosion(StepRule):
    name = "corrosion"
    after = ("respawn",)
    optional = True
    description = (
        "Whatever is left lying on the ground (dropped, crafted, fallen from the defeated) rusts into "
        "scrap after a while; what the world started with, and keys, notes and bags, never do."
    )

    @dataclass(frozen=True)
    class Params:
        period: int = 5
        delay: int = 40  # steps a thing may lie before it rusts
        into: str = "rust_scrap"
        spared: tuple[str, ...] = ("station", "quest", "key", "currency", "container", "writable")
        max_litter: int = 32  # remembered piles per area (the oldest rust first)

    def start(self, engine: Engine) -> None:
        if self.settings.into not in engine.game.objects:
            raise ValueError(f"corrosion: unknown object {self.settings.into!r}")
        state = engine.state
        engine.state.rule_data[self.name] = {
            "seen": {name: dict(area.objects) for name, area in state.areas.items() if is_world_area(area)},
            "litter": {},
        }

    def _rusts(self, engine: Engine, handle: str) -> bool:
        kind = type_of(engine.state, handle)
        return kind != self.settings.into and engine.game.objects[kind].category not in self.settings.spared

    def apply(self, engine: Engine) -> None:
        state = engine.state
        if state.step % self.settings.period:
            return
        memory = state.rule_data[self.name]
        seen, litter = memory["seen"], memory["litter"]
        for name, area in state.areas.items():
            now = area.objects
            before = seen.get(name)
            if before is None or not is_world_area(area):
                if is_world_area(area):
                    seen[name] = dict(now)  # an area new to the world (expansion): its things are not litter
                continue
            if before == now and name not in litter:
                continue
            piles = litter.setdefault(name, [])
            for handle, n in before.items():
                gone = n - now.get(handle, 0)
                if gone > 0:
                    _take_back(piles, handle, gone)
            for handle, n in now.items():
                grown = n - before.get(handle, 0)
                if grown > 0 and self._rusts(engine, handle):
                    piles.append([handle, grown, state.step])
            rotted: dict[str, int] = {}
            keep = []
            for pile in piles:
                handle, units, since = pile
                if state.step - since < self.settings.delay:
                    keep.append(pile)
                    continue
                remove(now, handle, units)  # piles never count more than lies here: what went was taken back
                add(now, self.settings.into, units)
                rotted[handle] = rotted.get(handle, 0) + units
            del keep[: max(0, len(keep) - self.settings.max_litter)]
            if keep:
                litter[name] = keep
            else:
                del litter[name]
            seen[name] = dict(now)
            for handle, k in rotted.items():
                tell(engine, name, f"The {handle} left lying here has rusted into {k} {self.settings.into}.")
                engine.emit("object_corroded", None, area=name, object=type_of(state, handle), amount=k)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "world",
            "What happens to things I leave lying on the ground?",
            f"they rust into {self.settings.into} after a while",
            ("they stay forever", "a merchant takes them", "they return to my pack"),
        )


def _take_back(piles: list[list[Any]], handle: str, units: int) -> None:
    """Units of ``handle`` left the ground: forget them, newest piles first (an emptied pile goes)."""
    for i in range(len(piles) - 1, -1, -1):
        pile = piles[i]
        if pile[0] == handle:
            k = min(units, pile[1])
            if k == pile[1]:
                del piles[i]
            else:
                pile[1] -= k
            units -= k
            if not units:
                return


@step_rule
class ForgeMigration(StepRule):
    name = "forge_migration"
    after = ("corrosion",)  # the world's processes done, before the quests look
    optional = True
    description = (
        "Every so often a roaming trader walks toward the nearest forge without a trader of its own; "
        "one trader keeps each forge, and nobody walks off while an agent is at the stall."
    )

    @dataclass(frozen=True)
    class Params:
        period: int = 20
        stations: tuple[str, ...] = ("smithy_forge",)

    def apply(self, engine: Engine) -> None:
        state = engine.state
        if state.step % self.settings.period:
            return
        forges = [
            name
            for name, area in state.areas.items()
            if is_world_area(area) and any(s in area.objects for s in self.settings.stations)
        ]
        if not forges:
            return
        kinds = engine.game.npcs
        traders = [n for n in state.npcs.values() if kinds[n.type].merchant and roams(engine, n)]
        keeper: dict[str, str] = {}
        for npc in traders:
            if npc.area in forges:
                keeper.setdefault(npc.area, npc.handle)
        here = occupied(state)
        for npc in traders:
            if npc.area in here or keeper.get(npc.area) == npc.handle:
                continue
            free = {f for f in forges if f not in keeper}
            hop = first_step(state, npc.area, free, _open_way(state)) if free else None
            if hop is None:
                continue
            frm = npc.area
            move_npc(engine, npc, hop)
            if hop in free:
                keeper[hop] = npc.handle
            engine.emit("merchant_migrated", None, npc=npc.handle, type=npc.type, frm=frm, to=hop)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "trade",
            "Where do roaming traders go over time?",
            "to the forges",
            ("to the camp", "into the wilds", "nowhere: they never move"),
        )


# ============================================================================ quest predicate
@predicate("has_used")
def has_used(engine: Engine, agent: Agent, verb: str, on: str | None = None, count: int = 1) -> bool:
    """The agent has used one of this game's verbs at least ``count`` times (on ``on``: an object or NPC
    type, an area, or a siphon's direction ``charge`` / ``drain``)."""
    log: dict[str, int] = engine.state.rule_data.get(verb, {}).get("log", {}).get(agent.id, {})
    return log.get(on or "", 0) >= count
