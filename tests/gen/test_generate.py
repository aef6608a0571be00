"""``odyssey generate`` end to end: a game folder that every tool accepts, and nothing half-written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import odyssey_env
from odyssey_env import load_game
from odyssey_eval.catalog import main as games_main
from odyssey_eval.cli import main as odyssey
from odyssey_eval.runner import run_cell
from odyssey_gen.cli import main as generate_main
from odyssey_gen.pipeline import GenerationError, generate
from odyssey_gen.procedural import ProceduralAuthor
from odyssey_gen.report import REPORT_FILE

from .conftest import FAST, THEME, quiet, spec

FAST_FLAGS = ["--validation-seeds", "2", "--random-steps", "200", "--oracle-budget", "500"]


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_generate_writes_a_game_every_tool_accepts(tmp_path, capsys, monkeypatch):
    target = tmp_path / "games" / "tide"
    code = generate_main(
        [
            THEME,
            "--name",
            "tide",
            "--out",
            str(target),
            "--seed",
            "3",
            "--branching",
            "2",
            "--stages",
            "6",
            "--verbs",
            "eat,throw",
            *FAST_FLAGS,
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    for n, stage in enumerate(["scaffold", "entities", "rules", "quest", "validation"], 1):
        assert f"[{n}/5] {stage}" in out
    assert sorted(p.name for p in target.iterdir()) == ["generation.json", "quest.json", "world.json"]
    assert leftovers(target.parent) == []  # no temporary folder left behind
    report = json.loads((target / REPORT_FILE).read_text())
    assert report["status"] == "accepted" and report["author"] == "procedural" and report["seed"] == 3
    assert report["spec"]["branching"] == 2 and report["statistics"]["stages"] == 6
    assert set(report["validation"]["checks"]) == {"static", "load", "execution", "reachability", "solvability"}
    assert all(not v for v in report["validation"]["checks"].values())
    assert report["validation"]["stats"]["solvability"]["runs"][0]["stages"] == 6
    assert report["files"]["world.json"] and "rules.py" not in report["files"]
    assert set(report["stages"]) == {"entities", "rules", "quest"}

    # odyssey games PATH
    assert games_main([str(target)]) == 0
    assert "tide" in capsys.readouterr().out
    # odyssey play PATH (a few commands typed in, then end of input)
    typed = iter(["talk to " + json.loads((target / "quest.json").read_text())["main"]["guide"]["npc"], "quit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(typed))
    assert odyssey(["play", str(target)]) == 0
    assert "Stage complete (1/6)" in capsys.readouterr().out
    # register_game + gym.make
    env_id = odyssey_env.register_game(target)
    assert env_id == "Odyssey/Tide-v0"
    env = gym.make(env_id)
    obs, _info = env.reset(seed=1)
    assert "MAIN QUEST" in obs
    env.close()
    # odyssey run game.path=... agent=oracle (the runner's own API)
    cell = {
        "game": {"name": "tide", "path": str(target)},
        "agent": {"name": "oracle"},
        "llm": {"name": "none"},
        "seed": 0,
        "max_steps": 500,
        "tutorial": True,
        "eval": {"output_dir": str(tmp_path / "runs"), "progress": False, "qa": {"enabled": False}},
    }
    outcome = run_cell(cell, log=quiet)
    assert outcome.results["main_reward"] == 6 and outcome.results["end_reason"] == "terminated"


def test_odyssey_dispatches_generate(tmp_path, capsys):
    code = odyssey(["generate", THEME, "--name", "reef", "--out", str(tmp_path / "reef"), "--quiet", *FAST_FLAGS])
    assert code == 0
    assert capsys.readouterr().out.startswith(f"generated {tmp_path / 'reef'}")


def test_the_same_seed_gives_the_same_game_files(tmp_path):
    a = generate(spec(seed=5), tmp_path / "a" / "tide", settings=FAST, say=quiet)
    b = generate(spec(seed=5), tmp_path / "b" / "tide", settings=FAST, say=quiet)
    for name in ("world.json", "quest.json"):
        assert (a.path / name).read_bytes() == (b.path / name).read_bytes()
    assert a.report["files"] == b.report["files"]


def test_an_existing_target_is_kept_unless_overwrite(tmp_path, capsys):
    target = tmp_path / "tide"
    target.mkdir()
    (target / "mine.txt").write_text("keep me")
    code = generate_main([THEME, "--name", "tide", "--out", str(target), *FAST_FLAGS])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "already exists" in err and "--overwrite" in err
    assert (target / "mine.txt").read_text() == "keep me"
    assert generate_main([THEME, "--name", "tide", "--out", str(target), "--overwrite", "--quiet", *FAST_FLAGS]) == 0
    assert not (target / "mine.txt").exists() and (target / "world.json").is_file()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--name", "Tide"], "lower_snake_case"),
        (["--name", "tide", "--verbs", "fly"], "unknown optional verb"),
        (["--name", "tide", "--places", "1", "--areas-per-place", "2", "--max-level", "4"], "levels need at least 4"),
        (["--name", "tide", "--author", "llm"], "needs a model"),
        (["--name", "tide", "llm=embedded"], "needs no model"),
        (["--name", "tide", "--llm-names"], "--llm-names needs --describe-with"),
        (["--name", "tide", "--params", "{oops"], "--params: not JSON"),
        (["--name", "tide", "--validation-seeds", "0"], "validation seeds must be at least 1"),
        (["--name", "tide", "--spec", "/no/such/spec.json"], "cannot read spec file"),
    ],
)
def test_bad_requests_get_one_line_and_status_2(tmp_path, capsys, args, words):
    code = generate_main([THEME, "--out", str(tmp_path / "x"), *args])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("odyssey generate: ") and err.count("\n") == 1 and words in err, err
    assert not (tmp_path / "x").exists() and (not tmp_path.exists() or leftovers(tmp_path) == [])


def test_a_spec_file_sets_the_request_and_flags_override_it(tmp_path):
    path = tmp_path / "mirror_salt.json"
    path.write_text(
        json.dumps(
            {
                "theme": "salt glass under a mirror sky",
                "name": "mirror_salt",
                "places": 1,
                "areas_per_place": 8,
                "max_level": 5,
                "objects": 28,
                "stages": 9,
                "branching": 2,
                "verbs": ["eat"],
                "dynamics": ["noise"],
            }
        )
    )
    target = tmp_path / "out"
    assert generate_main(["--spec", str(path), "--out", str(target), "--objects", "30", "--quiet", *FAST_FLAGS]) == 0
    game = load_game(target, cache=False)
    assert game.summary()["object_types"] == 30 and game.summary()["areas"] == 8 and "eat" in game.rules.actions


class Unsolvable(ProceduralAuthor):
    """Writes a quest whose only stage asks for an object nobody can ever have (a broken generator)."""

    def run_stage(self, stage, folder, feedback, attempt):
        problems = super().run_stage(stage, folder, feedback, attempt)
        if stage == "quest":
            quest = json.loads((folder / "quest.json").read_text())
            trophy = quest["main"]["chapters"][-1]["stages"][-1]
            trophy["done"] = {"type": "has_item_count", "object": self.draft.of_kind("trophy")[0].name, "count": 5}
            (folder / "quest.json").write_text(json.dumps(quest))
        return problems


def test_a_candidate_that_stays_invalid_is_rejected_beside_the_target(tmp_path):
    s = spec(seed=2, stages=3)
    target = tmp_path / "tide"
    lines: list[str] = []
    result = generate(s, target, author=Unsolvable(s), settings=FAST, max_attempts=2, say=lines.append)
    assert not result.ok and not target.exists()
    assert result.path == tmp_path / ".rejected" / "tide-seed2"
    assert sorted(p.name for p in result.path.iterdir()) == ["generation.json", "quest.json", "world.json"]
    report = json.loads((result.path / REPORT_FILE).read_text())
    assert report["status"] == "rejected" and "no attempts left" in report["reason"]
    assert len(report["stages"]["entities"]) == 2  # the procedural repair rebuilt once from another stream
    assert "solvability" in json.dumps(report["validation"]["checks"])
    assert any("REJECTED" in line for line in lines)
    assert leftovers(tmp_path) == [".rejected"]
    # a second rejection of the same seed does not overwrite the first
    again = generate(s, target, author=Unsolvable(s), settings=FAST, max_attempts=1, say=quiet)
    assert again.path == tmp_path / ".rejected" / "tide-seed2-2"


class Interrupted(ProceduralAuthor):
    def run_stage(self, stage, folder, feedback, attempt):
        if stage == "quest":
            raise KeyboardInterrupt
        return super().run_stage(stage, folder, feedback, attempt)


def test_an_interrupted_generation_leaves_nothing(tmp_path):
    s = spec(seed=1)
    with pytest.raises(KeyboardInterrupt):
        generate(s, tmp_path / "tide", author=Interrupted(s), settings=FAST, say=quiet)
    assert list(tmp_path.iterdir()) == []


def test_generate_refuses_a_target_it_cannot_write(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(GenerationError, match="cannot write"):
        generate(spec(), blocker / "tide", settings=FAST, say=quiet)


def test_nothing_imports_odyssey_gen_and_odyssey_env_stays_light():
    """Layering: odyssey_gen -> odyssey_env, odyssey_agents; the CLI names it only as a string."""
    import ast

    root = Path(__file__).resolve().parents[2]
    for package in ("odyssey_env", "odyssey_agents", "odyssey_eval"):
        for path in (root / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                    assert not any(n.startswith("odyssey_gen") for n in names), f"{path} imports odyssey_gen"
    code = (
        "import sys, odyssey_env; "
        "print(sorted(m for m in ('odyssey_gen', 'odyssey_agents', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
