"""Listing valid actions, with each verb's commands reused while what they depend on stays the same.

A verb declares what its ``candidates`` read (:attr:`odyssey_env.rules.ActionRule.depends_on`, from the
closed vocabulary :data:`odyssey_env.rules.DEPENDENCIES`). Every listing reads a *fingerprint* of each
declared part of the state straight from the live state: the agent's hands as their handles in order
and a copy of the counts, the NPCs here as a tuple of handles, and so on. A verb is listed afresh only
when one of its fingerprints differs from those of its last listing; otherwise its last commands are
reused. The last few whole listings are remembered too, for an agent that walks back to where it was.

Fingerprints, not change notifications, on purpose: nothing has to route its changes through the cache.
A step rule, a game's ``rules.py``, another agent acting in the same step, a test that edits the state
by hand, ``load_state``: whatever changed the state, the next listing sees it. What can go wrong is a
verb that reads something it did not declare; a verb that declares nothing is listed afresh every time,
and the check mode (``ODYSSEY_CHECK_VALID_ACTIONS=1``, or ``Engine(..., check_valid_actions=True)``)
lists every verb afresh beside the cache and raises :class:`StaleListingError` on any difference. The
engine's tests walk every shipped game in that mode.

Caches are per agent and per state object: agents never share one, and a replaced state (``load_state``,
a restored snapshot) starts afresh. The commands returned are fresh lists each time; the cache keeps
tuples that callers cannot reach.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Hashable, Iterable
from itertools import chain, compress
from marshal import dumps
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from odyssey_env.rules import DEPENDENCIES, ActionRule, RuleBook
from odyssey_env.turn import ProbeTurn

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.game import Game
    from odyssey_env.state import Agent, Area, WorldState

CHECK_ENV = "ODYSSEY_CHECK_VALID_ACTIONS"
#: Listings remembered per agent besides the last one (compared, never hashed: a miss costs little).
RECENT = 4
#: Where the rule language keeps its memory in ``rule_data`` (``odyssey_env.rulelang.runtime.KEY``, which
#: imports the engine: not imported here).
VARS_KEY = "rulelang"


class StaleListingError(AssertionError):
    """The cached valid actions differ from a fresh listing: a verb reads state it does not declare."""


def check_from_environment() -> bool:
    return os.environ.get(CHECK_ENV, "") not in ("", "0")


# ---------------------------------------------------------------------- fingerprints
# One fingerprint per dependency, all read by `snapshot` in one pass: a Python call per dependency would
# cost more than most of them, and plain loops beat chains of iterators on collections this small. Each
# is an immutable value, equal exactly when the part of the state it names is the same, or more
# sensitive than that (which only costs a needless fresh listing); a handle names one type for good,
# so handles stand for their types. A holding (a ``{handle: count}`` dict) is fingerprinted as its keys in
# order and a copy: cheaper to take and to compare than a tuple of its items, and as exact.
#
#   place            the agent's area (its name)
#   exits            the ways out of the agent's area: neighbor, locked, pickable, key
#   hands            what the agent holds, with counts, in order
#   worn             what the agent wears, slot by slot (the pack included)
#   containers       the contents of every instance the agent holds or wears (its bags, its pack)
#   purse            the coins the agent carries, in hands and in the instances it holds or wears
#   ground           what lies on the ground here, with counts, in order (not what is inside it)
#   ground_contents  the contents of every instance lying here
#   npcs             the NPCs here, by handle, in order (their types follow from their handles)
#   npc_goods        what each NPC here carries: its inventory and its coins
#   npc_moods        which NPCs here are wary of agents *now* (wary_until against the current step)
#   combat           the agent's fight: its target, and whom each NPC here is engaged with
#   body             the agent's own numbers: health, level, experience, stamina, attack, defense, guard
#   time             the step and the clock (a verb that depends on time is listed afresh every step)
#   vars             the tables of the rule-language variables the rule book's verbs name in reads_vars
#                    (flags and counters: one plain value per key, so a copy of each table is exact)
#   data             the values under the rule_data keys the rule book's verbs name in reads_data (a Python
#                    rule's own memory), as marshal bytes (version 2: no back references). rule_data holds
#                    JSON-ready values only (saving needs it); marshal writes them faithfully, so different
#                    values never give the same bytes, and equal ones do up to key order and string interning
#                    (more sensitive: a needless fresh listing at worst). 3x cheaper than their repr.
#   company          the other agents here: each one's id, what it holds and wears (with counts, in order)
#                    and the contents of those things (a light another agent carries lights my way)

_HANDS, _GROUND = DEPENDENCIES.index("hands"), DEPENDENCIES.index("ground")
_NOTHING: tuple[tuple[str, ...], dict[str, int]] = ((), {})
_EXIT = attrgetter("locked", "pickable", "key")
_BODY = attrgetter("hp", "max_hp", "level", "xp", "stamina", "base_attack", "attack", "defense", "defending")


def snapshot(
    game: Game,
    state: WorldState,
    agent: Agent,
    area: Area,
    need: tuple[bool, ...],
    var_names: tuple[str, ...] = (),
    data_keys: tuple[str, ...] = (),
) -> tuple[Hashable, ...]:
    """The fingerprints of the dependencies flagged in ``need`` (in :data:`DEPENDENCIES` order; None
    for the others), as the agent sees the state now; ``var_names``: the variables ``vars`` covers,
    ``data_keys``: the ``rule_data`` keys ``data`` covers."""
    (
        place,
        exits,
        hands,
        worn,
        containers,
        purse,
        ground,
        ground_contents,
        npcs,
        npc_goods,
        npc_moods,
        combat,
        body,
        time,
        rule_vars,
        rule_data,
        company,
    ) = need
    held, wearing, here = agent.hands, agent.equipment, area.npcs
    # An empty holding is one shared fingerprint (never changed: fingerprints are only compared).
    held_now = ((tuple(held), held.copy()) if held else _NOTHING) if hands or containers else None
    worn_now = ((tuple(wearing), wearing.copy()) if wearing else _NOTHING) if worn or containers else None
    bags = goods = moods = fight = lying = coins = None
    if containers or purse:
        get = state.instances.get
        currency = game.currency
        inside = []
        coins = held.get(currency, 0) if currency is not None else 0
        for handle in chain(held, wearing.values()) if wearing else held:
            inst = get(handle)
            if inst is not None:
                contents = inst.contents
                inside.append((tuple(contents), contents.copy()))
                if currency is not None:
                    coins += contents.get(currency, 0)
        if containers:
            bags = (held_now, worn_now, tuple(inside) if inside else ())
        if not purse:
            coins = None
    who = tuple(here) if npcs or npc_goods or npc_moods or combat else None
    if combat and agent.combat is not None:
        everyone = state.npcs
        fight = (agent.combat, who, tuple([everyone[handle].engaged for handle in here]))
    if npc_goods or npc_moods:
        everyone, step = state.npcs, state.step
        stocks, wary = [], []
        for handle in here:
            npc = everyone[handle]
            inventory = npc.inventory
            stocks.append((tuple(inventory), inventory.copy(), npc.coins))
            wary.append(npc.wary_until >= step)
        if npc_goods:
            goods = (who, tuple(stocks))
        if npc_moods:
            moods = (who, tuple(wary))
    if ground_contents:
        get = state.instances.get
        opened = []
        for handle in area.objects:
            inst = get(handle)
            if inst is not None:
                opened.append((handle, tuple(inst.contents), inst.contents.copy()))
        lying = (tuple(area.objects), tuple(opened))
    return (
        agent.area if place else None,
        (tuple(area.exits), tuple(map(_EXIT, area.exits.values()))) if exits else None,
        held_now if hands else None,
        worn_now if worn else None,
        bags,
        coins,
        (tuple(area.objects), area.objects.copy()) if ground else None,
        lying,
        who if npcs else None,
        goods,
        moods,
        fight,
        _BODY(agent) if body else None,
        (state.step, state.minute) if time else None,
        _tables(state, var_names) if rule_vars else None,
        dumps(list(map(state.rule_data.get, data_keys)), 2) if rule_data else None,
        _company(state, agent) if company else None,
    )


def _company(state: WorldState, agent: Agent) -> tuple[Hashable, ...]:
    """The other agents in the agent's area, each with what it carries (in the agents' order)."""
    where, get = agent.area, state.instances.get
    others: list[Hashable] = []
    for other in state.agents.values():
        if other is agent or other.area != where:
            continue
        held, wearing = other.hands, other.equipment
        inside = []
        for handle in chain(held, wearing.values()):
            inst = get(handle)
            if inst is not None:
                inside.append((tuple(inst.contents), inst.contents.copy()))
        others.append((other.id, tuple(held), held.copy(), tuple(wearing.items()), tuple(inside)))
    return tuple(others)


def _tables(state: WorldState, names: tuple[str, ...]) -> tuple[dict[str, Any] | None, ...]:
    """Copies of the named variables' tables (None for one never written) in the rule language's memory."""
    memory = state.rule_data.get(VARS_KEY)
    tables = memory.get("vars") if memory is not None else None
    if not tables:
        return ()
    return tuple([table.copy() if table is not None else None for table in map(tables.get, names)])


def declared_dependencies(rule: ActionRule) -> tuple[str, ...] | None:
    """What ``rule`` declares its candidates depend on, or None (list it afresh every time).

    Only a declaration on the rule's own class counts: a subclass inherits ``candidates`` and the
    helpers it calls, but may change what they read, so it is trusted only once it says so itself.
    """
    return type(rule).__dict__.get("depends_on")


# ---------------------------------------------------------------------- the plan of a rule book
class _Plan:
    """What a rule book's listing needs, worked out once: the fingerprints in use, and who reads which."""

    __slots__ = (
        "always",
        "always_mask",
        "data_keys",
        "dependents",
        "masks",
        "need",
        "rules",
        "stale",
        "used",
        "var_names",
        "verbs",
    )

    def __init__(self, rules: RuleBook):
        self.verbs: tuple[str, ...] = tuple(rules.actions)
        self.rules: tuple[ActionRule, ...] = tuple(rules.actions.values())
        declared = [declared_dependencies(rule) for rule in self.rules]
        #: per dependency (DEPENDENCIES order): the indices of the verbs that read it
        self.dependents: tuple[tuple[int, ...], ...] = tuple(
            tuple(v for v, d in enumerate(declared) if d is not None and k in d) for k in DEPENDENCIES
        )
        self.need: tuple[bool, ...] = tuple(bool(d) for d in self.dependents)
        #: the variables whose tables the ``vars`` fingerprint copies: all that any verb reading them names
        read = {n for rule, d in zip(self.rules, declared, strict=True) if d and "vars" in d for n in rule.reads_vars}
        self.var_names: tuple[str, ...] = tuple(sorted(read))
        #: the rule_data keys whose values the ``data`` fingerprint reads: all that any verb reading them names
        keys = {k for rule, d in zip(self.rules, declared, strict=True) if d and "data" in d for k in rule.reads_data}
        self.data_keys: tuple[str, ...] = tuple(sorted(keys))
        #: the dependencies in use, those read by the most verbs first: once they changed, the others
        #: need not even be compared for the verbs they already made stale
        self.used: tuple[int, ...] = tuple(
            sorted((i for i, d in enumerate(self.dependents) if d), key=lambda i: -len(self.dependents[i]))
        )
        #: indices of the verbs listed afresh every time (nothing declared)
        self.always: tuple[int, ...] = tuple(v for v, d in enumerate(declared) if d is None)
        #: the same sets of verbs as bit masks (bit v: verb v), cheaper to combine at every listing
        self.masks: tuple[int, ...] = tuple(sum(1 << v for v in d) for d in self.dependents)
        self.always_mask: int = sum(1 << v for v in self.always)
        #: the verb indices of the masks met so far (few: the combinations of what changes together)
        self.stale: dict[int, tuple[int, ...]] = {}

    def stale_verbs(self, mask: int) -> tuple[int, ...]:
        """The indices of the verbs whose bits are set in ``mask``, in rule-book order."""
        verbs = self.stale.get(mask)
        if verbs is None:
            verbs = self.stale[mask] = tuple(v for v in range(len(self.rules)) if mask >> v & 1)
        return verbs


_PLANS: weakref.WeakKeyDictionary[RuleBook, _Plan] = weakref.WeakKeyDictionary()


def _plan(rules: RuleBook) -> _Plan:
    plan = _PLANS.get(rules)
    if plan is None:
        plan = _PLANS[rules] = _Plan(rules)
    return plan


# ---------------------------------------------------------------------- listing
class Listing:
    """One agent's valid actions in one engine, cached per verb."""

    __slots__ = (
        "agent_id",
        "check",
        "commands",
        "engine",
        "fingerprints",
        "listed",
        "listed_verbs",
        "plan",
        "recent",
        "rules",
        "state",
    )

    def __init__(self, engine: Engine, agent_id: str, *, check: bool = False):
        self.engine = engine
        self.agent_id = agent_id
        self.check = check
        self.rules = engine.rules
        self.plan = _plan(engine.rules)
        self.state: WorldState | None = None  # the state object the cache was filled from
        self.fingerprints: tuple[Hashable, ...] | None = None
        self.commands: list[tuple[str, ...]] = []  # per verb, in rule-book order
        self.listed_verbs: tuple[str, ...] = ()  # the verbs with commands, in rule-book order...
        self.listed: tuple[tuple[str, ...], ...] = ()  # ...and their commands
        #: the last few listings, newest first: walking back where it was, an agent finds its old listing
        self.recent: list[tuple[tuple[Hashable, ...], tuple[tuple[str, ...], ...]]] = []

    def valid_actions(self) -> dict[str, list[str]]:
        engine = self.engine
        if engine.rules is not self.rules:  # another rule book (a test, a tool): another plan, a fresh cache
            self.rules, self.plan, self.state = engine.rules, _plan(engine.rules), None
        state = engine.state
        agent = state.agents[self.agent_id]
        plan = self.plan
        fingerprints = snapshot(
            engine.game, state, agent, state.areas[agent.area], plan.need, plan.var_names, plan.data_keys
        )
        if fingerprints != self.fingerprints or state is not self.state or plan.always:
            self._refresh(fingerprints, state)
        if self.check:
            self._verify()
        return dict(zip(self.listed_verbs, map(list, self.listed), strict=True))

    def _refresh(self, fingerprints: tuple[Hashable, ...], state: WorldState) -> None:
        plan, old = self.plan, self.fingerprints
        stale: Iterable[int]
        if state is not self.state or old is None:
            self.commands = [()] * len(plan.rules)
            self.recent = []
            stale = range(len(plan.rules))
        else:
            hands, ground = _HANDS, _GROUND  # the most changeable: compared first, a miss costs little
            for k, (seen, listed) in enumerate(self.recent):
                if seen[hands] == fingerprints[hands] and seen[ground] == fingerprints[ground] and seen == fingerprints:
                    del self.recent[k]
                    self.commands = list(listed)
                    stale = plan.always
                    break
            else:
                changed, masks = plan.always_mask, plan.masks
                for i in plan.used:
                    mask = masks[i]
                    if changed | mask != changed and fingerprints[i] != old[i]:
                        changed |= mask
                stale = plan.stale_verbs(changed)
        commands, rules = self.commands, plan.rules
        if stale:
            turn = ProbeTurn(self.engine, state.agents[self.agent_id])
            for i in stale:
                commands[i] = tuple(rules[i].candidates(turn))
        self.recent.insert(0, (fingerprints, tuple(commands)))
        del self.recent[RECENT:]
        self.listed_verbs = tuple(compress(plan.verbs, commands))
        self.listed = tuple(filter(None, commands))
        self.fingerprints = fingerprints
        self.state = state

    def _verify(self) -> None:
        turn = ProbeTurn(self.engine, self.engine.state.agents[self.agent_id])
        problems = []
        for verb, rule, cached in zip(self.plan.verbs, self.plan.rules, self.commands, strict=True):
            fresh = tuple(rule.candidates(turn))
            if fresh != cached:
                problems.append(
                    f"verb {verb!r} (depends_on={declared_dependencies(rule)!r}): cached "
                    f"{list(cached)!r}, fresh {list(fresh)!r}"
                )
        if problems:
            raise StaleListingError(
                f"valid actions of agent {self.agent_id!r} at step {self.engine.state.step} are stale; a verb "
                "reads state its depends_on does not declare:\n  " + "\n  ".join(problems)
            )
