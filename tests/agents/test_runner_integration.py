"""LLM agents inside the evaluation runner: run directories, token totals, QA, and kill-and-resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("hydra")

from odyssey_env.game import available_games
from odyssey_eval.rundir import RunDir, run_path
from odyssey_eval.runner import KILL_AFTER_ENV, run_cell


def cell(out, agent, *, game="mossfall", steps=30, **llm):
    return {
        "game": {"name": game, "path": None},
        "agent": agent,
        "llm": {"name": "scripted", "model": "explore", "policy": "explore", "malformed_every": 6, **llm},
        "seed": 1,
        "max_steps": steps,
        "tutorial": False,
        "eval": {
            "output_dir": str(out),
            "checkpoint_every": 7,
            "checkpoint_min_seconds": 0.0,
            "progress": False,
            "qa": {"enabled": True, "every": 0, "world_knowledge": 1, "episodic": 1, "choices": 4},
        },
    }


def lines(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_a_cell_reports_tokens_add_on_calls_and_malformed_replies(tmp_path):
    agent = {
        "name": "long_context",
        "addons": ["reflection", "summarisation"],
        "on_overflow": "truncate",
        "summarise_every": 5,
    }
    out = run_cell(cell(tmp_path, agent), log=lambda m: None)
    assert out.path.parts[-3:-1] == ("long_context+reflection+summarisation", "scripted-explore")
    steps = lines(out.path / "trajectory.jsonl")[1:]
    assert sum(s.get("malformed", False) for s in steps) == 30 // 6
    assert sum(s["tokens"][0] + s["tokens"][1] for s in steps) == sum(
        c["input_tokens"] + c["output_tokens"] for s in steps for c in s["calls"].values()
    )
    purposes = {p for s in steps for p in s["calls"]}
    assert purposes == {"act", "reflect", "summarise"}
    r = out.results
    assert r["agent"]["label"] == "long_context+reflection+summarisation"
    assert r["agent"]["run"]["malformed"] == 5 and r["agent"]["run"]["summaries"] >= 4
    assert r["agent"]["run"]["context_overflow"]["policy"] == "truncate"
    answered = [a for q in lines(out.path / "qa.jsonl") for a in q.get("answers", [])]
    assert answered  # the QA rounds asked the agent


_CHILD = """
import json, sys
from odyssey_eval.runner import run_cell
run_cell(json.loads(sys.argv[1]), log=lambda m: None)
"""


@pytest.mark.parametrize("name", ["mem1", "short_term_memory"])
def test_a_killed_llm_run_resumes_with_the_same_memory(tmp_path, name):
    agent = {"name": name, "addons": ["reflection"]}
    whole = run_cell(cell(tmp_path / "whole", agent), log=lambda m: None)
    cfg = cell(tmp_path / "killed", agent)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(cfg)],
        capture_output=True,
        text=True,
        env={**os.environ, KILL_AFTER_ENV: "17"},
        timeout=120,
    )
    assert done.returncode == -9, done.stderr
    assert not RunDir(run_path(cfg)).finished
    resumed = run_cell(cfg, log=lambda m: None)

    def content(path):
        steps = lines(path / "trajectory.jsonl")
        for s in steps:
            s.pop("decision_time", None)
            for c in s.get("calls", {}).values():
                c.pop("seconds", None)
        return steps

    assert content(resumed.path) == content(whole.path)
    assert resumed.results["agent"]["run"] == whole.results["agent"]["run"]


@pytest.mark.parametrize("game", ["tallowmere"])
def test_sweep_four_paradigms_by_two_addon_settings(tmp_path, game):
    if game not in available_games():
        pytest.skip(f"{game} is not shipped yet")
    agents = [
        {"name": "no_memory"},
        {"name": "long_context"},
        {"name": "short_term_memory", "memory_size": 5},
        {"name": "mem1"},
    ]
    paths = set()
    for agent in agents:
        for addons in ([], ["reflection", "summarisation"]):
            out = run_cell(cell(tmp_path, {**agent, "addons": addons}, game=game, steps=12), log=lambda m: None)
            assert out.status == "finished" and out.results["play_steps"] == 12
            paths.add(out.path)
    assert len(paths) == 8  # every combination has its own run directory
