"""Loading a game folder: ``world.json`` + ``quest.json`` + optional ``rules.py`` -> :class:`Game`.

A :class:`Game` is immutable content plus the assembled :class:`~odyssey_env.rules.RuleBook` and the
lookup tables every rule needs (objects by name, which recipes use an ingredient, ...). Loading checks
the files against their schema and then every cross reference, and reports each problem with its file
and field. Loaded games are cached per folder, so creating many environments costs one load.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import re
import string
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from odyssey_env import schema
from odyssey_env import trust as trust_store
from odyssey_env.content import NAMEABLE, AreaSpec, NpcType, ObjectType, WorldSpec
from odyssey_env.quests.spec import QuestSpec, check_quest, quest_summary
from odyssey_env.rules import BASE_RULE_MODULES, BASE_VERBS, RuleBook, RuleError, core_step_rules, placement
from odyssey_env.schema import FormatError, Problem

__all__ = ["GAMES_DIR", "Game", "GameError", "UntrustedGameError", "available_games", "load_game"]

GAMES_DIR = Path(__file__).parent / "games"
NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
INSTANCE_SUFFIX_RE = re.compile(r"_\d+$")
#: Everything the engine prints or accepts: printable ASCII and newlines (the env's spaces use it: ``env.CHARSET``).
TEXT_CHARS = frozenset(string.printable) - frozenset("\t\r\x0b\x0c")

# Bounds on game data (docs/game-format.md, "Limits"). Game folders come from people and from LLMs: an
# absurd number must be a GameError naming its field at load time, never a hang, a MemoryError or a
# ZeroDivisionError an hour into a run. The bounds are far above anything a playable game needs.
MAX_FILE_BYTES = 4 * 2**20
LIMITS = schema.Limits(max_number=1e9, max_items=2_000, max_text=20_000, max_depth=64)
MAX_STAT = 1_000_000  # hp, attack, defense, value, size, capacity, coins, experience, amounts of stackables
MAX_LEVEL = 1_000
MAX_INSTANCES = 100  # individually named objects (containers, writables) in one placement
MAX_WORLD_INSTANCES = 10_000  # ... and in the whole initial world
MAX_PLACED_NPCS = 5_000
MAX_AREAS = 1_000
MAX_SCATTER = 100  # objects or NPCs scattered into one area
MAX_RECIPE_AMOUNT = 1_000
MAX_NAME = 64  # the parser takes names of up to 100 characters; instance handles add "_<number>"


class GameError(FormatError):
    """A game folder that cannot be loaded; lists every problem with file and field."""


class UntrustedGameError(GameError):
    """A game folder whose ``rules.py`` would run without the user having trusted it (see ``odyssey_env.trust``)."""

    def __init__(self, folder: Path):
        self.folder = folder
        super().__init__(
            [
                Problem(
                    "rules.py",
                    "",
                    (
                        f"{folder / 'rules.py'} is code, and this folder is not trusted: read it, then pass trust=True "
                        "(load_game, register_game, gym.make), game.trust=true (odyssey run) or --trust "
                        "(odyssey play), "
                        f"or trust it once with: odyssey trust {folder}"
                    ),
                )
            ]
        )


@dataclass(frozen=True)
class Game:
    """A loaded game: content, quests, rules and derived lookup tables (never mutated)."""

    name: str
    path: Path
    spec: WorldSpec
    quest: QuestSpec
    rules: RuleBook
    objects: dict[str, ObjectType]
    npcs: dict[str, NpcType]
    areas: dict[str, AreaSpec]
    currency: str | None
    used_in: dict[str, tuple[str, ...]]  # ingredient -> objects whose recipe needs it
    recipes: tuple[ObjectType, ...]  # craftable object types, in file order
    #: Online-expansion content written ahead of play (:func:`odyssey_env.quests.expansion.with_packs`):
    #: the k-th expansion adds the k-th pack. Empty: the procedural expander.
    expansion_packs: tuple[Any, ...] = ()

    @property
    def title(self) -> str:
        return self.spec.game.title

    def summary(self) -> dict[str, Any]:
        """Sizes computed from the data (what ``odyssey games`` prints)."""
        levels = sorted({a.level for a in self.areas.values()})
        return {
            "name": self.name,
            "title": self.title,
            "places": len(self.spec.places),
            "areas": len(self.areas),
            "area_levels": f"{levels[0]}-{levels[-1]}" if levels else "",
            "object_types": len(self.objects),
            "npc_types": len(self.npcs),
            "enemy_types": sum(1 for n in self.npcs.values() if n.hostile),
            "merchant_types": sum(1 for n in self.npcs.values() if n.merchant),
            "verbs": len(self.rules.actions),
            "verb_list": list(self.rules.actions),
            "step_rules": [r.name for r in self.rules.steps],  # in run order
            # where the rules that are not the engine's place themselves (after=/before=)
            "step_rule_places": {r.name: placement(r) for r in self.rules.steps if r.after or r.before},
            # what the game adds to the engine's core: optional or own verbs, optional or own dynamics
            "extra_verbs": [v for v in self.rules.actions if v not in BASE_VERBS],
            "extra_step_rules": [r.name for r in self.rules.steps if r.optional or r.name not in core_step_rules()],
            **quest_summary(self.quest),
        }


# ---------------------------------------------------------------------------- discovery
def available_games() -> list[str]:
    """Names of the games shipped in the package (folders with a ``world.json``)."""
    return sorted(p.name for p in GAMES_DIR.iterdir() if (p / "world.json").is_file())


def _resolve(game: str | Path) -> Path:
    path = Path(game)
    if isinstance(game, str) and NAME_RE.match(game) and (GAMES_DIR / game / "world.json").is_file():
        return GAMES_DIR / game
    if (path / "world.json").is_file():
        return path.resolve()
    if path.name == "world.json" and path.is_file():
        return path.parent.resolve()
    shipped = ", ".join(available_games())
    raise GameError([Problem(str(game), "", f"not a shipped game ({shipped}) nor a folder with a world.json")])


_cache: dict[Path, Game] = {}
_cache_lock = threading.Lock()


def load_game(game: str | Path | Game, *, cache: bool = True, trust: bool = False) -> Game:
    """Load (or fetch from the cache) the game named ``game`` or stored in folder ``game``.

    A folder that is not a shipped game and has a ``rules.py`` loads only with ``trust=True`` or when
    the user has trusted it (``odyssey trust PATH``): its rules are code, and loading runs them. The
    check comes before the cache, so a folder trusted once in a process is not trusted silently after.
    """
    if isinstance(game, Game):
        return game
    path = _resolve(game)
    if not trust and trust_store.needs_trust(path):
        try:
            trusted = trust_store.is_trusted(path)
        except OSError as exc:
            raise GameError([Problem("rules.py", "", str(exc))]) from None
        if not trusted:
            raise UntrustedGameError(path)
    if cache:
        with _cache_lock:
            hit = _cache.get(path)
        if hit is not None:
            return hit
    loaded = _load(path)
    if cache:
        with _cache_lock:
            _cache[path] = loaded
    return loaded


def _read_json(path: Path, problems: list[Problem]) -> Any:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            problems.append(
                Problem(
                    path.name,
                    "",
                    f"is {size:,} bytes; a game file may have at most "
                    f"{MAX_FILE_BYTES:,} (the shipped ones have under 40,000)",
                )
            )
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        problems.append(Problem(path.name, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}"))
    except RecursionError:
        problems.append(Problem(path.name, "", f"invalid JSON: nested deeper than {LIMITS.max_depth} levels"))
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(path.name, "", f"cannot read: {exc}"))
    return None


def _load(path: Path) -> Game:
    problems: list[Problem] = []
    raw_world = _read_json(path / "world.json", problems)
    quest_file = path / "quest.json"
    raw_quest = _read_json(quest_file, problems) if quest_file.exists() else {}
    if problems:
        raise GameError(problems)
    spec = quest = None
    try:
        spec = schema.load(WorldSpec, raw_world, file="world.json", limits=LIMITS)
    except FormatError as exc:
        problems += exc.problems
    try:
        quest = schema.load(QuestSpec, raw_quest, file="quest.json", limits=LIMITS)
    except FormatError as exc:
        problems += exc.problems
    if problems:
        raise GameError(problems)
    assert spec is not None and quest is not None

    problems += _check_world(spec)
    if problems:
        raise GameError(problems)

    modules: list[ModuleType | str] = list(BASE_RULE_MODULES)
    if (path / "rules.py").exists():
        modules.append(_import_rules(path))
    try:
        rules = RuleBook(
            modules,
            verbs=spec.game.verbs,
            step_rules=spec.game.step_rules,
            disable=spec.game.disable,
            params=spec.game.params,
        )
    except RuleError as exc:
        raise GameError([Problem("world.json", "game", str(exc))]) from None

    objects = {o.name: o for o in spec.objects}
    used_in: dict[str, list[str]] = {}
    for o in spec.objects:
        if o.recipe:
            for ing in o.recipe.ingredients:
                used_in.setdefault(ing, []).append(o.name)
    currency = next((o.name for o in spec.objects if o.category == "currency"), None)
    game = Game(
        name=spec.game.name,
        path=path,
        spec=spec,
        quest=quest,
        rules=rules,
        objects=objects,
        npcs={n.name: n for n in spec.npcs},
        areas={a.name: a for p in spec.places for a in p.areas},
        currency=currency,
        used_in={k: tuple(v) for k, v in used_in.items()},
        recipes=tuple(o for o in spec.objects if o.recipe is not None),
    )
    rules.steps = [rule for rule in rules.steps if rule.active(game)]
    problems += check_quest(game)
    if problems:
        raise GameError(problems)
    return game


def _import_rules(path: Path) -> ModuleType:
    """Import a game's ``rules.py``; shipped games import as package modules so they pickle by name."""
    if path.parent == GAMES_DIR:
        return importlib.import_module(f"odyssey_env.games.{path.name}.rules")
    name = f"odyssey_game_rules_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}_{path.name}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path / "rules.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise GameError([Problem("rules.py", "", f"cannot import: {type(exc).__name__}: {exc}")]) from exc
    return module


# ---------------------------------------------------------------------------- cross references
def _text_problems(value: str, file: str, path: str) -> Iterator[Problem]:
    bad = sorted(set(value) - TEXT_CHARS)
    if bad:
        yield Problem(file, path, f"text may only use printable ASCII and newlines, found {''.join(bad)!r}")


def _check_world(spec: WorldSpec) -> list[Problem]:
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
        out += _text_problems(place.name + place.description, F, f"places[{i}]")
        if not place.areas:
            bad(f"places[{i}].areas", "a place needs at least one area")
        for j, area in enumerate(place.areas):
            p = f"places[{i}].areas[{j}]"
            claim(area.name, f"{p}.name", "area")
            areas[area.name] = area
            out += _text_problems(area.description, F, f"{p}.description")
            if area.level < 1:
                bad(f"{p}.level", "levels start at 1")
    objects: dict[str, ObjectType] = {}
    for i, o in enumerate(spec.objects):
        p = f"objects[{i}]"
        claim(o.name, f"{p}.name", "object")
        objects[o.name] = o
        out += _text_problems(o.description, F, f"{p}.description")
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
                if amount < 1:
                    bad(f"{p}.recipe.ingredients.{ing}", "amounts must be at least 1")
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
        out += _text_problems(n.description + "".join(n.dialogue), F, p)
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
            k = obj_ref(c.key, f"{p}.key")
            if k is not None and "unlock" not in k.uses:
                bad(f"{p}.key", f"{c.key} cannot open paths: give it the 'unlock' use")
        if c.key is not None and not c.locked:
            bad(f"{p}.key", "a key is only meaningful on a locked path")
    if g.mode == "random" and g.locked_links > 0:
        if g.lock_key is None:
            bad("graph.lock_key", "random graphs with locked links need a lock_key")
        else:
            k = obj_ref(g.lock_key, "graph.lock_key")
            if k is not None and "unlock" not in k.uses:
                bad("graph.lock_key", f"{g.lock_key} cannot open paths: give it the 'unlock' use")
    if g.mode == "fixed" and not out:
        out += _check_connected(spec, areas)
    for field_name in ("objects_per_area", "npcs_per_area"):
        lo, hi = getattr(spec.placement, field_name)
        if not 0 <= lo <= hi <= MAX_SCATTER:
            bad(f"placement.{field_name}", f"expected [min, max] with 0 <= min <= max <= {MAX_SCATTER}")
    if not 0 <= spec.placement.level_decay <= 1:
        bad("placement.level_decay", "must lie between 0 and 1 (a weight multiplier per level of difference)")
    if not 0 <= spec.placement.max_level_above <= MAX_LEVEL:
        bad("placement.max_level_above", f"must lie between 0 and {MAX_LEVEL}")
    out += _text_problems(spec.game.title + spec.game.description + spec.game.intro, F, "game")
    clock = re.match(r"^(\d\d):(\d\d)$", spec.game.start_time)
    if not clock or int(clock[1]) > 23 or int(clock[2]) > 59:
        bad("game.start_time", "expected HH:MM, 00:00 to 23:59")
    if not 1 <= spec.game.minutes_per_step <= 1440:
        bad("game.minutes_per_step", "must lie between 1 and 1440 (a day)")
    out += _check_bounds(spec, areas)
    return out


def _check_bounds(spec: WorldSpec, areas: dict[str, AreaSpec]) -> list[Problem]:
    """Sizes and numbers a playable game never needs (see the limits above): each names its field."""
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


def _check_connected(spec: WorldSpec, areas: dict[str, AreaSpec]) -> list[Problem]:
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
