"""Multi-agent cells: one shared world, per-agent files and metrics, resumable like single-agent cells."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("pettingzoo", reason='multi-agent cells need the "multiagent" extra')

from odyssey_eval.factory import ConfigError
from odyssey_eval.metrics import compute_metrics
from odyssey_eval.rundir import RunDir, RunDirError
from odyssey_eval.runner import AGENTS_DIR, KILL_AFTER_ENV, multi_run_path, run_cell, run_multi_cell
from odyssey_eval.trajectory import read_trajectory

from .conftest import cell, lines, quiet
from .test_cell_integrity import SCRIPTED, multi
from .test_cell_integrity import team_content as content
from .test_runner import scrub


def test_a_multi_agent_cell_writes_one_directory_with_every_agents_files(tmp_path):
    cfg = multi(tmp_path, max_steps=40, tutorial=False, eval={"dependency_graph": True})
    out = run_multi_cell(cfg, log=quiet)
    assert out.status == "finished"
    team = "oracle--random--long_context"
    assert out.path == tmp_path / "mossfall" / "multi" / team / "scripted-explore" / "seed_0_no_tutorial"
    assert out.path == multi_run_path(cfg)
    cellfile = json.loads((out.path / "cell.json").read_text())
    assert [a["name"] for a in cellfile["agents"]] == ["oracle", "random", "long_context"]
    assert cellfile["multiagent"] == {"episode_end": "first", "supplies": "shared"}
    from odyssey_env.game import load_game

    game = load_game("mossfall")
    steps = set()
    for i, name in enumerate(["oracle", "random", "long_context"]):
        aid = f"player_{i}"
        rd = RunDir(out.path / AGENTS_DIR / aid)
        traj = read_trajectory(rd.trajectory)
        assert traj.reset["agent"] == aid
        r = out.results["agents"][aid]
        assert r["agent_name"] == name and r["agent_id"] == aid
        assert r["metrics"] == json.loads(json.dumps(compute_metrics(traj, game)))
        assert json.loads(rd.results_file.read_text()) == r
        assert {(q["phase"], q["kind"]) for q in r["qa"]} >= {("before", "world_knowledge"), ("after", "episodic")}
        steps.add(len(traj.steps))
    assert steps == {out.results["steps"]}  # everyone acted at every step
    # one world: the oracle's observation names the others while they share its area
    first = read_trajectory(out.path / AGENTS_DIR / "player_0" / "trajectory.jsonl").reset["observation"]
    assert "player_1" in first and "player_2" in first
    graph = json.loads((out.path / "dependency_graph.json").read_text())
    assert out.results["dependency_graph"] == "dependency_graph.json"
    assert {n["agent"] for n in graph["nodes"] if n["kind"] == "action"} >= {"player_0"}
    again = run_multi_cell(cfg, log=quiet)
    assert again.status == "skipped" and again.results == out.results


def test_the_episode_ends_for_all_when_the_oracle_completes_the_quest(tmp_path):
    out = run_multi_cell(
        multi(tmp_path, agents=("oracle", "random"), max_steps=300, tutorial=False, qa={"enabled": False}), log=quiet
    )
    r = out.results["agents"]
    assert r["player_0"]["main_reward"] == 9 and r["player_0"]["end_reason"] == "terminated"
    assert r["player_1"]["end_reason"] == "terminated" and r["player_1"]["play_steps"] == r["player_0"]["play_steps"]


def test_each_agent_has_its_own_budget_and_leaves_when_it_is_spent(tmp_path):
    cfg = multi(
        tmp_path,
        agents=("oracle", "random"),
        max_steps=25,
        tutorial=True,
        qa={"enabled": False},
        multiagent={"episode_end": "each", "supplies": "per_agent"},
    )
    out = run_multi_cell(cfg, log=quiet)
    for r in out.results["agents"].values():
        assert r["play_steps"] == 25 and r["end_reason"] == "max_steps"
    tut = {aid: r["tutorial_steps"] for aid, r in out.results["agents"].items()}
    assert out.results["steps"] == 25 + max(tut.values())  # the later one kept playing alone


_CHILD = """
import json, sys
from odyssey_eval.runner import run_multi_cell
run_multi_cell(json.loads(sys.argv[1]), log=lambda m: None)
"""


@pytest.mark.parametrize("game", ["mossfall", "quiet_bell"])
def test_kill_and_resume_ends_identical_to_an_uninterrupted_run(tmp_path, game):
    over = {
        "game": {"name": game, "path": None},
        "max_steps": 50,
        "qa": {"every": 20},
        "eval": {"dependency_graph": True},
    }
    whole = run_multi_cell(multi(tmp_path / "whole", **over), log=quiet)
    cfg = multi(tmp_path / "killed", **over)
    for kill_at in (17, 43):  # each time after a checkpoint was written, mid-interval
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps(cfg)],
            env={**os.environ, KILL_AFTER_ENV: str(kill_at)},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == -9, done.stderr
        rd = RunDir(multi_run_path(cfg))
        assert not rd.finished
        for aid in ("player_0", "player_1", "player_2"):  # flushed every step: nothing lost before the kill
            assert len(lines(rd.path / AGENTS_DIR / aid / "trajectory.jsonl")) == kill_at + 1
    resumed = run_multi_cell(cfg, log=quiet)
    assert resumed.status == "finished"
    assert content(resumed.path) == content(whole.path)


def test_config_errors_are_clear(tmp_path):
    with pytest.raises(ConfigError, match="uses a language model"):
        run_multi_cell(multi(tmp_path, agents=("oracle", "random"), llm=SCRIPTED), log=quiet)
    with pytest.raises(ConfigError, match="unknown multiagent setting"):
        run_multi_cell(multi(tmp_path, agents=("random",), multiagent={"colour": "red"}), log=quiet)
    with pytest.raises(ConfigError, match="episode_end"):
        run_multi_cell(multi(tmp_path, agents=("random",), multiagent={"episode_end": "never"}), log=quiet)
    with pytest.raises(ConfigError, match="non-empty list"):
        run_multi_cell(multi(tmp_path, agents=()), log=quiet)
    with pytest.raises(ConfigError, match="agent name or a config"):
        run_multi_cell(multi(tmp_path, agents=(3,)), log=quiet)


def test_the_same_directory_with_other_multiagent_settings_is_refused(tmp_path):
    run_multi_cell(multi(tmp_path, agents=("random", "random"), max_steps=5, qa={"enabled": False}), log=quiet)
    with pytest.raises(RunDirError, match="multiagent"):
        run_multi_cell(
            multi(
                tmp_path,
                agents=("random", "random"),
                max_steps=5,
                qa={"enabled": False},
                multiagent={"episode_end": "each"},
            ),
            log=quiet,
        )


def test_two_agents_of_one_kind_do_not_draw_alike(tmp_path):
    out = run_multi_cell(
        multi(tmp_path, agents=("random", "random"), max_steps=30, tutorial=False, qa={"enabled": False}), log=quiet
    )
    a, b = (read_trajectory(out.path / AGENTS_DIR / aid / "trajectory.jsonl") for aid in ("player_0", "player_1"))
    assert [s["action"] for s in a.steps] != [s["action"] for s in b.steps]


def test_single_agent_cells_save_the_dependency_graph_when_asked(tmp_path):
    plain = run_cell(cell(tmp_path / "plain", max_steps=40, qa={"enabled": False}), log=quiet)
    assert not (plain.path / "dependency_graph.json").exists() and "dependency_graph" not in plain.results
    tracked = run_cell(
        cell(tmp_path / "tracked", max_steps=40, qa={"enabled": False}, eval={"dependency_graph": True}), log=quiet
    )
    graph = RunDir(tracked.path).dependency_graph()
    assert graph and graph["edges"] and tracked.results["dependency_graph"] == "dependency_graph.json"
    assert scrub(lines(plain.path / "trajectory.jsonl")) == scrub(lines(tracked.path / "trajectory.jsonl"))


def test_the_report_lists_each_agent_of_a_cell_and_renders_its_dependency_graph(tmp_path):
    from odyssey_eval.report import main as report

    run_multi_cell(multi(tmp_path, max_steps=40, tutorial=False, eval={"dependency_graph": True}), log=quiet)
    run_cell(cell(tmp_path, max_steps=30, qa={"enabled": False}), log=quiet)  # a single-agent run beside it
    out = tmp_path / "report.html"
    assert report([str(tmp_path), "--html", str(out), "--json", str(tmp_path / "rows.json")]) == 0
    rows = json.loads((tmp_path / "rows.json").read_text())["runs"]
    labels = sorted(r["agent"] for r in rows)
    assert labels == [
        "long_context / scripted:explore in oracle,random,long_context",
        "oracle in oracle,random,long_context",
        "random",
        "random in oracle,random,long_context",
    ]
    page = out.read_text()
    assert page.count("<h3>") == 1 and "Action-dependency graphs" in page  # one graph for the one tracked cell
    assert "<path data-pair=" in page and "type='checkbox'" in page and "flowchart LR" in page
    assert "<script src" not in page  # self-contained


def test_odyssey_run_agents_through_hydra_and_its_errors(tmp_path):
    from .test_cli import SMALL, odyssey

    done = odyssey(
        "run",
        "agents=[oracle,random,long_context]",
        "llm=scripted",
        "seed=1",
        "multiagent.episode_end=each",
        "eval.dependency_graph=true",
        *SMALL,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cell_dir = tmp_path / "runs" / "mossfall" / "multi" / "oracle--random--long_context" / "scripted-explore" / "seed_1"
    results = json.loads((cell_dir / "results.json").read_text())
    assert results["multiagent"]["episode_end"] == "each" and len(results["agents"]) == 3
    assert (cell_dir / "dependency_graph.json").is_file() and (cell_dir / "config.yaml").is_file()
    again = odyssey(
        "run",
        "agents=[oracle,random,long_context]",
        "llm=scripted",
        "seed=1",
        "multiagent.episode_end=each",
        "eval.dependency_graph=true",
        *SMALL,
        cwd=tmp_path,
    )
    assert "skip (finished)" in again.stdout
    bad = odyssey("run", "agents=[oracle,random]", "llm=scripted", *SMALL, cwd=tmp_path)
    assert bad.returncode != 0 and "uses a language model" in bad.stderr and "Traceback" not in bad.stderr
    bad = odyssey("run", "agents=[random]", "multiagent.episode_end=never", *SMALL, cwd=tmp_path)
    assert bad.returncode != 0 and "episode_end" in bad.stderr and "Traceback" not in bad.stderr


def test_agents_without_the_multiagent_extra_is_one_line_naming_it(monkeypatch):
    import importlib.util

    from odyssey_eval.run import _check_launcher

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pettingzoo" else real(name, *a))
    from odyssey_env.extras import install_command

    with pytest.raises(SystemExit, match=re.escape(install_command("multiagent"))):
        _check_launcher(["agents=[oracle,random]"])
    _check_launcher(["agents=null", "game=mossfall"])  # no agents: nothing needed
