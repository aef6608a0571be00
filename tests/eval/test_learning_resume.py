"""Killed runs of the learning agents resume to the same state: trajectory, QA, results and the learned
weights or memory, bit for bit on CPU with a tiny model (SIGKILL through the runner, as for every agent)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("peft")

from odyssey_eval.rundir import RunDir, run_path
from odyssey_eval.runner import run_cell

from .conftest import cell, lines, quiet
from .test_runner import _killed_at, run_dir_content

AGENTS = {
    "lora_sft": {
        "name": "lora_sft",
        "train_every": 3,
        "train_on_malformed": True,
        "lora_r": 4,
        "lora_alpha": 8,
        "learning_rate": 1e-2,
        "batch_size": 2,
    },
    "rl_lora": {
        "name": "rl_lora",
        "update_every": 2,
        "horizon": 1,
        "lora_r": 4,
        "lora_alpha": 8,
        "learning_rate": 1e-2,
        "batch_size": 2,
    },
    "kv_window": {"name": "kv_window", "pool_size": 300},
    "memoryllm": {"name": "memoryllm", "pool_size": 64, "update_tokens": 16},
    "mplus": {"name": "mplus", "pool_size": 32, "update_tokens": 16, "long_term_size": 32, "retrieve_tokens": 8},
}


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    from agents.conftest import build_tiny_model  # the suite's tiny chat models (tests/agents/conftest.py)

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "llama", "llama")


def learning_cell(out, agent, model):
    llm = {
        "name": "hf",
        "model": str(model),
        "device": "cpu",
        "threads": 1,
        "max_tokens": 10,
        "guided_json": True,
        "constrain_starts": True,
    }
    return cell(
        out,
        agent=AGENTS[agent],
        llm=llm,
        max_steps=10,
        tutorial=False,
        qa={"world_knowledge": 1, "episodic": 1},
        eval={"checkpoint_every": 4},
    )


def learned_state(path):
    """The files of the newest checkpoint's agent folder, as bytes (adapter, optimizer, pool, memory)."""
    rd = RunDir(path)
    folder = rd.checkpoints / (rd.checkpoints / "LATEST").read_text() / "agent"
    out = {}
    for f in sorted(folder.rglob("*")):
        if f.is_file():
            data = f.read_bytes()
            if f.name == "memory.json":  # wall-clock seconds are the only fields allowed to differ
                memory = json.loads(data)
                paradigm = memory["paradigm"]
                paradigm.pop("write_seconds", None)
                paradigm.get("totals", {}).pop("seconds", None)
                data = json.dumps(memory, sort_keys=True).encode()
            out[str(f.relative_to(folder))] = data
    return out


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_killed_learning_run_resumes_to_the_same_weights_and_trajectory(tmp_path, tiny_llama, agent):
    whole = run_cell(learning_cell(tmp_path / "whole", agent, tiny_llama), log=quiet)
    cfg = learning_cell(tmp_path / "killed", agent, tiny_llama)
    done = _killed_at(cfg, 6)  # after the checkpoint of step 4, with learning in between
    assert done.returncode == -9, done.stderr
    assert not RunDir(run_path(cfg)).finished
    resumed = run_cell(cfg, log=quiet)
    assert resumed.status == "finished"
    assert run_dir_content(resumed.path) == run_dir_content(whole.path)
    assert learned_state(resumed.path) == learned_state(whole.path)
    steps = lines(RunDir(whole.path).trajectory)[1:]
    if agent in ("kv_window", "memoryllm", "mplus"):
        assert all("memorise" in s["calls"] for s in steps)
        latent = whole.results["agent"]["run"]["latent"]
        assert latent["writes" if agent == "kv_window" else "updates"] == 10
        written = sum(s["calls"]["memorise"]["input_tokens"] for s in steps)
        assert whole.results["metrics"]["memory_write_tokens"] == written > 0  # apart from the model cost
        # each step's line says what the update did: the pool bounded, old tokens dropped once it is full
        memory = [s["memory"] for s in steps]
        size = AGENTS[agent]["pool_size"]
        assert [m["pool_size"] for m in memory] == [size] * 10 and all(m["tokens"] <= size for m in memory)
        held = 0
        for m in memory:
            assert m["tokens"] == held + m["written"] - m["dropped"]
            held = m["tokens"]
        assert held == latent["tokens"] and sum(m["dropped"] for m in memory) == latent["dropped"]
        assert [m["read"] for m in memory] == [s["calls"]["memorise"]["input_tokens"] for s in steps]
        assert memory[-1]["tokens"] == size and latent["dropped"] > 0  # 10 steps overflow these pools
        if agent == "mplus":  # the dropped tokens are kept in the long-term memory, up to its size
            assert 0 < memory[-1]["long_term_tokens"] <= AGENTS[agent]["long_term_size"]
    else:
        trained = [s for s in steps if "train" in s]
        assert trained and all(s["calls"]["train"]["input_tokens"] == s["train"]["tokens"] for s in trained)
        totals = whole.results["agent"]["run"]["training"]
        assert totals["updates"] == len(trained) and totals["tokens"] == sum(s["train"]["tokens"] for s in trained)
        assert whole.results["metrics"]["training_tokens"] == totals["tokens"]  # apart from the model cost
    metrics = whole.results["metrics"]  # the model cost: the tokens of model calls, every purpose, nothing else
    calls = [c for s in steps for purpose, c in s["calls"].items() if purpose not in ("train", "memorise")]
    assert metrics["total_tokens"] == sum(s["tokens"][0] + s["tokens"][1] for s in steps)
    assert metrics["total_tokens"] == sum(c["input_tokens"] + c["output_tokens"] for c in calls)
