"""What a reference quest decides in code, read from the code's shape: quest bindings, NPCs and bosses.

A reference quest names its areas, NPCs and words through keys (``"area_key": "ch1_shrine_area"``) that
``MainQuestStepRule._bootstrap`` fills at the start of a run, ``_ensure_static_quest_npcs`` binds to NPC
instances and ``_ensure_named_boss_spawned`` binds to bosses. Those methods are code, so they are read
here as syntax trees, statement by statement, by a tiny interpreter that knows only the few forms the
reference's quest compiler writes:

* ``self._generated[K] = <data>`` (a literal, a class constant ``self.X``, another key, ``list(...)``,
  ``int(...)``, an f-string of keys, ``.strip()``/``.lower()``/``.upper()``);
* ``_picks = pick_progressive(n)`` / ``pick(...)``, then ``_picks[0] if _picks else spawn_area``: the next
  ``n`` unused areas nearest the spawn (see :class:`Picker`); ``max(L, key=...dist...)``: the farthest;
* ``inst = self._create_npc_instance(world, BASE, AREA, rng)`` followed by ``self._generated[K] = inst``;
* the ``if boss_key == K: base_id = ...; area_id = ...; base_hp, base_atk = ...`` chain.

Anything else is skipped, and a key the quest needs that stays unknown is an import error naming it.
Nothing is executed: values are computed by this module from data.
"""

from __future__ import annotations

import ast
import contextlib
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from odyssey_eval.paper.literals import NotLiteral, literal

__all__ = ["Bindings", "BossSpec", "Picker", "read_bindings", "stock_in_code"]


@dataclass(frozen=True)
class BossSpec:
    npc: str  # reference NPC id
    area_key: str | None
    area: str | None
    hp: int | None
    attack: int | None


@dataclass
class Bindings:
    """What the quest's keys mean: values (areas, words, counts), NPC instances and bosses."""

    values: dict[str, Any] = field(default_factory=dict)
    placed: list[tuple[str, str]] = field(default_factory=list)  # (reference object id, area id) put at the start
    npcs: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # key -> (reference NPC id, area id)
    bosses: dict[str, BossSpec] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # where the reference decides per run and we fix one value


class Picker:
    """``pick_progressive``: the nearest unused non-spawn areas, by breadth-first distance from the spawn.

    The reference shuffles the areas and bumps each one layer further with probability 0.25 before
    sorting, so its picks change with the seed; the import fixes the noise-free order (distance, then
    file order). With a random graph (``graph`` absent) the distance is unknown before play, and area
    level stands in for it.
    """

    def __init__(
        self, areas: Sequence[str], spawn: str, edges: Sequence[tuple[str, str]] | None, levels: Mapping[str, int]
    ):
        self.spawn = spawn
        self.order = list(areas)
        if edges:
            nbrs: dict[str, list[str]] = {a: [] for a in areas}
            for a, b in edges:
                nbrs.setdefault(a, []).append(b)
                nbrs.setdefault(b, []).append(a)
            self.dist = {spawn: 0}
            queue = deque([spawn])
            while queue:
                cur = queue.popleft()
                for n in nbrs.get(cur, ()):
                    if n not in self.dist:
                        self.dist[n] = self.dist[cur] + 1
                        queue.append(n)
        else:
            self.dist = {a: levels.get(a, 1) for a in areas}
            self.dist[spawn] = 0
        far = len(self.order)
        self.ranked = sorted(
            (a for a in self.order if a != spawn), key=lambda a: (self.dist.get(a, far), self.order.index(a))
        )
        self.used: set[str] = set()

    def pick(self, n: int) -> list[str]:
        out: list[str] = []
        for a in self.ranked:
            if a not in self.used:
                out.append(a)
                self.used.add(a)
                if len(out) >= n:
                    return out
        for a in self.ranked:  # exhausted: the reference reuses areas; take the nearest again
            if len(out) >= n:
                break
            if a not in out:
                out.append(a)
        return out

    def farthest(self, areas: Sequence[str]) -> str:
        far = len(self.order)
        return max(areas, key=lambda a: (self.dist.get(a, far), -self.order.index(a) if a in self.order else 0))


class _Unknown(Exception):
    pass


def _is_self_attr(node: ast.AST, attr: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attr
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _generated_key(node: ast.AST) -> str | None:
    """``self._generated[K]`` -> K."""
    if isinstance(node, ast.Subscript) and _is_self_attr(node.value, "_generated"):
        try:
            key = literal(node.slice)
        except NotLiteral:
            return None
        return key if isinstance(key, str) else None
    return None


class _Reader:
    def __init__(self, consts: Mapping[str, Any], picker: Picker | None, spawn: str):
        self.consts = consts
        self.picker = picker
        self.spawn = spawn
        self.values: dict[str, Any] = {}
        self.locals: dict[str, Any] = {"spawn_area": spawn}

    # -------------------------------------------------------------- expressions
    def value(self, node: ast.AST) -> Any:
        try:
            return literal(node, self.locals)
        except NotLiteral:
            pass
        key = _generated_key(node)
        if key is not None:
            if key not in self.values:
                raise _Unknown(key)
            return self.values[key]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            if node.attr in self.consts:
                return self.consts[node.attr]
            raise _Unknown(node.attr)
        if isinstance(node, ast.Subscript):
            base, index = self.value(node.value), self.value(node.slice)
            try:
                return base[index]
            except (KeyError, IndexError, TypeError):
                raise _Unknown(ast.unparse(node)) from None
        if isinstance(node, ast.IfExp):
            return self.value(node.body) if self.value(node.test) else self.value(node.orelse)
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    parts.append(str(v.value))
                elif isinstance(v, ast.FormattedValue) and v.format_spec is None and v.conversion == -1:
                    parts.append(str(self.value(v.value)))
                else:
                    raise _Unknown(ast.unparse(v))
            return "".join(parts)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise _Unknown(ast.unparse(node))

    def call(self, node: ast.Call) -> Any:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("list", "int", "str", "tuple") and len(node.args) == 1:
            arg = self.value(node.args[0])
            return {"list": list, "int": int, "str": str, "tuple": tuple}[func.id](arg)
        if isinstance(func, ast.Name) and func.id.startswith("pick") and self.picker is not None:
            n = self.value(node.args[0]) if node.args else 1
            if not isinstance(n, int):
                raise _Unknown(ast.unparse(node))
            return self.picker.pick(n)
        if isinstance(func, ast.Name) and func.id == "max" and len(node.args) == 1 and self.picker is not None:
            areas = self.value(node.args[0])
            if isinstance(areas, list) and areas and "dist" in ast.unparse(node):
                return self.picker.farthest(areas)
        if isinstance(func, ast.Attribute) and func.attr in ("strip", "lower", "upper") and not node.args:
            base = self.value(func.value)
            if isinstance(base, str):
                return getattr(base, func.attr)()
        if isinstance(func, ast.Attribute) and func.attr == "get" and _is_self_attr(func.value, "_generated"):
            key = self.value(node.args[0])
            if key in self.values:
                return self.values[key]
            if len(node.args) > 1:
                return self.value(node.args[1])
            raise _Unknown(str(key))
        raise _Unknown(ast.unparse(node))

    # -------------------------------------------------------------- statements
    def run(self, body: Sequence[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                key = _generated_key(target)
                try:
                    value = self.value(stmt.value)
                except _Unknown:
                    if isinstance(target, ast.Name):
                        self.locals.pop(target.id, None)
                    continue
                if key is not None:
                    self.values[key] = value
                elif isinstance(target, ast.Name):
                    self.locals[target.id] = value
            elif isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                continue  # control flow is code whose outcome we do not guess


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def _npc_bindings(fn: ast.FunctionDef, reader: _Reader) -> dict[str, tuple[str, str | None]]:
    """``inst = self._create_npc_instance(world, BASE, AREA, rng)`` ... ``self._generated[K] = inst``."""
    out: dict[str, tuple[str, str | None]] = {}
    for block in ast.walk(fn):
        if not isinstance(block, ast.If):
            continue
        local: dict[str, Any] = {}
        call: tuple[str, str | None] | None = None
        for stmt in ast.walk(ast.Module(body=block.body, type_ignores=[])):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                value = stmt.value
                if (
                    isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Attribute)
                    and value.func.attr == "_create_npc_instance"
                    and len(value.args) >= 3
                ):
                    try:
                        base = reader.value(value.args[1])
                    except _Unknown:
                        continue
                    area_node = value.args[2]
                    try:
                        area = (
                            local[area_node.id]
                            if isinstance(area_node, ast.Name) and area_node.id in local
                            else reader.value(area_node)
                        )
                    except _Unknown:
                        area = None
                    call = (base, area if isinstance(area, str) else None)
                    continue
                with contextlib.suppress(_Unknown):
                    local[stmt.targets[0].id] = reader.value(value)
            key = _generated_key(stmt.targets[0]) if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
            if (
                key
                and call
                and isinstance(stmt, ast.Assign)  # as key's being set says
                and isinstance(stmt.value, ast.Name)
                and stmt.value.id == "inst"
                and key not in out
            ):
                out[key] = call
        # nested ifs are visited on their own by ast.walk
    return out


def _boss_specs(fn: ast.FunctionDef, reader: _Reader) -> dict[str, BossSpec]:
    out: dict[str, BossSpec] = {}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)):
            continue
        test = node.test
        if not (
            isinstance(test.left, ast.Name)
            and test.left.id == "boss_key"
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
        ):
            continue
        try:
            key = literal(test.comparators[0])
        except NotLiteral:
            continue
        base = area = area_key = hp = atk = None
        for stmt in node.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                continue
            target = stmt.targets[0]
            if isinstance(target, ast.Name) and target.id == "base_id":
                base = _try(reader, stmt.value)
            elif isinstance(target, ast.Name) and target.id == "area_id":
                area_key = _area_key(stmt.value)
                area = _try(reader, stmt.value)
            elif isinstance(target, ast.Tuple) and [getattr(e, "id", "") for e in target.elts] == [
                "base_hp",
                "base_atk",
            ]:
                pair = _try(reader, stmt.value)
                if isinstance(pair, tuple) and len(pair) == 2:
                    hp, atk = pair
        if isinstance(key, str) and isinstance(base, str):
            out[key] = BossSpec(base, area_key, area if isinstance(area, str) else None, hp, atk)
    return out


def _area_key(node: ast.AST) -> str | None:
    key = _generated_key(node)
    if key is not None:
        return key
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and _is_self_attr(node.func.value, "_generated")
    ):
        try:
            got = literal(node.args[0])
        except NotLiteral:
            return None
        return got if isinstance(got, str) else None
    return None


def _try(reader: _Reader, node: ast.AST) -> Any:
    try:
        return reader.value(node)
    except _Unknown:
        return None


def read_bindings(cls: ast.ClassDef, consts: Mapping[str, Any], picker: Picker | None, spawn: str) -> Bindings:
    """Read ``_bootstrap``, ``_ensure_static_quest_npcs`` and ``_ensure_named_boss_spawned`` of a quest class."""
    reader = _Reader(consts, picker, spawn)
    boot = _method(cls, "_bootstrap")
    if boot is not None:
        reader.run(boot.body)
    out = Bindings(values=dict(reader.values))
    if boot is not None and any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id.startswith("pick")
        for n in ast.walk(boot)
    ):
        out.notes.append(
            "quest areas the reference draws per run (pick_progressive: shuffled, 25% bumped a layer further) "
            "are fixed at the nearest-first order from the spawn"
        )
    npcs = _method(cls, "_ensure_static_quest_npcs")
    if npcs is not None:
        out.npcs = _npc_bindings(npcs, reader)
    objects = _method(cls, "_ensure_quest_objects")
    if objects is not None:
        out.placed = _quest_objects(objects)
    bosses = _method(cls, "_ensure_named_boss_spawned")
    if bosses is not None:
        out.bosses = _boss_specs(bosses, reader)
    return out


def _quest_objects(fn: ast.FunctionDef) -> list[tuple[str, str]]:
    """``_ensure_quest_objects``: ``X_area_id = "area_..."`` and ``X_id = "obj_..."``, the object put in that area.

    The method is read only when it names exactly one area; anything else is left to the import's checks.
    """
    areas: list[str] = []
    objects: list[str] = []
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            value = node.value.value
            if value.startswith("area_"):
                areas.append(value)
            elif value.startswith("obj_"):
                objects.append(value)
    if len(set(areas)) != 1:
        return []
    return [(o, areas[0]) for o in dict.fromkeys(objects)]


def _stocked(fn: ast.FunctionDef, consts: Mapping[str, Any]) -> dict[str, int]:
    """``npc.inventory[OBJ] = max(int(npc.inventory.get(OBJ, 0)), N)`` (or ``= N``) in a method: OBJ -> N.

    OBJ is a string or a class constant ``self.X``; N is the largest integer constant of the value.
    """
    out: dict[str, int] = {}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Attribute)
            and target.value.attr == "inventory"
        ):
            continue
        key: Any = target.slice
        if isinstance(key, ast.Constant):
            obj = key.value
        elif isinstance(key, ast.Attribute) and _is_self_attr(key, key.attr):
            obj = consts.get(key.attr)
        else:
            continue
        counts = [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and type(c.value) is int]
        if isinstance(obj, str) and obj.startswith("obj_") and counts and max(counts) > 0:
            out[obj] = max(out.get(obj, 0), max(counts))
    return out


def _npc_of_call(fn: ast.FunctionDef, call: ast.Call) -> str | None:
    """The reference NPC id a ``self._setup_..._stock(world, inst)`` call is made for: the ``"npc_..."`` its
    enclosing ``if get_def_id(inst) == "npc_..."`` names, else the base id ``inst`` was created from."""
    arg = next((a.id for a in call.args if isinstance(a, ast.Name) and a.id != "world"), None)
    parents: dict[ast.AST, ast.AST] = {}
    for parent in ast.walk(fn):
        for child in ast.iter_child_nodes(parent):
            parents[child] = parent
    node: ast.AST | None = call
    while node is not None:
        if isinstance(node, ast.If):
            named = [
                c.value
                for c in ast.walk(node.test)
                if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.startswith("npc_")
            ]
            if len(named) == 1:
                return named[0]
        node = parents.get(node)
    # else the last ``inst = self._create_npc_instance(world, "npc_...", ...)`` before the call
    made = [
        node
        for node in ast.walk(fn)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == arg
        and isinstance(node.value, ast.Call)
        and node.lineno < call.lineno
    ]
    for node in sorted(made, key=lambda n: n.lineno, reverse=True):
        assert isinstance(node.value, ast.Call)
        named = [
            a.value
            for a in node.value.args
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("npc_")
        ]
        if len(named) == 1:
            return named[0]
    return None


def stock_in_code(cls: ast.ClassDef, consts: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """What the quest's code puts in a merchant's inventory at the start: reference NPC id -> {object: n}.

    Saltglass's ``_setup_ch1_merchant_stock`` gives the world merchant vesin the survey seal its quest
    asks to buy; Remnant's ``_setup_tide_merchant_stock`` the Heart of the Ocean. The stocking method is
    read with :func:`_stocked`, the NPC from the place that calls it (:func:`_npc_of_call`).
    """
    methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
    stocking = {name: got for name, f in methods.items() if (got := _stocked(f, consts))}
    out: dict[str, dict[str, int]] = {}
    for fn in methods.values():
        for call in ast.walk(fn):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            if call.func.attr not in stocking or not _is_self_attr(call.func, call.func.attr):
                continue
            npc = _npc_of_call(fn, call)
            if npc is None:
                continue
            mine = out.setdefault(npc, {})
            for obj, n in stocking[call.func.attr].items():
                mine[obj] = max(mine.get(obj, 0), n)
    return out
