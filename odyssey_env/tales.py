"""Odyssey games in the protocol of TALES (tale-suite), so that TALES's own agents play them.

TALES drives every game the same way (its ``benchmark.py``): ``obs, infos = env.reset(seed=...)``,
then ``action, stats = agent.act(obs, score, done, infos)`` and ``obs, _, done, infos = env.step(action)``,
four values as TextWorld returns them, with ``infos`` holding ``score`` (cumulative), ``max_score``,
``won``, ``lost``, ``moves``, ``feedback`` and, when asked for, ``admissible_commands`` (a flat list).
:class:`TalesEnv` is that face over :class:`~odyssey_env.env.OdysseyEnv`::

    env = TalesEnv("mossfall", admissible_commands=True)
    obs, infos = env.reset(seed=20241001)
    agent.reset(obs, infos, env)                # a TALES agent (tales.agent.Agent)
    action, stats = agent.act(obs, infos["score"], False, infos)
    obs, reward, done, infos = env.step(action)

The score is the main-quest stages completed and ``max_score`` their number, so TALES's normalised
score is the paper's quest progress. Dying is not losing (odyssey respawns the agent), so ``lost``
stays False; ``done`` is the quest complete or the step budget spent. Needs nothing beyond
gymnasium; tale-suite itself (the ``tales`` extra) needs Python >= 3.12.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from odyssey_env.env import PLAYER, OdysseyEnv
from odyssey_env.registration import DEFAULT_MAX_EPISODE_STEPS

__all__ = ["TalesEnv"]


class TalesEnv(gym.Env[str, str]):
    """An odyssey game speaking TALES's env protocol (see the module docstring).

    ``max_episode_steps`` ends an episode (``done``) after that many steps (the paper's 500 by
    default; ``None`` for none); other keywords go to :class:`~odyssey_env.env.OdysseyEnv`.
    """

    metadata = OdysseyEnv.metadata

    def __init__(
        self,
        game: str = "mossfall",
        *,
        admissible_commands: bool = False,
        max_episode_steps: int | None = DEFAULT_MAX_EPISODE_STEPS,
        **env_kwargs: Any,
    ):
        self.env = OdysseyEnv(game, **env_kwargs)
        self.admissible_commands = bool(admissible_commands)
        self.max_episode_steps = max_episode_steps
        self.observation_space = self.env.observation_space
        self.action_space = self.env.action_space
        self._score = 0
        self._max_score = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        obs, info = self.env.reset(seed=seed, options=options)
        quest = info.get("quest")
        self._max_score = int(quest["total"]) if quest else 0
        self._score = int(quest["completed"]) if quest else 0
        return obs, self._infos(obs, info, won=False)

    def step(self, action: str) -> tuple[str, int, bool, dict[str, Any]]:  # type: ignore[override]
        obs, _, terminated, truncated, info = self.env.step(action)
        gained = int(info["reward_breakdown"]["quest"])
        self._score += gained
        steps = info["step"]
        done = bool(terminated or truncated) or (self.max_episode_steps is not None and steps >= self.max_episode_steps)
        return obs, gained, done, self._infos(obs, info, won=bool(terminated))

    def render(self) -> str | None:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def _infos(self, obs: str, info: dict[str, Any], *, won: bool) -> dict[str, Any]:
        engine = self.env.engine
        out: dict[str, Any] = {
            "score": self._score,
            "max_score": self._max_score,
            "won": won,
            "lost": False,
            "moves": info["step"],
            "feedback": "\n".join(engine.state.feedback.get(PLAYER, ())) if engine is not None else obs,
            "odyssey": info,  # the env's own info: reward breakdown, events, quest progress
        }
        if self.admissible_commands:
            out["admissible_commands"] = [c for group in self.env.valid_actions().values() for c in group]
        return out
