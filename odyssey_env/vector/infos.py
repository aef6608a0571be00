"""One info dict per step for a vector env, merged as Gymnasium merges them but at a fraction of the cost.

Gymnasium merges the sub-envs' ``info`` dicts one sub-env and one key at a time, allocating a value
array and a mask array for every leaf of every sub-env's info (``VectorEnv._add_info``). An odyssey
info has about twenty leaves (reward components, quest progress, flags, events; twenty-five with
``ValidActions``), so that merge costs a fifth to a third of a step. Here the sub-envs' infos are
gathered and merged once per step by a plan compiled from their shape (:class:`_InfoPlan`), into
exactly what Gymnasium's merge gives (same keys, order, masks and dtypes); anything unusual, such as
sub-envs whose infos differ in shape, goes through Gymnasium's own merge unchanged.

Cheaper still is not merging what nobody reads: with ``lazy_infos`` (what ``make_vector_env`` sets)
a step returns a :class:`_LazyInfos`, which merges a key when it is first read and everything at
once when all values are read.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

__all__ = ["batch_infos"]

_NUMBERS = (int, float, bool)


class _Mismatch(Exception):
    """The sub-envs' infos differ in shape: merge them Gymnasium's way instead."""


def batch_infos(
    infos: list[dict[str, Any]],
    fold: Callable[[list[dict[str, Any]]], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Gymnasium's vector info of the infos of sub-envs ``0..n-1``, merged key by key.

    A nested dict whose keys differ between sub-envs (``valid_actions`` grouped by verb, say) goes
    to ``fold`` (Gymnasium's own merge of those sub-dicts). Raises :class:`_Mismatch` when the infos
    themselves differ in keys or key order, or one has a dict where another has not.
    """
    return _batch(infos, np.ones(len(infos), dtype=np.bool_), fold)


def _batch(
    infos: list[dict[str, Any]], present: np.ndarray, fold: Callable[[list[dict[str, Any]]], dict[str, Any]] | None
) -> dict[str, Any]:
    keys = _shared_keys(infos)
    out: dict[str, Any] = {}
    for key in keys:
        out[key] = _batch_key(key, [info[key] for info in infos], present, fold)
        out["_" + key] = present.copy()
    return out


def _batch_key(
    key: Any, values: list[Any], present: np.ndarray, fold: Callable[[list[dict[str, Any]]], dict[str, Any]] | None
) -> Any:
    """The merged value of one key from its value in every sub-env (see :func:`_batch`)."""
    kind = type(values[0])  # as in Gymnasium, the first sub-env's value decides; the others are cast
    if key == "final_obs":
        return _objects(values)
    if kind is dict:
        if any(type(v) is not dict for v in values):
            raise _Mismatch
        try:
            return _batch(values, present, fold)
        except _Mismatch:
            if fold is None:
                raise
            return fold(values)
    if dict in map(type, values):  # a dict beside a non-dict: Gymnasium's merge decides (and fails)
        raise _Mismatch
    if kind in _NUMBERS or issubclass(kind, np.number):
        return np.array(values, dtype=kind)
    if kind is np.ndarray:
        array = np.array(values, dtype=values[0].dtype)
        if array.shape[1:] != values[0].shape:
            raise _Mismatch
        return array
    return _objects(values)


@functools.cache
def _all_true(n: int) -> np.ndarray:
    return np.ones(n, dtype=np.bool_)


def _ones(n: int) -> np.ndarray:
    """A fresh all-true mask of ``n`` sub-envs (a copy: half the cost of ``np.ones``)."""
    return _all_true(n).copy()


def _shared_keys(dicts: list[dict[str, Any]]) -> tuple[Any, ...]:
    """The keys every dict has, in the same order; :class:`_Mismatch` if they differ or if one key is
    another's mask name."""
    keys = tuple(dicts[0])
    for d in dicts:
        if tuple(d) != keys:
            raise _Mismatch
    if _masks_collide(keys):
        raise _Mismatch
    return keys


def _masks_collide(keys: Any) -> bool:
    """Whether a key is another's mask name (``"_x"`` beside ``"x"``): Gymnasium's merge then writes
    one into the other, which only its own merge reproduces."""
    names = set(keys)
    return any(type(key) is str and "_" + key in names for key in names)


def _objects(values: list[Any]) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):  # one by one: a list value must stay one element, not broadcast
        array[i] = value
    return array


def _tuple_getter(items: tuple[Any, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """``itemgetter(*items)`` that always returns a tuple (also for one item or none)."""
    if len(items) > 1:
        return operator.itemgetter(*items)
    if len(items) == 1:
        only = items[0]
        return lambda container: (container[only],)
    return lambda container: ()


_FINAL_OBS = "final_obs"  # the plan's group of final observations (object arrays whatever they hold)


class _InfoPlan:
    """The shape of one step's infos (keys, nesting, the first sub-env's leaf types), compiled once.

    A vector env's infos keep one shape step after step, so :func:`batch_infos`' per-leaf decisions
    can be made once. Merging by the plan checks the shape (each dict's keys, the first sub-env's
    leaf types), builds all numeric leaves of one type as the rows of one array and all object
    leaves as the rows of one object array (``np.fromiter``, which assigns element by element as
    Gymnasium's merge does), all masks as the rows of one boolean array, and assembles the dicts
    with C-level getters: a few microseconds where a leaf-by-leaf merge takes tens. The result
    equals :func:`batch_infos`'; a shape the plan does not match raises :class:`_Mismatch` (the
    caller compiles a new plan or falls back), and so does anything numpy refuses to batch.
    """

    __slots__ = ("arrays", "assembly", "leaf_getters", "levels", "n_keys", "tables")

    def __init__(self, infos: list[dict[str, Any]]) -> None:
        self.levels: list[tuple[int, str, tuple[str, ...]]] = []  # (parent level or -1, key in it, its keys)
        leaves: list[tuple[int, str, type]] = []  # (level, key, the first sub-env's type), level by level
        structure: list[list[tuple[str, int | None]]] = []  # per level: (key, child level or None for a leaf)
        self._compile(infos, -1, "", leaves, structure)
        leaves.sort(key=lambda leaf: leaf[0])  # stable: key order within a level
        self.n_keys = sum(len(keys) for _, _, keys in self.levels)
        # per level with leaves: a getter of its leaves and their types in the first sub-env
        self.leaf_getters: list[tuple[int, Callable[[Any], tuple[Any, ...]], tuple[type, ...]]] = []
        for level in range(len(self.levels)):
            mine = [(key, kind) for lv, key, kind in leaves if lv == level]
            if mine:
                self.leaf_getters.append((level, _tuple_getter(tuple(k for k, _ in mine)), tuple(t for _, t in mine)))
        index = {(level, key): i for i, (level, key, _) in enumerate(leaves)}
        groups: dict[Any, list[int]] = {}  # numpy dtype -> leaves built as rows of one array
        arrays: list[int] = []
        for i, (_, key, kind) in enumerate(leaves):
            if key == "final_obs":  # any observation, a dict included: an object array, as Gymnasium's
                groups.setdefault(_FINAL_OBS, []).append(i)
            elif kind in _NUMBERS or issubclass(kind, np.number):
                groups.setdefault(kind, []).append(i)
            elif issubclass(kind, np.ndarray):
                arrays.append(i)
            else:
                groups.setdefault(object, []).append(i)
        # every built piece has a slot: table rows, array leaves, masks, nested dicts
        slot: dict[int, int] = {}
        self.tables = []
        for kind, members in groups.items():
            self.tables.append((kind, _tuple_getter(tuple(members)), len(members)))
            slot.update((leaf, len(slot)) for leaf in members)
        self.arrays = arrays
        slot.update((leaf, len(slot)) for leaf in arrays)
        first_mask = len(slot)
        first_dict = first_mask + self.n_keys
        masks = iter(range(first_mask, first_dict))
        self.assembly: list[tuple[tuple[str, ...], Callable[[list[Any]], tuple[Any, ...]], int | None]] = []
        for level, entries in enumerate(structure):
            keys: list[str] = []
            sources: list[int] = []
            for key, child in entries:
                keys += [key, "_" + key]
                sources += [slot[index[(level, key)]] if child is None else first_dict + child - 1, next(masks)]
            at = first_dict + level - 1 if level else None  # the root dict is the result, not a slot
            self.assembly.append((tuple(keys), _tuple_getter(tuple(sources)), at))

    def _compile(
        self,
        dicts: list[dict[str, Any]],
        parent: int,
        name: str,
        leaves: list[tuple[int, str, type]],
        structure: list[list[tuple[str, int | None]]],
    ) -> int:
        keys = _shared_keys(dicts)
        level = len(self.levels)
        self.levels.append((parent, name, keys))
        entries: list[tuple[str, int | None]] = []
        structure.append(entries)
        for key in keys:
            values = [d[key] for d in dicts]
            if key != "final_obs" and type(values[0]) is dict:
                if any(type(v) is not dict for v in values):
                    raise _Mismatch
                entries.append((key, self._compile(values, level, key, leaves, structure)))
            elif key != "final_obs" and dict in map(type, values):
                raise _Mismatch
            else:
                entries.append((key, None))
                leaves.append((level, key, type(values[0])))
        return level

    def merge(self, infos: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(infos)
        dicts: list[list[dict[str, Any]]] = []
        for parent, name, keys in self.levels:
            level = infos if parent < 0 else [d[name] for d in dicts[parent]]
            for d in level:
                if type(d) is not dict or tuple(d) != keys:
                    raise _Mismatch
            dicts.append(level)
        columns: list[tuple[Any, ...]] = []  # per leaf: its value in every sub-env
        for depth, getter, types in self.leaf_getters:
            rows = [getter(d) for d in dicts[depth]]
            if tuple(map(type, rows[0])) != types:
                raise _Mismatch
            columns.extend(zip(*rows, strict=True))
        slots: list[Any] = []
        for kind, pick, count in self.tables:
            values: Any = chain.from_iterable(pick(columns))
            if kind is object or kind is bool:  # a later sub-env's dict where the first has a leaf: Gymnasium's
                values = list(values)  # merge fails, where numpy would keep it as an object or take its truth
                if dict in map(type, values):
                    raise _Mismatch
            elif kind is _FINAL_OBS:
                kind = object
            # element by element, as Gymnasium assigns them (list extend: += would be numpy's add)
            slots.extend(np.fromiter(values, dtype=kind, count=count * n).reshape(count, n))
        for leaf in self.arrays:
            values = columns[leaf]
            array = np.array(values, dtype=values[0].dtype)
            if array.shape[1:] != values[0].shape:
                raise _Mismatch
            slots.append(array)
        slots.extend(np.ones((self.n_keys, n), dtype=np.bool_))
        slots.extend([None] * (len(self.levels) - 1))
        built: dict[str, Any] = {}
        for keys, sources, at in reversed(self.assembly):  # nested dicts before the dicts holding them
            built = dict(zip(keys, sources(slots), strict=True))
            if at is not None:
                slots[at] = built
        return built


if TYPE_CHECKING:  # a mixin of vector envs: the checker sees the VectorEnv its super() calls reach
    from gymnasium.vector import VectorEnv as _VectorEnvMixin
else:
    _VectorEnvMixin = object


class _BatchedInfos(_VectorEnvMixin):
    """Collects the infos Gymnasium hands to ``_add_info`` during one call, then merges them at once.

    With ``lazy_infos`` the merge waits until a key is read (:class:`_LazyInfos`); it is only safe
    where no sub-env changes an info it has returned, so the vector envs take it from their maker
    (odyssey's envs never do), not as a default for any ``env_fns``.
    """

    num_envs: int
    lazy_infos: bool = False
    _collected: list[tuple[int, dict[str, Any]]] | None = None
    _plan: _InfoPlan | None = None
    _lazy_template: tuple[tuple[Any, ...], dict[str, Any]] | None = None  # top-level keys, pending dict

    def _add_info(self, vector_infos: dict[str, Any], env_info: dict[str, Any], env_num: int) -> dict[str, Any]:
        if self._collected is None:
            added: dict[str, Any] = super()._add_info(vector_infos, env_info, env_num)
            return added
        self._collected.append((env_num, env_info))
        return vector_infos

    @contextmanager
    def _collecting(self) -> Iterator[list[tuple[int, dict[str, Any]]]]:
        collected: list[tuple[int, dict[str, Any]]] = []
        self._collected = collected
        try:
            yield collected
        finally:
            self._collected = None

    def _merged(self, collected: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
        order = [i for i, _ in collected]
        if order == self._every_env:
            return self._merged_in_order([info for _, info in collected])
        return self._fold([info for _, info in collected], order)

    def _merged_in_order(self, infos: list[dict[str, Any]]) -> dict[str, Any]:
        """The merge of the infos of every sub-env, ``infos[i]`` sub-env ``i``'s."""
        if self.lazy_infos:
            template = self._pending_keys(infos)
            if template is not None:
                return _LazyInfos.of(template, infos, self._merged_in_full, self._fold)
        return self._merged_in_full(infos)

    @functools.cached_property
    def _every_env(self) -> list[int]:
        return list(range(self.num_envs))

    def _merged_in_full(self, infos: list[dict[str, Any]]) -> dict[str, Any]:
        """The merge of the infos of sub-envs ``0..n-1``: by the plan, else key by key, else Gymnasium's.

        Any failure of the faster merges hands the infos on, whatever its type: infos Gymnasium's
        merge fails on too must fail with *its* error, and the faster merges meet the bad values in
        another order (key by key, a numeric type at a time) than it does (sub-env by sub-env).
        """
        try:
            if self._plan is not None:
                try:
                    return self._plan.merge(infos)
                except Exception:
                    self._plan = None
            self._plan = _InfoPlan(infos)
            return self._plan.merge(infos)
        except Exception:
            self._plan = None  # a shape the plan cannot take (nested dicts that differ, ...)
        try:
            return batch_infos(infos, self._fold)
        except Exception:  # values numpy cannot batch as Gymnasium would: its merge, or its error
            return self._fold(infos)

    def _pending_keys(self, infos: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The vector info's keys, all pending, when the infos can be merged key by key on demand.

        That needs the same top-level keys, in the same order, in every sub-env's info, and no key
        that could be another's mask (``"_x"`` beside ``"x"``), so that each key and its mask depend
        on that key's values alone, as in Gymnasium's merge.
        """
        first = infos[0]
        if type(first) is not dict:
            return None
        keys = tuple(first)
        for info in infos:
            if info is not first and (type(info) is not dict or tuple(info) != keys):
                return None
        cached = self._lazy_template
        if cached is not None and cached[0] == keys:
            return cached[1]
        if any(type(key) is not str or key.startswith("_") for key in keys):
            return None
        template = dict.fromkeys(chain.from_iterable((key, "_" + key) for key in keys), _PENDING)
        self._lazy_template = (keys, template)
        return template

    def _fold(self, infos: list[dict[str, Any]], env_nums: list[int] | None = None) -> dict[str, Any]:
        """Gymnasium's merge, one sub-env at a time, in Gymnasium's order."""
        merged: dict[str, Any] = {}
        for env_num, info in zip(range(len(infos)) if env_nums is None else env_nums, infos, strict=True):
            merged = super()._add_info(merged, info, env_num)
        return merged


class _Pending:
    """The value of a key of :class:`_LazyInfos` not merged yet (never seen outside it)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<pending>"


_PENDING = _Pending()
_MISSING = object()
_Merge = Callable[[list[dict[str, Any]]], dict[str, Any]]


class _LazyInfos(dict[str, Any]):
    """A vector env's info dict whose keys are merged when first read.

    An RL loop reads one or two keys of an info (``action_mask``, say) out of twenty or more; the
    merge of all of them costs a vector env up to a third of a step. This dict has every key of the
    merged info from the start, in Gymnasium's order, but a key's value (and its ``_key`` mask) is
    merged from the sub-envs' infos when first read, exactly as the whole merge would have merged
    it (same arrays, dtypes, masks; an error Gymnasium's merge would raise is raised then). Anything
    that reads all values (``items``, ``values``, ``==``, ``repr``, copying, pickling) merges the
    rest at once, by the same plan the eager merge uses; copies and pickles are plain dicts.

    It holds the sub-envs' info dicts until everything is merged, so they must not change after
    the step that returned them (see :class:`_BatchedInfos`).
    """

    __slots__ = ("_fold", "_infos", "_merge_all")

    _infos: list[dict[str, Any]] | None
    _merge_all: _Merge  # the whole info, by the vector env's plan
    _fold: _Merge  # Gymnasium's merge, for what the key-by-key merge leaves to it

    @classmethod
    def of(cls, template: dict[str, Any], infos: list[dict[str, Any]], merge_all: _Merge, fold: _Merge) -> _LazyInfos:
        """``template``'s keys, pending, over ``infos``. (Not an ``__init__``: made once per step, a
        dict subclass with no Python ``__init__`` of its own is built by dict's C code alone.)"""
        lazy = cls(template)
        lazy._infos, lazy._merge_all, lazy._fold = infos, merge_all, fold
        return lazy

    def _resolve(self, key: str) -> Any:
        name = key[1:] if key.startswith("_") else key  # pending keys are a top-level key or its mask
        infos = self._infos
        assert infos is not None, "a key is pending only while the sub-envs' infos are held"
        values = [info[name] for info in infos]
        present = _ones(len(values))
        try:
            merged = {name: _batch_key(name, values, present, self._fold), "_" + name: present}
        except Exception:  # what numpy cannot batch as Gymnasium would: its merge, or its error (see _merged_in_full)
            merged = self._fold([{name: value} for value in values])
        for k in (name, "_" + name):
            if dict.get(self, k, _MISSING) is _PENDING:  # a key set or deleted meanwhile stays as it is
                dict.__setitem__(self, k, merged[k])
        return merged[key]

    def _materialize(self) -> None:
        if self._infos is None:
            return
        merged = self._merge_all(self._infos)
        for key, value in dict.items(self):
            if value is _PENDING:
                dict.__setitem__(self, key, merged[key])
        self._infos = None

    def __getitem__(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        return self._resolve(key) if value is _PENDING else value

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _MISSING)
        if value is _MISSING:
            return default
        return self._resolve(key) if value is _PENDING else value

    def pop(self, key: Any, *default: Any) -> Any:
        if dict.get(self, key, _MISSING) is _PENDING:
            self._resolve(key)
        return dict.pop(self, key, *default)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key in self:
            return self[key]
        dict.__setitem__(self, key, default)
        return default

    def popitem(self) -> tuple[Any, Any]:
        self._materialize()
        return dict.popitem(self)

    def __iter__(self) -> Iterator[Any]:  # not dict's own: so dict(x), {**x} and update(x) read through __getitem__
        return dict.__iter__(self)

    def values(self) -> Any:
        self._materialize()
        return dict.values(self)

    def items(self) -> Any:
        self._materialize()
        return dict.items(self)

    def copy(self) -> dict[str, Any]:
        self._materialize()
        return dict(dict.items(self))

    __copy__ = copy

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        import copy

        return copy.deepcopy(self.copy(), memo)

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (self.copy(),)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return self.__reduce__()

    def __eq__(self, other: object) -> bool:
        self._materialize()
        if isinstance(other, _LazyInfos):
            other._materialize()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None

    def __or__(self, other: Any) -> Any:  # the copy merges the rest
        return dict.__or__(self.copy(), other)

    def __ror__(self, other: Any) -> Any:
        return dict.__ror__(self.copy(), other)

    def __repr__(self) -> str:
        self._materialize()
        return dict.__repr__(self)


_Collected = list[tuple[int, dict[str, Any]]]
