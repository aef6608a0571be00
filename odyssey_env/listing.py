"""Listing valid actions, with each verb's commands reused while what they depend on stays the same.

A verb declares what its ``candidates`` read (:attr:`odyssey_env.rules.ActionRule.depends_on`, from the
closed vocabulary :data:`odyssey_env.rules.DEPENDENCIES`). Every listing reads a *fingerprint* of each
declared part of the state straight from the live state: the agent's hands as a tuple of their items,
the NPCs here as a tuple of handles, and so on. A verb is listed afresh only when one of its
fingerprints differs from those of its last listing; otherwise its last commands are reused.

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
from collections.abc import Hashable
from operator import attrgetter
from typing import TYPE_CHECKING

from odyssey_env.rules import DEPENDENCIES, ActionRule, RuleBook

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.state import Agent, Area, WorldState

CHECK_ENV = "ODYSSEY_CHECK_VALID_ACTIONS"


class StaleListingError(AssertionError):
    """The cached valid actions differ from a fresh listing: a verb reads state it does not declare."""


def check_from_environment() -> bool:
    return os.environ.get(CHECK_ENV, "") not in ("", "0")


# ---------------------------------------------------------------------- fingerprints
# One fingerprint per dependency, all read by `snapshot` in one pass (a Python call per dependency would
# cost more than most of them). Each is an immutable value, equal exactly when the part of the state it
# names is the same, or more sensitive than that (which only costs a needless fresh listing): a handle
# names one type for good, so handles stand for their types. They are on the hot path of every listing,
# hence the C-level chains of map/attrgetter instead of comprehensions.
#
#   place            the agent's area (its name)
#   exits            the ways out of the agent's area: neighbor, locked, pickable, key
#   hands            what the agent holds, with counts, in order
#   worn             what the agent wears, slot by slot (the pack included)
#   containers       the contents of every instance the agent holds or wears (its bags, its pack)
#   ground           what lies on the ground here, with counts, in order (not what is inside it)
#   ground_contents  the contents of every instance lying here
#   npcs             the NPCs here, by handle, in order (their types follow from their handles)
#   npc_goods        what each NPC here carries: its inventory and its coins
#   npc_moods        which NPCs here are wary of agents *now* (wary_until against the current step)
#   combat           the agent's fight: its target, and which NPCs here are engaged with whom
#   body             the agent's own numbers: health, level, experience, stamina, attack, defense, guard
#   time             the step and the clock (a verb that depends on time is listed afresh every step)

_EXIT = attrgetter("locked", "pickable", "key")
_CONTENTS = attrgetter("contents")
_INVENTORY = attrgetter("inventory")
_COINS = attrgetter("coins")
_WARY_UNTIL = attrgetter("wary_until")
_ENGAGED = attrgetter("engaged")
_BODY = attrgetter("hp", "max_hp", "level", "xp", "stamina", "base_attack", "attack", "defense", "defending")
_items = dict.items


def _contents(instances: dict, handles) -> tuple:
    """Contents of the instances among ``handles``, in order (which handles are instances never changes)."""
    return tuple(map(tuple, map(_items, map(_CONTENTS, filter(None, map(instances.get, handles))))))


def snapshot(state: WorldState, agent: Agent, area: Area, need: tuple[bool, ...]) -> tuple[Hashable, ...]:
    """The fingerprints of the dependencies flagged in ``need`` (in :data:`DEPENDENCIES` order; None
    for the others), as the agent sees the state now."""
    (place, exits, hands, worn, containers, ground, ground_contents, npcs, npc_goods, npc_moods, combat, body,
     time) = need
    held, wearing, here = agent.hands, agent.equipment, area.npcs
    others = list(map(state.npcs.__getitem__, here)) if npc_goods or npc_moods or combat else ()
    return (
        agent.area if place else None,
        (tuple(area.exits), tuple(map(_EXIT, area.exits.values()))) if exits else None,
        tuple(held.items()) if hands else None,
        tuple(wearing.items()) if worn else None,
        (tuple(held), tuple(wearing.values()), _contents(state.instances, held),
         _contents(state.instances, wearing.values())) if containers else None,
        tuple(area.objects.items()) if ground else None,
        (tuple(area.objects), _contents(state.instances, area.objects)) if ground_contents else None,
        tuple(here) if npcs else None,
        (tuple(here), tuple(map(tuple, map(_items, map(_INVENTORY, others)))), tuple(map(_COINS, others)))
        if npc_goods else None,
        (tuple(here), tuple(map(state.step.__le__, map(_WARY_UNTIL, others)))) if npc_moods else None,
        (agent.combat, tuple(here), tuple(map(_ENGAGED, others))) if combat and agent.combat is not None else None,
        _BODY(agent) if body else None,
        (state.step, state.minute) if time else None,
    )


def declared_dependencies(rule: ActionRule) -> tuple[str, ...] | None:
    """What ``rule`` declares its candidates depend on, or None (list it afresh every time).

    Only a declaration on the rule's own class counts: a subclass inherits ``candidates`` and the
    helpers it calls, but may change what they read, so it is trusted only once it says so itself.
    """
    return type(rule).__dict__.get("depends_on")


# ---------------------------------------------------------------------- the plan of a rule book
class _Plan:
    """What a rule book's listing needs, worked out once: the fingerprints in use, and who reads which."""

    __slots__ = ("always", "dependents", "need", "rules", "used", "verbs")

    def __init__(self, rules: RuleBook):
        self.verbs: tuple[str, ...] = tuple(rules.actions)
        self.rules: tuple[ActionRule, ...] = tuple(rules.actions.values())
        declared = [declared_dependencies(rule) for rule in self.rules]
        #: per dependency (DEPENDENCIES order): the indices of the verbs that read it
        self.dependents: tuple[tuple[int, ...], ...] = tuple(
            tuple(v for v, d in enumerate(declared) if d is not None and k in d) for k in DEPENDENCIES)
        self.need: tuple[bool, ...] = tuple(bool(d) for d in self.dependents)
        self.used: tuple[int, ...] = tuple(i for i, d in enumerate(self.dependents) if d)
        #: indices of the verbs listed afresh every time (nothing declared)
        self.always: tuple[int, ...] = tuple(v for v, d in enumerate(declared) if d is None)


_PLANS: weakref.WeakKeyDictionary[RuleBook, _Plan] = weakref.WeakKeyDictionary()


def _plan(rules: RuleBook) -> _Plan:
    plan = _PLANS.get(rules)
    if plan is None:
        plan = _PLANS[rules] = _Plan(rules)
    return plan


# ---------------------------------------------------------------------- listing
class Listing:
    """One agent's valid actions in one engine, cached per verb."""

    __slots__ = ("agent_id", "check", "commands", "engine", "fingerprints", "listed", "listed_verbs", "plan",
                 "state")

    def __init__(self, engine: Engine, agent_id: str, *, check: bool = False):
        self.engine = engine
        self.agent_id = agent_id
        self.check = check
        self.plan = _plan(engine.rules)
        self.state: WorldState | None = None  # the state object the cache was filled from
        self.fingerprints: tuple[Hashable, ...] | None = None
        self.commands: list[tuple[str, ...]] = []  # per verb, in rule-book order
        self.listed_verbs: tuple[str, ...] = ()  # the verbs with commands, in rule-book order...
        self.listed: tuple[tuple[str, ...], ...] = ()  # ...and their commands

    def valid_actions(self) -> dict[str, list[str]]:
        state = self.engine.state
        agent = state.agents[self.agent_id]
        fingerprints = snapshot(state, agent, state.areas[agent.area], self.plan.need)
        if fingerprints != self.fingerprints or state is not self.state or self.plan.always:
            self._refresh(fingerprints, state)
        if self.check:
            self._verify()
        return dict(zip(self.listed_verbs, map(list, self.listed), strict=True))

    def _refresh(self, fingerprints: tuple[Hashable, ...], state: WorldState) -> None:
        from odyssey_env.engine import Turn

        plan, old = self.plan, self.fingerprints
        if state is not self.state or old is None:
            self.commands = [()] * len(plan.rules)
            stale = range(len(plan.rules))
        else:
            changed: set[int] = set(plan.always)
            for i in plan.used:
                if fingerprints[i] != old[i]:
                    changed.update(plan.dependents[i])
            stale = sorted(changed)
        commands, rules = self.commands, plan.rules
        turn = Turn(self.engine, state.agents[self.agent_id], probe=True)
        for i in stale:
            commands[i] = tuple(rules[i].candidates(turn))
        pairs = [(verb, c) for verb, c in zip(plan.verbs, commands, strict=True) if c]
        self.listed_verbs = tuple(verb for verb, _ in pairs)
        self.listed = tuple(c for _, c in pairs)
        self.fingerprints = fingerprints
        self.state = state

    def _verify(self) -> None:
        from odyssey_env.engine import Turn

        turn = Turn(self.engine, self.engine.state.agents[self.agent_id], probe=True)
        problems = []
        for verb, rule, cached in zip(self.plan.verbs, self.plan.rules, self.commands, strict=True):
            fresh = tuple(rule.candidates(turn))
            if fresh != cached:
                problems.append(f"verb {verb!r} (depends_on={declared_dependencies(rule)!r}): cached "
                                f"{list(cached)!r}, fresh {list(fresh)!r}")
        if problems:
            raise StaleListingError(
                f"valid actions of agent {self.agent_id!r} at step {self.engine.state.step} are stale; a verb "
                "reads state its depends_on does not declare:\n  " + "\n  ".join(problems))
