"""Getting somewhere: cheapest routes over open paths, and through locked ways when needed.

Entering an area costs a step plus its *danger*: the chance of an ambush there (the ambush rule's odds
for the area's level, times today's modifier) times what an ambush by the worst idle enemy there would
cost: the fight's length for an enemy I would beat, the price of dying for one I would not. So the
oracle walks around what it cannot fight when a detour exists, and straight through otherwise.

A locked way needs its key in a hand when entering (the key stays in the lock) or, in games with the
verb, a lockpick. Picking is a gamble (picks snap; what makes them may be what the key needs), so it is
chosen only when no key can be had, or a pick is already at hand and clearly cheaper. Routes
through locks are costed with what opening them takes (Dijkstra), and the key is fetched *before*
walking up to the lock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import heapq
import itertools
from typing import TYPE_CHECKING, Any

from odyssey_agents.oracle.core import DEATH_COST, INF, PICK_GAMBLE, Focus, Stuck
from odyssey_agents.oracle.events import holds_now
from odyssey_env.rules import ActionRule
from odyssey_env.steprules.combat import ambush_chance
from odyssey_env.turn import Turn

if TYPE_CHECKING:
    from collections.abc import Callable

    from odyssey_agents.oracle.supply import Supply
    from odyssey_agents.oracle.tactics import Tactics
    from odyssey_agents.oracle.view import View
    from odyssey_env.quests.spec import Condition

NEED_COST = 10.0  # steps a way is reckoned to cost more while what it needs (a light, say) is missing


class Navigation:
    """Travel costs and the next step of a route.

    It owns the step's route caches and remembers nothing between steps. Its peers: supply gets what
    opens a lock, tactics says how costly an ambush would be (danger is part of every route's cost),
    and the planner's ``achieve`` pursues what a way asks before it is entered (any condition at
    all, so only the planner can). It writes ``focus.used`` (the routes and tools it leans on, which
    the agent may ban) and marks the tool it fetches as needed.
    """

    def __init__(self, focus: Focus) -> None:
        self.focus = focus
        self.view: View  # set by begin() every step
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._routing = 0  # locks being costed inside the costing of a lock (depth guard)
        self._open_only = False  # costing over open ways only (how many keys to fetch in one trip)
        self.supply: Supply
        self.tactics: Tactics
        self.achieve: Callable[[Condition], str | None]

    def connect(self, supply: Supply, tactics: Tactics, achieve: Callable[[Condition], str | None]) -> None:
        """Meet the peers (they need this part too, so they cannot all be passed at construction)."""
        self.supply = supply
        self.tactics = tactics
        self.achieve = achieve

    def begin(self, view: View) -> None:
        """A new step: routes and dangers are recomputed from the world as it is now."""
        self.view = view
        self._memo = {}

    def danger(self, area: str) -> float:
        """Expected cost (in steps) of an ambush during one step spent in ``area``."""
        key = ("danger", area)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        v = self.view
        value = 0.0
        rule = v.engine.rules.step_rule("ambush")
        table = getattr(getattr(rule, "settings", None), "chance_by_level", None)
        if table and not v.agent.in_tutorial:
            state = v.state
            a = state.areas[area]
            idle = [state.npcs[h] for h in a.npcs if state.npcs[h].engaged is None and v.hostile(state.npcs[h])]
            if idle:
                chance = ambush_chance(table, a.level, state.modifiers)
                worst = 0.0
                for n in idle:
                    f = self.tactics.outlook(n)
                    worst = max(worst, f.steps if self.tactics.fight_ok(f) else DEATH_COST)
                value = min(1.0, chance) * worst
        self._memo[key] = value
        return value

    def _open_routes(self) -> dict[str, tuple[float, str]]:
        """Area -> (cost, previous area) of the cheapest open route from here (Dijkstra, stable ties)."""
        hit = self._memo.get(("routes",))
        if hit is not None:
            return hit
        v = self.view
        areas = v.state.areas
        best: dict[str, tuple[float, str]] = {v.here: (0.0, v.here)}
        done: set[str] = set()
        heap: list[tuple[float, int, str]] = [(0.0, 0, v.here)]
        counter = 1
        while heap:
            d, _, a = heapq.heappop(heap)
            if a in done:
                continue
            done.add(a)
            for b, ex in areas[a].exits.items():
                if ex.locked or b in done or b not in areas:
                    continue
                nd = d + 1.0 + self.danger(b) + (NEED_COST if self.entry_need(a, b) is not None else 0.0)
                if nd < best.get(b, (INF, ""))[0]:
                    best[b] = (nd, a)
                    heapq.heappush(heap, (nd, counter, b))
                    counter += 1
        self._memo[("routes",)] = best
        return best

    def _first_hop(self, dst: str) -> str | None:
        """The neighbor to enter next on the cheapest open route to ``dst``."""
        routes = self._open_routes()
        if dst not in routes or dst == self.view.here:
            return None
        while True:
            prev = routes[dst][1]
            if prev == self.view.here:
                return dst
            dst = prev

    def travel(self, area: str | None) -> float:
        """Steps to reach ``area`` (dangers included): open paths, else through locks (with the cost
        of opening them)."""
        if area is None:
            return 0
        hit = self._open_routes().get(area)
        if hit is not None:
            return hit[0]
        if self._routing > 1 or self._open_only:
            return INF  # a lock behind a lock behind a lock: not worth costing
        key = ("travel", area, self._routing)
        if key not in self._memo:
            route = self._locked_route(area)
            self._memo[key] = INF if route is None else route[0]
        return self._memo[key]

    def go(self, area: str) -> str | None:
        """Next command toward ``area``; None when already there."""
        v = self.view
        if area == v.here:
            return None
        if area not in v.state.areas:
            raise Stuck(f"{area} does not exist (yet)")
        hop = self._first_hop(area)
        if hop is not None:
            command = self._route_needs(area)
            if command is not None:
                return command
            self.focus.used.append(("go", area))
            return f"enter {hop}"
        route = self._locked_route(area)
        if route is None:
            raise Stuck(f"no way to {area}")
        path = route[1]
        locks = [(a, b) for a, b in itertools.pairwise(path) if v.state.areas[a].exits[b].locked]
        if not locks:
            raise Stuck(f"no way to {area}")
        a, b = locks[0]
        # every lock of the route that takes the same key: they are all fetched in one trip (a key
        # crafted at a workbench two areas back costs a round trip per lock when fetched one by one)
        key = v.state.areas[a].exits[b].key
        count = sum(1 for x, y in locks if v.state.areas[x].exits[y].key == key) if key is not None else 1
        if a != v.here:
            # bring what opens the lock before walking up to it
            cmd = self.open_way(a, b, carry_only=True, count=count)
            if cmd is not None:
                return cmd
            hop = self._first_hop(a)
            if hop is None:
                raise Stuck(f"no open way to {a}")
            return f"enter {hop}"
        return self.open_way(a, b, count=count)

    def entry_need(self, a: str, b: str) -> Condition | None:
        """What the game's ``enter`` verb says an agent at ``a`` should make hold before walking to ``b``
        and does not hold yet (:meth:`odyssey_env.rules.ActionRule.needs`: a light for the dark, the burning
        of the dead before leaving a quarantined area), or None. Asked once per way and step."""
        rule = self.view.verbs.get("enter")
        if rule is None or getattr(rule.needs, "__func__", None) is ActionRule.needs:
            return None  # the engine's own enter verb needs nothing it does not check itself
        key = ("need", a, b)
        if key in self._memo:
            return self._memo[key]
        need = rule.needs(self.view.engine, self.view.agent, {"area": b, "from": a})
        if need is not None and holds_now(self.view, need):
            need = None
        self._memo[key] = need
        return need

    def _route_needs(self, dst: str) -> str | None:
        """The next command toward what the ways of the route to ``dst`` ask for (a light for the dark
        ahead, say), nearest way first, so that it is fetched before walking up to where it is needed;
        None when they ask for nothing (or only warn of what cannot be had)."""
        routes = self._open_routes()
        path = [dst]
        while path[-1] != self.view.here:
            path.append(routes[path[-1]][1])
        path.reverse()
        for a, b in itertools.pairwise(path):
            need = self.entry_need(a, b)
            if need is None:
                continue
            with contextlib.ExitStack() as kept:
                # what met an earlier need of this way stays while the next is fetched (Quarantine seed 0
                # dropped its lantern to free a hand for the lantern's fuel, then picked the lantern up
                # again for the light the way asked first: 150 steps)
                for handle in self._resting_on(a, b, need):
                    kept.enter_context(self.focus.need(self.view.tname(handle), 1))
                    kept.enter_context(self.focus.keeping(handle))
                try:
                    command = self.achieve(need)
                except Stuck:
                    if a == self.view.here and not self._enterable(b):
                        raise
                    continue  # it only warned (or it can wait until I stand there)
            if command is not None:
                return command
        return None

    def _resting_on(self, a: str, b: str, need: Condition) -> list[str]:
        """The things in my hands that the way from ``a`` to ``b`` rests on: without one of them, its
        ``enter`` would ask for something other than ``need`` (a light, while its fuel is asked now).
        A way names its next missing piece only, so what met the earlier pieces is found by asking it
        again as if the thing were not held."""
        v = self.view
        rule = v.verbs["enter"]
        out = []
        for handle in v.agent.hands:
            without = dataclasses.replace(v.agent, hands={h: n for h, n in v.agent.hands.items() if h != handle})
            other = rule.needs(v.engine, without, {"area": b, "from": a})
            if other is not None and other != need:
                out.append(handle)
        return out

    def _enterable(self, b: str) -> bool:

        return f"enter {b}" in self.view.verbs["enter"].candidates(Turn(self.view.engine, self.view.agent, probe=True))

    def _lock_cost(self, a: str, b: str) -> float:
        ex = self.view.state.areas[a].exits[b]
        best = INF
        self._routing += 1
        try:
            if ex.key is not None:
                best = 1 if self.view.in_hands(ex.key) else self.supply.cost_have(ex.key, 1) + 1
            if "lockpick" in self.view.verbs and ex.pickable:
                pick = self._lockpick_type()
                if pick is not None and (best == INF or self.view.carried.get(pick, 0)):
                    best = min(best, self._pick_cost(pick) + 1)
        finally:
            self._routing -= 1
        return best

    def _locked_route(self, dst: str) -> tuple[float, list[str]] | None:
        """Cheapest route through locked ways, each costed by opening it (Dijkstra, stable ties)."""
        v = self.view
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
                w = 1.0 + self.danger(b)
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

    def open_way(self, a: str, b: str, carry_only: bool = False, count: int = 1) -> str | None:
        """Standing at ``a``: open the locked way to ``b`` (key in hand, or a lockpick).

        With ``carry_only``, only make sure the key or pick is carried (before walking to the lock);
        None then means it is. ``count``: how many locks of the route ahead take this way's key; as
        many keys as can be had (up to that) are gathered before walking up to the first.
        """
        v = self.view
        ex = v.state.areas[a].exits[b]
        key_cost = INF
        if ex.key is not None:
            count = self._keys_to_carry(ex.key, count)
            if v.in_hands(ex.key) and v.carried.get(ex.key, 0) >= count:
                return None if carry_only else f"enter {b}"
            key_cost = self.supply.cost_have(ex.key, 1)
        pick = self._lockpick_type() if "lockpick" in v.verbs and ex.pickable else None
        # a gamble is taken only with a pick at hand, or when no key can be had
        gamble = pick is not None and (key_cost == INF or v.carried.get(pick, 0) > 0)
        pick_cost = self._pick_cost(pick) if gamble and pick is not None else INF
        if key_cost == INF and pick_cost == INF:
            raise Stuck(f"the way from {a} to {b} is locked and cannot be opened")
        tool = ex.key if key_cost <= pick_cost and ex.key is not None else pick
        assert tool is not None
        try:
            if tool == ex.key and count > v.carried.get(tool, 0):
                try:
                    return self._fetch_tool(b, tool, pick, True, count) or self._fetch_tool(b, tool, pick, carry_only)
                except Stuck:
                    pass  # all of them cannot be had after all: one at a time, as before
            return self._fetch_tool(b, tool, pick, carry_only)
        except Stuck:
            # the key's estimate was finite but getting it is not (its materials lie behind this very
            # lock, say: Remnant seed 1, whose wood grows only past the locks): gamble on a pick instead
            if tool != ex.key or pick is None or self._pick_cost(pick) == INF:
                raise
            if ex.key in self.supply._pursuing:
                # this lock is met again inside the getting of its own key (a batch's second key
                # wants wood from past it): the caller that began fetching the key decides, with one
                # key fewer; a pick crafted here would burn what that key is made of
                raise
            return self._fetch_tool(b, pick, pick, carry_only)

    def _keys_to_carry(self, key: str, count: int) -> int:
        """The most keys, up to ``count``, that can be had without crossing a locked way (at least
        one). Supplies behind locks are left out: fetching them would take keys of the batch itself,
        and counting them makes the batch swell and shrink as the agent walks up to the lock."""
        if count <= 1:
            return 1
        memo = ("keys", key, count)
        hit = self._memo.get(memo)
        if hit is not None:
            return hit
        saved = self._memo, self.supply._memo
        self._memo, self.supply._memo = {}, {}
        self._open_only = True
        try:
            n = count
            while n > 1 and self.supply.cost_have(key, n) == INF:
                n -= 1
        finally:
            self._open_only = False
            self._memo, self.supply._memo = saved
        self._memo[memo] = n
        return n

    def _fetch_tool(self, b: str, tool: str, pick: str | None, carry_only: bool, count: int = 1) -> str | None:
        """The next command toward opening the way to ``b`` with ``tool`` (a key, or the pick type);
        with ``carry_only``, toward carrying ``count`` of it."""
        v = self.view
        self.focus.used.append(("key", tool))
        with self.focus.need(tool, count):
            if carry_only:
                return self.supply.have(tool, count)
            if tool == pick and v.in_hands(pick):
                return f"lockpick {b}"
            return self.supply.hold(tool) or f"enter {b}"  # held: the key opens the way as I enter

    def _pick_cost(self, pick: str) -> float:
        """Expected steps to pick a lock: tries until one succeeds, plus the picks that snap on the
        way (from the lockpick rule's own odds), each as dear as getting one more, plus a surcharge
        for the gamble (picks may run out, and what makes them may be what a key needed)."""
        v = self.view
        rule = v.verbs["lockpick"]
        params = getattr(rule, "settings", None)
        # the pick type's own odds (the paper's Remnant: a lockpick 20%, a tension wrench 10%)
        odds = rule.chance_of(pick) if hasattr(rule, "chance_of") else getattr(params, "chance", 0.35)
        chance = max(0.01, odds)
        snap = (1 - chance) * getattr(params, "break_chance", 0.25)
        picks = 1 + snap / chance
        carried = v.carried.get(pick, 0)
        extra = max(0.0, picks - carried)
        if carried:
            more = self.supply.cost_have(pick, carried + 1) if extra else 0.0
            # no more picks to be had: a snapped one is gone for good, and the lock stays shut (Remnant
            # seed 10 gambled the one pick on sale, chance 0.2, rather than take it apart for the iron
            # bar of a key): as dear as a death, so a key that can be had wins
            unit = min(more, PICK_GAMBLE * 2) if more < INF else DEATH_COST
        else:
            unit = self.supply.unit_cost(pick)  # (two wrenches share the bar one craft of them takes)
        return extra * unit + 1 / chance + PICK_GAMBLE

    def _lockpick_type(self) -> str | None:
        options = [o for o in self.view.game.spec.objects if "lockpick" in o.uses]
        if not options:
            return None
        if len(options) > 1 and getattr(getattr(self.view.verbs["lockpick"], "settings", None), "chances", None):
            # tools with odds of their own: the one whose gamble costs least (a wrench of half an iron_bar
            # at 10% against a pick of a whole bar, scrap and thread at 20%)
            return min(options, key=lambda o: (self._pick_cost(o.name), o.name)).name
        return min(options, key=lambda o: (self.supply.cost_have(o.name, 1), o.name)).name
