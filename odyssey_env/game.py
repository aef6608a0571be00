"""Loading a game folder: ``world.json`` + ``quest.json`` + optional ``rules.py`` / ``rules.json`` -> :class:`Game`.

A :class:`Game` is immutable content plus the assembled :class:`~odyssey_env.rules.RuleBook` and the
lookup tables every rule needs (objects by name, which recipes use an ingredient, ...). Loading checks
the files against their schema and then every cross reference (:mod:`odyssey_env.checks`), and reports
each problem with its file and field. Loaded games are cached per folder (and per version of its
code), so creating many environments costs one load.

A game folder that did not come with the package is someone else's: every file is read as a regular
file only, bounded, once (:mod:`odyssey_env.safeio`), and its ``rules.py`` is code that runs only from
the bytes a person trusted (:mod:`odyssey_env.trust`). Those bytes are read once, their digest is
checked, and exactly they are compiled and executed in a fresh module: never through the import
system (which would prefer a planted ``.pyc`` in ``__pycache__``), never from a cached ``.pyc``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from odyssey_env import schema
from odyssey_env import trust as trust_store
from odyssey_env.checks.quest import check_quest
from odyssey_env.checks.world import NAME_RE, check_world
from odyssey_env.content import AreaSpec, NpcType, ObjectType, WorldSpec
from odyssey_env.limits import LIMITS, MAX_FILE_BYTES
from odyssey_env.quests.shape import quest_summary
from odyssey_env.quests.spec import QuestSpec
from odyssey_env.rulelang.checks import check_rule_quests
from odyssey_env.rules import (
    BASE_RULE_MODULES,
    BASE_VERBS,
    RuleBook,
    RuleError,
    core_step_rules,
    placement,
    step_rule_names,
)
from odyssey_env.safeio import UnsafeFile, entry_kind, read_regular
from odyssey_env.schema import FormatError, Problem

__all__ = ["GAMES_DIR", "Game", "GameError", "UntrustedGameError", "available_games", "load_game"]

GAMES_DIR = Path(__file__).parent / "games"
#: The paper's games, by the reference's names: found in the user games directory once imported.
PAPER_GAMES = ("base", "remnant", "mark", "metropolis", "quarantine", "robot_kingdom", "saltglass")
#: Module names of the rules of game folders that are not shipped start with this.
RULES_MODULE_PREFIX = "odyssey_game_rules_"


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
            # the world's own content; what a main quest or tutorial brings in is counted apart (imported games)
            "object_types": sum(1 for o in self.objects.values() if not o.quest),
            "npc_types": sum(1 for n in self.npcs.values() if not n.quest),
            "quest_object_types": sum(1 for o in self.objects.values() if o.quest),
            "quest_npc_types": sum(1 for n in self.npcs.values() if n.quest),
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
    if isinstance(game, str) and NAME_RE.match(game):
        from odyssey_env.userdir import find

        found = find(game)
        if found is not None and not (path / "world.json").is_file():
            return found.resolve()
    if (path / "world.json").is_file():
        return path.resolve()
    if path.name == "world.json" and path.is_file():
        return path.parent.resolve()
    from odyssey_env.userdir import games_dir, user_games

    shipped = ", ".join(available_games())
    mine = ", ".join(user_games())
    if isinstance(game, str) and game in PAPER_GAMES:
        hint = f"; {game} is one of the paper's games: import them once with `odyssey paper import`"
    else:
        hint = f"; in {games_dir()}: {mine}" if mine else f"; no games in {games_dir()}"
    raise GameError([Problem(str(game), "", f"not a shipped game ({shipped}) nor a folder with a world.json{hint}")])


_cache: dict[tuple[Path, str | None], Game] = {}
_cache_lock = threading.Lock()


def load_game(game: str | Path | Game, *, cache: bool = True, trust: bool = False) -> Game:
    """Load (or fetch from the cache) the game named ``game`` or stored in folder ``game``.

    A folder that is not a shipped game and has a ``rules.py`` loads only with ``trust=True`` or when
    the user has trusted it (``odyssey trust PATH``): its rules are code, and loading runs them. Any
    other code in the folder, or a ``rules.py`` that is not a regular file, is refused whatever the
    trust. The check comes before the cache, so a folder trusted once in a process is not trusted
    silently after, and the cache is keyed by the code's digest, so edited code is never served stale.
    """
    if isinstance(game, Game):
        return game
    path = _resolve(game)
    shipped = trust_store.is_shipped(path)
    code = None
    if not shipped:
        from odyssey_env.userdir import stale_import

        stale = stale_import(path)
        if stale is not None:
            raise GameError([Problem("paper.json", "format", stale)])
        try:
            code = trust_store.read_code(path)
        except trust_store.CodeRefused as exc:
            raise GameError([Problem(exc.entry, "", str(exc))]) from None
        except OSError as exc:
            raise GameError([Problem("rules.py", "", f"cannot read: {exc}")]) from None
        if code is not None and not trust:
            try:
                trusted = trust_store.is_trusted(path, code)
            except OSError as exc:
                raise GameError([Problem("rules.py", "", str(exc))]) from None
            if not trusted:
                raise UntrustedGameError(path)
    key = (path, None if code is None else trust_store.digest(code))
    if cache:
        with _cache_lock:
            hit = _cache.get(key)
        if hit is not None:
            return hit
    loaded = _load(path, code, shipped)
    if cache:
        with _cache_lock:
            _cache[key] = loaded
    return loaded


def _read_json(path: Path, problems: list[Problem]) -> Any:
    """A game file: a regular file (never a link, a folder or a FIFO), bounded in size and nesting."""
    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except UnsafeFile as exc:
        if entry_kind(path) == "regular file":  # too large
            problems.append(
                Problem(
                    path.name,
                    "",
                    f"is {path.stat().st_size:,} bytes; a game file may have at most "
                    f"{MAX_FILE_BYTES:,} (the shipped ones have under 40,000)",
                )
            )
        else:
            problems.append(Problem(path.name, "", str(exc)))
        return None
    except OSError as exc:
        problems.append(Problem(path.name, "", f"cannot read: {exc}"))
        return None
    try:  # nesting is bounded by the schema reader (LIMITS.max_depth), which names the field; RecursionError below
        return json.loads(data)
    except json.JSONDecodeError as exc:
        problems.append(Problem(path.name, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}"))
    except RecursionError:
        problems.append(Problem(path.name, "", f"invalid JSON: nested deeper than {LIMITS.max_depth} levels"))
    except ValueError as exc:  # bytes that are not UTF-8, a number too long to convert
        problems.append(Problem(path.name, "", f"cannot read: {str(exc).splitlines()[0][:200]}"))
    return None


def _load(path: Path, code: bytes | None, shipped: bool) -> Game:
    problems: list[Problem] = []
    raw_world = _read_json(path / "world.json", problems)
    quest_file = path / "quest.json"
    raw_quest = _read_json(quest_file, problems) if entry_kind(quest_file) is not None else {}
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

    problems += check_world(spec)
    if problems:
        raise GameError(problems)

    modules: list[ModuleType | str] = list(BASE_RULE_MODULES)
    if shipped:
        if (path / "rules.py").is_file():  # package code, imported by name so its rules pickle
            modules.append(importlib.import_module(f"odyssey_env.games.{path.name}.rules"))
    elif code is not None:
        modules.append(_compile_rules(path, code))
    for name in spec.game.rules_from:
        modules.append(_shipped_rules(name))
    checked_rules = None
    if (path / "rules.json").exists():  # data, not code: it needs no trust
        module, checked_rules = _rule_file(path, spec, modules)
        modules.append(module)
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
    if checked_rules is not None:
        problems += check_rule_quests(game, checked_rules)
    problems += check_quest(game)
    if problems:
        raise GameError(problems)
    return game


def _shipped_rules(name: str) -> ModuleType:
    """The ``rules.py`` of the shipped game ``name`` (``game.rules_from``), imported by name so its rules pickle;
    only shipped games qualify, so naming one runs no code the user has not installed."""
    if name not in available_games() or not (GAMES_DIR / name / "rules.py").is_file():
        with_rules = [g for g in available_games() if (GAMES_DIR / g / "rules.py").is_file()]
        raise GameError(
            [
                Problem(
                    "world.json",
                    "game.rules_from",
                    f"{name!r} is not a shipped game with rules.py ({', '.join(with_rules)})",
                )
            ]
        )
    return importlib.import_module(f"odyssey_env.games.{name}.rules")


def _rule_file(path: Path, spec: WorldSpec, modules: list[ModuleType | str]) -> tuple[ModuleType, Any]:
    """Check and compile a folder's ``rules.json`` (odyssey_env.rulelang); its step rules may place
    themselves after or before any step rule of the engine or of the folder's ``rules.py``."""
    from odyssey_env.rulelang import load_rules

    problems: list[Problem] = []
    raw = _read_json(path / "rules.json", problems)
    if problems:
        raise GameError(problems)
    try:
        return load_rules(raw, spec, known_steps=step_rule_names(modules))
    except FormatError as exc:
        raise GameError(exc.problems) from None


def _compile_rules(path: Path, code: bytes) -> ModuleType:
    """Run a game folder's ``rules.py`` from ``code``, the bytes whose digest was checked, in a fresh module.

    ``compile`` + ``exec``: no import system, so no ``.pyc`` is read or written and nothing else in
    the folder is consulted. The module is registered under a name made of the folder and the code's
    digest before it runs (dataclasses look their module up while the file executes); the same bytes
    of the same folder give the same module, so a second load in a process reuses it.
    """
    name = (
        f"{RULES_MODULE_PREFIX}{hashlib.sha1(str(path).encode()).hexdigest()[:10]}_"
        f"{trust_store.digest(code)[:12]}_{path.name}"
    )
    if name in sys.modules:
        return sys.modules[name]
    filename = str(path / "rules.py")
    try:
        compiled = compile(code, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:  # ValueError: null bytes
        raise GameError([Problem("rules.py", "", f"cannot import: {type(exc).__name__}: {exc}")]) from None
    module = ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    try:
        exec(compiled, module.__dict__)
    except Exception as exc:
        del sys.modules[name]
        raise GameError([Problem("rules.py", "", f"cannot import: {type(exc).__name__}: {exc}")]) from exc
    return module
