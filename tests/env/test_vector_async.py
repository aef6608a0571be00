"""``OdysseyAsyncVectorEnv``: sub-envs stepped by worker processes and by the calling process.

Whatever the split between workers and the calling process, it must give step for step what the sync
vector env gives (which ``test_vector.py`` pins to Gymnasium's), in every autoreset mode; errors in a
worker come back as errors, a dead worker is reported, and closing leaves no process behind.
"""

from __future__ import annotations

import functools
import multiprocessing as mp
import os
import signal
import time

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from odyssey_env.env import OdysseyEnv
from odyssey_env.vector import OdysseyAsyncVectorEnv, OdysseySyncVectorEnv, make_vector_env
from odyssey_env.vector.parallel import _share_sizes
from odyssey_env.wrappers import ValidActions

from .test_vector import _same


def _make(game: str = "mossfall", steps: int | None = 6, max_actions: int | None = None) -> gym.Env:
    env: gym.Env = OdysseyEnv(game)
    if steps is not None:
        env = gym.wrappers.TimeLimit(env, steps)
    if max_actions is not None:
        env = ValidActions(env, max_actions)
    return env


def _assert_same_step(a, b) -> None:
    assert list(a[0]) == list(b[0])
    for x, y in zip(a[1:-1], b[1:-1], strict=True):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert _same(a[-1], b[-1])


COMMANDS = [
    ["wait", "enter smithy_yard", "pick up coin", "x"],
    ["look", "wait", "defend", "enter nowhere"],
    ["wait"] * 4,
    ["inventory", "wait", "jump", "wait"],
]


@pytest.mark.parametrize("autoreset_mode", list(AutoresetMode))
@pytest.mark.parametrize("workers", [1, 2, 3, 0])
def test_async_equals_sync_step_for_step(workers, autoreset_mode):
    """Ours async, ours sync and Gymnasium's sync, step for step (our sync's own loop included)."""
    fns = [_make] * 4
    envs = [
        OdysseyAsyncVectorEnv(fns, workers=workers, autoreset_mode=autoreset_mode),
        OdysseySyncVectorEnv(fns, autoreset_mode=autoreset_mode),
        SyncVectorEnv(fns, autoreset_mode=autoreset_mode),
    ]
    try:
        for env in envs[:2]:
            assert env.single_observation_space == envs[2].single_observation_space
            assert env.action_space == envs[2].action_space and env.metadata == envs[2].metadata
        results = [env.reset(seed=3) for env in envs]
        for a in results[:2]:
            assert list(a[0]) == list(results[2][0]) and _same(a[1], results[2][1])
        for k in range(14):  # past the 6-step time limit: truncation, then autoreset
            actions = COMMANDS[k % len(COMMANDS)]
            last = results[2]
            if autoreset_mode == AutoresetMode.DISABLED and k and np.any(last[2] | last[3]):
                mask = np.logical_or(last[2], last[3])
                resets = [env.reset(options={"reset_mask": mask}) for env in envs]
                for a in resets[:2]:
                    assert list(a[0]) == list(resets[2][0]) and _same(a[1], resets[2][1])
            results = [env.step(actions) for env in envs]
            for a in results[:2]:
                _assert_same_step(a, results[2])
        if autoreset_mode == AutoresetMode.DISABLED:  # stepping an ended sub-env without a reset
            for env in envs:
                for _ in range(7):
                    try:
                        env.step(["wait"] * 4)
                    except AssertionError:
                        break
                else:
                    raise AssertionError(f"{type(env).__name__} stepped an ended sub-env")
    finally:
        for env in envs:
            env.close()


def test_shares_are_even_and_the_calling_process_takes_the_smallest():
    assert _share_sizes(2, 1) == [1, 1]
    assert _share_sizes(3, 1) == [1, 2]
    assert _share_sizes(8, 1) == [4, 4]
    assert _share_sizes(5, 2) == [1, 2, 2]
    assert _share_sizes(3, 3) == [0, 1, 1, 1]
    assert _share_sizes(4, 0) == [4]
    with pytest.raises(ValueError, match="workers"):
        OdysseyAsyncVectorEnv([_make] * 2, workers=3)


def test_valid_action_indices_and_attributes_reach_every_share():
    envs = make_vector_env(5, asynchronous=True, workers=2, max_actions=32, game="quiet_bell")
    sync = make_vector_env(5, max_actions=32, game="quiet_bell")
    try:
        _, infos = envs.reset(seed=1)
        sync.reset(seed=1)
        assert envs.call("valid_commands") == sync.call("valid_commands")
        assert envs.get_attr("max_actions") == (32,) * 5
        envs.set_attr("marker", [10, 11, 12, 13, 14])
        assert envs.get_attr("marker") == (10, 11, 12, 13, 14)
        envs.set_attr("marker", 7)
        assert envs.get_attr("marker") == (7,) * 5
        rng = np.random.default_rng(0)
        for _ in range(20):
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
            a, b = envs.step(actions), sync.step(actions)
            _assert_same_step(a, b)
            infos = a[-1]
    finally:
        envs.close()
        sync.close()


def test_an_error_in_a_worker_comes_back_with_its_traceback_and_the_env_stays_usable():
    envs = make_vector_env(2, asynchronous=True, workers=1, max_actions=8, game="mossfall")
    try:
        envs.reset(seed=0)
        with pytest.raises(ValueError, match="outside Discrete") as caught:
            envs.step(np.array([0, 99]))  # the second sub-env is the worker's
        assert "Traceback" in str(caught.value.__cause__) and "wrappers.py" in str(caught.value.__cause__)
        with pytest.raises(ValueError, match="outside Discrete"):
            envs.step(np.array([99, 0]))  # the calling process's own share: the worker still answers first
        envs.reset(seed=0)
        obs, *_ = envs.step(np.array([0, 0]))
        assert len(obs) == 2
        with pytest.raises(ValueError, match="expected 2 actions"):
            envs.step(np.array([0]))
        envs.step(np.array([0, 0]))
    finally:
        envs.close()


def test_a_dead_worker_is_reported_and_close_still_works():
    envs = OdysseyAsyncVectorEnv([_make] * 2, workers=1)
    envs.reset(seed=0)
    process = envs._workers[0].process
    os.kill(process.pid, signal.SIGKILL)
    process.join(5)
    with pytest.raises(RuntimeError, match="died"):
        envs.step(["wait", "wait"])
    envs.close()
    assert envs.closed
    with pytest.raises(RuntimeError, match="closed"):
        envs.step(["wait", "wait"])


class _Slow(gym.Wrapper):
    def step(self, action):
        time.sleep(0.3)
        return self.env.step(action)


def test_a_step_wait_timeout_leaves_the_step_due():
    envs = OdysseyAsyncVectorEnv([_make, lambda: _Slow(_make())], workers=1)
    try:
        envs.reset(seed=0)
        envs.step_async(["wait", "wait"])
        with pytest.raises(mp.TimeoutError):
            envs.step_wait(timeout=0.01)
        with pytest.raises(gym.error.AlreadyPendingCallError):
            envs.step_async(["wait", "wait"])
        obs, rewards, *_ = envs.step_wait(timeout=30)
        assert len(obs) == 2 and rewards.shape == (2,)
        with pytest.raises(gym.error.NoAsyncCallError):
            envs.step_wait()
        envs.step_async(["wait", "wait"])  # left due on purpose: close must still end the worker
    finally:
        envs.close(timeout=30)
    assert not envs._workers


def test_close_ends_every_worker_and_is_idempotent():
    envs = OdysseyAsyncVectorEnv([_make] * 3, workers=2)
    processes = [w.process for w in envs._workers]
    assert all(p.is_alive() for p in processes)
    envs.close()
    envs.close()
    assert all(not p.is_alive() for p in processes) and all(p.exitcode == 0 for p in processes)


def _broken() -> gym.Env:
    raise OSError("no such game folder")


def test_a_sub_env_that_cannot_be_built_fails_the_constructor_clearly():
    with pytest.raises(OSError, match="no such game folder"):
        OdysseyAsyncVectorEnv([_make, _broken], workers=1)


def test_workers_started_by_spawn_get_the_same_trajectories():
    fns = [functools.partial(_make, "quiet_bell", None)] * 2
    ours = OdysseyAsyncVectorEnv(fns, workers=1, context="spawn")
    theirs = OdysseySyncVectorEnv(fns)
    try:
        assert list(ours.reset(seed=4)[0]) == list(theirs.reset(seed=4)[0])
        for k in range(4):
            _assert_same_step(ours.step(COMMANDS[k][:2]), theirs.step(COMMANDS[k][:2]))
    finally:
        ours.close()
        theirs.close()


def test_make_vec_asynchronous_builds_it_and_sync_refuses_its_options():
    envs = gym.make_vec("Odyssey/Mossfall-v0", num_envs=2, asynchronous=True, workers=1)
    try:
        assert isinstance(envs, OdysseyAsyncVectorEnv) and len(envs._workers) == 1
    finally:
        envs.close()
    with pytest.raises(ValueError, match="asynchronous=True"):
        make_vector_env(2, workers=1, game="mossfall")


@pytest.mark.parametrize(
    "actions",
    [
        np.array([3, 1], dtype=np.int64),
        np.array([3, 1], dtype=np.int32),
        np.array(["wait", "look"]),
        np.array([[1, 2], [3, 4]], dtype=np.uint8),
        np.array([(1, 2.5)], dtype=[("a", "<i4"), ("b", "<f8")]),
        ["wait", "look"],
    ],
)
def test_actions_cross_to_a_worker_with_their_dtype_and_values(actions):
    import pickle

    from odyssey_env.vector.parallel import _Batch

    back = _Batch.unpack(pickle.loads(pickle.dumps(_Batch.pack(actions))))
    assert type(back) is type(actions)
    if isinstance(actions, np.ndarray):
        assert back.dtype == actions.dtype and back.shape == actions.shape and back.tolist() == actions.tolist()
        assert [type(x) for x in back] == [type(x) for x in actions]  # what each sub-env receives
    else:
        assert back == actions
