"""Wrappers that fit the text env to RL code: a ``Discrete`` action space over the valid commands.

``OdysseyEnv``'s ``Text`` action space is right for language agents and wrong for most RL code:
its ``sample()`` is gibberish, and policies over a ``Discrete`` space need a fixed number of
actions. :class:`ValidActions` numbers the commands that are valid *now* (the engine lists them,
sound and complete) and pads the list to a fixed ``max_actions``, with the usual action mask::

    import gymnasium as gym
    import odyssey_env
    from odyssey_env.wrappers import ValidActions

    env = ValidActions(gym.make("Odyssey/Mossfall-v0"))
    obs, info = env.reset(seed=0)
    action = env.np_random.choice(info["action_mask"].nonzero()[0])  # or a masked policy
    obs, reward, terminated, truncated, info = env.step(action)
    print(info["actions"][:5])  # the commands behind the valid indices, as a plain list

In vector envs (``gym.make_vec(..., wrappers=[ValidActions])``) ``info["action_mask"]`` batches to
a ``(num_envs, max_actions)`` boolean array, ``info["actions"]`` holds one plain list per sub-env,
and ``envs.call("action_masks")`` follows the maskable-PPO convention.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = ["DEFAULT_MAX_ACTIONS", "ValidActions", "flatten_valid_actions"]

#: Twice the most valid commands seen in long random walks of the shipped games (69, Quiet Bell).
DEFAULT_MAX_ACTIONS = 128


def flatten_valid_actions(grouped: Mapping[str, Sequence[str]], limit: int) -> list[str]:
    """The commands of ``grouped`` (verb -> commands) as one list, in verb order then command order.

    When there are more than ``limit``, each verb keeps an equal share (a verb with fewer commands
    keeps them all and leaves the rest to the others), so a crowded area's many ``pick up`` targets
    cannot push ``enter`` or ``attack`` out of the list. Deterministic: the engine's order, no sets.
    """
    counts = [len(commands) for commands in grouped.values()]
    if sum(counts) <= limit:
        return [c for commands in grouped.values() for c in commands]
    share = 0  # the largest equal share that fits, then one more for the first verbs while room is left
    while sum(min(n, share + 1) for n in counts) <= limit:
        share += 1
    room = limit - sum(min(n, share) for n in counts)
    out: list[str] = []
    for commands in grouped.values():
        take = min(len(commands), share)
        if room and len(commands) > share:
            take, room = take + 1, room - 1
        out.extend(commands[:take])
    return out


class ValidActions(gym.Wrapper[str, np.int64, str, str], gym.utils.RecordConstructorArgs):
    """``Discrete(max_actions)`` over the commands valid now, with ``info["action_mask"]``.

    Index ``i`` plays ``info["actions"][i]`` from the last reset or step. An index the mask rules out
    (a padding slot) is still a legal move for an RL agent without masking: it is played as an
    invalid action (counted in ``info["invalid_action"]``; the turn passes as a wait), never an
    exception. An index outside ``0..max_actions-1`` is a caller bug and raises before anything
    changes. When more commands are valid than ``max_actions``, every verb keeps an equal share
    (:func:`flatten_valid_actions`) and ``info["actions_dropped"]`` says how many were left out.
    """

    def __init__(self, env: gym.Env[str, str], max_actions: int = DEFAULT_MAX_ACTIONS):
        if isinstance(max_actions, bool) or not isinstance(max_actions, int | np.integer) or max_actions < 1:
            raise ValueError(f"max_actions must be a positive integer, got {max_actions!r}")
        gym.utils.RecordConstructorArgs.__init__(self, max_actions=max_actions)
        gym.Wrapper.__init__(self, env)
        self.max_actions = int(max_actions)
        self.action_space = spaces.Discrete(self.max_actions)
        self._commands: list[str] = []
        self._mask = np.zeros(self.max_actions, dtype=np.bool_)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        return obs, self._listed(info)

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        index = self._index(action)
        # A masked slot plays as an invalid action that says which index it was.
        command = self._commands[index] if index < len(self._commands) else f"<action {index} is not valid now>"
        obs, reward, terminated, truncated, info = self.env.step(command)
        info = self._listed(info)
        info["command"] = command
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Which indices are valid now (a copy): the method maskable-PPO implementations call."""
        return self._mask.copy()

    def valid_commands(self) -> list[str]:
        """The commands behind indices ``0..n-1`` now, as a plain list (``envs.call("valid_commands")``)."""
        return list(self._commands)

    # ------------------------------------------------------------------ internals
    def _index(self, action: Any) -> int:
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
            raise TypeError(f"ValidActions takes an integer action index, got {type(action).__name__}")
        if not 0 <= action < self.max_actions:
            raise ValueError(f"action {action} is outside Discrete({self.max_actions})")
        return int(action)

    def _listed(self, info: dict[str, Any]) -> dict[str, Any]:
        grouped = info.get("valid_actions")
        if grouped is None:
            grouped = self.env.unwrapped.valid_actions()
        total = sum(len(commands) for commands in grouped.values())
        self._commands = flatten_valid_actions(grouped, self.max_actions)
        mask = np.zeros(self.max_actions, dtype=np.bool_)
        mask[: len(self._commands)] = True
        self._mask = mask
        info = dict(info)
        info["action_mask"] = mask.copy()  # a fresh array a step: buffers that keep infos keep this one
        info["actions"] = list(self._commands)
        info["actions_dropped"] = total - len(self._commands)
        return info
