"""A cell's run directory stays whole: one process at a time (an OS lock that dies with its process),
no resume against edited game files, no silently lost QA round, no "finished" cell whose results are
damaged, and a game folder filed under its own name."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from odyssey_agents.base import Agent, Decision
from odyssey_env.game import GAMES_DIR
from odyssey_env.trust import content_digest
from odyssey_eval.rundir import RunDir, RunDirError, run_path
from odyssey_eval.runner import KILL_AFTER_ENV, run_cell
from odyssey_eval.trajectory import _encode_line

from .conftest import cell, lines, quiet
from .test_runner import run_dir_content

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the cell lock is an flock")

_HOLD = """
import sys, time
from odyssey_eval.rundir import RunDir
with RunDir(sys.argv[1]).lock():
    print("locked", flush=True)
    time.sleep(120)
"""
_CHILD = """
import json, sys
from odyssey_eval.runner import run_cell
run_cell(json.loads(sys.argv[1]), log=lambda m: None)
"""


def _killed_at(cfg: dict, step: int) -> None:
    env = {**os.environ, KILL_AFTER_ENV: str(step)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(cfg)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == -signal.SIGKILL, done.stderr


# ---------------------------------------------------------------------------- item 3: one process per cell
def test_a_cell_held_by_another_process_is_refused_and_freed_when_that_process_dies(tmp_path):
    cfg = cell(tmp_path, max_steps=20, qa={"enabled": False})
    path = run_path(cfg)
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunDirError, match=rf"being run by another process \(pid {holder.pid}\)"):
            run_cell(cfg, log=quiet)
        with pytest.raises(RunDirError, match="another process"):  # overwrite must not wipe it under the holder
            run_cell({**cfg, "eval": {**cfg["eval"], "overwrite": True}}, log=quiet)
        assert not (path / "cell.json").exists()
    finally:
        holder.send_signal(signal.SIGKILL)  # no cleanup: the OS drops the lock with the process
        holder.wait()
    assert run_cell(cfg, log=quiet).status == "finished"


class Prober(Agent):
    """Tries to take its own cell's lock while it acts (where it is told to look: ``probe["path"]``)."""

    name = "prober"
    probe: ClassVar[dict] = {}

    def act(self, observation, info):
        if "seen" not in self.probe:
            try:
                with RunDir(self.probe["path"]).lock():
                    self.probe["seen"] = "free"
            except RunDirError:
                self.probe["seen"] = "held"
        return Decision("wait")


def test_the_lock_is_held_for_the_whole_run(tmp_path):
    """Checked from inside the run: while an agent acts, the cell cannot be taken."""
    from odyssey_agents.registry import AGENTS, register_agent

    register_agent("prober", f"{__name__}:Prober")
    try:
        cfg = cell(tmp_path, agent={"name": "prober"}, max_steps=3, qa={"enabled": False})
        Prober.probe.update(path=run_path(cfg))
        run_cell(cfg, log=quiet)
    finally:
        del AGENTS["prober"]
    assert Prober.probe["seen"] == "held"


def test_the_issue_s_sweep_is_refused_before_any_cell_starts(tmp_path):
    """`seed=0,0,0,0 launcher=joblib` used to run four processes on one directory and corrupt it."""
    pytest.importorskip("hydra_plugins.hydra_joblib_launcher")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "odyssey_eval.cli",
            "run",
            "-m",
            "agent=random",
            "game=mossfall",
            "seed=0,0,0,0",
            "max_steps=50",
            "launcher=joblib",
            "hydra.launcher.n_jobs=4",
            "eval.progress=false",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "names the cell runs/mossfall/random/none/seed_0 twice" in line and "nothing was run" in line
    assert not (tmp_path / "runs" / "mossfall").exists()


def test_a_sweep_over_settings_that_do_not_make_another_cell_is_refused(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "odyssey_eval.cli",
            "run",
            "-m",
            "agent=random",
            "seed=1",
            "max_steps=5",
            "eval.progress=true,false",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2 and "twice" in done.stderr and "eval.progress" in done.stderr
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "odyssey_eval.cli",
            "run",
            "-m",
            "agent=random",
            "seed=1,2",
            "max_steps=5",
            "eval.qa.enabled=false",
            "eval.progress=false",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "runs" / "mossfall" / "random" / "none").iterdir()) == [
        "seed_1",
        "seed_2",
    ]


# ---------------------------------------------------------------------------- item 4: edited game files
def _folder_game(tmp_path: Path) -> Path:
    folder = tmp_path / "folder_game"
    shutil.copytree(GAMES_DIR / "mossfall", folder, ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
    return folder


def test_resuming_against_edited_game_files_is_refused_naming_them(tmp_path):
    folder = _folder_game(tmp_path)
    cfg = cell(tmp_path / "runs", game={"name": "mossfall", "path": str(folder)}, max_steps=40, qa={"enabled": False})
    _killed_at(cfg, 25)
    rd = RunDir(run_path(cfg))
    assert rd.cell()["content"] == content_digest(folder)
    world = json.loads((folder / "world.json").read_text())
    world["game"]["title"] += " (edited)"
    (folder / "world.json").write_text(json.dumps(world))
    with pytest.raises(RunDirError, match=r"files changed since .*: world\.json \(changed\); resuming would mix"):
        run_cell(cfg, log=quiet)
    (folder / "rules.py").write_text("# nothing\n")
    with pytest.raises(RunDirError, match=r"rules\.py \(added\), world\.json \(changed\)"):
        run_cell(cfg, log=quiet)
    assert not rd.finished
    assert (
        run_cell(
            {**cfg, "eval": {**cfg["eval"], "overwrite": True}, "game": {**cfg["game"], "trust": True}}, log=quiet
        ).status
        == "finished"
    )


def test_unchanged_game_files_resume(tmp_path):
    folder = _folder_game(tmp_path)
    cfg = cell(tmp_path / "runs", game={"name": "mossfall", "path": str(folder)}, max_steps=40, qa={"enabled": False})
    _killed_at(cfg, 25)
    assert run_cell(cfg, log=quiet).status == "finished"


# ---------------------------------------------------------------------------- item 5: lost and damaged files
def test_a_lost_question_file_is_drawn_again_identically(tmp_path):
    whole = run_cell(cell(tmp_path / "whole", max_steps=40), log=quiet)
    cfg = cell(tmp_path / "killed", max_steps=40)
    _killed_at(cfg, 25)
    rd = RunDir(run_path(cfg))
    rd.qa_questions.unlink()
    messages: list[str] = []
    resumed = run_cell(cfg, log=messages.append)
    assert any("qa_questions.json was missing" in m for m in messages)
    assert [r["phase"] for r in resumed.results["qa"] if r["kind"] == "world_knowledge"] == ["before", "after"]
    assert run_dir_content(resumed.path) == run_dir_content(whole.path)


def test_a_lost_question_file_that_cannot_be_drawn_again_is_refused(tmp_path):
    cfg = cell(tmp_path, max_steps=40)
    _killed_at(cfg, 25)
    rd = RunDir(run_path(cfg))
    rd.qa_questions.unlink()
    rounds = rd.qa.read_text().splitlines()
    first = json.loads(rounds[0])
    first["answers"][0]["answer"] = (first["answers"][0]["answer"] + 1) % 4  # same length: the checkpoint's
    edited = _encode_line(first).decode().rstrip("\n")  # as the runner writes it: byte counts still hold
    assert len(edited) == len(rounds[0])
    rd.qa.write_text("\n".join([edited, *rounds[1:]]) + "\n")
    with pytest.raises(RunDirError, match="questions drawn again differ"):
        run_cell(cfg, log=quiet)


def test_a_damaged_question_file_is_a_damaged_directory(tmp_path):
    cfg = cell(tmp_path, max_steps=40)
    _killed_at(cfg, 25)
    RunDir(run_path(cfg)).qa_questions.write_text('[{"id": 1}]')
    with pytest.raises(RunDirError, match=r"qa_questions\.json is damaged"):
        run_cell(cfg, log=quiet)


@pytest.mark.parametrize(
    "content",
    [b"\x89PNG\r\n\x1a\n\x00\xff", b"[]", b'"done"', b"{}", b'{"game": "mossfall"}'],
    ids=["binary", "list", "string", "empty", "partial"],
)
def test_a_damaged_results_file_is_one_line_never_a_finished_cell(tmp_path, content, capsys):
    from odyssey_eval.challenge import main as challenge_main
    from odyssey_eval.report import main as report_main

    out = run_cell(cell(tmp_path, max_steps=10, qa={"enabled": False}), log=quiet)
    (out.path / "results.json").write_bytes(content)
    with pytest.raises(RunDirError, match=r"results\.json is damaged") as info:
        run_cell(cell(tmp_path, max_steps=10, qa={"enabled": False}), log=quiet)
    assert "\n" not in str(info.value)
    for main in (report_main, challenge_main):
        assert main([str(tmp_path), *(["--no-html"] if main is report_main else [])]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "results.json is damaged" in err


# ---------------------------------------------------------------------------- item 13: a folder's own name
def test_a_game_folder_is_filed_under_its_own_name(tmp_path):
    folder = _folder_game(tmp_path)
    world = json.loads((folder / "world.json").read_text())
    world["game"]["name"] = "my_world"
    (folder / "world.json").write_text(json.dumps(world))
    out = run_cell(
        cell(tmp_path / "runs", game={"name": "mossfall", "path": str(folder)}, max_steps=5, qa={"enabled": False}),
        log=quiet,
    )
    assert out.path.relative_to(tmp_path / "runs").parts[0] == "my_world"
    assert out.results["game"] == "my_world"
    assert lines(out.path / "trajectory.jsonl")[0]["game"] == "my_world"
