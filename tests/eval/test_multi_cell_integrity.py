"""Multi-agent cells keep every guarantee of single-agent cells (issue 13 on issue 12's cells): one
process at a time, no resume against edited game files, the game's facts recorded so that reading
results never runs game code, a lost question file drawn again, damaged results refused in one line,
keys refused, config mistakes in one line, and a sweep that names one cell twice refused.

The helpers are the single-agent tests' own, applied to a multi-agent cell."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from typing import ClassVar

import pytest

pytest.importorskip("pettingzoo", reason='multi-agent cells need the "multiagent" extra')

from odyssey_agents.base import Agent, Decision
from odyssey_agents.errors import ConfigError
from odyssey_agents.llm import LLMConfigError, LLMError
from odyssey_agents.registry import AGENTS, register_agent
from odyssey_env import trust
from odyssey_env.trust import content_digest
from odyssey_eval.rundir import RunDir, RunDirError
from odyssey_eval.runner import AGENTS_DIR, KILL_AFTER_ENV, RunError, multi_run_path, run_multi_cell
from odyssey_eval.trajectory import _encode_line

from .conftest import quiet
from .test_cell_integrity import _HOLD, Prober, _folder_game
from .test_multirunner import _CHILD, SCRIPTED, content, multi
from .test_untrusted_runs import COMMANDS, RULES, _ran
from .test_user_errors import QUICK, SECRET, odyssey, one_line

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the cell lock is an flock")

TWO = ("oracle", "random")


def _killed_at(cfg: dict, step: int) -> None:
    env = {**os.environ, KILL_AFTER_ENV: str(step)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(cfg)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == -signal.SIGKILL, done.stderr


# ---------------------------------------------------------------------------- one process per cell
def test_a_multi_agent_cell_held_by_another_process_is_refused(tmp_path):
    cfg = multi(tmp_path, agents=TWO, max_steps=10, qa={"enabled": False})
    path = multi_run_path(cfg)
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunDirError, match=rf"being run by another process \(pid {holder.pid}\)"):
            run_multi_cell(cfg, log=quiet)
        with pytest.raises(RunDirError, match="another process"):  # overwrite must not wipe it under the holder
            run_multi_cell({**cfg, "eval": {**cfg["eval"], "overwrite": True}}, log=quiet)
        assert not (path / "cell.json").exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert run_multi_cell(cfg, log=quiet).status == "finished"


def test_the_lock_of_a_multi_agent_cell_is_held_while_its_agents_act(tmp_path):
    register_agent("prober", f"{Prober.__module__}:Prober")
    try:
        cfg = multi(tmp_path, agents=("random", "prober"), max_steps=3, qa={"enabled": False})
        Prober.probe.clear()
        Prober.probe.update(path=multi_run_path(cfg))
        run_multi_cell(cfg, log=quiet)
    finally:
        del AGENTS["prober"]
    assert Prober.probe["seen"] == "held"


# ---------------------------------------------------------------------------- the game's files and facts
def test_resuming_a_multi_agent_cell_against_edited_game_files_is_refused(tmp_path):
    folder = _folder_game(tmp_path)
    cfg = multi(
        tmp_path / "runs",
        agents=TWO,
        game={"name": "mossfall", "path": str(folder)},
        max_steps=40,
        qa={"enabled": False},
    )
    _killed_at(cfg, 25)
    rd = RunDir(multi_run_path(cfg))
    assert rd.cell()["content"] == content_digest(folder)
    original = (folder / "world.json").read_bytes()
    world = json.loads(original)
    (folder / "world.json").write_text(json.dumps({**world, "game": {**world["game"], "title": "edited"}}))
    with pytest.raises(RunDirError, match=r"files changed since .*: world\.json \(changed\)"):
        run_multi_cell(cfg, log=quiet)
    assert not rd.finished
    (folder / "world.json").write_bytes(original)  # restored: the same run resumes and finishes
    assert run_multi_cell(cfg, log=quiet).status == "finished"


@pytest.fixture(scope="module")
def dancing(tmp_path_factory):
    """A trusted folder whose rules.py adds a verb (and leaves RAN when imported), played by two agents."""
    root = tmp_path_factory.mktemp("multi_untrusted")
    folder = root / "dancing"
    shutil.copytree(_folder_game(root), folder)
    world = json.loads((folder / "world.json").read_text())
    world["game"]["name"] = "dancing"
    (folder / "world.json").write_text(json.dumps(world))
    (folder / "rules.py").write_text(RULES)
    (root / "commands.txt").write_text("\n".join(COMMANDS) + "\n")
    cfg = multi(
        root / "runs",
        agents=({"name": "replay", "path": str(root / "commands.txt")}, "random"),
        game={"name": "mossfall", "path": str(folder), "trust": True},
        tutorial=False,
        max_steps=20,
        qa={"enabled": False},
        llm={"name": "none"},
    )
    out = run_multi_cell(cfg, log=quiet)
    assert _ran(folder)  # the run itself, trusted, did import it
    return root, folder, out


def test_a_multi_agent_cell_records_its_game_and_is_filed_under_the_folder_s_name(dancing):
    root, folder, out = dancing
    assert out.path.relative_to(root / "runs").parts[:2] == ("dancing", "multi")
    record = json.loads((out.path / "cell.json").read_text())
    assert "dance" in record["facts"]["verbs"] and record["content"] == trust.content_digest(folder)
    assert "dance" in out.results["agents"]["player_0"]["metrics"]["verbs_used"]


def test_reporting_a_multi_agent_cell_never_imports_its_game_and_recomputes_from_facts(dancing, monkeypatch):
    from odyssey_eval import collect

    root, folder, out = dancing
    (folder / "RAN").unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "odyssey_eval.cli", "report", "runs", "--per-run", "--json", "rows.json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert not _ran(folder), "odyssey report imported the game's rules.py"
    assert "warning" not in done.stdout
    rows = json.loads((root / "rows.json").read_text())["runs"]
    assert len(rows) == 2
    for row in rows:
        stored = json.loads((root / row["path"] / "results.json").read_text())["metrics"]
        assert row["action_exploration"] == stored["action_exploration"]  # the rules' own verb counted
    # recomputed from the facts recorded in the cell's cell.json, for each agent
    record = json.loads((out.path / "cell.json").read_text())
    real, used = collect.compute_metrics, []

    def spy(traj, facts, **kw):
        used.append(facts)
        return real(traj, facts, **kw)

    monkeypatch.setattr(collect, "compute_metrics", spy)
    runs = collect.load_cell(out.path)
    assert [list(f.verbs) for f in used] == [record["facts"]["verbs"]] * 2
    assert [r.metrics["action_exploration"] for r in runs] == [
        out.results["agents"][aid]["metrics"]["action_exploration"] for aid in ("player_0", "player_1")
    ]


def test_a_multi_agent_run_directory_pointed_at_a_hostile_folder_runs_nothing(dancing, tmp_path):
    _, folder, out = dancing
    evil = tmp_path / "evil"
    shutil.copytree(folder, evil)
    (evil / "RAN").unlink(missing_ok=True)
    copy = tmp_path / "runs" / "dancing" / "x"
    shutil.copytree(out.path, copy)
    record = json.loads((copy / "cell.json").read_text())
    record["game"] = {"name": "mossfall", "path": str(evil)}
    del record["facts"]
    (copy / "cell.json").write_text(json.dumps(record))
    done = odyssey("report", "runs", "--no-html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not _ran(evil), "odyssey report imported a rules.py named by a multi-agent run directory"
    assert "using stored metrics" in done.stdout


# ---------------------------------------------------------------------------- lost and damaged files
def test_a_lost_question_file_of_a_multi_agent_cell_is_drawn_again_identically(tmp_path):
    whole = run_multi_cell(multi(tmp_path / "whole", agents=TWO, max_steps=40), log=quiet)
    cfg = multi(tmp_path / "killed", agents=TWO, max_steps=40)
    _killed_at(cfg, 25)
    RunDir(multi_run_path(cfg)).qa_questions.unlink()
    messages: list[str] = []
    resumed = run_multi_cell(cfg, log=messages.append)
    assert any("qa_questions.json was missing" in m for m in messages)
    for r in resumed.results["agents"].values():
        assert [q["phase"] for q in r["qa"] if q["kind"] == "world_knowledge"] == ["before", "after"]
    assert content(resumed.path) == content(whole.path)


def test_a_lost_question_file_that_any_agent_was_asked_otherwise_is_refused(tmp_path):
    cfg = multi(tmp_path, agents=TWO, max_steps=40)
    _killed_at(cfg, 25)
    rd = RunDir(multi_run_path(cfg))
    rd.qa_questions.unlink()
    qa = rd.path / AGENTS_DIR / "player_1" / "qa.jsonl"  # the second agent's record, not the first's
    rounds = qa.read_text().splitlines()
    first = json.loads(rounds[0])
    first["answers"][0]["answer"] = (first["answers"][0]["answer"] + 1) % 4
    edited = _encode_line(first).decode().rstrip("\n")  # as the runner writes it
    assert len(edited) == len(rounds[0])
    qa.write_text("\n".join([edited, *rounds[1:]]) + "\n")
    with pytest.raises(RunDirError, match="questions drawn again differ"):
        run_multi_cell(cfg, log=quiet)


DAMAGED = {
    "binary": b"\x89PNG\r\n\x1a\n\x00\xff",
    "list": b"[]",
    "empty": b"{}",
    "no agents": b'{"game": "mossfall", "seed": 0, "max_steps": 5, "steps": 5, "agents": {}, "multiagent": {}}',
    "a path for an id": b'{"game": "mossfall", "seed": 0, "max_steps": 5, "steps": 5, "multiagent": {}, '
    b'"agents": {"../../elsewhere": {}}}',
}


@pytest.mark.parametrize("damage", list(DAMAGED))
def test_a_damaged_multi_agent_results_file_is_one_line_never_a_finished_cell(tmp_path, damage, capsys):
    from odyssey_eval.report import main as report_main

    cfg = multi(tmp_path, agents=TWO, max_steps=5, qa={"enabled": False})
    out = run_multi_cell(cfg, log=quiet)
    (out.path / "results.json").write_bytes(DAMAGED[damage])
    with pytest.raises(RunDirError, match=r"results\.json is damaged") as info:
        run_multi_cell(cfg, log=quiet)
    assert "\n" not in str(info.value)
    assert report_main([str(tmp_path), "--no-html"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "results.json is damaged" in err


def test_a_damaged_agent_results_file_is_one_line_in_the_report(tmp_path, capsys):
    from odyssey_eval.report import main as report_main

    out = run_multi_cell(multi(tmp_path, agents=TWO, max_steps=5, qa={"enabled": False}), log=quiet)
    (out.path / AGENTS_DIR / "player_1" / "results.json").write_bytes(b'"done"')
    assert report_main([str(tmp_path), "--no-html"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "player_1/results.json is damaged" in err


# ---------------------------------------------------------------------------- keys and config mistakes
def test_a_key_given_to_a_multi_agent_cell_is_refused_before_its_directory_is_touched(tmp_path):
    agents = ("random", "no_memory")
    first = run_multi_cell(multi(tmp_path, agents=agents, max_steps=3, qa={"enabled": False}), log=quiet)
    before = {p: p.read_bytes() for p in first.path.rglob("*") if p.is_file()}
    with pytest.raises(LLMConfigError) as info:
        run_multi_cell(
            multi(tmp_path, agents=agents, llm={**SCRIPTED, "password": SECRET}, max_steps=3, qa={"enabled": False}),
            log=quiet,
        )  # the same directory: no "different run" echo
    assert SECRET not in str(info.value) and "llm.password" in str(info.value)
    assert {p: p.read_bytes() for p in first.path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    ("over", "expected"),
    [
        ({"seed": "abc"}, "seed must be a whole number, got 'abc'"),
        ({"max_steps": 0}, "max_steps must be at least 1"),
        ({"max_steps": "many"}, "max_steps must be a whole number"),
        ({"tutorial": "maybe"}, "tutorial must be true or false"),
    ],
)
def test_multi_agent_config_mistakes_are_config_errors_that_write_nothing(tmp_path, over, expected):
    with pytest.raises(ConfigError, match=expected):
        run_multi_cell(multi(tmp_path, agents=TWO, **over), log=quiet)
    assert not (tmp_path / "mossfall").exists()


def test_multi_agent_mistakes_and_keys_on_the_command_line_are_one_line(tmp_path):
    line = one_line(odyssey("run", *QUICK, "agents=[oracle,random]", "seed=abc", cwd=tmp_path))
    assert "seed must be a whole number, got 'abc'" in line
    assert not (tmp_path / "runs" / "mossfall").exists()
    keyed = tmp_path / "keyed"
    keyed.mkdir()
    done = odyssey("run", *QUICK, "agents=[random,no_memory]", "llm=scripted", f"+llm.api_key={SECRET}", cwd=keyed)
    assert "keys are not taken from configs" in one_line(done) and SECRET not in done.stdout + done.stderr
    assert not (keyed / "runs").exists()


class Unreachable(Agent):
    """An agent whose model goes away at its third step, once (the next run reaches it again)."""

    name = "unreachable"
    calls: ClassVar[list[int]] = []

    def act(self, observation, info):
        self.calls.append(1)
        if len(self.calls) == 3:
            raise LLMError("the model server at http://127.0.0.1:1/v1 failed after retries")
        return Decision("wait")


def test_a_model_that_fails_mid_run_stops_a_multi_agent_cell_resumably_in_one_line(tmp_path):
    register_agent("unreachable", f"{__name__}:Unreachable")
    try:
        Unreachable.calls.clear()
        cfg = multi(
            tmp_path, agents=("random", "unreachable"), max_steps=6, qa={"enabled": False}, eval={"checkpoint_every": 1}
        )
        with pytest.raises(
            RunError,
            match=r"failed after retries; stopped after step 2: run the same command "
            r"again to resume from step 2 \(",
        ) as info:
            run_multi_cell(cfg, log=quiet)
        assert "\n" not in str(info.value)
        assert run_multi_cell(cfg, log=quiet).status == "finished"
    finally:
        del AGENTS["unreachable"]


# ---------------------------------------------------------------------------- sweeps
def test_a_sweep_that_names_a_multi_agent_cell_twice_is_refused_and_different_teams_are_not(tmp_path):
    done = odyssey("run", "-m", "agents=[random,random]", "seed=0,0", *QUICK, cwd=tmp_path)
    line = one_line(done)
    assert "names the cell runs/mossfall/multi/random--random/none/seed_0 twice" in line and "nothing was run" in line
    assert not (tmp_path / "runs" / "mossfall").exists()
    done = odyssey("run", "-m", "agents=[random,random],[random,oracle]", *QUICK, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    teams = sorted(p.name for p in (tmp_path / "runs" / "mossfall" / "multi").iterdir())
    assert teams == ["random--oracle", "random--random"]
