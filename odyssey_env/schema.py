"""Typed loading of plain JSON data into frozen dataclasses, with errors that name the field.

Game folders are written by people and by LLMs, so a broken one must say *where* it is broken:
``world.json: objects[12].value: expected an integer, got 'two'``. The env
package may depend on gymnasium only, so instead of pydantic this module validates against the
dataclass type hints themselves (``int``, ``float``, ``str``, ``bool``, ``Literal``, ``Optional``,
``list[T]``, ``tuple[T, ...]``, ``dict[str, T]`` and nested dataclasses). Every problem is collected,
not just the first, and unknown keys are errors (a typo such as ``"capcity"`` must not be ignored).

The same machinery dumps dataclasses back to JSON-ready data without their defaults (:func:`dump`), for
writing game files from these classes; the engine's ``save_state`` does not use it, because a saved
state keeps its defaults to stay explicit (see ``state._dump_slots``).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import difflib
import inspect
import math
import sys
import types
from collections.abc import Iterable
from functools import cache
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

T = TypeVar("T")

__all__ = ["FormatError", "Limits", "Problem", "dump", "json_schema", "load"]


@dataclasses.dataclass(frozen=True)
class Problem:
    """One thing wrong with one field."""

    file: str
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: " if self.file else ""
        return f"{where}{self.path or '<root>'}: {self.message}"


class FormatError(ValueError):
    """Raised when data does not match its declared format; carries every problem found."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = list(problems)
        lines = [str(p) for p in self.problems[:40]]
        if len(self.problems) > 40:
            lines.append(f"... and {len(self.problems) - 40} more problems")
        super().__init__("\n".join(lines) if lines else "invalid data")


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@cache
def _hints(cls: type) -> dict[str, Any]:
    return type_hints(cls)


#: Generic types an annotation may subscript (``tuple[int, int]``); typing's own forms are allowed too.
_GENERICS: frozenset[Any] = frozenset({tuple, list, dict, set, frozenset, type})
_TYPING_MODULES = frozenset({"typing", "collections.abc", "typing_extensions"})


def type_hints(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls)`` without ``eval``: the annotations of ``cls`` and its bases, where a
    string annotation is resolved by looking names up, never by running it.

    A game folder's ``rules.py`` declares ``Params`` dataclasses whose annotations are strings (``from
    __future__ import annotations``); ``get_type_hints`` would ``eval`` each with the module's globals
    and builtins, so a string could call anything. Here a string may only be names, attribute lookups
    on modules, subscripts of builtin generics or typing forms, ``|`` unions, ``None``, ``...`` and the
    literals inside ``Literal[...]``; anything else is a :class:`TypeError` naming the class and field.
    """
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        module = sys.modules.get(klass.__module__)
        namespace = dict(vars(module)) if module is not None else {}
        namespace.update({k: v for k, v in vars(klass).items() if isinstance(v, type)})
        for name, annotation in inspect.get_annotations(klass).items():
            if isinstance(annotation, str):
                try:
                    annotation = _resolve_annotation(annotation, namespace)
                except (TypeError, SyntaxError, KeyError, AttributeError) as exc:
                    raise TypeError(f"{klass.__qualname__}.{name}: annotation {annotation!r} refused: {exc}") from None
            out[name] = annotation
    return out


def _resolve_annotation(text: str, namespace: dict[str, Any]) -> Any:
    def lookup(name: str) -> Any:
        if name in namespace:
            return namespace[name]
        if hasattr(builtins, name) and isinstance(getattr(builtins, name), type):
            return getattr(builtins, name)
        if name == "None":
            return None
        raise KeyError(f"unknown name {name!r}")

    def ev(node: ast.AST, literal: bool = False) -> Any:
        if isinstance(node, ast.Constant):
            if literal or node.value is None or node.value is Ellipsis:
                return node.value
            if isinstance(node.value, str):  # a forward reference inside a larger annotation
                return ev(ast.parse(node.value, mode="eval").body)
            raise TypeError(f"a constant {node.value!r} outside Literal[...]")
        if isinstance(node, ast.Name):
            return lookup(node.id)
        if isinstance(node, ast.Attribute):
            base = ev(node.value)
            if node.attr.startswith("_") or not isinstance(base, types.ModuleType):
                raise TypeError(f"the attribute .{node.attr} (only public names of modules)")
            return getattr(base, node.attr)
        if isinstance(node, ast.Tuple):
            return tuple(ev(e, literal) for e in node.elts)
        if isinstance(node, ast.List):
            return [ev(e, literal) for e in node.elts]
        if isinstance(node, ast.Subscript):
            base = ev(node.value)
            if not (base in _GENERICS or getattr(base, "__module__", None) in _TYPING_MODULES):
                raise TypeError(f"subscript of {base!r} (only builtin generics and typing forms)")
            args = ev(node.slice, literal=base is Literal)
            return base[args]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left, right = ev(node.left), ev(node.right)
            for side in (left, right):
                if not (
                    side is None
                    or type(side) is type
                    or isinstance(side, types.UnionType | types.GenericAlias)
                    or getattr(side, "__module__", None) in _TYPING_MODULES
                ):
                    raise TypeError(f"a union with {side!r}")
            return left | right
        raise TypeError(f"{type(node).__name__} is not allowed in an annotation")

    return ev(ast.parse(text, mode="eval").body)


@cache
def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return tuple(f for f in dataclasses.fields(cls) if f.init)


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


@dataclasses.dataclass(frozen=True)
class Limits:
    """Bounds on untrusted data, checked while loading so an absurd file fails fast with a field path.

    A list, tuple or mapping longer than ``max_items`` is refused before its items are looked at, and
    a nesting deeper than ``max_depth`` before it is descended into, so loading stays quick and never
    recurses without end whatever the file holds. Numbers are refused beyond ``max_number`` in size
    (and NaN or infinity always: they are not JSON numbers and break arithmetic silently).
    """

    max_number: float = 1e9
    max_items: int = 10_000
    max_text: int = 20_000
    max_depth: int = 64


class _Loader:
    def __init__(self, file: str, limits: Limits | None = None):
        self.file = file
        self.limits = limits
        self.problems: list[Problem] = []
        self.depth = 0

    def fail(self, path: str, message: str) -> None:
        self.problems.append(Problem(self.file, path, message))

    def value(self, tp: Any, data: Any, path: str) -> Any:
        limits = self.limits
        if limits is not None:
            if self.depth >= limits.max_depth:
                self.fail(path, f"nested deeper than {limits.max_depth} levels")
                return None
            if isinstance(data, list | tuple | dict | str) and len(data) > (
                limits.max_text if isinstance(data, str) else limits.max_items
            ):
                what = "characters" if isinstance(data, str) else "items"
                most = limits.max_text if isinstance(data, str) else limits.max_items
                self.fail(path, f"has {len(data):,} {what}; at most {most:,} are allowed")
                return None
        self.depth += 1
        try:
            return self._value(tp, data, path)
        finally:
            self.depth -= 1

    def _value(self, tp: Any, data: Any, path: str) -> Any:
        origin = get_origin(tp)
        if tp is Any:
            if self.limits is not None or _has_float(data):
                self.untyped(data, path)
            return data
        if origin is Union or origin is types.UnionType:
            args = get_args(tp)
            if data is None and type(None) in args:
                return None
            non_none = [a for a in args if a is not type(None)]
            if len(non_none) == 1:
                return self.value(non_none[0], data, path)
            for candidate in non_none:  # first alternative that loads cleanly wins
                trial = _Loader(self.file)
                result = trial.value(candidate, data, path)
                if not trial.problems:
                    return result
            self.fail(path, f"expected one of {', '.join(_type_name(a) for a in non_none)}, got {_describe(data)}")
            return None
        if origin is Literal:
            allowed = get_args(tp)
            if data not in allowed:
                self.fail(path, f"expected one of {', '.join(map(repr, allowed))}, got {_describe(data)}")
            return data
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return self.dataclass(tp, data, path)
        if origin in (list, tuple) or tp in (list, tuple):
            if not isinstance(data, list | tuple):
                self.fail(path, f"expected a list, got {_describe(data)}")
                return () if origin is tuple else []
            args = get_args(tp)
            item_tp = args[0] if args else Any
            items = [self.value(item_tp, item, _join(path, i)) for i, item in enumerate(data)]
            return tuple(items) if origin is tuple or tp is tuple else items
        if origin is dict or tp is dict:
            if not isinstance(data, dict):
                self.fail(path, f"expected an object (mapping), got {_describe(data)}")
                return {}
            args = get_args(tp)
            val_tp = args[1] if args else Any
            out = {}
            for key, item in data.items():
                if not isinstance(key, str):
                    self.fail(path, f"keys must be strings, got {_describe(key)}")
                    continue
                out[key] = self.value(val_tp, item, _join(path, key))
            return out
        if tp is bool:
            if not isinstance(data, bool):
                self.fail(path, f"expected true or false, got {_describe(data)}")
            return data
        if tp is int:
            if isinstance(data, bool) or not isinstance(data, int):
                self.fail(path, f"expected an integer, got {_describe(data)}")
            else:
                self.number(data, path)
            return data
        if tp is float:
            if isinstance(data, bool) or not isinstance(data, int | float):
                self.fail(path, f"expected a number, got {_describe(data)}")
                return data
            self.number(data, path)
            return float(data)
        if tp is str:
            if not isinstance(data, str):
                self.fail(path, f"expected a string, got {_describe(data)}")
            return data
        raise TypeError(f"schema: unsupported annotation {tp!r} at {path}")  # a bug in our own models

    def number(self, data: int | float, path: str) -> None:
        if isinstance(data, float) and not math.isfinite(data):
            self.fail(path, f"expected a finite number, got {data!r}")
        elif self.limits is not None and abs(data) > self.limits.max_number:
            self.fail(
                path, f"{_describe(data)} is out of range: numbers here are at most {self.limits.max_number:g} in size"
            )

    def untyped(self, data: Any, path: str) -> None:
        """An ``Any`` field (rule parameters, predicate arguments): the same bounds, without a type."""
        if isinstance(data, int | float) and not isinstance(data, bool):
            self.number(data, path)
        elif isinstance(data, dict):
            for key, item in data.items():
                self.value(Any, item, _join(path, str(key)))
        elif isinstance(data, list | tuple):
            for i, item in enumerate(data):
                self.value(Any, item, _join(path, i))

    def dataclass(self, cls: type, data: Any, path: str) -> Any:
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            self.fail(
                path, f"expected an object with fields {', '.join(f.name for f in _fields(cls))}, got {_describe(data)}"
            )
            return None
        hints = _hints(cls)
        known = {f.name for f in _fields(cls)}
        for key in data:
            if key not in known:
                close = _closest(str(key), known)
                hint = f" (did you mean {close!r}?)" if close else ""
                self.fail(_join(path, str(key)), f"unknown field{hint}; known fields: {', '.join(sorted(known))}")
        before = len(self.problems)
        kwargs = {}
        for f in _fields(cls):
            if f.name in data:
                kwargs[f.name] = self.value(hints[f.name], data[f.name], _join(path, f.name))
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                self.fail(_join(path, f.name), "required field is missing")
        if len(self.problems) > before:
            return None  # the problems already say why; building would only add noise
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:  # __post_init__ checks raise ValueError
            self.fail(path, str(exc))
            return None


def _closest(word: str, candidates: Iterable[str]) -> str | None:
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.75)
    return matches[0] if matches else None


def _type_name(tp: Any) -> str:
    if dataclasses.is_dataclass(tp):
        return "an object"
    return {int: "an integer", float: "a number", str: "a string", bool: "a boolean"}.get(tp, str(tp))


def _has_float(data: Any) -> bool:
    """Whether untyped data may hold a float that must be checked (cheap for the common scalars)."""
    return isinstance(data, float | dict | list | tuple)


def load(cls: type[T], data: Any, *, file: str = "", limits: Limits | None = None) -> T:
    """Build ``cls`` from plain data, raising :class:`FormatError` listing every problem found.

    ``limits`` bounds sizes, numbers and nesting for untrusted files (game folders); NaN and
    infinity are refused in any case.
    """
    loader = _Loader(file, limits)
    result: T = loader.value(cls, data, "")
    if loader.problems:
        raise FormatError(loader.problems)
    return result


def dump(obj: Any) -> Any:
    """Turn dataclasses (and containers of them) into JSON-ready data, omitting default-valued fields."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {}
        for f in _fields(type(obj)):
            value = getattr(obj, f.name)
            if f.default is not dataclasses.MISSING and value == f.default:
                continue
            if f.default_factory is not dataclasses.MISSING and value == f.default_factory():
                continue
            out[f.name] = dump(value)
        return out
    if isinstance(obj, dict):
        return {k: dump(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [dump(v) for v in obj]
    return obj


def json_schema(cls: type) -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) for ``cls``, for editors and for LLM generators' prompts."""
    defs: dict[str, Any] = {}

    def convert(tp: Any) -> dict[str, Any]:
        origin = get_origin(tp)
        if tp is Any:
            return {}
        if origin is Union or origin is types.UnionType:
            return {"anyOf": [convert(a) for a in get_args(tp)]}
        if tp is type(None):
            return {"type": "null"}
        if origin is Literal:
            return {"enum": list(get_args(tp))}
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            name = tp.__name__
            if name not in defs:
                defs[name] = {}  # placeholder breaks recursion
                hints = _hints(tp)
                props = {}
                required = []
                for f in _fields(tp):
                    props[f.name] = convert(hints[f.name])
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                        required.append(f.name)
                defs[name] = {"type": "object", "properties": props, "additionalProperties": False}
                if tp.__doc__:
                    defs[name]["description"] = " ".join(tp.__doc__.split())
                if required:
                    defs[name]["required"] = required
            return {"$ref": f"#/$defs/{name}"}
        if origin in (list, tuple) or tp in (list, tuple):
            args = get_args(tp)
            return {"type": "array", "items": convert(args[0]) if args else {}}
        if origin is dict or tp is dict:
            args = get_args(tp)
            return {"type": "object", "additionalProperties": convert(args[1]) if args else {}}
        return {
            int: {"type": "integer"},
            float: {"type": "number"},
            str: {"type": "string"},
            bool: {"type": "boolean"},
        }[tp]

    root = convert(cls)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **root, "$defs": defs}
