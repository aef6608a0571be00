"""The checks of ``world.json`` beyond its schema: names, cross references, bounds, connectivity.

The schema reader (:mod:`odyssey_env.schema`) knows each field's type; these checks know what the
fields mean together (an ingredient must be an object, a key must open paths, a merchant needs a
currency, every area must be reachable). They run once when a game loads and report every problem
with its file and field, so a broken game is one readable list, never a crash during play.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from odyssey_env import schema
from odyssey_env.content import AMOUNT_STEPS, NAMEABLE, AreaSpec, NpcType, ObjectType, WorldSpec
from odyssey_env.limits import (
    LIMITS,
    MAX_AREAS,
    MAX_DRAWS,
    MAX_INSTANCES,
    MAX_LEVEL,
    MAX_NAME,
    MAX_PLACED_NPCS,
    MAX_RECIPE_AMOUNT,
    MAX_SCATTER,
    MAX_STAT,
    MAX_WORLD_INSTANCES,
    TEXT_CHARS,
)
from odyssey_env.schema import Problem

__all__ = ["NAME_RE", "check_bounds", "check_connected", "check_world", "text_problems"]

NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
INSTANCE_SUFFIX_RE = re.compile(r"_\d+$")


def text_problems(value: str, file: str, path: str) -> Iterator[Problem]:
    bad = sorted(set(value) - TEXT_CHARS)
    if bad:
        yield Problem(file, path, f"text may only use printable ASCII and newlines, found {''.join(bad)!r}")


def _hundredths(amount: float) -> bool:
    """Whether a fractional recipe amount is positive and a whole number of hundredths (crafting counts
    fractions in hundredths, exactly; 0.333 would be rounded silently)."""
    steps = amount * AMOUNT_STEPS
    return amount > 0 and abs(steps - round(steps)) < 1e-6


def check_world(spec: WorldSpec) -> list[Problem]:
    """Every cross reference of world.json and every bound of :mod:`odyssey_env.limits`, each naming its field."""
    out: list[Problem] = []
    F = "world.json"

    def bad(path: str, message: str) -> None:
        out.append(Problem(F, path, message))

    handles: dict[str, str] = {}

    def claim(name: str, path: str, what: str) -> None:
        if not NAME_RE.match(name):
            bad(path, f"{what} name {name!r} must be lower_snake_case (letters, digits, underscores)")
        elif len(name) > MAX_NAME:
            bad(
                path,
                f"{what} name {name[:20]!r}... has {len(name)} characters; at most {MAX_NAME} (commands "
                "carry names, and instances add a number)",
            )
        elif INSTANCE_SUFFIX_RE.search(name):
            bad(path, f"{what} name {name!r} must not end in _<number>: such names are reserved for instances")
        if name in handles:
            bad(
                path,
                f"name {name!r} is already used by {handles[name]}; names must be unique across "
                "objects, NPCs and areas because commands refer to them",
            )
        else:
            handles[name] = f"{what} at {path}"

    areas: dict[str, AreaSpec] = {}
    for i, place in enumerate(spec.places):
        out += text_problems(place.name + place.description, F, f"places[{i}]")
        if not place.areas:
            bad(f"places[{i}].areas", "a place needs at least one area")
        for j, area in enumerate(place.areas):
            p = f"places[{i}].areas[{j}]"
            claim(area.name, f"{p}.name", "area")
            areas[area.name] = area
            out += text_problems(area.description, F, f"{p}.description")
            if area.level < 1:
                bad(f"{p}.level", "levels start at 1")
    objects: dict[str, ObjectType] = {}
    for i, o in enumerate(spec.objects):
        p = f"objects[{i}]"
        claim(o.name, f"{p}.name", "object")
        objects[o.name] = o
        out += text_problems(o.description, F, f"{p}.description")
    npcs: dict[str, NpcType] = {}
    for i, n in enumerate(spec.npcs):
        claim(n.name, f"npcs[{i}].name", "NPC")
        npcs[n.name] = n

    def obj_ref(name: str, path: str) -> ObjectType | None:
        if name not in objects:
            close = schema._closest(name, objects)
            bad(path, f"unknown object {name!r}" + (f" (did you mean {close!r}?)" if close else ""))
            return None
        return objects[name]

    def area_ref(name: str, path: str) -> None:
        if name not in areas:
            close = schema._closest(name, areas)
            bad(path, f"unknown area {name!r}" + (f" (did you mean {close!r}?)" if close else ""))

    currencies = [o.name for o in spec.objects if o.category == "currency"]
    if len(currencies) > 1:
        bad("objects", f"at most one currency object is allowed, found {', '.join(currencies)}")
    for i, o in enumerate(spec.objects):
        p = f"objects[{i}]"
        if o.level < 1:
            bad(f"{p}.level", "levels start at 1")
        if o.size < 0 or o.value < 0:
            bad(p, "size and value cannot be negative")
        if o.category == "container" and o.capacity <= 0:
            bad(f"{p}.capacity", "a container needs a positive capacity")
        if o.category == "writable" and o.max_text <= 0:
            bad(f"{p}.max_text", "a writable needs a positive max_text")
        if o.category == "armor" and o.defense <= 0:
            bad(f"{p}.defense", "armor needs a positive defense")
        if o.category == "food" and o.hp_restore <= 0:
            bad(f"{p}.hp_restore", "food needs a positive hp_restore")
        if o.named and o.category not in NAMEABLE:
            bad(f"{p}.named", f"a {o.category} cannot be named one by one (only {', '.join(sorted(NAMEABLE))} can)")
        if o.slot is not None and o.category != "armor":
            bad(f"{p}.slot", "only armor has a slot")
        if o.slot == "pack":
            bad(f"{p}.slot", "the pack slot is reserved for containers")
        for a in o.areas:
            area_ref(a, f"{p}.areas")
        if o.recipe is not None:
            r = o.recipe
            if not r.ingredients:
                bad(f"{p}.recipe.ingredients", "a recipe needs at least one ingredient")
            if r.yields < 1:
                bad(f"{p}.recipe.yields", "must be at least 1")
            for ing, amount in r.ingredients.items():
                ing_t = obj_ref(ing, f"{p}.recipe.ingredients.{ing}")
                if isinstance(amount, int) and amount < 1:
                    bad(f"{p}.recipe.ingredients.{ing}", "amounts must be at least 1")
                elif not isinstance(amount, int) and not _hundredths(amount):
                    bad(
                        f"{p}.recipe.ingredients.{ing}",
                        f"{amount!r}: a fractional amount must be positive and in hundredths (0.25, 0.5, 1.5)",
                    )
                if ing == o.name:
                    bad(f"{p}.recipe.ingredients.{ing}", "an object cannot be its own ingredient")
                if ing_t is not None and (ing_t.instanced or not ing_t.portable):
                    what = "individually named" if ing_t.named else f"a {ing_t.category}"
                    bad(f"{p}.recipe.ingredients.{ing}", f"{ing} is {what}; ingredients must be plain carried objects")
            for st in r.stations:
                st_t = obj_ref(st, f"{p}.recipe.stations")
                if st_t is not None and st_t.category != "station":
                    bad(f"{p}.recipe.stations", f"{st} is not a station (category {st_t.category})")
    for i, n in enumerate(spec.npcs):
        p = f"npcs[{i}]"
        out += text_problems(n.description + "".join(n.dialogue), F, p)
        if n.hp <= 0 or n.level < 1 or n.attack < 0 or n.defense < 0:
            bad(p, "an NPC needs hp > 0, level >= 1 and non-negative attack and defense")
        if n.hostile and not n.pattern:
            bad(f"{p}.pattern", "an enemy needs a combat pattern")
        if n.merchant and n.hostile:
            bad(f"{p}.role", "a merchant cannot be an enemy")
        if n.merchant and not currencies:
            bad(f"{p}.role", "merchants need a currency object in the game")
        for field_name in ("drops", "stock"):
            for obj, amount in getattr(n, field_name).items():
                t = obj_ref(obj, f"{p}.{field_name}.{obj}")
                if amount < 1:
                    bad(f"{p}.{field_name}.{obj}", "amounts must be at least 1")
                if t is not None and not t.portable:
                    bad(f"{p}.{field_name}.{obj}", "stations cannot be carried by NPCs")
        for a in n.areas:
            area_ref(a, f"{p}.areas")
    for i, place in enumerate(spec.places):
        for j, area in enumerate(place.areas):
            p = f"places[{i}].areas[{j}]"
            for obj, amount in area.objects.items():
                obj_ref(obj, f"{p}.objects.{obj}")
                if amount < 1:
                    bad(f"{p}.objects.{obj}", "amounts must be at least 1")
            for k, npc in enumerate(area.npcs):
                if npc not in npcs:
                    bad(f"{p}.npcs[{k}]", f"unknown NPC {npc!r}")
    area_ref(spec.spawn, "spawn")
    g = spec.graph
    for i, c in enumerate(g.connections):
        p = f"graph.connections[{i}]"
        area_ref(c.a, f"{p}.a")
        area_ref(c.b, f"{p}.b")
        if c.a == c.b:
            bad(p, "a path must join two different areas")
        if c.key is not None:
            key_type = obj_ref(c.key, f"{p}.key")
            if key_type is not None and "unlock" not in key_type.uses:
                bad(f"{p}.key", f"{c.key} cannot open paths: give it the 'unlock' use")
        if c.key is not None and not c.locked:
            bad(f"{p}.key", "a key is only meaningful on a locked path")
    if g.mode == "random" and g.locked_links > 0:
        if g.lock_key is None:
            bad("graph.lock_key", "random graphs with locked links need a lock_key")
        else:
            key_type = obj_ref(g.lock_key, "graph.lock_key")
            if key_type is not None and "unlock" not in key_type.uses:
                bad("graph.lock_key", f"{g.lock_key} cannot open paths: give it the 'unlock' use")
    for i, key in enumerate(g.lock_keys):
        key_type = obj_ref(key, f"graph.lock_keys[{i}]")
        if key_type is not None and "unlock" not in key_type.uses:
            bad(f"graph.lock_keys[{i}]", f"{key} cannot open paths: give it the 'unlock' use")
    if g.mode == "fixed" and not out:
        out += check_connected(spec, areas)
    for field_name in ("objects_per_area", "npcs_per_area"):
        lo, hi = getattr(spec.placement, field_name)
        if not 0 <= lo <= hi <= MAX_SCATTER:
            bad(f"placement.{field_name}", f"expected [min, max] with 0 <= min <= max <= {MAX_SCATTER}")
    lo, hi = spec.placement.draws
    if not 0 <= lo <= hi <= MAX_DRAWS:
        bad("placement.draws", f"expected [min, max] with 0 <= min <= max <= {MAX_DRAWS} (draws per candidate)")
    if not 0 <= spec.placement.level_decay <= 1:
        bad("placement.level_decay", "must lie between 0 and 1 (a weight multiplier per level of difference)")
    if not 0 <= spec.placement.max_level_above <= MAX_LEVEL:
        bad("placement.max_level_above", f"must lie between 0 and {MAX_LEVEL}")
    if len(spec.placement.enemies_per_level) > MAX_LEVEL:
        bad("placement.enemies_per_level", f"at most {MAX_LEVEL} levels")
    for i, (lo, hi) in enumerate(spec.placement.enemies_per_level[:MAX_LEVEL]):
        if not 0 <= lo <= hi <= MAX_SCATTER:
            bad(f"placement.enemies_per_level[{i}]", f"expected [min, max] with 0 <= min <= max <= {MAX_SCATTER}")
    out += text_problems(spec.game.title + spec.game.description + spec.game.intro, F, "game")
    clock = re.match(r"^(\d\d):(\d\d)$", spec.game.start_time)
    if not clock or int(clock[1]) > 23 or int(clock[2]) > 59:
        bad("game.start_time", "expected HH:MM, 00:00 to 23:59")
    if not 1 <= spec.game.minutes_per_step <= 1440:
        bad("game.minutes_per_step", "must lie between 1 and 1440 (a day)")
    out += check_bounds(spec, areas)
    return out


def check_bounds(spec: WorldSpec, areas: dict[str, AreaSpec]) -> list[Problem]:
    """Sizes and numbers a playable game never needs (:mod:`odyssey_env.limits`): each names its field."""
    out: list[Problem] = []

    def within(path: str, value: float, lo: float | None, hi: float) -> None:
        """``lo`` None: the lower bound has a check of its own in _check_world (with its own message)."""
        if value > hi or (lo is not None and value < lo):
            expected = f"{lo:g} to {hi:g}" if lo is not None else f"at most {hi:g}"
            out.append(Problem("world.json", path, f"{value!r} is out of range: expected {expected}"))

    if len(areas) > MAX_AREAS:
        out.append(Problem("world.json", "places", f"{len(areas):,} areas; a game may have at most {MAX_AREAS:,}"))
    body = spec.agent
    within("agent.hp", body.hp, 1, MAX_STAT)
    within("agent.attack", body.attack, 0, MAX_STAT)
    within("agent.defense", body.defense, 0, MAX_STAT)
    within("agent.hands", body.hands, 1, 10)
    within("agent.xp_per_level", body.xp_per_level, 1, MAX_STAT)
    within("agent.hp_per_level", body.hp_per_level, 0, MAX_STAT)
    within("agent.attack_per_level", body.attack_per_level, 0, MAX_STAT)
    within("graph.extra_links", spec.graph.extra_links, 0, MAX_AREAS)
    within("graph.locked_links", spec.graph.locked_links, 0, MAX_AREAS)
    objects = {o.name: o for o in spec.objects}
    for i, o in enumerate(spec.objects):
        p = f"objects[{i}]"
        within(f"{p}.level", o.level, None, MAX_LEVEL)
        for name in ("value", "size", "capacity", "hp_restore"):
            within(f"{p}.{name}", getattr(o, name), None, MAX_STAT)
        for name in ("attack", "defense"):
            within(f"{p}.{name}", getattr(o, name), 0, MAX_STAT)
        within(f"{p}.max_text", o.max_text, 0, LIMITS.max_text)
        within(f"{p}.spawn_weight", o.spawn_weight, 0, MAX_STAT)
        if o.recipe is not None:
            within(f"{p}.recipe.yields", o.recipe.yields, None, MAX_INSTANCES if o.instanced else MAX_RECIPE_AMOUNT)
            for ing, amount in o.recipe.ingredients.items():
                within(f"{p}.recipe.ingredients.{ing}", amount, None, MAX_RECIPE_AMOUNT)
    for i, n in enumerate(spec.npcs):
        p = f"npcs[{i}]"
        for name in ("level", "hp", "attack", "defense"):
            within(f"{p}.{name}", getattr(n, name), None, MAX_LEVEL if name == "level" else MAX_STAT)
        for name in ("coins", "xp"):
            within(f"{p}.{name}", getattr(n, name), 0, MAX_STAT)
        within(f"{p}.spawn_weight", n.spawn_weight, 0, MAX_STAT)
        for field_name in ("drops", "stock"):
            for obj, amount in getattr(n, field_name).items():
                t = objects.get(obj)
                within(f"{p}.{field_name}.{obj}", amount, None, MAX_INSTANCES if t and t.instanced else MAX_STAT)
    instances = placed_npcs = 0
    for i, place in enumerate(spec.places):
        for j, area in enumerate(place.areas):
            p = f"places[{i}].areas[{j}]"
            within(f"{p}.level", area.level, None, MAX_LEVEL)
            placed_npcs += len(area.npcs)
            for obj, amount in area.objects.items():
                t = objects.get(obj)
                if t is not None and t.instanced:
                    instances += amount
                within(f"{p}.objects.{obj}", amount, None, MAX_INSTANCES if t and t.instanced else MAX_STAT)
    if instances > MAX_WORLD_INSTANCES:
        out.append(
            Problem(
                "world.json",
                "places",
                f"{instances:,} individually named objects (containers, "
                f"writables) placed; at most {MAX_WORLD_INSTANCES:,}",
            )
        )
    if placed_npcs > MAX_PLACED_NPCS:
        out.append(Problem("world.json", "places", f"{placed_npcs:,} NPCs placed; at most {MAX_PLACED_NPCS:,}"))
    return out


def check_connected(spec: WorldSpec, areas: dict[str, AreaSpec]) -> list[Problem]:
    """Every area of a fixed graph must be reachable from the spawn area (locks count as passable)."""
    nbrs: dict[str, set[str]] = {a: set() for a in areas}
    for c in spec.graph.connections:
        nbrs[c.a].add(c.b)
        nbrs[c.b].add(c.a)
    seen = {spec.spawn}
    todo = [spec.spawn]
    while todo:
        for b in nbrs[todo.pop()]:
            if b not in seen:
                seen.add(b)
                todo.append(b)
    missing = [a for a in areas if a not in seen]
    if missing:
        return [
            Problem("world.json", "graph.connections", f"areas not reachable from the spawn area: {', '.join(missing)}")
        ]
    return []
