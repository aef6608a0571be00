"""odyssey_env: the AgentOdyssey engine, its shipped games, and their Gymnasium face.

Every shipped game is registered as ``Odyssey/<Name>-v0`` as soon as Gymnasium is imported (an
installed start-up hook does it: see :mod:`odyssey_env.registration`), and again by importing this
package (for interpreters started without site hooks, ``python -S``)::

    import gymnasium as gym

    env = gym.make("Odyssey/Mossfall-v0")  # episodes end after 500 steps, the paper's budget
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("wait")

Several agents in one world (PettingZoo, the ``multiagent`` extra)::

    par = odyssey_env.parallel_env("quiet_bell", agents=3)   # ParallelEnv
    aec = odyssey_env.aec_env("quiet_bell", agents=["ada", "bo"])  # AECEnv

RL code picks numeric observations and a ``Discrete`` action space by keyword (``odyssey_env.wrappers``)::

    env = gym.make("Odyssey/Mossfall-v0", max_actions=128, observation="bag_of_words+state")

Nothing heavy is imported here, not even the engine (``Game``, ``load_game`` and the rest load on
first use): gymnasium is the only dependency of this package, and PettingZoo is imported only when
a multi-agent env is asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from odyssey_env.registration import VECTOR_ENTRY_POINT, env_id, register_envs, register_id

if TYPE_CHECKING:
    from odyssey_env.game import Game, GameError, available_games, load_game

__version__ = "0.1.0"
__all__ = [
    "VECTOR_ENTRY_POINT",
    "Game",
    "GameError",
    "OdysseyEnv",
    "aec_env",
    "available_games",
    "env_id",
    "load_game",
    "parallel_env",
    "register_game",
]
#: Names this package exports from odyssey_env.game, loaded on first use (the engine is not light).
_FROM_GAME = ("Game", "GameError", "available_games", "load_game")


def register_game(game: str | Path, *, name: str | None = None, trust: bool = False) -> str:
    """Register a game folder (a generated game, say) with Gymnasium and return its id.

    ``trust=True`` lets the folder's ``rules.py`` run (see :mod:`odyssey_env.trust`); the registration
    carries it, so ``gym.make`` and vector envs in other processes load the folder the same way.
    An id already registered for another folder (or a shipped game of the same name) is an error
    naming both, never a silent switch to the other game: pass ``name=`` to register it apart.
    """
    from odyssey_env.game import GameError, load_game
    from odyssey_env.schema import Problem

    loaded = load_game(game, trust=trust)
    ident = env_id(name or loaded.name)
    spec = gym.registry.get(ident)
    if spec is None:
        register_id(ident, str(loaded.path), trust=trust)
    elif load_game(spec.kwargs["game"], trust=True).path != loaded.path:
        raise GameError(
            [
                Problem(
                    "world.json",
                    "game.name",
                    (
                        f"{ident} is already registered for {spec.kwargs['game']}; register {loaded.path} "
                        "under another name with register_game(..., name=...)"
                    ),
                )
            ]
        )
    elif trust:
        spec.kwargs["trust"] = True
    return ident


def __getattr__(name: str) -> Any:
    # lazy: keeps `import odyssey_env` cheap (the Gymnasium start-up hook imports it), and PettingZoo optional
    if name in _FROM_GAME:
        import odyssey_env.game as game

        return getattr(game, name)
    if name == "OdysseyEnv":
        from odyssey_env.env import OdysseyEnv

        return OdysseyEnv
    if name == "env":  # the Gymnasium face's module, imported on first use like the rest
        import odyssey_env.env as env

        return env
    if name in ("aec_env", "parallel_env"):
        import odyssey_env.multiagent as multiagent

        return getattr(multiagent, name)
    raise AttributeError(name)


register_envs()
