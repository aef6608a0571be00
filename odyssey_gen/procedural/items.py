"""Object types: a crafting hierarchy over found materials, gear scaled by level, and the essentials.

Counts follow the request: the essentials every game needs (currency, a station, a container, a
writable and a writing tool, a weapon, armor, materials, one key per lock, the boss's trophy, food
and a lockpick when those verbs are on) come first, and the rest is shared out by fixed weights.
Levels are spread evenly over the range (paper A3.3: "object levels are distributed approximately
uniformly"). A recipe only uses what is of its level or below, and the key of a lock only uses what
can be had before that lock, so nothing the game asks for is out of reach.
"""

from __future__ import annotations

from odyssey_gen.procedural.draft import Draft, ObjDraft
from odyssey_gen.procedural.names import article, sentence, words_of

#: Weights of the object kinds beyond the essentials (largest-remainder rounding keeps the total exact).
WEIGHTS: dict[str, float] = {
    "raw": 0.30,
    "made": 0.22,
    "weapon": 0.12,
    "armor": 0.13,
    "station": 0.05,
    "container": 0.03,
    "writable": 0.02,
    "write": 0.01,
    "food_raw": 0.06,
    "food_made": 0.06,
}
SLOTS = ("body", "head", "feet", "shield", "legs", "hands")
SLOT_DEFENSE = {"body": (2, 2), "head": (1, 1), "shield": (1, 1), "legs": (1, 1), "feet": (0, 1), "hands": (0, 1)}

TEXT: dict[str, tuple[str, ...]] = {
    "raw": (
        "{a}, gathered in {place}.",
        "{a}; common enough in {place}, if you know where to look.",
        "{a}. Crafters value it more than traders do.",
        "{a}, rough and unworked.",
    ),
    "made": (
        "{a}, worked by hand from humbler stuff.",
        "{a}: a crafter's intermediate, useless alone.",
        "{a}, shaped with patience at a station.",
    ),
    "weapon": (
        "{a}. Held in a hand, it makes every blow count for more.",
        "{a}, balanced for a fighter's grip.",
        "{a}, notched from use but still deadly.",
    ),
    "armor": (
        "{a}. Worn, it turns aside some of every blow.",
        "{a}, made to be worn in a fight.",
        "{a}; heavy, but it keeps the wearer whole.",
    ),
    "container": ("{a}. Worn, it carries what two hands cannot.", "{a} with room for a few things."),
    "writable": ("{a}, blank and waiting for words.", "{a} that takes ink and charcoal alike."),
    "write": ("{a}, good for writing when held with something to write on.",),
    "lockpick": ("{a}, thin enough to tease a lock open. It may snap.",),
    "food_raw": ("{a}. Eaten, it restores a little health.", "{a}, fresh from {place}."),
    "food_made": ("{a}, cooked to restore a good deal of health.", "{a}, hearty and warm."),
    "station": ("{a}. Too heavy to move; crafters work beside it.", "{a}, fixed in place and still in use."),
    "key": ("{a}, cut for one particular lock.",),
    "currency": ("{a}, the money of this world; traders take it gladly.",),
    "trophy": ("{a}, taken from the thing that ruled the deepest part of the world.",),
}


def _allocate(total: int, weights: dict[str, float]) -> dict[str, int]:
    """Split ``total`` by ``weights`` with largest-remainder rounding (exact, deterministic)."""
    wsum = sum(weights.values())
    if total <= 0 or wsum <= 0:
        return dict.fromkeys(weights, 0)
    raw = {k: total * w / wsum for k, w in weights.items()}
    out = {k: int(v) for k, v in raw.items()}
    left = total - sum(out.values())
    for k in sorted(raw, key=lambda k: (-(raw[k] - out[k]), list(weights).index(k)))[:left]:
        out[k] += 1
    return out


def counts(d: Draft) -> dict[str, int]:
    """How many object types of each kind the request gets."""
    spec, verbs = d.spec, d.verbs
    deep = spec.craft_depth > 1
    essentials = {
        "currency": 1,
        "trophy": 1,
        "key": spec.lock_count,
        "container": 1,
        "writable": 1,
        "write": 1,
        "station": 1,
        "weapon": 1,
        "armor": 1,
        "raw": 2 if deep else 3,
        "made": 1 if deep else 0,
        "lockpick": int("lockpick" in verbs),
        "food_raw": int("eat" in verbs),
        "food_made": 0,
    }
    weights = dict(WEIGHTS)
    if not deep:
        weights["raw"] += weights.pop("made")
    if "eat" not in verbs:
        weights["raw"] += weights.pop("food_raw")
        weights["made" if deep else "raw"] += weights.pop("food_made")
    extra = _allocate(spec.objects - sum(essentials.values()), weights)
    return {k: essentials.get(k, 0) + extra.get(k, 0) for k in dict.fromkeys([*essentials, *extra])}


def raw_needs(d: Draft, name: str, n: int, out: dict[str, int] | None = None) -> dict[str, int]:
    """Found materials (and found things) consumed by making ``n`` of ``name``, through every recipe."""
    out = {} if out is None else out
    o = d.objects[name]
    if o.recipe is None:
        out[name] = out.get(name, 0) + n
        return out
    times = -(-n // o.recipe.get("yields", 1))
    for ing, k in o.recipe["ingredients"].items():
        raw_needs(d, ing, k * times, out)
    return out


def ensure_supply(d: Draft, demands: dict[str, int]) -> None:
    """Make sure the world's guaranteed placements cover ``demands`` (object -> count) with two to spare.

    Scatter, merchants and loot add more, but only what lies in an area's ``objects`` is certain; the
    quest and every key are checked against this, so a stage never waits on luck.
    """
    total: dict[str, int] = {}
    for name, n in demands.items():
        raw_needs(d, name, n, total)
    for name, n in total.items():
        o = d.objects[name]
        if o.category in ("currency", "quest"):
            continue
        if o.home is None:  # found things without a home: give them one of their level in their zone
            candidates = [a for a in d.areas if a.zone <= o.zone] or d.areas
            best = min(abs(a.level - o.level) for a in candidates)
            o.home = d.rng.choice([a for a in candidates if abs(a.level - o.level) == best]).name
        area = d.area(o.home)
        area.objects[name] = max(area.objects.get(name, 0), n + 2)  # the oracle also crafts gear from them


def _spread(n: int, top: int) -> list[int]:
    """``n`` levels spread evenly over 1..top, ascending."""
    return [1 + (j * top) // n for j in range(n)] if n else []


def _text(d: Draft, kind: str, name: str, area_title: str | None = None) -> str:
    return sentence(d.rng, TEXT[kind], a=article(words_of(name)), place=area_title or d.places[0].title)


class ObjectBuilder:
    """Builds every object type of a draft (see the module docstring)."""

    def __init__(self, d: Draft):
        self.d = d
        self.rng = d.rng
        self.top = d.spec.max_level
        self.used: dict[str, int] = {}  # material -> recipes using it (to spread use over materials)

    # ------------------------------------------------------------------ helpers
    def _new(
        self, kind: str, category: str, level: int, *, noun: str | None = None, bare: bool = False, **fields
    ) -> ObjDraft:
        d = self.d
        name = d.namer.name(noun or kind, bare_first=bare)
        o = ObjDraft(name, kind, category, level, {k: v for k, v in fields.items() if v is not None})
        return d.add_object(o)

    def _areas_at(self, level: int, zone: int | None = None, *, not_spawn: bool = False):
        areas = [a for a in self.d.areas if (zone is None or a.zone == zone) and not (not_spawn and a.index == 0)]
        if not areas:
            areas = list(self.d.areas)
        best = min(abs(a.level - level) for a in areas)
        return [a for a in areas if abs(a.level - level) == best]

    def _home(self, o: ObjDraft, n: int, *, zone: int | None = None, not_spawn: bool = False) -> None:
        area = self.rng.choice(self._areas_at(o.level, zone, not_spawn=not_spawn))
        o.home = area.name
        o.zone = area.zone
        self.d.place_object(area, o.name, n)

    def _pick(self, pool: list[ObjDraft], k: int) -> list[ObjDraft]:
        """``k`` distinct materials from ``pool``, favouring the least used ones (file order breaks ties)."""
        chosen: list[ObjDraft] = []
        options = list(pool)
        for _ in range(min(k, len(options))):
            least = min(self.used.get(o.name, 0) for o in options)
            fresh = [o for o in options if self.used.get(o.name, 0) == least]
            o = self.rng.choice(fresh if self.rng.random() < 0.7 else options)
            chosen.append(o)
            options.remove(o)
        for o in chosen:
            self.used[o.name] = self.used.get(o.name, 0) + 1
        return chosen

    def _recipe(
        self, o: ObjDraft, ingredients: list[ObjDraft], *, station: bool = True, yields: int = 1, single: bool = False
    ) -> None:
        stations = self.d.of_kind("station")
        st = [self.rng.choice(stations)] if stations and station and self.rng.random() < 0.85 else []
        amounts = {i.name: 1 if single else self.rng.choice((1, 1, 1, 2)) for i in ingredients}
        o.fields["recipe"] = {
            "ingredients": amounts,
            "stations": [s.name for s in st],
            **({"yields": yields} if yields > 1 else {}),
        }
        o.tier = 1 + max(i.tier for i in ingredients)
        o.zone = max([i.zone for i in ingredients] + [s.zone for s in st])
        cost = sum(self.d.objects[n].fields.get("value", 1) * k for n, k in amounts.items())
        o.fields["value"] = max(1, cost // yields + self.rng.randint(1, 3))
        o.fields["spawn_weight"] = 0

    def _materials(self, level: int, *, max_tier: int, zone: int | None = None) -> list[ObjDraft]:
        return [
            m
            for m in self.d.of_kind("raw", "made")
            if m.level <= level and m.tier <= max_tier and (zone is None or m.zone <= zone)
        ]

    # ------------------------------------------------------------------ build
    def build(self) -> None:
        d, rng, top = self.d, self.rng, self.top
        c = counts(d)
        depth = d.spec.craft_depth
        spawn = d.spawn

        coin = self._new("currency", "currency", 1, bare=True, value=1, size=0, spawn_weight=1.5)
        d.place_object(spawn, coin.name, rng.randint(6, 10))

        zone0 = d.zone_areas(0)
        for j in range(c["station"]):
            st = self._new("station", "station", 1, bare=j < 2, value=0, spawn_weight=0)
            area = zone0[j % len(zone0)]
            d.place_object(area, st.name)
            st.home = area.name
        for z in range(1, d.zones):  # later zones have a station of their own, so crafting is not all back home
            st = rng.choice(d.of_kind("station"))
            d.place_object(rng.choice(d.zone_areas(z)), st.name)

        for j, level in enumerate(_spread(c["raw"], top)):
            o = self._new("raw", "material", level, value=level + rng.randint(0, 2), size=rng.choice((1, 1, 1, 2)))
            self._home(o, rng.randint(2, 3), zone=0 if j < 2 else None)

        # Intermediates: tier t needs a tier t-1 ingredient, so the hierarchy really is craft_depth deep.
        made_levels = _spread(c["made"], top)
        tiers = [1 + (j % max(1, depth - 1)) for j in range(c["made"])]
        for level, tier in sorted(zip(made_levels, tiers, strict=True), key=lambda lt: (lt[1], lt[0])):
            o = self._new("made", "material", level, size=1)
            o.tier = depth  # not an ingredient of anything until its own recipe is known
            below = [m for m in self._materials(level, max_tier=tier - 1) if m.tier == tier - 1] or self._materials(
                level, max_tier=tier - 1
            )
            first = self._pick(below, 1)
            rest = self._pick(
                [m for m in self._materials(level, max_tier=tier - 1) if m not in first], rng.choice((0, 1, 1))
            )
            self._recipe(o, first + rest, yields=rng.choice((1, 1, 2)))

        # Food (games with the eat verb).
        for level in _spread(c["food_raw"], top):
            o = self._new(
                "food_raw", "food", level, value=max(1, level), size=1, hp_restore=6 + 4 * level, spawn_weight=1.0
            )
            self._home(o, rng.randint(1, 3))
        for level in _spread(c["food_made"], top):
            o = self._new("food_made", "food", level, size=1, hp_restore=20 + 10 * level)
            foods = [f for f in d.of_kind("food_raw") if f.level <= level] or d.of_kind("food_raw")
            if foods:
                extra = self._pick(self._materials(level, max_tier=0), rng.choice((0, 1)))
                self._recipe(o, self._pick(foods, 1) + extra)
            else:
                self._recipe(o, self._pick(self._materials(level, max_tier=depth - 1), 2))

        # Containers: the first lies at the spawn; bigger ones are crafted.
        for j, level in enumerate(_spread(c["container"], top)):
            if j == 0:
                # room for a long recipe's ingredients besides what other stages had it gather (the oracle does not
                # throw things away to make room, and neither do most agents)
                o = self._new("container", "container", 1, value=3, size=1, capacity=20, spawn_weight=0.2)
                d.place_object(spawn, o.name)
                o.home = spawn.name
            else:
                o = self._new("container", "container", level, size=2, capacity=16 + 6 * level)
                self._recipe(o, self._pick(self._materials(level, max_tier=depth - 1), 2))
        for j, level in enumerate(_spread(c["writable"], top)):
            o = self._new("writable", "writable", level, value=1, size=1, max_text=80, spawn_weight=0.5)
            self._home(o, 1, zone=0 if j == 0 else None)
        for j, level in enumerate(_spread(c["write"], top)):
            o = self._new("write", "tool", level, value=2, size=1, uses=["write"], spawn_weight=0.3)
            self._home(o, 1, zone=0 if j == 0 else None)
        for _ in range(c["lockpick"]):
            o = self._new("lockpick", "tool", 1, size=1, uses=["lockpick"])
            self._recipe(o, self._pick(self._materials(1, max_tier=0, zone=0), 1), station=False, yields=2)
            o.fields["spawn_weight"] = 0.2

        # Gear: the first weapon lies in the first zone; most of the rest is crafted.
        for j, level in enumerate(_spread(c["weapon"], top)):
            o = self._new("weapon", "weapon", level, size=2, attack=4 + 5 * level + rng.randint(-1, 2))
            if j == 0 or rng.random() < 0.25:
                o.fields.update(value=2 + 3 * level, spawn_weight=0.4)
                self._home(o, 1, zone=0 if j == 0 else None)
            else:
                o.fields["attack"] += 2
                self._recipe(o, self._pick(self._materials(level, max_tier=depth - 1), rng.randint(1, 3)))
        for j, level in enumerate(_spread(c["armor"], top)):
            slot = SLOTS[j % len(SLOTS)]
            base, per = SLOT_DEFENSE[slot]
            o = self._new("armor", "armor", level, noun=slot, size=2, slot=slot, defense=max(1, base + per * level))
            if rng.random() < 0.25:
                o.fields.update(value=2 + 3 * level, spawn_weight=0.3)
                self._home(o, 1)
            else:
                self._recipe(o, self._pick(self._materials(level, max_tier=depth - 1), rng.randint(1, 3)))

        # One key per lock, made only of what lies before it.
        for lock in d.locks:
            before = d.area(lock.a)
            o = self._new("key", "key", before.level, size=1, uses=["unlock"])
            # shallow and single amounts: the key is on every route deeper, so it must be easy to make
            pool = self._materials(before.level, max_tier=min(1, depth - 1), zone=lock.zone - 1)
            self._recipe(o, self._pick(pool, min(2, len(pool))), single=True)
            lock.key = o.name

        trophy = self._new("trophy", "quest", top, value=0, size=1, spawn_weight=0)
        trophy.zone = d.zones - 1

        for o in d.objects.values():
            title = d.place_title(d.area(o.home)) if o.home else None
            o.description = _text(d, o.kind, o.name, title)
