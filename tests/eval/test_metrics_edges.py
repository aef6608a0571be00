"""Metrics at their edges: sparse lines, stop-decision tokens, the last step, empty runs, windows and entropy.

``test_metrics.py`` checks a hand-computed run; these tests pin each counter and each boundary on its
own, so that a metric computed with the wrong sign, step or bound cannot pass unnoticed.
"""

from __future__ import annotations

import math

import pytest

from odyssey_env.game import load_game
from odyssey_eval.metrics import (
    action_verbs,
    compute_metrics,
    cumulative_rewards,
    main_quest_size,
    normalized_combined,
    normalized_entropy,
    tutorial_summary,
    verb_of,
    windowed_diversity,
)
from odyssey_eval.trajectory import Trajectory

RESET = {
    "format": 1,
    "step": 0,
    "reset": True,
    "game": "mossfall",
    "seed": 0,
    "observation": "start",
    "area": "hearth_square",
    "time": "0001-01-01 08:00:00",
}


def line(n: int, action: str = "wait", **fields) -> dict:
    """A sparse trajectory line, as the runner writes it: absent keys are false, zero or empty."""
    return {"step": n, "action": action, "area": "hearth_square", "time": "t", **fields}


def run(*steps: dict) -> Trajectory:
    return Trajectory(dict(RESET), list(steps))


@pytest.fixture(scope="module")
def game():
    return load_game("mossfall")


# ------------------------------------------------------------------ the size of the main quest
def test_main_quest_size_comes_from_the_reset_line(game):
    quest = {"title": "Q", "completed": 0, "total": 9, "current": [], "done": False}
    t = Trajectory(
        {**RESET, "quest": quest},
        [line(1, reward={"quest": 1}, quest={**quest, "total": 7}), line(2, reward={"quest": 2})],
    )
    m = compute_metrics(t, game)
    assert (m["main_reward"], m["main_stages"], m["main_fraction"]) == (3, 9, pytest.approx(3 / 9))
    assert main_quest_size(t) == 9


def test_main_quest_size_from_a_later_line_and_none_without_a_quest(game):
    later = run(line(1), line(2, quest={"completed": 1, "total": 4}), line(3, quest={"completed": 2, "total": 5}))
    assert main_quest_size(later) == 4
    assert main_quest_size(run(line(1, quest={"total": 0}), line(2, quest={"total": "3"}))) is None
    m = compute_metrics(run(line(1, reward={"quest": 1})), game)
    assert (m["main_stages"], m["main_fraction"]) == (None, None)


# ------------------------------------------------------------------ counters
def test_sparse_lines_count_as_zero(game):
    m = compute_metrics(run(line(1), line(2)), game)
    assert m["play_steps"] == 2
    assert m["main_reward"] == 0 and m["supplementary_reward"] == 0
    assert m["rewards"] == dict.fromkeys(m["rewards"], 0)
    assert (m["input_tokens"], m["output_tokens"], m["total_tokens"]) == (0, 0, 0)
    assert m["invalid_actions"] == 0 and m["malformed_replies"] == 0 and m["objects_acquired"] == []
    assert m["terminated"] is False
    assert "stop_decision_tokens" not in m


def test_tokens_add_up(game):
    m = compute_metrics(run(line(1, tokens=[30, 7]), line(2), line(3, tokens=[5, 2])), game)
    assert (m["input_tokens"], m["output_tokens"]) == (35, 9)
    assert m["total_tokens"] == 44
    assert m["tokens_per_step"] == pytest.approx(44 / 3)


def test_the_model_cost_counts_model_calls_only_and_other_work_has_fields_of_its_own(game):
    """Training, embedding and latent-memory writes are not model calls (paper §3.4: the cost is the tokens
    of the model's calls): they stay out of total_tokens, tokens_per_step and tokens_by_purpose."""
    from odyssey_agents.base import Call, Decision, Usage
    from odyssey_eval.trajectory import step_record

    usage = Usage(
        [
            Call("train", 900, 0),
            Call("act", 30, 7),
            Call("embed", 40, 0),
            Call("memorise", 25, 0),
            Call("reflect", 8, 2),
        ]
    )
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (38, 9, 47)
    assert usage.work_tokens() == {"training_tokens": 900, "embedding_tokens": 40, "memory_write_tokens": 25}
    info = {
        "step": 1,
        "reward_breakdown": {},
        "invalid_action": False,
        "action_failed": False,
        "events": [],
        "area": "hearth_square",
        "time": "t",
    }
    first = step_record(Decision("wait", usage=usage), False, "obs", False, info, 0.1)
    assert first["tokens"] == [38, 9] and set(first["calls"]) == {"train", "act", "embed", "memorise", "reflect"}
    m = compute_metrics(
        run(first, line(2, tokens=[5, 1], calls={"act": {"calls": 1, "input_tokens": 5, "output_tokens": 1}})), game
    )
    assert (m["input_tokens"], m["output_tokens"], m["total_tokens"]) == (43, 10, 53)
    assert m["tokens_per_step"] == pytest.approx(53 / 2)
    assert set(m["tokens_by_purpose"]) == {"act", "reflect"}
    assert sum(r["input_tokens"] + r["output_tokens"] for r in m["tokens_by_purpose"].values()) == m["total_tokens"]
    assert (m["training_tokens"], m["embedding_tokens"], m["memory_write_tokens"]) == (900, 40, 25)
    bare = compute_metrics(run(line(1)), game)
    assert (bare["training_tokens"], bare["embedding_tokens"], bare["memory_write_tokens"]) == (0, 0, 0)


def test_stop_decision_tokens_count_in_every_token_metric(game):
    m = compute_metrics(run(line(1, tokens=[30, 7]), line(2, tokens=[10, 3])), game, stop_tokens=[4, 1])
    assert (m["input_tokens"], m["output_tokens"], m["total_tokens"]) == (44, 11, 55)
    assert m["tokens_per_step"] == pytest.approx(55 / 2)
    assert m["stop_decision_tokens"] == [4, 1]


def test_each_invalid_and_malformed_step_counts_once(game):
    m = compute_metrics(
        run(
            line(1, "fly", invalid=True),
            line(2, malformed=True),
            line(3),
            line(4, "swim", invalid=True, malformed=True),
        ),
        game,
    )
    assert m["invalid_actions"] == 2 and m["invalid_action_rate"] == pytest.approx(0.5)
    assert m["malformed_replies"] == 2


def test_reward_components_are_summed_over_play_steps(game):
    m = compute_metrics(
        run(
            line(1, reward={"quest": 1, "exploration": 2}),
            line(2, reward={"craft": 1, "trade": 3, "death": 1}),
            line(3, reward={"quest": 1, "side_quest": 1, "defeat": 1}),
            line(4, tutorial=True, reward={"quest": 5}),
        ),
        game,
    )
    assert m["rewards"] == {
        "quest": 2,
        "side_quest": 1,
        "exploration": 2,
        "craft": 1,
        "defeat": 1,
        "trade": 3,
        "death": 1,
    }
    assert m["main_reward"] == 2
    assert m["supplementary_reward"] == 5  # side quest 1 + exploration 2 + craft 1 + defeat 1
    main, sup = cumulative_rewards(
        run(
            line(1, reward={"quest": 1, "exploration": 2}),
            line(2, reward={"craft": 1, "trade": 3}),
            line(3),
            line(4, reward={"quest": 1, "side_quest": 1, "defeat": 1}),
        )
    )
    assert main == [1, 1, 1, 2] and sup == [2, 3, 3, 5]  # cumulative, never per step


def test_objects_acquired_are_distinct_types_in_first_order(game):
    acquired = [{"kind": "object_acquired", "object": o, "handle": o} for o in ("apple", "coin", "apple")]
    other = {"kind": "object_crafted", "object": "plank"}
    m = compute_metrics(run(line(1, events=acquired[:2]), line(2, events=[other, acquired[2]])), game)
    assert m["objects_acquired"] == ["apple", "coin"]
    carryable = [o for o in game.objects.values() if o.portable]
    assert m["object_exploration"] == pytest.approx(2 / len(carryable))


def test_terminated_reads_the_last_line_even_in_the_tutorial(game):
    assert compute_metrics(run(line(1), line(2, terminated=True)), game)["terminated"] is True
    assert compute_metrics(run(line(1, terminated=True), line(2)), game)["terminated"] is False
    assert compute_metrics(run(line(1), line(2, tutorial=True, terminated=True)), game)["terminated"] is True


def test_a_run_with_no_play_steps_has_zero_rates(game):
    m = compute_metrics(run(line(1, tutorial=True, tokens=[3, 1], decision_time=0.25)), game)
    assert m["play_steps"] == 0
    assert m["invalid_action_rate"] == 0.0 and m["tokens_per_step"] == 0.0 and m["decision_time_mean"] == 0.0
    assert m["action_exploration"] == 0.0 and m["action_diversity"] == 0.0
    assert m["action_diversity_windows"] == [] and m["action_diversity_window_mean"] == 0.0
    assert m["tutorial"] == {
        "steps": 1,
        "invalid_actions": 0,
        "input_tokens": 3,
        "output_tokens": 1,
        "decision_time": 0.25,
    }
    assert compute_metrics(run(), game)["terminated"] is False


def test_decision_time_sums_and_averages(game):
    m = compute_metrics(run(line(1, decision_time=0.5), line(2), line(3, decision_time=1.25)), game)
    assert m["decision_time_total"] == 1.75
    assert m["decision_time_mean"] == pytest.approx(1.75 / 3)


def test_tutorial_summary_counts_its_own_steps():
    t = tutorial_summary(
        run(
            line(1, tutorial=True, invalid=True, tokens=[2, 1], decision_time=0.1),
            line(2, tutorial=True, decision_time=0.2),
            line(3, tokens=[50, 50]),
            line(4, tutorial=True),
        )
    )  # no time recorded: zero
    assert t == {"steps": 3, "invalid_actions": 1, "input_tokens": 2, "output_tokens": 1, "decision_time": 0.3}


def test_times_are_rounded_to_the_microsecond(game):
    m = compute_metrics(run(line(1, decision_time=0.1234567), line(2, tutorial=True, decision_time=0.7654321)), game)
    assert m["decision_time_total"] == 0.123457 and m["tutorial"]["decision_time"] == 0.765432


def test_reward_components_the_metrics_do_not_know_are_kept(game):
    m = compute_metrics(run(line(1, reward={"quest": 1, "bonus": 2}), line(2, reward={"bonus": 3})), game)
    assert m["rewards"]["bonus"] == 5 and m["main_reward"] == 1 and m["supplementary_reward"] == 0


def test_a_game_with_nothing_to_carry_or_do_has_zero_exploration(game):
    from types import SimpleNamespace

    bare = SimpleNamespace(objects={}, rules=SimpleNamespace(actions={}, verbs_by_first_word={}))
    m = compute_metrics(run(line(1), line(2, events=[{"kind": "object_acquired", "object": "apple"}])), bare)
    assert m["object_exploration"] == 0.0 and m["action_exploration"] == 0.0 and m["verbs_used"] == []


# ------------------------------------------------------------------ verbs, entropy, windows
def test_verbs_come_from_well_formed_commands_only(game):
    steps = [
        line(1, "pick up apple"),
        line(2, "dance", invalid=True),
        line(3, "Pick  Up apple"),
        line(4, "enter gate"),
        line(5, "sing loudly"),
    ]  # an unparseable command not flagged invalid
    assert verb_of(game, "dance") is None and verb_of(game, "talk to ada") == "talk to"
    assert action_verbs(steps, game) == ["pick up", "pick up", "enter"]
    m = compute_metrics(run(*steps), game)
    assert m["verbs_used"] == ["enter", "pick up"]
    assert m["action_exploration"] == pytest.approx(2 / len(game.rules.actions))


def test_entropy_of_a_uniform_and_a_skewed_choice():
    assert normalized_entropy(["a", "b"], 2) == pytest.approx(1.0)
    assert normalized_entropy(["a", "b"], 4) == pytest.approx(0.5)
    assert normalized_entropy(["a", "a", "a", "b"], 2) == pytest.approx(
        -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)) / math.log(2)
    )
    assert normalized_entropy(["a", "b"], 1) == 0.0  # one verb available: no choice to be diverse in


def test_windows_at_their_edges():
    assert windowed_diversity([], 5, 3) == []
    assert windowed_diversity(["a", "b", "a", "b"], 2, 2) == pytest.approx([1.0, 1.0, 1.0])  # two verbs: ln 2
    # float rounding makes ln(6) - 6 ln(6) / 6 a hair below zero: diversity is never negative
    assert windowed_diversity(["a"] * 7, 17, 6) == [0.0, 0.0]
    assert windowed_diversity(["a", "b", "c"], 3, 3) == [pytest.approx(1.0)]  # exactly one full window
    assert windowed_diversity(["a", "b", "c", "c"], 3, 3) == pytest.approx(
        [1.0, normalized_entropy(["b", "c", "c"], 3)]
    )
    assert windowed_diversity(["a", "b", "a", "b"], 1, 2) == [0.0, 0.0, 0.0]  # one verb: no diversity
    same = windowed_diversity(["wait"] * 7, 17, 3)
    assert same == [0.0] * 5 and all(x >= 0.0 for x in same)


def test_windows_slide_one_command_at_a_time():
    verbs = ["a", "a", "b", "c", "c", "c", "a"]
    assert windowed_diversity(verbs, 3, 3) == pytest.approx(
        [normalized_entropy(verbs[i : i + 3], 3) for i in range(len(verbs) - 2)], abs=1e-12
    )


def test_window_mean_is_the_mean_of_the_windows(game):
    steps = [line(i, c) for i, c in enumerate(["wait", "wait", "defend", "wait", "defend", "defend"], 1)]
    m = compute_metrics(run(*steps), game, window=2)
    assert m["action_diversity_window"] == 2
    windows = m["action_diversity_windows"]
    assert len(windows) == 5
    assert m["action_diversity_window_mean"] == pytest.approx(sum(windows) / 5)


# ------------------------------------------------------------------ combined reward
def test_combined_reward_normalises_by_the_maxima_over_all_runs():
    assert normalized_combined([([2], [4])]) == [[pytest.approx(1.0)]]
    low, high = normalized_combined([([1], [1]), ([2], [4])])
    assert low == [pytest.approx(0.5 * (1 / 2 + 1 / 4))] and high == [pytest.approx(1.0)]
    assert normalized_combined([]) == []
    assert normalized_combined([([], [])]) == [[]]
    # a run with no play steps does not change the maxima of the others (fractional rewards: weighted runs)
    assert normalized_combined([([0.5], [0.25]), ([], [])]) == [[pytest.approx(1.0)], []]
    with pytest.raises(ValueError):  # a main curve and a supplementary curve of different lengths
        normalized_combined([([1, 1], [1])])
