"""Reading data out of the reference release's Python files without running them.

The reference keeps its quests, tutorial and boss tables as Python literals inside classes
(``QUEST_CONFIG = {...}`` in ``main_quest.py``). Importing those modules would run the release's code,
so they are only parsed (:func:`ast.parse`) and their data assignments evaluated by :func:`literal`, a
small evaluator that knows literals, names bound earlier to literals in the same class or module, and
arithmetic on them (``10**9``, ``[...] + [...]``) - nothing that calls, imports or looks anything up.
An expression outside that set is a :class:`NotLiteral`, never executed.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping
from typing import Any

__all__ = ["NotLiteral", "class_data", "find_class", "literal", "parse"]

#: Results larger than this (a ``10**10**10`` in a hostile file) are refused instead of computed.
_MAX_INT = 10**18
_MAX_LEN = 1_000_000
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow}


class NotLiteral(ValueError):
    """An expression that is not data (a call, an attribute, an unknown name)."""


def parse(text: str, filename: str) -> ast.Module:
    """The syntax tree of a release file (parsing runs nothing)."""
    try:
        return ast.parse(text, filename=filename)
    except SyntaxError as exc:
        raise NotLiteral(f"{filename}: cannot parse line {exc.lineno}: {exc.msg}") from None


def literal(node: ast.AST, names: Mapping[str, Any] | None = None) -> Any:
    """Evaluate ``node`` if it is data: literals, known ``names``, ``+ - * **`` on numbers, ``+`` on lists/strings."""
    names = names or {}
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (str, int, float, bool, type(None))):
            return node.value
        raise NotLiteral(f"line {node.lineno}: constant of type {type(node.value).__name__}")
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise NotLiteral(f"line {node.lineno}: '**' in a dict")
        return {
            literal(k, names): literal(v, names) for k, v in zip(node.keys, node.values, strict=True) if k is not None
        }
    if isinstance(node, ast.List):
        return [literal(e, names) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(literal(e, names) for e in node.elts)
    if isinstance(node, ast.Set):
        return {literal(e, names) for e in node.elts}
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        if node.id in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.id]
        raise NotLiteral(f"line {node.lineno}: name {node.id!r} is not bound to a literal")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = literal(node.operand, names)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise NotLiteral(f"line {node.lineno}: unary sign on {type(value).__name__}")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = literal(node.left, names), literal(node.right, names)
        return _binop(node, left, right)
    raise NotLiteral(f"line {getattr(node, 'lineno', '?')}: {type(node).__name__} is not data")


def _binop(node: ast.BinOp, left: Any, right: Any) -> Any:
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right))
    if isinstance(node.op, ast.Pow):
        if not (
            numbers and isinstance(left, int) and isinstance(right, int) and 0 <= right <= 64 and abs(left) <= 1000
        ):
            raise NotLiteral(f"line {node.lineno}: power outside small integers")
    elif isinstance(node.op, ast.Mult) and not numbers:
        raise NotLiteral(f"line {node.lineno}: '*' on non-numbers")
    elif isinstance(node.op, ast.Add) and not numbers and type(left) is not type(right):
        raise NotLiteral(f"line {node.lineno}: '+' on {type(left).__name__} and {type(right).__name__}")
    elif isinstance(node.op, ast.Sub) and not numbers:
        raise NotLiteral(f"line {node.lineno}: '-' on non-numbers")
    if not numbers and not isinstance(left, (str, list, tuple)):
        raise NotLiteral(f"line {node.lineno}: operator on {type(left).__name__}")
    value = _BINOPS[type(node.op)](left, right)
    if isinstance(value, int) and abs(value) > _MAX_INT:
        raise NotLiteral(f"line {node.lineno}: integer too large")
    if isinstance(value, (str, list, tuple)) and len(value) > _MAX_LEN:
        raise NotLiteral(f"line {node.lineno}: value too long")
    return value


def find_class(tree: ast.Module, name: str | None = None, *, suffix: str = "") -> ast.ClassDef | None:
    """The top-level class named ``name`` (or the first whose name ends in ``suffix``)."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and (node.name == name or (name is None and node.name.endswith(suffix))):
            return node
    return None


def class_data(cls: ast.ClassDef, outer: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The class-level assignments of ``cls`` that are data, in order (later ones may name earlier ones).

    Assignments that are not data (a method call, a comprehension) are left out: they are code.
    """
    names: dict[str, Any] = dict(outer or {})
    data: dict[str, Any] = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            continue
        if not isinstance(target, ast.Name):
            continue
        try:
            names[target.id] = data[target.id] = literal(value, names)
        except NotLiteral:
            continue
    return data
