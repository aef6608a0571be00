"""Quest conditions as goals: each condition type of the vocabulary, and the ``did`` predicate.

For every type in ``odyssey_env.quests.conditions.VOCABULARY`` there is ``_c_<type>`` (the next
command toward it, None when it holds) and ``_e_<type>`` (a rough cost in steps, used to pick the
cheapest branch of an ``any_of`` or the cheapest open stage). They reduce conditions to the
primitives of the other parts: going somewhere, having or holding things, fighting.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from odyssey_agents.oracle.core import INF, SAFE_TEXT, PlannerBase, Stuck

if TYPE_CHECKING:
    from odyssey_env.quests.spec import Condition


class Goals(PlannerBase):
    """Quest conditions mapped onto primitive goals."""

    # ================================================================== conditions
    def achieve(self, c: Condition) -> str | None:
        """Next command toward condition ``c``; None when it holds (state conditions) already."""
        handler = getattr(self, f"_c_{c.type}", None)
        if handler is None:
            raise Stuck(f"no plan for condition type {c.type!r}")
        return handler(c)

    def estimate(self, c: Condition) -> float:
        """Rough steps to satisfy ``c`` (INF when no plan is known). Memoised per step by identity:
        only for conditions that live as long as the game (the quest's own)."""
        key = ("est", id(c))
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = INF  # cycle guard
        handler = getattr(self, f"_e_{c.type}", None)
        try:
            value = handler(c) if handler is not None else INF
        except Stuck:
            value = INF
        self._memo[key] = value
        return value

    # ---- events -------------------------------------------------------------
    def _c_npc_defeated(self, c: Condition) -> str | None:
        wanted = (c.npc,) if c.npc else c.npcs
        return self.defeat_any(wanted)

    def _e_npc_defeated(self, c: Condition) -> float:
        return self.cost_defeat((c.npc,) if c.npc else c.npcs)

    def _c_object_crafted(self, c: Condition) -> str | None:
        return self.craft(c.object, 1)

    def _e_object_crafted(self, c: Condition) -> float:
        return self.cost_craft(c.object, 1)

    def _c_object_bought(self, c: Condition) -> str | None:
        merchant = self._best_merchant(c.object)
        if merchant is None:
            raise Stuck(f"no merchant sells {c.object}")
        return self.buy(c.object, 1, merchant)

    def _e_object_bought(self, c: Condition) -> float:
        m = self._best_merchant(c.object)
        return INF if m is None else self.cost_buy(c.object, 1, m)

    def _c_object_sold(self, c: Condition) -> str | None:
        merchant = self._buyer_for(c.object)
        if merchant is None:
            raise Stuck(f"no merchant buys {c.object}")
        with self.need(c.object, 1):
            cmd = self.have(c.object, 1)
        if cmd is not None:
            return cmd
        return self.go(merchant.area) or f"sell 1 {self._carried_handle(c.object)} {merchant.handle}"

    def _e_object_sold(self, c: Condition) -> float:
        m = self._buyer_for(c.object)
        return INF if m is None else self.cost_have(c.object, 1) + self.travel(m.area) + 1

    def _c_area_entered(self, c: Condition) -> str | None:
        if self.v.here == c.area:
            exits = [a for a, ex in self.v.state.areas[self.v.here].exits.items() if not ex.locked]
            if not exits:
                raise Stuck(f"cannot step out of {c.area} to enter it again")
            return f"enter {exits[0]}"
        return self.go(c.area)

    def _e_area_entered(self, c: Condition) -> float:
        return 2 if self.v.here == c.area else self.travel(c.area)

    def _c_talked_to(self, c: Condition) -> str | None:
        npcs = self.v.npcs.get(c.npc, [])
        best = min(npcs, key=lambda n: self.travel(n.area), default=None)
        if best is None or self.travel(best.area) == INF:
            raise Stuck(f"nobody of kind {c.npc} can be reached")
        return self.go(best.area) or f"talk to {best.handle}"

    def _e_talked_to(self, c: Condition) -> float:
        return min((self.travel(n.area) + 1 for n in self.v.npcs.get(c.npc, [])), default=INF)

    def _c_text_written(self, c: Condition) -> str | None:
        return self.write(c.text or SAFE_TEXT, c.object)

    def _e_text_written(self, c: Condition) -> float:
        return self.cost_write(c.object, c.text or SAFE_TEXT)

    def _c_object_eaten(self, c: Condition) -> str | None:
        if "eat" not in self.v.verbs:
            raise Stuck("this game has no eat verb")
        if self.v.carried.get(c.object, 0) or self.v.lying_count(self.v.here, c.object):
            return f"eat {c.object}"
        with self.need(c.object, 1):
            return self.have(c.object, 1)

    def _e_object_eaten(self, c: Condition) -> float:
        return self.cost_have(c.object, 1) + 1 if "eat" in self.v.verbs else INF

    def _c_object_dropped(self, c: Condition) -> str | None:
        return self.drop_in(c.object, c.area)

    def _e_object_dropped(self, c: Condition) -> float:
        return self.cost_have(c.object, 1) + (self.travel(c.area) if c.area else 0) + 2

    # ---- states -------------------------------------------------------------
    def _c_in_area(self, c: Condition) -> str | None:
        return self.go(c.area)

    def _e_in_area(self, c: Condition) -> float:
        return self.travel(c.area)

    def _c_has_item_count(self, c: Condition) -> str | None:
        worn = self.v.owned(c.object) - self.v.carried.get(c.object, 0)
        if self.v.owned(c.object) >= c.count:
            return None
        with self.need(c.object, c.count - worn):
            return self.have(c.object, c.count - worn)

    def _e_has_item_count(self, c: Condition) -> float:
        worn = self.v.owned(c.object) - self.v.carried.get(c.object, 0)
        return self.cost_have(c.object, c.count - worn)

    def _c_equipped_any_of(self, c: Condition) -> str | None:
        v = self.v
        if any(v.tname(h) in c.objects for h in v.agent.equipment.values()):
            return None
        best = self.sticky_min(("equip_any", *c.objects), list(c.objects), lambda t: self.cost_have(t, 1))
        if best is None:
            raise Stuck(f"none of {', '.join(c.objects)} can be had")
        return self.equip(best)

    def _e_equipped_any_of(self, c: Condition) -> float:
        if any(self.v.tname(h) in c.objects for h in self.v.agent.equipment.values()):
            return 0
        return min((self.cost_have(t, 1) + 2 for t in c.objects), default=INF)

    def _c_holds_category(self, c: Condition) -> str | None:
        v = self.v
        if any(v.otype(h).category == c.category for h in v.agent.hands):
            return None
        t = self._cheapest_of_category(c.category)
        if t is None:
            raise Stuck(f"no {c.category} can be had")
        return self.hold(t)

    def _e_holds_category(self, c: Condition) -> float:
        if any(self.v.otype(h).category == c.category for h in self.v.agent.hands):
            return 0
        t = self._cheapest_of_category(c.category)
        return INF if t is None else self.cost_hold(t)

    def _c_visited_k_of(self, c: Condition) -> str | None:
        areas = c.areas or tuple(self.v.game.areas)
        visited = self.v.agent.visited
        if sum(1 for a in areas if a in visited) >= c.count:
            return None
        todo = [a for a in areas if a not in visited and a in self.v.state.areas]
        if not todo:
            raise Stuck("no unvisited area of the set exists")
        return self.go(min(todo, key=lambda a: (self.travel(a), todo.index(a))))

    def _e_visited_k_of(self, c: Condition) -> float:
        areas = c.areas or tuple(self.v.game.areas)
        visited = self.v.agent.visited
        missing = c.count - sum(1 for a in areas if a in visited)
        if missing <= 0:
            return 0
        costs = sorted(self.travel(a) for a in areas if a not in visited and a in self.v.state.areas)
        return sum(costs[:missing]) if len(costs) >= missing else INF

    def _c_defeated_n(self, c: Condition) -> str | None:
        kills = self.v.agent.kills
        done = kills.get(c.npc, 0) if c.npc else sum(kills.values())
        if done >= c.count:
            return None
        return self.defeat_any((c.npc,) if c.npc else ())

    def _e_defeated_n(self, c: Condition) -> float:
        kills = self.v.agent.kills
        done = kills.get(c.npc, 0) if c.npc else sum(kills.values())
        if done >= c.count:
            return 0
        return (c.count - done) * self.cost_defeat((c.npc,) if c.npc else ())

    def _c_text_equals_in(self, c: Condition) -> str | None:
        from odyssey_env.quests.conditions import holds

        if holds(self.v.engine, self.v.agent, c):
            return None
        handle = self._written(c.text, c.object)
        if handle is None:
            return self.write(c.text, c.object)
        if c.area is None:  # carried is enough
            return self._fetch_handle(handle)
        return self.drop_handle_in(handle, c.area)

    def _e_text_equals_in(self, c: Condition) -> float:
        return self.cost_write(c.object, c.text) + (self.travel(c.area) + 2 if c.area else 0)

    def _c_object_in_area(self, c: Condition) -> str | None:
        v = self.v
        if c.area in v.state.areas and v.lying_count(c.area, c.object) >= c.count:
            return None
        with self.sparing(c.area, c.object):  # what lies there already counts: bring more
            return self.drop_in(c.object, c.area)

    def _e_object_in_area(self, c: Condition) -> float:
        missing = c.count - self.v.lying_count(c.area, c.object)
        if missing <= 0:
            return 0
        with self.sparing(c.area, c.object):
            return self.cost_have(c.object, missing) + self.travel(c.area) + 2

    def _c_level_at_least(self, c: Condition) -> str | None:
        if self.v.agent.level >= c.count:
            return None
        return self.gain_xp()

    def _e_level_at_least(self, c: Condition) -> float:
        body = self.v.game.spec.agent
        need = (c.count - 1) * body.xp_per_level - self.v.agent.xp
        return max(0.0, need / 3)

    def _c_stage_completed(self, c: Condition) -> str | None:
        from odyssey_env.quests.main_quest import plan

        data = self.v.state.rule_data.get("main_quest")
        if data and c.stage in data["agents"][self.agent_id]["done"]:
            return None
        main = self.v.game.quest.main
        if main is None:
            raise Stuck("no main quest")
        return self.achieve(plan(main).by_id[c.stage].done)

    def _e_stage_completed(self, c: Condition) -> float:
        from odyssey_env.quests.main_quest import plan

        data = self.v.state.rule_data.get("main_quest")
        if data and c.stage in data["agents"][self.agent_id]["done"]:
            return 0
        main = self.v.game.quest.main
        return INF if main is None else self.estimate(plan(main).by_id[c.stage].done)

    # ---- combinators ----------------------------------------------------------
    def _c_any_of(self, c: Condition) -> str | None:
        from odyssey_env.quests.conditions import holds

        subs = list(c.conditions)
        if any(_family(s) != "event" and holds(self.v.engine, self.v.agent, s) for s in subs):
            return None
        order = sorted(range(len(subs)), key=lambda i: (self.estimate(subs[i]), i))
        first = self.sticky_min(("any_of", repr(c)), order, lambda i: self.estimate(subs[i]))
        if first is not None:  # the branch followed last step stays first unless another is clearly cheaper
            order.remove(first)
            order.insert(0, first)
        reasons = []
        for i in order:
            try:
                cmd = self.achieve(subs[i])
            except Stuck as exc:
                reasons.append(str(exc))
                continue
            if cmd is not None:
                return cmd
        raise Stuck("no branch of any_of can be reached: " + "; ".join(reasons))

    def _e_any_of(self, c: Condition) -> float:
        return min((self.estimate(s) for s in c.conditions), default=INF)

    def _c_all_of(self, c: Condition) -> str | None:
        from odyssey_env.quests.conditions import holds

        # Things to acquire first, then places to be, then the events that must happen last.
        def rank(s: Condition) -> int:
            fam = _family(s)
            if fam == "event":
                return 2
            return 1 if s.type == "in_area" else 0

        pending = False
        for s in sorted(c.conditions, key=rank):
            if _family(s) != "event" and holds(self.v.engine, self.v.agent, s):
                continue
            pending = True
            cmd = self.achieve(s)
            if cmd is not None:
                return cmd
        return None if not pending else self._idle()

    def _e_all_of(self, c: Condition) -> float:
        return sum(self.estimate(s) for s in c.conditions)

    def _c_predicate(self, c: Condition) -> str | None:
        if c.name == "did":  # the engine's own event predicate (odyssey_env.steprules.event_checks)
            args = dict(c.args)
            return self.cause(args.pop("kind", ""), args)
        if c.plan:
            return self._follow_plan(c)
        raise Stuck(f"predicate {c.name!r} is opaque to the planner (it has no plan)")

    def _e_predicate(self, c: Condition) -> float:
        if c.plan:
            return sum(self.estimate(s) for s in self._plan_left(c))
        if c.name != "did":
            return INF
        kind = c.args.get("kind", "")
        as_condition = _event_condition(kind, {k: v for k, v in c.args.items() if k != "kind"})
        if as_condition is None:
            return 4
        try:  # not estimate(): its memo is keyed by identity, and this condition is made afresh
            return getattr(self, f"_e_{as_condition.type}")(as_condition)
        except Stuck:
            return INF

    # ---- a game's own predicates, through their plans -------------------------
    @staticmethod
    def plan_key(c: Condition) -> str:
        """A stable name for a predicate condition (the same in every process, for checkpoints)."""
        return f"{c.name}:{json.dumps(c.args, sort_keys=True, default=str)}"

    def _plan_left(self, c: Condition) -> list[Condition]:
        """The steps of ``c``'s plan still to do: state steps that do not hold, event steps not yet caused."""
        from odyssey_env.quests.conditions import holds

        v, key = self.v, self.plan_key(c)
        passed = self.plan_progress.get(key, 0)
        left = []
        for i, step in enumerate(c.plan):
            if _family(step) == "event" or (step.type == "predicate" and step.name == "did"):
                if i < passed:
                    continue
                if holds(v.engine, v.agent, step):  # it happened on the step just played
                    self.plan_progress[key] = passed = i + 1
                    continue
            elif holds(v.engine, v.agent, step):
                continue
            left.append(step)
        return left

    def _follow_plan(self, c: Condition) -> str | None:
        """Next command of a predicate's plan: the first step that is not done, in order.

        A state step counts while it holds (and is redone if it stops holding); an event step counts
        once it has happened. When every step is done the predicate should hold: if it does not, its
        plan is wrong, which the caller learns as :class:`Stuck`.
        """
        left = self._plan_left(c)
        if not left:
            raise Stuck(f"every step of the plan of predicate {c.name!r} is done, yet it does not hold")
        command = self.achieve(left[0])
        return command if command is not None else self._idle()

    # ---- causing one event (the ``did`` predicate) ------------------------------
    def cause(self, kind: str, match: dict[str, Any]) -> str | None:
        """Next command toward making an event ``kind`` with data ``match`` happen this step."""
        as_condition = _event_condition(kind, match)
        if as_condition is not None:
            return self.achieve(as_condition)
        handler = getattr(self, f"_did_{kind}", None)
        if handler is None:
            return self._cause_by_trial(kind, match)
        return handler(**match)

    def _cause_by_trial(self, kind: str, match: dict[str, Any]) -> str:
        """A command valid now whose step makes an event ``kind`` (data matching ``match``) happen.

        Events of a game's own verbs (its ``rules.py``) have no handler here, so each listed command
        of those verbs, then of the engine's optional verbs, is played on a copy of the world and
        the first whose events match is chosen. Preconditions the verb needs must come first (in a
        predicate's plan); when no command makes the event now this is :class:`Stuck`.
        """
        from odyssey_env.engine import Turn
        from odyssey_env.rules import BASE_VERBS, OPTIONAL_VERBS

        v = self.v
        key = ("trial", kind, json.dumps(match, sort_keys=True, default=str), v.state.step)
        if key in self._memo:
            found = self._memo[key]
        else:
            found = None
            rules = v.engine.rules.actions
            # the game's own verbs (any the engine does not define, shipped games' included) first
            own = [verb for verb in rules if verb not in BASE_VERBS and verb not in OPTIONAL_VERBS]
            order = own + [verb for verb in OPTIONAL_VERBS if verb in rules]
            probe = Turn(v.engine, v.agent, probe=True)
            for verb in order:
                for command in rules[verb].candidates(probe):
                    if any(ev.kind == kind and ev.agent == self.agent_id and
                           all(ev.data.get(k) == want for k, want in match.items())
                           for ev in simulate(v.engine, self.agent_id, command)):
                        found = command
                        break
                if found is not None:
                    break
            self._memo[key] = found
        if found is None:
            raise Stuck(f"no command now causes a {kind!r} event")
        return found

    def _did_object_inspected(self, object: str | None = None, handle: str | None = None) -> str | None:
        v = self.v
        visible = [*v.agent.hands, *v.agent.equipment.values(),
                   *(h for c in v.containers() for h in v.state.instances[c].contents),
                   *v.state.areas[v.here].objects]
        for h in visible:
            if (handle is None or h == handle) and (object is None or v.tname(h) == object):
                return f"inspect {h}"
        if object is None:
            raise Stuck("nothing to inspect")
        spots = [a for a, _, _ in v.ground.get(object, ()) if self.travel(a) < INF]
        if spots:
            return self.go(min(spots, key=lambda a: (self.travel(a), spots.index(a))))
        with self.need(object, 1):
            return self.have(object, 1)

    def _did_npc_inspected(self, type: str | None = None, npc: str | None = None) -> str | None:
        v = self.v
        options = [n for n in v.state.npcs.values() if (npc is None or n.handle == npc)
                   and (type is None or n.type == type) and self.travel(n.area) < INF]
        if not options:
            raise Stuck("nobody to inspect")
        target = min(options, key=lambda n: (self.travel(n.area), n.handle))
        return self.go(target.area) or f"inspect {target.handle}"

    def _did_area_inspected(self, area: str | None = None) -> str | None:
        if area is None:
            return f"inspect {self.v.here}"
        return self.go(area) or f"inspect {area}"

    def _container_for(self, size: int) -> str | None:
        """A held or worn container with room for ``size``."""
        for c in self.v.containers():
            if self.v.room_in(c) >= size:
                return c
        return None

    def _need_container(self) -> str | None:
        """Next command toward holding or wearing any container; None when I do."""
        if self.v.containers():
            return None
        t = self._cheapest_of_category("container")
        if t is None:
            raise Stuck("no container to be had")
        return self.equip(t)

    def _did_object_stored(self, object: str | None = None, container: str | None = None,
                           amount: int | None = None, handle: str | None = None) -> str | None:
        v = self.v
        if object is None:
            raise Stuck("store what?")
        cmd = self._need_container()
        if cmd is not None:
            return cmd
        n = amount or 1
        ot = v.game.objects[object]
        here = v.agent.hands.get(object, 0) + v.state.areas[v.here].objects.get(object, 0)
        item = object if not ot.instanced else next(
            (h for h in [*v.agent.hands, *v.state.areas[v.here].objects] if v.tname(h) == object), None)
        if item is None or (not ot.instanced and here < n):
            loc = v.where_carried(object)
            if loc is not None:  # packed already: take it out to store it again
                return f"take out {loc[0]} {loc[1]}" if v.fits_hands(loc[0]) else self.make_room()
            with self.need(object, n):
                return self.have(object, n)
        reachable = v.containers()
        box = container if container in reachable else self._container_for(ot.size * n)
        if box is None:
            box = container if container in reachable else reachable[-1]
            with self.need(object, n):
                return self.make_container_room(box, ot.size * n)
        return f"store {n} {item} {box}"

    def _did_object_taken_out(self, object: str | None = None, container: str | None = None,
                              amount: int | None = None, handle: str | None = None) -> str | None:
        v = self.v
        if object is None:
            raise Stuck("take out what?")
        loc = v.where_carried(object)
        if loc is not None and (container is None or loc[1] == container):
            if v.fits_hands(loc[0]):
                return f"take out {loc[0]} {loc[1]}"
            with self.keeping(container):
                return self.make_room()
        return self._did_object_stored(object, container)

    def _did_object_discarded(self, object: str | None = None, container: str | None = None,
                              amount: int | None = None, handle: str | None = None, area: str | None = None
                              ) -> str | None:
        v = self.v
        if object is None:
            raise Stuck("discard what?")
        if area is not None and v.here != area:
            return self.go(area)
        loc = v.where_carried(object)
        if loc is not None and (container is None or loc[1] == container):
            return f"discard {amount or 1} {loc[0]} {loc[1]}"
        return self._did_object_stored(object, container, amount)

    def _did_object_equipped(self, object: str | None = None, handle: str | None = None,
                             slot: str | None = None) -> str | None:
        v = self.v
        if object is None:
            raise Stuck("equip what?")
        worn = v.worn(object)
        if worn is not None:  # to equip it again, take it off first
            return f"unequip {worn}" if v.fits_hands(worn) else self.make_room()
        return self.equip(object)

    def _did_object_unequipped(self, object: str | None = None, handle: str | None = None,
                               slot: str | None = None) -> str | None:
        v = self.v
        if object is None:
            raise Stuck("unequip what?")
        worn = v.worn(object)
        if worn is None:
            return self.equip(object)
        return f"unequip {worn}" if v.fits_hands(worn) else self.make_room()


def simulate(engine: Any, agent_id: str, command: str) -> list[Any]:
    """The events ``command`` would cause now, played on a copy of the world (the engine is untouched)."""
    import copy
    import pickle
    import random

    sim = copy.copy(engine)
    sim.state = pickle.loads(pickle.dumps(engine.state, protocol=pickle.HIGHEST_PROTOCOL))
    sim.rng = random.Random()
    sim.rng.setstate(engine.rng.getstate())
    sim.options = dict(engine.options)
    sim.step({agent_id: command})
    return list(sim.events)


def _family(c: Condition) -> str:
    from odyssey_env.quests.conditions import VOCABULARY

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


def _event_condition(kind: str, match: dict[str, Any]) -> Condition | None:
    """The vocabulary condition equivalent to ``did(kind, **match)``, when there is one."""
    from odyssey_env.quests.spec import Condition

    fields = _EVENT_CONDITIONS.get(kind)
    if fields is None or set(match) - set(fields):
        return None
    return Condition(type=kind, **{fields[k]: v for k, v in match.items()})
