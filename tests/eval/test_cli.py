"""The commands as a user types them: odyssey run (single, multirun with joblib and submitit),
odyssey report and odyssey challenge."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from odyssey_agents.registry import AgentUnavailable, agent_class
from odyssey_env.game import available_games
from odyssey_eval.run import _check_launcher

GAMES = [g for g in ("mossfall", "quiet_bell", "tallowmere") if g in available_games()]
SMALL = ["max_steps=15", "eval.qa.world_knowledge=2", "eval.qa.episodic=1", "eval.progress=false"]


def odyssey(*args: str, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "odyssey_eval.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done


def _oracle_available() -> bool:
    try:
        agent_class("oracle")
        return True
    except AgentUnavailable:
        return False


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> Path:
    """2 agents x the shipped games of (mossfall, quiet_bell, tallowmere) x 2 seeds, with the joblib launcher."""
    if not _oracle_available():
        pytest.skip("the oracle agent is not in this checkout")
    cwd = tmp_path_factory.mktemp("sweep")
    done = odyssey(
        "run",
        "-m",
        "agent=random,oracle",
        f"game={','.join(GAMES)}",
        "seed=0,1",
        "launcher=joblib",
        "hydra.launcher.n_jobs=2",
        *SMALL,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return cwd


def test_joblib_sweep_writes_every_cell(sweep):
    results = sorted((sweep / "runs").rglob("results.json"))
    assert len(results) == 2 * len(GAMES) * 2
    cells = {(r.parts[-5], r.parts[-4], r.parts[-2]) for r in results}
    assert cells == {(g, a, f"seed_{s}") for g in GAMES for a in ("random", "oracle") for s in (0, 1)}
    config = (results[0].parent / "config.yaml").read_text()
    assert "max_steps: 15" in config
    assert not any(p.name == "outputs" for p in sweep.iterdir())  # Hydra's own folders stay out of the way


def test_rerunning_a_sweep_skips_finished_cells(sweep):
    done = odyssey("run", "-m", "agent=random,oracle", f"game={','.join(GAMES)}", "seed=0,1", *SMALL, cwd=sweep)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("skip (finished)") == 2 * len(GAMES) * 2
    assert "start:" not in done.stdout


def test_report_summarises_the_sweep(sweep):
    done = odyssey("report", "runs", "--per-run", "--json", "rows.json", cwd=sweep)
    assert done.returncode == 0, done.stderr
    rows = json.loads((sweep / "rows.json").read_text())["runs"]
    assert len(rows) == 2 * len(GAMES) * 2
    table = done.stdout.splitlines()
    assert table[0].split()[:5] == ["game", "agent", "seed", "steps", "main"]
    for row in rows:
        stored = json.loads((Path(sweep / row["path"]) / "results.json").read_text())
        assert (row["main"], row["sup"]) == (stored["main_reward"], stored["supplementary_reward"])
        assert row["play_steps"] == 15 or stored["end_reason"] == "terminated"
    # within each game, the best run on each component defines the normalization
    for game in GAMES:
        combined = [r["combined"] for r in rows if r["game"] == game]
        assert min(combined) >= 0.0 and max(combined) <= 1.0
    html = (sweep / "runs" / "report.html").read_text()
    # no tokens panel (no agent used a model), no window plot (15-step runs are shorter than one window)
    assert html.count("data:image/png;base64,") == 3 * len(GAMES)
    for title in ("Cumulative main reward", "Cumulative supplementary reward", "Normalized combined reward"):
        assert title in html
    assert html.count("longer than one window of 100 commands") == len(GAMES)
    oracle = [r for r in rows if r["agent"] == "oracle"]
    assert all(r["wk_before"] is None for r in oracle)  # it cannot answer: not scored as 0


def test_challenge_ranks_the_sweep(sweep):
    done = odyssey("challenge", "runs", "--games", *GAMES, "--budget", "15", "--json", cwd=sweep)
    assert done.returncode == 0, done.stderr
    ranking = json.loads(done.stdout)["ranking"]
    assert {t["submission"] for t in ranking} == {"random", "oracle"}
    assert [t["rank"] for t in ranking] in ([1, 2], [1, 1])
    for t in ranking:
        assert t["score"] == pytest.approx(sum(g["main"] for g in t["games"].values()) / len(GAMES))
        assert any("at least 3" in w for w in t["warnings"])  # 2 seeds < the protocol's 3


def test_single_run_and_its_report(tmp_path):
    done = odyssey("run", "game=mossfall", "agent=random", "seed=3", *SMALL, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "runs" / "mossfall" / "random" / "none" / "seed_3" / "results.json").is_file()
    again = odyssey("run", "game=mossfall", "agent=random", "seed=3", *SMALL, cwd=tmp_path)
    assert "skip (finished)" in again.stdout
    report = odyssey("report", "runs/mossfall/random/none/seed_3", cwd=tmp_path)
    assert report.returncode == 0 and "report:" in report.stdout


def test_user_errors_are_one_clear_line(tmp_path):
    done = odyssey("run", "agent=replay", *SMALL, cwd=tmp_path)
    assert done.returncode != 0 and "agent.path must be set" in done.stderr + done.stdout
    done = odyssey("run", "agent=random", "+agent.temperature=2", *SMALL, cwd=tmp_path)
    assert "no parameter(s) temperature" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_missing_launcher_extra_names_it():
    have_ray = subprocess.run([sys.executable, "-c", "import ray"], capture_output=True).returncode == 0
    if have_ray:
        pytest.skip("the ray extra is installed here")
    from odyssey_env.extras import install_command

    with pytest.raises(SystemExit, match=re.escape(install_command("ray"))):
        _check_launcher(["-m", "launcher=ray"])


def test_submitit_local_launcher(tmp_path):
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    done = odyssey(
        "run", "-m", "game=mossfall", "seed=0,1", "launcher=submitit_local", *SMALL, cwd=tmp_path, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert len(list((tmp_path / "runs" / "mossfall").rglob("results.json"))) == 2


def test_a_failing_cell_does_not_stop_the_sweep(tmp_path):
    done = odyssey("run", "-m", "game.name=mossfall,no_such_game", *SMALL, cwd=tmp_path)
    assert done.returncode != 0
    assert "no_such_game" in done.stdout + done.stderr
    assert (tmp_path / "runs" / "mossfall" / "random" / "none" / "seed_0" / "results.json").is_file()


def test_kill_and_resume_through_the_command(tmp_path):
    args = (
        "run",
        "game=mossfall",
        "max_steps=40",
        "eval.checkpoint_every=10",
        "eval.checkpoint_min_seconds=0",
        "eval.qa.enabled=false",
    )
    env = {**os.environ, "ODYSSEY_KILL_AFTER_STEP": "25"}
    killed = subprocess.run(
        [sys.executable, "-m", "odyssey_eval.cli", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == -9
    resumed = odyssey(*args, cwd=tmp_path)
    assert resumed.returncode == 0 and "resume from step 20" in resumed.stdout


def _ctrl_c(args: list[str], cwd: Path, ready, typed: str = "") -> tuple[int, str]:
    """Start ``odyssey run``, type ``typed``, press Ctrl-C once ``ready()``; (exit code, stderr)."""
    import signal
    import time

    proc = subprocess.Popen(
        args, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    proc.stdin.write(typed)
    proc.stdin.flush()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not ready():
        time.sleep(0.1)
    time.sleep(0.2)  # let the process reach the prompt it is about to show
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_ctrl_c_leaves_a_resumable_run(tmp_path):
    """A player presses Ctrl-C mid-game; the same command later continues where they were."""
    args = [sys.executable, "-m", "odyssey_eval.cli", "run", "agent=human", "eval.qa.enabled=false", "max_steps=10"]
    trajectory = tmp_path / "runs" / "mossfall" / "human" / "none" / "seed_0" / "trajectory.jsonl"
    returncode, err = _ctrl_c(
        args,
        tmp_path,
        typed="wait\ninspect hearth_square\nwait\n",
        ready=lambda: trajectory.exists() and len(trajectory.read_text().splitlines()) == 4,
    )
    assert returncode == 130, err
    assert "run the same command again to resume from step 3" in err
    again = subprocess.run(args, cwd=tmp_path, input="wait\n:quit\n", capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "resume from step 3" in again.stdout
    assert len(trajectory.read_text().splitlines()) == 5  # reset + 3 steps + the one after resuming


def test_ctrl_c_during_a_qa_round_is_one_line_too(tmp_path):
    """The human agent is asked the before-play questions first; Ctrl-C there must not be a traceback."""
    args = [
        sys.executable,
        "-m",
        "odyssey_eval.cli",
        "run",
        "agent=human",
        "max_steps=3",
        "eval.qa.world_knowledge=1",
        "eval.qa.episodic=0",
    ]
    questions = tmp_path / "runs" / "mossfall" / "human" / "none" / "seed_0" / "qa_questions.json"
    returncode, err = _ctrl_c(args, tmp_path, ready=questions.exists)  # written just before the first question
    assert returncode == 130, err
    assert "run the same command again to resume from step 0" in err and "Traceback" not in err
    again = subprocess.run(args, cwd=tmp_path, input="", capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr  # no answers, then :quit by end of input: a finished run
    assert (questions.parent / "results.json").is_file()
