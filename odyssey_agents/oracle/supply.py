"""Having things: the sources of an object and the chores of carrying it.

An object can be picked up where it lies, taken from a container lying somewhere, crafted (recursively,
at the area whose stations the recipe needs), bought (coins become a sub-goal: lying coins, loot,
selling spare things), or looted from an enemy that drops it. Every source is costed in steps and the
cheapest is followed, keeping last step's choice unless another is clearly cheaper. Hands hold two
objects, so carrying includes storing in the pack, equipping a bag, and dropping what is spare.
"""

from __future__ import annotations

import contextlib
from functools import partial
from typing import TYPE_CHECKING, Any

from odyssey_agents.oracle.core import (
    INF,
    KIT,
    LET_GO_STEPS,
    MAX_DEPTH,
    RESERVE_STEPS,
    TOOL_SALVAGE_COST,
    UNARMED_COST,
    Focus,
    Memory,
    Offer,
    Stuck,
)
from odyssey_env.quests.conditions import normalize_text

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from odyssey_agents.oracle.events import Events
    from odyssey_agents.oracle.navigation import Navigation
    from odyssey_agents.oracle.tactics import Tactics
    from odyssey_agents.oracle.view import View
    from odyssey_env.content import ObjectType
    from odyssey_env.state import Npc


class Supply:
    """Getting, carrying, crafting, trading, writing and wearing things.

    It owns the step's source costs and the guards of its recursion (recipes within recipes, coins
    behind the lock they would open). It reads ``focus`` (what the goals under way need, keep, spare
    or protect: never dropped, stored away or sold) and ``memory.banned``; it writes
    ``memory.last_choice`` under ``("have", t)`` and ``("craft", t)`` (so it does not dither between
    sources) and ``focus.used``. Its peers: navigation to walk to a source, tactics to loot one, events to
    cause the event of a game's verb that :attr:`~odyssey_env.rules.ActionRule.produces` the thing.
    """

    def __init__(self, focus: Focus, memory: Memory) -> None:
        self.focus = focus
        self.memory = memory
        self.view: View  # set by begin() every step
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._costing = 0  # depth of nested source costing
        self._pursuing: list[str] = []  # types whose getting is being planned (cycle guard)
        self._getting: list[str] = []  # types whose getting is being costed (never salvaged for it)
        self._salvaging: set[str] = set()  # types got to be taken apart: never crafted for that
        self._bill: dict[str, int] = {}  # raw materials the crafts under way need next (see _billing)
        self._cut = 0  # costings cut short by the depth guard (see cost_have)
        self.navigation: Navigation
        self.tactics: Tactics
        self.events: Events | None = None  # set by the planner: a game's own verbs that make a thing

    def connect(self, navigation: Navigation, tactics: Tactics) -> None:
        """Meet the peers (they need this part too, so they cannot all be passed at construction)."""
        self.navigation = navigation
        self.tactics = tactics

    def begin(self, view: View) -> None:
        """A new step: sources are costed afresh from the world as it is now."""
        self.view = view
        self._memo = {}
        self._pursuing = []
        self._getting = []
        self._salvaging = set()
        self._bill = {}
        self._cut = 0

    def cost_have(self, t: str, n: int) -> float:
        """Rough steps until ``n`` units of ``t`` are carried (INF if the world cannot supply them)."""
        missing = n - self.view.carried.get(t, 0)
        if missing <= 0:
            return 0
        key = ("have", t, missing, self.focus.not_from, t in self._salvaging)
        if key in self._memo:
            return self._memo[key]
        if self._costing > MAX_DEPTH:
            self._cut += 1
            return INF
        self._memo[key] = INF  # recipe cycles cost nothing less than infinity
        self._costing += 1
        self._getting.append(t)
        cut = self._cut
        try:
            best = self._fill(t, self._offers(t, missing), missing)
        finally:
            self._costing -= 1
            self._getting.pop()
        if best == INF and self._cut > cut:
            # out of reach only because the depth guard cut it short (deep inside a salvage chain,
            # say): asked again nearer the top, it may well be had (Remnant seed 1 found planks, and
            # so keys, impossible after costing a blade blank of iron bars and a wooden rod)
            del self._memo[key]
        else:
            self._memo[key] = best
        return best

    def _fill(self, t: str, offers: list[Offer], need: int) -> float:
        """Cheapest steps to gather ``need`` units from ``offers`` together (nearest first), crafting
        what they cannot give, or crafting it all; INF when even that is not enough."""
        total = 0.0
        left = need
        for o in sorted((o for o in offers if o.key[0] != "craft"), key=lambda o: (o.first, o.key)):
            take = min(left, o.cap)
            total += o.first + o.per * (take - 1)
            left -= take
            if left <= 0:
                break
        recipe = self.view.game.objects[t].recipe
        if left > 0:
            total = total + self.cost_craft(t, -(-left // recipe.yields)) + 1 if recipe is not None else INF
        if recipe is not None and total > 0:
            total = min(total, self.cost_craft(t, -(-need // recipe.yields)) + 1)
        return total

    def have(self, t: str, n: int) -> str | None:
        """Next command toward carrying ``n`` units of ``t``; None when carried already."""
        v = self.view
        missing = n - v.carried.get(t, 0)
        if missing <= 0:
            return None
        if t in self._pursuing or len(self._pursuing) > MAX_DEPTH * 2:
            raise Stuck(f"getting {t} would need {t} first")  # e.g. coins behind the lock they would open
        self._pursuing.append(t)
        try:
            return self._have(t, missing)
        finally:
            self._pursuing.pop()

    def _have(self, t: str, missing: int) -> str | None:
        v = self.view
        offers = self._offers(t, missing)
        costed: list[tuple[float, Offer]] = []
        for o in offers:
            if o.first == INF:
                continue
            if o.cap >= missing:
                c = o.first + o.per * (missing - 1)
            else:  # this source, then the rest from the others
                c = o.first + o.per * (o.cap - 1) + self._fill(t, [x for x in offers if x is not o], missing - o.cap)
            if c < INF:
                costed.append((c, o))
        # bans only steer the choice: with nothing else left, a banned way is still a way
        costed = [co for co in costed if co[1].key not in self.memory.banned] or costed
        if not costed:
            raise Stuck(f"no way to get {missing} {t}")
        last = self.memory.last_choice.get(("have", t))
        cheapest = min(c for c, _ in costed)
        here = ("pick", t, v.here)

        def rank(co: tuple[float, Offer]) -> tuple[float, int]:
            # what lies at my feet first; else stay with last step's choice unless something is
            # clearly cheaper (no dithering)
            c, o = co
            if o.key == here:
                return (-1.0, 0)
            sticky = o.key == last and c <= cheapest * 1.5 + 3
            return (cheapest if sticky else c, 0 if sticky else 1)

        costed.sort(key=rank)
        if costed[0][1].key != here and self._bill:
            grab = self.grab_here()  # before walking off: what the crafts under way need next
            if grab is not None:
                return grab
        reasons = []
        for _cost, o in costed:
            try:
                cmd = o.run()
            except Stuck as exc:
                reasons.append(str(exc))
                continue
            self.memory.last_choice[("have", t)] = o.key
            self.focus.used.append(o.key)
            return cmd
        raise Stuck(f"no way to get {t}: " + "; ".join(reasons))

    def _offers(self, t: str, missing: int) -> list[Offer]:
        """Every known way to get more ``t``: what the first unit costs, each further one, and how
        many it can give (the world's supply is finite: what lies about, stock, loot)."""
        v = self.view
        out: list[Offer] = []
        ot = v.game.objects.get(t)
        if ot is None or not ot.portable:
            return out
        here = v.here
        go = self.navigation.go
        # lying on the ground
        not_from = self.focus.not_from
        spared = not_from[0] if not_from is not None and not_from[1] == t else None
        for area, handle, count in v.ground.get(t, ()):
            if area == spared or v.written(handle):
                continue
            d = 0 if area == here else self.navigation.travel(area)
            if d == INF:
                continue
            run = (lambda h=handle: self.pick_up(h, missing)) if area == here else (lambda a=area: go(a))
            out.append(Offer(d + 1, 1, count, ("pick", t, area), run))
        # inside a container lying somewhere
        for area, box, inner, count in v.boxed.get(t, ()):
            if area == spared or v.written(inner):
                continue
            d = 0 if area == here else self.navigation.travel(area)
            if d == INF:
                continue

            def take_box(a: str = area, b: str = box) -> str | None:
                return go(a) or self.take_box(b)

            out.append(Offer(d + 3, 1, count, ("box", t, box), take_box))
        # crafting (not what is got to be taken apart: that would craft it of what it gives back)
        if ot.recipe is not None and t not in self._salvaging:
            times = -(-missing // ot.recipe.yields)
            cost = self.cost_craft(t, times)
            if cost < INF:
                out.append(Offer(cost + 1, 0, times * ot.recipe.yields, ("craft", t), lambda: self.craft(t, times)))
        # a game's own verb that makes it (a rule file's transform / produce): one unit a command, its
        # event caused by trial after what the verb says it needs (the raw thing, a tool, a place)
        if self.events is not None:
            for rule in v.engine.rules.actions.values():
                if t in rule.produces and rule.emits:
                    kind = rule.emits[0]
                    cost = 4 + self.events.need_cost(kind, {})
                    out.append(Offer(cost, cost, missing, ("verb", t, rule.verb), partial(self.events.cause, kind, {})))
        # buying
        if v.currency and t != v.currency:
            for npc in self._merchants_selling(t):
                k = min(missing, npc.inventory.get(t, 0) - self.kept_in_stock(t))
                if k <= 0:
                    continue
                cost = self.cost_buy(t, k, npc)
                if cost < INF:
                    out.append(Offer(cost, 0, k, ("buy", t, npc.handle), partial(self.buy, t, k, npc)))
        # looting enemies (their drops, and coins)
        for npc in v.state.npcs.values():
            if not v.hostile(npc):
                continue
            count = npc.inventory.get(t, 0)
            if t == v.currency:
                count += npc.coins
            if not count:
                continue
            cost = self.tactics.cost_fight(npc)
            if cost < INF:
                out.append(Offer(cost + 2, 0, count, ("loot", t, npc.handle), partial(self.tactics.defeat, npc)))
        # taking apart a crafted thing I carry and no longer need (games with the verb)
        if "disassemble" in v.verbs:
            out.extend(self._salvage_offers(t))
        # coins by selling what I carry and do not need
        if t == v.currency:
            sales = self._sales()
            out.extend(sales)
            if not sales:  # (with something to sell in hand, picking up more would only juggle it)
                out.extend(self._ground_sales(missing))
        return out

    def kept_in_stock(self, t: str) -> int:
        """Units of ``t`` that must stay on sale: one, when a later stage asks for buying it and no
        other merchant has one more (Base seed 2 bought the only heart of the ocean for experience)."""
        if t not in self.focus.unbought:
            return 0
        return 1 if sum(n.inventory.get(t, 0) for n in self._merchants()) <= 1 else 0

    def _salvage_offers(self, t: str) -> list[Offer]:
        """Units of ``t`` from disassembling a crafted thing no goal needs (half of each ingredient,
        rounded up, lands on the ground): one I carry (Remnant's wooden dagger, once its stage is done,
        gives back the plank a key needs where the wood for keys has run out), or one a merchant sells,
        bought to be taken apart (Remnant seed 0: wood and iron for the keys of eight locks lie past
        those very locks; a merchant this side sells swords made of them). What is being got is never
        taken apart to get it (a key blank is not salvaged for the plank of the blank itself)."""
        v = self.view
        out: list[Offer] = []
        objects = v.game.objects
        weapons = [w for w, n in v.carried.items() if n and objects[w].category == "weapon" and objects[w].attack > 0]
        best = max(weapons, key=lambda w: (objects[w].attack, w), default=None)
        for o in v.game.spec.objects:
            recipe = o.recipe
            if recipe is None or t not in recipe.ingredients or not o.salvageable or recipe.yields != 1:
                continue
            if o.category in ("container", "writable", "station") or o.equip_slot == "pack":
                continue  # instanced things (a bag holds things, a paper may bear text): kept whole
            if o.name in self._pursuing or o.name in self._getting:
                continue
            # a later stage wants it: kept whole, even while a merchant sells another (Mark took its
            # pen and its key apart for their parts, and never bought them back when a stage asked)
            if o.name in self.focus.protect and not self._spare_on_sale(o):
                continue
            gives = recipe.salvage().get(t, 0)  # the disassemble verb's own arithmetic
            if not gives:
                continue  # a fraction of a unit gives nothing back (a tension wrench of 0.5 iron_bar)
            needed = self.focus.needed.get(o.name, 0)
            units = v.carried.get(o.name, 0) - needed
            unarmed = 0.0
            if o.name == best and not needed:
                units -= 1  # my best weapon stays whole (a second one of its kind may go)
                if units == 0 and o.name not in self.focus.protect:
                    # ... unless nothing else gives what it does but far dearer ways (Remnant seed 5:
                    # the wooden dagger's plank is the third key's, the only other wood lies past that
                    # lock, and the gamble instead costs ten tension wrenches, five iron bars): fights
                    # are then fought bare-handed until a weapon is had again, reckoned UNARMED_COST
                    units, unarmed = 1, UNARMED_COST
            if units <= 0:
                # what a goal just put down is not got again to be taken apart (Remnant seed 7 dropped
                # its iron sword, kept whole as its best weapon, to pick up a stone, then picked the
                # sword up for its iron, then dropped it again, for 200 steps)
                dropped = v.state.step - self.memory.let_go.get(o.name, -LET_GO_STEPS) < LET_GO_STEPS
                if not dropped:
                    # (one more than I carry: those I carry are needed, or my best weapon)
                    out.extend(self._got_salvage(t, o.name, gives))
                continue
            held = v.in_hands(o.name)
            if held is not None:
                out.append(
                    Offer(2 + unarmed, 2, gives * units, ("salvage", t, o.name), partial("disassemble {}".format, held))
                )
            else:
                out.append(Offer(3 + unarmed, 3, gives * units, ("salvage", t, o.name), partial(self.hold, o.name)))
        return out

    def _spare_on_sale(self, o: ObjectType) -> bool:
        """Whether a thing a later stage wants may still be taken apart: it is no tool, and merchants
        sell, or I carry, or there lie about more of it than the one I would take apart (one stays for
        the stage). Remnant seed 0: the wood for the keys of its last locks lies past them, and the
        armorer this side sells two wooden swords (one makes the water sword later); the other one's
        plank is a key's, where the oracle spent its iron bars on tension wrenches instead."""
        if o.uses:
            return False  # (Mark took its pen and key apart, and never bought them back)
        stock = sum(n.inventory.get(o.name, 0) for n in self._merchants()) - self.kept_in_stock(o.name)
        lying = sum(count for _, _, count in self.view.ground.get(o.name, ()))
        return stock + lying + self.view.carried.get(o.name, 0) >= 2

    def _got_salvage(self, t: str, thing: str, gives: int) -> list[Offer]:
        """``gives`` units of ``t`` from a ``thing`` got first (bought, picked up, itself salvaged from
        something bigger: a wooden chestplate gives a wood plate, which gives a plank) and then taken
        apart. Never a tool, nor (see :meth:`_salvage_offers`) a thing a later stage wants."""
        if self._costing >= MAX_DEPTH - 1:
            self._cut += 1
            return []
        # a tool (a pen, a key, a light) is got for its use, and taken apart only where nothing cheaper gives
        # what it does (Mark seed 60: the only copper before the market's lock is a lantern's, on sale)
        tool = TOOL_SALVAGE_COST if self.view.game.objects[thing].uses else 0.0
        if tool and "unlock" in self.view.game.objects[thing].uses:
            return []  # (a key is never bought to be taken apart: it is what the parts would make)
        n = self.view.carried.get(thing, 0) + 1
        with self._for_salvage(thing):
            cost = self.cost_have(thing, n)
        if cost == INF:
            return []
        return [Offer(cost + 2 + tool, cost + 2, gives, ("salvage", t, thing), partial(self._get_to_salvage, thing, n))]

    def _get_to_salvage(self, thing: str, n: int) -> str | None:
        with self.focus.need(thing, n), self._for_salvage(thing):
            return self.have(thing, n)

    @contextlib.contextmanager
    def _for_salvage(self, thing: str) -> Iterator[None]:
        """While ``thing`` is got to be taken apart (its crafting left out: crafting a stone slab of
        two stones to take it apart for one is a loop that eats stones)."""
        fresh = thing not in self._salvaging
        self._salvaging.add(thing)
        try:
            yield
        finally:
            if fresh:
                self._salvaging.discard(thing)

    def pick_up(self, handle: str, wanted: int = 1) -> str:
        """Standing where ``handle`` lies: get it into my hands or pack."""
        v = self.view
        ot = v.otype(handle)
        if ot.category == "container":
            if v.pack is None:
                return f"equip {handle}"
            if v.fits_hands(handle):
                return f"pick up {handle}"
            return self.make_room()
        pack = v.pack
        if handle != v.currency and pack is not None and wanted > 1 and ot.size * 2 <= v.pack_room():
            on_ground = v.objects_at(v.here).get(handle, 0)
            in_hands = v.agent.hands.get(handle, 0)
            room = v.pack_room() // ot.size if ot.size else on_ground + in_hands
            units = min(wanted, on_ground, room)
            if units > 1:
                # what I hold of it goes in first; all of it must fit the room left
                units = min(units + in_hands, room)
                return f"store {units} {handle} {pack}"
        if v.fits_hands(handle):
            return f"pick up {handle}"
        if pack is not None and (ot.size == 0 or v.pack_room() >= ot.size):
            return f"pick up {handle}"  # goes into the pack
        return self.make_room(size=ot.size)

    def take_box(self, box: str) -> str:
        """Standing where container ``box`` lies: wear it as my pack, or hold it."""
        v = self.view
        if v.pack is None:
            return f"equip {box}"
        if v.fits_hands(box):
            return f"pick up {box}"
        return self.make_room()

    def make_room(self, size: int = 0) -> str:
        """Free a hand: store something in a container, else equip a held bag, else drop what is spare."""
        v = self.view
        hands = list(v.agent.hands.items())
        if not hands:
            raise Stuck("hands are empty but full?")

        def spare(h: str) -> tuple[int, int, int]:
            t = v.tname(h)
            needed = self.focus.needed.get(t, 0) > 0
            return (h in self.focus.keep, needed, v.otype(h).attack)

        order = sorted(hands, key=lambda hn: (*spare(hn[0]), hands.index(hn)))
        for container in v.containers():
            room = v.room_in(container)
            for h, n in order:
                if h in self.focus.keep or h == container:
                    continue
                ot = v.otype(h)
                if ot.category == "container" or not ot.portable:
                    continue
                if ot.size * n <= room:
                    return f"store {n} {h} {container}"
        if v.pack is None:
            for h, _ in order:
                if v.otype(h).category == "container" and h not in self.focus.keep:
                    return f"equip {h}"
        for h, n in order:
            if h in self.focus.keep:
                continue
            ot = v.otype(h)
            inside = v.state.instances[h].contents if ot.category == "container" and h in v.state.instances else {}
            if any(self.focus.needed.get(v.tname(i), 0) for i in inside):
                # dropping this bag would drop what I need with it (Remnant seed 18: the key in a second
                # bag, picked up again after a death, the other hand keeping a written paper): what
                # else I hold goes into it instead, freeing the hand that takes the needed thing out
                # (not what is needed in hand itself: a pen stored to be taken out again, forever)
                for other, k in hands:
                    o2 = v.otype(other)
                    if other == h or not o2.portable or o2.category == "container" or o2.size * k > v.room_in(h):
                        continue
                    if not self.focus.needed.get(v.tname(other), 0):
                        return f"store {k} {other} {h}"
                continue
            keeper = self.focus.needed.get(v.tname(h), 0) or self._prized(v.tname(h))
            if keeper and ot.portable and ot.category != "container":
                # a needed thing (or my best weapon) is not dropped while a bag could hold it once
                # spare things leave it (else gathering 8 stones with a full bag drops the 6th to pick it
                # up again, forever; and a sword dropped for a pen leaves the next boss to a dagger)
                for container in v.containers():
                    if container == h:
                        continue
                    try:
                        return self.make_container_room(container, ot.size * n)
                    except Stuck:
                        continue
            return f"drop {h}"
        raise Stuck("both hands hold things I must keep")

    def _prized(self, t: str) -> bool:
        """Whether ``t`` is the best weapon I carry: fights come unannounced (ambushes), and a weapon
        given up to make room is rarely fetched back (a value of 0, as quest-forged blades have, would
        otherwise put it first in line to be emptied out)."""
        v = self.view
        attack = v.game.objects[t].attack
        if attack <= 0:
            return False
        return all(v.game.objects[o].attack <= attack for o in v.carried)

    def make_container_room(self, container: str, size: int) -> str:
        """Empty spare things from a container onto the ground until ``size`` fits."""
        v = self.view
        contents = v.state.instances[container].contents
        missing = size - v.room_in(container)

        def spare(item: tuple[str, int]) -> tuple[int, int, int, int]:
            t = v.tname(item[0])
            return (self.focus.needed.get(t, 0) > 0, self._prized(t), t in self.focus.protect, v.game.objects[t].value)

        for h, n in sorted(contents.items(), key=spare):
            if self.focus.needed.get(v.tname(h), 0):
                continue
            unit = v.otype(h).size
            if unit <= 0:
                continue
            k = min(n, -(-missing // unit))
            return f"discard {k} {h} {container}"
        raise Stuck(f"{container} holds only things I need")

    def hold(self, t: str) -> str | None:
        """Next command toward holding an object of type ``t`` in a hand."""
        v = self.view
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
        lying = [x for x in v.lying(v.here, t) if not v.written(x[0])] if self.focus.not_from != (v.here, t) else []
        if lying:
            handle = lying[0][0]
            return f"pick up {handle}" if v.fits_hands(handle) else self.make_room()
        with self.focus.need(t, 1):
            return self.have(t, 1)

    def fetch_handle(self, handle: str) -> str | None:
        """Get one particular object instance carried (a written note)."""
        v = self.view
        if handle in v.agent.hands:
            return None
        for c in v.containers():
            if handle in v.state.instances[c].contents:
                return None
        for area, obj in v.state.areas.items():
            if handle in obj.objects:
                return self.navigation.go(area) or self.pick_up(handle)
        raise Stuck(f"{handle} is nowhere to be found")

    def carried_handle(self, t: str) -> str:
        v = self.view
        h = v.in_hands(t)
        if h is not None:
            return h
        loc = v.where_carried(t)
        if loc is None:
            raise Stuck(f"not carrying {t}")
        return loc[0]

    # ================================================================== crafting
    def _station_area(self, t: str) -> str | None:
        recipe = self.view.game.objects[t].recipe
        assert recipe is not None  # asked only of craftable objects
        stations = recipe.stations
        if not stations:
            return self.view.here
        v = self.view
        first = stations[0]
        options = [
            a for a, _, _ in v.ground.get(first, ()) if all(v.state.areas[a].objects.get(s, 0) for s in stations)
        ]
        options = list(dict.fromkeys(options))
        if not options:
            return None
        return min(options, key=lambda a: (self.navigation.travel(a), options.index(a)))

    def _build_site(self, t: str) -> tuple[str, str] | None:
        """Where ``t``'s recipe could be crafted once one missing station is built there: (area, station).

        Stations are crafted too and cannot be carried (the product lies where it was made), so a recipe
        whose station stands nowhere (Remnant's furnace: iron bars from ore) needs the station built first,
        at an area holding the recipe's other stations and the station's own.
        """
        v = self.view
        ot = v.game.objects[t]
        if ot.recipe is None:
            return None
        stations = ot.recipe.stations
        for s in stations:
            st = v.game.objects.get(s)
            if st is None or st.recipe is None or s == t or t in st.recipe.stations:
                continue
            site = self._station_area(s)
            if site is not None and all(v.state.areas[site].objects.get(x, 0) for x in stations if x != s):
                return site, s
        return None

    def unit_cost(self, t: str) -> float:
        """Rough steps per unit of ``t`` got one after another: what the next unit costs, unless its
        recipe's fractional amounts make several of the units one craft takes (two tension wrenches of
        one iron_bar at 0.5 each), whose cost those then share."""
        one = self.cost_have(t, 1)
        recipe = self.view.game.objects[t].recipe
        if recipe is None:
            return one
        k = recipe.most_batches(1) * recipe.yields
        if k <= 1:
            return one
        return min(one, self.cost_have(t, self.view.carried.get(t, 0) + k) / k)

    def cost_craft(self, t: str, times: int) -> float:
        key = ("craft", t, times)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = INF
        ot = self.view.game.objects[t]
        if ot.recipe is None:
            return INF
        area = self._station_area(t)
        build = 0.0
        if area is None:
            site = self._build_site(t)
            if site is None:
                return INF
            area, station = site
            build = self.cost_craft(station, 1)
            if build == INF:
                return INF
        load, whole = self._load(t, 1), self._load(t, times)
        capacity = self.capacity()
        if whole > capacity:
            # all the ingredients cannot be carried at once: a bigger bag first, or batches that fit
            per = capacity // load if load else times
            if times > 1 and per >= 1:
                split = self.cost_craft(t, per) * -(-times // per)
                self._memo[key] = split
                return split
            bag = self._bag_for(whole)
            if bag is None:
                return INF
            build += self.cost_hold(bag) + 2
        d = self.navigation.travel(area)
        total = d + 1 + build
        cut = self._cut
        # batches of a recipe with fractional amounts share units: two wrenches of 0.5 iron_bar
        # take one bar together (Recipe.uses), not one each
        for ing, k in ot.recipe.needs(times).items():
            c = self.cost_have(ing, k)
            total += c
            if total == INF:
                break
        if total == INF and self._cut > cut:
            del self._memo[key]  # cut short by the depth guard: not the last word (see cost_have)
        else:
            self._memo[key] = total
        return total

    def _load(self, t: str, times: int) -> int:
        """Carrying room the ingredients of ``times`` batches of ``t`` take (a unit in a hand takes a
        hand whatever its size, in a bag its size: the larger, to be safe)."""
        recipe = self.view.game.objects[t].recipe
        assert recipe is not None  # asked only of craftable objects
        objects = self.view.game.objects
        return sum(max(1, objects[i].size) * k for i, k in recipe.needs(times).items())

    def _kept_load(self, ingredients: Iterable[str]) -> int:
        """Room taken by what I carry that other goals under way need (never dropped to make room)."""
        v = self.view
        objects = v.game.objects
        return sum(
            max(1, objects[t].size) * min(n, v.carried.get(t, 0))
            for t, n in self.focus.needed.items()
            if t not in ingredients and t != v.currency and objects[t].portable
        )

    def capacity(self, bag: str | None = None) -> int:
        """Units I can carry at most: hands, plus the room of my containers (a held one takes the
        hand it is in); with ``bag``, as if that container type were worn instead of my pack."""
        v = self.view
        objects = v.game.objects
        cap = v.game.spec.agent.hands
        worn_from_hand = False
        for c in v.containers():
            if c == v.pack and bag is not None:
                continue
            if bag is not None and not worn_from_hand and c in v.agent.hands and v.tname(c) == bag:
                # the bag to be worn is this one in my hand: not counted twice (else, with the pack
                # taken off to wear a bigger one, the one in hand looked big enough and went back on,
                # off and on again: Remnant seed 11, 34 steps)
                worn_from_hand = True
                continue
            cap += objects[v.tname(c)].capacity - (1 if c in v.agent.hands else 0)
        if bag is not None:
            cap += objects[bag].capacity
        return cap

    def _bag_for(self, load: int) -> str | None:
        """The cheapest container type that, worn, makes room for ``load`` units (None: none does)."""
        options = [
            o.name
            for o in self.view.game.spec.objects
            if o.category == "container" and o.equip_slot is not None and self.capacity(o.name) >= load
        ]
        best = min(options, key=lambda b: (self.cost_hold(b), options.index(b)), default=None)
        return best if best is not None and self.cost_hold(best) < INF else None

    def craft(self, t: str, times: int) -> str | None:
        """Next command toward crafting ``times`` batches of ``t`` (the product lands on the ground)."""
        v = self.view
        ot = v.game.objects[t]
        if ot.recipe is None:
            raise Stuck(f"{t} cannot be crafted")
        load, capacity = self._load(t, 1), self.capacity() - self._kept_load(ot.recipe.ingredients)
        if self._load(t, times) > capacity:
            # gathering more than can be carried would juggle forever: as many batches as fit now,
            # else a bigger bag first
            per = capacity // load if load else times
            if per >= 1 and times > 1:
                times = per
            else:
                bag = self._bag_for(self._load(t, times))
                if bag is None:
                    raise Stuck(f"the ingredients of {t} cannot all be carried")
                with self.focus.need(bag, 1):
                    cmd = self.equip(bag)
                if cmd is None:  # worn already, and still too small beside what the goals keep
                    raise Stuck(f"the ingredients of {t} do not fit beside what I keep")
                return cmd
        area = self._station_area(t)
        if area is None:
            site = self._build_site(t)
            if site is None:
                raise Stuck(f"no {' and '.join(ot.recipe.stations)} for {t}")
            self.focus.used.append(("build", site[1]))
            return self.craft(site[1], 1)
        ingredients = ot.recipe.needs(times)
        # hands not taken by what the goal keeps held (the pen a text is to be written with, say) or
        # needs for something other than this craft (the coins of the purchase the craft is on the
        # way to: Remnant seed 1 dropped and picked them up by turns with a bar and a plank to hold)
        free = v.game.spec.agent.hands - sum(
            1
            for h in v.agent.hands
            if h in self.focus.keep or (v.tname(h) not in ingredients and self.focus.needed.get(v.tname(h), 0) > 0)
        )
        if sum(ingredients.values()) > free and not v.containers():
            # more units than free hands: without a bag (lost at a death, say) gathering would juggle forever
            box = self.cheapest_of_category("container")
            if box is not None and self.cost_have(box, 1) < INF:
                return self.equip(box)
        with contextlib.ExitStack() as stack:
            for ing, k in ingredients.items():
                stack.enter_context(self.focus.need(ing, k))
            missing = [(ing, k) for ing, k in ingredients.items() if v.carried.get(ing, 0) < k]
            if missing:
                # the ingredient being fetched last step first (no dithering), then the costliest
                focus = self.memory.last_choice.get(("craft", t))
                missing.sort(
                    key=lambda im: (im[0] != (focus[0] if focus else None), -self.cost_have(im[0], im[1]), im[0])
                )
                for ing, need in missing:
                    try:
                        with self._billing([(i, n) for i, n in missing if i != ing]):
                            cmd = self.have(ing, need)
                    except Stuck:
                        continue
                    self.memory.last_choice[("craft", t)] = (ing,)
                    return cmd
                raise Stuck(f"cannot gather the ingredients of {t}")
            self.focus.used.append(("craft", t))
            if v.here != area:
                grab = self.grab_here()
                if grab is not None:
                    return grab
            if "lockpick" in ot.uses:
                # picks are spent by tries, so a fraction of a unit left over would be lost: as many as
                # the units taken allow (one iron_bar makes two tension wrenches of 0.5 bar in one craft;
                # the second, on the ground, is the next try). Not for other things: spares lying about
                # drew the oracle off Quarantine's serum stages (seeds 3 and 4 no longer solved)
                times = ot.recipe.most_batches(times)
            return self.navigation.go(area) or f"craft {times} {t}"

    # ---- the bill: what the crafts under way will need after the ingredient being fetched
    def _flatten(self, items: list[tuple[str, int]], depth: int = 0, whole: bool = False) -> dict[str, int]:
        """The raw materials ``items`` come down to: a type that lies nowhere and has a recipe is
        replaced by its ingredients (what it is crafted from), less what I already carry. With
        ``whole``, a raw material counts whole, the units I carry included (those to keep)."""
        v = self.view
        out: dict[str, int] = {}
        for t, k in items:
            missing = k - v.carried.get(t, 0)
            recipe = v.game.objects[t].recipe
            leaf = recipe is None or bool(v.ground.get(t)) or depth >= 4
            if whole and leaf and k > 0:
                out[t] = out.get(t, 0) + k
                continue
            if missing <= 0:
                continue
            if leaf:
                out[t] = out.get(t, 0) + missing
                continue
            assert recipe is not None  # (not a leaf)
            times = -(-missing // recipe.yields)
            for raw, n in self._flatten(list(recipe.needs(times).items()), depth + 1, whole).items():
                out[raw] = out.get(raw, 0) + n
        return out

    @contextlib.contextmanager
    def _billing(self, items: list[tuple[str, int]]) -> Iterator[None]:
        """While an ingredient is fetched, remember (and keep) the raw materials of the others, so a
        trip to where they lie brings them all (a recipe's thread and wood from one library visit,
        not one visit per sub-recipe)."""
        bill = self._flatten(items)
        with contextlib.ExitStack() as stack:
            for t, n in bill.items():
                self._bill[t] = self._bill.get(t, 0) + n
            # what I carry of them is kept too (Remnant seed 17 stored two logs for a glass shield's
            # planks, emptied them out of the bag for the stones of the furnace its glass shards need,
            # and stored them again, for 100 steps)
            for t, n in self._flatten(items, whole=True).items():
                stack.enter_context(self.focus.need(t, n))
            try:
                yield
            finally:
                for t, n in bill.items():
                    self._bill[t] -= n
                    if not self._bill[t]:
                        del self._bill[t]

    def grab_here(self) -> str | None:
        """Pick up a raw material the bill needs that lies where I stand, when it goes into free room
        (never by dropping something: the goal being fetched comes first)."""
        v = self.view
        for t, k in self._bill.items():
            missing = k - v.carried.get(t, 0)
            if missing <= 0 or t == v.currency:
                continue
            ot = v.game.objects[t]
            if ot.category == "container" or not ot.portable:
                continue
            lying = [h for h, _ in v.lying(v.here, t) if not v.written(h)]
            if not lying:
                continue
            if (v.pack is not None and v.pack_room() >= ot.size) or v.hands_free() >= 2:
                return self.pick_up(lying[0], missing)
        return None

    # ================================================================== trade
    def _merchants_selling(self, t: str) -> list[Npc]:
        return [n for n in self._merchants() if n.inventory.get(t, 0)]

    def best_merchant(self, t: str) -> Npc | None:
        options = self._merchants_selling(t)
        return min(options, key=lambda n: (self.cost_buy(t, 1, n), n.handle), default=None)

    def price(self, t: str) -> int:
        return max(1, self.view.game.objects[t].value)

    def cost_buy(self, t: str, n: int, npc: Npc) -> float:
        v = self.view
        d = self.navigation.travel(npc.area)
        if d == INF:
            return INF
        coins = self.price(t) * n
        assert v.currency is not None  # merchants need a currency: checked when the game loads
        return d + 1 + self.cost_have(v.currency, coins)

    def buy(self, t: str, n: int, npc: Npc) -> str | None:
        v = self.view
        coins = self.price(t) * n
        assert v.currency is not None  # merchants need a currency: checked when the game loads
        # the coins stay needed on the way to the merchant too (Remnant seed 1, bagless after a death:
        # the key for the lock before the merchant wanted a free hand, and the coins were dropped for it,
        # picked up again for the purchase, dropped again, for 180 steps)
        with self.focus.need(v.currency, coins):
            return self.have(v.currency, coins) or self.navigation.go(npc.area) or f"buy {n} {t} {npc.handle}"

    def _merchants(self) -> list[Npc]:
        """Merchants willing to deal with me now (state order)."""
        hit = self._memo.get(("merchants",))
        if hit is None:
            v = self.view
            step = v.state.step
            hit = [n for n in v.state.npcs.values() if v.game.npcs[n.type].merchant and n.wary_until < step]
            self._memo[("merchants",)] = hit
        return hit

    def buyer_for(self, t: str) -> Npc | None:
        """The nearest merchant who buys ``t``."""
        key = ("buyer", t)
        if key in self._memo:
            return self._memo[key]
        v = self.view
        ot = v.game.objects[t]
        best = None
        if ot.value > 0:
            options = [
                n for n in self._merchants() if not v.game.npcs[n.type].buys or ot.category in v.game.npcs[n.type].buys
            ]
            best = min(options, key=lambda n: (self.navigation.travel(n.area), n.handle), default=None)
        self._memo[key] = best
        return best

    def _sellable(self, handle: str) -> bool:
        """Spare things that may be sold for coins: never what a recent plan needed, nor kit."""
        v = self.view
        t = v.tname(handle)
        ot = v.game.objects[t]
        if handle == v.currency or ot.value <= 0 or self.focus.needed.get(t) or handle in self.focus.keep:
            return False
        if t in self.focus.protect or self.memory.reserved.get(t, -RESERVE_STEPS) > v.state.step - RESERVE_STEPS:
            return False
        if ot.category in KIT:
            return False
        inst = v.state.instances.get(handle)
        return inst is None or not inst.contents

    def _payment(self, t: str) -> int:
        rule = self.view.verbs.get("sell")
        ratio = getattr(getattr(rule, "settings", None), "sell_ratio", 0.5)
        return max(1, int(self.view.game.objects[t].value * ratio))

    def _sales(self) -> list[Offer]:
        """Coins from the spare things I carry, one offer per thing (paid what its buyer pays)."""
        v = self.view
        if "sell" not in v.verbs:
            return []
        out: list[Offer] = []
        for h in [*v.agent.hands, *(x for c in v.containers() for x in v.state.instances[c].contents)]:
            if not self._sellable(h):
                continue
            t = v.tname(h)
            merchant = self.buyer_for(t)
            if merchant is None:
                continue
            n = v.agent.hands.get(h, 0) or sum(v.state.instances[c].contents.get(h, 0) for c in v.containers())

            def sell(m: Npc = merchant, h: str = h) -> str | None:
                return self.navigation.go(m.area) or f"sell 1 {h} {m.handle}"

            out.append(
                Offer(
                    self.navigation.travel(merchant.area) + 1,
                    0,
                    self._payment(t) * n,
                    ("sell", h, merchant.handle),
                    sell,
                )
            )
        return out

    def _ground_sales(self, coins: int) -> list[Offer]:
        """Coins from spare things lying about: pick one up (it is then sold as a carried spare)."""
        v = self.view
        if "sell" not in v.verbs:
            return []
        out: list[Offer] = []
        for t, spots in v.ground.items():
            ot = v.game.objects[t]
            if ot.value <= 0 or t == v.currency or not ot.portable:
                continue
            merchant = self.buyer_for(t)
            if merchant is None:
                continue
            paid = self._payment(t)
            for area, handle, count in spots:
                if not self._sellable(handle):
                    continue
                d = self.navigation.travel(area)
                if d == INF:
                    continue
                back = v.dist(merchant.area, area)

                def gather(a: str = area, h: str = handle) -> str | None:
                    return self.navigation.go(a) or self.pick_up(h)

                # each unit is a pick-up and a sale; a trip carries two
                out.append(
                    Offer(
                        d + (back if back is not None else 10) + 2,
                        2 / paid,
                        paid * count,
                        ("gather-sale", t, area),
                        gather,
                    )
                )
        out.sort(key=lambda o: (o.first, o.key))
        return out[:8]

    # ================================================================== writing, dropping, wearing
    def _writable_type(self, wanted: str | None, text: str) -> str | None:
        """The writable type to use: ``wanted`` if given, else the cheapest one the text fits on."""
        objects = self.view.game.objects
        if wanted is not None:
            return wanted if objects[wanted].max_text >= len(text) else None
        options = [o.name for o in self.view.game.spec.objects if o.category == "writable" and o.max_text >= len(text)]
        return min(options, key=lambda t: (self.cost_have(t, 1), options.index(t)), default=None)

    def _tool_type(self) -> str | None:
        options = [o.name for o in self.view.game.spec.objects if "write" in o.uses]
        return min(options, key=lambda t: (self.cost_have(t, 1), options.index(t)), default=None)

    def cost_write(self, wanted: str | None, text: str) -> float:
        paper, tool = self._writable_type(wanted, text), self._tool_type()
        if paper is None or tool is None:
            return INF
        return self.cost_have(paper, 1) + self.cost_have(tool, 1) + 3

    def write(self, text: str, wanted: str | None) -> str | None:
        """Next command toward writing ``text`` (on a writable of type ``wanted``, if given)."""
        v = self.view
        paper, tool = self._writable_type(wanted, text), self._tool_type()
        if paper is None or tool is None:
            raise Stuck(f"nothing to write {text!r} with or on")
        held_tool = next((h for h in v.agent.hands if "write" in v.otype(h).uses), None)
        held_paper = next(
            (
                h
                for h in v.agent.hands
                if v.otype(h).category == "writable"
                and (wanted is None or v.tname(h) == wanted)
                and v.otype(h).max_text >= len(text)
            ),
            None,
        )
        if held_tool and held_paper:
            return f'write "{text}" {held_paper}'
        focus = self.focus
        with focus.need(paper, 1), focus.need(tool, 1), focus.keeping(held_tool), focus.keeping(held_paper):
            if held_tool is None:
                cmd = self.hold(tool)
                if cmd is not None:
                    return cmd
            return self.hold(paper)

    def find_written(self, text: str, wanted: str | None) -> str | None:
        """An object (of type ``wanted``, if given) that already bears ``text``: writing it again would
        waste a step and a writable."""

        want = normalize_text(text)
        for handle, inst in self.view.state.instances.items():
            if inst.text and normalize_text(inst.text) == want and (wanted is None or inst.type == wanted):
                return handle
        return None

    def drop_in(self, t: str, area: str | None) -> str | None:
        """Drop (in ``area``, if given) an object of type ``t`` (the drop itself is the event)."""
        v = self.view
        held = v.in_hands(t)
        if held is None:
            with self.focus.need(t, 1):
                return self.hold(t)
        if area is not None and v.here != area:
            with self.focus.need(t, 1), self.focus.keeping(held):
                return self.navigation.go(area)
        return f"drop {held}"

    def drop_handle_in(self, handle: str, area: str) -> str | None:
        v = self.view
        if handle in v.agent.hands:
            with self.focus.keeping(handle):
                return self.navigation.go(area) or f"drop {handle}"
        for c in v.containers():
            if handle in v.state.instances[c].contents:
                return f"take out {handle} {c}" if v.hands_free() >= 1 else self.make_room()
        for name, a in v.state.areas.items():
            if handle in a.objects:
                if name == area:
                    return None
                return self.navigation.go(name) or (f"pick up {handle}" if v.fits_hands(handle) else self.make_room())
        raise Stuck(f"{handle} is nowhere")

    def equip(self, t: str) -> str | None:
        v = self.view
        ot = v.game.objects[t]
        slot = ot.equip_slot
        if slot is None:
            raise Stuck(f"{t} cannot be worn")
        if v.worn(t):
            return None
        lying = v.lying(v.here, t)
        source = v.in_hands(t) or (lying[0][0] if lying else None)
        if source is None:
            with self.focus.need(t, 1):
                return self.hold(t)
        current = v.agent.equipment.get(slot)
        if current is not None:
            if v.hands_free() < 1:
                with self.focus.keeping(source):
                    return self.make_room()
            return f"unequip {current}"
        return f"equip {source}"

    def cost_hold(self, t: str) -> float:
        """Rough steps until an object of type ``t`` is in a hand (it may be worn or packed now)."""
        v = self.view
        if v.in_hands(t):
            return 0
        if v.owned(t):
            return 2
        return self.cost_have(t, 1) + 1

    def cheapest_of_category(self, category: str) -> str | None:
        options = [o.name for o in self.view.game.spec.objects if o.category == category]
        best = min(options, key=lambda t: (self.cost_hold(t), options.index(t)), default=None)
        return best if best is not None and self.cost_hold(best) < INF else None

    def container_for(self, size: int) -> str | None:
        """A held or worn container with room for ``size``."""
        for c in self.view.containers():
            if self.view.room_in(c) >= size:
                return c
        return None

    def need_container(self) -> str | None:
        """Next command toward holding or wearing any container; None when I do."""
        if self.view.containers():
            return None
        t = self.cheapest_of_category("container")
        if t is None:
            raise Stuck("no container to be had")
        return self.equip(t)
