"""Goals stated as events: the ``did`` predicate, and what kind of thing a condition is.

A predicate ``did(kind, **match)`` holds on the step an event of that kind (with that data) happens.
When the event says the same as a condition of the quest vocabulary, that condition is planned
instead. The engine's optional verbs have a handler each (``inspect``, ``store``, ``take out``,
``discard``, ``equip``, ``unequip``), in a table keyed by event kind. A game's own verbs (its
``rules.py``) cannot be read, so their events are caused by trial: each listed command is played on
a copy of the world until one makes the event happen; failing that, what the verbs say they
:meth:`~odyssey_env.rules.ActionRule.needs` first is pursued.
"""

from __future__ import annotations

import copy
import json
import pickle
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from odyssey_agents.oracle.core import INF, Focus, Stuck
from odyssey_env.quests.conditions import VOCABULARY, holds
from odyssey_env.quests.spec import Condition
from odyssey_env.rules import BASE_RULE_MODULES, OPTIONAL_VERBS
from odyssey_env.turn import Turn

if TYPE_CHECKING:
    from odyssey_agents.oracle.navigation import Navigation
    from odyssey_agents.oracle.supply import Supply
    from odyssey_agents.oracle.view import View
    from odyssey_env.quests.spec import Condition

__all__ = ["Events", "event_condition", "family", "holds_now", "simulate"]


class Events:
    """Causing one event on purpose.

    It owns the step's trial results and the guard against a verb's needs leading back to the same
    event (shared by causing and costing, so that an estimate made while causing an event does not
    recurse into it). It reads the view; its peers are navigation and supply, and the planner's
    ``achieve`` and ``cost`` for a condition that an event or a verb's need amounts to.
    """

    def __init__(
        self,
        agent_id: str,
        focus: Focus,
        navigation: Navigation,
        supply: Supply,
        achieve: Callable[[Condition], str | None],
        cost: Callable[[Condition], float],
    ) -> None:
        """``cost`` is the raw estimate of a condition (not memoised: the conditions asked about are
        made afresh); it may raise :class:`Stuck`."""
        self.agent_id = agent_id
        self.focus = focus
        self.navigation = navigation
        self.supply = supply
        self.achieve = achieve
        self.cost = cost
        self.view: View  # set by begin() every step
        self._memo: dict[tuple[Any, ...], str | None] = {}
        self._causing: list[str] = []  # event kinds whose verbs' needs are being pursued (cycle guard)

    def begin(self, view: View) -> None:
        """A new step: commands that caused an event before are tried again on the world as it is now."""
        self.view = view
        self._memo = {}
        self._causing = []

    def cause(self, kind: str, match: dict[str, Any]) -> str | None:
        """Next command toward making an event ``kind`` with data ``match`` happen this step."""
        as_condition = event_condition(kind, match)
        if as_condition is not None:
            return self.achieve(as_condition)
        handler = _HANDLERS.get(kind)
        if handler is None:
            return self._cause_by_trial(kind, match)
        return handler(self, **match)

    def _cause_by_trial(self, kind: str, match: dict[str, Any]) -> str | None:
        """A command valid now whose step makes an event ``kind`` (data matching ``match``) happen.

        Events of a game's own verbs (its ``rules.py``) have no handler here, so each listed command
        of those verbs, then of the engine's optional verbs, is played on a copy of the world and
        the first whose events match is chosen. When no command makes the event now, the verbs that
        declare they emit it are asked what they :meth:`~odyssey_env.rules.ActionRule.needs` first
        (a lamp, its oil, a place to stand), and that is pursued; failing that, or in a predicate's
        plan whose earlier steps were not done, this is :class:`Stuck`.
        """

        v = self.view
        rules = v.engine.rules.actions
        own = [verb for verb, rule in rules.items() if _own_rule(rule)]
        order = own + [verb for verb in OPTIONAL_VERBS if verb in rules]
        key = ("trial", kind, json.dumps(match, sort_keys=True, default=str), v.state.step)
        if key in self._memo:
            found = self._memo[key]
        else:
            found = None
            probe = Turn(v.engine, v.agent, probe=True)
            for verb in order:
                for command in rules[verb].candidates(probe):
                    if any(
                        ev.kind == kind
                        and ev.agent == self.agent_id
                        and all(ev.data.get(k) == want for k, want in match.items())
                        for ev in simulate(v.engine, self.agent_id, command)
                    ):
                        found = command
                        break
                if found is not None:
                    break
            self._memo[key] = found
        if found is not None:
            return found
        if kind not in self._causing:  # a verb's needs may lead back to the same event: ask once
            self._causing.append(kind)
            try:
                for verb in order:
                    rule = rules[verb]
                    if kind not in rule.emits:
                        continue
                    need = rule.needs(v.engine, v.agent, match)
                    if need is not None and not holds_now(v, need):
                        return self.achieve(need)
            finally:
                self._causing.pop()
        raise Stuck(f"no command now causes a {kind!r} event")

    def need_cost(self, kind: str, match: dict[str, Any]) -> float:
        """Rough steps to the first thing a verb emitting ``kind`` says it :meth:`needs` (the hint
        :meth:`_cause_by_trial` pursues), so that the estimate of a game's own event weighs the walk or
        the making it takes first. 0 when nothing is missing, or when the need is out of reach now (no
        proof that the event cannot be caused: the need's own needs may open the way)."""
        v = self.view
        if kind in self._causing:
            return 0
        self._causing.append(kind)
        try:
            for rule in v.engine.rules.actions.values():
                if kind not in rule.emits:
                    continue
                need = rule.needs(v.engine, v.agent, match)
                if need is None or holds_now(v, need):
                    continue
                try:  # not estimate(): the need is made afresh
                    cost = self.cost(need)
                except Stuck:
                    return 0
                return cost if cost < INF else 0
        finally:
            self._causing.pop()
        return 0

    # ---- the engine's optional verbs ------------------------------------------
    def did_object_inspected(self, object: str | None = None, handle: str | None = None) -> str | None:
        v = self.view
        visible = [
            *v.agent.hands,
            *v.agent.equipment.values(),
            *(h for c in v.containers() for h in v.state.instances[c].contents),
            *v.objects_at(v.here),
        ]
        for h in visible:
            if (handle is None or h == handle) and (object is None or v.tname(h) == object):
                return f"inspect {h}"
        if object is None:
            raise Stuck("nothing to inspect")
        spots = [a for a, _, _ in v.ground.get(object, ()) if self.navigation.travel(a) < INF]
        if spots:
            return self.navigation.go(min(spots, key=lambda a: (self.navigation.travel(a), spots.index(a))))
        with self.focus.need(object, 1):
            return self.supply.have(object, 1)

    def did_npc_inspected(self, type: str | None = None, npc: str | None = None) -> str | None:
        v = self.view
        options = [
            n
            for n in v.state.npcs.values()
            if (npc is None or n.handle == npc)
            and (type is None or n.type == type)
            and self.navigation.travel(n.area) < INF
        ]
        if not options:
            raise Stuck("nobody to inspect")
        target = min(options, key=lambda n: (self.navigation.travel(n.area), n.handle))
        return self.navigation.go(target.area) or f"inspect {target.handle}"

    def did_area_inspected(self, area: str | None = None) -> str | None:
        if area is None:
            return f"inspect {self.view.here}"
        return self.navigation.go(area) or f"inspect {area}"

    def did_object_stored(
        self,
        object: str | None = None,
        container: str | None = None,
        amount: int | None = None,
        handle: str | None = None,
    ) -> str | None:
        v = self.view
        if object is None:
            raise Stuck("store what?")
        cmd = self.supply.need_container()
        if cmd is not None:
            return cmd
        n = amount or 1
        ot = v.game.objects[object]
        lying = v.objects_at(v.here)
        here = v.agent.hands.get(object, 0) + lying.get(object, 0)
        item = object if not ot.instanced else next((h for h in [*v.agent.hands, *lying] if v.tname(h) == object), None)
        if item is None or (not ot.instanced and here < n):
            loc = v.where_carried(object)
            if loc is not None:  # packed already: take it out to store it again
                return f"take out {loc[0]} {loc[1]}" if v.fits_hands(loc[0]) else self.supply.make_room()
            with self.focus.need(object, n):
                return self.supply.have(object, n)
        reachable = v.containers()
        box = container if container in reachable else self.supply.container_for(ot.size * n)
        if box is None:
            box = container if container in reachable else reachable[-1]
            with self.focus.need(object, n):
                return self.supply.make_container_room(box, ot.size * n)
        return f"store {n} {item} {box}"

    def did_object_taken_out(
        self,
        object: str | None = None,
        container: str | None = None,
        amount: int | None = None,
        handle: str | None = None,
    ) -> str | None:
        v = self.view
        if object is None:
            raise Stuck("take out what?")
        loc = v.where_carried(object)
        if handle is not None:  # that very one (of several alike, one may be written on)
            loc = next(((handle, c) for c in v.containers() if handle in v.state.instances[c].contents), loc)
        if loc is not None and (container is None or loc[1] == container):
            if v.fits_hands(loc[0]):
                return f"take out {loc[0]} {loc[1]}"
            with self.focus.keeping(container):
                return self.supply.make_room()
        return self.did_object_stored(object, container)

    def did_object_discarded(
        self,
        object: str | None = None,
        container: str | None = None,
        amount: int | None = None,
        handle: str | None = None,
        area: str | None = None,
    ) -> str | None:
        v = self.view
        if object is None:
            raise Stuck("discard what?")
        if area is not None and v.here != area:
            return self.navigation.go(area)
        loc = v.where_carried(object)
        if loc is not None and (container is None or loc[1] == container):
            return f"discard {amount or 1} {loc[0]} {loc[1]}"
        return self.did_object_stored(object, container, amount)

    def did_object_equipped(
        self, object: str | None = None, handle: str | None = None, slot: str | None = None
    ) -> str | None:
        v = self.view
        if object is None:
            raise Stuck("equip what?")
        worn = v.worn(object)
        if worn is not None:  # to equip it again, take it off first
            return f"unequip {worn}" if v.fits_hands(worn) else self.supply.make_room()
        return self.supply.equip(object)

    def did_object_unequipped(
        self, object: str | None = None, handle: str | None = None, slot: str | None = None
    ) -> str | None:
        v = self.view
        if object is None:
            raise Stuck("unequip what?")
        worn = v.worn(object)
        if worn is None:
            return self.supply.equip(object)
        return f"unequip {worn}" if v.fits_hands(worn) else self.supply.make_room()


#: The engine's optional verbs' events, each with the method that causes it; an event's data is passed
#: as keyword arguments (its field names, ``object`` and ``type`` among them).
_HANDLERS: dict[str, Callable[..., str | None]] = {
    "object_inspected": Events.did_object_inspected,
    "npc_inspected": Events.did_npc_inspected,
    "area_inspected": Events.did_area_inspected,
    "object_stored": Events.did_object_stored,
    "object_taken_out": Events.did_object_taken_out,
    "object_discarded": Events.did_object_discarded,
    "object_equipped": Events.did_object_equipped,
    "object_unequipped": Events.did_object_unequipped,
}


def simulate(engine: Any, agent_id: str, command: str) -> list[Any]:
    """The events ``command`` would cause now, played on a copy of the world (the engine is untouched)."""

    sim = copy.copy(engine)
    sim.state = pickle.loads(pickle.dumps(engine.state, protocol=pickle.HIGHEST_PROTOCOL))
    sim.rng = random.Random()
    sim.rng.setstate(engine.rng.getstate())
    sim.options = dict(engine.options)
    sim.step({agent_id: command})
    return list(sim.events)


def _own_rule(rule: Any) -> bool:
    """Whether an action rule is a game's own (its ``rules.py``, shipped or not), not one of the engine's."""

    return type(getattr(rule, "rule", rule)).__module__ not in BASE_RULE_MODULES  # (a provenance wrapper's rule)


def holds_now(v: Any, c: Condition) -> bool:
    """Whether a state condition holds now (an event condition never holds before it happens)."""

    return family(c) != "event" and not (c.type == "predicate" and c.name == "did") and holds(v.engine, v.agent, c)


def family(c: Condition) -> str:
    """The condition's family in the vocabulary (``"event"``, ``"state"``, ``"combinator"``), or
    ``"predicate"`` for a game's own: an event holds only on the step it happens, so it is never taken
    as done beforehand, and it is planned last."""

    kind = VOCABULARY.get(c.type)
    return kind.family if kind is not None else "predicate"


#: Event kinds whose ``did`` check says the same as a condition type of the vocabulary:
#: event data field -> condition field.
_EVENT_CONDITIONS: dict[str, dict[str, str]] = {
    "npc_defeated": {"type": "npc"},
    "object_crafted": {"object": "object"},
    "object_bought": {"object": "object"},
    "object_sold": {"object": "object"},
    "area_entered": {"area": "area"},
    "talked_to": {"type": "npc"},
    "text_written": {"text": "text", "object": "object"},
    "object_eaten": {"object": "object"},
    "object_dropped": {"object": "object", "area": "area"},
}


def event_condition(kind: str, match: dict[str, Any]) -> Condition | None:
    """The vocabulary condition equivalent to ``did(kind, **match)``, when there is one."""

    fields = _EVENT_CONDITIONS.get(kind)
    if fields is None or set(match) - set(fields):
        return None
    return Condition(type=kind, **{fields[k]: v for k, v in match.items()})
