"""Vector envs: the shared-memory text codec, the batched info merge, and odyssey's vector entry point.

Speed is measured in ``benchmarks/vector_envs.py``; these tests pin down that the fast paths give
exactly what Gymnasium's own code gives.
"""

from __future__ import annotations

import multiprocessing as mp

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import SyncVectorEnv
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory
from hypothesis import given, settings
from hypothesis import strategies as st

import odyssey_env
from odyssey_env.env import CHARSET, ObservationText, OdysseyEnv
from odyssey_env.vector import OdysseyAsyncVectorEnv, OdysseySyncVectorEnv, batch_infos
from odyssey_env.wrappers import ValidActions


# ---------------------------------------------------------------------- shared-memory text codec
@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=CHARSET, max_size=300), min_size=1, max_size=6))
def test_observation_text_round_trips_through_shared_memory(texts):
    space = ObservationText(300, min_length=0, charset=CHARSET)
    memory = create_shared_memory(space, n=len(texts), ctx=mp)
    view = read_from_shared_memory(space, memory, n=len(texts))
    for i, text in enumerate(texts):
        write_to_shared_memory(space, i, "x" * 300, memory)  # a longer text first: its tail must not leak
        write_to_shared_memory(space, i, text, memory)
    assert tuple(view) == tuple(texts)
    assert [view[i] for i in range(len(texts))] == list(texts) and view[-1] == texts[-1]


def test_a_text_outside_the_charset_is_refused_as_gymnasium_does():
    space = ObservationText(50, min_length=0, charset=CHARSET)
    memory = create_shared_memory(space, n=1, ctx=mp)
    for bad in ("tab\there", "caf\u00e9", "x" * 51):
        with pytest.raises((KeyError, ValueError, IndexError)):  # gymnasium's own errors, unchanged
            write_to_shared_memory(space, 0, bad, memory)


# ---------------------------------------------------------------------- batched info merge
def _gymnasium_merge(infos):
    vector = SyncVectorEnv.__new__(SyncVectorEnv)
    vector.num_envs = len(infos)
    merged = {}
    for i, info in enumerate(infos):
        merged = vector._add_info(merged, info, i)
    return merged


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        if not (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape):
            return False
        if a.dtype == object:
            return all(_same(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True))
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    return type(a) is type(b) and (a == b or (a != a and b != b))


LEAVES = (
    st.integers(-5, 5)
    | st.booleans()
    | st.floats(allow_nan=False, width=32)
    | st.text(max_size=3)
    | st.none()
    | st.lists(st.integers(0, 3), max_size=3)
    | st.integers(0, 3).map(lambda k: np.arange(k, dtype=np.int8))
    | st.just(np.float32(1.5))
)


def _info_shape():
    keys = st.sampled_from(["step", "area", "mask", "quest", "events", "final_obs", "x", "_x"])  # "_x": x's mask
    return st.recursive(LEAVES, lambda inner: st.dictionaries(keys, inner, max_size=4), max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda n: st.lists(
            st.dictionaries(
                st.sampled_from(["step", "area", "mask", "quest", "events", "final_obs", "_mask"]),
                _info_shape(),
                max_size=5,
            ),
            min_size=n,
            max_size=n,
        )
    )
)
def test_batched_merge_equals_gymnasiums_whatever_the_infos(infos):
    # "_mask" is also the name of "mask"'s mask: Gymnasium's merge writes one into the other
    env = OdysseySyncVectorEnv.__new__(OdysseySyncVectorEnv)
    env.num_envs = len(infos)
    try:
        expected = _gymnasium_merge(infos)
    except Exception as exc:  # Gymnasium cannot merge these either: the same error comes through
        with pytest.raises(type(exc)):
            env._merged(list(enumerate(infos)))
        return
    assert _same(env._merged(list(enumerate(infos))), expected)


def test_batched_merge_of_real_infos_takes_the_fast_path():
    infos = []
    for seed in (0, 1, 2):
        env = ValidActions(OdysseyEnv("quiet_bell", valid_actions=True))
        env.reset(seed=seed)
        infos.append(env.step(0)[4])
    fast = batch_infos(infos, _gymnasium_merge)  # raises if the infos did not share one shape
    assert _same(fast, _gymnasium_merge(infos))
    assert fast["action_mask"].shape == (3, 128) and isinstance(fast["actions"][1], list)


# ---------------------------------------------------------------------- the compiled merge plan
# The plan is the fast path; its failures fall back to the exact leaf-by-leaf merge, so the tests above
# cannot see a plan that gives up too often. These pin the plan itself: it must take every info shape
# a vector env produces step after step, and when it merges, give exactly Gymnasium's result.
KINDS = {
    "int": st.integers(-5, 5),
    "float": st.floats(allow_nan=False, width=32),
    "bool": st.booleans(),
    "str": st.text(max_size=3),
    "none": st.none(),
    "list": st.lists(st.integers(0, 3), max_size=3),
    "array": st.integers(0, 3).map(lambda k: np.full(2, k, dtype=np.int16)),
    "f32": st.floats(-2, 2, width=32).map(np.float32),
    "i64": st.integers(-3, 3).map(np.int64),
}
_FIELD = st.sampled_from(["step", "area", "mask", "quest", "events", "final_obs", "x", "y", "_x"])


def _template():
    """A shape of info (nested dicts of leaf kinds), the same for every sub-env."""
    return st.dictionaries(
        _FIELD,
        st.recursive(
            st.sampled_from(sorted(KINDS)), lambda inner: st.dictionaries(_FIELD, inner, max_size=3), max_leaves=10
        ),
        max_size=6,
    )


def _fill(template, draw):
    return {k: _fill(v, draw) if isinstance(v, dict) else draw(KINDS[v]) for k, v in template.items()}


@st.composite
def _same_shape_infos(draw):
    template = draw(_template())
    return [_fill(template, draw) for _ in range(draw(st.integers(1, 4)))], template


@settings(max_examples=300, deadline=None)
@given(_same_shape_infos(), st.data())
def test_the_plan_takes_every_same_shape_step_and_equals_gymnasiums_merge(first, data):
    from odyssey_env.vector.infos import _InfoPlan, _Mismatch

    infos, template = first
    if _masks_collide_anywhere(template):  # only Gymnasium's own merge writes "x"'s mask into "_x"
        with pytest.raises(_Mismatch):
            _InfoPlan(infos)
        return
    plan = _InfoPlan(infos)  # compiles: no mismatch in infos of one shape
    assert _same(plan.merge(infos), _gymnasium_merge(infos))
    later = [_fill(template, data.draw) for _ in infos]  # a later step: same shape, other values
    if all(type(a) is type(b) for a, b in zip(_leaves(later[0]), _leaves(infos[0]), strict=True)):
        assert _same(plan.merge(later), _gymnasium_merge(later))


def _masks_collide_anywhere(template) -> bool:
    return any(
        ("_" + k in template) or (k != "final_obs" and isinstance(v, dict) and _masks_collide_anywhere(v))
        for k, v in template.items()
    )


def _leaves(info):
    for value in info.values():
        yield from _leaves(value) if isinstance(value, dict) else (value,)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda n: st.lists(
            st.dictionaries(
                st.sampled_from(["step", "area", "mask", "quest", "events", "final_obs"]), _info_shape(), max_size=5
            ),
            min_size=n,
            max_size=n,
        )
    ),
    st.integers(1, 4).flatmap(
        lambda n: st.lists(
            st.dictionaries(
                st.sampled_from(["step", "area", "mask", "quest", "events", "final_obs"]), _info_shape(), max_size=5
            ),
            min_size=n,
            max_size=n,
        )
    ),
)
def test_a_plan_either_merges_exactly_or_says_it_does_not_fit(compiled_on, infos):
    from odyssey_env.vector.infos import _InfoPlan, _Mismatch

    try:
        plan = _InfoPlan(compiled_on)
    except _Mismatch:
        return
    try:
        merged = plan.merge(infos)
    except (_Mismatch, ValueError, TypeError, KeyError):
        return  # the caller falls back to the exact merge
    assert _same(merged, _gymnasium_merge(infos))


@pytest.mark.parametrize(
    "change",
    [
        "key order",
        "key missing",
        "leaf type",
        "dict for leaf",
        "leaf for dict",
        "nested key order",
        "array shape",
        "dict for flag",
    ],
)
def test_a_plan_refuses_infos_of_another_shape(change):
    from odyssey_env.vector.infos import _InfoPlan, _Mismatch

    def info(**over):
        out = {"step": 1, "quest": {"done": False, "total": 3}, "mask": np.zeros(2, dtype=bool), "area": "yard"}
        out.update(over)
        return out

    plan = _InfoPlan([info(), info()])
    other: dict = {
        "key order": {"quest": {"done": False, "total": 3}, "step": 1, "mask": np.zeros(2, dtype=bool), "area": "yard"},
        "key missing": {"step": 1, "quest": {"done": False, "total": 3}, "mask": np.zeros(2, dtype=bool)},
        "leaf type": info(step=1.5),
        "dict for leaf": info(area={"name": "yard"}),
        "leaf for dict": info(quest=3),
        "nested key order": info(quest={"total": 3, "done": False}),
        "array shape": info(mask=np.zeros(3, dtype=bool)),
        "dict for flag": info(quest={"done": {"why": "locked"}, "total": 3}),
    }[change]
    with pytest.raises((_Mismatch, ValueError)):  # the first sub-env's shape decides: it must match
        plan.merge([other, info()])
    try:  # a later sub-env's leaves are cast as Gymnasium casts them, or refused where Gymnasium fails
        merged = plan.merge([info(), other])
    except (_Mismatch, ValueError):
        return
    assert _same(merged, _gymnasium_merge([info(), other]))


def test_a_vector_env_merges_real_steps_through_one_plan_kept_from_step_to_step():
    envs = gym.make_vec("Odyssey/QuietBell-v0", num_envs=3, max_actions=32, lazy_infos=False)
    theirs = gym.make_vec(
        "Odyssey/QuietBell-v0", num_envs=3, vectorization_mode="sync", wrappers=[lambda e: ValidActions(e, 32)]
    )
    try:
        envs.reset(seed=0), theirs.reset(seed=0)
        plans = set()
        for k in range(6):
            actions = np.full(3, k % 2)
            a, b = envs.step(actions), theirs.step(actions)
            assert _same(a[4], b[4])
            plans.add(id(envs._plan))
        assert envs._plan is not None and len(plans) == 1  # compiled once, then reused
    finally:
        envs.close()
        theirs.close()


def test_a_partial_collection_merges_as_gymnasium_merges_it():
    """A masked reset hands the merge only some sub-envs' infos: no plan, Gymnasium's layout all the same."""
    env = OdysseySyncVectorEnv.__new__(OdysseySyncVectorEnv)
    env.num_envs = 3
    info = {"step": 0, "quest": {"done": False}}
    vector = SyncVectorEnv.__new__(SyncVectorEnv)
    vector.num_envs = 3
    expected = vector._add_info({}, info, 1)
    assert _same(env._merged([(1, info)]), expected)
    assert env._merged([(1, info)])["_step"].tolist() == [False, True, False]


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda n: st.lists(
            st.dictionaries(
                st.sampled_from(["step", "area", "mask", "quest", "events", "final_obs"]), _info_shape(), max_size=5
            ),
            min_size=n,
            max_size=n,
        )
    )
)
def test_the_exact_merge_behind_the_plan_equals_gymnasiums_or_says_it_cannot(infos):
    """``batch_infos``, the leaf-by-leaf merge the plan falls back to, on its own."""
    from odyssey_env.vector.infos import _Mismatch

    try:
        expected = _gymnasium_merge(infos)
    except Exception:
        expected = None
    try:
        merged = batch_infos(infos)
    except (_Mismatch, ValueError, TypeError):
        return  # the caller folds these infos Gymnasium's way
    assert expected is not None and _same(merged, expected)


def test_the_exact_merge_casts_to_the_first_sub_env_and_hands_nested_differences_to_the_fold():
    from odyssey_env.vector.infos import _Mismatch

    infos = [{"a": 1, "m": np.zeros(2, dtype=np.int16)}, {"a": 2.5, "m": np.ones(2, dtype=np.int32)}]
    merged = batch_infos(infos)
    assert _same(merged, _gymnasium_merge(infos)) and merged["a"].tolist() == [1, 2]
    assert merged["m"].dtype == np.int16
    with pytest.raises(_Mismatch):  # a dict beside a leaf: Gymnasium's merge fails on these
        batch_infos([{"s": 1, "a": 1}, {"s": 2, "a": {"x": 1}}])
    nested = [{"s": 1, "q": {"a": 1}}, {"s": 2, "q": {"b": 2}}]  # the same top keys, other nested ones
    with pytest.raises(_Mismatch):
        batch_infos(nested)
    assert _same(batch_infos(nested, _gymnasium_merge), _gymnasium_merge(nested))


# Gymnasium's merge decides a key by what it has merged so far: a leaf after a dict is stored inside the merged
# dict under the sub-env's number, an empty dict after a leaf leaves the leaf's array as it was. Neither the plan
# nor the exact merge can hold such a key, so both must refuse it (and Gymnasium's merge then takes it): without
# the refusal the plan drops the key (a leaf first) or fails on the leaf (a dict first), and the exact merge
# merges an empty list as an empty dict.
@pytest.mark.parametrize(
    ("infos", "expected"),
    [
        pytest.param([{"s": 1, "k": {}}, {"s": 2, "k": []}], {1: []}, id="an empty dict, then a leaf of no keys"),
        pytest.param(
            [{"s": 1, "k": {"x": 1}}, {"s": 2, "k": "x"}],
            {"x": np.array([1, 0]), "_x": np.array([True, False]), 1: "x"},
            id="a dict, then a leaf of its keys",
        ),
        pytest.param(
            [{"s": 1, "k": True}, {"s": 2, "k": {}}], np.array([True, False]), id="a leaf, then an empty dict"
        ),
    ],
)
def test_a_dict_beside_a_leaf_under_one_key_merges_as_gymnasium_merges_it(infos, expected):
    from odyssey_env.vector.infos import _InfoPlan, _Mismatch

    with pytest.raises(_Mismatch):
        _InfoPlan(infos)
    with pytest.raises(_Mismatch):
        batch_infos(infos)
    env = OdysseySyncVectorEnv.__new__(OdysseySyncVectorEnv)
    env.num_envs = 2
    merged = env._merged(list(enumerate(infos)))
    assert _same(merged, _gymnasium_merge(infos))
    assert _same(merged["k"], expected) and merged["_k"].tolist() == [True, True]


def test_a_dict_beside_a_flag_fails_as_gymnasiums_merge_fails_even_through_a_kept_plan():
    """numpy takes a dict's truth for a bool leaf: the plan must refuse it rather than merge it."""
    from odyssey_env.vector.infos import _Mismatch

    env = OdysseySyncVectorEnv.__new__(OdysseySyncVectorEnv)
    env.num_envs = 2
    bad = [{"s": 1, "k": True}, {"s": 2, "k": {"a": 1}}]
    with pytest.raises(AttributeError):
        _gymnasium_merge(bad)
    with pytest.raises(AttributeError):  # no plan yet: compiling one must refuse the shape
        env._merged(list(enumerate(bad)))
    assert env._merged(list(enumerate([{"s": 1, "k": True}, {"s": 2, "k": False}])))["k"].tolist() == [True, False]
    kept = env._plan
    assert kept is not None
    with pytest.raises(AttributeError):  # a plan kept from a step of flags: merging must refuse the dict
        env._merged(list(enumerate(bad)))
    with pytest.raises(_Mismatch):
        kept.merge(bad)


# Gymnasium's merge goes sub-env by sub-env, the faster merges key by key (the plan a numeric type at a time): on
# infos with two values it cannot merge, each meets another one first. The error must be Gymnasium's all the same.
_TWO_BAD_VALUES = [
    pytest.param(
        [{"a": 1, "b": 1}, {"a": 1, "b": "s"}, {"a": 2**70, "b": 1}],
        ValueError,
        id="key by key, a number too large comes first",
    ),
    pytest.param(
        [{"x": {"a": 1}, "b": 1}, {"x": {"a": "s"}, "b": 2**70}],
        ValueError,
        id="in the plan's int table, a number too large comes first",
    ),
    pytest.param(
        [{"s": {"e": 0}, "m": 0}, {"s": {}, "m": None}, {"s": {"s": 0, "e": {"s": {}}}, "m": 0}],
        TypeError,
        id="key by key, the fold of a nested difference fails first",
    ),
]


@pytest.mark.parametrize(("infos", "error"), _TWO_BAD_VALUES)
def test_infos_gymnasium_cannot_merge_fail_with_its_error_whichever_bad_value_comes_first(infos, error):
    with pytest.raises(error) as gymnasiums:
        _gymnasium_merge(infos)
    env = OdysseySyncVectorEnv.__new__(OdysseySyncVectorEnv)
    env.num_envs = len(infos)
    with pytest.raises(error) as ours:
        env._merged(list(enumerate(infos)))
    assert ours.type is gymnasiums.type is error


def test_one_sub_env_merges_through_the_plan_and_the_exact_merge_as_gymnasium_merges_it():
    from odyssey_env.vector.infos import _InfoPlan

    infos = [
        {
            "step": 3,
            "quest": {"done": True, "area": "yard"},
            "mask": np.ones(2, dtype=np.int16),
            "final_obs": {"text": "the yard"},
        }
    ]
    expected = _gymnasium_merge(infos)
    assert _same(_InfoPlan(infos).merge(infos), expected) and _same(batch_infos(infos), expected)
    assert expected["mask"].shape == (1, 2) and expected["final_obs"][0] == {"text": "the yard"}


def test_a_plan_is_not_compiled_on_sub_envs_whose_keys_differ():
    from odyssey_env.vector.infos import _InfoPlan, _Mismatch

    for other in ({"step": 2}, {"area": "yard", "step": 2}):  # a key missing; the same keys in another order
        with pytest.raises(_Mismatch):
            _InfoPlan([{"step": 1, "area": "camp"}, other])


# An array leaf decides its key's dtype and row shape; a later sub-env's value is cast into that row. numpy
# makes the same rows of a list, but broadcasts a scalar only where Gymnasium's row assignment does (not into
# an object array's row), so the merges must take a later value that is not an array, and refuse a row of
# another shape rather than keep it.
@pytest.mark.parametrize(
    "infos",
    [
        pytest.param([{"m": np.zeros(2, dtype=np.int16)}, {"m": [1, 2]}], id="an array, then a list as long"),
        pytest.param([{"m": np.array([7, 8], dtype=object)}, {"m": 5}], id="an object array, then a scalar"),
    ],
)
def test_an_array_leaf_takes_a_later_sub_envs_value_as_gymnasium_takes_it(infos):
    from odyssey_env.vector.infos import _InfoPlan, _Mismatch

    env = OdysseySyncVectorEnv.__new__(OdysseySyncVectorEnv)
    env.num_envs = 2
    expected = _gymnasium_merge(infos)
    assert _same(env._merged(list(enumerate(infos))), expected) and expected["m"].shape == (2, 2)
    for merge in (_InfoPlan(infos).merge, batch_infos):
        try:
            merged = merge(infos)
        except _Mismatch:
            assert expected["m"].dtype == object  # a row numpy would not broadcast: Gymnasium's merge takes it
        else:
            assert _same(merged, expected)


def test_a_later_sub_envs_leaves_are_cast_to_the_first_ones_types_as_gymnasium_casts_them():
    from odyssey_env.vector.infos import _InfoPlan

    infos = [
        {"a": 1, "q": {"b": True, "c": 0.5}, "m": np.zeros(2, dtype=np.int16), "s": "x"},
        {"a": 2.0, "q": {"b": 0, "c": 1}, "m": np.ones(2, dtype=np.int32), "s": None},
    ]
    plan = _InfoPlan(infos)
    merged = plan.merge(infos)
    assert _same(merged, _gymnasium_merge(infos))
    assert merged["a"].dtype == np.int64 and merged["q"]["b"].dtype == np.bool_ and merged["m"].dtype == np.int16


def test_only_a_full_collection_in_order_takes_the_plan():
    env = OdysseySyncVectorEnv.__new__(OdysseySyncVectorEnv)
    env.num_envs = 3
    info = {"step": 0}
    first_only = env._merged([(0, info)])  # sub-env 0 alone (a masked reset): still arrays of 3
    assert first_only["step"].shape == (3,) and first_only["_step"].tolist() == [True, False, False]
    shuffled = env._merged([(1, {"step": 1}), (0, {"step": 0}), (2, {"step": 2})])
    assert shuffled["step"].tolist() == [0, 1, 2]


def test_outside_a_step_add_info_is_gymnasiums_own():
    env = OdysseySyncVectorEnv.__new__(OdysseySyncVectorEnv)
    env.num_envs = 2
    merged = env._add_info({}, {"step": 4}, 1)
    assert merged["step"].tolist() == [0, 4] and merged["_step"].tolist() == [False, True]
    with env._collecting() as collected:
        assert env._add_info({}, {"step": 5}, 0) == {}
    assert collected == [(0, {"step": 5})]
    assert env._add_info({}, {"step": 6}, 0)["step"].tolist() == [6, 0]  # collecting has ended


def test_tuple_getters_return_tuples_for_any_number_of_items():
    from odyssey_env.vector.infos import _tuple_getter

    row = {"a": 1, "b": 2, "c": 3}
    assert _tuple_getter(())(row) == ()
    assert _tuple_getter(("b",))(row) == (2,)
    assert _tuple_getter(("c", "a"))(row) == (3, 1)


# ---------------------------------------------------------------------- the vector entry point
def test_make_vec_without_a_mode_builds_odysseys_vector_env():
    envs = gym.make_vec("Odyssey/Mossfall-v0", num_envs=2)
    try:
        assert isinstance(envs, OdysseySyncVectorEnv)
    finally:
        envs.close()
    with pytest.raises(ValueError, match="num_envs"):
        odyssey_env.vector.make_vector_env(0, game="mossfall")


@pytest.mark.parametrize("asynchronous", [False, True])
def test_odyssey_vector_env_matches_gymnasiums_step_for_step(asynchronous):
    ours = gym.make_vec("Odyssey/Mossfall-v0", num_envs=3, asynchronous=asynchronous, max_episode_steps=4)
    theirs = gym.make_vec(
        "Odyssey/Mossfall-v0", num_envs=3, vectorization_mode="sync", wrappers=[lambda e: gym.wrappers.TimeLimit(e, 4)]
    )
    try:
        assert isinstance(ours, OdysseyAsyncVectorEnv if asynchronous else OdysseySyncVectorEnv)
        a, b = ours.reset(seed=5), theirs.reset(seed=5)
        assert list(a[0]) == list(b[0]) and _same(a[1], b[1])
        # long observations then short ones (an invalid command's), then an autoreset after truncation
        for actions in (
            ["wait", "enter smithy_yard", "pick up coin"],
            ["x", "y", "z"],
            ["wait"] * 3,
            ["wait"] * 3,
            ["defend"] * 3,
        ):
            a, b = ours.step(actions), theirs.step(actions)
            assert list(a[0]) == list(b[0])
            for x, y in zip(a[1:4], b[1:4], strict=True):
                assert np.array_equal(x, y)
            assert _same(a[4], b[4])
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("asynchronous", [False, True])
def test_valid_actions_in_vector_envs_are_plain_lists_per_sub_env(asynchronous):
    envs = gym.make_vec("Odyssey/QuietBell-v0", num_envs=2, asynchronous=asynchronous, max_actions=64)
    try:
        assert envs.single_action_space == gym.spaces.Discrete(64)
        _, infos = envs.reset(seed=0)
        masks = infos["action_mask"]
        assert masks.shape == (2, 64) and masks.dtype == np.bool_
        for i in range(2):
            commands = infos["actions"][i]
            assert type(commands) is list and all(type(c) is str for c in commands)
            assert masks[i].sum() == len(commands)
        assert [m.tolist() for m in envs.call("action_masks")] == masks.tolist()
        assert list(envs.call("valid_commands")) == list(infos["actions"])
        actions = np.array([np.flatnonzero(m)[-1] for m in masks])
        before = list(infos["actions"])
        _, _, _, _, infos = envs.step(actions)
        assert not infos["invalid_action"].any()
        assert list(infos["command"]) == [before[i][actions[i]] for i in range(2)]
    finally:
        envs.close()


@pytest.mark.parametrize("asynchronous", [False, True])
def test_observations_kept_from_an_earlier_step_stay_as_they_were(asynchronous):
    envs = gym.make_vec("Odyssey/Mossfall-v0", num_envs=2, asynchronous=asynchronous)
    try:
        first, _ = envs.reset(seed=0)
        kept = tuple(first)
        second, *_ = envs.step(["wait", "jump"])
        assert tuple(first) == kept and tuple(second) != kept and type(first) is tuple
    finally:
        envs.close()


def test_info_keys_keep_vector_infos_small():
    envs = gym.make_vec(
        "Odyssey/QuietBell-v0", num_envs=2, max_actions=32, info_keys=["invalid_action", "reward_breakdown"]
    )
    try:
        _, infos = envs.reset(seed=0)
        _, _, _, _, infos = envs.step(np.zeros(2, dtype=np.int64))
        data_keys = [k for k in infos if not k.startswith("_")]
        assert data_keys == [
            "invalid_action",
            "reward_breakdown",
            "action_mask",
            "actions",
            "actions_dropped",
            "command",
        ]
        assert infos["reward_breakdown"]["quest"].dtype.kind == "i"
    finally:
        envs.close()


def test_info_keys_pick_a_subset_in_a_fixed_order(tiny_game):
    full = OdysseyEnv(tiny_game)
    lean = OdysseyEnv(tiny_game, info_keys=["events", "step"])
    full.reset(seed=0)
    assert list(lean.reset(seed=0)[1]) == ["step", "events"]
    a, b = full.step("enter yard")[4], lean.step("enter yard")[4]
    assert b == {"step": a["step"], "events": a["events"]}
    with pytest.raises(ValueError, match="unknown info key"):
        OdysseyEnv(tiny_game, info_keys=["valid_actions"])
    import pickle

    assert pickle.loads(pickle.dumps(lean)).info_keys == ("step", "events")


def test_arrays_a_step_returns_are_the_callers_to_change():
    """The lean step loop hands out fresh arrays: changing them changes nothing in the env."""
    ours = gym.make_vec("Odyssey/Mossfall-v0", num_envs=2, max_episode_steps=3)
    theirs = gym.make_vec(
        "Odyssey/Mossfall-v0", num_envs=2, vectorization_mode="sync", wrappers=[lambda e: gym.wrappers.TimeLimit(e, 3)]
    )
    try:
        ours.reset(seed=0), theirs.reset(seed=0)
        for step in range(7):
            actions = ["wait", "defend"] if step % 2 else ["defend", "wait"]
            a, b = ours.step(actions), theirs.step(actions)
            for x, y in zip(a[1:4], b[1:4], strict=True):
                assert np.array_equal(x, y)
            a[1][:] = 99.0  # a caller scribbling on what it was given
            a[2][:] = True
            a[3][:] = not a[3][0]
    finally:
        ours.close()
        theirs.close()


class _Scripted(gym.Env):
    """Steps return the reward and flags it is told to, whatever their type."""

    observation_space = gym.spaces.Discrete(3)
    action_space = gym.spaces.Discrete(3)

    def __init__(self, outcomes):
        self.outcomes, self.t = outcomes, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {"t": self.t}

    def step(self, action):
        reward, terminated, truncated = self.outcomes[self.t % len(self.outcomes)]
        self.t += 1
        return int(action), reward, terminated, truncated, {"t": self.t}


@pytest.mark.parametrize(
    "outcome",
    [
        (1, False, False),
        (np.float32(0.25), np.bool_(True), False),
        (True, 1, 0),
        ("1.5", "", "x"),
        (np.int64(-3), False, np.True_),
        (None, False, False),
        ("many", False, False),
        (1.0, None, False),
        (np.array([2.0]), False, False),
        (1.0, False, [1, 2]),
    ],
    ids=repr,
)
def test_the_lean_step_stores_rewards_and_flags_as_gymnasiums_loop_does(outcome):
    """Same values and dtypes, the same autoresets after them, or the same error."""
    fns = [lambda: _Scripted([(0.5, False, False)]), lambda o=outcome: _Scripted([o, (0.0, False, False)])]
    ours, theirs = OdysseySyncVectorEnv(fns), SyncVectorEnv(fns)
    try:
        ours.reset(seed=1), theirs.reset(seed=1)
        for actions in ([1, 2], np.array([0, 1]), (2, 2), [1, 0]):
            try:
                expected = theirs.step(actions)
            except Exception as exc:  # whichever error Gymnasium's loop raises, ours must raise
                with pytest.raises(type(exc)):
                    ours.step(actions)
                return
            got = ours.step(actions)
            assert list(got[0]) == list(expected[0])
            for x, y in zip(got[1:4], expected[1:4], strict=True):
                assert x.dtype == y.dtype
                np.testing.assert_array_equal(x, y)  # NaN (a reward of None) equal to NaN
            assert np.array_equal(ours._autoreset_envs, theirs._autoreset_envs)
    finally:
        ours.close()
        theirs.close()


def _generic_step_forbidden(monkeypatch):
    def refuse(self, actions):
        raise RuntimeError("Gymnasium's generic step")

    monkeypatch.setattr(SyncVectorEnv, "step", refuse)


@pytest.mark.parametrize(
    "actions", [["wait", "defend"], ("wait", "defend"), np.array(["wait", "defend"])], ids=["list", "tuple", "array"]
)
def test_text_commands_take_the_lean_loop_and_other_steps_gymnasiums(monkeypatch, actions):
    envs = gym.make_vec("Odyssey/Mossfall-v0", num_envs=2)
    same_step = OdysseySyncVectorEnv(
        [lambda: OdysseyEnv("mossfall")] * 2, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    try:
        envs.reset(seed=0), same_step.reset(seed=0)
        _generic_step_forbidden(monkeypatch)
        obs, rewards, terminated, _, infos = envs.step(actions)
        assert len(obs) == 2 and infos["step"].tolist() == [1, 1] and rewards.shape == terminated.shape == (2,)
        _, _, _, _, collected = envs._step_collected(actions)
        assert [i for i, _ in collected] == [0, 1] and [info["step"] for _, info in collected] == [2, 2]
        for generic in (
            lambda: same_step.step(actions),
            lambda: same_step._step_collected(actions),
            lambda: envs.step(iter(actions)),
        ):  # not a list, tuple or array: Gymnasium's loop decides
            with pytest.raises(RuntimeError, match="generic step"):
                generic()
    finally:
        envs.close()
        same_step.close()


def test_action_indices_take_the_lean_loop_and_other_action_spaces_gymnasiums(monkeypatch):
    indices = gym.make_vec("Odyssey/Mossfall-v0", num_envs=2, max_actions=16)
    boxed = OdysseySyncVectorEnv([lambda: gym.wrappers.RescaleAction(gym.make("MountainCarContinuous-v0"), 0, 1)] * 2)
    try:
        indices.reset(seed=0), boxed.reset(seed=0)
        _generic_step_forbidden(monkeypatch)
        assert indices.step(np.array([0, 1]))[4]["step"].tolist() == [1, 1]
        with pytest.raises(RuntimeError, match="generic step"):
            boxed.step(np.array([[0.5], [0.5]]))
    finally:
        indices.close()
        boxed.close()


def test_the_lean_loop_refuses_what_gymnasiums_refuses():
    fns = [lambda: _Scripted([(1.0, True, False)])] * 2
    ours = OdysseySyncVectorEnv(fns, autoreset_mode=gym.vector.AutoresetMode.DISABLED)
    theirs = SyncVectorEnv(fns, autoreset_mode=gym.vector.AutoresetMode.DISABLED)
    try:
        with pytest.raises(ValueError, match="expected 2 actions, one per sub-env, got 3"):
            ours.step([0, 1, 2])
        ours.reset(seed=0), theirs.reset(seed=0)
        ours.step([0, 1]), theirs.step([0, 1])  # both terminate: with autoreset off, they must be reset first
        with pytest.raises(AssertionError) as gyms:
            theirs.step([0, 1])
        with pytest.raises(AssertionError) as mine:
            ours.step([0, 1])
        assert str(mine.value) == str(gyms.value)
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("copy", [True, False])
def test_the_lean_loop_copies_observations_as_asked(copy):
    envs = OdysseySyncVectorEnv([lambda: _Scripted([(0.0, False, False)])] * 2, copy=copy)
    try:
        envs.reset(seed=0)
        obs = envs.step([1, 2])[0]
        assert obs.tolist() == [1, 2] and (obs is envs._observations) is not copy
    finally:
        envs.close()


def test_steps_gymnasiums_loop_takes_give_what_gymnasium_gives():
    """Same-step autoreset (Gymnasium's loop, infos collected and merged once) against Gymnasium's env."""
    fns = [lambda: _Scripted([(1.0, False, False), (2.0, True, False)]), lambda: _Scripted([(0.5, False, True)])]
    same_step = gym.vector.AutoresetMode.SAME_STEP
    ours, theirs = OdysseySyncVectorEnv(fns, autoreset_mode=same_step), SyncVectorEnv(fns, autoreset_mode=same_step)
    try:
        ours.reset(seed=0), theirs.reset(seed=0)
        for step in range(4):
            got = ours.step([1, 2]) if step % 2 else (*ours._step_collected([1, 2])[:4], None)
            expected = theirs.step([1, 2])
            for x, y in zip(got[:4], expected[:4], strict=True):
                assert np.array_equal(x, y)
            if got[4] is not None:
                assert _same(got[4], expected[4])
    finally:
        ours.close()
        theirs.close()
