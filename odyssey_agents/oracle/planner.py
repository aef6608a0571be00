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

The parts live in their own modules (:mod:`.goals`, :mod:`.navigation`, :mod:`.supply`,
:mod:`.tactics`, with their shared state in :mod:`.core`); this class adds the step's entry point,
the fight-in-progress reflexes and a little opportunism (a bag to wear, a better weapon lying here).

Costs are estimated in steps with the same source model, so choices (which source, which branch of an
``any_of``, which open stage) go to the cheapest. A goal that cannot be reached raises :class:`Stuck`,
which lets a caller try something else. The only memory kept between steps is what breaks ties in
favour of the last choice (so the agent does not dither) and what the agent has found not to work.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from odyssey_agents.oracle import combat
from odyssey_agents.oracle.core import INF, LET_GO_STEPS, Stuck
from odyssey_agents.oracle.goals import Goals
from odyssey_agents.oracle.navigation import Navigation
from odyssey_agents.oracle.supply import Supply
from odyssey_agents.oracle.tactics import Tactics
from odyssey_agents.oracle.view import View

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.quests.spec import Condition

__all__ = ["Planner", "Stuck"]

#: Condition types that need an object carried (to have it, or to put it down, sell or eat it).
CARRIED_CONDITIONS = frozenset({"has_item_count", "object_in_area", "object_dropped", "object_sold", "object_eaten"})


class Planner(Goals, Navigation, Supply, Tactics):
    """Decides one command per step for one agent (see the module docstring)."""

    # ================================================================== entry point
    def decide(self, engine: Engine, goals: list[Condition]) -> tuple[str, str]:
        """The command for this step and a short reason."""
        self.v = View(engine, self.agent_id)
        self._memo = {}
        self._needed = {}
        self._keep = []
        self._pursuing = []
        self._causing = []
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

        later = self._later_stages(engine)
        self._protect = self._closure([*goals, *later])
        now = self._carry_list(goals)
        self._wanted_later = {t: w for t, w in self._carry_list(later).items() if t not in now}
        quick = self._opportunity() if step >= self.calm_until else None
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
            self.last_choice[("goal",)] = (repr(cond),)
            if command is None:  # it holds: stand still while the quest rule awards it
                return "wait", f"{cond.type} holds"
            if command.startswith(("drop ", "discard ")):
                self.let_go[command.split()[-1 if command.startswith("drop ") else -2]] = step
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
        last = self.last_choice.get(("goal",), (None,))[0]

        def rank(ig: tuple[int, Condition]) -> tuple[float, int, int]:
            i, g = ig
            sticky = costs[i] < INF and repr(g) == last and costs[i] <= cheapest * 1.5 + 5
            return (cheapest if sticky else costs[i], 0 if sticky else 1, i)

        return sorted(enumerate(goals), key=rank)

    def _later_stages(self, engine: Engine) -> list[Condition]:
        """Conditions of the main-quest stages not done yet (what they need is not sold early)."""
        main = engine.game.quest.main
        data = engine.state.rule_data.get("main_quest")
        if main is None or not data:
            return []
        done = set(data["agents"][self.agent_id]["done"])
        key = ("later", len(done))
        hit = self._stages_memo.get(key)
        if hit is None:
            hit = self._stages_memo[key] = [s.done for ch in main.chapters for s in ch.stages if s.id not in done]
        return hit

    def _carry_list(self, conds: list[Condition]) -> dict[str, tuple[int, str | None]]:
        """Objects that remaining stages want carried somewhere (type -> (count, area where it must
        end up, if any)): when one lies at my feet, taking it along saves a trip back."""
        key = ("carry", *map(id, conds))
        hit = self._stages_memo.get(key)
        if hit is not None:
            return hit  # type: ignore[return-value]
        out: dict[str, tuple[int, str | None]] = {}
        for c in _nested(conds):
            if c.object and c.type in CARRIED_CONDITIONS:
                area = c.area if c.type == "object_in_area" else None
                out[c.object] = (max(c.count, out.get(c.object, (0, None))[0]), area)
        self._stages_memo[key] = out  # type: ignore[assignment]
        return out

    def _closure(self, goals: list[Condition]) -> frozenset[str]:
        """Object types the goals name, with everything their recipes need (transitively): the
        things a goal may need, which are never sold for coins."""
        key = ("closure", *map(id, goals))  # conditions are frozen parts of the loaded game
        hit = self._stages_memo.get(key)
        if hit is not None:
            return hit  # type: ignore[return-value]
        objects = self.v.game.objects
        todo = [t for c in _nested(goals) for t in ((c.object,) if c.object else ()) + c.objects if t in objects]
        seen: set[str] = set()
        while todo:
            t = todo.pop()
            if t in seen:
                continue
            seen.add(t)
            recipe = objects[t].recipe
            if recipe is not None:
                todo.extend(recipe.ingredients)
        if len(self._stages_memo) > 256:
            self._stages_memo.clear()
        out = self._stages_memo[key] = frozenset(seen)  # type: ignore[assignment]
        return out

    # ================================================================== small things
    def _opportunity(self) -> str | None:
        """Cheap things worth a step whatever the goal (outside the tutorial, whose lessons are
        gated on doing things in order): wear a bag if I have none, take a better weapon or wear
        better armor lying right here, eat what lies here when hurt, take along what a later stage
        wants carried."""
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
            later = self._wanted_later.get(ot.name)
            if later is not None and later[1] != v.here and v.owned(ot.name) < later[0] and ot.portable:
                if v.hands_free() >= 1:
                    return f"pick up {handle}"
                if v.pack is not None and not ot.instanced and ot.category != "container" \
                        and v.pack_room() >= ot.size:
                    return f"store 1 {handle} {v.pack}"
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


def _nested(conds: Iterable[Condition]) -> Iterator[Condition]:
    """``conds`` and every condition inside them (``any_of``/``all_of`` branches), depth first."""
    stack = list(conds)
    while stack:
        c = stack.pop()
        stack.extend(c.conditions)
        stack.extend(c.plan)
        yield c
