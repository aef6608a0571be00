"""Vector envs whose overhead stays small next to a step: ``gym.make_vec("AgentOdyssey/Base-v0", 8)``.

Gymnasium merges the sub-envs' ``info`` dicts one sub-env and one key at a time, allocating a value
array and a mask array for every leaf of every sub-env's info (``VectorEnv._add_info``). An odyssey
info has about twenty leaves (reward components, quest progress, flags, events; twenty-five with
``ValidActions``), so that merge costs a fifth to a third of a step in a sync vector env and, in an
async one, runs on the main process between every two steps of the workers. The classes here gather
the sub-envs' infos and merge them once per step, key by key across sub-envs (one allocation per
leaf instead of two per leaf and sub-env), into exactly what Gymnasium's merge gives (same keys,
order, masks and dtypes; anything unusual, such as sub-envs whose infos differ in shape, goes
through Gymnasium's own merge unchanged). Fewer leaves help most: ``info_keys=`` on the env.

:func:`make_vector_env` is the ``vector_entry_point`` of every registered odyssey id, so
``gym.make_vec(id, num_envs=N)`` (no ``vectorization_mode``) builds these; ``asynchronous=True`` runs
the sub-envs in processes and ``max_actions=K`` wraps each in
:class:`~odyssey_env.wrappers.ValidActions`. ``vectorization_mode="sync"`` or ``"async"`` still
gives Gymnasium's own classes (correct, with this package's fast shared-memory text codec, and with
Gymnasium's slower info merge). ``python benchmarks/vector_envs.py`` measures all of them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv, VectorEnv

__all__ = ["OdysseyAsyncVectorEnv", "OdysseySyncVectorEnv", "batch_infos", "make_vector_env"]

_NUMBERS = (int, float, bool)


class _Mismatch(Exception):
    """The sub-envs' infos differ in shape: merge them Gymnasium's way instead."""


def batch_infos(infos: list[dict[str, Any]], fold: Callable[[list[dict[str, Any]]], dict[str, Any]] | None = None,
                ) -> dict[str, Any]:
    """Gymnasium's vector info of the infos of sub-envs ``0..n-1``, merged key by key.

    A nested dict whose keys differ between sub-envs (``valid_actions`` grouped by verb, say) goes
    to ``fold`` (Gymnasium's own merge of those sub-dicts). Raises :class:`_Mismatch` when the infos
    themselves differ in keys or key order, or one has a dict where another has not.
    """
    return _batch(infos, np.ones(len(infos), dtype=np.bool_), fold)


def _batch(infos: list[dict[str, Any]], present: np.ndarray,
           fold: Callable[[list[dict[str, Any]]], dict[str, Any]] | None) -> dict[str, Any]:
    keys = list(infos[0])
    for info in infos:
        if list(info) != keys:
            raise _Mismatch
    out: dict[str, Any] = {}
    for key in keys:
        values = [info[key] for info in infos]
        kind = type(values[0])  # as in Gymnasium, the first sub-env's value decides; the others are cast
        if key == "final_obs":
            array: Any = _objects(values)
        elif kind is dict:
            if any(type(v) is not dict for v in values):
                raise _Mismatch
            try:
                array = _batch(values, present, fold)
            except _Mismatch:
                if fold is None:
                    raise
                array = fold(values)
        elif dict in map(type, values):  # a dict beside a non-dict: Gymnasium's merge decides (and fails)
            raise _Mismatch
        elif kind in _NUMBERS or issubclass(kind, np.number):
            array = np.array(values, dtype=kind)
        elif kind is np.ndarray:
            array = np.array(values, dtype=values[0].dtype)
            if array.shape[1:] != values[0].shape:
                raise _Mismatch
        else:
            array = _objects(values)
        out[key] = array
        out["_" + key] = present.copy()
    return out


def _objects(values: list[Any]) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):  # one by one: a list value must stay one element, not broadcast
        array[i] = value
    return array


class _BatchedInfos:
    """Collects the infos Gymnasium hands to ``_add_info`` during one call, then merges them at once."""

    num_envs: int
    _collected: list[tuple[int, dict[str, Any]]] | None = None

    def _add_info(self, vector_infos: dict[str, Any], env_info: dict[str, Any], env_num: int) -> dict[str, Any]:
        if self._collected is None:
            return super()._add_info(vector_infos, env_info, env_num)  # type: ignore[misc]
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
        if len(collected) == self.num_envs and all(i == k for k, (i, _) in enumerate(collected)):
            try:
                return batch_infos([info for _, info in collected], self._fold)
            except (_Mismatch, ValueError, TypeError):  # values numpy cannot batch as Gymnasium would
                pass
        return self._fold([info for _, info in collected], [i for i, _ in collected])

    def _fold(self, infos: list[dict[str, Any]], env_nums: list[int] | None = None) -> dict[str, Any]:
        """Gymnasium's merge, one sub-env at a time, in Gymnasium's order."""
        merged: dict[str, Any] = {}
        for env_num, info in zip(range(len(infos)) if env_nums is None else env_nums, infos, strict=True):
            merged = super()._add_info(merged, info, env_num)  # type: ignore[misc]
        return merged


class OdysseySyncVectorEnv(_BatchedInfos, SyncVectorEnv):
    """``SyncVectorEnv`` with one info merge per step (see the module docstring)."""

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        with self._collecting() as collected:
            obs, _ = super().reset(seed=seed, options=options)
        return obs, self._merged(collected)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        with self._collecting() as collected:
            obs, rewards, terminations, truncations, _ = super().step(actions)
        return obs, rewards, terminations, truncations, self._merged(collected)


class OdysseyAsyncVectorEnv(_BatchedInfos, AsyncVectorEnv):
    """``AsyncVectorEnv`` with one info merge per step (see the module docstring)."""

    def reset_wait(self, timeout: float | None = None) -> tuple[Any, dict[str, Any]]:
        with self._collecting() as collected:
            obs, _ = super().reset_wait(timeout)
        return obs, self._merged(collected)

    def step_wait(self, timeout: float | None = None) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        with self._collecting() as collected:
            obs, rewards, terminations, truncations, _ = super().step_wait(timeout)
        return obs, rewards, terminations, truncations, self._merged(collected)


def _sub_env(max_actions: int | None, max_episode_steps: int | None, env_kwargs: dict[str, Any]) -> gym.Env:
    from odyssey_env.env import OdysseyEnv

    env: gym.Env = OdysseyEnv(**env_kwargs)
    if max_episode_steps is not None:
        env = gym.wrappers.TimeLimit(env, max_episode_steps)
    if max_actions is not None:
        from odyssey_env.wrappers import ValidActions

        env = ValidActions(env, max_actions)
    return env


def make_vector_env(num_envs: int = 1, *, asynchronous: bool = False, shared_memory: bool = True,
                    max_actions: int | None = None, max_episode_steps: int | None = None,
                    autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
                    **env_kwargs: Any) -> VectorEnv:
    """``num_envs`` odyssey envs as one vector env; ``env_kwargs`` go to each ``OdysseyEnv``.

    ``asynchronous`` runs each sub-env in its own process (observations through shared memory unless
    ``shared_memory=False``); ``max_actions`` gives each a ``Discrete(max_actions)`` action space over
    its valid commands (:class:`~odyssey_env.wrappers.ValidActions`); ``max_episode_steps`` truncates.
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    make: Callable[[], gym.Env] = functools.partial(_sub_env, max_actions, max_episode_steps, env_kwargs)
    if asynchronous:
        return OdysseyAsyncVectorEnv([make] * num_envs, shared_memory=shared_memory, autoreset_mode=autoreset_mode)
    # copy=False: a sync step's observations are a fresh tuple of immutable strings, nothing to protect
    # by deep-copying it (async observations live in shared memory and are copied out).
    return OdysseySyncVectorEnv([make] * num_envs, copy=False, autoreset_mode=autoreset_mode)
