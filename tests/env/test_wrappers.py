"""ValidActions: a Discrete action space over the valid commands, with the maskable-PPO conventions."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import odyssey_env
from odyssey_env.env import OdysseyEnv
from odyssey_env.wrappers import DEFAULT_MAX_ACTIONS, ValidActions, flatten_valid_actions


def test_check_env_passes_with_only_gymnasiums_wrapper_notice(capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(ValidActions(gym.make("Odyssey/QuietBell-v0")))
    capsys.readouterr()
    notices = [str(w.message) for w in caught]
    assert all("is different from the unwrapped version" in m for m in notices), notices


def test_an_index_plays_the_command_listed_for_it(tiny_game):
    env = ValidActions(OdysseyEnv(tiny_game))
    bare = OdysseyEnv(tiny_game)
    _, info = env.reset(seed=2)
    bare.reset(seed=2)
    assert env.action_space == gym.spaces.Discrete(DEFAULT_MAX_ACTIONS)
    rng = np.random.default_rng(0)
    for _ in range(60):
        commands = info["actions"]
        assert commands == [c for group in bare.valid_actions().values() for c in group]
        assert info["action_mask"].tolist() == [True] * len(commands) + [False] * (DEFAULT_MAX_ACTIONS - len(commands))
        assert np.array_equal(env.action_masks(), info["action_mask"]) and env.valid_commands() == commands
        index = rng.choice(np.flatnonzero(info["action_mask"]))
        obs, reward, terminated, truncated, info = env.step(index)
        assert info["command"] == commands[index] and not info["invalid_action"]
        assert (obs, reward, terminated, truncated) == bare.step(commands[index])[:4]


def test_a_masked_index_is_an_invalid_action_and_a_bad_one_an_error(tiny_game):
    env = ValidActions(OdysseyEnv(tiny_game), max_actions=40)
    _, info = env.reset(seed=0)
    masked = int(np.flatnonzero(~info["action_mask"])[0])
    obs, _, _, _, info = env.step(np.int64(masked))
    assert info["invalid_action"] and info["step"] == 1 and f"<action {masked} is not valid now>" in obs
    for bad, error in ((40, ValueError), (-1, ValueError), ("wait", TypeError), (1.0, TypeError), (True, TypeError)):
        with pytest.raises(error):
            env.step(bad)
    assert env.unwrapped.engine.state.step == 1  # nothing moved
    _, _, _, _, info = env.step(np.array(0))
    assert info["step"] == 2 and not info["invalid_action"]
    with pytest.raises(ValueError, match="max_actions"):
        ValidActions(OdysseyEnv(tiny_game), max_actions=0)


def test_masks_are_fresh_arrays_each_step(tiny_game):
    env = ValidActions(OdysseyEnv(tiny_game))
    _, first = env.reset(seed=0)
    mask = env.action_masks()
    mask[:] = False
    _, _, _, _, second = env.step(0)
    assert env.action_masks().any() and first["action_mask"] is not second["action_mask"]


def test_the_env_s_own_valid_actions_are_reused_and_kept(tiny_game):
    plain = ValidActions(OdysseyEnv(tiny_game))
    listed = ValidActions(OdysseyEnv(tiny_game, valid_actions=True))
    a, b = plain.reset(seed=1)[1], listed.reset(seed=1)[1]
    assert a["actions"] == b["actions"] and "valid_actions" in b and "valid_actions" not in a


def test_too_many_commands_keep_an_equal_share_per_verb(tiny_game):
    env = ValidActions(OdysseyEnv(tiny_game), max_actions=6)
    _, info = env.reset(seed=0)
    grouped = env.unwrapped.valid_actions()
    total = sum(map(len, grouped.values()))
    assert len(info["actions"]) == min(6, total) and info["actions_dropped"] == total - len(info["actions"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=8), st.integers(1, 40))
def test_flatten_keeps_prefixes_in_order_and_shares_fairly(counts, limit):
    grouped = {f"verb{i}": [f"verb{i} {j}" for j in range(n)] for i, n in enumerate(counts)}
    flat = flatten_valid_actions(grouped, limit)
    assert len(flat) == min(limit, sum(counts))
    kept = [sum(c.startswith(f"verb{i} ") for c in flat) for i in range(len(counts))]
    assert flat == [c for i, commands in enumerate(grouped.values()) for c in commands[: kept[i]]]
    # fair: a verb that lost commands keeps at least as many as any other verb, less one
    for i, n in enumerate(counts):
        if kept[i] < n:
            assert all(kept[i] >= k - 1 for k in kept)


def test_pickles_mid_episode_and_continues_identically(tiny_game):
    env = ValidActions(OdysseyEnv(tiny_game), max_actions=64)
    env.reset(seed=3)
    for index in (0, 2, 1):
        env.step(index)
    copy = pickle.loads(pickle.dumps(env))
    assert copy.valid_commands() == env.valid_commands() and np.array_equal(copy.action_masks(), env.action_masks())
    for index in (0, 1, 3, 0):
        a, b = env.step(index), copy.step(index)
        assert a[:4] == b[:4] and a[4]["actions"] == b[4]["actions"]


def test_vector_env_through_gymnasium_wrappers_argument():
    envs = gym.make_vec(odyssey_env.env_id("mossfall"), num_envs=2, vectorization_mode="async", wrappers=[ValidActions])
    try:
        _, infos = envs.reset(seed=0)
        assert infos["action_mask"].shape == (2, DEFAULT_MAX_ACTIONS)
        assert [type(a) for a in infos["actions"]] == [list, list]
    finally:
        envs.close()
