"""A run stopped by SIGINT or SIGTERM resumes from the step it stopped at; a price table gives each cell's cost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from odyssey_eval.collect import load_runs
from odyssey_eval.cost import PriceError
from odyssey_eval.report import main as report_main
from odyssey_eval.report import total_cost
from odyssey_eval.runner import run_cell, run_multi_cell
from tests.agents.openai_server import FakeOpenAIServer

from .conftest import cell, quiet, scrub


def lines_of(path: Path) -> list[dict]:
    return [scrub(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()]


def count_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def odyssey(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "odyssey_eval.cli", *args],
        cwd=cwd,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def stop_at(args: list[str], cwd: Path, trajectory: Path, steps: int, sig: int) -> tuple[int, str]:
    """Start ``odyssey run``, send ``sig`` once its trajectory has ``steps`` steps; (exit code, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "odyssey_eval.cli", *args],
        cwd=cwd,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and count_lines(trajectory) < steps + 1 and proc.poll() is None:
        time.sleep(0.005)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_run_stopped_while_its_model_answers_resumes_from_that_step_and_asks_nothing_twice(tmp_path, sig):
    with FakeOpenAIServer(model="m") as server:
        server.default = {"delay": 0.05}  # the run waits on the model most of the time: the signal stops it at once
        args = ["run", "agent=no_memory", "llm=vllm", "llm.model=m", f"llm.base_url={server.url}", "max_steps=30"]
        args += ["eval.qa.world_knowledge=2", "eval.qa.episodic=1", "eval.progress=false"]  # QA before and after play
        whole = odyssey([*args, "eval.output_dir=whole"], tmp_path)
        assert whole.returncode == 0, whole.stderr
        calls_whole = len(server.requests)
        trajectory = tmp_path / "runs" / "mossfall" / "no_memory" / "vllm-m" / "seed_0" / "trajectory.jsonl"
        code, err = stop_at([*args, "eval.output_dir=runs"], tmp_path, trajectory, 6, sig)
        calls_stopped = len(server.requests) - calls_whole
        assert code == 128 + sig, err
        played = count_lines(trajectory) - 1  # the step lines on disk: every finished step was kept
        assert played >= 6 and "Traceback" not in err
        assert f"run the same command again to resume from step {played} " in err  # not from a periodic checkpoint
        again = odyssey([*args, "eval.output_dir=runs"], tmp_path)
        assert again.returncode == 0, again.stderr
        assert f"resume from step {played}:" in again.stdout
        calls_again = len(server.requests) - calls_whole - calls_stopped
    # at most the call in flight is made twice: the pre-play QA round and every finished step are not
    assert calls_whole <= calls_stopped + calls_again <= calls_whole + 1
    for name in ("trajectory.jsonl", "qa.jsonl"):
        assert lines_of(trajectory.parent / name) == lines_of(
            tmp_path / "whole" / trajectory.relative_to(tmp_path / "runs").parent / name
        )


def test_sigterm_between_the_steps_of_a_fast_agent_stops_after_the_step_it_was_in(tmp_path):
    args = ["run", "agent=random", "max_steps=4000", "eval.qa.enabled=false", "eval.progress=false"]
    args += ["eval.checkpoint_every=1000"]  # a periodic checkpoint would not be where the run stopped
    trajectory = tmp_path / "runs" / "mossfall" / "random" / "none" / "seed_0" / "trajectory.jsonl"
    code, err = stop_at(args, tmp_path, trajectory, 40, signal.SIGTERM)
    assert code == 143, err
    played = count_lines(trajectory) - 1
    assert 40 <= played < 1000 and "Traceback" not in err
    assert f"interrupted after step {played}: run the same command again to resume from step {played} " in err
    again = odyssey(args, tmp_path)
    assert again.returncode == 0 and f"resume from step {played}:" in again.stdout, again.stderr
    whole = odyssey([*args, "eval.output_dir=whole"], tmp_path)
    assert whole.returncode == 0, whole.stderr
    assert lines_of(trajectory) == lines_of(tmp_path / "whole" / trajectory.relative_to(tmp_path / "runs"))


# ---------------------------------------------------------------------- cost
USAGE = {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020}
USAGE["prompt_tokens_details"] = {"cached_tokens": 600}  # what a hosted API says its prompt cache served
PRICES = {"currency": "EUR", "m": {"input": 2.0, "cached_input": 0.5, "output": 10.0}}


def llm_cell(tmp_path, server, **over):
    llm = {"name": "vllm", "model": "m", "base_url": server.url, "max_tokens": 64}
    return cell(tmp_path, agent={"name": "no_memory"}, llm=llm, max_steps=5, **over)


def test_each_cell_is_billed_in_results_json_and_the_report_adds_the_cells_up(tmp_path, capsys):
    with FakeOpenAIServer(model="m") as server:
        server.default = {"usage": USAGE}
        priced = run_cell(llm_cell(tmp_path / "a", server, eval={"prices": PRICES}), log=quiet).results
        calls = len(server.requests)
        plain = run_cell(llm_cell(tmp_path / "b", server), log=quiet).results
    cost = priced["cost"]
    play = priced["play_steps"]
    assert calls > play == 5  # the tutorial's steps and the QA rounds are billed too
    # the server's cached counts are known for play steps; the rest is billed at the input price
    billed = (cost["input_tokens"], cost["cached_tokens"], cost["output_tokens"])
    assert billed == (1000 * calls, 600 * play, 20 * calls)
    assert cost["total"] == pytest.approx((calls * (1000 * 2.0 + 20 * 10.0) - play * 600 * (2.0 - 0.5)) / 1e6)
    assert cost["currency"] == "EUR" and cost["model"] == "m"
    assert "cost" not in plain  # no price table: no cost fields, not zeros
    runs, _ = load_runs([str(tmp_path / "a"), str(tmp_path / "b")])
    total, line = total_cost(runs)
    assert total["cells"] == 1 and total["total"] == pytest.approx(cost["total"])
    assert line.startswith(f"cost: {cost['total']:.4f} EUR for 1 priced run(s)") and "1 run(s) not priced" in line
    summary = tmp_path / "summary.json"
    assert report_main([str(tmp_path / "a"), "--no-html", "--json", str(summary)]) == 0
    assert "cost: " in capsys.readouterr().out
    assert json.loads(summary.read_text())["cost"]["total"] == pytest.approx(cost["total"])
    assert report_main([str(tmp_path / "b"), "--no-html", "--json", str(summary)]) == 0
    assert "cost" not in json.loads(summary.read_text()) and "cost: " not in capsys.readouterr().out


def test_a_model_the_table_lacks_is_refused_before_any_call(tmp_path):
    with FakeOpenAIServer(model="m") as server:
        with pytest.raises(PriceError, match="no prices for model 'm'"):
            run_cell(llm_cell(tmp_path, server, eval={"prices": {"other": {"input": 1, "output": 1}}}), log=quiet)
        assert server.requests == []
    assert not list(tmp_path.rglob("trajectory.jsonl"))


def test_a_cell_of_several_agents_bills_each_agent_that_calls_the_model_and_adds_them_up(tmp_path):
    with FakeOpenAIServer(model="m") as server:
        server.default = {"usage": USAGE}
        cfg = llm_cell(tmp_path, server, eval={"prices": PRICES}, qa={"enabled": False})
        cfg["agents"] = [{"name": "no_memory"}, {"name": "random"}]
        results = run_multi_cell(cfg, log=quiet).results
        calls = len(server.requests)
    billed = results["agents"]["player_0"]["cost"]
    assert "cost" not in results["agents"]["player_1"]  # a random agent calls no model
    assert billed["input_tokens"] == 1000 * calls
    assert results["cost"]["agents"] == 1 and results["cost"]["total"] == pytest.approx(billed["total"])


def test_a_sweep_that_stops_a_cell_at_its_step_report_keeps_that_step(tmp_path):
    """``launcher=concurrent`` stops its cells through their progress reports (``odyssey_eval.board``):
    the step just reported is checkpointed before the cell stops, and the cell resumes from it."""
    from odyssey_eval.progress import NullProgress, reporting_to
    from odyssey_eval.runner import RunInterrupted

    class StopAt(NullProgress):
        def update(self, steps, main, sup, tokens, phase="", force=False):
            if steps == 13:
                raise KeyboardInterrupt

    cfg = cell(tmp_path, max_steps=40, tutorial=False, qa={"enabled": False}, eval={"checkpoint_every": 10})
    with reporting_to(lambda label, total: StopAt()), pytest.raises(RunInterrupted, match="resume from step 13 "):
        run_cell(cfg, log=quiet)
    resumed = []
    done = run_cell(cfg, log=resumed.append)
    assert any(line.startswith("resume from step 13:") for line in resumed)
    whole = run_cell(cell(tmp_path / "whole", max_steps=40, tutorial=False, qa={"enabled": False}), log=quiet)
    assert lines_of(done.path / "trajectory.jsonl") == lines_of(whole.path / "trajectory.jsonl")
