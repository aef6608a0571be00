"""Stable-Baselines3 and sb3-contrib with no glue code: check_env, MaskablePPO on SubprocVecEnv, the VecEnv adapter.

Needs the ``sb3`` extra (in ``dev``); skipped with one line without it.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3", reason='needs the "sb3" extra (stable-baselines3, sb3-contrib)')
pytest.importorskip("sb3_contrib", reason='needs the "sb3" extra (stable-baselines3, sb3-contrib)')

from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.env_checker import check_env
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import SubprocVecEnv

import odyssey_env  # noqa: F401
from odyssey_env.sb3 import OdysseyVecEnv, make_sb3_vec_env

ID = "Odyssey/Mossfall-v0"
RL = {"max_actions": 128, "observation": "bag_of_words+state", "bag_of_words_dim": 256}


@pytest.mark.parametrize(
    "extra", [{}, {"action_features": True}, {"action_features": True, "action_mask_observation": True}]
)
def test_sb3s_own_checker_passes(extra):
    env = gym.make(ID, **RL, **extra)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    # One row per slot is a 2-D Box, which SB3's MultiInputPolicy flattens and a slot-scoring policy keeps;
    # SB3 says so, and nothing else.
    notices = [str(w.message) for w in caught]
    assert len(notices) == (1 if extra else 0), notices
    assert all(m.startswith("Your observation action_features has an unconventional shape") for m in notices)


def test_maskable_ppo_trains_on_a_subproc_vec_env_started_by_spawn():
    # spawn: the workers start fresh interpreters that never imported odyssey_env; the ids are there anyway
    venv = make_vec_env(ID, n_envs=2, seed=0, vec_env_cls=SubprocVecEnv, vec_env_kwargs={"start_method": "spawn"},
                        env_kwargs={**RL, "max_episode_steps": 24})  # fmt: skip
    try:
        assert venv.env_is_wrapped(Monitor) == [True, True]  # SB3's make_vec_env got past render_mode="rgb_array"
        venv.reset()
        masks = get_action_masks(venv)
        assert masks.shape == (2, 128) and masks.any(axis=1).all()
        model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=16, n_epochs=1, seed=0, device="cpu")
        model.learn(48)
        assert model.num_timesteps == 64  # whole rollouts: 2 of 2 x 16 steps
        assert len(model.ep_info_buffer) >= 2  # episodes ended (24 steps) and Monitor saw them
    finally:
        venv.close()


@pytest.mark.parametrize("asynchronous", [False, True])
def test_the_adapter_resets_finished_envs_in_the_same_step_as_sb3_expects(asynchronous):
    venv = make_sb3_vec_env(ID, n_envs=2, seed=3, asynchronous=asynchronous, max_episode_steps=3, **RL)
    reference = [gym.make(ID, max_episode_steps=3, **RL) for _ in range(2)]
    try:
        obs = venv.reset()
        for i, env in enumerate(reference):
            first, info = env.reset(seed=3 + i)
            assert np.array_equal(obs[i], first)
            assert np.array_equal(venv.env_method("action_masks", indices=[i])[0], info["action_mask"])
        for step in range(3):
            masks = get_action_masks(venv)
            actions = np.array([np.flatnonzero(m)[-1] for m in masks])
            obs, rewards, dones, infos = venv.step(actions)
            expected = [env.step(int(a)) for env, a in zip(reference, actions, strict=True)]
            assert dones.tolist() == [step == 2] * 2 and rewards.dtype == np.float32
            for i, (o, r, terminated, truncated, _) in enumerate(expected):
                assert rewards[i] == r and infos[i]["TimeLimit.truncated"] == (truncated and not terminated)
                if dones[i]:
                    assert np.array_equal(infos[i]["terminal_observation"], o)
                    assert not np.array_equal(obs[i], o)  # already the next episode's first observation
                    assert "action_mask" in venv.reset_infos[i]
                else:
                    assert np.array_equal(obs[i], o) and "terminal_observation" not in infos[i]
        assert venv.get_attr("max_actions") == [128, 128]
        assert venv.env_is_wrapped(gym.wrappers.TimeLimit) == [True, True]
    finally:
        venv.close()


def test_maskable_ppo_trains_on_the_adapter():
    venv = make_sb3_vec_env(ID, n_envs=2, seed=0, max_episode_steps=20, **RL)
    try:
        model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=16, n_epochs=1, seed=0, device="cpu")
        model.learn(32)
        assert model.num_timesteps == 32
    finally:
        venv.close()


def test_the_adapter_refuses_what_sb3_cannot_use_in_one_line():
    text = gym.make_vec(ID, num_envs=1, autoreset_mode="Disabled", max_actions=8)
    with pytest.raises(ValueError, match="SB3 policies take numbers, not text"):
        OdysseyVecEnv(text)
    same_step = gym.make_vec(ID, num_envs=1, autoreset_mode="SameStep", max_actions=8, observation="state")
    with pytest.raises(ValueError, match="autoreset_mode='Disabled'"):
        OdysseyVecEnv(same_step)
