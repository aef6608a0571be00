"""The static check of generated rule code: an allow-list over the syntax tree, before anything runs.

Model-written ``rules.py`` is untrusted. It is parsed with :mod:`ast` (never imported here) and
accepted only if every construct is on an allow-list made for rule code:

* **imports**: ``from odyssey_env.<module> import <name>`` for the rule API (rule classes and
  decorators, the world helpers, a few engine types for annotations), plus ``math``, ``dataclasses``,
  ``typing``, ``collections`` and ``__future__``. Nothing else: no ``os``, ``sys``, ``subprocess``,
  ``socket``, ``importlib``, ``builtins``, not even ``random`` (rules draw from the episode's RNG,
  ``turn.rng`` / ``engine.rng``, or a seed would not reproduce its game);
* **names**: the builtins a rule needs (``len``, ``min``, ``sorted``...); every other builtin is
  refused wherever it appears (``eval``, ``exec``, ``compile``, ``open``, ``__import__``,
  ``getattr``, ``setattr``, ``globals``, ``vars``, ``type``, ``id``, ``hash``...), even as a local
  variable's name, and so is every ``__dunder__`` name;
* **attributes**: only names of the rule API (the public fields and methods of the engine's state,
  content and rule classes, of ``random.Random``, of the built-in containers and strings, of the
  allowed modules) or names the file defines itself. Private and dunder attributes are refused, and
  so are the attributes that lead out of the game (``Game.path``, ``str.format``, a generator's
  ``gi_frame``...);
* **strings** that spell a dunder name (``"__class__"``) are refused, so format strings and
  subscripts cannot smuggle one in;
* **statements**: no ``global``, ``nonlocal``, ``async``/``await``, class keywords (metaclasses),
  relative or star imports; at module level only imports, definitions, constant assignments, a
  docstring and ``if TYPE_CHECKING:`` blocks (nothing runs at import).

What passes is still run only in the sandbox (:mod:`odyssey_gen.validate.sandbox`). A rejection
names the line and the construct, and goes back to the model verbatim in the repair loop.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import inspect
import math
import random
import re
import textwrap
from collections import Counter, defaultdict, deque
from dataclasses import dataclass

__all__ = ["ALLOWED_BUILTINS", "ALLOWED_IMPORTS", "Rejection", "check_source"]

MAX_BYTES = 200_000

#: module -> names a rules.py may import from it ("*" for the stdlib modules imported whole).
ALLOWED_IMPORTS: dict[str, frozenset[str]] = {
    "odyssey_env.rules": frozenset({"ActionRule", "StepRule", "Fact", "action_rule", "step_rule", "predicate"}),
    "odyssey_env.world": frozenset(
        {
            "type_of",
            "add",
            "remove",
            "describe_holding",
            "hand_slots_used",
            "hands_free",
            "held_for",
            "fits_in_hands",
            "give",
            "container_load",
            "container_room",
            "held_containers",
            "carried_count",
            "take_carried",
            "make_objects",
            "materialize",
            "drop_all",
            "attack_of",
            "defense_of",
            "npc_here",
            "known_object",
        }
    ),
    "odyssey_env.worldgen": frozenset({"spawn_npc", "spawnable_enemies", "link"}),
    "odyssey_env.engine": frozenset({"Engine"}),
    "odyssey_env.turn": frozenset({"Turn", "Event"}),
    "odyssey_env.state": frozenset({"Agent", "Area", "Npc", "Instance", "Exit", "WorldState"}),
    "odyssey_env.game": frozenset({"Game"}),
    "odyssey_env.content": frozenset({"ObjectType", "NpcType"}),
    "odyssey_env.quests.conditions": frozenset({"owned", "lying_in", "normalize_text"}),
    "odyssey_env.verbs.common": frozenset({"acquire", "receive", "carried_handles", "ground"}),
    "odyssey_env.verbs.movement": frozenset({"in_combat", "unlock"}),
    "odyssey_env.steprules.living": frozenset({"is_world_area", "occupied", "tell", "roams", "move_npc", "pick"}),
    "__future__": frozenset({"annotations"}),
    "dataclasses": frozenset({"dataclass", "field"}),
    "typing": frozenset({"TYPE_CHECKING", "Any", "ClassVar", "Iterable", "Iterator"}),
    "collections": frozenset({"Counter", "deque", "defaultdict"}),
    "collections.abc": frozenset({"Iterable", "Iterator", "Mapping"}),
    "math": frozenset({n for n in dir(math) if not n.startswith("_")}),
}
#: Modules that may be imported whole (``import math``).
WHOLE_MODULES = frozenset({"math"})

ALLOWED_BUILTINS = frozenset(
    {
        "abs",
        "all",
        "any",
        "bool",
        "dict",
        "enumerate",
        "filter",
        "float",
        "frozenset",
        "int",
        "isinstance",
        "issubclass",
        "iter",
        "len",
        "list",
        "map",
        "max",
        "min",
        "next",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "sorted",
        "str",
        "sum",
        "tuple",
        "zip",
        "divmod",
        "staticmethod",
        "property",
        "classmethod",
        "object",
        "True",
        "False",
        "None",
        "NotImplemented",
        "Ellipsis",
        "Exception",
        "ValueError",
        "KeyError",
        "IndexError",
        "TypeError",
        "RuntimeError",
        "NotImplementedError",
        "ArithmeticError",
        "ZeroDivisionError",
        "LookupError",
        "StopIteration",
        "AssertionError",
    }
)
FORBIDDEN_BUILTINS = frozenset(n for n in dir(builtins) if n not in ALLOWED_BUILTINS)

#: Attributes that lead out of the game even though their owner belongs to the API.
FORBIDDEN_ATTRIBUTES = frozenset(
    {
        "path",
        "format",
        "format_map",
        "mro",
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "cr_frame",
        "cr_code",
        "ag_frame",
        "ag_code",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_back",
        "f_code",
        "tb_frame",
        "tb_next",
        "co_code",
        "co_consts",
        "func_globals",
        "func_code",
        "load_state",
        "save_state",
        "maketrans",
    }
)

DUNDER_TEXT = re.compile(r"__\w+__")
#: Dunder methods a rules.py may define: the dataclass hook that checks a Params class's values.
ALLOWED_DUNDER_METHODS = frozenset({"__post_init__"})


def _instance_attributes(cls: type) -> set[str]:
    """Attributes a pure-Python class sets on its instances (``self.x = ...`` in its methods)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):  # builtins and C types: dir() already has everything
        return set()
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    }


def _api_attributes() -> frozenset[str]:
    """Public attribute names of the rule API's types (found by introspection, so they track the engine)."""
    from odyssey_env import content, engine, game, rules, state, turn
    from odyssey_env.quests import spec as quest_spec

    classes: list[type] = [
        state.WorldState,
        state.Agent,
        state.Area,
        state.Npc,
        state.Instance,
        state.Exit,
        content.ObjectType,
        content.NpcType,
        content.AreaSpec,
        content.PlaceSpec,
        content.Recipe,
        content.Connection,
        content.GameInfo,
        content.WorldSpec,
        content.AgentSpec,
        content.GraphSpec,
        content.PlacementSpec,
        engine.Engine,
        turn.Turn,
        turn.Event,
        turn.Outcome,
        game.Game,
        rules.ActionRule,
        rules.StepRule,
        rules.Fact,
        rules.RuleBook,
        quest_spec.Condition,
        quest_spec.Stage,
        quest_spec.QuestSpec,
        quest_spec.MainQuest,
        random.Random,
        dict,
        list,
        str,
        set,
        frozenset,
        tuple,
        int,
        float,
        bool,
        Counter,
        deque,
        defaultdict,
    ]
    names: set[str] = set()
    for cls in classes:
        names.update(n for n in dir(cls) if not n.startswith("_"))
        if dataclasses.is_dataclass(cls):
            names.update(f.name for f in dataclasses.fields(cls))
        names.update(getattr(cls, "__slots__", ()))
        for base in cls.__mro__[:-1]:  # the rule classes' own bases set ``self.settings``
            names.update(_instance_attributes(base))
    names.update(n for n in dir(math) if not n.startswith("_"))
    return frozenset(names - FORBIDDEN_ATTRIBUTES)


API_ATTRIBUTES = _api_attributes()


@dataclass(frozen=True)
class Rejection:
    """One construct the allow-list refuses."""

    line: int
    construct: str
    reason: str

    def __str__(self) -> str:
        return f"rules.py line {self.line}: {self.construct} is not allowed: {self.reason}"


_MODULE_LEVEL = (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef, ast.Assign, ast.AnnAssign)
_FORBIDDEN_NODES: dict[type, str] = {
    ast.Global: "global statements change module state behind the engine's back",
    ast.Nonlocal: "nonlocal statements are not needed by rules",
    ast.AsyncFunctionDef: "rules are synchronous",
    ast.AsyncFor: "rules are synchronous",
    ast.AsyncWith: "rules are synchronous",
    ast.Await: "rules are synchronous",
}


class _Checker(ast.NodeVisitor):
    def __init__(self, defined: frozenset[str]):
        self.out: list[Rejection] = []
        self.defined = defined

    def bad(self, node: ast.AST, construct: str, reason: str) -> None:
        self.out.append(Rejection(getattr(node, "lineno", 0), construct, reason))

    # ---------------------------------------------------------------- imports
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name not in WHOLE_MODULES:
                allowed = ", ".join(sorted(WHOLE_MODULES))
                self.bad(
                    node,
                    f"import {alias.name}",
                    f"only {allowed} may be imported whole; take rule API names "
                    "with 'from odyssey_env.<module> import <name>'",
                )

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.bad(node, f"from {'.' * node.level}{module} import ...", "relative imports reach outside rules.py")
            return
        names = ALLOWED_IMPORTS.get(module)
        if names is None:
            if module in ("random", "time", "datetime"):
                why = "rules must draw from the episode's RNG (turn.rng, engine.rng) so a seed reproduces its game"
            else:
                why = "not part of the rule API (allowed: " + ", ".join(sorted(ALLOWED_IMPORTS)) + ")"
            self.bad(node, f"from {module} import ...", why)
            return
        for alias in node.names:
            if alias.name == "*":
                self.bad(node, f"from {module} import *", "name each import")
            elif alias.name not in names:
                self.bad(
                    node,
                    f"from {module} import {alias.name}",
                    f"{module} offers rules only: {', '.join(sorted(names))}",
                )

    # ---------------------------------------------------------------- names and attributes
    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_BUILTINS or node.id.startswith("__"):
            self.bad(
                node,
                f"the name {node.id!r}",
                "it is a builtin outside the allow-list or a dunder name (rename a variable that shadows one)",
            )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if attr.startswith("_"):
            self.bad(node, f"the attribute .{attr}", "private and dunder attributes are off limits")
        elif attr in FORBIDDEN_ATTRIBUTES:
            self.bad(node, f"the attribute .{attr}", "it leads out of the game world")
        elif attr not in API_ATTRIBUTES and attr not in self.defined:
            self.bad(node, f"the attribute .{attr}", "it is not part of the rule API nor defined in this file")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and DUNDER_TEXT.search(node.value):
            self.bad(node, f"the string {node.value[:40]!r}", "strings may not spell dunder names")

    # ---------------------------------------------------------------- definitions
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if node.keywords:
            self.bad(node, f"class {node.name}(... {node.keywords[0].arg}=...)", "class keywords (metaclasses)")
        for base in node.bases:
            if not (isinstance(base, ast.Name) and base.id in ("ActionRule", "StepRule")):
                self.bad(
                    node,
                    f"class {node.name}({ast.unparse(base)})",
                    "rule classes derive from ActionRule or StepRule (Params classes from nothing)",
                )
        if node.name.startswith("__"):
            self.bad(node, f"class {node.name}", "dunder names")
        for item in node.body:  # refused here too, so the model hears it with the line, before any sandbox run
            targets = (
                item.targets
                if isinstance(item, ast.Assign)
                else [item.target]
                if isinstance(item, ast.AnnAssign)
                else []
            )
            if any(isinstance(t, ast.Name) and t.id == "priority" for t in targets):
                self.bad(
                    item,
                    f"priority in class {node.name}",
                    "step rules have no priority: place one with after = (...) / before = (...) naming "
                    "other step rules",
                )
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name.startswith("__") and node.name not in ALLOWED_DUNDER_METHODS:
            self.bad(
                node,
                f"def {node.name}",
                "dunder methods change how objects behave; rules need none "
                "(a Params dataclass may check itself in __post_init__)",
            )
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        reason = _FORBIDDEN_NODES.get(type(node))
        if reason is not None:
            self.bad(node, type(node).__name__.lower(), reason)
        super().generic_visit(node)


def _defined_names(tree: ast.Module) -> frozenset[str]:
    """Names the file defines (classes, functions, assigned names, parameters): attributes it may use."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.keyword) and node.arg:
            out.add(node.arg)
    return frozenset(n for n in out if not n.startswith("_") and n not in FORBIDDEN_ATTRIBUTES)


def _module_level(tree: ast.Module) -> list[Rejection]:
    out = []
    for i, node in enumerate(tree.body):
        if isinstance(node, _MODULE_LEVEL):
            if (
                isinstance(node, ast.Assign | ast.AnnAssign)
                and node.value is not None
                and any(isinstance(n, ast.Call | ast.Lambda) for n in ast.walk(node.value))
            ):
                out.append(
                    Rejection(
                        node.lineno,
                        "a call at module level",
                        "nothing may run when the file is imported; compute it inside a rule",
                    )
                )
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and i == 0:
            continue  # the module docstring
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
            and all(isinstance(n, ast.Import | ast.ImportFrom) for n in node.body)
            and not node.orelse
        ):
            continue
        out.append(
            Rejection(
                node.lineno,
                type(node).__name__.lower() + " at module level",
                "only imports, definitions, constants, a docstring and 'if TYPE_CHECKING:' imports",
            )
        )
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            for deco in node.decorator_list:
                if any(isinstance(n, ast.Lambda) for n in ast.walk(deco)):
                    out.append(Rejection(node.lineno, "a lambda in a decorator", "decorators name rule API functions"))
    return out


def check_source(source: str) -> list[Rejection]:
    """Every construct of ``source`` outside the allow-list (empty: it may go on to the sandbox)."""
    if len(source.encode("utf-8", "replace")) > MAX_BYTES:
        return [Rejection(0, "the file", f"larger than {MAX_BYTES} bytes")]
    try:
        tree = ast.parse(source, filename="rules.py")
    except SyntaxError as exc:
        return [Rejection(exc.lineno or 0, "the file", f"it does not parse: {exc.msg}")]
    if set(source) - set(map(chr, range(32, 127))) - {"\n", "\t"}:
        return [Rejection(0, "the file", "use printable ASCII only")]
    checker = _Checker(_defined_names(tree))
    checker.visit(tree)
    out = _module_level(tree) + checker.out
    return sorted(set(out), key=lambda r: (r.line, r.construct))
