"""Metrics against values computed by hand on a small scripted trajectory."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odyssey_env.game import GAMES_DIR, load_game
from odyssey_eval.metrics import (
    compute_metrics,
    cumulative_rewards,
    normalized_combined,
    normalized_entropy,
    windowed_diversity,
)
from odyssey_eval.trajectory import Trajectory

ZERO = {"quest": 0, "side_quest": 0, "exploration": 0, "craft": 0, "defeat": 0, "trade": 0, "death": 0}


def step(
    n,
    action,
    *,
    tutorial=False,
    reward=None,
    invalid=False,
    failed=False,
    events=(),
    tokens=(0, 0),
    seconds=0.0,
    area="hearth_square",
):
    return {
        "step": n,
        "action": action,
        "tutorial": tutorial,
        "observation": f"obs {n}",
        "reward": {**ZERO, **(reward or {})},
        "invalid": invalid,
        "failed": failed,
        "events": list(events),
        "area": area,
        "time": f"0001-01-01 08:{10 * n:02d}:00",
        "in_tutorial": tutorial,
        "terminated": False,
        "tokens": list(tokens),
        "decision_time": seconds,
    }


def scripted() -> Trajectory:
    reset = {
        "format": 1,
        "step": 0,
        "reset": True,
        "game": "mossfall",
        "seed": 0,
        "observation": "start",
        "area": "hearth_square",
        "time": "0001-01-01 08:00:00",
        "in_tutorial": True,
    }
    steps = [
        step(
            1,
            "pick up coin",
            tutorial=True,
            tokens=(10, 2),
            seconds=0.5,
            events=[{"kind": "object_acquired", "object": "coin", "handle": "coin", "how": "picked", "first": False}],
        ),
        step(2, "dance wildly", tutorial=True, invalid=True, tokens=(10, 2), seconds=0.5),
        step(
            3,
            "enter reed_marsh",
            reward={"exploration": 1},
            tokens=(100, 10),
            seconds=1.0,
            area="reed_marsh",
            events=[{"kind": "area_entered", "area": "reed_marsh", "first": True}],
        ),
        step(
            4,
            "pick up apple",
            tokens=(100, 10),
            seconds=1.0,
            area="reed_marsh",
            events=[{"kind": "object_acquired", "object": "apple", "handle": "apple", "how": "picked", "first": True}],
        ),
        step(
            5,
            "craft 1 plank",
            reward={"craft": 1},
            tokens=(120, 20),
            seconds=2.0,
            area="reed_marsh",
            events=[{"kind": "object_crafted", "object": "plank", "amount": 1, "first": True}],
        ),
        step(6, "fly to the moon", invalid=True, tokens=(100, 10), seconds=1.0, area="reed_marsh"),
        step(7, "pick up apple", failed=True, tokens=(100, 10), seconds=1.0, area="reed_marsh"),
        step(
            8, "wait", reward={"quest": 1, "side_quest": 1, "trade": 1}, tokens=(80, 40), seconds=2.0, area="reed_marsh"
        ),
    ]
    return Trajectory(reset, steps)


@pytest.fixture(scope="module")
def game():
    return load_game("mossfall")


def test_hand_computed_metrics(game):
    m = compute_metrics(scripted(), game, window=3)
    # 6 play steps (3..8); the two tutorial steps are left out everywhere.
    assert m["play_steps"] == 6
    assert m["main_reward"] == 1
    assert m["supplementary_reward"] == 3  # exploration 1 + craft 1 + side quest 1 (trade is not in it)
    assert m["rewards"]["trade"] == 1
    # invalid: "fly to the moon" only (the tutorial's "dance wildly" does not count)
    assert m["invalid_actions"] == 1
    assert m["invalid_action_rate"] == pytest.approx(1 / 6)
    # failed: the second "pick up apple", refused by the world (the tutorial has none)
    assert m["failed_actions"] == 1
    assert m["failed_action_rate"] == pytest.approx(1 / 6)
    # well-formed play commands: enter, pick up, craft, pick up (failed still counts), wait
    assert m["verbs_used"] == ["craft", "enter", "pick up", "wait"]
    assert m["action_exploration"] == pytest.approx(4 / 17)  # base has the 17 core verbs
    h = -(0.4 * math.log(0.4)) - 3 * (0.2 * math.log(0.2))  # p = 2/5, 1/5, 1/5, 1/5
    assert m["action_diversity"] == pytest.approx(h / math.log(17))
    # windows of 3 over [enter, pick up, craft, pick up, wait]
    third = math.log(3) / math.log(17)
    two_one = (-(2 / 3) * math.log(2 / 3) - (1 / 3) * math.log(1 / 3)) / math.log(17)
    assert m["action_diversity_windows"] == pytest.approx([third, two_one, third])
    # objects acquired in play: apple only (the coin was picked up in the tutorial)
    raw = json.loads((GAMES_DIR / "mossfall" / "world.json").read_text())
    carryable = [o for o in raw["objects"] if o["category"] != "station"]
    assert m["objects_acquired"] == ["apple"]
    assert m["object_exploration"] == pytest.approx(1 / len(carryable))
    assert (m["input_tokens"], m["output_tokens"]) == (600, 100)
    assert m["tokens_per_step"] == pytest.approx(700 / 6)
    assert m["decision_time_total"] == pytest.approx(8.0)
    assert m["decision_time_mean"] == pytest.approx(8.0 / 6)
    assert m["tutorial"] == {
        "steps": 2,
        "invalid_actions": 1,
        "input_tokens": 20,
        "output_tokens": 4,
        "decision_time": 1.0,
    }


def test_cumulative_rewards():
    main, sup = cumulative_rewards(scripted())
    assert main == [0, 0, 0, 0, 0, 1]
    assert sup == [1, 1, 2, 2, 2, 3]


def test_normalized_combined_by_hand():
    a = ([0, 1, 1], [1, 2, 3])  # final main 1, sup 3
    b = ([0, 2], [1, 1])  # final main 2, sup 1
    # M_main = 2, M_sup = 3
    ca, cb = normalized_combined([a, b])
    assert ca == pytest.approx([0.5 * (0 / 2 + 1 / 3), 0.5 * (1 / 2 + 2 / 3), 0.5 * (1 / 2 + 3 / 3)])
    assert cb == pytest.approx([0.5 * (0 + 1 / 3), 0.5 * (2 / 2 + 1 / 3)])
    assert max(max(ca), max(cb)) <= 1.0


def test_normalized_combined_without_any_reward_is_zero():
    assert normalized_combined([([0, 0], [0, 0])]) == [[0.0, 0.0]]
    assert normalized_combined([([0, 0], [0, 2])]) == [[0.0, 0.5]]


def test_entropy_edges():
    assert normalized_entropy([], 17) == 0.0
    assert normalized_entropy(["wait"] * 10, 17) == 0.0
    verbs = ["a", "b", "c", "d"]
    assert normalized_entropy(verbs, 4) == pytest.approx(1.0)


def test_windowed_diversity_matches_direct_computation():
    import random

    rng = random.Random("windows")
    verbs = [rng.choice("abcdef"[: rng.randint(1, 6)]) for _ in range(450)]
    fast = windowed_diversity(verbs, 17, 100)
    slow = [normalized_entropy(verbs[i : i + 100], 17) for i in range(len(verbs) - 99)]
    assert fast == pytest.approx(slow, abs=1e-12)
    assert windowed_diversity(verbs[:40], 17, 100) == [normalized_entropy(verbs[:40], 17)]


def _windows_by_the_book(verbs, n_verbs, window):
    """The incremental windowed diversity, written plainly: the floats every results.json holds."""
    if len(verbs) <= window or n_verbs < 2:
        return windowed_diversity(verbs, n_verbs, window)
    counts = Counter(verbs[:window])
    xlogx = [0.0] + [c * math.log(c) for c in range(1, window + 1)]
    s = sum(xlogx[c] for c in counts.values())
    out = [max(0.0, math.log(window) - s / window) / math.log(n_verbs)]
    for i in range(window, len(verbs)):
        new, old = verbs[i], verbs[i - window]
        if new != old:
            s += xlogx[counts[new] + 1] - xlogx[counts[new]] + xlogx[counts[old] - 1] - xlogx[counts[old]]
            counts[new] += 1
            counts[old] -= 1
        out.append(max(0.0, math.log(window) - s / window) / math.log(n_verbs))
    return out


def test_windowed_diversity_is_the_incremental_formula_bit_for_bit():
    rng = random.Random("bits")
    for _ in range(300):
        pool = [f"v{i}" for i in range(rng.randint(1, 9))]
        weights = [rng.random() ** 3 for _ in pool]  # skewed: verbs that first appear after the first window
        verbs = rng.choices(pool, weights, k=rng.randint(0, 400))
        n_verbs, window = rng.choice([2, len(pool) + 1, 23]), rng.choice([1, 2, 5, 100])
        fast, plain = windowed_diversity(verbs, n_verbs, window), _windows_by_the_book(verbs, n_verbs, window)
        assert [x.hex() for x in fast] == [x.hex() for x in plain]


def test_trajectory_lines_are_plain_compact_json():
    from odyssey_eval.trajectory import _dumps

    for record in [
        *scripted().steps,
        scripted().reset,
        {
            "s": 'quote " backslash \\ newline \n tab \t unicode \u00e9 \U0001f600',
            "f": 1e-05,
            "n": None,
            "t": [True, False],
            "nested": {"x": [{"y": 2}]},
        },
    ]:
        assert _dumps(record) == json.dumps(record, separators=(",", ":"))
    with pytest.raises(TypeError, match="not JSON serializable"):
        _dumps({"bad": object()})


def _parsed(line: bytes) -> str:
    """A line's values, NaN included (repr, since NaN != NaN), in the order written."""
    return repr(json.loads(line))


def test_trajectory_lines_hold_the_values_the_json_module_writes():
    """The line encoder (orjson when installed) writes json's values: one line, read back as what
    ``json.dumps`` would have given, NaN and infinities included; printable ASCII with floats json and
    orjson write alike comes out byte for byte as json writes it."""
    from odyssey_eval import trajectory

    nan, inf = float("nan"), float("inf")
    records = [
        *scripted().steps,
        scripted().reset,
        {
            "s": 'quote " backslash \\ newline \n tab \t control \x01 del \x7f',
            "n": None,
            "t": [True, False],
            "nested": {"x": [{"y": 2, "z": -0.5}]},
            "big": 2**70,
            3: "an int key",
            1e-05: "a float key",
        },
        {"words": "agents may say caf\u00e9 or \U0001f600", "f": 0.25, "lone": "\ud800"},
        *({"step": 3, "decision_time": t, "observation": "free-standing"} for t in (1.2e-05, 1e-06, 3.5e-07)),
        *({"step": 3, "decision_time": t} for t in (1.2e-05, 1e-06, 0.5, 1e-4, 0.0, -0.0, 2.0)),
        {"seconds": [1e-06, 1.5e-05, 0.25], "accuracy": 1e-05},
        {"f": -2.5e-05, "g": 1e16, "h": 1e22},
        {"train": {"loss": nan, "grad": [inf, -inf, 1.0]}},
        {"step": 3, "events": [{"target": None}]},
    ]
    for record in records:
        expected = (json.dumps(record, separators=(",", ":")) + "\n").encode()
        line = trajectory._encode_line(record)
        assert line.endswith(b"\n") and line.count(b"\n") == 1, record
        assert _parsed(line) == _parsed(expected), record
    plain = [*scripted().steps, scripted().reset, {"step": 3, "decision_time": 0.5, "f": [1e-4, 2.0, -0.0, 1e15]}]
    for record in plain:
        assert trajectory._encode_line(record) == (json.dumps(record, separators=(",", ":")) + "\n").encode(), record
    assert b"NaN" in trajectory._encode_line({"loss": nan})  # not orjson's null: the value is kept
    try:
        import orjson  # noqa: F401
    except ImportError:
        assert trajectory._encode_line is trajectory._json_line
    else:
        assert trajectory._encode_line is not trajectory._json_line  # the eval extra's fast path is in use
    with pytest.raises(TypeError, match="not JSON serializable"):
        trajectory._encode_line({"bad": object()})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80) | st.floats() | st.text(),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
        max_leaves=20,
    ),
    st.none() | st.text(),
)
def test_any_line_reads_back_as_the_json_modules_line(value, observation):
    from odyssey_eval import trajectory

    record = {"step": 1, "value": value}
    before = repr(record)
    expected = (
        json.dumps({**record, **({} if observation is None else {"observation": observation})}, separators=(",", ":"))
        + "\n"
    ).encode()
    line = trajectory._encode_line(record, observation)
    assert _parsed(line) == _parsed(expected)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert repr(record) == before  # the record is left as it was


def test_what_json_refuses_is_refused_whatever_the_encoder():
    import dataclasses
    import datetime
    import enum

    from odyssey_eval import trajectory

    @dataclasses.dataclass
    class Point:
        x: int

    class Kind(str, enum.Enum):
        A = "a"

    for bad in (Point(1), datetime.date(2020, 1, 1)):
        with pytest.raises(TypeError, match="not JSON serializable"):
            trajectory._encode_line({"bad": bad})
    assert trajectory._encode_line({"k": Kind.A}) == (json.dumps({"k": Kind.A}, separators=(",", ":")) + "\n").encode()


def test_the_trajectorys_zero_reward_has_the_envs_components():
    from odyssey_env.rewards import COMPONENTS
    from odyssey_eval.trajectory import _NO_REWARD

    assert dict.fromkeys(COMPONENTS, 0) == _NO_REWARD


@pytest.mark.parametrize(
    ("breakdown", "written"),
    [
        ({"quest": 0, "side_quest": 0, "exploration": 0, "craft": 0, "defeat": 0, "trade": 0, "death": 0}, None),
        (
            {"quest": 1, "side_quest": 0, "exploration": 2, "craft": 0, "defeat": 0, "trade": 0, "death": 0},
            {"quest": 1, "exploration": 2},
        ),
        (
            {"quest": 0, "side_quest": 0, "exploration": 0, "craft": 0, "defeat": 0, "trade": 0, "death": 0, "new": 0},
            None,
        ),
        ({"quest": 0, "new": 3}, {"new": 3}),
    ],
)
def test_a_step_line_lists_the_reward_components_earned(breakdown, written):
    from odyssey_agents.base import Decision
    from odyssey_eval.trajectory import step_record

    info = {
        "step": 4,
        "reward_breakdown": breakdown,
        "invalid_action": False,
        "action_failed": False,
        "events": [],
        "area": "camp",
        "time": "day 1",
    }
    record = step_record(Decision("wait"), False, None, False, info, 2.5e-05)
    assert record.get("reward") == written
    assert list(record) == ["step", "action", *(["reward"] if written else []), "area", "time", "decision_time"]


def test_whole_files_are_written_as_the_json_module_writes_them():
    """results.json and the other run files: json.dumps's bytes whatever the floats (tiny ones in lists,
    in tuples and as keys, NaN, infinities, the smallest subnormal) and whatever the text."""
    from odyssey_eval.trajectory import json_bytes

    rng = random.Random("documents")
    documents = [
        {
            "windows": [rng.random() for _ in range(500)],
            "mean": 7.3e-06,
            "zero": 0.0,
            "negative_zero": -0.0,
            "nan": float("nan"),
            "infinities": [float("inf"), -float("inf")],
            "tuple": (1, 2.5e-05, "x"),
            "text": "caf\u00e9",
            "keys": {1e-05: 1, 3: 2.5},
            "big": 2**70,
            "tiny": [1e-300, 5e-324, -1e-07, 1.5e-05],
        },
        {"nested": [1, [2, [3.0, 1e-06]]], "flags": [True, None], "del": "\x7f", "words": "free-standing 0.00001"},
        {"plain": [0.5, 12345678901234567890.0, 1e16, 1e22, 1e-4], "n": 3},
        [{"step": 1}, 2.5e-05],
        "a string",
        1e-05,
    ]
    for document in documents:
        assert json_bytes(document) == json.dumps(document, separators=(",", ":")).encode()
