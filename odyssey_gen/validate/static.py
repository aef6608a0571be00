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

* **syntax**: an allow-list of node *types* (anything else, ``with``, ``match`` class patterns with
  keyword attributes, ``try*``, type aliases, is refused by default);
* **nothing runs at import**, enforced where Python runs code while defining things: module-level
  values, class-body values, default arguments and decorator arguments are literals (constants,
  names, containers of them; a dataclass ``field(default_factory=<builtin container>)`` in a class
  body), decorators are the rule API's (``action_rule``, ``step_rule``, ``predicate``,
  ``dataclass``, ``staticmethod``, ``classmethod``, ``property``), and no name of those is redefined;
* **annotations** are plain names, attributes and subscripts of them (``int``, ``tuple[int, int]``,
  ``str | None``), never strings or calls: ``typing.get_type_hints`` evaluates them later;
* **attributes a file defines** are those of its own classes (methods, class-level names, ``self.x``
  assignments), never its parameters, variables or keywords, and never a name that leads out of the
  game on the objects Python itself provides (functions, frames, modules, ``os``...).

**This is a filter for the repair loop, not a security boundary.** It tells the model early and
precisely what rule code may look like and makes escapes harder; it cannot prove Python harmless.
What passes is still run only in the OS sandbox (:mod:`odyssey_gen.validate.sandbox`), and a generated
``rules.py`` is never trusted automatically (docs/security.md). A rejection names the line and the
construct, and goes back to the model verbatim in the repair loop.
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
import types
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


def _dangerous_attributes() -> frozenset[str]:
    """Public attribute names of what Python itself hands out (functions, code, frames, generators,
    modules, types) and of the modules that reach the system: a name the file defines for its own
    classes never makes one of these legal on other objects."""
    import io
    import os
    import pathlib
    import shutil
    import socket
    import subprocess
    import sys

    owners: list[object] = [
        types.FunctionType,
        types.CodeType,
        types.FrameType,
        types.GeneratorType,
        types.CoroutineType,
        types.AsyncGeneratorType,
        types.TracebackType,
        types.ModuleType,
        types.MethodType,
        types.BuiltinFunctionType,
        type,
        object,
        builtins,
        os,
        os.path,
        sys,
        subprocess,
        io,
        shutil,
        socket,
        pathlib.Path,
        inspect,
    ]
    return frozenset(n for owner in owners for n in dir(owner) if not n.startswith("_"))


DANGEROUS_ATTRIBUTES = _dangerous_attributes()

DUNDER_TEXT = re.compile(r"__\w+__")
#: Decorators a rules.py may use: the rule API's and the dataclass machinery's.
ALLOWED_DECORATORS = frozenset(
    {"action_rule", "step_rule", "predicate", "dataclass", "staticmethod", "classmethod", "property"}
)
#: Names a rules.py may not define or rebind (a decorator redefined would run the file's code at import).
RESERVED_NAMES = ALLOWED_DECORATORS | {"field", "TYPE_CHECKING"}
#: What ``field(default_factory=...)`` may name.
ALLOWED_FACTORIES = frozenset({"list", "dict", "set", "tuple", "frozenset", "Counter", "deque", "defaultdict"})
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
#: The node types rule code may use; every other is refused (an allow-list: new syntax is refused until
#: someone decides it is safe).
ALLOWED_NODES: frozenset[type] = frozenset(
    {
        ast.Module, ast.Expr, ast.Import, ast.ImportFrom, ast.alias,
        ast.ClassDef, ast.FunctionDef, ast.Lambda, ast.arguments, ast.arg, ast.Return, ast.Yield, ast.YieldFrom,
        ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.Pass, ast.Break, ast.Continue,
        ast.If, ast.For, ast.While, ast.Raise, ast.Try, ast.ExceptHandler, ast.Assert,
        ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.IfExp, ast.NamedExpr, ast.Call, ast.keyword,
        ast.Attribute, ast.Subscript, ast.Slice, ast.Starred, ast.Name, ast.Constant,
        ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
        ast.comprehension, ast.JoinedStr, ast.FormattedValue,
        ast.Load, ast.Store, ast.Del,
        ast.And, ast.Or, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
        ast.LShift, ast.RShift, ast.BitOr, ast.BitXor, ast.BitAnd, ast.MatMult,
        ast.Invert, ast.Not, ast.UAdd, ast.USub,
        ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn,
        ast.Match, ast.match_case, ast.MatchValue, ast.MatchSingleton, ast.MatchSequence, ast.MatchMapping,
        ast.MatchClass, ast.MatchStar, ast.MatchAs, ast.MatchOr,
    }
)  # fmt: skip


def _literal(node: ast.AST | None) -> bool:
    """A value whose evaluation runs no code of the file's and cannot blow up: constants, names, containers of
    them, and small arithmetic of numbers."""
    if node is None or isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(_literal(k) and _literal(v) for k, v in zip(node.keys, node.values, strict=True))
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub | ast.UAdd | ast.Not) and _literal(node.operand)
    return _number(node)


def _number(node: ast.AST) -> bool:
    """Arithmetic of number constants that cannot blow up (no ``**``, no shifts, no names, no strings)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub | ast.UAdd) and _number(node.operand)
    if isinstance(node, ast.BinOp):
        safe = ast.Add | ast.Sub | ast.Mult | ast.Div | ast.FloorDiv | ast.Mod
        return isinstance(node.op, safe) and _number(node.left) and _number(node.right)
    return False


def _field_call(node: ast.AST | None) -> bool:
    """``field(...)`` of a dataclass, with literal arguments and a builtin container as factory."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "field"):
        return False
    if node.args:
        return False
    for kw in node.keywords:
        if kw.arg == "default_factory":
            if not (isinstance(kw.value, ast.Name) and kw.value.id in ALLOWED_FACTORIES):
                return False
        elif kw.arg is None or not _literal(kw.value):
            return False
    return True


def _plain_annotation(node: ast.AST) -> bool:
    """``int``, ``odyssey_env.x.Y``, ``tuple[int, ...]``, ``str | None``: nothing to evaluate but lookups."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Constant):
        return node.value is None or node.value is Ellipsis
    if isinstance(node, ast.Attribute):
        return _plain_annotation(node.value) and not isinstance(node.value, ast.Constant)
    if isinstance(node, ast.Subscript):
        return _plain_annotation(node.value) and _plain_annotation(node.slice)
    if isinstance(node, ast.Tuple | ast.List):
        return all(_plain_annotation(e) for e in node.elts)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ast.BitOr) and _plain_annotation(node.left) and _plain_annotation(node.right)
    return False


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
        self._definition(node)
        self._class_body(node)
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

    def _definition(self, node: ast.ClassDef | ast.FunctionDef) -> None:
        """What runs while a definition is executed: decorators, default arguments, annotations."""
        if node.name in RESERVED_NAMES:
            self.bad(node, f"a definition named {node.name}", "the rule API's names may not be redefined")
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            if not (isinstance(target, ast.Name) and target.id in ALLOWED_DECORATORS):
                self.bad(
                    deco,
                    f"the decorator @{ast.unparse(deco)[:60]}",
                    f"decorators run at import; only the rule API's: {', '.join(sorted(ALLOWED_DECORATORS))}",
                )
            elif isinstance(deco, ast.Call) and not (
                all(_literal(a) for a in deco.args) and all(k.arg and _literal(k.value) for k in deco.keywords)
            ):
                self.bad(deco, f"the decorator @{ast.unparse(deco)[:60]}", "decorator arguments are literals")
        if isinstance(node, ast.FunctionDef):
            args = node.args
            for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
                if not _literal(default):
                    self.bad(
                        default,
                        f"the default argument {ast.unparse(default)[:60]}",
                        "defaults are evaluated at import: use constants (or None, and compute it in the body)",
                    )
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            for a in every:
                if a is not None:
                    self._bound_name(a, a.arg)
                    if a.annotation is not None:
                        self._annotation(a.annotation)
            if node.returns is not None:
                self._annotation(node.returns)

    def _annotation(self, node: ast.AST) -> None:
        if not _plain_annotation(node):
            self.bad(
                node,
                f"the annotation {ast.unparse(node)[:60]}",
                "annotations are evaluated later (typing.get_type_hints): plain names and subscripts only, "
                "never strings or calls",
            )

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._annotation(node.annotation)
        self.generic_visit(node)

    def _class_body(self, node: ast.ClassDef) -> None:
        """A class body runs at import: only a docstring, definitions and literal values."""
        for i, item in enumerate(node.body):
            if isinstance(item, ast.FunctionDef | ast.ClassDef | ast.Pass):
                continue
            if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) and i == 0:
                continue
            if isinstance(item, ast.Assign | ast.AnnAssign):
                value = item.value
                if _literal(value) or _field_call(value):
                    continue
                self.bad(
                    item,
                    f"the value {ast.unparse(value)[:60]} in class {node.name}" if value else f"class {node.name}",
                    "a class body runs at import: class-level values are literals (or field(default_factory=list))",
                )
                continue
            self.bad(
                item,
                f"{type(item).__name__.lower()} in class {node.name}",
                "a class body holds only a docstring, definitions and literal values",
            )

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._definition(node)
        if node.name.startswith("__") and node.name not in ALLOWED_DUNDER_METHODS:
            self.bad(
                node,
                f"def {node.name}",
                "dunder methods change how objects behave; rules need none "
                "(a Params dataclass may check itself in __post_init__)",
            )
        self.generic_visit(node)

    # ---------------------------------------------------------------- match statements
    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        if node.kwd_attrs:
            self.bad(
                node,
                f"the class pattern {ast.unparse(node.cls)}({node.kwd_attrs[0]}=...)",
                "keyword attributes in a class pattern read attributes unchecked; match on values instead",
            )
        self.generic_visit(node)

    def _bound_name(self, node: ast.AST, name: str | None) -> None:
        if name and (name.startswith("__") or name in FORBIDDEN_BUILTINS):
            self.bad(node, f"the name {name!r}", "a dunder name or a builtin outside the allow-list")

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self._bound_name(node, node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        self._bound_name(node, node.name)
        self.generic_visit(node)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self._bound_name(node, node.rest)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._bound_name(node, node.name)
        self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> None:
        self._bound_name(node, node.asname)
        if node.asname and node.asname in ALLOWED_DECORATORS and node.asname != node.name.rpartition(".")[2]:
            self.bad(node, f"import ... as {node.asname}", "the rule API's names may not be rebound")
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        reason = _FORBIDDEN_NODES.get(type(node))
        if reason is not None:
            self.bad(node, type(node).__name__.lower(), reason)
        elif type(node) not in ALLOWED_NODES:
            self.bad(node, type(node).__name__.lower(), "not on the allow-list of syntax rule code may use")
        super().generic_visit(node)


def _defined_names(tree: ast.Module) -> frozenset[str]:
    """Attribute names the file defines for its own classes: methods, class-level names (a ``Params``
    class's fields) and ``self.x = ...`` assignments. Parameters, variables and keywords define no
    attribute, and no name that leads out of the game on Python's own objects is ever one."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.ClassDef):
                    out.add(item.name)
                elif isinstance(item, ast.Assign):
                    out.update(t.id for t in item.targets if isinstance(t, ast.Name))
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    out.add(item.target.id)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            out.add(node.attr)
    return frozenset(
        n for n in out if not n.startswith("_") and n not in FORBIDDEN_ATTRIBUTES and n not in DANGEROUS_ATTRIBUTES
    )


def _module_level(tree: ast.Module) -> list[Rejection]:
    out = []
    for i, node in enumerate(tree.body):
        if isinstance(node, _MODULE_LEVEL):
            if isinstance(node, ast.Assign | ast.AnnAssign) and not _literal(node.value):
                out.append(
                    Rejection(
                        node.lineno,
                        "a call at module level"
                        if node.value is not None and any(isinstance(n, ast.Call) for n in ast.walk(node.value))
                        else "a computed value at module level",
                        "nothing may run when the file is imported: module-level values are literals; "
                        "compute it inside a rule",
                    )
                )
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and n.id in ALLOWED_DECORATORS | {"field", "TYPE_CHECKING"}:
                        out.append(
                            Rejection(node.lineno, f"assigning {n.id}", "the rule API's names may not be rebound")
                        )
                    elif not isinstance(n, ast.Name | ast.Tuple | ast.List | ast.Store | ast.Starred):
                        out.append(
                            Rejection(
                                node.lineno,
                                "a module-level assignment to " + ast.unparse(t)[:40],
                                "module level assigns names only",
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
