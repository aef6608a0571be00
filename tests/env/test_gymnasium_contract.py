"""The Gymnasium internals odyssey's vector envs and text codec rely on, each pinned by name.

``odyssey_env/vector/`` and the shared-memory text codec in ``odyssey_env/env.py`` use a few parts of
Gymnasium that are not its documented API: a private method, private attributes of ``SyncVectorEnv``,
the dispatch tables of its vector utilities and the memory layout of a ``Text`` space. The behavioural
tests (``test_vector*.py``) compare results with Gymnasium's; these say *which internal* moved when a
Gymnasium upgrade breaks one, so the fix starts at the right place. Each failure names the internal
and the odyssey code that relies on it.
"""

from __future__ import annotations

import inspect
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import concatenate, create_shared_memory, read_from_shared_memory, write_to_shared_memory

from odyssey_env.env import CHARSET, ObservationText

GYM = f"Gymnasium {gym.__version__}"


class _Counter(gym.Env):
    """A sub-env whose observation is its step count and whose info is a fresh dict each call."""

    observation_space = spaces.Discrete(100)
    action_space = spaces.Discrete(2)

    def __init__(self) -> None:
        self.count = 0
        self.infos: list[dict[str, Any]] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict]:
        self.count = 0
        self.infos.append({"count": 0})
        return 0, self.infos[-1]

    def step(self, action: int) -> tuple[int, float, bool, bool, dict]:
        self.count += 1
        self.infos.append({"count": self.count})
        return self.count, 1.0, bool(action), False, self.infos[-1]


class _Spy(SyncVectorEnv):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[dict, int]] = []

    def _add_info(self, vector_infos: dict, env_info: dict, env_num: int) -> dict:
        self.calls.append((env_info, env_num))
        return super()._add_info(vector_infos, env_info, env_num)


def test_vector_env_add_info_keeps_its_name_and_parameters():
    add_info = getattr(VectorEnv, "_add_info", None)
    assert add_info is not None, f"{GYM} has no VectorEnv._add_info: odyssey_env/vector/infos.py overrides it"
    params = list(inspect.signature(add_info).parameters)
    assert params == ["self", "vector_infos", "env_info", "env_num"], (
        f"{GYM} changed VectorEnv._add_info's parameters to {params}: odyssey_env/vector/infos.py "
        "(_BatchedInfos._add_info and _fold) calls it as _add_info(vector_infos, env_info, env_num)"
    )


def test_sync_vector_env_hands_each_sub_envs_own_info_to_add_info_once_in_order():
    envs = _Spy([_Counter] * 3)
    for call in (lambda: envs.reset(seed=0), lambda: envs.step(np.array([0, 0, 0]))):
        envs.calls.clear()
        call()
        got = [(env_num, info is env.infos[-1]) for (info, env_num), env in zip(envs.calls, envs.envs, strict=False)]
        assert got == [(0, True), (1, True), (2, True)], (
            f"{GYM}'s SyncVectorEnv no longer passes each sub-env's own info dict to self._add_info once, "
            "in sub-env order: odyssey_env/vector/infos.py collects them there (_collecting) to merge at once"
        )


def test_sync_vector_env_keeps_its_per_env_state_in_the_attributes_the_lean_loop_uses():
    envs = SyncVectorEnv([_Counter] * 2, autoreset_mode=AutoresetMode.NEXT_STEP)
    where = "odyssey_env/vector/sync.py (_step_lean) and parallel.py read and replace it"
    for name in ("envs", "_env_obs", "_autoreset_envs", "_observations", "autoreset_mode", "copy"):
        assert hasattr(envs, name), f"{GYM}'s SyncVectorEnv has no attribute {name}: {where}"
    envs.reset(seed=0)
    assert list(envs._env_obs) == [0, 0], (
        f"{GYM}'s SyncVectorEnv._env_obs no longer holds each sub-env's observation: {where}"
    )
    envs.step(np.array([1, 0]))
    flags = envs._autoreset_envs
    assert isinstance(flags, np.ndarray) and flags.dtype == np.bool_ and flags.tolist() == [True, False], (
        f"{GYM}'s SyncVectorEnv._autoreset_envs is no longer the bool array terminations | truncations: {where}"
    )
    envs._autoreset_envs = np.array([False, True])  # replaced, as the lean loop replaces it
    obs, rewards, *_ = envs.step(np.array([0, 0]))
    assert obs.tolist() == [2, 0] and rewards.tolist() == [1.0, 0.0], (
        f"{GYM}'s SyncVectorEnv.step no longer reads self._autoreset_envs to reset sub-envs on the next step "
        f"(NEXT_STEP): {where}"
    )
    assert list(envs._env_obs) == [2, 0] and envs._observations.tolist() == [2, 0], (
        f"{GYM}'s SyncVectorEnv.step no longer stores observations in self._env_obs and self._observations: {where}"
    )


def test_concatenate_dispatches_on_the_space_type():
    text = concatenate.dispatch(spaces.Text)
    discrete = concatenate.dispatch(spaces.Discrete)
    where = "odyssey_env/vector/sync.py looks concatenate's function up once per space type (_concatenate)"
    assert text(spaces.Text(5), ["a", "b"], None) == ("a", "b"), f"{GYM}: concatenate for Text changed: {where}"
    out = np.zeros(2, dtype=np.int64)
    assert discrete(spaces.Discrete(3), [1, 2], out) is out and out.tolist() == [1, 2], (
        f"{GYM}: concatenate for Discrete no longer writes into its out array: {where}"
    )


def test_the_text_shared_memory_layout_is_the_one_the_codec_writes():
    space = ObservationText(8, min_length=1, charset=CHARSET)
    where = "odyssey_env/textspace.py's observation codec reads and writes that layout directly"
    for function in (create_shared_memory, read_from_shared_memory, write_to_shared_memory):
        assert hasattr(function, "register") and hasattr(function, "dispatch"), (
            f"{GYM}: {function.__name__} is no longer a singledispatch function: {where}"
        )
    assert read_from_shared_memory.dispatch(ObservationText).__module__ == "odyssey_env.textspace", (
        f"{GYM}: the codec's reader is not registered for ObservationText: {where}"
    )
    memory = create_shared_memory(space, n=2)
    assert memory.get_obj()._type_.__name__ == "c_int" and len(memory) == 2 * space.max_length, (
        f"{GYM}: a Text space's shared memory is no longer n * max_length int32 slots: {where}"
    )
    assert "".join(space.character_list) == CHARSET, (
        f"{GYM}: Text.character_list is no longer the charset in its given order (a slot's value is its index): {where}"
    )
    flat = spaces.flatten(space, "ab").tolist()
    pad = len(CHARSET)
    assert flat == [CHARSET.index("a"), CHARSET.index("b")] + [pad] * 6, (
        f"{GYM}: a Text value no longer flattens to its character indices padded with len(charset): {where}"
    )
    gymnasium_write = write_to_shared_memory.dispatch(spaces.Text)
    gymnasium_read = read_from_shared_memory.dispatch(spaces.Text)
    gymnasium_write(space, 1, "look", memory)
    write_to_shared_memory(space, 0, "wait up", memory)  # the codec
    assert gymnasium_read(space, memory, n=2) == ("wait up", "look"), (
        f"{GYM} reads the codec's slots differently: {where}"
    )
    assert tuple(read_from_shared_memory(space, memory, n=2)) == ("wait up", "look")


def test_vector_env_close_hands_its_keywords_to_close_extras_and_marks_it_closed():
    seen: dict[str, Any] = {}

    class _Closing(SyncVectorEnv):
        def close_extras(self, **kwargs: Any) -> None:
            seen.update(kwargs)
            super().close_extras()

    envs = _Closing([_Counter])
    envs.close(terminate=True, timeout=1.0)
    assert seen == {"terminate": True, "timeout": 1.0} and envs.closed, (
        f"{GYM}'s VectorEnv.close no longer passes its keywords to close_extras and sets closed: "
        "odyssey_env/vector/parallel.py ends its workers there (close(terminate=True))"
    )
