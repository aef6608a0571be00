"""Gymnasium registration of odyssey's games, and the entry point ``gym.make`` calls.

Registering is cheap and imports nothing of the engine (game names come from folder names), because
it runs whenever Gymnasium is imported in an environment where odyssey-gym is installed: Gymnasium
1.x loads no plugins, so the package installs a start-up hook (``_odyssey_gym_hook``, see
``odyssey-gym.pth``) that registers the ids right after ``import gymnasium``. A process that never
imports ``odyssey_env`` (an SB3 ``SubprocVecEnv`` worker started by spawn, a script that only says
``gym.make("Odyssey/Mossfall-v0")``) therefore finds every id. ``[project.entry-points."gymnasium.envs"]``
names :func:`register_envs` too, for tools and Gymnasium versions that read that group.

:func:`make_env` is the ``entry_point`` of every id: it builds the :class:`~odyssey_env.env.OdysseyEnv`
and the wrappers the RL keywords ask for (``max_actions=128``, ``observation="state"``, ...; see
:func:`odyssey_env.wrappers.wrap`), so ``gym.make(id, max_actions=128)`` works as RL code writes it.
Gymnasium's ``env.spec`` then records those keywords, and ``gym.make(env.spec)`` rebuilds the same stack.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym

__all__ = [
    "DEFAULT_MAX_EPISODE_STEPS",
    "ENTRY_POINT",
    "VECTOR_ENTRY_POINT",
    "env_id",
    "make_env",
    "register_envs",
    "register_id",
]

#: The paper's episode budget (500 steps, section 4): registered ids truncate there unless told
#: otherwise (``gym.make(id, max_episode_steps=N)``, ``-1`` for none).
DEFAULT_MAX_EPISODE_STEPS = 500
ENTRY_POINT = "odyssey_env.registration:make_env"
#: ``gym.make_vec(id, num_envs)`` without a ``vectorization_mode`` builds odyssey's vector env (see odyssey_env.vector).
VECTOR_ENTRY_POINT = "odyssey_env.vector:make_vector_env"
_GAMES_DIR = Path(__file__).parent / "games"  # odyssey_env.game.GAMES_DIR, without importing the engine


def env_id(game_name: str) -> str:
    """The Gymnasium id of one of odyssey's own games: ``quiet_bell`` -> ``Odyssey/QuietBell-v0``."""
    title = "".join(part.capitalize() for part in game_name.split("_"))
    return f"Odyssey/{title}-v0"


def register_id(ident: str, game: str, **kwargs: Any) -> None:
    """Register ``ident`` for ``game`` (a name or folder) with odyssey's entry points and episode budget."""
    gym.register(
        id=ident,
        entry_point=ENTRY_POINT,
        vector_entry_point=VECTOR_ENTRY_POINT,
        max_episode_steps=DEFAULT_MAX_EPISODE_STEPS,
        kwargs={"game": game, **kwargs},
    )


def register_envs() -> None:
    """Register ``Odyssey/<Name>-v0`` for every shipped game, and every game in the user games directory.

    A game imported from the reference release (``odyssey paper import``) registers under the id its
    ``paper.json`` names (``AgentOdyssey/Remnant-v0``); one made by ``odyssey generate`` under
    ``Odyssey/<Name>-v0``. A user game with a shipped game's name is the shipped one's and is skipped.
    Ids already registered are left alone.
    """
    from odyssey_env.userdir import find, provenance, user_games

    shipped = set()
    for path in sorted(_GAMES_DIR.iterdir()):
        if (path / "world.json").is_file():
            shipped.add(path.name)
            ident = env_id(path.name)
            if ident not in gym.registry:
                register_id(ident, path.name)
    for name in user_games():
        folder = find(name)
        if name in shipped or folder is None:
            continue
        record = provenance(folder)
        ident = record["env_id"] if record else env_id(name)
        if ident not in gym.registry:
            register_id(ident, name)


def make_env(game: str = "mossfall", **options: Any) -> gym.Env:
    """The env ``gym.make`` builds: an ``OdysseyEnv`` of ``game``, wrapped as the RL keywords ask.

    The keywords of :func:`odyssey_env.wrappers.wrap` select wrappers; every other keyword goes to
    :class:`~odyssey_env.env.OdysseyEnv`. A ``render_mode`` other than ``"ansi"`` or ``"human"`` is
    refused with a ``TypeError``, the error SB3's ``make_vec_env`` expects from an env that cannot
    render its default ``"rgb_array"`` (it then builds the env without one).
    """
    from odyssey_env.env import OdysseyEnv
    from odyssey_env.wrappers import env_kwargs, wrap, wrapper_kwargs

    render_mode = options.get("render_mode")
    if render_mode is not None and render_mode not in OdysseyEnv.metadata["render_modes"]:
        raise TypeError(
            f"render_mode={render_mode!r} is not supported: odyssey renders text "
            f"({' or '.join(map(repr, OdysseyEnv.metadata['render_modes']))}), or leave render_mode unset"
        )
    env = OdysseyEnv(game, **env_kwargs(options))
    return wrap(env, **wrapper_kwargs(options))
