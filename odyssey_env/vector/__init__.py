"""Vector envs whose overhead stays small next to a step: ``gym.make_vec("Odyssey/Mossfall-v0", 8)``.

Gymnasium merges the sub-envs' ``info`` dicts one sub-env and one key at a time, allocating a value
array and a mask array for every leaf of every sub-env's info (``VectorEnv._add_info``). An odyssey
info has about twenty leaves (reward components, quest progress, flags, events; twenty-five with
``ValidActions``), so that merge costs a fifth to a third of a step. The classes here gather the
sub-envs' infos and merge them once per step by a plan compiled from their shape
(:class:`_InfoPlan`), into exactly what Gymnasium's merge gives (same keys, order, masks and dtypes;
anything unusual, such as sub-envs whose infos differ in shape, goes through Gymnasium's own merge
unchanged). ``make_vector_env`` goes further: its infos merge each key when it is first read
(:class:`~odyssey_env.vector.infos._LazyInfos`, a dict with Gymnasium's keys from the start), so an
RL loop that reads ``action_mask`` pays for that key alone; ``lazy_infos=False`` merges them all every
step. Fewer leaves help too: ``info_keys=`` on the env.

:class:`OdysseyAsyncVectorEnv` is not Gymnasium's ``AsyncVectorEnv``: one process per core rather than
per sub-env (the calling process steps a share too), messages through pipes as Gymnasium's. The
package's modules: ``infos`` (the merge), ``sync`` and ``parallel`` (the async env and its workers).

:func:`make_vector_env` is the ``vector_entry_point`` of every registered odyssey id, so
``gym.make_vec(id, num_envs=N)`` (no ``vectorization_mode``) builds these; ``asynchronous=True`` steps
the sub-envs in parallel, and the keywords of ``gym.make`` (``max_actions=K`` for
:class:`~odyssey_env.wrappers.ValidActions`, ``observation=``, ...) build each sub-env.
``vectorization_mode="sync"`` or ``"async"`` still
gives Gymnasium's own classes (correct, with this package's fast shared-memory text codec, and with
Gymnasium's slower info merge). ``python benchmarks/vector_envs.py`` measures all of them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from odyssey_env.vector.infos import batch_infos
from odyssey_env.vector.parallel import OdysseyAsyncVectorEnv
from odyssey_env.vector.sync import OdysseySyncVectorEnv

__all__ = ["OdysseyAsyncVectorEnv", "OdysseySyncVectorEnv", "batch_infos", "make_vector_env"]


def _sub_env(
    max_episode_steps: int | None, env_wrappers: tuple[Callable[[gym.Env], gym.Env], ...], options: dict[str, Any]
) -> gym.Env:
    from odyssey_env.registration import make_env

    env = make_env(**options)
    if max_episode_steps is not None:
        env = gym.wrappers.TimeLimit(env, max_episode_steps)
    for wrapper in env_wrappers:
        env = wrapper(env)
    return env


def make_vector_env(
    num_envs: int = 1,
    *,
    asynchronous: bool = False,
    workers: int | None = None,
    max_episode_steps: int | None = None,
    autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
    lazy_infos: bool = True,
    env_wrappers: Sequence[Callable[[gym.Env], gym.Env]] = (),
    **options: Any,
) -> VectorEnv:
    """``num_envs`` odyssey envs as one vector env; ``options`` build each as ``gym.make`` would.

    ``options`` are ``OdysseyEnv``'s arguments and the RL keywords of :func:`odyssey_env.wrappers.wrap`
    (``max_actions=K`` for a ``Discrete(K)`` action space over the valid commands, ``observation=``,
    ``action_features=``, ...). ``asynchronous`` steps the sub-envs in parallel
    (:class:`OdysseyAsyncVectorEnv`: ``workers`` processes plus the calling one); ``max_episode_steps`` truncates
    (``gym.make_vec`` passes the registered 500; ``-1`` or ``None`` for no limit). ``autoreset_mode``
    is any of Gymnasium's (``"SameStep"`` and ``"Disabled"`` are what TorchRL asks for).
    ``env_wrappers`` are applied to every sub-env, outermost last: Gymnasium's ``make_vec`` refuses
    its own ``wrappers=`` argument for a vector entry point before calling it, so they come here.
    ``lazy_infos`` merges each info key when it is first read (an RL loop reading ``action_mask``
    pays for that key alone); ``False`` merges every key every step, as Gymnasium does.
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    if max_episode_steps is not None and max_episode_steps < 0:
        max_episode_steps = None  # gym.make's convention: -1 means no limit
    make: Callable[[], gym.Env] = functools.partial(_sub_env, max_episode_steps, tuple(env_wrappers), options)
    autoreset_mode = AutoresetMode(autoreset_mode)
    if asynchronous:
        envs: OdysseyAsyncVectorEnv | OdysseySyncVectorEnv = OdysseyAsyncVectorEnv(
            [make] * num_envs,
            workers=workers,
            copy=False,
            autoreset_mode=autoreset_mode,
            lazy_infos=lazy_infos,
        )
    elif workers is not None:
        raise ValueError("workers is an option of asynchronous=True")
    else:
        envs = OdysseySyncVectorEnv([make] * num_envs, copy=False, autoreset_mode=autoreset_mode, lazy_infos=lazy_infos)
    # Text observations are a fresh tuple of immutable strings every step, nothing to protect by
    # copying; numeric ones are batched into one array that the next step overwrites, which a
    # replay buffer keeping the array it was given must not see: those are copied (Gymnasium's default).
    envs.copy = not isinstance(envs.single_observation_space, spaces.Text)
    return envs
