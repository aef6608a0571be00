"""odyssey_env: the AgentOdyssey engine, its shipped games, and their Gymnasium face.

Importing this package registers ``Odyssey/<Name>-v0`` for every shipped game::

    import gymnasium as gym
    import odyssey_env  # noqa: F401

    env = gym.make("Odyssey/Mossfall-v0")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("wait")

Several agents in one world (PettingZoo, the ``multiagent`` extra)::

    par = odyssey_env.parallel_env("quiet_bell", agents=3)   # ParallelEnv
    aec = odyssey_env.env("quiet_bell", agents=["ada", "bo"])  # AECEnv

Nothing heavy is imported here: gymnasium is the only dependency of this package, and PettingZoo
is imported only when a multi-agent env is asked for.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

from odyssey_env.game import Game, GameError, available_games, load_game
from odyssey_env.schema import Problem

__version__ = "0.1.0"
#: ``gym.make_vec(id, num_envs)`` without a ``vectorization_mode`` builds odyssey's vector env (see odyssey_env.vector).
VECTOR_ENTRY_POINT = "odyssey_env.vector:make_vector_env"
__all__ = [
    "Game",
    "GameError",
    "OdysseyEnv",
    "available_games",
    "env",
    "env_id",
    "load_game",
    "parallel_env",
    "register_game",
]


def env_id(game_name: str) -> str:
    """The Gymnasium id of a game: ``quiet_bell`` -> ``Odyssey/QuietBell-v0``."""
    title = "".join(part.capitalize() for part in game_name.split("_"))
    return f"Odyssey/{title}-v0"


def register_game(game: str | Path, *, name: str | None = None, trust: bool = False) -> str:
    """Register a game folder (a generated game, say) with Gymnasium and return its id.

    ``trust=True`` lets the folder's ``rules.py`` run (see :mod:`odyssey_env.trust`); the registration
    carries it, so ``gym.make`` and vector envs in other processes load the folder the same way.
    An id already registered for another folder (or a shipped game of the same name) is an error
    naming both, never a silent switch to the other game: pass ``name=`` to register it apart.
    """
    loaded = load_game(game, trust=trust)
    ident = env_id(name or loaded.name)
    spec = gym.registry.get(ident)
    if spec is None:
        gym.register(
            id=ident,
            entry_point="odyssey_env.env:OdysseyEnv",
            vector_entry_point=VECTOR_ENTRY_POINT,
            kwargs={"game": str(loaded.path), "trust": trust},
        )
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


def __getattr__(name: str):
    # lazy: keeps `import odyssey_env` cheap, and PettingZoo optional
    if name == "OdysseyEnv":
        from odyssey_env.env import OdysseyEnv

        return OdysseyEnv
    if name == "env":  # the module odyssey_env.env, which is callable: odyssey_env.env(...) is the AEC env
        import odyssey_env.env as face

        return face
    if name == "parallel_env":
        from odyssey_env.multiagent import parallel_env

        return parallel_env
    raise AttributeError(name)


for _name in available_games():
    if env_id(_name) not in gym.registry:
        gym.register(
            id=env_id(_name),
            entry_point="odyssey_env.env:OdysseyEnv",
            vector_entry_point=VECTOR_ENTRY_POINT,
            kwargs={"game": _name},
        )
