"""The Gymnasium face: env checker, registry, vector envs, spaces, info, rendering, arguments."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import odyssey_env
from odyssey_env.env import CHARSET, OdysseyEnv
from odyssey_env.rewards import COMPONENTS

IDS = sorted(k for k in gym.registry if k.startswith("Odyssey/"))


def test_every_shipped_game_is_registered():
    assert "Odyssey/Mossfall-v0" in IDS
    assert {odyssey_env.env_id(g) for g in odyssey_env.available_games()} <= set(IDS)


def _checked(env) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("valid_actions", [False, True])
@pytest.mark.parametrize("env_id", IDS)
def test_check_env_on_registered_ids(env_id, valid_actions, capsys):
    env = gym.make(env_id, valid_actions=valid_actions)
    assert _checked(env.unwrapped) == []
    capsys.readouterr()  # check_env prints one frame in render_mode="human"


@pytest.mark.parametrize("valid_actions", [False, True])
@pytest.mark.parametrize("env_id", IDS)
def test_check_env_on_a_directly_built_env(env_id, valid_actions, capsys):
    game = gym.spec(env_id).kwargs["game"]
    warned = _checked(OdysseyEnv(game, valid_actions=valid_actions))
    # Without a registry spec the checker cannot rebuild the env in other render modes; nothing else may warn.
    assert [w for w in warned if "environment not having a spec" not in w] == []
    capsys.readouterr()


@pytest.mark.parametrize("valid_actions", [False, True])
def test_check_env_on_a_game_folder(tiny_game, valid_actions, capsys):
    env = gym.make(odyssey_env.register_game(tiny_game.path), valid_actions=valid_actions)
    assert _checked(env.unwrapped) == []
    capsys.readouterr()


def test_register_game_folder(tiny_game):
    ident = odyssey_env.register_game(tiny_game.path)
    assert ident == "Odyssey/Tiny-v0"
    env = gym.make(ident)
    obs, _ = env.reset(seed=0)
    assert "Current Location: Hollow Camp, camp" in obs
    assert odyssey_env.register_game(tiny_game.path) == ident  # registering twice is harmless


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_reset_and_step(mode):
    envs = gym.make_vec("Odyssey/Mossfall-v0", num_envs=2, vectorization_mode=mode)
    try:
        obs, info = envs.reset(seed=10)
        singles = [OdysseyEnv("mossfall").reset(seed=s)[0] for s in (10, 11)]
        assert list(obs) == singles
        obs2, reward, terminated, truncated, info = envs.step(["wait", "jump around"])
        assert [o.startswith("Current Time: 0001-01-01 08:10:00") for o in obs2] == [True, True]
        assert "I waited for a while." in obs2[0] and "Invalid action" in obs2[1]
        assert list(info["invalid_action"]) == [False, True]
        assert list(reward) == [0.0, 0.0] and not terminated.any() and not truncated.any()
        obs3, *_ = envs.step(["wait", "wait"])
        assert list(obs3) != list(obs2) and all(o.startswith("Current Time: 0001-01-01 08:20:00") for o in obs3)
    finally:
        envs.close()


def test_observations_stay_in_the_space(tiny_game):
    env = OdysseyEnv(tiny_game, valid_actions=True)
    obs, _info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    for command in ["pick up coin", "enter yard", "attack rat_0", "attack rat_0", "defend", "héllo \x00", ""]:
        obs, *_ = env.step(command)
        assert env.observation_space.contains(obs), command
    assert set(CHARSET) >= set("abcxyz ABC 0123456789\n.,;:'\"!?()[]<>/-_")
    assert env.action_space.contains("craft 2 torch") and env.action_space.contains('write "hi there" scrap_0')


def test_info_contents(tiny_game):
    env = OdysseyEnv(tiny_game)
    _obs, info = env.reset(seed=0)
    assert info["step"] == 0 and info["time"] == "0001-01-01 08:00:00" and info["area"] == "camp"
    assert info["invalid_action"] is False and info["action_failed"] is False
    assert set(info["reward_breakdown"]) == set(COMPONENTS) and info["events"] == []
    assert "valid_actions" not in info
    _, reward, _, _, info = env.step("enter yard")
    assert info["area"] == "yard" and info["reward_breakdown"]["exploration"] == 1
    assert reward == 0.0  # the default scalar reward counts main-quest stages only
    assert {"kind": "area_entered", "area": "yard", "first": True} in info["events"]


def test_reward_weights_and_valid_action_option(tiny_game):
    env = OdysseyEnv(tiny_game, reward_weights={"exploration": 2.0, "death": -1.0})
    env.reset(seed=0, options={"valid_actions": True})
    _, reward, _, _, info = env.step("enter yard")
    assert reward == 2.0
    assert info["valid_actions"]["wait"] == ["wait"] and "enter camp" in info["valid_actions"]["enter"]
    assert env.valid_actions() == info["valid_actions"]
    env.reset(seed=0, options={"valid_actions": False})
    assert "valid_actions" not in env.step("wait")[4]


def test_bad_arguments_are_refused(tiny_game):
    with pytest.raises(ValueError, match="render_mode"):
        OdysseyEnv(tiny_game, render_mode="rgb_array")
    with pytest.raises(ValueError, match="unknown reward component"):
        OdysseyEnv(tiny_game, reward_weights={"gold": 1.0})
    env = OdysseyEnv(tiny_game)
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"difficulty": "hard"})
    with pytest.raises(gym.error.ResetNeeded):
        env.step("wait")
    with pytest.raises(gym.error.ResetNeeded):
        env.valid_actions()


def test_render_modes(tiny_game, capsys):
    env = OdysseyEnv(tiny_game, render_mode="ansi")
    obs, _ = env.reset(seed=0)
    assert env.render() == obs
    obs, *_ = env.step("wait")
    assert env.render() == obs
    human = OdysseyEnv(tiny_game, render_mode="human")
    obs, _ = human.reset(seed=0)
    assert human.render() is None
    assert capsys.readouterr().out.strip() == obs.strip()


def test_max_episode_steps_truncates():
    env = gym.make("Odyssey/Mossfall-v0", max_episode_steps=3)
    env.reset(seed=0)
    flags = [env.step("wait")[3] for _ in range(3)]
    assert flags == [False, False, True]


def test_verbs_lists_usage(tiny_game):
    verbs = OdysseyEnv(tiny_game).verbs()
    assert "store <amount> <object_name> <container_name>" in verbs
    assert "write <text> <writable_name>" in verbs and "lockpick <area_name>" in verbs
    assert len(verbs) == 22
    assert len(OdysseyEnv("mossfall").verbs()) == 17


def test_observation_layout(tiny_game):
    obs, _ = OdysseyEnv(tiny_game).reset(seed=0)
    lines = obs.split("\n")
    assert lines[0] == "Current Time: 0001-01-01 08:00:00"
    assert lines[1] == "Current Location: Hollow Camp, camp"
    assert "I wake in a quiet camp." in lines
    assert "I am holding no objects." in lines and "I have equipped no objects." in lines
    assert "I see mira, tom nearby." in lines
    assert lines[-1] == "Neighboring areas: yard, vault (locked)."
    for stat in ("level is 1", "attack is at 10", "defense is at 0", "health is at 100", "experience is at 0"):
        assert f"My {stat}." in lines


# ---------------------------------------------------------------------- saving and loading through gym.make
def _play(env, commands):
    return [env.step(c) for c in commands]


COMMANDS = ["wait", "pick up coin", "enter yard", "jump", "defend", "enter camp", "wait"]


def test_save_and_load_through_gym_make_wrappers(tiny_game):
    """Gymnasium 1.x wrappers do not forward save_state/load_state: the documented forms must work."""
    import json

    ident = odyssey_env.register_game(tiny_game.path)
    env = gym.make(ident, max_episode_steps=50)
    env.reset(seed=4)
    _play(env, COMMANDS[:3])
    saved = env.unwrapped.save_state()
    assert env.get_wrapper_attr("save_state")() == saved
    saved = json.loads(json.dumps(saved))
    expected = _play(env, COMMANDS[3:])

    fresh = gym.make(ident, max_episode_steps=50)  # never reset
    obs, info = fresh.reset(options={"state": saved})
    assert info["step"] == 3 and obs.startswith("Current Time: 0001-01-01 08:30:00")
    assert _play(fresh, COMMANDS[3:]) == expected

    bare = OdysseyEnv(tiny_game)  # never reset: load_state is enough for the env itself
    bare.load_state(saved)
    assert _play(bare, COMMANDS[3:]) == expected


def test_reset_with_a_state_goes_through_time_limit_and_vector_envs(tiny_game):
    ident = odyssey_env.register_game(tiny_game.path)
    source = gym.make(ident)
    source.reset(seed=4)
    _play(source, COMMANDS[:2])
    saved = source.unwrapped.save_state()
    limited = gym.make(ident, max_episode_steps=2)  # the limit counts from the restore
    limited.reset(options={"state": saved})
    assert [limited.step("wait")[3] for _ in range(2)] == [False, True]
    envs = gym.make_vec(ident, num_envs=2, vectorization_mode="sync")
    try:
        obs, info = envs.reset(options={"state": saved})
        assert list(info["step"]) == [2, 2] and obs[0] == obs[1]
        assert list(envs.call("save_state")) == [saved, saved]
    finally:
        envs.close()


def test_reset_with_a_state_refuses_a_seed_or_tutorial_beside_it(tiny_game):
    env = OdysseyEnv(tiny_game)
    env.reset(seed=0)
    saved = env.save_state()
    with pytest.raises(ValueError, match="has its own seed"):
        env.reset(seed=1, options={"state": saved})
    with pytest.raises(ValueError, match="has its own seed"):
        env.reset(options={"state": saved, "tutorial": True})
    _obs, info = env.reset(options={"state": saved, "valid_actions": True})
    assert info["step"] == 0 and "valid_actions" in info


def test_readme_environment_example_runs_as_written():
    """The README's Python block (the env in your own code) is executed exactly as printed."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The environment in your own code", 1)[1].split("\n## ", 1)[0]
    code = "\n".join(re.findall(r"```python\n(.*?)```", section, re.DOTALL))
    assert "save_state()" in code and 'reset(options={"state"' in code
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
