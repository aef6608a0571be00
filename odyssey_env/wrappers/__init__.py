"""Wrappers that fit odyssey's text env to standard RL code (numpy only, like the env).

Actions: :class:`ValidActions` (``Discrete`` slots over the valid commands, ``action_masks()``) and
:class:`ActionFeatures` (what each slot is). Observations: :class:`BagOfWords` (hashed words of the
text), :class:`StateVector` (the structured state), :class:`ActionMaskObservation` (the mask in a
``Dict`` observation). Each records its arguments (``gymnasium.utils.RecordConstructorArgs``), and
each is selectable by keyword from ``gym.make`` and ``gym.make_vec`` (:func:`wrap` lists them)::

    env = gym.make("Odyssey/Mossfall-v0", max_actions=128, observation="bag_of_words+state")
    env.observation_space  # Box(0.0, 13.8, (1310,), float32)
    env.action_space       # Discrete(128); env.unwrapped is the OdysseyEnv, env.action_masks() the mask

    env = gym.make("Odyssey/Mossfall-v0", max_actions=128, observation="state", action_features=True)
    env.observation_space  # Dict("observation": Box(...), "action_features": Box(0, 1, (128, 49)))
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from odyssey_env.wrappers.actions import DEFAULT_MAX_ACTIONS, ActionFeatures, ValidActions, flatten_valid_actions
from odyssey_env.wrappers.infos import FixedShapeInfo
from odyssey_env.wrappers.observations import ActionMaskObservation, BagOfWords, StateVector

__all__ = [
    "DEFAULT_MAX_ACTIONS",
    "MINIMAL_INFO_KEYS",
    "OBSERVATIONS",
    "WRAPPER_OPTIONS",
    "ActionFeatures",
    "ActionMaskObservation",
    "BagOfWords",
    "FixedShapeInfo",
    "StateVector",
    "ValidActions",
    "flatten_valid_actions",
    "wrap",
]

#: The numeric observations ``observation=`` selects ("text": the env's own).
OBSERVATIONS = ("text", "bag_of_words", "state", "bag_of_words+state")
#: The env's info keys ``minimal_info=True`` keeps: the fixed-shape ones a batching library can stack.
MINIMAL_INFO_KEYS = ("step", "invalid_action", "action_failed", "reward_breakdown")
#: The keywords of :func:`wrap`, which ``gym.make`` and ``gym.make_vec`` accept beside the env's own.
WRAPPER_OPTIONS = (
    "max_actions",
    "observation",
    "bag_of_words_dim",
    "action_features",
    "action_token_dim",
    "action_mask_observation",
    "minimal_info",
)


def wrap(
    env: gym.Env,
    *,
    max_actions: int | None = None,
    observation: str = "text",
    bag_of_words_dim: int = 1024,
    action_features: bool = False,
    action_token_dim: int = 32,
    action_mask_observation: bool = False,
    minimal_info: bool = False,
) -> gym.Env:
    """The wrappers these keywords select, around ``env``, in the one order that composes.

    ``max_actions=K``: :class:`ValidActions` (``Discrete(K)``); ``observation``: one of
    :data:`OBSERVATIONS`; ``action_features``: :class:`ActionFeatures` (``action_token_dim`` hash
    buckets); ``action_mask_observation``: :class:`ActionMaskObservation`; ``minimal_info``: an
    ``info`` whose every entry is a number or a fixed-shape array, the same after a reset as after a
    step, as TorchRL stacks them (:class:`FixedShapeInfo`; no ``actions`` list nor ``command`` text
    from ``ValidActions``; the env itself reports only :data:`MINIMAL_INFO_KEYS`, see :func:`env_kwargs`).
    Order, inside out: ValidActions, FixedShapeInfo, BagOfWords, StateVector, ActionFeatures,
    ActionMaskObservation.
    """
    if observation not in OBSERVATIONS:
        raise ValueError(f"observation must be one of {', '.join(OBSERVATIONS)}; got {observation!r}")
    if max_actions is None and (action_features or action_mask_observation):
        what = "action_features" if action_features else "action_mask_observation"
        raise ValueError(f"{what} describes ValidActions' slots: pass max_actions=K (e.g. 128) too")
    if max_actions is not None:
        env = ValidActions(env, max_actions, list_commands=not minimal_info)
    if minimal_info:
        env = FixedShapeInfo(env)
    if observation in ("bag_of_words", "bag_of_words+state"):
        env = BagOfWords(env, bag_of_words_dim)
    if observation in ("state", "bag_of_words+state"):
        env = StateVector(env)
    if action_features:
        env = ActionFeatures(env, action_token_dim)
    if action_mask_observation:
        env = ActionMaskObservation(env)
    return env


def env_kwargs(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` less the wrapper keywords, with ``minimal_info`` turned into the env's ``info_keys``."""
    out = {k: v for k, v in options.items() if k not in WRAPPER_OPTIONS}
    if options.get("minimal_info") and out.get("info_keys") is None:
        out["info_keys"] = MINIMAL_INFO_KEYS
    return out


def wrapper_kwargs(options: dict[str, Any]) -> dict[str, Any]:
    """The wrapper keywords of ``options``."""
    return {k: v for k, v in options.items() if k in WRAPPER_OPTIONS}
