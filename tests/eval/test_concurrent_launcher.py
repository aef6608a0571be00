"""``launcher=concurrent``: many cells at once in one process, each exactly as ``launcher=basic`` plays it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("hydra")

from odyssey_eval.board import SweepBoard

from .conftest import scrub

CELLS = ["agent=no_memory,long_context", "llm=scripted", "game=mossfall", "seed=0,1,2", "eval.qa.enabled=false"]


def odyssey(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: int = 300):
    return subprocess.run(
        [sys.executable, "-m", "odyssey_eval.cli", *args],
        cwd=cwd,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def trajectories(root: Path) -> dict[str, list[str]]:
    """Every cell's trajectory lines, less their wall-clock fields, re-encoded as the runner encodes them."""
    out = {}
    for path in sorted(root.rglob("trajectory.jsonl")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        out[str(path.parent.relative_to(root))] = [json.dumps(scrub(line), ensure_ascii=False) for line in lines]
    return out


def results(root: Path) -> dict[str, dict]:
    return {
        str(p.parent.relative_to(root)): scrub(json.loads(p.read_text(encoding="utf-8")))
        for p in sorted(root.rglob("results.json"))
    }


@pytest.fixture(scope="module")
def basic(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("basic")
    done = odyssey("run", "-m", *CELLS, "max_steps=12", "eval.output_dir=runs", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return cwd / "runs"


def test_cells_played_together_write_what_basic_writes(basic, tmp_path):
    done = odyssey("run", "-m", *CELLS, "max_steps=12", "eval.output_dir=runs", "launcher=concurrent", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Concurrent launcher: 6 cells, 6 at once" in done.stdout
    assert "sweep 0:" in done.stdout and "6/6 cells done (0 skipped, 0 failed)" in done.stdout
    mine = tmp_path / "runs"
    assert len(trajectories(mine)) == 6 and trajectories(mine) == trajectories(basic)
    assert results(mine) == results(basic)
    for cell in ("cell.json", "config.yaml"):  # the same config, resolved with each job's own Hydra state
        assert sorted(p.read_bytes() for p in mine.rglob(cell)) == sorted(p.read_bytes() for p in basic.rglob(cell))
    again = odyssey("run", "-m", *CELLS, "max_steps=12", "eval.output_dir=runs", "launcher=concurrent", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout.count("skip (finished)") == 6
    assert "6/6 cells done (6 skipped, 0 failed)" in again.stdout


def test_a_sweep_killed_midway_and_run_again_ends_with_the_same_trajectories(basic, tmp_path):
    args = (
        "run",
        "-m",
        *CELLS,
        "max_steps=12",
        "eval.output_dir=runs",
        "eval.checkpoint_every=4",
        "eval.checkpoint_min_seconds=0",
        "launcher=concurrent",
        "hydra.launcher.max_concurrency=4",
    )
    killed = odyssey(*args, cwd=tmp_path, env={"ODYSSEY_KILL_AFTER_STEP": "7"})
    assert killed.returncode == -signal.SIGKILL  # the whole process, every cell in it, mid-step
    assert not list((tmp_path / "runs").rglob("results.json"))  # nothing finished
    resumed = odyssey(*args, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "resume from step 4" in resumed.stdout
    assert trajectories(tmp_path / "runs") == trajectories(basic)
    assert results(tmp_path / "runs") == results(basic)


def test_a_failing_cell_is_one_line_and_the_others_finish(tmp_path):
    done = odyssey(
        "run",
        "-m",
        "agent=no_memory,long_context",
        "++agent.on_overflow=stop",  # a setting of long_context only: the no_memory cell cannot be built
        "llm=scripted",
        "max_steps=5",
        "eval.qa.enabled=false",
        "launcher=concurrent",
        cwd=tmp_path,
    )
    assert done.returncode != 0
    failed = [line for line in done.stderr.splitlines() if line.startswith("odyssey run: cell ")]
    assert failed == [
        "odyssey run: cell agent=no_memory ++agent.on_overflow=stop llm=scripted max_steps=5 eval.qa.enabled=False "
        "launcher=concurrent: agent 'no_memory' has no setting(s) on_overflow; it takes: "
        + failed[0].partition("it takes: ")[2]
    ]
    assert "the sweep did not complete" in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "runs" / "mossfall" / "long_context" / "scripted-explore" / "seed_0" / "results.json").is_file()
    assert "(0 skipped, 1 failed)" in done.stdout


def test_the_calls_of_the_cells_wait_on_the_server_together_within_the_limits(tmp_path):
    from tests.agents.openai_server import FakeOpenAIServer

    def sweep(out: str, *more: str) -> FakeOpenAIServer:
        with FakeOpenAIServer(model="m") as server:
            server.default = {"delay": 0.3}
            done = odyssey(
                "run",
                "-m",
                "agent=no_memory",
                "llm=vllm",
                "llm.model=m",
                f"llm.base_url={server.url}",
                "seed=0,1,2,3,4,5",
                "max_steps=3",
                "eval.qa.enabled=false",
                f"eval.output_dir={out}",
                "launcher=concurrent",
                *more,
                cwd=tmp_path,
            )
            assert done.returncode == 0, done.stderr
        return server

    assert sweep("free").peak == 6  # all six cells waiting on a call at once
    assert sweep("two", "hydra.launcher.max_concurrency=2").peak == 2
    assert sweep("limited", "llm.max_in_flight=3").peak == 3  # the server's limit, shared by the cells
    assert len(list((tmp_path / "limited").rglob("results.json"))) == 6


def test_ctrl_c_stops_every_cell_at_a_step_and_the_same_command_resumes_them(tmp_path):
    from tests.agents.openai_server import FakeOpenAIServer

    with FakeOpenAIServer(model="m") as server:
        server.default = {"delay": 0.1}  # slow enough for Ctrl-C to find the cells mid-sweep
        cells = ["agent=no_memory", "llm=vllm", "llm.model=m", f"llm.base_url={server.url}", "seed=0,1,2,3"]
        cells += ["max_steps=30", "eval.qa.enabled=false", "eval.checkpoint_every=2", "eval.checkpoint_min_seconds=0"]
        whole = odyssey("run", "-m", *cells, "eval.output_dir=whole", "launcher=concurrent", cwd=tmp_path)
        assert whole.returncode == 0, whole.stderr
        args = ["run", "-m", *cells, "eval.output_dir=runs", "launcher=concurrent", "hydra.launcher.max_concurrency=2"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "odyssey_eval.cli", *args],
            cwd=tmp_path,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list((tmp_path / "runs").rglob("checkpoints"))) < 2:
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        assert "stopped at their last checkpoint: run the same command again" in err and "Traceback" not in err
        assert len(list((tmp_path / "runs").rglob("results.json"))) < 4  # the cells not started were not
        again = odyssey(*args, cwd=tmp_path)
        assert again.returncode == 0, again.stderr
    assert len(trajectories(tmp_path / "runs")) == 4
    assert trajectories(tmp_path / "runs") == trajectories(tmp_path / "whole")


def test_the_board_counts_cells_and_steps_and_stops_the_cells_it_is_asked_to():
    board = SweepBoard([("seed=0", 10), ("seed=1", 10), ("seed=2", 10)], mode="false")
    reporter = board.reporter(0)("seed=0", 10)
    reporter.update(4, 1, 2, 300)
    board.ended(1, "skipped", {"play_steps": 10, "main_reward": 0, "supplementary_reward": 0, "metrics": {}})
    line = board.summary()
    assert "1/3 cells done (1 skipped, 0 failed), 1 running, 1 waiting; steps 14/30" in line
    assert "tokens 300" in line and "left" in line
    board.stop()
    with pytest.raises(KeyboardInterrupt):
        reporter.update(5, 1, 2, 400)


def test_the_launcher_refuses_what_one_process_cannot_give_each_cell(tmp_path):
    done = odyssey("run", "-m", "seed=0,1", "hydra.job.chdir=true", "launcher=concurrent", cwd=tmp_path)
    assert done.returncode != 0 and "hydra.job.chdir=true cannot give each its own" in done.stderr
    done = odyssey("run", "-m", "seed=0,1", "launcher=concurrent", "hydra.launcher.max_concurrency=0", cwd=tmp_path)
    assert done.returncode != 0 and "max_concurrency must be at least 1" in done.stderr
