"""A cell's run directory stays whole, whether one agent plays it or several share its world: one process
at a time (an OS lock that dies with its process), no resume against edited game files, no silently lost
QA round, no "finished" cell whose results are damaged, config mistakes and keys refused before anything
is written, a model that goes away mid-run stopping it resumably, and a game folder filed under its own
name, its facts recorded so that reading results never runs game code.

Each guarantee is one test over both shapes (``SHAPES``: a cell of one seat, a cell of several); what only
one shape has (a sweep refused on the command line, an agent's own results file) is tested for it alone."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from odyssey_agents.base import Agent, Decision
from odyssey_agents.errors import ConfigError
from odyssey_agents.llm import LLMConfigError, LLMError
from odyssey_agents.registry import AGENTS, register_agent
from odyssey_env import trust
from odyssey_env.game import GAMES_DIR
from odyssey_env.trust import content_digest
from odyssey_eval.rundir import RunDir, RunDirError, run_path
from odyssey_eval.runner import AGENTS_DIR, KILL_AFTER_ENV, RunError, multi_run_path, run_cell, run_multi_cell
from odyssey_eval.trajectory import _encode_line

from .conftest import cell, lines, quiet
from .test_runner import run_dir_content, scrub
from .test_untrusted_runs import COMMANDS, RULES, _ran
from .test_user_errors import QUICK, SECRET, odyssey, one_line

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
from odyssey_eval.runner import run_cell, run_multi_cell
cfg = json.loads(sys.argv[1])
(run_multi_cell if cfg.get("agents") else run_cell)(cfg, log=lambda m: None)
"""
SCRIPTED = {"name": "scripted", "model": "explore", "policy": "explore", "malformed_every": 0, "context_window": None}
TWO = ("oracle", "random")


def multi(output_dir: Path, agents=("oracle", "random", "long_context"), **over) -> dict:
    """A multi-agent cell config as Hydra would resolve it, small enough for tests."""
    cfg = cell(output_dir, **over)
    cfg.pop("agent")
    cfg["agents"] = list(agents)
    cfg.setdefault("llm", SCRIPTED)
    if any(a in ("long_context", "no_memory") for a in agents) and cfg["llm"]["name"] == "none":
        cfg["llm"] = SCRIPTED
    return cfg


def team_content(path: Path) -> dict:
    """A multi-agent run directory without its wall-clock fields: what equal runs share."""
    out = {
        "results": scrub(json.loads((path / "results.json").read_text())),
        "questions": json.loads((path / "qa_questions.json").read_text()),
    }
    for agent_dir in sorted((path / AGENTS_DIR).iterdir()):
        out[agent_dir.name] = {
            "trajectory": scrub(lines(agent_dir / "trajectory.jsonl")),
            "qa": scrub(lines(agent_dir / "qa.jsonl")),
        }
    graph = path / "dependency_graph.json"
    if graph.exists():
        out["graph"] = json.loads(graph.read_text())
    return out


@dataclass(frozen=True)
class Shape:
    """A cell of one seat or of several, as the tests make, run and read it."""

    name: str
    config: Callable[..., dict]  # (output_dir, agents=None, **over); agents: who plays, the one under test last
    run: Callable[..., Any]
    path: Callable[[dict], Path]
    content: Callable[[Path], dict]
    last_seat: Callable[[Path], Path]  # where the files of the last seat live

    @property
    def solo(self) -> bool:
        return self.name == "one seat"


def _solo_config(output_dir: Path, agents: tuple | None = None, **over) -> dict:
    if agents:
        agent = agents[-1]
        over["agent"] = {"name": agent} if isinstance(agent, str) else dict(agent)
    return cell(output_dir, **over)


def _team_config(output_dir: Path, agents: tuple | None = None, **over) -> dict:
    return multi(output_dir, agents=agents or TWO, **over)


ONE = Shape("one seat", _solo_config, run_cell, run_path, run_dir_content, lambda path: path)
MANY = Shape(
    "several seats",
    _team_config,
    run_multi_cell,
    multi_run_path,
    team_content,
    lambda path: sorted((path / AGENTS_DIR).iterdir())[-1],
)
_NO_PETTINGZOO = importlib.util.find_spec("pettingzoo") is None
SHAPES = [
    pytest.param(ONE, id="one_seat"),
    pytest.param(
        MANY, id="many_seats", marks=pytest.mark.skipif(_NO_PETTINGZOO, reason='needs the "multiagent" extra')
    ),
]
needs_pettingzoo = pytest.mark.skipif(_NO_PETTINGZOO, reason='multi-agent cells need the "multiagent" extra')


def _killed_at(cfg: dict, step: int) -> None:
    env = {**os.environ, KILL_AFTER_ENV: str(step)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(cfg)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == -signal.SIGKILL, done.stderr


# ---------------------------------------------------------------------------- one process per cell
@pytest.mark.parametrize("shape", SHAPES)
def test_a_cell_held_by_another_process_is_refused_and_freed_when_that_process_dies(tmp_path, shape):
    cfg = shape.config(tmp_path, max_steps=20 if shape.solo else 10, qa={"enabled": False})
    path = shape.path(cfg)
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunDirError, match=rf"being run by another process \(pid {holder.pid}\)"):
            shape.run(cfg, log=quiet)
        with pytest.raises(RunDirError, match="another process"):  # overwrite must not wipe it under the holder
            shape.run({**cfg, "eval": {**cfg["eval"], "overwrite": True}}, log=quiet)
        assert not (path / "cell.json").exists()
    finally:
        holder.send_signal(signal.SIGKILL)  # no cleanup: the OS drops the lock with the process
        holder.wait()
    assert shape.run(cfg, log=quiet).status == "finished"


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


@pytest.mark.parametrize("shape", SHAPES)
def test_the_lock_is_held_for_the_whole_run(tmp_path, shape):
    """Checked from inside the run: while an agent acts, the cell cannot be taken."""
    register_agent("prober", f"{__name__}:Prober")
    try:
        cfg = shape.config(tmp_path, agents=("random", "prober"), max_steps=3, qa={"enabled": False})
        Prober.probe.clear()
        Prober.probe.update(path=shape.path(cfg))
        shape.run(cfg, log=quiet)
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


@needs_pettingzoo
def test_a_sweep_that_names_a_multi_agent_cell_twice_is_refused_and_different_teams_are_not(tmp_path):
    done = odyssey("run", "-m", "agents=[random,random]", "seed=0,0", *QUICK, cwd=tmp_path)
    line = one_line(done)
    assert "names the cell runs/mossfall/multi/random--random/none/seed_0 twice" in line and "nothing was run" in line
    assert not (tmp_path / "runs" / "mossfall").exists()
    done = odyssey("run", "-m", "agents=[random,random],[random,oracle]", *QUICK, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    teams = sorted(p.name for p in (tmp_path / "runs" / "mossfall" / "multi").iterdir())
    assert teams == ["random--oracle", "random--random"]


# ---------------------------------------------------------------------------- edited game files
def _folder_game(tmp_path: Path) -> Path:
    folder = tmp_path / "folder_game"
    shutil.copytree(GAMES_DIR / "mossfall", folder, ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
    return folder


@pytest.mark.parametrize("shape", SHAPES)
def test_resuming_against_edited_game_files_is_refused_naming_them(tmp_path, shape):
    folder = _folder_game(tmp_path)
    cfg = shape.config(
        tmp_path / "runs", game={"name": "mossfall", "path": str(folder)}, max_steps=40, qa={"enabled": False}
    )
    _killed_at(cfg, 25)
    rd = RunDir(shape.path(cfg))
    assert rd.cell()["content"] == content_digest(folder)
    original = (folder / "world.json").read_bytes()
    world = json.loads(original)
    world["game"]["title"] += " (edited)"
    (folder / "world.json").write_text(json.dumps(world))
    with pytest.raises(RunDirError, match=r"files changed since .*: world\.json \(changed\); resuming would mix"):
        shape.run(cfg, log=quiet)
    (folder / "rules.py").write_text("# nothing\n")
    with pytest.raises(RunDirError, match=r"rules\.py \(added\), world\.json \(changed\)"):
        shape.run(cfg, log=quiet)
    assert not rd.finished
    (folder / "rules.py").unlink()
    (folder / "world.json").write_bytes(original)  # restored: the same run resumes and finishes
    assert shape.run(cfg, log=quiet).status == "finished"
    (folder / "world.json").write_text(json.dumps(world))
    (folder / "rules.py").write_text("# nothing\n")
    again = {**cfg, "eval": {**cfg["eval"], "overwrite": True}, "game": {**cfg["game"], "trust": True}}
    assert shape.run(again, log=quiet).status == "finished"  # starting over is allowed, trusted


@pytest.mark.parametrize("shape", SHAPES)
def test_unchanged_game_files_resume(tmp_path, shape):
    folder = _folder_game(tmp_path)
    cfg = shape.config(
        tmp_path / "runs", game={"name": "mossfall", "path": str(folder)}, max_steps=40, qa={"enabled": False}
    )
    _killed_at(cfg, 25)
    assert shape.run(cfg, log=quiet).status == "finished"


# ---------------------------------------------------------------------------- lost and damaged files
@pytest.mark.parametrize("shape", SHAPES)
def test_a_lost_question_file_is_drawn_again_identically(tmp_path, shape):
    whole = shape.run(shape.config(tmp_path / "whole", max_steps=40), log=quiet)
    cfg = shape.config(tmp_path / "killed", max_steps=40)
    _killed_at(cfg, 25)
    RunDir(shape.path(cfg)).qa_questions.unlink()
    messages: list[str] = []
    resumed = shape.run(cfg, log=messages.append)
    assert any("qa_questions.json was missing" in m for m in messages)
    for r in [resumed.results] if shape.solo else resumed.results["agents"].values():
        assert [q["phase"] for q in r["qa"] if q["kind"] == "world_knowledge"] == ["before", "after"]
    assert shape.content(resumed.path) == shape.content(whole.path)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_lost_question_file_that_any_seat_was_asked_otherwise_is_refused(tmp_path, shape):
    cfg = shape.config(tmp_path, max_steps=40)
    _killed_at(cfg, 25)
    rd = RunDir(shape.path(cfg))
    rd.qa_questions.unlink()
    qa = shape.last_seat(rd.path) / "qa.jsonl"  # with several seats: the last agent's record, not the first's
    rounds = qa.read_text().splitlines()
    first = json.loads(rounds[0])
    first["answers"][0]["answer"] = (first["answers"][0]["answer"] + 1) % 4  # same length: the checkpoint's
    edited = _encode_line(first).decode().rstrip("\n")  # as the runner writes it: byte counts still hold
    assert len(edited) == len(rounds[0])
    qa.write_text("\n".join([edited, *rounds[1:]]) + "\n")
    with pytest.raises(RunDirError, match="questions drawn again differ"):
        shape.run(cfg, log=quiet)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_damaged_question_file_is_a_damaged_directory(tmp_path, shape):
    cfg = shape.config(tmp_path, max_steps=40)
    _killed_at(cfg, 25)
    RunDir(shape.path(cfg)).qa_questions.write_text('[{"id": 1}]')
    with pytest.raises(RunDirError, match=r"qa_questions\.json is damaged"):
        shape.run(cfg, log=quiet)


DAMAGED = {
    "binary": b"\x89PNG\r\n\x1a\n\x00\xff",
    "list": b"[]",
    "string": b'"done"',
    "empty": b"{}",
    "partial": b'{"game": "mossfall"}',
    "no agents": b'{"game": "mossfall", "seed": 0, "max_steps": 5, "steps": 5, "agents": {}, "multiagent": {}}',
    "a path for an id": b'{"game": "mossfall", "seed": 0, "max_steps": 5, "steps": 5, "multiagent": {}, '
    b'"agents": {"../../elsewhere": {}}}',
}


@pytest.mark.parametrize("damage", list(DAMAGED))
@pytest.mark.parametrize("shape", SHAPES)
def test_a_damaged_results_file_is_one_line_never_a_finished_cell(tmp_path, shape, damage, capsys):
    from odyssey_eval.challenge import main as challenge_main
    from odyssey_eval.report import main as report_main

    cfg = shape.config(tmp_path, max_steps=10 if shape.solo else 5, qa={"enabled": False})
    out = shape.run(cfg, log=quiet)
    (out.path / "results.json").write_bytes(DAMAGED[damage])
    with pytest.raises(RunDirError, match=r"results\.json is damaged") as info:
        shape.run(cfg, log=quiet)
    assert "\n" not in str(info.value)
    for main in (report_main, challenge_main):
        assert main([str(tmp_path), *(["--no-html"] if main is report_main else [])]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "results.json is damaged" in err


@needs_pettingzoo
def test_a_damaged_agent_results_file_is_one_line_in_the_report(tmp_path, capsys):
    from odyssey_eval.report import main as report_main

    out = run_multi_cell(multi(tmp_path, agents=TWO, max_steps=5, qa={"enabled": False}), log=quiet)
    (out.path / AGENTS_DIR / "player_1" / "results.json").write_bytes(b'"done"')
    assert report_main([str(tmp_path), "--no-html"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "player_1/results.json is damaged" in err


# ---------------------------------------------------------------------------- keys and config mistakes
@pytest.mark.parametrize("shape", SHAPES)
def test_a_key_given_to_a_cell_is_refused_before_its_directory_is_touched(tmp_path, shape):
    agents = ("random", "no_memory")
    first = shape.run(
        shape.config(tmp_path, agents=agents, llm=SCRIPTED, max_steps=3, qa={"enabled": False}), log=quiet
    )
    before = {p: p.read_bytes() for p in first.path.rglob("*") if p.is_file()}
    with pytest.raises(LLMConfigError) as info:
        shape.run(
            shape.config(
                tmp_path, agents=agents, llm={**SCRIPTED, "password": SECRET}, max_steps=3, qa={"enabled": False}
            ),
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
@pytest.mark.parametrize("shape", SHAPES)
def test_config_mistakes_are_config_errors_that_write_nothing(tmp_path, shape, over, expected):
    with pytest.raises(ConfigError, match=expected):
        shape.run(shape.config(tmp_path, **over), log=quiet)
    assert not (tmp_path / "mossfall").exists()


@needs_pettingzoo
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


@pytest.mark.parametrize("shape", SHAPES)
def test_a_model_that_fails_mid_run_stops_the_cell_resumably_in_one_line(tmp_path, shape):
    register_agent("unreachable", f"{__name__}:Unreachable")
    try:
        Unreachable.calls.clear()
        cfg = shape.config(
            tmp_path,
            agents=("random", "unreachable"),
            max_steps=6,
            qa={"enabled": False},
            eval={"checkpoint_every": 1},
        )
        with pytest.raises(
            RunError,
            match=r"failed after retries; stopped after step 2: run the same command "
            r"again to resume from step 2 \(",
        ) as info:
            shape.run(cfg, log=quiet)
        assert "\n" not in str(info.value)
        assert shape.run(cfg, log=quiet).status == "finished"
    finally:
        del AGENTS["unreachable"]


# ---------------------------------------------------------------------------- the game's name and facts
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


@pytest.fixture(scope="module")
def dancing(tmp_path_factory):
    """A trusted folder whose rules.py adds a verb (and leaves RAN when imported), played by two agents."""
    pytest.importorskip("pettingzoo", reason='multi-agent cells need the "multiagent" extra')
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
