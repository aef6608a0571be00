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
* conditions of the quest vocabulary (``odyssey_env.quests.conditions.VOCABULARY``) map onto these,
  one pair of methods per type (``_c_<type>``: the next command, None when it holds; ``_e_<type>``: a
  rough cost in steps), listed in the table :data:`CONDITIONS`.

The primitives belong to collaborators, each with one job: :class:`.Navigation` (routes and locks),
:class:`.Supply` (getting and carrying things), :class:`.Tactics` (choosing and preparing fights),
:class:`.Events` (the ``did`` predicate), :class:`.Foresight` (what later stages want) and
:class:`.Opportunism` (a bag to wear, a better weapon lying here). What they share is in
:mod:`.core`: :class:`.Memory` (what outlives a step) and :class:`.Focus` (the step being planned).

Costs are estimated in steps with the same source model, so choices (which source, which branch of an
``any_of``, which open stage) go to the cheapest. A goal that cannot be reached raises :class:`Stuck`,
which lets a caller try something else. The only memory kept between steps is what breaks ties in
favour of the last choice (so the agent does not dither) and what the agent has found not to work.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from odyssey_agents.oracle import combat
from odyssey_agents.oracle.core import INF, SAFE_TEXT, Focus, Memory, Stuck
from odyssey_agents.oracle.events import Events, event_condition, family
from odyssey_agents.oracle.foresight import Foresight
from odyssey_agents.oracle.navigation import Navigation
from odyssey_agents.oracle.opportunism import Opportunism
from odyssey_agents.oracle.supply import Supply
from odyssey_agents.oracle.tactics import Tactics
from odyssey_agents.oracle.view import View
from odyssey_env.quests.conditions import holds
from odyssey_env.quests.main_quest import plan

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.quests.spec import Condition

__all__ = ["CONDITIONS", "ConditionPlan", "Planner", "Stuck"]


class Planner:
    """Decides one command per step for one agent (see the module docstring).

    It owns the quest-level choices: which open goal to work on, which branch of an ``any_of``,
    how far a predicate's plan has come. In :attr:`memory` it writes ``last_choice`` under
    ``("goal",)``, ``("any_of", ...)`` and ``("equip_any", ...)``, ``plan_progress``, ``let_go``, and
    prunes ``banned``; the agent writes ``banned`` and ``calm_until``.
    """

    def __init__(self, agent_id: str = "player") -> None:
        self.agent_id = agent_id
        self.memory = Memory()
        self.focus = Focus(self.memory)
        self.navigation = Navigation(self.focus)
        self.supply = Supply(self.focus, self.memory)
        self.tactics = Tactics(self.focus, self.memory)
        self.navigation.connect(self.supply, self.tactics, self.achieve)
        self.supply.connect(self.navigation, self.tactics)
        self.tactics.connect(self.navigation, self.supply)
        self.events = Events(agent_id, self.focus, self.navigation, self.supply, self.achieve, self._cost)
        self.supply.events = self.events
        self.foresight = Foresight(agent_id, self.focus)
        self.tactics.foresight = self.foresight
        self.opportunism = Opportunism(self.memory, self.foresight, self.tactics)
        self._memo: dict[tuple[Any, ...], float] = {}
        self._estimated: list[Condition] = []  # what the memo's ids name, kept alive while they do

    @property
    def view(self) -> View:
        """The world as this step's planning sees it."""
        return self.focus.view

    @view.setter
    def view(self, view: View) -> None:
        """Look at ``view`` from now on (every part forgets what it worked out about the last one)."""
        self._begin(view)

    def _begin(self, view: View) -> None:
        self.focus.begin(view)
        self.navigation.begin(view)
        self.supply.begin(view)
        self.tactics.begin(view)
        self.events.begin(view)
        self._memo = {}
        self._estimated = []

    # ================================================================== entry point
    def decide(self, engine: Engine, goals: list[Condition]) -> tuple[str, str]:
        """The command for this step and a short reason."""
        self.view = View(engine, self.agent_id)
        step = engine.state.step
        self.memory.prune(step)
        self._note_plan_events(goals)

        if self.view.engaged_foes():
            return self.tactics.in_fight()

        self.foresight.look_ahead(engine, goals)
        quick = self.opportunism.opportunity(self.view) if step >= self.memory.calm_until else None
        if quick is not None:
            return quick, "opportunity"

        ranked = self._rank_goals(goals)
        reasons = []
        for _, cond in ranked:
            try:
                command = self.achieve(cond)
            except Stuck as exc:
                reasons.append(str(exc))
                continue
            self.memory.last_choice[("goal",)] = (repr(cond),)
            if command is None:  # it holds: stand still while the quest rule awards it
                return "wait", f"{cond.type} holds"
            if command.startswith(("drop ", "discard ")):
                self.memory.let_go[command.split()[-1 if command.startswith("drop ") else -2]] = step
            return command, f"toward {cond.type}"
        return self._idle(), "idle: " + ("; ".join(reasons) or "nothing to do")

    def _rank_goals(self, goals: list[Condition]) -> list[tuple[int, Condition]]:
        """Open goals, cheapest first, but the goal worked on last step stays first unless another is
        clearly cheaper: with parallel stages (a DAG quest) whose costs swap as the agent moves, pure
        cheapest-first walks back and forth between them forever."""
        if len(goals) < 2:
            return list(enumerate(goals))
        costs = [self.estimate(g) for g in goals]
        cheapest = min(costs)
        last = self.memory.last_choice.get(("goal",), (None,))[0]

        def rank(ig: tuple[int, Condition]) -> tuple[float, int, int]:
            i, g = ig
            sticky = costs[i] < INF and repr(g) == last and costs[i] <= cheapest * 1.5 + 5
            return (cheapest if sticky else costs[i], 0 if sticky else 1, i)

        return sorted(enumerate(goals), key=rank)

    def _idle(self) -> str:
        """Nothing known works: grow stronger (and let the world change) rather than stand still;
        with no experience to gain, get back the health a fight the quest waits on was lost for."""
        try:
            return self.tactics.gain_xp() or "wait"
        except Stuck:
            pass
        try:
            return self.tactics.recover() or "wait"
        except Stuck:
            return "wait"

    # ================================================================== questions callers ask
    def travel(self, area: str | None) -> float:
        """Steps to reach ``area`` from where I stand, dangers and locks included (INF: no way)."""
        return self.navigation.travel(area)

    def fight_ok(self, f: combat.Forecast) -> bool:
        """Whether a forecast fight is worth starting."""
        return self.tactics.fight_ok(f)

    # ================================================================== conditions
    def achieve(self, c: Condition) -> str | None:
        """Next command toward condition ``c``; None when it holds (state conditions) already."""
        plan = CONDITIONS.get(c.type)
        if plan is None:
            raise Stuck(f"no plan for condition type {c.type!r}")
        return plan.command(self, c)

    def estimate(self, c: Condition) -> float:
        """Rough steps to satisfy ``c`` (INF when no plan is known). Memoised per step by identity:
        only for conditions that live as long as the game (the quest's own)."""
        key = ("est", id(c))
        if key in self._memo:
            return self._memo[key]
        # a condition made afresh (a way's need, asked of its rule every time) dies when its asker is done,
        # and the next one may be born at its address and be taken for it: held until the memo is cleared
        self._estimated.append(c)
        self._memo[key] = INF  # cycle guard
        plan = CONDITIONS.get(c.type)
        try:
            value = plan.cost(self, c) if plan is not None else INF
        except Stuck:
            value = INF
        self._memo[key] = value
        return value

    def _cost(self, c: Condition) -> float:
        """The raw estimate of ``c`` (not memoised, may raise :class:`Stuck`), for conditions made
        afresh, whose identity would be a useless memo key."""
        return CONDITIONS[c.type].cost(self, c)

    # ---- events -------------------------------------------------------------
    def _c_npc_defeated(self, c: Condition) -> str | None:
        wanted = (c.npc,) if c.npc else c.npcs
        return self.tactics.defeat_any(wanted)

    def _e_npc_defeated(self, c: Condition) -> float:
        return self.tactics.cost_defeat((c.npc,) if c.npc else c.npcs)

    def _c_object_crafted(self, c: Condition) -> str | None:
        assert c.object is not None  # required: checked when the quest loads
        return self.supply.craft(c.object, 1)

    def _e_object_crafted(self, c: Condition) -> float:
        assert c.object is not None  # required: checked when the quest loads
        return self.supply.cost_craft(c.object, 1)

    def _c_object_bought(self, c: Condition) -> str | None:
        assert c.object is not None  # required: checked when the quest loads
        merchant = self.supply.best_merchant(c.object)
        if merchant is None:
            raise Stuck(f"no merchant sells {c.object}")
        return self.supply.buy(c.object, 1, merchant)

    def _e_object_bought(self, c: Condition) -> float:
        assert c.object is not None  # required: checked when the quest loads
        m = self.supply.best_merchant(c.object)
        return INF if m is None else self.supply.cost_buy(c.object, 1, m)

    def _c_object_sold(self, c: Condition) -> str | None:
        assert c.object is not None  # required: checked when the quest loads
        merchant = self.supply.buyer_for(c.object)
        if merchant is None:
            raise Stuck(f"no merchant buys {c.object}")
        with self.focus.need(c.object, 1):
            cmd = self.supply.have(c.object, 1)
        if cmd is not None:
            return cmd
        return self.navigation.go(merchant.area) or f"sell 1 {self.supply.carried_handle(c.object)} {merchant.handle}"

    def _e_object_sold(self, c: Condition) -> float:
        assert c.object is not None  # required: checked when the quest loads
        m = self.supply.buyer_for(c.object)
        return INF if m is None else self.supply.cost_have(c.object, 1) + self.navigation.travel(m.area) + 1

    def _c_area_entered(self, c: Condition) -> str | None:
        assert c.area is not None  # required: checked when the quest loads
        if self.view.here == c.area:
            exits = [a for a, ex in self.view.state.areas[self.view.here].exits.items() if not ex.locked]
            if not exits:
                raise Stuck(f"cannot step out of {c.area} to enter it again")
            return f"enter {exits[0]}"
        return self.navigation.go(c.area)

    def _e_area_entered(self, c: Condition) -> float:
        return 2 if self.view.here == c.area else self.navigation.travel(c.area)

    def _c_talked_to(self, c: Condition) -> str | None:
        assert c.npc is not None  # required: checked when the quest loads
        npcs = self.view.npcs.get(c.npc, [])
        best = min(npcs, key=lambda n: self.navigation.travel(n.area), default=None)
        if best is None or self.navigation.travel(best.area) == INF:
            raise Stuck(f"nobody of kind {c.npc} can be reached")
        return self.navigation.go(best.area) or f"talk to {best.handle}"

    def _e_talked_to(self, c: Condition) -> float:
        assert c.npc is not None  # required: checked when the quest loads
        return min((self.navigation.travel(n.area) + 1 for n in self.view.npcs.get(c.npc, [])), default=INF)

    def _c_text_written(self, c: Condition) -> str | None:
        return self.supply.write(c.text or SAFE_TEXT, c.object)

    def _e_text_written(self, c: Condition) -> float:
        return self.supply.cost_write(c.object, c.text or SAFE_TEXT)

    def _c_object_eaten(self, c: Condition) -> str | None:
        assert c.object is not None  # required: checked when the quest loads
        if "eat" not in self.view.verbs:
            raise Stuck("this game has no eat verb")
        if self.view.carried.get(c.object, 0) or self.view.lying_count(self.view.here, c.object):
            return f"eat {c.object}"
        with self.focus.need(c.object, 1):
            return self.supply.have(c.object, 1)

    def _e_object_eaten(self, c: Condition) -> float:
        assert c.object is not None  # required: checked when the quest loads
        return self.supply.cost_have(c.object, 1) + 1 if "eat" in self.view.verbs else INF

    def _c_object_dropped(self, c: Condition) -> str | None:
        assert c.object is not None  # required: checked when the quest loads
        return self.supply.drop_in(c.object, c.area)

    def _e_object_dropped(self, c: Condition) -> float:
        assert c.object is not None  # required: checked when the quest loads
        return self.supply.cost_have(c.object, 1) + (self.navigation.travel(c.area) if c.area else 0) + 2

    # ---- states -------------------------------------------------------------
    def _c_in_area(self, c: Condition) -> str | None:
        assert c.area is not None  # required: checked when the quest loads
        return self.navigation.go(c.area)

    def _e_in_area(self, c: Condition) -> float:
        return self.navigation.travel(c.area)

    def _c_has_item_count(self, c: Condition) -> str | None:
        assert c.object is not None  # required: checked when the quest loads
        worn = self.view.owned(c.object) - self.view.carried.get(c.object, 0)
        if self.view.owned(c.object) >= c.count:
            return None
        with self.focus.need(c.object, c.count - worn):
            return self.supply.have(c.object, c.count - worn)

    def _e_has_item_count(self, c: Condition) -> float:
        assert c.object is not None  # required: checked when the quest loads
        worn = self.view.owned(c.object) - self.view.carried.get(c.object, 0)
        return self.supply.cost_have(c.object, c.count - worn)

    def _c_equipped_any_of(self, c: Condition) -> str | None:
        v = self.view
        if any(v.tname(h) in c.objects for h in v.agent.equipment.values()):
            return None
        best = self.memory.sticky_min(("equip_any", *c.objects), list(c.objects), lambda t: self.supply.cost_have(t, 1))
        if best is None:
            raise Stuck(f"none of {', '.join(c.objects)} can be had")
        return self.supply.equip(best)

    def _e_equipped_any_of(self, c: Condition) -> float:
        if any(self.view.tname(h) in c.objects for h in self.view.agent.equipment.values()):
            return 0
        return min((self.supply.cost_have(t, 1) + 2 for t in c.objects), default=INF)

    def _c_holds_category(self, c: Condition) -> str | None:
        assert c.category is not None  # required: checked when the quest loads
        v = self.view
        if any(v.otype(h).category == c.category for h in v.agent.hands):
            return None
        t = self.supply.cheapest_of_category(c.category)
        if t is None:
            raise Stuck(f"no {c.category} can be had")
        return self.supply.hold(t)

    def _e_holds_category(self, c: Condition) -> float:
        assert c.category is not None  # required: checked when the quest loads
        if any(self.view.otype(h).category == c.category for h in self.view.agent.hands):
            return 0
        t = self.supply.cheapest_of_category(c.category)
        return INF if t is None else self.supply.cost_hold(t)

    def _c_visited_k_of(self, c: Condition) -> str | None:
        areas = c.areas or tuple(self.view.game.areas)
        visited = self.view.agent.visited
        if sum(1 for a in areas if a in visited) >= c.count:
            return None
        todo = [a for a in areas if a not in visited and a in self.view.state.areas]
        if not todo:
            raise Stuck("no unvisited area of the set exists")
        return self.navigation.go(min(todo, key=lambda a: (self.navigation.travel(a), todo.index(a))))

    def _e_visited_k_of(self, c: Condition) -> float:
        areas = c.areas or tuple(self.view.game.areas)
        visited = self.view.agent.visited
        missing = c.count - sum(1 for a in areas if a in visited)
        if missing <= 0:
            return 0
        costs = sorted(self.navigation.travel(a) for a in areas if a not in visited and a in self.view.state.areas)
        return sum(costs[:missing]) if len(costs) >= missing else INF

    def _c_defeated_n(self, c: Condition) -> str | None:
        kills = self.view.agent.kills
        done = kills.get(c.npc, 0) if c.npc else sum(kills.values())
        if done >= c.count:
            return None
        return self.tactics.defeat_any((c.npc,) if c.npc else ())

    def _e_defeated_n(self, c: Condition) -> float:
        kills = self.view.agent.kills
        done = kills.get(c.npc, 0) if c.npc else sum(kills.values())
        if done >= c.count:
            return 0
        return (c.count - done) * self.tactics.cost_defeat((c.npc,) if c.npc else ())

    def _c_text_equals_in(self, c: Condition) -> str | None:
        assert c.text is not None  # required: checked when the quest loads
        if holds(self.view.engine, self.view.agent, c):
            return None
        handle = self.supply.find_written(c.text, c.object)
        if handle is None:
            return self.supply.write(c.text, c.object)
        if c.area is None:  # carried is enough
            return self.supply.fetch_handle(handle)
        return self.supply.drop_handle_in(handle, c.area)

    def _e_text_equals_in(self, c: Condition) -> float:
        assert c.text is not None  # required: checked when the quest loads
        return self.supply.cost_write(c.object, c.text) + (self.navigation.travel(c.area) + 2 if c.area else 0)

    def _c_object_in_area(self, c: Condition) -> str | None:
        assert c.object is not None  # required: checked when the quest loads
        assert c.area is not None  # required: checked when the quest loads
        v = self.view
        if c.area in v.state.areas and v.lying_count(c.area, c.object) >= c.count:
            return None
        with self.focus.sparing(c.area, c.object):  # what lies there already counts: bring more
            return self.supply.drop_in(c.object, c.area)

    def _e_object_in_area(self, c: Condition) -> float:
        assert c.object is not None  # required: checked when the quest loads
        assert c.area is not None  # required: checked when the quest loads
        missing = c.count - self.view.lying_count(c.area, c.object)
        if missing <= 0:
            return 0
        with self.focus.sparing(c.area, c.object):
            return self.supply.cost_have(c.object, missing) + self.navigation.travel(c.area) + 2

    def _c_level_at_least(self, c: Condition) -> str | None:
        if self.view.agent.level >= c.count:
            return None
        return self.tactics.gain_xp()

    def _e_level_at_least(self, c: Condition) -> float:
        body = self.view.game.spec.agent
        need = (c.count - 1) * body.xp_per_level - self.view.agent.xp
        return max(0.0, need / 3)

    def _c_stage_completed(self, c: Condition) -> str | None:
        assert c.stage is not None  # required: checked when the quest loads
        data = self.view.state.rule_data.get("main_quest")
        if data and c.stage in data["agents"][self.agent_id]["done"]:
            return None
        main = self.view.game.quest.main
        if main is None:
            raise Stuck("no main quest")
        return self.achieve(plan(main).by_id[c.stage].done)

    def _e_stage_completed(self, c: Condition) -> float:
        assert c.stage is not None  # required: checked when the quest loads
        data = self.view.state.rule_data.get("main_quest")
        if data and c.stage in data["agents"][self.agent_id]["done"]:
            return 0
        main = self.view.game.quest.main
        return INF if main is None else self.estimate(plan(main).by_id[c.stage].done)

    # ---- combinators ----------------------------------------------------------
    def _c_any_of(self, c: Condition) -> str | None:

        subs = list(c.conditions)
        if any(family(s) != "event" and holds(self.view.engine, self.view.agent, s) for s in subs):
            return None
        order = sorted(range(len(subs)), key=lambda i: (self.estimate(subs[i]), i))
        first = self.memory.sticky_min(("any_of", repr(c)), order, lambda i: self.estimate(subs[i]))
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

        # Things to acquire first, then places to be, then the events that must happen last.
        def rank(s: Condition) -> int:
            fam = family(s)
            if fam == "event":
                return 2
            return 1 if s.type == "in_area" else 0

        pending = False
        with contextlib.ExitStack() as kept:
            # what a purchase or a sale part takes is got before the places are gone to (Mark seed 111:
            # all_of(in the grotto, bought the tear) walked to the grotto, then away for the coins, then
            # back, because being there came first: 400 steps between two areas)
            for s in c.conditions:
                cmd = self._goods_for_trade(s)
                if cmd is not None:
                    return cmd
            for s in sorted(c.conditions, key=rank):
                if family(s) != "event" and holds(self.view.engine, self.view.agent, s):
                    self._keep_what_holds(s, kept)
                    continue
                pending = True
                cmd = self.achieve(s)
                if cmd is not None:
                    return cmd
        return None if not pending else self._idle()

    def _goods_for_trade(self, s: Condition) -> str | None:
        """The next step towards the coins a purchase part needs, or the thing a sale part sells."""
        v = self.view
        if s.type == "object_bought" and s.object and v.currency is not None:
            merchant = self.supply.best_merchant(s.object)
            if merchant is None:
                return None
            coins = self.supply.price(s.object)
            with self.focus.need(v.currency, coins):
                return self.supply.have(v.currency, coins)
        if s.type == "object_sold" and s.object and self.supply.buyer_for(s.object) is not None:
            with self.focus.need(s.object, 1):
                return self.supply.have(s.object, 1)
        return None

    def _keep_what_holds(self, s: Condition, kept: contextlib.ExitStack) -> None:
        """While the rest of a conjunction is planned, keep what a part that holds already rests on.

        Without this, walking to the area of ``all_of(text_equals_in(word), in_area(x))`` may need a hand
        freed (to carry a key's materials, say) and drop the written paper, which the next step picks
        up again: a loop that never reaches ``x``.
        """
        if s.type == "text_equals_in" and s.area is None:
            assert s.text is not None  # required: checked when the quest loads
            handle = self.supply.find_written(s.text, s.object)
            if handle is not None:
                kept.enter_context(self.focus.need(self.view.tname(handle), 1))
                kept.enter_context(self.focus.keeping(handle))
        elif s.type == "has_item_count" and s.object:
            kept.enter_context(self.focus.need(s.object, max(1, s.count)))

    def _e_all_of(self, c: Condition) -> float:
        return sum(self.estimate(s) for s in c.conditions)

    def _c_predicate(self, c: Condition) -> str | None:
        if c.name == "did":  # the engine's own event predicate (odyssey_env.quests.predicates)
            args = dict(c.args)
            return self.events.cause(args.pop("kind", ""), args)
        if c.plan:
            return self._follow_plan(c)
        raise Stuck(f"predicate {c.name!r} is opaque to the planner (it has no plan)")

    def _e_predicate(self, c: Condition) -> float:
        if c.plan:
            return sum(self.estimate(s) for s in self._plan_left(c))
        if c.name != "did":
            return INF
        kind = c.args.get("kind", "")
        as_condition = event_condition(kind, {k: v for k, v in c.args.items() if k != "kind"})
        if as_condition is None:  # an event of a game's own verb: a try, after what its verbs say they need
            return 4 + self.events.need_cost(kind, {k: v for k, v in c.args.items() if k != "kind"})
        try:  # not estimate(): its memo is keyed by identity, and this condition is made afresh
            return self._cost(as_condition)
        except Stuck:
            return INF

    # ---- a game's own predicates, through their plans -------------------------
    @staticmethod
    def plan_key(c: Condition) -> str:
        """A stable name for a predicate condition (the same in every process, for checkpoints)."""
        return f"{c.name}:{json.dumps(c.args, sort_keys=True, default=str)}"

    def _plan_left(self, c: Condition) -> list[Condition]:
        """The steps of ``c``'s plan still to do: state steps that do not hold, event steps not yet caused."""

        v, key = self.view, self.plan_key(c)
        passed = self.memory.plan_progress.get(key, 0)
        left = []
        for i, step in enumerate(c.plan):
            if family(step) == "event" or (step.type == "predicate" and step.name == "did"):
                if i < passed:
                    continue
                if holds(v.engine, v.agent, step):  # it happened on the step just played
                    self.memory.plan_progress[key] = passed = i + 1
                    continue
            elif holds(v.engine, v.agent, step):
                continue
            left.append(step)
        return left

    def _note_plan_events(self, goals: list[Condition]) -> None:
        """Record the plan steps whose event happened on the step just played, whatever decides this one.

        An event holds for one step only: if a fight or an opportunity takes the step right after a plan's
        event, the plan would otherwise wait for that event forever (a tending verb done once, then
        refused until its counter runs down, is never seen as done).
        """
        stack = list(goals)
        while stack:
            c = stack.pop()
            if c.type == "predicate" and c.plan:
                self._plan_left(c)
            stack.extend(c.conditions)

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


class ConditionPlan(NamedTuple):
    """How the planner handles one condition type of the quest vocabulary."""

    command: Callable[[Planner, Condition], str | None]  # the next command toward it; None when it holds
    cost: Callable[[Planner, Condition], float]  # rough steps to make it hold (may raise Stuck)


#: Condition type -> its plan. Every type of ``odyssey_env.quests.conditions.VOCABULARY`` is listed
#: (a test checks it); a type missing here makes its goal :class:`Stuck`.
CONDITIONS: dict[str, ConditionPlan] = {
    "npc_defeated": ConditionPlan(Planner._c_npc_defeated, Planner._e_npc_defeated),
    "object_crafted": ConditionPlan(Planner._c_object_crafted, Planner._e_object_crafted),
    "object_bought": ConditionPlan(Planner._c_object_bought, Planner._e_object_bought),
    "object_sold": ConditionPlan(Planner._c_object_sold, Planner._e_object_sold),
    "area_entered": ConditionPlan(Planner._c_area_entered, Planner._e_area_entered),
    "talked_to": ConditionPlan(Planner._c_talked_to, Planner._e_talked_to),
    "text_written": ConditionPlan(Planner._c_text_written, Planner._e_text_written),
    "object_eaten": ConditionPlan(Planner._c_object_eaten, Planner._e_object_eaten),
    "object_dropped": ConditionPlan(Planner._c_object_dropped, Planner._e_object_dropped),
    "in_area": ConditionPlan(Planner._c_in_area, Planner._e_in_area),
    "has_item_count": ConditionPlan(Planner._c_has_item_count, Planner._e_has_item_count),
    "equipped_any_of": ConditionPlan(Planner._c_equipped_any_of, Planner._e_equipped_any_of),
    "holds_category": ConditionPlan(Planner._c_holds_category, Planner._e_holds_category),
    "visited_k_of": ConditionPlan(Planner._c_visited_k_of, Planner._e_visited_k_of),
    "defeated_n": ConditionPlan(Planner._c_defeated_n, Planner._e_defeated_n),
    "text_equals_in": ConditionPlan(Planner._c_text_equals_in, Planner._e_text_equals_in),
    "object_in_area": ConditionPlan(Planner._c_object_in_area, Planner._e_object_in_area),
    "level_at_least": ConditionPlan(Planner._c_level_at_least, Planner._e_level_at_least),
    "stage_completed": ConditionPlan(Planner._c_stage_completed, Planner._e_stage_completed),
    "any_of": ConditionPlan(Planner._c_any_of, Planner._e_any_of),
    "all_of": ConditionPlan(Planner._c_all_of, Planner._e_all_of),
    "predicate": ConditionPlan(Planner._c_predicate, Planner._e_predicate),
}
