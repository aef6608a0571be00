"""The agent zoo on a real TextWorld game (textworld extra; skipped without it) and on odyssey's TALES face."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from odyssey_agents.random_agent import RandomAgent
from odyssey_agents.text_envs import group_commands, play_text_env
from odyssey_env.tales import TalesEnv


def test_commands_group_by_their_first_word_in_order():
    assert group_commands(["go north", "take key from table", "go south", "look", ""]) == {
        "go": ["go north", "go south"],
        "take": ["take key from table"],
        "look": ["look"],
    }


def test_the_zoo_plays_a_four_value_env_without_invalid_commands():
    # odyssey's own TALES face speaks TextWorld's four-value protocol
    result = play_text_env(RandomAgent(), TalesEnv("mossfall", admissible_commands=True, max_episode_steps=30), seed=1)
    assert result["steps"] == 30 and result["invalid"] == 0 and result["won"] is False
    assert isinstance(result["score"], int)
    with pytest.raises(ValueError, match="admissible_commands=True"):
        play_text_env(RandomAgent(), TalesEnv("mossfall"), seed=1)


def test_the_zoo_plays_a_real_textworld_game(tmp_path):
    pytest.importorskip("textworld", reason='needs the "textworld" extra')
    import textworld
    import textworld.gym

    tw_make = shutil.which("tw-make")
    assert tw_make, "textworld is installed without its tw-make command"
    game = tmp_path / "game.z8"
    subprocess.run(
        [tw_make, "custom", "--world-size", "3", "--nb-objects", "5", "--quest-length", "2", "--seed", "3",
         "--output", str(game), "-f", "--silent"],
        check=True, timeout=600, capture_output=True,
    )  # fmt: skip
    infos = textworld.EnvInfos(admissible_commands=True, score=True, max_score=True, won=True)
    env = textworld.gym.make(textworld.gym.register_game(str(game), request_infos=infos, max_episode_steps=40))
    try:
        result = play_text_env(RandomAgent(seed=0), env, name="tw-custom", max_steps=40)
    finally:
        env.close()
    assert 1 <= result["steps"] <= 40 and result["invalid"] == 0
    assert isinstance(result["score"], int) and result["score"] >= 0
