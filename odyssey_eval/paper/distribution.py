"""How a reference game scatters objects, read from the shape of its ``world.py`` (never run).

Each reference game carries its own copy of ``World._distribute_objects``, and the copies drifted:
Base, Metropolis, Quarantine, Robot Kingdom and Saltglass first give every area each material that
names it (``for oid in non_comp_craft_materials: area.objects[oid] = ... + max(1, level)``, and one unit
of each craftable one), Mark and Remnant do not; Mark draws ``2.5`` to ``5`` objects per candidate where
the others draw ``2`` to ``4`` (``rng.randint(min(int(len(materials) * 2.5), ...), ...)``). The
importer writes both into ``world.json``'s ``placement`` (``guarantee``, ``draws``), which
:mod:`odyssey_env.paperworld` plays.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

__all__ = ["Distribution", "read_distribution"]

#: The reference's values where a file does not say (its Base).
DEFAULT_DRAWS = (2.0, 4.0)


@dataclass
class Distribution:
    draws: tuple[float, float] = DEFAULT_DRAWS
    guarantee: bool = False
    notes: list[str] = field(default_factory=list)  # where the file's shape was not the one expected


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def _factor(node: ast.AST) -> float | None:
    """``2.5`` of ``int(len(materials) * 2.5)`` (or of ``len(materials) * 2.5``)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" and node.args:
        node = node.args[0]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for side in (node.right, node.left):
            value = side.value if isinstance(side, ast.Constant) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
    return None


def _draws(fn: ast.FunctionDef) -> tuple[float, float] | None:
    """The two factors of ``k_materials = rng.randint(min(<n * a>, <d * a>), min(<n * b>, <d * b>))``."""
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target, call = node.targets[0], node.value
        if not (isinstance(target, ast.Name) and target.id == "k_materials" and isinstance(call, ast.Call)):
            continue
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "randint" and len(call.args) == 2):
            return None
        bounds: list[float] = []
        for arg in call.args:
            if not (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "min"):
                return None
            factors = {_factor(a) for a in arg.args}
            if len(factors) != 1 or None in factors:
                return None
            (value,) = factors
            assert value is not None
            bounds.append(value)
        return bounds[0], bounds[1]
    return None


def _guarantees(fn: ast.FunctionDef) -> bool:
    """Whether a loop over the area's own materials adds to ``area.objects`` before the draws."""
    for node in ast.walk(fn):
        if not (isinstance(node, ast.For) and isinstance(node.iter, ast.Name)):
            continue
        if node.iter.id != "non_comp_craft_materials":
            continue
        for stmt in node.body:
            if isinstance(stmt, (ast.Assign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    value = t.value if isinstance(t, ast.Subscript) else None
                    if isinstance(value, ast.Attribute) and value.attr == "objects":
                        return True
    return False


def read_distribution(text: str | None, filename: str) -> Distribution:
    """The placement a reference ``world.py`` asks for; the reference's defaults, with a note, where it is
    absent or its ``_distribute_objects`` does not have the expected shape."""
    if text is None:
        return Distribution(notes=[f"{filename} is absent: the reference's Base distribution is used"])
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as exc:
        return Distribution(notes=[f"{filename}: cannot parse line {exc.lineno}; the Base distribution is used"])
    fn = _function(tree, "_distribute_objects")
    if fn is None:
        return Distribution(notes=[f"{filename} has no _distribute_objects: the Base distribution is used"])
    out = Distribution(guarantee=_guarantees(fn))
    draws = _draws(fn)
    if draws is None or not 0 <= draws[0] <= draws[1]:
        out.notes.append(f"{filename}: the draws per area (k_materials) are not in the expected form; 2 to 4 are used")
    else:
        out.draws = draws
    return out
