"""TALES's agents on odyssey games: TalesEnv speaks the protocol of tale-suite's benchmark loop.

tale-suite needs Python >= 3.12 (not installable here), so the agent below is a stand-in written
against TALES's documented agent interface (``tales.agent.Agent``: ``reset(obs, info, env)``,
``act(obs, reward, done, info) -> (action, stats)``), playing as its RandomAgent does: a uniform
choice among ``infos["admissible_commands"]``.
"""

from __future__ import annotations

import random

from odyssey_env.tales import TalesEnv


class StandInRandomAgent:
    """TALES's agent interface; picks uniformly among the admissible commands, as TALES's RandomAgent."""

    def __init__(self, seed: int = 1234):
        self.rng = random.Random(seed)

    def reset(self, obs, info, env) -> None:
        self.env = env

    def act(self, obs, reward, done, infos):
        return self.rng.choice(infos["admissible_commands"]), {"prompt": None, "response": None, "nb_tokens": 0}


def _benchmark_loop(env: TalesEnv, agent, nb_steps: int, seed: int) -> dict:
    """tale-suite's evaluate() loop, reduced to what it reads from the env."""
    obs, infos = env.reset(seed=seed)
    agent.reset(obs, infos, env)
    score, done, invalid, steps = 0, False, 0, 0
    while steps < nb_steps:
        steps += 1
        action, _stats = agent.act(obs, score, done, infos)
        if infos["admissible_commands"] and action not in infos["admissible_commands"]:
            invalid += 1
        obs, _, done, infos = env.step(action)
        score = infos["score"]
        if done:
            break
    return {"steps": steps, "score": score, "max_score": infos["max_score"], "invalid": invalid, "infos": infos}


def test_a_tales_agent_plays_an_odyssey_game_through_the_benchmark_loop():
    env = TalesEnv("mossfall", admissible_commands=True, max_episode_steps=60)
    result = _benchmark_loop(env, StandInRandomAgent(), nb_steps=1000, seed=20241001)
    infos = result["infos"]
    assert result["steps"] == 60 and result["invalid"] == 0  # the budget ended it; every command was admissible
    assert result["max_score"] == 9 and 0 <= result["score"] <= 9  # Mossfall's main quest has nine stages
    assert {"score", "max_score", "won", "lost", "moves", "feedback", "admissible_commands"} <= set(infos)
    assert infos["moves"] == 60 and infos["lost"] is False and infos["admissible_commands"]
    assert type(infos["score"]) is int and type(infos["max_score"]) is int  # TALES formats them with :3d


def test_the_score_counts_quest_stages_and_replays_are_deterministic():
    runs = [_benchmark_loop(TalesEnv("quiet_bell", admissible_commands=True, max_episode_steps=40),
                            StandInRandomAgent(7), 40, seed=3) for _ in range(2)]  # fmt: skip
    assert runs[0]["score"] == runs[1]["score"] and runs[0]["infos"]["feedback"] == runs[1]["infos"]["feedback"]
    env = TalesEnv("mossfall")
    _, infos = env.reset(seed=0)
    assert "admissible_commands" not in infos and infos["score"] == 0 and infos["feedback"]
    _, reward, done, infos = env.step("talk to old_wick")
    assert reward == infos["score"] and isinstance(done, bool)
