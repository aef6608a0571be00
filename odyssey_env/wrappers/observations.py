"""Wrappers that fit the text env's observations to RL code: numeric vectors and ``Dict`` observations.

SB3, CleanRL and TorchRL policies take arrays, not ``Text``. Three numeric views, each a Gymnasium
observation wrapper that records its arguments (so ``env.spec`` rebuilds the same stack)::

    env = BagOfWords(env, dim=1024)  # hashed words of the observation text: Box(dim)
    env = StateVector(env)           # area, carried things, stats, quest progress: Box(n), names in .feature_names
    env = StateVector(BagOfWords(env))  # both, one Box (the state vector appended to the words)

and :class:`ActionMaskObservation` for libraries that read the mask from the observation
(``{"observation": ..., "action_mask": ...}``). All of them are numpy only, like the env.
"""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from odyssey_env.env import MAX_OBSERVATION_LENGTH, PLAYER, OdysseyEnv
from odyssey_env.wrappers.actions import ValidActions, _add_key, _find, _with_key
from odyssey_env.wrappers.features import StateFeatures, TokenHasher

__all__ = ["ActionMaskObservation", "BagOfWords", "StateVector"]


class BagOfWords(gym.ObservationWrapper[np.ndarray, Any, str], gym.utils.RecordConstructorArgs):
    """The observation text as a bounded, hashed bag of words: ``Box(0, log1p(16384), (dim,), float32)``.

    Entry ``b`` is ``log1p`` of how many words of the text hash to bucket ``b`` (CRC-32, the same in
    every process). Words are lower-cased and instance numbers stripped (``cave_stalker_6`` is
    ``cave_stalker``); bare numbers are left out unless ``numbers=True`` (the state vector carries
    the ones that matter, scaled). Needs the text observation: put it directly on the env (or on
    :class:`~odyssey_env.wrappers.ValidActions`), below the other observation wrappers.
    """

    def __init__(self, env: gym.Env[str, Any], dim: int = 1024, numbers: bool = False):
        gym.utils.RecordConstructorArgs.__init__(self, dim=dim, numbers=numbers)
        gym.ObservationWrapper.__init__(self, env)
        if not isinstance(env.observation_space, spaces.Text):
            raise ValueError(
                f"BagOfWords reads the observation text, but this env's observations are "
                f"{type(env.observation_space).__name__}: apply it below the other observation wrappers"
            )
        self.hasher = TokenHasher(dim, numbers=numbers)
        high = np.float32(np.log1p(MAX_OBSERVATION_LENGTH))
        self.observation_space = spaces.Box(0.0, high, (self.hasher.dim,), dtype=np.float32)

    def observation(self, observation: str) -> np.ndarray:
        return self.hasher.counts(observation)


class StateVector(gym.ObservationWrapper[np.ndarray, Any, Any], gym.utils.RecordConstructorArgs):
    """The agent's state as numbers (:class:`~odyssey_env.wrappers.features.StateFeatures`): a ``Box``.

    Replaces a ``Text`` observation, or is appended to a ``Box`` one (``StateVector(BagOfWords(env))``
    is one vector of both). ``feature_names`` says what every entry is (``area=smithy_yard``,
    ``carried=iron_bar``, ``health_fraction``, ``quest_fraction``, ...); the layout is the game's, the
    same for every seed. ``surroundings=False`` leaves out what lies and who stands in the area.

    It reads the engine directly (what the agent itself sees and is, never hidden state: the text
    says all of it, the quest progress comes with ``info["quest"]``), so it must sit on an
    :class:`~odyssey_env.env.OdysseyEnv` stack.
    """

    def __init__(self, env: gym.Env[Any, Any], surroundings: bool = True):
        gym.utils.RecordConstructorArgs.__init__(self, surroundings=surroundings)
        gym.ObservationWrapper.__init__(self, env)
        game = getattr(env.unwrapped, "game", None)
        if game is None or not hasattr(env.unwrapped, "engine"):
            raise ValueError("StateVector reads an odyssey game's state: wrap an OdysseyEnv (gym.make('Odyssey/...'))")
        self.features = StateFeatures(game, surroundings=surroundings)
        inner = env.observation_space
        low = np.full(self.features.size, -1.0, dtype=np.float32)
        high = np.full(self.features.size, StateFeatures.HIGH, dtype=np.float32)
        names = list(self.features.names)
        if isinstance(inner, spaces.Box) and inner.dtype == np.float32 and len(inner.shape) == 1:
            self._append = True
            low, high = np.concatenate([inner.low, low]), np.concatenate([inner.high, high])
            names = [f"word_bucket={i}" for i in range(inner.shape[0])] + names
        elif isinstance(inner, spaces.Text):
            self._append = False
        else:
            raise ValueError(
                f"StateVector replaces a Text observation or extends a 1-D float32 Box, not {inner}: "
                "apply it below the Dict-making wrappers (ActionFeatures, ActionMaskObservation)"
            )
        #: What each entry of the observation is.
        self.feature_names: tuple[str, ...] = tuple(names)
        self.observation_space = spaces.Box(low, high, dtype=np.float32)

    def observation(self, observation: Any) -> np.ndarray:
        engine = cast(OdysseyEnv, self.env.unwrapped).engine
        assert engine is not None, "an observation comes after reset()"
        vector = self.features(engine, PLAYER)
        if self._append:
            return np.concatenate([observation, vector])
        return vector


class ActionMaskObservation(gym.ObservationWrapper[dict[str, Any], np.int64, Any], gym.utils.RecordConstructorArgs):
    """``{"observation": <the inner observation>, "action_mask": MultiBinary(max_actions)}``.

    For libraries that read the mask from the observation (RLlib's and TorchRL's masked policies,
    PettingZoo-style code) rather than from ``action_masks()``, which stays available. Gains the key
    if the observation already is a ``Dict`` (from :class:`~odyssey_env.wrappers.ActionFeatures`).
    Needs a :class:`~odyssey_env.wrappers.ValidActions` below it.
    """

    def __init__(self, env: gym.Env[Any, np.int64]):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        try:
            self._slots: ValidActions = _find(env, ValidActions)
        except LookupError:
            raise ValueError("ActionMaskObservation needs ValidActions below it: wrap the env in it first") from None
        mask_space = spaces.MultiBinary(self._slots.max_actions)
        self.observation_space = _with_key(env.observation_space, "action_mask", mask_space)

    def observation(self, observation: Any) -> dict[str, Any]:
        return _add_key(observation, "action_mask", self._slots._mask.astype(np.int8))
