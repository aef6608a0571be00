"""The quest: main-quest chapters (linear, or a DAG that forks and joins), side quests, the tutorial.

Every stage is written in the engine's condition vocabulary and only names things the draft
guarantees: an object that lies somewhere, is sold or can be crafted from such things; an enemy kind
that has a home; an area behind a lock whose key can be made before it. Chapter ``k`` of ``C`` draws
its targets from the levels up to ``ceil((k + 1) L / C)``, so the quest goes deeper as it goes on,
and the last chapter ends with the boss. Each chapter of a DAG quest is a root, ``branching``
parallel chains and a join (paper A3.3: hierarchical goal decomposition), wired by one of the
structures of :mod:`odyssey_gen.procedural.plots`; the arc of the whole quest (how it opens, what
comes before and after the boss, which stages it favours) is one of its plot shapes, chosen by seed
unless the spec names one.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

from odyssey_gen.procedural.draft import Draft, Lock, NpcDraft, ObjDraft
from odyssey_gen.procedural.names import words_of
from odyssey_gen.procedural.plots import PLOTS, STRUCTURES, Plot
from odyssey_gen.spec import SpecError

Stage = dict[str, Any]

FILLERS: dict[str, float] = {
    "craft": 3,
    "gather": 2,
    "explore": 2,
    "hunt": 2,
    "slay": 1,
    "buy": 1,
    "sell": 1,
    "equip": 1.5,
    "arm": 0.5,
    "write": 1,
    "note": 1,
    "deliver": 1.5,
    "eat": 1,
    "level": 0.5,
    "talk": 1,
}


def _recipe_text(d: Draft, o: ObjDraft) -> str:
    r = o.recipe
    if r is None:
        where = f" Some lie in {o.home}." if o.home else ""
        return f"{o.name} is found, not made.{where}"
    parts = " and ".join(f"{n} {i}" for i, n in r["ingredients"].items())
    at = f" at a {r['stations'][0]}" if r["stations"] else ""
    return f"{o.name} is crafted from {parts}{at}."


class QuestBuilder:
    def __init__(self, d: Draft):
        self.d = d
        self.rng = d.rng
        self.spec = d.spec
        self.guide: NpcDraft = d.npcs_of("guide")[0]
        self.boss: NpcDraft = d.npcs_of("boss")[0]
        self.trophy: ObjDraft = d.of_kind("trophy")[0]
        self.seen: set[str] = set()  # conditions already used (as JSON), so no stage repeats another
        self.targets: set[str] = set()  # names already asked for by a filler
        self.counter = 0
        self.masterwork: ObjDraft | None = self._masterwork()
        self.plot: Plot = self._choose_plot()
        self.structure: str = self.rng.choice(STRUCTURES) if self.spec.branching > 1 else "linear"
        if self.plot.name == "forging":
            self._bind_masterwork()
        # the words of the writing stages: the world's own things, read as words
        self.words = sorted({words_of(o.name) for o in d.objects.values() if o.kind in ("raw", "made", "trophy")})

    # ------------------------------------------------------------------ the plot
    def _masterwork(self) -> ObjDraft | None:
        """The best crafted weapon (else armor): what the forging plot makes from the trophy."""
        for kind in ("weapon", "armor"):
            crafted = [o for o in self.d.of_kind(kind) if o.recipe is not None]
            if crafted:
                return max(crafted, key=lambda o: (o.level, o.name))
        return None

    def _choose_plot(self) -> Plot:
        wanted = self.spec.plot
        if wanted is not None:
            if wanted == "forging" and self.masterwork is None:
                raise SpecError("plot: forging needs a crafted weapon or armor: raise --objects")
            return PLOTS[wanted]
        names = [n for n in PLOTS if n != "forging" or self.masterwork is not None]
        return PLOTS[self.rng.choice(names)]

    def _bind_masterwork(self) -> None:
        """The trophy becomes an ingredient of the masterwork, which no earlier stage may ask for."""
        m = self.masterwork
        assert m is not None and m.recipe is not None
        m.recipe["ingredients"][self.trophy.name] = 1
        m.zone = self.d.zones - 1
        m.tier = max(m.tier, 1)
        self.targets.add(m.name)

    def _texts(self) -> dict[str, str]:
        d = self.d
        merchant = self._merchant_at_work()
        return {
            "guide": words_of(self.guide.name).title(),
            "boss": words_of(self.boss.name),
            "trophy": words_of(self.trophy.name),
            "masterwork": words_of(self.masterwork.name) if self.masterwork else "",
            "spawn": d.spawn.name,
            "deepest": d.areas[-1].name,
            "deepest_words": words_of(d.areas[-1].name).title(),
            "merchant": words_of(merchant.name).title() if merchant else "",
            "place": d.places[0].title,
        }

    def _merchant_at_work(self) -> NpcDraft | None:
        """The trader of the trade plot: one beyond the spawn when there is one (the finale walks there)."""
        merchants = [m for m in self.d.npcs_of("merchant") if m.homes]
        away = [m for m in merchants if m.homes[0] != self.d.spawn.name]
        found = away or merchants
        return found[0] if found else None

    # ------------------------------------------------------------------ openings and finales
    def open_explore(self) -> Stage | None:
        return self._f_explore(0)

    def open_arm(self) -> Stage | None:
        return self._f_arm(0)

    def talk_merchant(self) -> Stage | None:
        m = self._merchant_at_work()
        if m is None:
            return self.talk_guide()
        self.targets.add(m.name)
        return self._stage(
            "talk_merchant",
            f"Hear the terms of {words_of(m.name).title()}",
            f"{m.name} keeps shop in {m.homes[0]}.",
            {"type": "talked_to", "npc": m.name},
            on_complete=f"{words_of(m.name).title()} names the price: the {words_of(self.trophy.name)}.",
        )

    def report_to_guide(self) -> Stage | None:
        g, t = self.guide.name, self.trophy.name
        return self._stage(
            "report",
            f"Show the {words_of(t)} to {words_of(g).title()}",
            f"Carry the {t} the {self.boss.name} dropped and talk to {g} in {self.d.spawn.name}.",
            {
                "type": "all_of",
                "conditions": [{"type": "has_item_count", "object": t}, {"type": "talked_to", "npc": g}],
            },
        )

    def forge_masterwork(self) -> Stage | None:
        m = self.masterwork
        assert m is not None
        return self._stage(
            "forge",
            f"Forge the {words_of(m.name)}",
            _recipe_text(self.d, m) + f" The {self.trophy.name} is its heart.",
            {"type": "object_crafted", "object": m.name},
        )

    def vow_note(self) -> Stage | None:
        home = self.d.spawn.name
        text = f"the {words_of(self.boss.name)} is no more"
        return self._stage(
            "vow",
            f"Write the vow in {words_of(home)}",
            f"Write '{text}' on something writable and set it down in {home}.",
            {"type": "text_equals_in", "text": text, "area": home},
        )

    def trophy_to_merchant(self) -> Stage | None:
        m = self._merchant_at_work()
        if m is None:
            return self.bring_trophy()
        t, where = self.trophy.name, m.homes[0]
        return self._stage(
            "pay",
            f"Pay {words_of(m.name).title()} with the {words_of(t)}",
            f"Set the {t} down in {where}, where {m.name} keeps shop.",
            {"type": "object_in_area", "object": t, "area": where},
        )

    def cull(self) -> Stage | None:
        enemies = [n for n in self.d.npcs_of("enemy") if n.homes]
        if not enemies:
            return None
        e = max(enemies, key=lambda n: (len(n.homes), n.level, n.name))
        n = min(2, len(e.homes))
        return self._stage(
            "cull",
            f"Break the siege: defeat {n} {words_of(e.name)}",
            f"They gather in {e.homes[0]}. Defeat {n} of them before facing their master.",
            {"type": "defeated_n", "npc": e.name, "count": n},
        )

    # ------------------------------------------------------------------ scope of a chapter
    def cap(self, k: int) -> int:
        return max(1, math.ceil((k + 1) * self.spec.max_level / self.spec.chapters))

    def _fresh(self, options: list, key=lambda x: x.name) -> list:
        return [o for o in options if key(o) not in self.targets]

    def _stage(self, kind: str, title: str, hint: str, done: dict[str, Any], **extra: Any) -> Stage | None:
        sig = json.dumps(done, sort_keys=True)
        if sig in self.seen:
            return None
        self.seen.add(sig)
        return {"kind": kind, "title": title, "hint": hint, "done": done, **extra}

    # ------------------------------------------------------------------ required stages
    def talk_guide(self) -> Stage | None:
        g = self.guide.name
        return self._stage(
            "talk_guide",
            f"Hear out {words_of(g).title()}",
            "I am right here. Talk to me.",
            {"type": "talked_to", "npc": g},
            on_complete=f"{words_of(g).title()} tells of the {words_of(self.boss.name)} and the "
            f"{words_of(self.trophy.name)} it keeps.",
        )

    def craft_key(self, lock: Lock) -> Stage | None:
        key = self.d.objects[lock.key]
        return self._stage(
            "craft_key",
            f"Make the {words_of(lock.key)}",
            f"The way to {lock.b} is locked. {_recipe_text(self.d, key)}",
            {"type": "object_crafted", "object": lock.key},
        )

    def cross(self, lock: Lock) -> Stage | None:
        return self._stage(
            "cross",
            f"Pass the locked way into {words_of(lock.b)}",
            f"The way from {lock.a} to {lock.b} opens for whoever holds a {lock.key} in hand "
            f"when entering. {_recipe_text(self.d, self.d.objects[lock.key])}",
            {"type": "visited_k_of", "areas": [lock.b], "count": 1},
        )

    def slay_boss(self) -> Stage | None:
        deepest = self.d.areas[-1].name
        b = self.boss.name
        return self._stage(
            "boss",
            f"Defeat the {words_of(b)}",
            f"The {b} waits in {deepest}. It fights in a rhythm: strike when its guard is down, "
            "and come with a good weapon and armor.",
            {"type": "npc_defeated", "npc": b},
            spawn=[{"npc": b, "area": deepest}],
            on_open=f"Something vast stirs in {deepest}.",
        )

    def bring_trophy(self) -> Stage | None:
        t, home = self.trophy.name, self.d.spawn.name
        return self._stage(
            "return",
            f"Bring the {words_of(t)} home",
            f"The {self.boss.name} dropped the {t} where it fell. Carry it back to {home} and set it down there.",
            {"type": "object_in_area", "object": t, "area": home},
        )

    # ------------------------------------------------------------------ fillers
    def filler(self, k: int) -> Stage:
        """A stage within chapter ``k``'s reach, of a kind the plot favours (different from every other stage).

        Some become a choice: either of two tasks of different kinds (``any_of``), so the agent picks a route.
        """
        first = self._one_filler(k)
        assert first is not None  # with no kind to avoid, _one_filler raises rather than give up
        first["filler"] = True
        if self.rng.random() < self.plot.choice_rate:
            other = self._one_filler(k, avoid=first["kind"], tries=40)
            if other is not None:
                return {
                    "kind": "choice",
                    "title": f"{first['title']}, or {other['title'][:1].lower()}{other['title'][1:]}",
                    "hint": f"Either of two tasks will do. {first['hint']} Or: {other['hint']}",
                    "done": {"type": "any_of", "conditions": [first["done"], other["done"]]},
                    "filler": True,
                }
        return first

    def _one_filler(self, k: int, avoid: str = "", tries: int = 200) -> Stage | None:
        weights = {kd: w * self.plot.weights.get(kd, 1.0) for kd, w in FILLERS.items()}
        kinds = [kd for kd in FILLERS if (kd != "eat" or "eat" in self.d.verbs) and weights[kd] > 0 and kd != avoid]
        for _ in range(tries):
            kind = self.rng.choices(kinds, [weights[kd] for kd in kinds])[0]
            stage = getattr(self, f"_f_{kind}")(k)
            if stage is not None:
                return stage
        if avoid:
            return None
        raise SpecError("the world is too small for the stages asked: lower --stages or raise --objects / --npcs")

    def _in_reach(self, k: int, *kinds: str) -> list[ObjDraft]:
        return [o for o in self.d.of_kind(*kinds) if o.level <= self.cap(k)]

    def _choose(self, options: list[Any]) -> Any | None:
        fresh = self._fresh(options)
        if not fresh:
            return None
        top = max(o.level for o in fresh)  # favour the chapter's own level
        pool = [o for o in fresh if o.level >= top - 1]
        picked = self.rng.choice(pool)
        self.targets.add(picked.name)
        return picked

    def _f_craft(self, k: int) -> Stage | None:
        o = self._choose(self._in_reach(k, "made", "weapon", "armor", "container", "food_made"))
        if o is None or o.recipe is None:
            return None
        return self._stage(
            "craft", f"Craft {words_of(o.name)}", _recipe_text(self.d, o), {"type": "object_crafted", "object": o.name}
        )

    def _f_gather(self, k: int) -> Stage | None:
        o = self._choose(self._in_reach(k, "raw"))
        if o is None:
            return None
        n = self.rng.randint(2, 3)
        return self._stage(
            "gather",
            f"Gather {n} {words_of(o.name)}",
            f"Carry {n} {o.name} at once. Some lie in {o.home}; traders may sell it too.",
            {"type": "has_item_count", "object": o.name, "count": n},
        )

    def _f_explore(self, k: int) -> Stage | None:
        lo = self.cap(k - 1) if k else 0
        region = [a.name for a in self.d.areas if lo < a.level <= self.cap(k) and a.index != 0]
        region = [a for a in region if a not in self.targets] or region
        if not region:
            return None
        n = min(len(region), 2)
        pick = self.rng.sample(region, min(len(region), 3))
        self.targets.update(pick)
        return self._stage(
            "explore",
            f"Explore {', '.join(words_of(a) for a in pick[:2])}",
            f"Walk into {n} of these places: {', '.join(pick)}.",
            {"type": "visited_k_of", "areas": pick, "count": n},
        )

    def _enemy(self, k: int) -> NpcDraft | None:
        options = [n for n in self.d.npcs_of("enemy") if n.level <= self.cap(k) and n.homes]
        return self._choose(options)

    def _f_hunt(self, k: int) -> Stage | None:
        e = self._enemy(k)
        if e is None:
            return None
        n = min(2, len(e.homes))
        return self._stage(
            "hunt",
            f"Thin out the {words_of(e.name)}s",
            f"Defeat {n} {e.name}. They keep to {e.homes[0]} and nearby.",
            {"type": "defeated_n", "npc": e.name, "count": n},
        )

    def _f_slay(self, k: int) -> Stage | None:
        e = self._enemy(k)
        if e is None:
            return None
        return self._stage(
            "slay",
            f"Defeat a {words_of(e.name)}",
            f"One lurks in {e.homes[0]}.",
            {"type": "npc_defeated", "npc": e.name},
        )

    def _merchants(self, k: int) -> list[NpcDraft]:
        return [m for m in self.d.npcs_of("merchant") if m.level <= self.cap(k)]

    def _f_buy(self, k: int) -> Stage | None:
        # raw materials only: tools and paper in stock may be bought up by the time the stage opens
        wares = [
            (m, o)
            for m in self._merchants(k)
            for o, n in m.fields["stock"].items()
            if o not in self.targets and self.d.objects[o].kind == "raw" and n >= 2
        ]
        if not wares:
            return None
        m, o = self.rng.choice(wares)
        self.targets.add(o)
        return self._stage(
            "buy",
            f"Buy {words_of(o)}",
            f"{m.name} in {m.homes[0]} sells {o} for coins.",
            {"type": "object_bought", "object": o},
        )

    def _f_sell(self, k: int) -> Stage | None:
        if not self._merchants(k):
            return None
        o = self._choose(self._in_reach(k, "raw"))
        if o is None:
            return None
        m = self._merchants(k)[0]
        return self._stage(
            "sell",
            f"Sell some {words_of(o.name)}",
            f"Traders pay coins for {o.name}; {m.name} in {m.homes[0]} will buy it. Some lies in {o.home}.",
            {"type": "object_sold", "object": o.name},
        )

    def _f_equip(self, k: int) -> Stage | None:
        armor = self._fresh(self._in_reach(k, "armor"))
        if not armor:
            return None
        top = max(a.level for a in armor)
        pick = [a for a in armor if a.level >= top - 1][:2]
        self.targets.update(a.name for a in pick)
        names = [a.name for a in pick]
        return self._stage(
            "equip",
            f"Wear {words_of(names[0])}" + (" or better" if len(names) > 1 else ""),
            " ".join(_recipe_text(self.d, a) for a in pick) + " Equip it to wear it.",
            {"type": "equipped_any_of", "objects": names},
        )

    def _f_arm(self, k: int) -> Stage | None:
        if "arm" in self.targets:
            return None
        self.targets.add("arm")
        w = min(self.d.of_kind("weapon"), key=lambda o: o.level)
        return self._stage(
            "arm",
            "Take up a weapon",
            f"Hold any weapon in a hand. {_recipe_text(self.d, w)}",
            {"type": "holds_category", "category": "weapon"},
        )

    def _phrase(self) -> str:
        a, b = self.rng.sample(self.words, 2)
        return self.rng.choice((f"the {a} remembers the {b}", f"{a} before {b}", f"we keep the {a} and the {b}"))

    def _f_write(self, k: int) -> Stage | None:
        text = self._phrase()
        tool, paper = self.d.of_kind("write")[0], self.d.of_kind("writable")[0]
        return self._stage(
            "write",
            "Write down the old words",
            f"Hold a {tool.name} and a {paper.name} and write: {text}.",
            {"type": "text_written", "text": text},
        )

    def _f_note(self, k: int) -> Stage | None:
        areas = [a for a in self.d.areas if a.level <= self.cap(k) and a.index != 0 and a.name not in self.targets]
        if not areas:
            return None
        area = self.rng.choice(areas)
        self.targets.add(area.name)
        text = self._phrase()
        return self._stage(
            "note",
            f"Leave a note in {words_of(area.name)}",
            f"Write '{text}' on something writable and set it down in {area.name}.",
            {"type": "text_equals_in", "text": text, "area": area.name},
        )

    def _f_deliver(self, k: int) -> Stage | None:
        o = self._choose(self._in_reach(k, "raw", "made"))
        if o is None:
            return None
        friends = [n for n in self.d.npcs_of("villager", "merchant") if n.homes]
        dest = self.rng.choice(friends).homes[0] if friends and self.rng.random() < 0.6 else self.d.spawn.name
        return self._stage(
            "deliver",
            f"Bring {words_of(o.name)} to {words_of(dest)}",
            f"Set a {o.name} down in {dest}. {_recipe_text(self.d, o)}",
            {"type": "object_in_area", "object": o.name, "area": dest},
        )

    def _f_eat(self, k: int) -> Stage | None:
        o = self._choose(self._in_reach(k, "food_raw", "food_made"))
        if o is None:
            return None
        return self._stage(
            "eat", f"Eat {words_of(o.name)}", _recipe_text(self.d, o), {"type": "object_eaten", "object": o.name}
        )

    def _f_level(self, k: int) -> Stage | None:
        want = min(self.cap(k), 3)
        if want < 2 or "level" in self.targets:
            return None
        self.targets.add("level")
        return self._stage(
            "level",
            f"Reach level {want}",
            "Experience comes from exploring, crafting, trading, fighting and finishing tasks.",
            {"type": "level_at_least", "count": want},
        )

    def _f_talk(self, k: int) -> Stage | None:
        friends = self._fresh([n for n in self.d.npcs_of("villager", "merchant") if n.level <= self.cap(k) and n.homes])
        if not friends:
            return None
        n = self.rng.choice(friends)
        self.targets.add(n.name)
        return self._stage(
            "talk",
            f"Talk to {words_of(n.name).title()}",
            f"{n.name} can be found in {n.homes[0]}.",
            {"type": "talked_to", "npc": n.name},
        )

    # ------------------------------------------------------------------ chapters
    def _lock_chapters(self) -> list[list[Lock]]:
        spec = self.spec
        per: list[list[Lock]] = [[] for _ in range(spec.chapters)]
        for lock in self.d.locks:
            level = self.d.area(lock.b).level
            k = next((k for k in range(spec.chapters) if self.cap(k) >= level), spec.chapters - 1)
            per[k].append(lock)
        # A chapter holds its crossings (and the boss, in the last one); move the overflow earlier, then later.
        for k in range(spec.chapters - 1, -1, -1):
            room = spec.stages - (k == spec.chapters - 1)
            while len(per[k]) > room:
                target = next(
                    (
                        j
                        for j in [*range(k - 1, -1, -1), *range(k + 1, spec.chapters)]
                        if len(per[j]) < spec.stages - (j == spec.chapters - 1)
                    ),
                    None,
                )
                if target is None:
                    raise SpecError("too few stages for the locks and the boss: raise --stages or --chapters")
                lock = per[k].pop(0 if target < k else -1)
                per[target].append(lock)
        return per

    def _chapter_stages(self, k: int, locks: list[Lock]) -> list[list[Stage]]:
        """Chapter ``k`` as an ordered list of units (a unit keeps together a key and its lock)."""
        spec = self.spec
        last = k == spec.chapters - 1
        must = len(locks) + last
        spare = spec.stages - must
        # a None stage repeated another (see _stage): its whole unit is dropped at the end
        head: list[list[Stage | None]] = []
        if k == 0 and spare > 0:
            opening = getattr(self, self.plot.opening)() or self.talk_guide()
            head.append([opening])
            spare -= 1
        tail: list[list[Stage | None]] = []
        if last:
            # each part of the plot around the boss costs a slot; keep at least one for a filler
            for name in self.plot.before_boss:
                stage = getattr(self, name)() if spare > 1 else None
                if stage is not None:
                    tail.append([stage])
                    spare -= 1
            tail.append([self.slay_boss()])
            for name in self.plot.finale:
                stage = getattr(self, name)() if spare > 1 else None
                if stage is not None:
                    stage["after_boss"] = True
                    tail.append([stage])
                    spare -= 1
            if self.plot.name == "forging" and len(tail) == 1:  # no room for the forge: the trophy goes home
                stage = self.bring_trophy()
                if stage is not None and spare > 0:
                    stage["after_boss"] = True
                    tail.append([stage])
                    spare -= 1
        units_of_locks: list[list[Stage | None]] = []
        for lock in locks:
            unit = [self.cross(lock)]
            if spare > 1 and self.rng.random() < 0.7:
                unit.insert(0, self.craft_key(lock))
                spare -= 1
            units_of_locks.append(unit)
        fillers: list[list[Stage | None]] = [[self.filler(k)] for _ in range(spare)]
        # Some work first, then each lock after its share of the fillers.
        middle: list[list[Stage | None]] = []
        n_fillers = len(fillers)
        for i, unit in enumerate(units_of_locks):
            while len(middle) - i < n_fillers * (i + 1) // (len(units_of_locks) + 1):
                middle.append(fillers.pop(0))
            middle.append(unit)
        middle += fillers
        out: list[list[Stage]] = []
        for whole in head + middle + tail:
            stages = [s for s in whole if s is not None]
            if len(stages) == len(whole):
                out.append(stages)
        return out

    def main_quest(self) -> dict[str, Any]:
        d, spec = self.d, self.spec
        chapters = []
        prev_end: list[str] = []
        for k, locks in enumerate(self._lock_chapters()):
            units = self._chapter_stages(k, locks)
            stages = [s for u in units for s in u]
            cid = f"chapter_{k + 1}"
            for s in stages:
                self.counter += 1
                s["id"] = f"{cid}_{s['kind']}_{self.counter}"
                if s.get("filler"):  # not the plot's opening, even when it is of a filler's kind
                    d.filler_ids.append(s["id"])
            if spec.branching > 1:
                prev_end = self._fork(units, prev_end)
            chapters.append(
                {
                    "id": cid,
                    "title": f"Chapter {k + 1}: {self._chapter_title(k, stages)}",
                    "intro": self._chapter_intro(k),
                    "stages": [self._ordered(s) for s in stages],
                }
            )
        texts = self._texts()
        title = self.plot.title.format(**texts)
        return {
            "title": " ".join(
                w if i and w in ("the", "of", "to", "a", "for") else w[:1].upper() + w[1:]
                for i, w in enumerate(title.split())
            ),
            "intro": self.plot.intro.format(**texts),
            "outro": self.plot.outro.format(**texts),
            "guide": {"npc": self.guide.name, "area": d.spawn.name},
            "chapters": chapters,
        }

    def _fork(self, units: list[list[Stage]], prev_end: list[str]) -> list[str]:
        """Give the chapter's stages explicit ``requires``: root -> chains -> join -> tail, wired by the structure.

        ``fork_join``: units dealt round-robin to ``branching`` chains; ``uneven``: dealt at random (each chain
        gets one), so chains differ in length; ``lattice``: round-robin, and each chain's second stage also
        waits for the first stage of the chain before it.
        """
        b = self.spec.branching
        stages = [s for u in units for s in u]
        root = stages[0]
        tail = [s for s in stages if s.get("after_boss")]
        join = stages[-1 - len(tail)]
        inner = [u for u in units if u[0] is not root and join not in u and not any(s in tail for s in u)]
        if len(inner) < b:
            inner = [[s] for u in inner for s in u]
        chains: list[list[Stage]] = [[] for _ in range(b)]
        if self.structure == "uneven" and len(inner) > b:
            slots = list(range(b)) + [self.rng.randrange(b) for _ in range(len(inner) - b)]
            for unit, c in zip(inner, slots, strict=True):
                chains[c].extend(unit)
        else:
            for i, unit in enumerate(inner):
                chains[i % b].extend(unit)
        root["requires"] = list(prev_end)
        ends = []
        for chain in chains:
            before = root["id"]
            for s in chain:
                s["requires"] = [before]
                before = s["id"]
            ends.append(before)
        if self.structure == "lattice":
            for left, right in itertools.pairwise(chains):
                if left and len(right) > 1 and left[0]["id"] not in right[1]["requires"]:
                    right[1]["requires"].append(left[0]["id"])
        join["requires"] = sorted(set(ends), key=ends.index)
        before = join["id"]
        for s in tail:
            s["requires"] = [before]
            before = s["id"]
        return [before]

    @staticmethod
    def _ordered(s: Stage) -> Stage:
        keys = ("id", "title", "hint", "requires", "done", "spawn", "place", "on_open", "on_complete")
        return {k: s[k] for k in keys if k in s}

    def _chapter_title(self, k: int, stages: list[Stage]) -> str:
        region = [a for a in self.d.areas if a.level <= self.cap(k)]
        return self.d.places[region[-1].place].title if region else self.d.places[0].title

    def _chapter_intro(self, k: int) -> str:
        if k == self.spec.chapters - 1:
            return f"The way leads down toward {self.d.areas[-1].name}."
        return f"The first steps: get to know {self.d.places[0].title}." if k == 0 else "Deeper in, harder going."

    # ------------------------------------------------------------------ the rest of quest.json
    def tutorial(self) -> dict[str, Any] | None:
        d = self.d
        trainer = d.npcs_of("trainer")
        dummy = d.npcs_of("dummy")
        if not d.spec.tutorial or not trainer or not dummy:
            return None
        trainer_name, dummy_name = trainer[0].name, dummy[0].name
        ware = next(iter(trainer[0].fields["stock"]))
        bag = d.of_kind("container")[0].name
        coin = d.of_kind("currency")[0].name
        tool, paper = d.of_kind("write")[0].name, d.of_kind("writable")[0].name
        hall, door = d.namer.name("room"), d.namer.name("room")
        # A recipe to practise: the first key when there is one (it then opens the tutorial's door).
        keys = [k for k in d.of_kind("key") if k.recipe]
        craftable = (
            keys[0]
            if keys
            else min((o for o in d.of_kind("made") if o.recipe), key=lambda o: (o.tier, o.level, o.name), default=None)
        )
        steps = [
            {
                "id": "take_bag",
                "say": f"A {words_of(bag)} lies here. Single items carry a number: 'pick up {bag}_<number>'.",
                "place": {bag: 1},
                "done": {"type": "has_item_count", "object": bag},
            },
            {
                "id": "wear_bag",
                "say": f"Two hands hold two things; worn as a pack it holds more: 'equip {bag}_<number>'.",
                "done": {"type": "equipped_any_of", "objects": [bag]},
            },
            {
                "id": "take_coins",
                "say": f"A pile of coins takes one hand: 'pick up {coin}'.",
                "place": {coin: 4},
                "done": {"type": "has_item_count", "object": coin, "count": 4},
            },
            {
                "id": "ask_trainer",
                "say": f"Traders name their wares when spoken to: 'talk to {trainer_name}'.",
                "npcs": [trainer_name],
                "done": {"type": "talked_to", "npc": trainer_name},
            },
            {
                "id": "buy",
                "say": f"Buy something: 'buy 1 {ware} {trainer_name}'.",
                "done": {"type": "object_bought", "object": ware},
            },
        ]
        link: dict[str, Any] = {"a": hall, "b": door}
        recipe = craftable.recipe if craftable is not None else None  # the candidates all have one
        if craftable is not None and recipe is not None:
            place = {s: 1 for s in recipe["stations"]}
            for ing, n in recipe["ingredients"].items():
                place[ing] = place.get(ing, 0) + n
            steps.append(
                {
                    "id": "craft",
                    "say": f"Recipes turn ingredients into new things at a station; "
                    f"'inspect {craftable.name}' shows one once you have it. Pick up "
                    f"what lies here, then: 'craft 1 {craftable.name}'.",
                    "place": place,
                    "done": {"type": "object_crafted", "object": craftable.name},
                }
            )
            if craftable.kind == "key":
                link.update(locked=True, key=craftable.name)
        steps += [
            {
                "id": "spar",
                "say": f"Something to fight: 'attack {dummy_name}'.",
                "npcs": [dummy_name],
                "done": {"type": "npc_defeated", "npc": dummy_name},
            },
            {
                "id": "write",
                "say": f"Writing needs a {words_of(tool)} in one hand and a {words_of(paper)} in the "
                "other. "
                f"Free your hands ('drop <object_name>'), pick both up, then: "
                f"'write \"hello\" {paper}_<number>'.",
                "place": {tool: 1, paper: 1},
                "done": {"type": "text_written"},
            },
            {
                "id": "leave",
                "say": (
                    f"A key opens its lock only from my hand: 'enter {door}'."
                    if link.get("locked")
                    else f"Time to go: 'enter {door}'."
                ),
                "done": {"type": "area_entered", "area": door},
            },
        ]
        return {
            "rooms": [
                {"name": hall, "description": "A swept room where newcomers learn their way around."},
                {"name": door, "description": "The room's outer doorway. The world lies beyond."},
            ],
            "links": [link],
            "intro": "Before the world, a short drill: each lesson says what to type.",
            "outro": "The drill is over; I leave the practice things behind.",
            "max_steps": 120,
            "steps": steps,
        }

    def build(self) -> dict[str, Any]:
        quest: dict[str, Any] = {"main": self.main_quest()}
        quest["side_quests"] = {"enabled": self.spec.side_quests, "unlock_after": 2, "reward": [1, 6]}
        quest["expansion"] = {"enabled": self.spec.expansion, "max_expansions": 1}
        tutorial = self.tutorial()
        if tutorial is not None:
            quest["tutorial"] = tutorial
        return quest
