"""The agent zoo on other text games: any env that lists admissible commands (TextWorld, TALES's games).

Odyssey's agents read ``info["valid_actions"]``, commands grouped by verb; other text games list
their admissible commands flat (TextWorld's ``infos["admissible_commands"]`` with
``EnvInfos(admissible_commands=True)``). :func:`play_text_env` groups them by their first word and
plays one episode with any agent of the zoo::

    import textworld, textworld.gym
    from odyssey_agents.random_agent import RandomAgent
    from odyssey_agents.text_envs import play_text_env

    infos = textworld.EnvInfos(admissible_commands=True, score=True, max_score=True, won=True)
    env = textworld.gym.make(textworld.gym.register_game("game.z8", request_infos=infos, max_episode_steps=100))
    print(play_text_env(RandomAgent(), env, name="tw-game", seed=0))

Both step conventions are understood: Gymnasium's five values, and the four of TextWorld and TALES
(``obs, score, done, infos``, where the second value is the cumulative score).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from odyssey_agents.base import Agent, Task

__all__ = ["group_commands", "play_text_env"]


def group_commands(commands: Sequence[str]) -> dict[str, list[str]]:
    """Commands grouped by their first word (the verb), in the order given."""
    grouped: dict[str, list[str]] = {}
    for command in commands:
        words = command.split(None, 1)
        if words:
            grouped.setdefault(words[0].lower(), []).append(command)
    return grouped


def play_text_env(
    agent: Agent,
    env: Any,
    *,
    name: str = "text-game",
    seed: int | None = None,
    max_steps: int = 500,
    commands_key: str = "admissible_commands",
) -> dict[str, Any]:
    """One episode of ``env`` played by ``agent``; returns steps, return, score, won and invalid commands.

    ``env`` needs ``reset()`` returning ``(obs, infos)`` with the admissible commands under
    ``commands_key``, and ``step(command)``. A command the agent sends that is not admissible is
    played as it is (the game answers it) and counted in ``invalid``.
    """
    obs, info = _reset(env, seed)
    commands = _commands(info, commands_key)
    agent.reset(Task(name, name, tuple(group_commands(commands)), seed or 0, max_steps))
    total, score, won, invalid, steps, done = 0.0, None, False, 0, 0, False
    while not done and steps < max_steps:
        decision = agent.act(obs, _agent_info(info, commands, commands_key))
        if decision.action not in commands:
            invalid += 1
        result = env.step(decision.action)
        steps += 1
        if len(result) == 5:
            obs, reward, terminated, truncated, info = result
            done = bool(terminated or truncated)
            total += float(reward)
        else:  # TextWorld and TALES: obs, cumulative score, done, infos
            obs, score, done, info = result
            done = bool(done)
        commands = _commands(info, commands_key)
        won = bool(info.get("won", won))
        score = info.get("score", score)
    return {"steps": steps, "return": total, "score": score, "won": won, "invalid": invalid}


def _reset(env: Any, seed: int | None) -> tuple[str, Mapping[str, Any]]:
    try:
        return env.reset(seed=seed)
    except TypeError:  # an env whose reset takes no seed (TextWorld's)
        if seed is not None:
            raise
        return env.reset()


def _commands(info: Mapping[str, Any], key: str) -> list[str]:
    commands = info.get(key)
    if commands is None:
        raise ValueError(
            f"the env's info has no {key!r}: ask it for admissible commands "
            "(TextWorld: EnvInfos(admissible_commands=True); TALES: admissible_commands=True)"
        )
    return list(commands)


def _agent_info(info: Mapping[str, Any], commands: list[str], key: str) -> dict[str, Any]:
    out = {k: v for k, v in info.items() if k != key}
    out["valid_actions"] = group_commands(commands)
    return out
