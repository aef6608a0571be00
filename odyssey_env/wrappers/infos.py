"""An ``info`` that batching libraries can stack: numbers and fixed-shape arrays only.

TorchRL turns every ``info`` entry into a tensor whose shape it learns from a first step, and
Gymnasium's vector envs merge a nested dict leaf by leaf with a mask per leaf; the reward breakdown,
a dict of seven numbers, is the one nested entry of a minimal info, and becomes one array here.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from odyssey_env.rewards import COMPONENTS

__all__ = ["FixedShapeInfo"]


class FixedShapeInfo(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """``info["reward_breakdown"]`` as a ``float32`` array in ``REWARD_COMPONENTS`` order.

    With the env's ``info_keys`` narrowed to flags and counters (``minimal_info=True`` in ``gym.make``
    does both), every entry is then a number or a fixed-shape array, after a reset as after a step.
    Other entries pass unchanged: the info keys the env was asked for decide what else is there.
    """

    #: The order of the reward components in the array (``odyssey_env.rewards.COMPONENTS``).
    REWARD_COMPONENTS: tuple[str, ...] = tuple(COMPONENTS)

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        return obs, self._fixed(info)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, self._fixed(info)

    def _fixed(self, info: dict[str, Any]) -> dict[str, Any]:
        breakdown = info.get("reward_breakdown")
        if not isinstance(breakdown, dict):
            return info
        info = dict(info)
        info["reward_breakdown"] = np.array([breakdown[c] for c in self.REWARD_COMPONENTS], dtype=np.float32)
        return info
