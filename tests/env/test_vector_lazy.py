"""Lazy vector infos: each key merged when first read, and every read equal to Gymnasium's eager merge.

``make_vector_env`` (what ``gym.make_vec(id, N)`` builds) returns infos whose keys are merged on demand
(``odyssey_env.vector.infos._LazyInfos``). These tests hold it to the eager merge: key by key in any
order, as a whole through every dict operation, late (steps after the one that returned it), and with
Gymnasium's own vector wrappers on top.
"""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odyssey_env
from odyssey_env.game import available_games
from odyssey_env.vector import OdysseySyncVectorEnv, make_vector_env
from odyssey_env.vector.infos import _LazyInfos
from tests.env.test_vector import _TWO_BAD_VALUES, _gymnasium_merge, _info_shape, _same


def _lazy_env(num_envs: int) -> OdysseySyncVectorEnv:
    env = OdysseySyncVectorEnv.__new__(OdysseySyncVectorEnv)
    env.num_envs = num_envs
    env.lazy_infos = True
    return env


def _merge_or_error(infos):
    try:
        return _gymnasium_merge(infos), None
    except Exception as exc:  # Gymnasium's own error is what a lazy read must raise
        return None, type(exc)


_TOP = st.sampled_from(["step", "area", "mask", "quest", "events", "final_obs", "x", "_x"])


@st.composite
def _infos_and_reads(draw):
    n = draw(st.integers(1, 4))
    keys = draw(st.lists(_TOP, unique=True, max_size=5))
    if draw(st.booleans()):  # the usual case: every sub-env's info has the same keys
        infos = [{k: draw(_info_shape()) for k in keys} for _ in range(n)]
    else:
        infos = [draw(st.dictionaries(_TOP, _info_shape(), max_size=5)) for _ in range(n)]
    names = sorted({k for info in infos for k in info} | {"_" + k for info in infos for k in info})
    return infos, draw(st.lists(st.sampled_from(names), max_size=8) if names else st.just([]))


@settings(max_examples=400, deadline=None)
@given(_infos_and_reads())
def test_every_key_read_equals_gymnasiums_merge_of_that_key(case):
    infos, reads = case
    env = _lazy_env(len(infos))
    whole, whole_error = _merge_or_error(infos)
    try:
        merged = env._merged(list(enumerate(infos)))
    except Exception as exc:  # not taken lazily: the eager merge's error
        assert whole_error is not None and type(exc) is whole_error
        return
    if type(merged) is dict:  # not lazy (keys differing between sub-envs): the eager merge, already checked
        assert whole_error is None and _same(merged, whole)
        return
    assert isinstance(merged, _LazyInfos)
    if whole is not None:
        assert list(merged) == list(whole)
    for key in reads:  # in hypothesis's order, masks before their keys too, some keys twice
        name = key[1:] if key.startswith("_") else key
        one, one_error = _merge_or_error([{name: info[name]} for info in infos])
        if one_error is not None:
            with pytest.raises(one_error):
                merged[key]
            return
        assert _same(merged[key], one[key])
        assert merged[key] is merged[key]  # merged once, then kept
    if whole_error is not None:
        with pytest.raises(whole_error):
            merged.items()
        return
    assert _same(dict(merged.items()), whole)


def test_infos_that_could_collide_with_masks_are_merged_eagerly():
    env = _lazy_env(2)
    infos = [{"x": 1, "_x": 5}, {"x": 2, "_x": 6}]  # Gymnasium's mask of "x" overwrites "_x"
    merged = env._merged(list(enumerate(infos)))
    assert type(merged) is dict and _same(merged, _gymnasium_merge(infos))
    differing = [{"a": 1}, {"b": 2}]
    merged = env._merged(list(enumerate(differing)))
    assert type(merged) is dict and _same(merged, _gymnasium_merge(differing))


def test_a_key_gymnasium_cannot_merge_raises_when_read_and_the_others_still_read():
    env = _lazy_env(2)
    infos = [{"ok": 1, "bad": 1}, {"ok": 2, "bad": "not a number"}]
    merged = env._merged(list(enumerate(infos)))
    with pytest.raises(ValueError):
        _gymnasium_merge(infos)
    with pytest.raises(ValueError):
        merged["bad"]
    assert merged["ok"].tolist() == [1, 2] and merged["_ok"].tolist() == [True, True]
    with pytest.raises(ValueError):
        merged.values()


# ---------------------------------------------------------------------- real envs
def _policy(infos, rng, num_envs, max_actions):
    if max_actions:
        return np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
    return [rng.choice(["wait", "defend", "look", "inventory", "nonsense"]) for _ in range(num_envs)]


@pytest.mark.parametrize("game", available_games())
def test_infos_read_steps_later_equal_the_eager_merge_of_their_step(game):
    """Sub-env infos are kept unmerged until read: the env must never change them afterwards."""
    kwargs = {"game": game, "max_actions": 64, "max_episode_steps": 15}
    lazy, eager = make_vector_env(3, **kwargs), make_vector_env(3, lazy_infos=False, **kwargs)
    try:
        kept = [lazy.reset(seed=7)[1]]
        expected = [eager.reset(seed=7)[1]]
        rng = np.random.default_rng(0)
        for _ in range(40):
            actions = _policy(expected[-1], rng, 3, 64)
            kept.append(lazy.step(actions)[4])
            expected.append(eager.step(actions)[4])
        assert all(isinstance(k, _LazyInfos) for k in kept) and all(type(e) is dict for e in expected)
        for i, (k, e) in enumerate(zip(kept, expected, strict=True)):
            if i % 2:
                assert _same(dict(k.items()), e)  # all at once, by the plan
            else:
                assert list(k) == list(e)
                assert all(_same(k[key], e[key]) for key in reversed(list(e)))  # key by key, masks first
    finally:
        lazy.close()
        eager.close()


def test_an_async_vector_env_gives_lazy_infos_equal_to_the_sync_eager_ones():
    kwargs = {"game": "quiet_bell", "max_actions": 64, "max_episode_steps": 10}
    lazy = make_vector_env(3, asynchronous=True, workers=1, **kwargs)
    eager = make_vector_env(3, lazy_infos=False, **kwargs)
    try:
        a, b = lazy.reset(seed=3)[1], eager.reset(seed=3)[1]
        assert isinstance(a, _LazyInfos) and _same(a, b)
        rng = np.random.default_rng(1)
        for _ in range(25):
            actions = _policy(b, rng, 3, 64)
            a, b = lazy.step(actions)[4], eager.step(actions)[4]
            assert _same(a["action_mask"], b["action_mask"]) and _same(a, b)
    finally:
        lazy.close()
        eager.close()


@pytest.fixture
def stepped():
    """A lazy info and the eager merge of the same step."""
    kwargs = {"game": "quiet_bell", "max_actions": 32}
    lazy, eager = make_vector_env(2, **kwargs), make_vector_env(2, lazy_infos=False, **kwargs)
    lazy.reset(seed=0), eager.reset(seed=0)
    actions = np.array([0, 1])
    yield lazy.step(actions)[4], eager.step(actions)[4]
    lazy.close()
    eager.close()


@pytest.mark.parametrize("how", ["dict", "unpack", "copy", "copy.copy", "deepcopy", "pickle", "update", "or", "ror"])
def test_whole_dict_operations_see_every_key_merged(stepped, how):
    lazy, eager = stepped
    whole = {
        "dict": lambda x: dict(x),
        "unpack": lambda x: {**x},
        "copy": lambda x: x.copy(),
        "copy.copy": copy.copy,
        "deepcopy": copy.deepcopy,
        "pickle": lambda x: pickle.loads(pickle.dumps(x)),
        "update": lambda x: (lambda d: (d.update(x), d)[1])({}),
        "or": lambda x: x | {},
        "ror": lambda x: {} | x,
    }[how](lazy)
    assert type(whole) is dict and _same(whole, eager)


def test_reading_methods_match_a_plain_dict(stepped):
    lazy, eager = stepped
    assert len(lazy) == len(eager) and list(lazy) == list(eager) and list(lazy.keys()) == list(eager.keys())
    assert "action_mask" in lazy and "_actions" in lazy and "nope" not in lazy
    assert lazy.get("nope") is None and lazy.get("nope", 3) == 3
    assert _same(lazy.get("command"), eager["command"]) and _same(lazy.get("_command"), eager["_command"])
    with pytest.raises(KeyError):
        lazy["nope"]
    assert repr(lazy) == repr(eager)
    assert lazy != {} and (lazy == {}) is False
    assert [k for k, _ in lazy.items()] == list(eager) and len(list(lazy.values())) == len(eager)


def test_writes_before_reads_win_and_deleted_keys_stay_deleted(stepped):
    lazy, eager = stepped
    lazy["action_mask"] = "mine"
    del lazy["_actions"]
    assert lazy["action_mask"] == "mine" and _same(lazy["_action_mask"], eager["_action_mask"])
    assert _same(lazy["actions"], eager["actions"]) and "_actions" not in lazy
    assert _same(lazy.pop("command"), eager["command"]) and "command" not in lazy
    assert _same(lazy.setdefault("area", None), eager["area"]) and lazy.setdefault("new", 1) == 1
    key, value = lazy.popitem()
    assert key == "new" and value == 1
    lazy |= {"extra": 2}
    rest = {k: v for k, v in eager.items() if k not in ("command", "_actions")}
    rest["action_mask"], rest["extra"] = "mine", 2
    assert _same(dict(lazy), rest)


def test_gymnasiums_vector_wrappers_see_the_same_infos():
    kwargs = {"game": "mossfall", "max_episode_steps": 6}
    lazy = gym.wrappers.vector.DictInfoToList(gym.wrappers.vector.RecordEpisodeStatistics(make_vector_env(2, **kwargs)))
    eager = gym.wrappers.vector.DictInfoToList(
        gym.wrappers.vector.RecordEpisodeStatistics(make_vector_env(2, lazy_infos=False, **kwargs))
    )
    try:
        a, b = lazy.reset(seed=1)[1], eager.reset(seed=1)[1]
        assert type(a) is list and len(a) == len(b) == 2
        episodes = 0
        for step in range(14):
            actions = ["wait", "look"] if step % 2 else ["defend", "wait"]
            a, b = lazy.step(actions)[4], eager.step(actions)[4]
            for x, y in zip(a, b, strict=True):
                assert list(x) == list(y)
                assert repr({k: v for k, v in x.items() if k != "episode"}) == repr(
                    {k: v for k, v in y.items() if k != "episode"}
                )  # episode["t"] is a clock
                assert ("episode" in x) == ("episode" in y)
                if "episode" in x:
                    episodes += 1
                    assert x["episode"]["r"] == y["episode"]["r"] and x["episode"]["l"] == y["episode"]["l"]
        assert episodes == 4  # both sub-envs truncated after 6 and after 12 steps
    finally:
        lazy.close()
        eager.close()


def test_lazy_infos_are_make_vector_envs_default_and_opt_in_for_other_env_fns():
    envs = gym.make_vec(odyssey_env.env_id("mossfall"), num_envs=2)
    plain = OdysseySyncVectorEnv([lambda: odyssey_env.env.OdysseyEnv("mossfall")] * 2)
    try:
        assert isinstance(envs.reset(seed=0)[1], _LazyInfos)
        assert type(plain.reset(seed=0)[1]) is dict  # foreign sub-envs might change an info they returned
    finally:
        envs.close()
        plain.close()


# ---------------------------------------------------------------------- explicit cases (mutation testing)
_TWO = [{"a": 1, "b": 2.5, "c": "x"}, {"a": 3, "b": 4.0, "c": "y"}]


def test_an_ordinary_key_is_merged_without_gymnasiums_merge_and_a_nested_difference_with_it():
    """The key-by-key merge is the fast path: Gymnasium's merge (``_fold``) only takes what it cannot."""
    env = _lazy_env(2)
    real, calls = env._fold, []
    env._fold = lambda infos, env_nums=None: calls.append(len(infos)) or real(infos, env_nums)
    infos = [{"a": 1, "c": "x", "v": {"x": 1}}, {"a": 3, "c": "y", "v": {"y": 2}}]
    lazy = env._merged(list(enumerate(infos)))
    assert isinstance(lazy, _LazyInfos)
    assert lazy["a"].tolist() == [1, 3] and lazy["_c"].tolist() == [True, True] and lazy["c"].tolist() == ["x", "y"]
    assert calls == []
    assert _same(lazy["v"], _gymnasium_merge([{"v": info["v"]} for info in infos])["v"]) and calls == [2]


def test_popitem_gives_the_last_key_merged():
    env = _lazy_env(2)
    lazy = env._merged(list(enumerate(_TWO)))
    eager = _gymnasium_merge(_TWO)
    key, value = lazy.popitem()
    assert key == "_c" and _same(value, eager["_c"])
    del eager["_c"]
    assert _same(dict(lazy), eager)


def test_equality_merges_both_sides_first():
    """One sub-env: arrays of one element compare as one truth value, so ``==`` of whole dicts is defined."""
    infos = [{"a": 1, "c": "x"}]
    one, other = _lazy_env(1)._merged(list(enumerate(infos))), _lazy_env(1)._merged(list(enumerate(infos)))
    assert isinstance(one, _LazyInfos) and isinstance(other, _LazyInfos)
    assert one == other and other == one and (one != other) is False
    fresh = _lazy_env(1)._merged(list(enumerate(infos)))
    assert fresh == _gymnasium_merge(infos) and _gymnasium_merge(infos) == _lazy_env(1)._merged(list(enumerate(infos)))
    assert fresh != {**_gymnasium_merge(infos), "a": np.array([2])}


def test_a_value_not_merged_yet_reads_as_pending_past_the_dicts_methods():
    """What reads the dict past its own methods (``dict.__repr__``, as a debugger may) sees a named placeholder."""
    lazy = _lazy_env(2)._merged(list(enumerate(_TWO)))
    assert dict.__repr__(lazy) == "{" + ", ".join(f"'{k}': <pending>" for k in ("a", "_a", "b", "_b", "c", "_c")) + "}"
    lazy["b"]
    assert "'b': array([2.5, 4. ])" in dict.__repr__(lazy) and "'a': <pending>" in dict.__repr__(lazy)


@pytest.mark.parametrize(("infos", "error"), _TWO_BAD_VALUES)
def test_a_key_gymnasium_cannot_merge_fails_with_its_error_whichever_bad_value_comes_first(infos, error):
    nested = [{"k": info, "ok": i} for i, info in enumerate(infos)]  # the bad values inside one top-level key
    with pytest.raises(error) as gymnasiums:
        _gymnasium_merge([{"k": info} for info in infos])
    lazy = _lazy_env(len(infos))._merged(list(enumerate(nested)))
    assert isinstance(lazy, _LazyInfos)
    with pytest.raises(error) as ours:
        lazy["k"]
    assert ours.type is gymnasiums.type is error
    assert lazy["ok"].tolist() == list(range(len(infos)))
    with pytest.raises(error) as whole:
        lazy.items()
    assert whole.type is error


def test_the_rest_is_merged_once_and_the_sub_envs_infos_are_let_go():
    env = _lazy_env(2)
    real, calls = env._merged_in_full, []
    env._merged_in_full = lambda infos: calls.append(len(infos)) or real(infos)
    lazy = env._merged(list(enumerate(_TWO)))
    lazy["a"]
    assert calls == []  # one key: merged by itself
    first = dict(lazy.items())
    assert calls == [2] and _same(first, _gymnasium_merge(_TWO))
    lazy.values(), lazy.copy(), repr(lazy), lazy == first, pickle.dumps(lazy)
    assert calls == [2]  # everything is merged: nothing left to merge again, nor sub-env infos to hold
    assert all(_same(lazy[k], v) and lazy[k] is first[k] for k, v in first.items())
