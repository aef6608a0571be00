"""The sync vector env: Gymnasium's ``SyncVectorEnv`` with one info merge per step and a lean step loop."""

from __future__ import annotations

import functools
from collections.abc import Callable
from copy import deepcopy
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import concatenate

from odyssey_env.vector.infos import _BatchedInfos, _Collected

__all__ = ["OdysseySyncVectorEnv"]


class OdysseySyncVectorEnv(_BatchedInfos, SyncVectorEnv):
    """``SyncVectorEnv`` with one info merge per step (see the module docstring).

    ``lazy_infos=True`` returns infos whose keys are merged when read (:class:`_LazyInfos`): for
    sub-envs that never change an info dict after returning it, as odyssey's (``make_vector_env``
    sets it); other ``env_fns`` get Gymnasium's eager merge by default.
    """

    def __init__(self, env_fns: Any, *args: Any, lazy_infos: bool = False, **kwargs: Any) -> None:
        super().__init__(env_fns, *args, **kwargs)
        self.lazy_infos = bool(lazy_infos)

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        with self._collecting() as collected:
            obs, _ = super().reset(seed=seed, options=options)
        return obs, self._merged(collected)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._lean(actions):
            obs, rewards, terminations, truncations, infos = self._step_lean(actions)
            return obs, rewards, terminations, truncations, self._merged_in_order(infos)
        obs, rewards, terminations, truncations, collected = self._step_generic(actions)
        return obs, rewards, terminations, truncations, self._merged(collected)

    def _step_collected(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, _Collected]:
        """A step whose infos stay unmerged, for a caller that merges them with other sub-envs'."""
        if self._lean(actions):
            obs, rewards, terminations, truncations, infos = self._step_lean(actions)
            return obs, rewards, terminations, truncations, list(enumerate(infos))
        return self._step_generic(actions)

    def _step_generic(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, _Collected]:
        """Gymnasium's own step, its infos collected unmerged."""
        with self._collecting() as collected:
            obs, rewards, terminations, truncations, _ = super().step(actions)
        return obs, rewards, terminations, truncations, collected

    def _lean(self, actions: Any) -> bool:
        """The usual case, which :meth:`_step_lean` takes: text commands or action indices, autoreset
        on the next step or off."""
        return (
            self.autoreset_mode is not AutoresetMode.SAME_STEP
            and type(actions) in (list, tuple, np.ndarray)
            and type(self.single_action_space) in (spaces.Discrete, spaces.Text)
        )

    def _step_lean(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Gymnasium's step loop written out for the usual case, the sub-envs' infos in their order.

        Gymnasium's generic loop dispatches on the action space and hands each info to ``_add_info``,
        which costs as much as a tenth of a step in a two-env vector env. The results are stored
        element by element, as Gymnasium stores them (same casts, same errors), but into fresh arrays
        every step, so the caller gets them without copies (Gymnasium's generic step, which keeps
        its own in ``self._rewards`` and friends, overwrites every element of those before reading
        them).
        """
        n = self.num_envs
        if len(actions) != n:
            raise ValueError(f"expected {n} actions, one per sub-env, got {len(actions)}")
        env_obs, autoreset = self._env_obs, self._autoreset_envs
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=np.bool_)
        truncated = np.zeros(n, dtype=np.bool_)
        infos: list[dict[str, Any]] = []
        for i, (env, action) in enumerate(zip(self.envs, actions, strict=True)):
            if autoreset[i]:
                if self.autoreset_mode is AutoresetMode.DISABLED:
                    raise AssertionError(f"{self._autoreset_envs=}")  # Gymnasium's check: reset it first
                env_obs[i], info = env.reset()
            else:
                env_obs[i], rewards[i], terminated[i], truncated[i], info = env.step(action)
            infos.append(info)
        self._observations = self._concatenate(self.single_observation_space, env_obs, self._observations)
        self._autoreset_envs = terminated | truncated
        return (
            deepcopy(self._observations) if self.copy else self._observations,
            rewards,
            terminated,
            truncated,
            infos,
        )

    @functools.cached_property
    def _concatenate(self) -> Callable[..., Any]:
        return concatenate.dispatch(type(self.single_observation_space))

    def _reset_collected(self, seed: Any, options: dict[str, Any] | None) -> _Collected:
        with self._collecting() as collected:
            super().reset(seed=seed, options=options)
        return collected
