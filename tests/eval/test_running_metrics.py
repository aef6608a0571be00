"""The runner keeps no trajectory line in memory: metrics are gathered step by step (RunningMetrics), the
episodic QA reads a slim log (EpisodeLog), and observations are encoded apart from the rest of a line.
Each must give exactly what the whole trajectory gives."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from odyssey_env.game import load_game
from odyssey_eval.metrics import GameFacts, RunningMetrics, compute_metrics
from odyssey_eval.qa.episodic import EpisodeLog, episodic_questions
from odyssey_eval.rundir import RunDir, run_path
from odyssey_eval.runner import KILL_AFTER_ENV, run_cell
from odyssey_eval.trajectory import Trajectory, _encode_line, read_trajectory

from .conftest import cell, quiet

FACTS = GameFacts(verbs=("go", "take", "drop", "craft", "attack"), carryable=("apple", "stick", "stone"))


def _random_lines(seed: int, n: int) -> tuple[dict, list[dict]]:
    """Sparse step lines of every shape a reader meets, damaged ones included."""
    rng = random.Random(seed)
    reset = {"format": 1, "step": 0, "reset": True, "area": "camp", "time": 0}
    if rng.random() < 0.5:
        reset["quest"] = {"stage": 0, "total": 4}
    steps = []
    for i in range(1, n + 1):
        s: dict = {
            "step": i,
            "action": rng.choice(
                ["go north", "take apple", "craft stick", "attack wolf", "fly", "drop stone", "go south", "wait"]
            ),
            "area": rng.choice(["camp", "forest", "cave"]),
            "time": i,
            "decision_time": rng.choice([1.2e-05, 0.25, 1e-06, 0.1234567, 3.0]),
        }
        if i < 4 and rng.random() < 0.7:
            s["tutorial"] = True
        if rng.random() < 0.2:
            s["invalid"] = True
        if rng.random() < 0.1:
            s["malformed"] = True
        if rng.random() < 0.15:
            s["failed"] = True
        if rng.random() < 0.3:
            s["reward"] = {rng.choice(["quest", "exploration", "craft", "bonus"]): rng.randint(1, 3)}
        if rng.random() < 0.3:
            s["events"] = [
                {
                    "kind": rng.choice(["object_acquired", "object_crafted"]),
                    "object": rng.choice(["apple", "stick", "stone"]),
                }
            ]
        if rng.random() < 0.4:
            s["tokens"] = [rng.randint(1, 50), rng.randint(1, 9)]
            s["calls"] = {rng.choice(["act", "reflect"]): {"calls": 1, "input_tokens": 3, "output_tokens": 1}}
        if rng.random() < 0.05:
            s["quest"] = {"stage": 1, "total": rng.choice([3, 0])}
        if rng.random() < 0.05:
            s["terminated"] = True
        if rng.random() < 0.03:
            s["action"] = rng.choice([None, ["take", "apple"], 7, ""])  # damaged lines must not crash
        if rng.random() < 0.05:
            s["invalid"] = False  # an explicit false reads as a missing key
        if rng.random() < 0.05:
            s["failed"] = False
        steps.append(s)
    return reset, steps


@pytest.mark.parametrize("seed", range(6))
def test_running_metrics_equal_the_whole_trajectory_after_every_step(seed):
    reset, steps = _random_lines(seed, 240)
    running = RunningMetrics(reset, FACTS, window=7)
    assert running.metrics() == compute_metrics(Trajectory(reset, []), FACTS, window=7)
    for k, step in enumerate(steps, 1):
        running.add(step)
        if k % 17 == 0 or k == len(steps):
            whole = compute_metrics(Trajectory(reset, steps[:k]), FACTS, window=7)
            assert running.metrics() == whole, k
            assert (running.main_reward, running.supplementary_reward) == (
                whole["main_reward"],
                whole["supplementary_reward"],
            ), k
    stop = {"act": {"calls": 2, "input_tokens": 9, "output_tokens": 4}}
    assert running.metrics(stop_tokens=(9, 4), stop_calls=stop) == compute_metrics(
        Trajectory(reset, steps), FACTS, window=7, stop_tokens=(9, 4), stop_calls=stop
    )
    assert running.metrics() == compute_metrics(Trajectory(reset, steps), FACTS, window=7)  # a look changes nothing


def _metrics_of_the_file(path) -> dict:
    rd = RunDir(path)
    results = rd.results()
    facts = GameFacts.from_dict(rd.recorded_facts())
    stop = results["metrics"].get("stop_decision_tokens")
    whole = compute_metrics(
        read_trajectory(rd.trajectory),
        facts,
        stop_tokens=stop,
        stop_calls=results["metrics"].get("stop_decision_calls"),
    )
    return json.loads(json.dumps(whole))


def _lines_are_json_modules_own(path) -> None:
    """Every line is a compact JSON object as the json module writes it or, for the same values, orjson."""
    try:
        import orjson
    except ImportError:
        orjson = None
    for line in (path / "trajectory.jsonl").read_bytes().splitlines():
        value = json.loads(line)
        assert isinstance(value, dict)
        assert line == json.dumps(value, separators=(",", ":")).encode() or (
            orjson is not None and line == orjson.dumps(value)
        )


@pytest.mark.parametrize(("agent", "tutorial"), [("random", True), ("random", False), ("oracle", False)])
def test_a_runs_metrics_are_those_of_its_whole_trajectory(tmp_path, agent, tutorial):
    out = run_cell(cell(tmp_path, agent={"name": agent}, max_steps=150, tutorial=tutorial, qa={"every": 50}), log=quiet)
    assert out.results["metrics"] == _metrics_of_the_file(out.path)
    assert out.results["play_steps"] > 0
    _lines_are_json_modules_own(out.path)


_CHILD = "import json, sys; from odyssey_eval.runner import run_cell; run_cell(json.loads(sys.argv[1]), log=print)"


def test_a_resumed_runs_metrics_are_those_of_its_whole_trajectory(tmp_path):
    cfg = cell(tmp_path, max_steps=120, qa={"every": 40})
    for kill_at in (37, 88):  # mid-way between checkpoints, twice
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps(cfg)],
            capture_output=True,
            text=True,
            env={**os.environ, KILL_AFTER_ENV: str(kill_at)},
            timeout=120,
        )
        assert done.returncode == -9, done.stderr
        assert not RunDir(run_path(cfg)).finished
    out = run_cell(cfg, log=quiet)
    assert out.status == "finished"
    assert out.results["metrics"] == _metrics_of_the_file(out.path)
    _lines_are_json_modules_own(out.path)


def test_the_episode_log_asks_what_the_whole_trajectory_asks(random_run):
    traj = read_trajectory(RunDir(random_run).trajectory)
    log = EpisodeLog(traj.reset)
    for step in traj.steps:
        log.add(step)
    assert len(log) == len(traj.steps)
    game = load_game("mossfall")
    for salt in ("40", "120", "x"):
        slim = episodic_questions(log.trajectory(), game, 0, per_template=6, salt=salt)
        whole = episodic_questions(traj, game, 0, per_template=6, salt=salt)
        assert slim and [q.to_dict() for q in slim] == [q.to_dict() for q in whole]


@pytest.mark.parametrize(
    "observation",
    [
        "You are in the camp.\nExits: north.",
        "",
        'tab\there, quote " and backslash \\',
        "control \x01 \x1f",
        "del \x7f",
        "caf\u00e9 \U0001f600",
        "numbers 1e-05 0.00001 e- 0.0000",
        "\n" * 30 + "e-05 0.00001 e- 0.0000",
    ],
)
@pytest.mark.parametrize(
    "record",
    [
        {"step": 3, "action": "go north", "area": "camp", "time": 4, "decision_time": 1.2e-05},
        {"step": 3, "decision_time": 4.2e-05},
        {"step": 3, "decision_time": 1.5e-07},
        {"step": 3, "decision_time": 0.5},
        {"step": 3, "train": {"loss": 2.5e-05}, "decision_time": 1e-06},
        {"step": 3, "late": 2.5e-05},
        {"late": 3e-06},
        {"step": 3, "observation": "a record holding one already"},
        {},
    ],
)
def test_a_line_with_its_observation_apart_reads_back_as_the_json_modules_line(record, observation):
    before = dict(record)
    expected = (json.dumps({**record, "observation": observation}, separators=(",", ":")) + "\n").encode()
    line = _encode_line(record, observation)
    assert repr(json.loads(line)) == repr(json.loads(expected))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    if observation.isascii() and "\x7f" not in observation and "e-" not in expected.decode()[: -len(observation) - 4]:
        assert line == expected  # json's bytes, where orjson writes them alike
    assert record == before and list(record) == list(before)  # the record is left as it was


def test_every_checkpoint_counts_the_rewards_of_the_lines_it_has_seen(tmp_path):
    """The runner takes main and supplementary reward from its running metrics: a checkpoint holds what
    the lines before it earned, in a resumed run too."""
    cfg = cell(
        tmp_path,
        agent={"name": "oracle"},
        max_steps=150,
        tutorial=False,
        qa={"enabled": False},  # ends at 51
        eval={"keep_checkpoints": 0},
    )
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(cfg)],
        capture_output=True,
        text=True,
        env={**os.environ, KILL_AFTER_ENV: "33"},
        timeout=120,
    )
    assert done.returncode == -9, done.stderr
    out = run_cell(cfg, log=quiet)
    rd = RunDir(out.path)
    facts = GameFacts.from_dict(rd.recorded_facts())
    earned = 0
    for ckpt in sorted(rd.checkpoints.glob("step_*")):
        saved = json.loads((ckpt / "runner.json").read_text())
        seen = compute_metrics(read_trajectory(rd.trajectory, limit_bytes=saved["trajectory_bytes"]), facts)
        assert (saved["main"], saved["sup"]) == (seen["main_reward"], seen["supplementary_reward"]), ckpt.name
        earned += saved["main"] + saved["sup"]
    assert earned > 0  # the oracle earns rewards: the comparison is not between zeros
