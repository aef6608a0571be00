"""The runner: run directories, skip and resume (after a real SIGKILL), clear errors, agents."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from odyssey_agents.base import Agent, Decision
from odyssey_agents.registry import AGENTS, AgentUnavailable, agent_class, register_agent
from odyssey_env.game import available_games
from odyssey_eval.factory import ConfigError, build_agent
from odyssey_eval.rundir import RunDir, RunDirError, run_path
from odyssey_eval.runner import KILL_AFTER_ENV, run_cell
from odyssey_eval.trajectory import read_trajectory

from .conftest import cell, lines, quiet, scrub


def run_dir_content(path: Path) -> dict:
    rd = RunDir(path)
    results = json.loads(rd.results_file.read_text())
    results.pop("run_dir", None)
    return {
        "trajectory": scrub(lines(rd.trajectory)),
        "qa": scrub(lines(rd.qa)),
        "results": scrub(results),
        "questions": json.loads(rd.qa_questions.read_text()),
    }


def test_a_cell_writes_its_run_directory(tmp_path):
    out = run_cell(cell(tmp_path), log=quiet)
    assert out.status == "finished"
    assert out.path == tmp_path / "mossfall" / "random" / "none" / "seed_0"
    rd = RunDir(out.path)
    traj = read_trajectory(rd.trajectory)
    assert traj.reset["reset"] and len(traj.play) == 60
    assert [s["step"] for s in traj.steps] == list(range(1, len(traj.steps) + 1))
    assert json.loads((out.path / "cell.json").read_text())["max_steps"] == 60
    assert (rd.checkpoints / "LATEST").read_text() == f"step_{len(traj.steps):06d}"  # tutorial steps included
    assert len(list(rd.checkpoints.glob("step_*"))) == 2  # keep_checkpoints
    r = out.results
    assert r["end_reason"] == "max_steps" and r["play_steps"] == 60
    assert {(q["phase"], q["kind"]) for q in r["qa"]} == {
        ("before", "world_knowledge"),
        ("after", "world_knowledge"),
        ("after", "episodic"),
    }


def test_the_runner_defaults_are_the_shipped_eval_config():
    """A cell run from Python without an ``eval`` group is the cell ``odyssey run`` would play."""
    omegaconf = pytest.importorskip("omegaconf")
    from odyssey_eval.configs import CONFIG_DIR
    from odyssey_eval.runner import _DEFAULT_EVAL

    shipped = omegaconf.OmegaConf.to_container(omegaconf.OmegaConf.load(CONFIG_DIR / "eval" / "default.yaml"))
    assert shipped == _DEFAULT_EVAL


def test_a_finished_cell_is_skipped(tmp_path):
    first = run_cell(cell(tmp_path), log=quiet)
    stamp = (first.path / "results.json").stat().st_mtime_ns
    again = run_cell(cell(tmp_path), log=quiet)
    assert again.status == "skipped" and again.results == first.results
    assert (first.path / "results.json").stat().st_mtime_ns == stamp


_CHILD = """
import json, sys
from odyssey_eval.runner import run_cell
run_cell(json.loads(sys.argv[1]), log=lambda m: None)
"""


def _killed_at(cfg: dict, step: int) -> subprocess.CompletedProcess:
    env = {**os.environ, KILL_AFTER_ENV: str(step)}
    return subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(cfg)], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("game", ["mossfall", "quiet_bell", "tallowmere"])
def test_kill_and_resume_ends_identical_to_an_uninterrupted_run(tmp_path, game):
    if game not in available_games():
        pytest.skip(f"{game} is not shipped yet")
    over = {"game": {"name": game, "path": None}, "max_steps": 80, "qa": {"every": 25}}
    whole = run_cell(cell(tmp_path / "whole", **over), log=quiet)
    cfg = cell(tmp_path / "killed", **over)
    for kill_at in (23, 57):  # killed twice: mid-interval, each time after a checkpoint was written
        done = _killed_at(cfg, kill_at)
        assert done.returncode == -9, done.stderr
        rd = RunDir(run_path(cfg))
        assert not rd.finished
        assert len(lines(rd.trajectory)) == kill_at + 1  # flushed every step: nothing lost before the kill
    resumed = run_cell(cfg, log=quiet)
    assert resumed.status == "finished"
    assert run_dir_content(resumed.path) == run_dir_content(whole.path)


def test_a_kill_before_the_first_checkpoint_restarts_cleanly(tmp_path):
    cfg = cell(tmp_path, max_steps=30)
    assert _killed_at(cfg, 4).returncode == -9
    assert not (RunDir(run_path(cfg)).checkpoints / "LATEST").exists()
    resumed = run_cell(cfg, log=quiet)
    whole = run_cell(cell(tmp_path / "whole", max_steps=30), log=quiet)
    assert run_dir_content(resumed.path) == run_dir_content(whole.path)


def test_a_directory_of_another_cell_is_refused(tmp_path):
    run_cell(cell(tmp_path), log=quiet)
    with pytest.raises(RunDirError, match="max_steps"):
        run_cell(cell(tmp_path, max_steps=70), log=quiet)
    fresh = run_cell(cell(tmp_path, max_steps=70, eval={"overwrite": True}), log=quiet)
    assert fresh.results["play_steps"] == 70


def test_damaged_run_directories_are_reported(tmp_path):
    cfg = cell(tmp_path, max_steps=40)
    assert _killed_at(cfg, 25).returncode == -9
    rd = RunDir(run_path(cfg))
    saved = rd.trajectory.read_bytes()
    rd.trajectory.write_bytes(saved[:100])  # shorter than the checkpoint says
    with pytest.raises(RunDirError, match="shorter"):
        run_cell(cfg, log=quiet)
    rd.trajectory.write_bytes(saved)
    (rd.checkpoints / "LATEST").write_text("step_999999")
    with pytest.raises(RunDirError, match="not a checkpoint"):
        run_cell(cfg, log=quiet)
    (rd.path / "cell.json").write_text("{not json")
    with pytest.raises(RunDirError, match="damaged"):
        run_cell(cfg, log=quiet)


def test_a_qa_file_shorter_than_its_checkpoint_is_reported(tmp_path):
    cfg = cell(tmp_path, max_steps=40)
    assert _killed_at(cfg, 25).returncode == -9
    rd = RunDir(run_path(cfg))
    rd.qa.write_bytes(rd.qa.read_bytes()[:10])  # the before-play round, cut short
    with pytest.raises(RunDirError, match=r"qa\.jsonl is shorter"):
        run_cell(cfg, log=quiet)


def test_a_damaged_trajectory_line_is_reported_as_a_damaged_directory(tmp_path):
    cfg = cell(tmp_path, max_steps=40)
    assert _killed_at(cfg, 25).returncode == -9
    rd = RunDir(run_path(cfg))
    data = rd.trajectory.read_bytes().split(b"\n")
    data[3] = b"x" * len(data[3])  # same length: only the content is damaged
    rd.trajectory.write_bytes(b"\n".join(data))
    with pytest.raises(RunDirError, match=r"trajectory\.jsonl:4: not a JSON line"):
        run_cell(cfg, log=quiet)


def test_replaying_a_trajectory_reproduces_it(random_run, tmp_path):
    original = read_trajectory(RunDir(random_run).trajectory)
    cfg = cell(
        tmp_path,
        agent={"name": "replay", "path": str(RunDir(random_run).trajectory)},
        max_steps=500,
        qa={"enabled": False},
    )
    out = run_cell(cfg, log=quiet)
    assert out.results["end_reason"] == "agent_stopped"  # the file ran out before the budget
    replayed = read_trajectory(RunDir(out.path).trajectory)
    assert [s["observation"] for s in replayed.steps] == [s["observation"] for s in original.steps]
    assert replayed.reset["observation"] == original.reset["observation"]


def test_trajectory_grows_linearly(tmp_path):
    short = run_cell(cell(tmp_path / "a", max_steps=100, tutorial=False, qa={"enabled": False}), log=quiet)
    long = run_cell(cell(tmp_path / "b", max_steps=400, tutorial=False, qa={"enabled": False}), log=quiet)
    size_short = RunDir(short.path).trajectory.stat().st_size
    size_long = RunDir(long.path).trajectory.stat().st_size
    assert 3.0 < size_long / size_short < 5.0  # 4x the steps, 4x the bytes: no world dumps per line
    assert max(len(line) for line in RunDir(long.path).trajectory.read_text().splitlines()) < 8000


@pytest.mark.skipif("tallowmere" not in available_games(), reason="mark (a game with a tutorial) not shipped yet")
def test_tutorial_steps_do_not_use_the_budget(tmp_path):
    out = run_cell(cell(tmp_path, game={"name": "tallowmere", "path": None}, max_steps=30), log=quiet)
    traj = read_trajectory(RunDir(out.path).trajectory)
    assert traj.reset["in_tutorial"]
    assert len(traj.play) == 30 and len(traj.tutorial) > 0
    assert out.results["tutorial_steps"] == len(traj.tutorial)
    assert all(s.get("tutorial") for s in traj.steps[: len(traj.tutorial)])  # the tutorial comes first
    assert sum(sum(s.get("reward", {}).values()) for s in traj.tutorial) == 0
    no_tutorial = run_cell(
        cell(tmp_path, game={"name": "tallowmere", "path": None}, max_steps=30, tutorial=False), log=quiet
    )
    assert no_tutorial.path.name == "seed_0_no_tutorial"
    assert no_tutorial.results["tutorial_steps"] == 0


class Peeker(Agent):
    """A privileged test agent: checks that it sees the engine, then waits."""

    name = "peeker"
    privileged = True

    def act(self, observation, info):
        engine = info["engine"]
        assert engine.state.agents["player"].area == info["area"]
        return Decision("wait")


def test_privileged_agents_get_the_engine_and_it_is_not_logged(tmp_path):
    register_agent("peeker", f"{__name__}:Peeker")
    try:
        out = run_cell(
            cell(
                tmp_path,
                agent={"name": "peeker"},
                max_steps=5,
                tutorial=False,
                qa={"enabled": False},
                eval={"checkpoint_every": 2},
            ),
            log=quiet,
        )
    finally:
        del AGENTS["peeker"]
    text = RunDir(out.path).trajectory.read_text()
    assert "engine" not in text and len(text.splitlines()) == 6
    ckpt = RunDir(out.path).latest_checkpoint()
    assert "engine" not in ckpt.runner["info"]


def test_registry_and_factory_errors(tmp_path):
    from odyssey_env.extras import install_command

    with pytest.raises(AgentUnavailable, match=r"unknown agent 'nope'.*random"):
        agent_class("nope")
    register_agent("needs_extra", "odyssey_eval_missing_paradigm_for_tests:Agent", extra="llm")
    register_agent("needs_dep", "tests.eval.fake_paradigm:FakeAgent", extra="llm")
    try:
        with pytest.raises(AgentUnavailable, match="not available in this installation"):
            agent_class("needs_extra")
        with pytest.raises(AgentUnavailable, match=re.escape(install_command("llm"))):
            agent_class("needs_dep")
    finally:
        del AGENTS["needs_extra"], AGENTS["needs_dep"]
    with pytest.raises(ConfigError, match=r"no parameter.*temperature.*takes: seed"):
        build_agent({"name": "random", "temperature": 1.0})
    with pytest.raises(ConfigError, match="uses no language model"):
        build_agent({"name": "random"}, {"name": "openai", "model": "x"})
    with pytest.raises(ConfigError, match="needs a file"):
        build_agent({"name": "replay", "path": None})


def test_oracle_is_registered_lazily():
    try:
        cls = agent_class("oracle")
    except AgentUnavailable:
        pytest.skip("the oracle is not in this checkout")
    assert cls.privileged


def test_random_agent_is_seeded_and_resumable(tmp_path):
    from odyssey_agents.base import Task
    from odyssey_agents.random_agent import RandomAgent

    valid = {"wait": ["wait"], "pick up": ["pick up apple", "pick up coin"], "enter": ["enter a", "enter b"]}
    task = Task("mossfall", "t", (), 5)
    a, b = RandomAgent(), RandomAgent()
    a.reset(task)
    b.reset(task)
    first = [a.act("", {"valid_actions": valid}).action for _ in range(10)]
    a.save(tmp_path)
    later = [a.act("", {"valid_actions": valid}).action for _ in range(20)]
    assert first == [b.act("", {"valid_actions": valid}).action for _ in range(10)]
    c = RandomAgent()
    c.reset(task)
    c.load(tmp_path)
    assert [c.act("", {"valid_actions": valid}).action for _ in range(20)] == later
    assert len(set(first + later)) > 2


def test_the_human_agent_reads_commands(tmp_path):
    from odyssey_agents.base import Task
    from odyssey_agents.human import HumanAgent

    typed = iter(["", ":verbs", "pick up apple", ":quit"])
    shown: list[str] = []

    class Out:
        def write(self, text):
            shown.append(text)

        def flush(self):
            pass

    h = HumanAgent(input_fn=lambda prompt: next(typed), output=Out())
    h.reset(Task("mossfall", "Title", ("wait", "pick up <object_name>"), 0))
    assert h.act("You stand in a square.", {}).action == "pick up apple"
    assert "pick up <object_name>" in "".join(shown)
    assert h.act("again", {}).stop


def test_cleanup_of_the_temporary_dirs(tmp_path):
    """Run directories are plain folders: removing one is all it takes to forget a cell."""
    out = run_cell(cell(tmp_path, max_steps=5, qa={"enabled": False}), log=quiet)
    shutil.rmtree(out.path)
    assert run_cell(cell(tmp_path, max_steps=5, qa={"enabled": False}), log=quiet).status == "finished"


def test_null_settings_name_the_same_cell_as_absent_ones(tmp_path):
    first = run_cell(cell(tmp_path, max_steps=5, qa={"enabled": False}), log=quiet)  # agent.seed: null
    plain = cell(tmp_path, max_steps=5, qa={"enabled": False}, agent={"name": "random"}, game={"name": "mossfall"})
    assert run_cell(plain, log=quiet).status == "skipped"
    with pytest.raises(RunDirError, match="agent"):  # a different agent seed is a different cell
        run_cell(cell(tmp_path, max_steps=5, qa={"enabled": False}, agent={"name": "random", "seed": 3}), log=quiet)
    assert first.status == "finished"


@pytest.mark.parametrize("paradigm", ["no_memory", "long_context", "short_term_memory", "mem1"])
def test_llm_paradigms_resume_identically(tmp_path, paradigm):
    """The agent-memory half of a checkpoint, with the scripted model backend (offline, exact)."""
    try:
        agent_class(paradigm)
    except AgentUnavailable as exc:
        pytest.skip(str(exc))
    over = {
        "agent": {"name": paradigm, "addons": []},
        "llm": {"name": "scripted", "model": "explore"},
        "max_steps": 30,
        "qa": {"every": 12},
    }
    whole = run_cell(cell(tmp_path / "whole", **over), log=quiet)
    assert whole.results["metrics"]["total_tokens"] > 0
    cfg = cell(tmp_path / "killed", **over)
    assert _killed_at(cfg, 17).returncode == -9
    resumed = run_cell(cfg, log=quiet)
    assert run_dir_content(resumed.path) == run_dir_content(whole.path)


def test_slow_agents_are_checkpointed_by_time(tmp_path):
    """checkpoint_max_seconds bounds the work a kill can lose, whatever checkpoint_every says."""
    cfg = cell(
        tmp_path, max_steps=30, qa={"enabled": False}, eval={"checkpoint_every": 1000, "checkpoint_max_seconds": 0.0}
    )
    assert _killed_at(cfg, 13).returncode == -9
    rd = RunDir(run_path(cfg))
    assert (rd.checkpoints / "LATEST").read_text() == "step_000012"  # the kill came before step 13's
    fast = cell(
        tmp_path / "fast",
        max_steps=30,
        qa={"enabled": False},
        eval={"checkpoint_every": 1000, "checkpoint_max_seconds": None},
    )
    out = run_cell(fast, log=quiet)
    written = list(RunDir(out.path).checkpoints.glob("step_*"))  # none on the way; the final state is kept
    assert [p.name for p in written] == [f"step_{out.results['steps']:06d}"]


def _stops_on_overflow(tmp_path: Path) -> dict:
    """A Long Context cell whose small context window makes the agent stop after a few steps."""
    return cell(
        tmp_path,
        agent={"name": "long_context", "addons": ["reflection"], "on_overflow": "stop"},
        llm={"name": "scripted", "context_window": 2500},
        max_steps=200,
        tutorial=False,
        qa={"enabled": False},
    )


def test_tokens_of_a_decision_to_stop_are_counted(tmp_path):
    """Long Context's "stop" policy ends the run on a decision whose reflection call still cost tokens."""
    cfg = _stops_on_overflow(tmp_path)
    outcome = run_cell(cfg, log=quiet)
    assert outcome.results["end_reason"] == "agent_stopped"
    metrics = outcome.results["metrics"]
    steps = read_trajectory(outcome.path / "trajectory.jsonl").steps
    recorded = [sum(s["tokens"][0] for s in steps), sum(s["tokens"][1] for s in steps)]
    stop_in, stop_out = metrics["stop_decision_tokens"]
    assert stop_in > 0
    assert metrics["input_tokens"] == recorded[0] + stop_in
    assert metrics["output_tokens"] == recorded[1] + stop_out


def test_tokens_of_a_decision_to_stop_are_in_every_token_metric(tmp_path):
    """tokens_per_step and the report's recomputed totals include them, as total_tokens does."""
    from odyssey_eval.collect import load_run

    cfg = _stops_on_overflow(tmp_path)
    outcome = run_cell(cfg, log=quiet)
    metrics = outcome.results["metrics"]
    assert metrics["stop_decision_tokens"][0] > 0
    assert metrics["tokens_per_step"] == pytest.approx(metrics["total_tokens"] / metrics["play_steps"])
    recomputed = load_run(outcome.path).metrics
    assert recomputed == metrics
