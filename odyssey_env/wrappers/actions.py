"""Wrappers that fit the text env's actions to RL code: ``Discrete`` slots over the valid commands.

``OdysseyEnv``'s ``Text`` action space is right for language agents and wrong for most RL code:
its ``sample()`` is gibberish, and policies over a ``Discrete`` space need a fixed number of
actions. :class:`ValidActions` numbers the commands that are valid *now* (the engine lists them,
sound and complete) and pads the list to a fixed ``max_actions``, with the usual action mask::

    import gymnasium as gym
    from odyssey_env.wrappers import ValidActions

    env = ValidActions(gym.make("Odyssey/Mossfall-v0"))  # or gym.make("Odyssey/Mossfall-v0", max_actions=128)
    obs, info = env.reset(seed=0)
    action = env.np_random.choice(info["action_mask"].nonzero()[0])  # or a masked policy
    obs, reward, terminated, truncated, info = env.step(action)
    print(info["actions"][:5])  # the commands behind the valid indices, as a plain list

In vector envs (``gym.make_vec(id, n, max_actions=128)``) ``info["action_mask"]`` batches to a
``(num_envs, max_actions)`` boolean array, ``info["actions"]`` holds one plain list per sub-env,
and ``envs.call("action_masks")`` follows the maskable-PPO convention. Because slot *i* is a
different command every step, :class:`ActionFeatures` tells the policy what each slot is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, SupportsFloat, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from odyssey_env.wrappers.features import TokenHasher, slot_features

if TYPE_CHECKING:
    from odyssey_env.env import OdysseyEnv

__all__ = ["DEFAULT_MAX_ACTIONS", "ActionFeatures", "ValidActions", "flatten_valid_actions"]

#: Twice the most valid commands seen in long random walks of the shipped games (69, Quiet Bell).
DEFAULT_MAX_ACTIONS = 128


def _shares(counts: Sequence[int], limit: int) -> list[int]:
    """How many commands each verb keeps when there are more than ``limit`` (see flatten_valid_actions)."""
    if sum(counts) <= limit:
        return list(counts)
    share = 0  # the largest equal share that fits, then one more for the first verbs while room is left
    while sum(min(n, share + 1) for n in counts) <= limit:
        share += 1
    room = limit - sum(min(n, share) for n in counts)
    takes = []
    for n in counts:
        take = min(n, share)
        if room and n > share:
            take, room = take + 1, room - 1
        takes.append(take)
    return takes


def flatten_valid_actions(grouped: Mapping[str, Sequence[str]], limit: int) -> list[str]:
    """The commands of ``grouped`` (verb -> commands) as one list, in verb order then command order.

    When there are more than ``limit``, each verb keeps an equal share (a verb with fewer commands
    keeps them all and leaves the rest to the others), so a crowded area's many ``pick up`` targets
    cannot push ``enter`` or ``attack`` out of the list. Deterministic: the engine's order, no sets.
    """
    takes = _shares([len(commands) for commands in grouped.values()], limit)
    return [c for commands, take in zip(grouped.values(), takes, strict=True) for c in commands[:take]]


class ValidActions(gym.Wrapper[Any, np.int64, Any, str], gym.utils.RecordConstructorArgs):
    """``Discrete(max_actions)`` over the commands valid now, with ``info["action_mask"]``.

    Index ``i`` plays ``info["actions"][i]`` from the last reset or step. An index the mask rules out
    (a padding slot) is still a legal move for an RL agent without masking: it is played as an
    invalid action (counted in ``info["invalid_action"]``; the turn passes as a wait), never an
    exception. An index outside ``0..max_actions-1`` is a caller bug and raises before anything
    changes. When more commands are valid than ``max_actions``, every verb keeps an equal share
    (:func:`flatten_valid_actions`) and ``info["actions_dropped"]`` says how many were left out.

    ``info`` has the same keys after a reset as after a step (``command`` is ``""`` after a reset),
    as batching libraries need. ``list_commands=False`` leaves out the two entries whose size varies
    (``actions``, a list, and ``command``, a text): the commands stay available from
    :meth:`valid_commands`, and every entry this wrapper adds then has a fixed shape.
    """

    def __init__(self, env: gym.Env[Any, str], max_actions: int = DEFAULT_MAX_ACTIONS, list_commands: bool = True):
        if isinstance(max_actions, bool) or not isinstance(max_actions, int | np.integer) or max_actions < 1:
            raise ValueError(f"max_actions must be a positive integer, got {max_actions!r}")
        gym.utils.RecordConstructorArgs.__init__(self, max_actions=max_actions, list_commands=list_commands)
        # Gymnasium types a Wrapper's inner env with the wrapper's own types (Env[Any, np.int64] here), not
        # the wrapped env's (Env[Any, str]): it cannot describe a wrapper that changes the action type.
        gym.Wrapper.__init__(self, env)  # type: ignore[misc]
        self.max_actions = int(max_actions)
        self.list_commands = bool(list_commands)
        self.action_space = spaces.Discrete(self.max_actions)
        self._commands: list[str] = []
        self._verbs: list[str] = []
        self._mask = np.zeros(self.max_actions, dtype=np.bool_)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        return obs, self._listed(info, "")

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        index = self._index(action)
        # A masked slot plays as an invalid action that says which index it was.
        command = self._commands[index] if index < len(self._commands) else f"<action {index} is not valid now>"
        obs, reward, terminated, truncated, info = self.env.step(command)  # type: ignore[arg-type]  # as in __init__
        return obs, reward, terminated, truncated, self._listed(info, command)

    def action_masks(self) -> np.ndarray:
        """Which indices are valid now (a copy): the method maskable-PPO implementations call."""
        return self._mask.copy()

    def valid_commands(self) -> list[str]:
        """The commands behind indices ``0..n-1`` now, as a plain list (``envs.call("valid_commands")``)."""
        return list(self._commands)

    def slot_verbs(self) -> list[str]:
        """The verb of each listed command, in slot order (``pick up`` for ``pick up apple``)."""
        return list(self._verbs)

    # ------------------------------------------------------------------ internals
    def _index(self, action: Any) -> int:
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            action = action.reshape(()).item()  # SB3 and TorchRL hand over 0-d or 1-element arrays
        if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
            raise TypeError(f"ValidActions takes an integer action index, got {type(action).__name__}")
        if not 0 <= action < self.max_actions:
            raise ValueError(f"action {action} is outside Discrete({self.max_actions})")
        return int(action)

    def _listed(self, info: dict[str, Any], command: str) -> dict[str, Any]:
        grouped = info.get("valid_actions")
        if grouped is None:
            grouped = cast("OdysseyEnv", self.env.unwrapped).valid_actions()
        counts = [len(commands) for commands in grouped.values()]
        takes = _shares(counts, self.max_actions)
        commands: list[str] = []
        verbs: list[str] = []
        for (verb, listed), take in zip(grouped.items(), takes, strict=True):
            commands.extend(listed[:take])
            verbs.extend([verb] * take)
        self._commands, self._verbs = commands, verbs
        mask = np.zeros(self.max_actions, dtype=np.bool_)
        mask[: len(commands)] = True
        self._mask = mask
        info = dict(info)
        info["action_mask"] = mask.copy()  # a fresh array a step: buffers that keep infos keep this one
        if self.list_commands:
            info["actions"] = list(commands)
        info["actions_dropped"] = sum(counts) - len(commands)
        if self.list_commands:
            info["command"] = command
        return info


class ActionFeatures(gym.ObservationWrapper[dict[str, Any], np.int64, Any], gym.utils.RecordConstructorArgs):
    """Adds ``"action_features"``: what each of :class:`ValidActions`' slots is, one row per slot.

    A row is the slot's verb, one-hot over the game's verbs, then the words of its arguments hashed
    into ``token_dim`` buckets (0/1, instance numbers stripped: :class:`~odyssey_env.wrappers.features.TokenHasher`);
    padding rows are zero. Slot *i* is a different command every step, so a policy that sees only
    the state and the mask must guess what an index does; one that sees these rows can score each
    slot by its content (MaskablePPO learned markedly better with the verb rows alone).

    The observation becomes a ``Dict``: ``{"observation": <the inner observation>, "action_features":
    Box(0, 1, (max_actions, n_verbs + token_dim))}``, or gains the key if it already is one. Needs a
    :class:`ValidActions` below it (``gym.make(id, max_actions=K, action_features=True)`` builds both).
    """

    def __init__(self, env: gym.Env[Any, np.int64], token_dim: int = 32):
        gym.utils.RecordConstructorArgs.__init__(self, token_dim=token_dim)
        gym.ObservationWrapper.__init__(self, env)
        try:
            self._slots: ValidActions = _find(env, ValidActions)
        except LookupError:
            raise ValueError(
                "ActionFeatures describes ValidActions' slots: wrap the env in ValidActions first"
            ) from None
        self.verbs: tuple[str, ...] = tuple(cast("OdysseyEnv", env.unwrapped).game.rules.actions)
        self._verb_index = {verb: i for i, verb in enumerate(self.verbs)}
        self._hasher = TokenHasher(token_dim)
        self.token_dim = self._hasher.dim
        shape = (self._slots.max_actions, len(self.verbs) + self.token_dim)
        self.observation_space = _with_key(
            env.observation_space, "action_features", spaces.Box(0.0, 1.0, shape, dtype=np.float32)
        )

    def observation(self, observation: Any) -> dict[str, Any]:
        slots = self._slots
        rows = slot_features(slots._commands, slots._verbs, self._verb_index, self._hasher, slots.max_actions)
        return _add_key(observation, "action_features", rows)


def _find(env: gym.Env, kind: type) -> Any:
    """The nearest wrapper of ``kind`` at or below ``env``."""
    while True:
        if isinstance(env, kind):
            return env
        if not isinstance(env, gym.Wrapper):
            raise LookupError(kind.__name__)
        env = env.env


def _with_key(space: spaces.Space[Any], key: str, added: spaces.Space[Any]) -> spaces.Dict:
    """The ``Dict`` space of an observation that gains ``key`` (a non-Dict becomes ``"observation"``)."""
    if isinstance(space, spaces.Dict):
        if key in space.spaces:
            raise ValueError(f"the observation already has a {key!r} entry")
        return spaces.Dict({**space.spaces, key: added})
    return spaces.Dict({"observation": space, key: added})


def _add_key(observation: Any, key: str, value: Any) -> dict[str, Any]:
    if isinstance(observation, dict):
        return {**observation, key: value}
    return {"observation": observation, key: value}
