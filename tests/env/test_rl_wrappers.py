"""Numeric observations, per-slot action features and the mask in a Dict: the wrappers RL code selects by keyword."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import odyssey_env  # noqa: F401  (registers the ids where no start-up hook is installed)
from odyssey_env.env import OdysseyEnv
from odyssey_env.wrappers import (
    OBSERVATIONS,
    ActionFeatures,
    ActionMaskObservation,
    BagOfWords,
    StateVector,
    ValidActions,
    wrap,
)
from odyssey_env.wrappers.features import TokenHasher

ID = "Odyssey/Mossfall-v0"


def _random_walk(env: gym.Env, steps: int, seed: int = 0) -> list:
    """Observations of a masked random walk (``env`` has ValidActions somewhere in its stack)."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    seen = [obs]
    for _ in range(steps):
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        seen.append(obs)
        if terminated or truncated:
            obs, info = env.reset()
    return seen


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    return np.array_equal(a, b)


# ---------------------------------------------------------------------- the hasher
def test_words_hash_the_same_in_every_process_whatever_the_hash_seed():
    text = "I see cave_stalker_6 and 3 wooden_sword near me. Neighboring areas: smithy_yard."
    code = f"from odyssey_env.wrappers.features import TokenHasher; print(TokenHasher(97).buckets({text!r}))"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outs) == 1 and outs.pop().strip() == str(TokenHasher(97).buckets(text))


def test_instance_numbers_are_stripped_and_bare_numbers_dropped_unless_asked():
    hasher = TokenHasher(64)
    assert hasher.tokens("Cave_Stalker_6 attacks: health 37") == ["cave_stalker", "attacks", "health"]
    assert TokenHasher(64, numbers=True).tokens("health 37") == ["health", "37"]
    assert hasher.buckets("cave_stalker_6") == hasher.buckets("cave_stalker_7")
    counts = hasher.counts("apple apple pear")
    assert counts.dtype == np.float32 and counts.shape == (64,)
    assert np.isclose(counts.sum(), np.log1p(2) + np.log1p(1)) or np.isclose(counts.sum(), np.log1p(3))
    for bad in (0, -3, True, 2.5):
        with pytest.raises(ValueError, match="positive integer"):
            TokenHasher(bad)


# ---------------------------------------------------------------------- observation wrappers
def test_bag_of_words_is_the_hashed_text_of_the_same_observation():
    env = BagOfWords(OdysseyEnv("mossfall"), dim=256)
    bare = OdysseyEnv("mossfall")
    obs, _ = env.reset(seed=3)
    text, _ = bare.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert np.array_equal(obs, TokenHasher(256).counts(text)) and obs.sum() > 0
    obs, *_ = env.step("wait")
    assert np.array_equal(obs, TokenHasher(256).counts(bare.step("wait")[0]))
    with pytest.raises(ValueError, match="reads the observation text"):
        BagOfWords(StateVector(OdysseyEnv("mossfall")))


def test_state_vector_says_where_i_am_what_i_carry_and_how_i_am():
    env = ValidActions(OdysseyEnv("mossfall"))
    vec = StateVector(env)
    obs, info = vec.reset(seed=0)
    names = vec.feature_names
    assert len(names) == vec.observation_space.shape[0] == len(obs) and vec.observation_space.contains(obs)
    value = dict(zip(names, obs.tolist(), strict=True))
    agent = vec.unwrapped.engine.state.agents["player"]
    assert value[f"area={info['area']}"] == 1.0 and sum(v for n, v in value.items() if n.startswith("area=")) == 1.0
    assert value["health_fraction"] == 1.0 and np.isclose(value["health"], np.log1p(agent.hp))
    assert np.isclose(value["attack"], np.log1p(agent.attack)) and value["quest_fraction"] == 0.0
    # pick something up: it is carried, and no longer counted as lying here
    pick = next(i for i, c in enumerate(info["actions"]) if c.startswith("pick up "))
    thing = info["actions"][pick].split()[-1]
    before_here = value.get(f"here={thing}")
    obs, _, _, _, info = vec.step(pick)
    value = dict(zip(names, obs.tolist(), strict=True))
    kind = vec.unwrapped.engine.state.instances[thing].type if thing in vec.unwrapped.engine.state.instances else thing
    assert not info["action_failed"] and value[f"carried={kind}"] > 0
    if before_here is not None:
        assert value[f"here={thing}"] <= before_here


def test_state_vector_appends_to_the_words_and_leaves_out_surroundings_on_request():
    both = StateVector(BagOfWords(OdysseyEnv("mossfall"), dim=64))
    words = BagOfWords(OdysseyEnv("mossfall"), dim=64)
    state = StateVector(OdysseyEnv("mossfall"))
    a, _ = both.reset(seed=1)
    assert np.array_equal(a[:64], words.reset(seed=1)[0]) and np.array_equal(a[64:], state.reset(seed=1)[0])
    assert both.feature_names[:2] == ("word_bucket=0", "word_bucket=1") and len(both.feature_names) == len(a)
    bare = StateVector(OdysseyEnv("mossfall"), surroundings=False)
    assert not any(n.startswith(("here=", "npc=")) for n in bare.feature_names)
    with pytest.raises(ValueError, match="replaces a Text observation"):
        StateVector(ActionMaskObservation(ValidActions(OdysseyEnv("mossfall"))))


def test_action_features_describe_each_listed_slot_and_leave_padding_zero():
    env = ActionFeatures(ValidActions(OdysseyEnv("mossfall"), max_actions=40), token_dim=16)
    obs, info = env.reset(seed=0)
    rows = obs["action_features"]
    verbs = env.verbs
    assert rows.shape == (40, len(verbs) + 16) and env.observation_space.contains(obs)
    slot_verbs = env.get_wrapper_attr("slot_verbs")()
    assert len(slot_verbs) == len(info["actions"])
    for i, (command, verb) in enumerate(zip(info["actions"], slot_verbs, strict=True)):
        assert command.startswith(verb) and rows[i, : len(verbs)].tolist() == [float(v == verb) for v in verbs]
        assert rows[i, len(verbs) :].any() == bool(command[len(verb) :].strip())
    assert not rows[len(info["actions"]) :].any()
    assert obs["observation"] == env.unwrapped._last_obs  # the text stays as it was, beside the rows
    with pytest.raises(ValueError, match="wrap the env in ValidActions first"):
        ActionFeatures(OdysseyEnv("mossfall"))


def test_the_mask_in_the_observation_is_the_mask_of_action_masks():
    env = ActionMaskObservation(StateVector(ValidActions(OdysseyEnv("mossfall"), max_actions=64)))
    obs, info = env.reset(seed=0)
    for _ in range(5):
        assert obs["action_mask"].dtype == np.int8 and env.observation_space.contains(obs)
        assert np.array_equal(obs["action_mask"].astype(bool), env.get_wrapper_attr("action_masks")())
        assert np.array_equal(obs["action_mask"].astype(bool), info["action_mask"])
        obs, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
    with pytest.raises(ValueError, match="needs ValidActions"):
        ActionMaskObservation(OdysseyEnv("mossfall"))


# ---------------------------------------------------------------------- selected by keyword
@pytest.mark.parametrize("observation", OBSERVATIONS)
def test_every_observation_passes_gymnasiums_checker_through_gym_make(observation, capsys):
    env = gym.make(ID, max_actions=128, observation=observation, action_features=True, action_mask_observation=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped if observation == "text" else env, skip_render_check=True)
    capsys.readouterr()
    messages = [str(w.message) for w in caught if "is different from the unwrapped version" not in str(w.message)]
    assert messages == [], messages
    assert isinstance(env.action_space, gym.spaces.Discrete)
    space = env.observation_space
    assert set(space.spaces) == {"observation", "action_features", "action_mask"}


def test_gym_make_keywords_build_the_stack_and_the_spec_rebuilds_it():
    env = gym.make(ID, max_actions=64, observation="bag_of_words+state", bag_of_words_dim=128)
    assert env.action_space == gym.spaces.Discrete(64) and env.observation_space.shape[0] > 128
    again = gym.make(env.spec)
    assert str(again) == str(env)
    assert all(_same(a, b) for a, b in zip(_random_walk(env, 15), _random_walk(again, 15), strict=True))
    with pytest.raises(ValueError, match="observation must be one of"):
        gym.make(ID, observation="pixels")
    with pytest.raises(ValueError, match="pass max_actions"):
        gym.make(ID, action_features=True)


def test_same_seed_same_numbers():
    def make():
        return gym.make(ID, max_actions=128, observation="bag_of_words+state", action_features=True)

    a, b = _random_walk(make(), 40, seed=7), _random_walk(make(), 40, seed=7)
    assert all(_same(x, y) for x, y in zip(a, b, strict=True))


def test_wrap_orders_the_wrappers_whatever_the_keywords():
    env = wrap(OdysseyEnv("mossfall"), max_actions=8, observation="state", action_mask_observation=True)
    chain = str(env)
    assert chain.index("ActionMaskObservation") < chain.index("StateVector") < chain.index("ValidActions")


# ---------------------------------------------------------------------- infos for batching libraries
def test_info_has_the_same_keys_after_reset_and_step():
    env = ValidActions(OdysseyEnv("mossfall"))
    _, reset_info = env.reset(seed=0)
    _, _, _, _, step_info = env.step(0)
    assert list(reset_info) == list(step_info) and reset_info["command"] == ""
    minimal = gym.make(ID, max_actions=32, minimal_info=True)
    _, reset_info = minimal.reset(seed=0)
    _, _, _, _, step_info = minimal.step(0)
    assert list(reset_info) == list(step_info)
    assert set(step_info) == {"step", "invalid_action", "action_failed", "reward_breakdown"} | {
        "action_mask",
        "actions_dropped",
    }
    assert minimal.get_wrapper_attr("valid_commands")()  # the commands stay available by method


# ---------------------------------------------------------------------- vector envs
@pytest.mark.parametrize("asynchronous", [False, True])
def test_vector_envs_build_sub_envs_from_the_same_keywords(asynchronous):
    kwargs = dict(max_actions=32, observation="bag_of_words+state", bag_of_words_dim=64)
    envs = gym.make_vec(ID, num_envs=2, asynchronous=asynchronous, **kwargs)
    try:
        single = [gym.make(ID, **kwargs) for _ in range(2)]
        obs, infos = envs.reset(seed=[5, 6])
        kept = obs
        for i, env in enumerate(single):
            assert np.array_equal(obs[i], env.reset(seed=5 + i)[0])
        actions = np.array([np.flatnonzero(m)[0] for m in infos["action_mask"]])
        obs, *_ = envs.step(actions)
        for i, env in enumerate(single):
            assert np.array_equal(obs[i], env.step(int(actions[i]))[0])
        assert kept is not obs and not np.array_equal(kept, obs)  # the step did not overwrite what reset gave
    finally:
        envs.close()


def test_vector_entry_point_takes_env_wrappers_and_the_registered_episode_budget():
    envs = gym.make_vec(ID, num_envs=2, max_actions=16, env_wrappers=[gym.wrappers.RecordEpisodeStatistics])
    try:
        assert envs.call("__str__")[0].startswith("<RecordEpisodeStatistics<TimeLimit<")
        assert envs.get_attr("_max_episode_steps") == (500, 500)
    finally:
        envs.close()
    gymnasiums = gym.make_vec(ID, 2, vectorization_mode="sync", wrappers=[ActionMaskObservation], max_actions=16)
    try:
        obs, _ = gymnasiums.reset(seed=0)
        assert obs["action_mask"].shape == (2, 16)
    finally:
        gymnasiums.close()
