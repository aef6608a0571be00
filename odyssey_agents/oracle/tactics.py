"""Fighting on purpose: choosing a target, deciding whether to prepare, and growing stronger.

Fights are forecast with :mod:`.combat`. A fight that would be lost, or long, is worth preparing for
when the preparation pays for itself: eating, a better weapon, better armor; if it would still be lost,
experience (easy fights, unexplored areas, first trades and crafts). The choice between fighting and
preparing is kept from step to step while it stays sensible, so the agent does not dither. Inside a
fight already under way, :func:`.combat.fight_step` decides, with two reflexes added here: eat in a
lull, and take up the best weapon.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from odyssey_agents.oracle import combat
from odyssey_agents.oracle.core import INF, LONG_FIGHT, Focus, Memory, Stuck

LOST_FIGHT = 400  # steps a fight not worth starting is reckoned to cost (the preparing it would need)
AHEAD_LOST = 60  # ... and a later one, which there will be other chances to prepare for
ENCOUNTER = 0.5  # odds that a hostile enemy now in the world is fought before the quest ends
PREPAID = 0.3  # share of the fetching charged for gear a later stage asks for anyway (the detour)
HEAL_PER_STEP = 15  # health a step of eating wins back, roughly (a fight's lost health costs that time)
MAX_GEAR_TRIP = 150  # gear further away than this is not fetched for fights (the estimate is too rough)
GEAR_SLACK = 1.25  # fetching gear may overrun its estimate this much (plus 10 steps) before it is given up
GEAR_DOUBT = 1.5  # gear is fetched only when the steps it saves are this many times those it costs
GEAR_BAN = 120  # steps gear given up on is not tried again
MEAL_TARGET = 0.8  # share of my health the meals fetched before a fight are to bring me to
MAX_MEALS = 5  # meals fetched at most in one trip before a fight
HOURS_WAIT = 12  # steps I wait at most for harder hours to pass before a fight they would turn

if TYPE_CHECKING:
    from odyssey_agents.oracle.foresight import Foresight
    from odyssey_agents.oracle.navigation import Navigation
    from odyssey_agents.oracle.supply import Supply
    from odyssey_agents.oracle.view import View
    from odyssey_env.state import Npc


class Tactics:
    """Choosing fights, preparing for them, and gaining experience.

    It owns the fight forecasts, kept across steps (a forecast depends only on the numbers in its
    key, and most steps ask about the same few enemies). It reads ``memory.banned``, writes
    ``memory.last_choice`` under ``("prep", npc)`` (the preparation chosen for a fight) and
    ``focus.used``. Its peers: navigation to reach a foe, supply for food, gear and the things a
    first trade or craft needs.
    """

    def __init__(self, focus: Focus, memory: Memory) -> None:
        self.focus = focus
        self.memory = memory
        self.view: View  # set by begin() every step
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._fights: dict[tuple[Any, ...], combat.Forecast] = {}  # forecasts kept across steps
        self.navigation: Navigation
        self.supply: Supply
        self.foresight: Foresight | None = None  # set by the planner: the fights later stages ask for
        self._worn_out: tuple[int, str] | None = None  # (step, enemy) a fight lost and no xp left to gain

    def connect(self, navigation: Navigation, supply: Supply) -> None:
        """Meet the peers (they need this part too, so they cannot all be passed at construction)."""
        self.navigation = navigation
        self.supply = supply

    def begin(self, view: View) -> None:
        """A new step: the enemies' clock is read afresh (forecasts stay: they are keyed by their numbers)."""
        self.view = view
        self._memo = {}

    def in_fight(self) -> tuple[str, str]:
        """The command while enemies are engaged with me, and a short reason."""
        v = self.view
        command, why = combat.fight_step(v)
        if command in ("wait", "defend"):
            lull = combat.no_blow_coming(v)
            food = self._food_at_hand()
            if lull and food is not None and v.agent.hp < v.agent.max_hp * 0.5:
                return f"eat {food}", "eating in a lull of the fight"
            if lull or v.agent.hp > v.agent.max_hp * 0.5:
                arm = self.arm()
                if arm is not None:
                    return arm, "taking up my best weapon in the fight"
        return command, why

    def _food_at_hand(self) -> str | None:
        """The most restoring food I carry or see here (games with the eat verb)."""
        v = self.view
        if "eat" not in v.verbs:
            return None
        options = [t for t in v.carried if v.game.objects[t].category == "food"]
        options += [v.tname(h) for h in v.objects_at(v.here) if v.otype(h).category == "food"]
        return max(options, key=lambda t: (v.game.objects[t].hp_restore, t), default=None)

    def _stats(self, weapon: str | None = None) -> tuple[int, int]:
        """Attack and defense if I held my best carried weapon (or ``weapon``)."""
        v = self.view
        # What my hands give now, as the engine counts it (a game's rules may blunt what is held), and
        # the listed attack of what I could take out of a bag instead.
        best = max(0, v.agent.attack - v.agent.base_attack)
        in_hands: dict[str, int] = {}
        for h, n in v.agent.hands.items():
            in_hands[v.tname(h)] = in_hands.get(v.tname(h), 0) + n
        for t, n in v.carried.items():
            if n > in_hands.get(t, 0) and v.game.objects[t].attack > best:
                best = v.game.objects[t].attack
        if weapon is not None:
            best = max(best, v.game.objects[weapon].attack)
        return v.agent.base_attack + best, v.agent.defense

    def outlook(
        self, npc: Npc, weapon: str | None = None, armor: str | None = None, hp: int | None = None
    ) -> combat.Forecast:
        """Forecast of a fight with ``npc`` (holding my best weapon, or ``weapon``; wearing
        ``armor`` too; with ``hp`` health), for costing.

        Enemies are taken to hit as hard as they will next step throughout (:class:`combat.Steady`),
        so a forecast depends on nothing but the numbers in its key and is kept across steps: most
        steps ask about the same few enemies.
        """
        v = self.view
        attack, defense = self._stats(weapon)
        if armor is not None:
            worn = v.agent.equipment.get(v.game.objects[armor].equip_slot or "body")
            defense += v.game.objects[armor].defense - (v.otype(worn).defense if worn else 0)
        foes = [combat.foe_of(v, npc)] + [combat.foe_of(v, n) for n in v.engaged_foes() if n.handle != npc.handle]
        agent = v.agent
        hp = agent.hp if hp is None else hp
        modifier = self._steady_modifier()
        opening = npc.engaged != agent.id
        key = (
            tuple((f.hp, f.attack, f.defense, f.pattern, f.index % max(1, len(f.pattern))) for f in foes),
            attack,
            defense,
            hp,
            agent.max_hp,
            agent.stamina,
            modifier,
            opening,
        )
        hit = self._fights.get(key)
        if hit is None:
            if len(self._fights) > 4096:
                self._fights.clear()
            hit = self._fights[key] = combat.forecast(
                v, foes, attack=attack, defense=defense, hp=hp, clock=combat.Steady(modifier), opening=opening
            )
        return hit

    def _steady_modifier(self) -> float:
        hit = self._memo.get(("modifier",))
        if hit is None:
            hit = self._memo[("modifier",)] = combat.Clock(self.view).modifier(1)
        return hit

    def cost_fight(self, npc: Npc) -> float:
        d = self.navigation.travel(npc.area)
        if d == INF:
            return INF
        f = self.outlook(npc)
        if not self.fight_ok(f):
            return INF
        return d + f.steps + 1

    def cost_defeat(self, types: tuple[str, ...]) -> float:
        v = self.view
        options = [n for n in v.state.npcs.values() if v.hostile(n) and (not types or n.type in types)]
        if not options:
            return INF
        best = min(self.cost_fight(n) for n in options)
        if best < INF:
            return best
        return 60 + min(self.navigation.travel(n.area) for n in options)  # preparation will be needed

    def defeat_any(self, types: tuple[str, ...]) -> str | None:
        """Defeat one NPC of the given types (any hostile one if empty), preparing if it pays.

        The choice between fighting now and preparing (eating, fetching gear, training) is kept
        from step to step while it still makes sense, so the agent does not dither between them.
        """
        v = self.view
        options = [
            n
            for n in v.state.npcs.values()
            if v.hostile(n) and (not types or n.type in types) and self.navigation.travel(n.area) < INF
        ]
        options = [n for n in options if ("npc", n.handle) not in self.memory.banned] or options
        if not options:
            raise Stuck(f"no {' or '.join(types) or 'enemy'} to fight")
        ranked = sorted(options, key=lambda n: (self.cost_fight(n), self.navigation.travel(n.area), n.handle))
        target = ranked[0]
        f = self.outlook(target)
        key = ("prep", target.handle)
        kept = self.memory.last_choice.get(key)
        choice = kept if kept is not None and self._still_wise(kept, f) else None
        if choice is None and not self.fight_ok(f) and self._won_after_hours(target) and self._may_wait_out(target):
            raise Stuck(f"the hours are against the fight with {target.handle}: it waits for them to pass")
        if choice is None:
            if self.fight_ok(f) and f.steps <= LONG_FIGHT:
                gear = self._better_gear(target, f) if self._hard_fight_ahead(target) else None
                choice = ("gear", v.state.step, *gear) if gear else ("fight", v.state.step)
            else:
                choice = self._preparation(target, f) or ("fight", v.state.step)
        self.memory.last_choice[key] = choice
        kind = choice[0]
        if kind == "eat":
            food = choice[2]
            if v.carried.get(food, 0) or v.lying_count(v.here, food):
                return f"eat {food}"
            return self._fetch_meals(food)
        if kind == "gear":
            t, is_armor = choice[2], choice[3]
            self.focus.used.append(("armor" if is_armor else "weapon", t))
            with self.focus.need(t, 1):
                return self.supply.equip(t) if is_armor else self.supply.hold(t)
        if kind == "xp":
            try:
                return self.gain_xp(avoid=target.handle)
            except Stuck:
                self._worn_out = (v.state.step, target.handle)  # for recover(), if nothing else is left
                raise
        return self.defeat(target)

    def _fetch_meals(self, food: str) -> str | None:
        """Next command toward the meals that win back the health a fight is prepared for, fetched
        in one trip: one at a time, each meal eaten as soon as it is made or bought sends me back
        for the next (paper Remnant seed 2 walked river -> hall for two herbs per herb tea, four
        times over, 20 steps, where one trip for eight herbs and one craft of four teas does).
        As many as bring me to MEAL_TARGET of my health (where :meth:`_still_wise` stops eating),
        at most MAX_MEALS; a single one when more cannot be had or are dearer than their worth."""
        v = self.view
        agent = v.agent
        restore = max(1, v.game.objects[food].hp_restore)
        n = -(-(int(agent.max_hp * MEAL_TARGET) - agent.hp) // restore)
        n = max(1, min(MAX_MEALS, n))
        one = self.supply.cost_have(food, 1)
        while n > 1 and self.supply.cost_have(food, n) > one * n:
            n -= 1  # more at once only when cheaper than one trip each
        if n > 1:
            try:
                with self.focus.need(food, n):
                    return self.supply.have(food, n)
            except Stuck:
                pass  # e.g. no room for them all: one at a time, as before
        with self.focus.need(food, 1):
            return self.supply.have(food, 1)

    def _still_wise(self, choice: tuple[Any, ...], f: combat.Forecast) -> bool:
        """Whether a preparation chosen earlier is still worth following."""
        v = self.view
        kind, since = choice[0], choice[1]
        age = v.state.step - since
        if kind == "fight":
            return self.fight_ok(f)
        if kind == "eat":
            return age < 40 and v.agent.hp < v.agent.max_hp * 0.8 and self.supply.cost_have(choice[2], 1) < INF
        if kind == "gear":
            t, is_armor = choice[2], choice[3]
            due = choice[4] if len(choice) > 4 else since + 80  # a choice saved before due dates
            done = v.worn(t) is not None if is_armor else v.carried.get(t, 0) > 0
            if done:
                return False
            if v.state.step > due or self.supply.cost_have(t, 1) == INF:
                # fetching it overran what it was reckoned to take: estimates of gear are not to be
                # trusted here for a while (the next best is usually fetched the same way), fight as I am
                self.memory.banned[("armor" if is_armor else "weapon", t)] = v.state.step + GEAR_BAN
                self.memory.banned[("gear",)] = v.state.step + GEAR_BAN
                return False
            return True
        return False  # training is re-planned every step

    def defeat(self, npc: Npc) -> str | None:
        v = self.view
        self.focus.used.append(("npc", npc.handle))
        if npc.area != v.here:
            return self.navigation.go(npc.area)
        arm = self.arm()
        if arm is not None:
            return arm
        if npc.engaged != v.agent.id and self._hours_turn_it(npc) and self._may_wait_out(npc):
            # not beside it, waiting: idle enemies ambush, at night more often; something else first
            raise Stuck(f"the coming hours would turn the fight with {npc.handle}")
        return f"attack {npc.handle}"

    def _may_wait_out(self, npc: Npc) -> bool:
        """Whether the fight with ``npc`` may still be put off for the hours (HOURS_WAIT steps from the
        first time it was, then not again for a while: the hours are not waited out forever)."""
        step = self.view.state.step
        key = ("hours", npc.handle)
        since = self.memory.last_choice.get(key)
        if since is None or step - since[0] > HOURS_WAIT * 3:
            since = self.memory.last_choice[key] = (step,)
        return step - since[0] < HOURS_WAIT

    def _won_after_hours(self, npc: Npc) -> bool:
        """Whether a fight lost by the steady forecast (enemies hitting as hard as in the hours now
        begun: night, danger hours) would be worth starting once they are over, within HOURS_WAIT
        steps: then it is waited for, not prepared for (gear fetched in a rush, Remnant seed 26's
        final boss at midnight)."""
        clock = combat.Clock(self.view)
        now = self._steady_modifier()
        calm = min(clock.modifier(k) for k in range(1, HOURS_WAIT + 1))
        if calm >= now:
            return False
        v = self.view
        attack, defense = self._stats()
        foes = [combat.foe_of(v, npc)] + [combat.foe_of(v, n) for n in v.engaged_foes() if n.handle != npc.handle]
        later = combat.forecast(
            v, foes, attack=attack, defense=defense, clock=combat.Steady(calm), opening=npc.engaged != v.agent.id
        )
        return self.fight_ok(later)

    def _hours_turn_it(self, npc: Npc) -> bool:
        """Whether a fight worth starting by the steady forecast (:meth:`outlook`) would be lost to
        the hours it runs into (night, danger hours: enemies hit harder), as the clock will really
        go: then it is not begun yet (a fight begun at 23:50 is fought at midnight), for HOURS_WAIT
        steps at most (the night lasts six steps of ten minutes; danger hours may follow)."""
        v = self.view
        f = self.outlook(npc)
        if not self.fight_ok(f):
            return False
        real = combat.forecast(v, [combat.foe_of(v, npc)], attack=self._stats()[0], opening=True)
        return not self.fight_ok(real)

    def arm(self) -> str | None:
        """Hold my best carried weapon before a fight (one step, only if it is in my pack)."""
        v = self.view
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
        return self.supply.make_room()

    def fight_ok(self, f: combat.Forecast) -> bool:
        """A fight worth starting: won, with a quarter of my health to spare. Already below a quarter in a
        game where I cannot eat (health comes back only with a level), no fight would ever be: there it
        is worth starting when won with more health to spare than it takes (were it to go twice as badly
        as forecast, it would still be won). Paper Robot Kingdom seed 4, at 39 of 280 health, trained
        for 250 steps rather than fight a colossus forecast to take none of it."""
        if not f.won:
            return False
        v = self.view
        quarter = v.agent.max_hp * 0.25
        if f.hp_left >= quarter:
            return True
        return v.agent.hp < quarter and f.hp_left > f.lost and not self._can_eat()

    def _can_eat(self) -> bool:
        """Whether the game lets me win health back by eating (some food type restores health)."""
        v = self.view
        return "eat" in v.verbs and any(o.hp_restore > 0 for o in v.game.spec.objects if o.category == "food")

    def _preparation(self, npc: Npc, f: combat.Forecast) -> tuple[Any, ...] | None:
        """What to do before a fight that would be lost or long, when it pays for itself: eat,
        fetch a better weapon or armor; train if the fight would be lost. None: fight as things are."""
        v = self.view
        agent = v.agent
        step = v.state.step
        ok = self.fight_ok(f)
        worth = f.steps if ok else 400  # what the fight costs as things are
        if "eat" in v.verbs and agent.hp < agent.max_hp:
            food = self._best_food()
            if food is not None:
                healed = self.outlook(npc, hp=min(agent.max_hp, agent.hp + v.game.objects[food].hp_restore))
                if agent.hp < agent.max_hp * 0.8 and (
                    (self.fight_ok(healed) and healed.steps + 1 < worth) or healed.hp_left > f.hp_left + 5
                ):
                    return ("eat", step, food)
                # a fight lost only for want of health: a few meals win it, sooner than gear is fetched
                if not ok and self.fight_ok(self.outlook(npc, hp=agent.max_hp)):
                    return ("eat", step, food)
        gear = self._better_gear(npc, f)
        if gear is not None:
            return ("gear", step, *gear)
        return None if ok else ("xp", step)

    def _best_food(self) -> str | None:
        v = self.view
        foods = [o for o in v.game.spec.objects if o.category == "food"]
        scored = [
            (self.supply.cost_have(o.name, 1) - o.hp_restore / 5, o.name)
            for o in foods
            if self.supply.cost_have(o.name, 1) < 30 or v.lying_count(v.here, o.name)
        ]
        return min(scored)[1] if scored else None

    def _foes_ahead(self, npc: Npc) -> list[tuple[combat.Foe, float]]:
        """The other fights to come, besides the one with ``npc``, each with how likely it is: gear
        fetched now serves them too. One enemy of each type later stages ask to defeat (fresh, at
        full strength) for certain; each other hostile enemy in the world with ENCOUNTER odds (idle
        enemies ambush those who pass, and the quest sends the agent nearly everywhere)."""
        v = self.view
        later = self.foresight.foes_later if self.foresight is not None else ()
        out = [(combat.foe_of_type(v, t), 1.0) for t in later if t != npc.type]
        out += [
            (combat.foe_of(v, n), ENCOUNTER)
            for n in v.state.npcs.values()
            if n.handle != npc.handle and n.engaged is None and v.hostile(n)
        ]
        return out

    def _hard_fight_ahead(self, npc: Npc) -> bool:
        """Whether a later stage asks for a fight I would lose as things are: then even a short
        fight now is a moment to weigh gear (fetched on the way, not in a rush at the boss). A fight
        ahead that is merely long is prepared for when it comes (:meth:`_preparation`)."""
        v = self.view
        attack, defense = self._stats()
        later = self.foresight.foes_later if self.foresight is not None else ()
        for t in later:
            if t == npc.type:
                continue
            f = self._ahead(combat.foe_of_type(v, t), attack, defense)
            if not self.fight_ok(f):
                return True
        return False

    def _fight_cost(self, f: combat.Forecast, hp: int, lost: float = LOST_FIGHT) -> float:
        """Steps a forecast fight costs: its own, and the eating that wins back the health it takes
        (``lost`` when it is not worth starting: preparing some other way would be needed)."""
        if not self.fight_ok(f):
            return lost
        return f.steps + max(0, hp - f.hp_left) / HEAL_PER_STEP

    def _ahead(self, foe: combat.Foe, attack: int, defense: int) -> combat.Forecast:
        """Forecast of a fight to come with ``foe``, started by me at full health (cached: it depends
        on nothing but the numbers in its key)."""
        v = self.view
        agent = v.agent
        modifier = self._steady_modifier()
        key = ("ahead", foe, attack, defense, agent.max_hp, modifier)
        hit = self._fights.get(key)
        if hit is None:
            if len(self._fights) > 4096:
                self._fights.clear()
            hit = self._fights[key] = combat.forecast(
                v, [foe], attack=attack, defense=defense, hp=agent.max_hp, clock=combat.Steady(modifier), opening=True
            )
        return hit

    def _better_gear(self, npc: Npc, f: combat.Forecast) -> tuple[str, bool, int] | None:
        """The weapon or armor whose fetching saves most steps over the fights ahead (see
        :meth:`gear_gains`), with the step by which fetching it should be done."""
        options = self.gear_gains(npc, f)
        if not options:
            return None
        gain, name, is_armor, cost = max(options, key=lambda o: (o[0], o[1]))
        if gain <= 2:
            return None
        return name, is_armor, self.view.state.step + int(cost * GEAR_SLACK) + 10

    def gear_gains(self, npc: Npc, f: combat.Forecast, hp: int | None = None) -> list[tuple[float, str, bool, float]]:
        """(steps saved less steps to fetch, type, armor?, steps to fetch) of each weapon or armor
        better than mine. The steps saved are over the fights ahead: this one (forecast ``f`` as
        things are) and the others later stages ask for, each costed with the eating its lost health
        calls for. Gear outlives the fight, so one bought for the first boss pays again at every later
        one; a later fight that would be lost either way is reckoned at AHEAD_LOST, not LOST_FIGHT:
        there will be other chances to prepare for it. ``hp``: the health the fight at hand is
        fought with (``f`` forecast with it), my present health by default."""
        v = self.view
        if ("gear",) in self.memory.banned:
            return []
        current, defense = self._stats()
        hp = v.agent.hp if hp is None else hp
        worth = self._fight_cost(f, hp)
        ahead = self._foes_ahead(npc)
        named = self.foresight.named_later if self.foresight is not None else frozenset()
        base = [self._fight_cost(self._ahead(foe, current, defense), v.agent.max_hp, AHEAD_LOST) for foe, _ in ahead]
        out: list[tuple[float, str, bool, float]] = []
        for o in v.game.spec.objects:
            is_armor = o.category == "armor"
            gain_def = 0
            if is_armor:
                worn = v.agent.equipment.get(o.equip_slot or "body")
                gain_def = o.defense - (v.otype(worn).defense if worn else 0)
                if gain_def <= 0 or v.owned(o.name):
                    continue
            elif (
                o.attack <= 0
                or v.agent.base_attack + o.attack <= current
                or o.category not in ("weapon", "tool")
                or v.in_hands(o.name) is not None
            ):  # held already, if blunted by some rule of the game
                continue
            if (("armor" if is_armor else "weapon"), o.name) in self.memory.banned:
                continue
            cost = self.supply.cost_have(o.name, 1) + 1
            if cost > MAX_GEAR_TRIP:
                continue
            # what a later stage asks for has to be fetched anyway: now, it costs only the detour
            charged = cost * PREPAID if o.name in named else cost
            if is_armor:
                after = self.outlook(npc, armor=o.name, hp=hp)
                attack, guard = current, defense + gain_def
            else:
                after = self.outlook(npc, weapon=o.name, hp=hp)
                attack, guard = v.agent.base_attack + o.attack, defense
            saved = worth - self._fight_cost(after, hp)
            saved += sum(
                odds * (b - self._fight_cost(self._ahead(foe, attack, guard), v.agent.max_hp, AHEAD_LOST))
                for (foe, odds), b in zip(ahead, base, strict=True)
            )
            if saved >= charged * GEAR_DOUBT:  # estimates of long fetches run over: want a clear win
                out.append((saved - charged, o.name, is_armor, cost))
        return out

    def recover(self) -> str | None:
        """Health back, when the quest waits on a fight lost for want of it and nothing else is
        left to do (no experience to gain, every goal stuck): None if that is not the case.

        Eat the most restoring food there is a way to (however far: there is nothing better to do);
        in a game without eating, falling in that fight is the only way to be healed (I wake at home
        at full health; what I carried lies where I fell, to be fetched back). Falling is chosen only
        if full health would change things: the fight is then won, or some gear worth fetching for it.
        """
        v = self.view
        agent = v.agent
        mark = self._worn_out
        if mark is None or mark[0] != v.state.step or agent.hp >= agent.max_hp:
            return None
        npc = v.state.npcs.get(mark[1])
        if npc is None:
            return None
        if "eat" in v.verbs:
            scored = [
                (self.supply.cost_have(o.name, 1) - o.hp_restore / 5, o.name)
                for o in v.game.spec.objects
                if o.category == "food" and o.hp_restore > 0
            ]
            scored = [s for s in scored if s[0] < INF]
            if scored:
                food = min(scored)[1]
                if v.carried.get(food, 0) or v.lying_count(v.here, food):
                    return f"eat {food}"
                return self._fetch_meals(food)
            return None  # healing is there to be had later (food grows back): no need to fall
        full = self.outlook(npc, hp=agent.max_hp)
        if not self.fight_ok(full) and not self.gear_gains(npc, full, hp=agent.max_hp):
            return None
        return self.defeat(npc)

    def gain_xp(self, avoid: str | None = None) -> str | None:
        """The best experience per step: an easy fight, an unexplored area, a first trade or craft."""
        v = self.view
        agent = v.agent
        options: list[tuple[float, str, Callable[[], str | None]]] = []
        for npc in v.state.npcs.values():
            if not v.hostile(npc) or npc.handle == avoid or ("npc", npc.handle) in self.memory.banned:
                continue
            cost = self.cost_fight(npc)
            if cost < INF:
                xp = v.game.npcs[npc.type].experience
                options.append((cost / xp, npc.handle, partial(self.defeat, npc)))
        for area in v.state.areas:
            if area not in agent.visited:
                d = self.navigation.travel(area)
                if d < INF:
                    options.append((d / 5, area, partial(self.navigation.go, area)))
        if v.currency:
            for npc in v.state.npcs.values():
                if not v.game.npcs[npc.type].merchant or npc.wary_until >= v.state.step:
                    continue
                for t in npc.inventory:
                    if t in agent.traded or ("buy", t, npc.handle) in self.memory.banned:
                        continue
                    if self.supply.kept_in_stock(t):
                        continue
                    cost = self.supply.cost_buy(t, 1, npc)
                    if cost < INF:
                        options.append((cost / 10, f"buy {t}", partial(self.supply.buy, t, 1, npc)))
        for o in v.game.recipes:
            if o.name in agent.crafted or ("craft", o.name) in self.memory.banned:
                continue
            cost = self.supply.cost_craft(o.name, 1)
            if cost < 40:
                options.append((cost / 5, f"craft {o.name}", partial(self.supply.craft, o.name, 1)))
        options.sort(key=lambda o: (o[0], o[1]))
        for _, _, run in options:
            try:
                cmd = run()
            except Stuck:
                continue
            if cmd is not None:
                return cmd
        raise Stuck("no way to gain experience")
