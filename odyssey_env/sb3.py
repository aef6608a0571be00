"""Stable-Baselines3 on odyssey's own vector envs: an SB3 ``VecEnv`` over a Gymnasium ``VectorEnv``.

SB3 takes only its own ``VecEnv`` classes. Its ``DummyVecEnv`` / ``SubprocVecEnv`` of ``gym.make``
envs work (``gym.make(id, max_actions=128, observation="bag_of_words+state")`` is all they need), but
step the sub-envs one process each and deep-copy every info; :class:`OdysseyVecEnv` puts SB3 on
:func:`odyssey_env.vector.make_vector_env` instead (one process per core, shared memory)::

    from sb3_contrib import MaskablePPO
    from odyssey_env.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env("Odyssey/Mossfall-v0", n_envs=8, asynchronous=True,
                            max_actions=128, observation="bag_of_words+state")
    MaskablePPO("MlpPolicy", venv).learn(100_000)

SB3's conventions are kept: an episode's end resets that sub-env within the same step, its last
observation in ``infos[i]["terminal_observation"]`` and ``infos[i]["TimeLimit.truncated"]`` set;
``env_method("action_masks")`` (what ``sb3_contrib``'s ``get_action_masks`` calls) answers from the
masks the last step already brought back, without a round trip to the sub-envs. Needs the ``sb3``
extra (``stable-baselines3``; ``sb3-contrib`` for MaskablePPO).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import DictInfoToList

from odyssey_env.extras import missing_extra
from odyssey_env.vector.parallel import OdysseyAsyncVectorEnv

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn
except ModuleNotFoundError as exc:  # pragma: no cover - exercised in a venv without the extra
    if exc.name != "stable_baselines3" and not str(exc.name).startswith("stable_baselines3."):
        raise
    raise missing_extra("the SB3 adapter", "sb3", "stable_baselines3") from None

__all__ = ["OdysseyVecEnv", "make_sb3_vec_env"]

#: The vector envs that answer get_attr / set_attr / call, which an SB3 VecEnv must forward.
_Calls = SyncVectorEnv | AsyncVectorEnv | OdysseyAsyncVectorEnv
_CALLS = (SyncVectorEnv, AsyncVectorEnv, OdysseyAsyncVectorEnv)


def make_sb3_vec_env(env_id: str, n_envs: int = 1, *, seed: int | None = None, **kwargs: Any) -> OdysseyVecEnv:
    """``n_envs`` envs of ``env_id`` as an SB3 ``VecEnv``; ``kwargs`` as for ``gym.make_vec``.

    ``asynchronous=True`` steps them in parallel; ``max_actions``, ``observation`` and the other RL
    keywords build each sub-env (:func:`odyssey_env.wrappers.wrap`). ``seed`` seeds the first reset
    (sub-env ``i`` gets ``seed + i``), as SB3's ``make_vec_env`` does.
    """
    venv = gym.make_vec(env_id, num_envs=n_envs, autoreset_mode=AutoresetMode.DISABLED, **kwargs)
    if not isinstance(venv, _CALLS):  # get_attr / set_attr / call are theirs, not VectorEnv's
        raise TypeError(f"{env_id} made a {type(venv).__name__}; OdysseyVecEnv needs one of {_CALLS}")
    out = OdysseyVecEnv(venv)
    if seed is not None:
        out.seed(seed)
    return out


class OdysseyVecEnv(VecEnv):
    """An SB3 ``VecEnv`` stepping a Gymnasium ``VectorEnv`` built with ``autoreset_mode="Disabled"``.

    Sub-envs whose episode ended are reset right after the step, together (``reset_mask``), which is
    SB3's same-step autoreset without the extra work Gymnasium's same-step mode does for every step.
    Observations must be numeric (``observation="bag_of_words+state"`` or another of
    :data:`odyssey_env.wrappers.OBSERVATIONS`): SB3's policies take no text.
    """

    def __init__(self, venv: _Calls):
        if venv.metadata.get("autoreset_mode") is not AutoresetMode.DISABLED:
            raise ValueError(
                "OdysseyVecEnv resets finished sub-envs itself: build the vector env with "
                "autoreset_mode='Disabled' (make_sb3_vec_env does)"
            )
        if _has_text(venv.single_observation_space):
            raise ValueError(
                "SB3 policies take numbers, not text: build the envs with a numeric observation, "
                "e.g. observation='bag_of_words+state' (see odyssey_env.wrappers.OBSERVATIONS)"
            )
        self.venv = venv
        self._infos = DictInfoToList(venv)
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self.metadata = dict(venv.metadata)
        self._masks: np.ndarray | None = None
        self._actions: np.ndarray | None = None

    # ------------------------------------------------------------------ SB3's VecEnv
    def reset(self) -> VecEnvObs:
        seeds = self._seeds if any(s is not None for s in self._seeds) else None
        options = self._options[0] if self._options and all(o == self._options[0] for o in self._options) else None
        if options is None and any(self._options):
            raise ValueError("OdysseyVecEnv resets every sub-env with the same options: set_options(one dict)")
        # Gymnasium types VectorWrapper.reset's seed as one int; vector envs take one per sub-env
        obs, infos = self._infos.reset(seed=seeds, options=options or None)  # type: ignore[arg-type]
        self.reset_infos = infos
        self._masks = _masks(infos, self.num_envs, None)
        self._reset_seeds()
        self._reset_options()
        out: VecEnvObs = obs
        return out

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        obs, rewards, terminated, truncated, infos = self._infos.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        masks = _masks(infos, self.num_envs, self._masks)
        for i in np.flatnonzero(dones):
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            infos[i]["terminal_observation"] = _row(obs, i)
        if dones.any():
            reset_obs, reset_infos = self._infos.reset(options={"reset_mask": dones})
            obs = _merge_rows(obs, reset_obs, dones)
            for i in np.flatnonzero(dones):
                self.reset_infos[i] = reset_infos[i]
            masks = _masks(reset_infos, self.num_envs, masks, only=dones)
        for i in np.flatnonzero(~dones):
            infos[i]["TimeLimit.truncated"] = False
        self._masks = masks
        return obs, np.asarray(rewards, dtype=np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        values = self.venv.get_attr(attr_name)
        return [values[i] for i in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        if indices is not None and list(self._get_indices(indices)) != list(range(self.num_envs)):
            raise ValueError("OdysseyVecEnv sets attributes on every sub-env at once (indices=None)")
        self.venv.set_attr(attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        chosen = list(self._get_indices(indices))
        if method_name == "action_masks" and not method_args and not method_kwargs and self._masks is not None:
            return [self._masks[i].copy() for i in chosen]
        values = self.venv.call(method_name, *method_args, **method_kwargs)
        return [values[i] for i in chosen]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        # Sub-envs may live in other processes; ask each for its wrapper chain by name.
        chains = self.venv.call("__str__")  # "<TimeLimit<ValidActions<OdysseyEnv<...>>>>"
        return [f"<{wrapper_class.__name__}<" in chains[i] for i in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs  # a text game: nothing to draw

    def action_masks(self) -> np.ndarray:
        """The ``(n_envs, max_actions)`` masks of the current observations."""
        if self._masks is None:
            raise RuntimeError("reset() first")
        return self._masks.copy()


def _has_text(space: spaces.Space[Any]) -> bool:
    if isinstance(space, spaces.Text):
        return True
    if isinstance(space, spaces.Dict):
        return any(_has_text(s) for s in space.spaces.values())
    return False


def _masks(
    infos: list[dict[str, Any]], n: int, previous: np.ndarray | None, only: np.ndarray | None = None
) -> np.ndarray | None:
    """The action masks in ``infos`` (rows ``only`` from them, the rest from ``previous``)."""
    rows = [info.get("action_mask") for info in infos]
    if all(r is None for r in rows):
        return previous
    if previous is None:
        width = len(next(r for r in rows if r is not None))
        out = np.zeros((n, width), dtype=np.bool_)
    else:
        out = previous.copy()
    for i, row in enumerate(rows):
        if row is not None and (only is None or only[i]):
            out[i] = row
    return out


def _row(obs: Any, i: int | np.integer[Any]) -> Any:
    if isinstance(obs, dict):
        return {k: np.array(v[i], copy=True) for k, v in obs.items()}
    return np.array(obs[i], copy=True)


def _merge_rows(obs: Any, fresh: Any, rows: np.ndarray) -> Any:
    """``obs`` with the ``rows`` taken from ``fresh`` (the observations after a masked reset)."""
    if isinstance(obs, dict):
        return {k: _merge_rows(v, fresh[k], rows) for k, v in obs.items()}
    out = np.array(obs, copy=True)
    out[rows] = fresh[rows]
    return out
