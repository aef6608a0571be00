"""Goal decomposition: from a quest condition to the one command that makes progress now.

The planner is re-run from the true state every step (the world moves: ambushes, respawns, wandering
NPCs, shifting paths), so it keeps almost no plan between steps. A condition is broken into a few
primitive goals, each of which knows its next command:

* ``go(area)``: breadth-first over open paths; a locked way needs its key held in a hand when entering
  (or a lockpick, in games with that verb), which becomes a sub-goal;
* ``have(type, n)``: carry ``n`` units, from the cheapest *source*: lying on the ground somewhere,
  inside a container lying somewhere, crafted (recursively, at the area whose stations it needs),
  bought from a merchant (coins become a sub-goal: lying coins, loot, selling spare things), or
  looted from an enemy that drops it;
* ``hold(type)``: the same, then into a free hand (storing or dropping what is not needed);
* ``defeat(npc)``: forecast the fight (:mod:`.combat`), prepare when it would go badly (a better
  weapon, armor, food, experience), then strike;
* conditions of the quest vocabulary (``odyssey_env.quests.conditions.VOCABULARY``) map onto these.

Costs are estimated in steps with the same source model, so choices (which source, which branch of an
``any_of``, which open stage) go to the cheapest. A goal that cannot be reached raises :class:`Stuck`,
which lets a caller try something else. The only memory kept between steps is what breaks ties in
favour of the last choice (so the agent does not dither) and what the agent has found not to work.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from odyssey_agents.oracle import combat
from odyssey_agents.oracle.view import View

if TYPE_CHECKING:
    from odyssey_env.content import ObjectType
    from odyssey_env.engine import Engine
    from odyssey_env.quests.spec import Condition
    from odyssey_env.state import Npc

INF = math.inf
MAX_DEPTH = 6  # recipe nesting considered when costing a source
SAFE_TEXT = "notes"
LONG_FIGHT = 16  # a fight forecast to take longer than this is worth preparing for
RESERVE_STEPS = 60  # a type some plan needed this recently is not sold for coins
LET_GO_STEPS = 40  # what a goal put down is left alone by opportunism for this long
KIT = frozenset({"weapon", "armor", "key", "quest", "tool", "container", "writable"})  # never sold for coins


class Stuck(Exception):
    """This goal cannot be reached from the current state (the caller may try another)."""


Source = tuple[float, tuple[Any, ...], Callable[[], "str | None"]]


class Planner:
    """Decides one command per step for one agent. Holds only tie-breaking memory and bans."""

    def __init__(self, agent_id: str = "player"):
        self.agent_id = agent_id
        self.banned: dict[tuple[Any, ...], int] = {}  # source key -> step until which it is avoided
        self.last_choice: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # goal -> source key chosen last
        self.used: list[tuple[Any, ...]] = []  # source keys followed this step (for stall handling)
        self._fights: dict[tuple[Any, ...], combat.Forecast] = {}  # forecasts kept across steps
        self.calm_until = 0  # no opportunism before this step (set when the agent stalls)
        self.let_go: dict[str, int] = {}  # handle -> step a goal put it down (not picked up on a whim)
        self.reserved: dict[str, int] = {}  # object type -> last step a plan needed it (never sold)
        self.v: View
        self._memo: dict[tuple[Any, ...], float] = {}
        self._needed: dict[str, int] = {}
        self._keep: list[str] = []
        self._costing: int = 0
        self._protect: frozenset[str] = frozenset()
        self._routing: int = 0

    # ================================================================== entry point
    def decide(self, engine: Engine, goals: list[Condition]) -> tuple[str, str]:
        """The command for this step and a short reason."""
        self.v = View(engine, self.agent_id)
        self._memo = {}
        self._needed = {}
        self._keep = []
        self.used = []
        step = engine.state.step
        self.banned = {k: until for k, until in self.banned.items() if until > step}

        if self.v.engaged_foes():
            command, why = combat.fight_step(self.v)
            if command in ("wait", "defend"):
                lull = combat.no_blow_coming(self.v)
                food = self._food_at_hand()
                if lull and food is not None and self.v.agent.hp < self.v.agent.max_hp * 0.5:
                    return f"eat {food}", "eating in a lull of the fight"
                if lull or self.v.agent.hp > self.v.agent.max_hp * 0.5:
                    arm = self._arm()
                    if arm is not None:
                        return arm, "taking up my best weapon in the fight"
            return command, why

        self._protect = self._closure(goals)
        quick = self._opportunity() if step >= self.calm_until else None
        if quick is not None:
            return quick, "opportunity"

        ranked = sorted(enumerate(goals), key=lambda ig: (self.estimate(ig[1]), ig[0])) if len(goals) > 1 \
            else list(enumerate(goals))
        reasons = []
        for _, cond in ranked:
            try:
                command = self.achieve(cond)
            except Stuck as exc:
                reasons.append(str(exc))
                continue
            if command is not None:
                if command.startswith(("drop ", "discard ")):
                    self.let_go[command.split()[-1 if command.startswith("drop ") else -2]] = step
                return command, f"toward {cond.type}"
        return self._idle(), "idle: " + ("; ".join(reasons) or "nothing to do")

    def _closure(self, goals: list[Condition]) -> frozenset[str]:
        """Object types the goals name, with everything their recipes need (transitively): the
        things a goal may need, which are never sold for coins."""
        objects = self.v.game.objects
        todo: list[str] = []
        stack = list(goals)
        while stack:
            c = stack.pop()
            stack.extend(c.conditions)
            todo.extend(t for t in ((c.object,) if c.object else ()) + c.objects if t in objects)
        seen: set[str] = set()
        while todo:
            t = todo.pop()
            if t in seen:
                continue
            seen.add(t)
            recipe = objects[t].recipe
            if recipe is not None:
                todo.extend(recipe.ingredients)
        return frozenset(seen)

    # ================================================================== conditions
    def achieve(self, c: Condition) -> str | None:
        """Next command toward condition ``c``; None when it holds (state conditions) already."""
        handler = getattr(self, f"_c_{c.type}", None)
        if handler is None:
            raise Stuck(f"no plan for condition type {c.type!r}")
        return handler(c)

    def estimate(self, c: Condition) -> float:
        """Rough steps to satisfy ``c`` (INF when no plan is known)."""
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
        return self.craft(c.object, 1, final=True)

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
        return self.cost_write(c.object)

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
        options = sorted(c.objects, key=lambda t: (self.cost_have(t, 1), c.objects.index(t)))
        for t in options:
            if self.cost_have(t, 1) == INF:
                break
            return self.equip(t)
        raise Stuck(f"none of {', '.join(c.objects)} can be had")

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
        return self.cost_write(c.object) + (self.travel(c.area) + 2 if c.area else 0)

    def _c_object_in_area(self, c: Condition) -> str | None:
        v = self.v
        if c.area in v.state.areas and v.lying_count(c.area, c.object) >= c.count:
            return None
        return self.drop_in(c.object, c.area)

    def _e_object_in_area(self, c: Condition) -> float:
        missing = c.count - self.v.lying_count(c.area, c.object)
        if missing <= 0:
            return 0
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
        raise Stuck(f"predicate {c.name!r} is opaque to the planner")

    def _e_predicate(self, c: Condition) -> float:
        if c.name != "did":
            return INF
        kind = c.args.get("kind", "")
        as_condition = _event_condition(kind, {k: v for k, v in c.args.items() if k != "kind"})
        return self.estimate(as_condition) if as_condition is not None else 4

    # ---- causing one event (the ``did`` predicate) ------------------------------
    def cause(self, kind: str, match: dict[str, Any]) -> str | None:
        """Next command toward making an event ``kind`` with data ``match`` happen this step."""
        as_condition = _event_condition(kind, match)
        if as_condition is not None:
            return self.achieve(as_condition)
        handler = getattr(self, f"_did_{kind}", None)
        if handler is None:
            raise Stuck(f"no plan to cause a {kind!r} event")
        return handler(**match)

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
        box = container if container in v.containers() else self._container_for(ot.size * n)
        if box is None:
            raise Stuck(f"no room to store {object}")
        here = v.agent.hands.get(object, 0) + v.state.areas[v.here].objects.get(object, 0)
        item = object if not ot.instanced else next(
            (h for h in [*v.agent.hands, *v.state.areas[v.here].objects] if v.tname(h) == object), None)
        if item is not None and (ot.instanced or here >= n):
            return f"store {n} {item} {box}"
        loc = v.where_carried(object)
        if loc is not None:  # packed already: take it out to store it again
            return f"take out {loc[0]} {loc[1]}" if v.fits_hands(loc[0]) else self.make_room()
        with self.need(object, n):
            return self.have(object, n)

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

    # ================================================================== movement
    def travel(self, area: str | None) -> float:
        """Steps to reach ``area``: open paths, else through locks (with the cost of opening them)."""
        if area is None:
            return 0
        d = self.v.dist(area)
        if d is not None:
            return d
        if self._routing > 1:
            return INF  # a lock behind a lock behind a lock: not worth costing
        key = ("travel", area, self._routing)
        if key not in self._memo:
            route = self._locked_route(area)
            self._memo[key] = INF if route is None else route[0]
        return self._memo[key]

    def go(self, area: str) -> str | None:
        """Next command toward ``area``; None when already there."""
        v = self.v
        if area == v.here:
            return None
        if area not in v.state.areas:
            raise Stuck(f"{area} does not exist (yet)")
        hop = v.first_hop(area)
        if hop is not None:
            self.used.append(("go", area))
            return f"enter {hop}"
        route = self._locked_route(area)
        if route is None:
            raise Stuck(f"no way to {area}")
        path = route[1]
        for a, b in itertools.pairwise(path):
            if v.state.areas[a].exits[b].locked:
                if a != v.here:
                    # bring what opens the lock before walking up to it
                    cmd = self.open_way(a, b, carry_only=True)
                    if cmd is not None:
                        return cmd
                    hop = v.first_hop(a)
                    if hop is None:
                        raise Stuck(f"no open way to {a}")
                    return f"enter {hop}"
                return self.open_way(a, b)
        raise Stuck(f"no way to {area}")

    def _lock_cost(self, a: str, b: str) -> float:
        ex = self.v.state.areas[a].exits[b]
        best = INF
        self._routing += 1
        try:
            if ex.key is not None:
                best = 1 if self.v.in_hands(ex.key) else self.cost_have(ex.key, 1) + 1
            if "lockpick" in self.v.verbs and ex.pickable:
                pick = self._lockpick_type()
                if pick is not None:
                    best = min(best, self.cost_have(pick, 1) + 4)
        finally:
            self._routing -= 1
        return best

    def _locked_route(self, dst: str) -> tuple[float, list[str]] | None:
        """Cheapest route through locked ways, each costed by opening it (Dijkstra, stable ties)."""
        v = self.v
        areas = v.state.areas
        best = {v.here: 0.0}
        prev: dict[str, str] = {}
        heap: list[tuple[float, int, str]] = [(0.0, 0, v.here)]
        counter = 1
        lock_costs: dict[tuple[str, str], float] = {}
        while heap:
            d, _, a = heapq.heappop(heap)
            if d > best.get(a, INF):
                continue
            if a == dst:
                path = [a]
                while path[-1] != v.here:
                    path.append(prev[path[-1]])
                return d, path[::-1]
            for b, ex in areas[a].exits.items():
                if b not in areas:
                    continue
                w = 1.0
                if ex.locked:
                    pair = (a, b)
                    if pair not in lock_costs:
                        lock_costs[pair] = self._lock_cost(a, b)
                    w += lock_costs[pair]
                nd = d + w
                if nd < best.get(b, INF):
                    best[b] = nd
                    prev[b] = a
                    heapq.heappush(heap, (nd, counter, b))
                    counter += 1
        return None

    def open_way(self, a: str, b: str, carry_only: bool = False) -> str | None:
        """Standing at ``a``: open the locked way to ``b`` (key in hand, or a lockpick).

        With ``carry_only``, only make sure the key or pick is carried (before walking to the lock);
        None then means it is.
        """
        v = self.v
        ex = v.state.areas[a].exits[b]
        key_cost = INF
        if ex.key is not None:
            if v.in_hands(ex.key):
                return None if carry_only else f"enter {b}"
            key_cost = self.cost_have(ex.key, 1)
        pick = self._lockpick_type() if "lockpick" in v.verbs and ex.pickable else None
        pick_cost = self.cost_have(pick, 1) + 3 if pick is not None else INF
        if key_cost == INF and pick_cost == INF:
            raise Stuck(f"the way from {a} to {b} is locked and cannot be opened")
        tool = ex.key if key_cost <= pick_cost and ex.key is not None else pick
        assert tool is not None
        self.used.append(("key", tool))
        with self.need(tool, 1):
            if carry_only:
                return self.have(tool, 1)
            if tool == pick and v.in_hands(pick):
                return f"lockpick {b}"
            return self.hold(tool)

    def _lockpick_type(self) -> str | None:
        options = [o for o in self.v.game.spec.objects if "lockpick" in o.uses]
        if not options:
            return None
        return min(options, key=lambda o: (self.cost_have(o.name, 1), o.name)).name

    # ================================================================== having things
    @contextlib.contextmanager
    def need(self, type_name: str, n: int) -> Iterator[None]:
        """Mark ``n`` units of a type as needed by the goal being planned (not to be dropped)."""
        before = self._needed.get(type_name, 0)
        self._needed[type_name] = before + n
        self.reserved[type_name] = self.v.state.step
        try:
            yield
        finally:
            if before:
                self._needed[type_name] = before
            else:
                del self._needed[type_name]

    @contextlib.contextmanager
    def keeping(self, handle: str | None) -> Iterator[None]:
        """Mark a held object as one that must stay in hand while the goal is planned."""
        if handle is None:
            yield
            return
        self._keep.append(handle)
        try:
            yield
        finally:
            self._keep.pop()

    def cost_have(self, t: str, n: int) -> float:
        """Rough steps until ``n`` units of ``t`` are carried."""
        missing = n - self.v.carried.get(t, 0)
        if missing <= 0:
            return 0
        key = ("have", t, missing)
        if key in self._memo:
            return self._memo[key]
        if self._costing > MAX_DEPTH:
            return INF
        self._memo[key] = INF  # recipe cycles cost nothing less than infinity
        self._costing += 1
        try:
            best = min((s[0] for s in self._sources(t, missing)), default=INF)
        finally:
            self._costing -= 1
        self._memo[key] = best
        return best

    def have(self, t: str, n: int) -> str | None:
        """Next command toward carrying ``n`` units of ``t``; None when carried already."""
        v = self.v
        missing = n - v.carried.get(t, 0)
        if missing <= 0:
            return None
        sources = [s for s in self._sources(t, missing) if s[0] < INF]
        # bans only steer the choice: with nothing else left, a banned way is still a way
        sources = [s for s in sources if s[1] not in self.banned] or sources
        if not sources:
            raise Stuck(f"no way to get {missing} {t}")
        last = self.last_choice.get(("have", t))
        cheapest = min(s[0] for s in sources)

        def rank(s: Source) -> tuple[float, int]:
            # stay with last step's choice unless something is clearly cheaper (no dithering)
            sticky = s[1] == last and s[0] <= cheapest * 1.5 + 3
            return (cheapest if sticky else s[0], 0 if sticky else 1)

        sources.sort(key=rank)
        reasons = []
        for _cost, key, run in sources:
            try:
                cmd = run()
            except Stuck as exc:
                reasons.append(str(exc))
                continue
            self.last_choice[("have", t)] = key
            self.used.append(key)
            return cmd
        raise Stuck(f"no way to get {t}: " + "; ".join(reasons))

    def _sources(self, t: str, missing: int) -> list[Source]:
        """Every known way to get more ``t``, with its estimated cost in steps."""
        v = self.v
        out: list[Source] = []
        ot = v.game.objects.get(t)
        if ot is None or not ot.portable:
            return out
        here = v.here
        # lying on the ground
        for area, handle, count in v.ground.get(t, ()):
            d = 0 if area == here else self.travel(area)
            if d == INF:
                continue
            short = max(0, missing - count)
            cost = d + min(missing, count) + 3 * short
            if area == here:
                out.append((cost, ("pick", t, area), lambda h=handle: self.pick_up(h, missing)))
            else:
                out.append((cost, ("pick", t, area), lambda a=area: self.go(a)))
        # inside a container lying somewhere
        for area, box, _inner, count in v.boxed.get(t, ()):
            d = 0 if area == here else self.travel(area)
            if d == INF:
                continue
            cost = d + 3 + 3 * max(0, missing - count)
            out.append((cost, ("box", t, box), lambda a=area, b=box: self.go(a) or self.take_box(b)))
        # crafting
        if ot.recipe is not None:
            times = -(-missing // ot.recipe.yields)
            cost = self.cost_craft(t, times)
            if cost < INF:
                out.append((cost + 1, ("craft", t), lambda: self.craft(t, times)))
        # buying
        if v.currency and t != v.currency:
            for npc in self._merchants_selling(t):
                k = min(missing, npc.inventory.get(t, 0))
                cost = self.cost_buy(t, k, npc)
                if cost < INF:
                    out.append((cost + 3 * (missing - k), ("buy", t, npc.handle),
                                lambda m=npc, k=k: self.buy(t, k, m)))
        # looting enemies (their drops, and coins)
        for npc in v.state.npcs.values():
            if not v.hostile(npc):
                continue
            count = npc.inventory.get(t, 0)
            if t == v.currency:
                count += npc.coins
            if not count:
                continue
            cost = self.cost_fight(npc)
            if cost < INF:
                out.append((cost + 2 + 3 * max(0, missing - count), ("loot", t, npc.handle),
                            lambda n=npc: self.defeat(n)))
        # coins by selling what I carry and do not need
        if t == v.currency:
            sale = self._best_sale()
            if sale is not None:
                merchant, handle, paid = sale
                per = max(1, paid)
                cost = self.travel(merchant.area) + 1 + 2 * max(0, -(-missing // per) - 1)
                out.append((cost, ("sell", handle, merchant.handle),
                            lambda m=merchant, h=handle: self.go(m.area) or f"sell 1 {h} {m.handle}"))
            out.extend(self._ground_sales(missing))
        return out

    def pick_up(self, handle: str, wanted: int = 1) -> str:
        """Standing where ``handle`` lies: get it into my hands or pack."""
        v = self.v
        ot = v.otype(handle)
        if ot.category == "container":
            if v.pack is None:
                return f"equip {handle}"
            if v.fits_hands(handle):
                return f"pick up {handle}"
            return self.make_room()
        pack = v.pack
        if handle != v.currency and pack is not None and wanted > 1 and ot.size * 2 <= v.pack_room():
            on_ground = v.state.areas[v.here].objects.get(handle, 0)
            units = min(wanted, on_ground, v.pack_room() // ot.size if ot.size else on_ground)
            if units > 1:
                units += v.agent.hands.get(handle, 0)
                return f"store {units} {handle} {pack}"
        if v.fits_hands(handle):
            return f"pick up {handle}"
        if pack is not None and (ot.size == 0 or v.pack_room() >= ot.size):
            return f"pick up {handle}"  # goes into the pack
        return self.make_room(size=ot.size)

    def take_box(self, box: str) -> str:
        """Standing where container ``box`` lies: wear it as my pack, or hold it."""
        v = self.v
        if v.pack is None:
            return f"equip {box}"
        if v.fits_hands(box):
            return f"pick up {box}"
        return self.make_room()

    def make_room(self, size: int = 0) -> str:
        """Free a hand: store something in a container, else equip a held bag, else drop what is spare."""
        v = self.v
        hands = list(v.agent.hands.items())
        if not hands:
            raise Stuck("hands are empty but full?")

        def spare(h: str) -> tuple[int, int, int]:
            t = v.tname(h)
            needed = self._needed.get(t, 0) > 0
            return (h in self._keep, needed, v.otype(h).attack)

        order = sorted(hands, key=lambda hn: (*spare(hn[0]), hands.index(hn)))
        for container in v.containers():
            room = v.room_in(container)
            for h, n in order:
                if h in self._keep or h == container:
                    continue
                ot = v.otype(h)
                if ot.category == "container" or not ot.portable:
                    continue
                if ot.size * n <= room:
                    return f"store {n} {h} {container}"
        if v.pack is None:
            for h, _ in order:
                if v.otype(h).category == "container" and h not in self._keep:
                    return f"equip {h}"
        for h, _ in order:
            if h not in self._keep:
                return f"drop {h}"
        raise Stuck("both hands hold things I must keep")

    def hold(self, t: str) -> str | None:
        """Next command toward holding an object of type ``t`` in a hand."""
        v = self.v
        if v.in_hands(t):
            return None
        loc = v.where_carried(t)
        if loc is not None:
            handle, container = loc
            if v.fits_hands(handle):
                return f"take out {handle} {container}"
            return self.make_room()
        worn = v.worn(t)
        if worn is not None:
            return f"unequip {worn}" if v.hands_free() >= 1 else self.make_room()
        lying = v.lying(v.here, t)
        if lying:
            handle = lying[0][0]
            return f"pick up {handle}" if v.fits_hands(handle) else self.make_room()
        with self.need(t, 1):
            return self.have(t, 1)

    def _fetch_handle(self, handle: str) -> str | None:
        """Get one particular object instance carried (a written note)."""
        v = self.v
        if handle in v.agent.hands:
            return None
        for c in v.containers():
            if handle in v.state.instances[c].contents:
                return None
        for area, obj in v.state.areas.items():
            if handle in obj.objects:
                return self.go(area) or self.pick_up(handle)
        raise Stuck(f"{handle} is nowhere to be found")

    def _carried_handle(self, t: str) -> str:
        v = self.v
        h = v.in_hands(t)
        if h is not None:
            return h
        loc = v.where_carried(t)
        if loc is None:
            raise Stuck(f"not carrying {t}")
        return loc[0]

    # ================================================================== crafting
    def _station_area(self, t: str) -> str | None:
        stations = self.v.game.objects[t].recipe.stations
        if not stations:
            return self.v.here
        v = self.v
        first = stations[0]
        options = [a for a, _, _ in v.ground.get(first, ())
                   if all(v.state.areas[a].objects.get(s, 0) for s in stations)]
        options = list(dict.fromkeys(options))
        if not options:
            return None
        return min(options, key=lambda a: (self.travel(a), options.index(a)))

    def cost_craft(self, t: str, times: int) -> float:
        key = ("craft", t, times)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = INF
        ot = self.v.game.objects[t]
        area = self._station_area(t)
        if ot.recipe is None or area is None:
            return INF
        d = self.travel(area)
        total = d + 1
        for ing, k in ot.recipe.ingredients.items():
            c = self.cost_have(ing, k * times)
            total += c
            if total == INF:
                break
        self._memo[key] = total
        return total

    def craft(self, t: str, times: int, final: bool = False) -> str | None:
        """Next command toward crafting ``times`` batches of ``t`` (the product lands on the ground)."""
        v = self.v
        ot = v.game.objects[t]
        if ot.recipe is None:
            raise Stuck(f"{t} cannot be crafted")
        area = self._station_area(t)
        if area is None:
            raise Stuck(f"no {' and '.join(ot.recipe.stations)} for {t}")
        ingredients = ot.recipe.ingredients
        with contextlib.ExitStack() as stack:
            for ing, k in ingredients.items():
                stack.enter_context(self.need(ing, k * times))
            missing = [(ing, k * times) for ing, k in ingredients.items() if v.carried.get(ing, 0) < k * times]
            if missing:
                # the ingredient being fetched last step first (no dithering), then the costliest
                focus = self.last_choice.get(("craft", t))
                missing.sort(key=lambda im: (im[0] != (focus[0] if focus else None),
                                             -self.cost_have(im[0], im[1]), im[0]))
                for ing, need in missing:
                    try:
                        cmd = self.have(ing, need)
                    except Stuck:
                        continue
                    self.last_choice[("craft", t)] = (ing,)
                    return cmd
                raise Stuck(f"cannot gather the ingredients of {t}")
            self.used.append(("craft", t))
            return self.go(area) or f"craft {times} {t}"

    # ================================================================== trade
    def _merchants_selling(self, t: str) -> list[Npc]:
        return [n for n in self._merchants() if n.inventory.get(t, 0)]

    def _best_merchant(self, t: str) -> Npc | None:
        options = self._merchants_selling(t)
        return min(options, key=lambda n: (self.cost_buy(t, 1, n), n.handle), default=None)

    def price(self, t: str) -> int:
        return max(1, self.v.game.objects[t].value)

    def cost_buy(self, t: str, n: int, npc: Npc) -> float:
        v = self.v
        d = self.travel(npc.area)
        if d == INF:
            return INF
        coins = self.price(t) * n
        return d + 1 + self.cost_have(v.currency, coins)

    def buy(self, t: str, n: int, npc: Npc) -> str | None:
        v = self.v
        coins = self.price(t) * n
        with self.need(v.currency, coins):
            cmd = self.have(v.currency, coins)
        if cmd is not None:
            return cmd
        return self.go(npc.area) or f"buy {n} {t} {npc.handle}"

    def _merchants(self) -> list[Npc]:
        """Merchants willing to deal with me now (state order)."""
        hit = self._memo.get(("merchants",))
        if hit is None:
            v = self.v
            step = v.state.step
            hit = [n for n in v.state.npcs.values() if v.game.npcs[n.type].merchant and n.wary_until < step]
            self._memo[("merchants",)] = hit  # type: ignore[assignment]
        return hit  # type: ignore[return-value]

    def _buyer_for(self, t: str) -> Npc | None:
        """The nearest merchant who buys ``t``."""
        key = ("buyer", t)
        if key in self._memo:
            return self._memo[key]  # type: ignore[return-value]
        v = self.v
        ot = v.game.objects[t]
        best = None
        if ot.value > 0:
            options = [n for n in self._merchants()
                       if not v.game.npcs[n.type].buys or ot.category in v.game.npcs[n.type].buys]
            best = min(options, key=lambda n: (self.travel(n.area), n.handle), default=None)
        self._memo[key] = best  # type: ignore[assignment]
        return best

    def _sellable(self, handle: str) -> bool:
        """Spare things that may be sold for coins: never what a recent plan needed, nor kit."""
        v = self.v
        t = v.tname(handle)
        ot = v.game.objects[t]
        if handle == v.currency or ot.value <= 0 or self._needed.get(t) or handle in self._keep:
            return False
        if t in self._protect or self.reserved.get(t, -RESERVE_STEPS) > v.state.step - RESERVE_STEPS:
            return False
        if ot.category in KIT:
            return False
        inst = v.state.instances.get(handle)
        return inst is None or not inst.contents

    def _payment(self, t: str) -> int:
        rule = self.v.verbs.get("sell")
        ratio = getattr(getattr(rule, "p", None), "sell_ratio", 0.5)
        return max(1, int(self.v.game.objects[t].value * ratio))

    def _best_sale(self) -> tuple[Npc, str, int] | None:
        """Something I carry and do not need, and who buys it: ``(merchant, handle, coins paid)``."""
        v = self.v
        if "sell" not in v.verbs:
            return None
        best = None
        for h in [*v.agent.hands, *(x for c in v.containers() for x in v.state.instances[c].contents)]:
            if not self._sellable(h):
                continue
            t = v.tname(h)
            merchant = self._buyer_for(t)
            if merchant is None:
                continue
            paid = self._payment(t)
            if best is None or paid > best[2]:
                best = (merchant, h, paid)
        return best

    def _ground_sales(self, coins: int) -> list[Source]:
        """Coins from spare things lying about: pick one up (it is then sold as a carried spare)."""
        v = self.v
        if "sell" not in v.verbs:
            return []
        out: list[Source] = []
        for t, spots in v.ground.items():
            ot = v.game.objects[t]
            if ot.value <= 0 or t == v.currency or not ot.portable:
                continue
            merchant = self._buyer_for(t)
            if merchant is None:
                continue
            paid = self._payment(t)
            for area, handle, count in spots:
                if not self._sellable(handle):
                    continue
                d = self.travel(area)
                if d == INF:
                    continue
                back = v.dist(merchant.area, area)
                trips = -(-coins // (paid * min(count, 2)))
                cost = d + (back if back is not None else 10) + 2 + 4 * (trips - 1)
                out.append((cost, ("gather-sale", t, area),
                            lambda a=area, h=handle: self.go(a) or self.pick_up(h)))
                break
        out.sort(key=lambda s: s[0])
        return out[:3]

    # ================================================================== writing, dropping, wearing
    def _writable_type(self, wanted: str | None) -> str | None:
        if wanted is not None:
            return wanted
        options = [o.name for o in self.v.game.spec.objects if o.category == "writable"]
        return min(options, key=lambda t: (self.cost_have(t, 1), options.index(t)), default=None)

    def _tool_type(self) -> str | None:
        options = [o.name for o in self.v.game.spec.objects if "write" in o.uses]
        return min(options, key=lambda t: (self.cost_have(t, 1), options.index(t)), default=None)

    def cost_write(self, wanted: str | None) -> float:
        paper, tool = self._writable_type(wanted), self._tool_type()
        if paper is None or tool is None:
            return INF
        return self.cost_have(paper, 1) + self.cost_have(tool, 1) + 3

    def write(self, text: str, wanted: str | None) -> str | None:
        v = self.v
        paper, tool = self._writable_type(wanted), self._tool_type()
        if paper is None or tool is None:
            raise Stuck("nothing to write with or on")
        held_tool = next((h for h in v.agent.hands if "write" in v.otype(h).uses), None)
        held_paper = next((h for h in v.agent.hands if v.otype(h).category == "writable"
                           and (wanted is None or v.tname(h) == wanted)), None)
        if held_tool and held_paper:
            return f'write "{text}" {held_paper}'
        with self.need(paper, 1), self.need(tool, 1), self.keeping(held_tool), self.keeping(held_paper):
            if held_tool is None:
                cmd = self.hold(tool)
                if cmd is not None:
                    return cmd
            return self.hold(paper)

    def _written(self, text: str, wanted: str | None) -> str | None:
        from odyssey_env.quests.conditions import normalize_text

        want = normalize_text(text)
        for handle, inst in self.v.state.instances.items():
            if inst.text and normalize_text(inst.text) == want and (wanted is None or inst.type == wanted):
                return handle
        return None

    def drop_in(self, t: str, area: str | None) -> str | None:
        """Drop (in ``area``, if given) an object of type ``t`` (the drop itself is the event)."""
        v = self.v
        held = v.in_hands(t)
        if held is None:
            with self.need(t, 1):
                return self.hold(t)
        if area is not None and v.here != area:
            with self.need(t, 1), self.keeping(held):
                return self.go(area)
        return f"drop {held}"

    def drop_handle_in(self, handle: str, area: str) -> str | None:
        v = self.v
        if handle in v.agent.hands:
            with self.keeping(handle):
                return self.go(area) or f"drop {handle}"
        for c in v.containers():
            if handle in v.state.instances[c].contents:
                return f"take out {handle} {c}" if v.hands_free() >= 1 else self.make_room()
        for name, a in v.state.areas.items():
            if handle in a.objects:
                if name == area:
                    return None
                return self.go(name) or (f"pick up {handle}" if v.fits_hands(handle) else self.make_room())
        raise Stuck(f"{handle} is nowhere")

    def equip(self, t: str) -> str | None:
        v = self.v
        ot = v.game.objects[t]
        slot = ot.equip_slot
        if slot is None:
            raise Stuck(f"{t} cannot be worn")
        if v.worn(t):
            return None
        lying = v.lying(v.here, t)
        source = v.in_hands(t) or (lying[0][0] if lying else None)
        if source is None:
            with self.need(t, 1):
                return self.hold(t)
        current = v.agent.equipment.get(slot)
        if current is not None:
            if v.hands_free() < 1:
                with self.keeping(source):
                    return self.make_room()
            return f"unequip {current}"
        return f"equip {source}"

    def cost_hold(self, t: str) -> float:
        """Rough steps until an object of type ``t`` is in a hand (it may be worn or packed now)."""
        v = self.v
        if v.in_hands(t):
            return 0
        if v.owned(t):
            return 2
        return self.cost_have(t, 1) + 1

    def _cheapest_of_category(self, category: str) -> str | None:
        options = [o.name for o in self.v.game.spec.objects if o.category == category]
        best = min(options, key=lambda t: (self.cost_hold(t), options.index(t)), default=None)
        return best if best is not None and self.cost_hold(best) < INF else None

    # ================================================================== fighting
    def _stats(self, weapon: str | None = None) -> tuple[int, int]:
        """Attack and defense if I held my best carried weapon (or ``weapon``)."""
        v = self.v
        best = max((v.otype(h).attack for h in v.agent.hands), default=0)
        for t, n in v.carried.items():
            if n and v.game.objects[t].attack > best:
                best = v.game.objects[t].attack
        if weapon is not None:
            best = max(best, v.game.objects[weapon].attack)
        return v.agent.base_attack + best, v.agent.defense

    def outlook(self, npc: Npc, weapon: str | None = None, armor: str | None = None,
                hp: int | None = None) -> combat.Forecast:
        """Forecast of a fight with ``npc`` (holding my best weapon, or ``weapon``; wearing
        ``armor`` too; with ``hp`` health), for costing.

        Forecasts are kept across steps, keyed by everything they depend on (the hour stands for
        the clock), since most steps ask about the same few enemies.
        """
        v = self.v
        attack, defense = self._stats(weapon)
        if armor is not None:
            worn = v.agent.equipment.get(v.game.objects[armor].equip_slot or "body")
            defense += v.game.objects[armor].defense - (v.otype(worn).defense if worn else 0)
        foes = [combat.foe_of(v, npc)] + [combat.foe_of(v, n) for n in v.engaged_foes() if n.handle != npc.handle]
        agent = v.agent
        hp = agent.hp if hp is None else hp
        key = (tuple((f.hp, f.attack, f.defense, f.pattern, f.index % max(1, len(f.pattern))) for f in foes),
               attack, defense, hp, agent.max_hp, agent.stamina, v.state.minute // 60)
        hit = self._fights.get(key)
        if hit is None:
            if len(self._fights) > 4096:
                self._fights.clear()
            hit = self._fights[key] = combat.forecast(v, foes, attack=attack, defense=defense, hp=hp)
        return hit

    def cost_fight(self, npc: Npc) -> float:
        d = self.travel(npc.area)
        if d == INF:
            return INF
        f = self.outlook(npc)
        if not self.fight_ok(f):
            return INF
        return d + f.steps + 1

    def cost_defeat(self, types: tuple[str, ...]) -> float:
        v = self.v
        options = [n for n in v.state.npcs.values() if v.hostile(n) and (not types or n.type in types)]
        if not options:
            return INF
        best = min(self.cost_fight(n) for n in options)
        if best < INF:
            return best
        return 60 + min(self.travel(n.area) for n in options)  # preparation will be needed

    def defeat_any(self, types: tuple[str, ...]) -> str | None:
        """Defeat one NPC of the given types (any hostile one if empty), preparing if it pays.

        The choice between fighting now and preparing (eating, fetching gear, training) is kept
        from step to step while it still makes sense, so the agent does not dither between them.
        """
        v = self.v
        options = [n for n in v.state.npcs.values() if v.hostile(n) and (not types or n.type in types)
                   and self.travel(n.area) < INF]
        options = [n for n in options if ("npc", n.handle) not in self.banned] or options
        if not options:
            raise Stuck(f"no {' or '.join(types) or 'enemy'} to fight")
        ranked = sorted(options, key=lambda n: (self.cost_fight(n), self.travel(n.area), n.handle))
        target = ranked[0]
        f = self.outlook(target)
        key = ("prep", target.handle)
        kept = self.last_choice.get(key)
        choice = kept if kept is not None and self._still_wise(kept, f) else None
        if choice is None:
            if self.fight_ok(f) and f.steps <= LONG_FIGHT:
                choice = ("fight", v.state.step)
            else:
                choice = self._preparation(target, f) or ("fight", v.state.step)
        self.last_choice[key] = choice
        kind = choice[0]
        if kind == "eat":
            food = choice[2]
            if v.carried.get(food, 0) or v.lying_count(v.here, food):
                return f"eat {food}"
            with self.need(food, 1):
                return self.have(food, 1)
        if kind == "gear":
            t, is_armor = choice[2], choice[3]
            self.used.append(("armor" if is_armor else "weapon", t))
            with self.need(t, 1):
                return self.equip(t) if is_armor else self.hold(t)
        if kind == "xp":
            return self.gain_xp(avoid=target.handle)
        return self.defeat(target)

    def _still_wise(self, choice: tuple[Any, ...], f: combat.Forecast) -> bool:
        """Whether a preparation chosen earlier is still worth following."""
        v = self.v
        kind, since = choice[0], choice[1]
        age = v.state.step - since
        if kind == "fight":
            return self.fight_ok(f)
        if kind == "eat":
            return age < 40 and v.agent.hp < v.agent.max_hp * 0.8 and self.cost_have(choice[2], 1) < INF
        if kind == "gear":
            t, is_armor = choice[2], choice[3]
            done = v.worn(t) is not None if is_armor else v.carried.get(t, 0) > 0
            return not done and age < 80 and self.cost_have(t, 1) < INF
        return False  # training is re-planned every step

    def defeat(self, npc: Npc) -> str | None:
        v = self.v
        self.used.append(("npc", npc.handle))
        if npc.area != v.here:
            return self.go(npc.area)
        arm = self._arm()
        if arm is not None:
            return arm
        return f"attack {npc.handle}"

    def _arm(self) -> str | None:
        """Hold my best carried weapon before a fight (one step, only if it is in my pack)."""
        v = self.v
        held = max((v.otype(h).attack for h in v.agent.hands), default=0)
        best, best_t = held, None
        for t, n in v.carried.items():
            a = v.game.objects[t].attack
            if n and a > best:
                best, best_t = a, t
        if best_t is None:
            return None
        loc = v.where_carried(best_t)
        if loc is None:
            return None
        if v.hands_free() >= 1:
            return f"take out {loc[0]} {loc[1]}"
        return self.make_room()

    def fight_ok(self, f: combat.Forecast) -> bool:
        """A fight worth starting: won, with a quarter of my health to spare."""
        return f.won and f.hp_left >= self.v.agent.max_hp * 0.25

    def _preparation(self, npc: Npc, f: combat.Forecast) -> tuple[Any, ...] | None:
        """What to do before a fight that would be lost or long, when it pays for itself: eat,
        fetch a better weapon or armor; train if the fight would be lost. None: fight as things are."""
        v = self.v
        agent = v.agent
        step = v.state.step
        ok = self.fight_ok(f)
        worth = f.steps if ok else 400  # what the fight costs as things are
        if "eat" in v.verbs and agent.hp < agent.max_hp * 0.8:
            food = self._best_food()
            if food is not None:
                healed = self.outlook(npc, hp=min(agent.max_hp, agent.hp + v.game.objects[food].hp_restore))
                if (self.fight_ok(healed) and healed.steps + 1 < worth) or healed.hp_left > f.hp_left + 5:
                    return ("eat", step, food)
        gear = self._better_gear(npc, worth)
        if gear is not None:
            return ("gear", step, *gear)
        return None if ok else ("xp", step)

    def _best_food(self) -> str | None:
        v = self.v
        foods = [o for o in v.game.spec.objects if o.category == "food"]
        scored = [(self.cost_have(o.name, 1) - o.hp_restore / 5, o.name) for o in foods
                  if self.cost_have(o.name, 1) < 30 or v.lying_count(v.here, o.name)]
        return min(scored)[1] if scored else None

    def _better_gear(self, npc: Npc, worth: float) -> tuple[str, bool] | None:
        """The weapon or armor whose fetching plus the shorter fight beats fighting now by most."""
        v = self.v
        current, _ = self._stats()
        best: tuple[float, str, bool] | None = None
        for o in v.game.spec.objects:
            is_armor = o.category == "armor"
            if is_armor:
                worn = v.agent.equipment.get(o.equip_slot or "body")
                gain_def = o.defense - (v.otype(worn).defense if worn else 0)
                if gain_def <= 0 or v.owned(o.name):
                    continue
            elif o.attack <= 0 or v.agent.base_attack + o.attack <= current or o.category not in ("weapon", "tool"):
                continue
            if (("armor" if is_armor else "weapon"), o.name) in self.banned:
                continue
            cost = self.cost_have(o.name, 1) + 1
            if cost >= worth or cost > 120:
                continue
            f = self.outlook(npc, armor=o.name) if is_armor else self.outlook(npc, weapon=o.name)
            after = f.steps if self.fight_ok(f) else 400
            gain = worth - after - cost
            if gain > 2 and (best is None or gain > best[0]):
                best = (gain, o.name, is_armor)
        return (best[1], best[2]) if best else None

    def gain_xp(self, avoid: str | None = None) -> str | None:
        """The best experience per step: an easy fight, an unexplored area, a first trade or craft."""
        v = self.v
        agent = v.agent
        options: list[tuple[float, str, Callable[[], str | None]]] = []
        for npc in v.state.npcs.values():
            if not v.hostile(npc) or npc.handle == avoid or ("npc", npc.handle) in self.banned:
                continue
            cost = self.cost_fight(npc)
            if cost < INF:
                xp = v.game.npcs[npc.type].experience
                options.append((cost / xp, npc.handle, lambda n=npc: self.defeat(n)))
        for area in v.state.areas:
            if area not in agent.visited:
                d = self.travel(area)
                if d < INF:
                    options.append((d / 5, area, lambda a=area: self.go(a)))
        if v.currency:
            for npc in v.state.npcs.values():
                if not v.game.npcs[npc.type].merchant or npc.wary_until >= v.state.step:
                    continue
                for t in npc.inventory:
                    if t in agent.traded or ("buy", t, npc.handle) in self.banned:
                        continue
                    cost = self.cost_buy(t, 1, npc)
                    if cost < INF:
                        options.append((cost / 10, f"buy {t}", lambda t=t, m=npc: self.buy(t, 1, m)))
        for o in v.game.recipes:
            if o.name in agent.crafted or ("craft", o.name) in self.banned:
                continue
            cost = self.cost_craft(o.name, 1)
            if cost < 40:
                options.append((cost / 5, f"craft {o.name}", lambda t=o.name: self.craft(t, 1)))
        options.sort(key=lambda o: (o[0], o[1]))
        for _, _, run in options:
            try:
                cmd = run()
            except Stuck:
                continue
            if cmd is not None:
                return cmd
        raise Stuck("no way to gain experience")

    # ================================================================== small things
    def _opportunity(self) -> str | None:
        """Cheap things worth a step whatever the goal (outside the tutorial, whose lessons are
        gated on doing things in order): wear a bag if I have none, take a better weapon or wear
        better armor lying right here, eat what lies here when hurt."""
        v = self.v
        agent = v.agent
        if agent.in_tutorial:
            return None
        if not agent.hands:  # empty-handed: take up my best weapon (never fights for a hand)
            arm = self._arm()
            if arm is not None:
                return arm
        here = v.state.areas[v.here].objects
        best_attack = max((v.game.objects[t].attack for t, n in v.carried.items() if n), default=0)
        for handle in here:
            if v.state.step - self.let_go.get(handle, -LET_GO_STEPS) < LET_GO_STEPS:
                continue  # a goal put it down: do not undo that
            ot = v.otype(handle)
            if ot.category == "container" and v.pack is None and handle in v.state.instances:
                return f"equip {handle}"
            if ot.category == "armor":
                slot = ot.equip_slot or "body"
                if slot not in agent.equipment and ("armor", ot.name) not in self.banned:
                    return f"equip {handle}"
            if ot.category == "weapon" and ot.attack > best_attack and ("weapon", ot.name) not in self.banned \
                    and (v.fits_hands(handle) or (v.pack is not None and v.pack_room() >= ot.size)):
                return f"pick up {handle}"
            if ot.category == "food" and "eat" in v.verbs and agent.max_hp - agent.hp >= ot.hp_restore:
                return f"eat {handle}"
        return None

    def _food_at_hand(self) -> str | None:
        """The most restoring food I carry or see here (games with the eat verb)."""
        v = self.v
        if "eat" not in v.verbs:
            return None
        options = [t for t in v.carried if v.game.objects[t].category == "food"]
        options += [v.tname(h) for h in v.state.areas[v.here].objects if v.otype(h).category == "food"]
        return max(options, key=lambda t: (v.game.objects[t].hp_restore, t), default=None)

    def _idle(self) -> str:
        """Nothing known works: grow stronger (and let the world change) rather than stand still."""
        try:
            return self.gain_xp() or "wait"
        except Stuck:
            return "wait"


def _family(c: Condition) -> str:
    from odyssey_env.quests.conditions import VOCABULARY

    kind = VOCABULARY.get(c.type)
    return kind.family if kind is not None else "predicate"


def object_types(view: View) -> list[ObjectType]:  # pragma: no cover - convenience for debugging
    return list(view.game.spec.objects)


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
