"""Reading results never runs code: `odyssey report` and `odyssey challenge` on run directories that
name a game folder with a rules.py, trusted or not, honest or hostile.

The rules.py here writes a file named RAN next to itself whenever it is imported: the proof that
code ran. It also adds a verb, so the test can check that reports stay right for such games without
loading them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from odyssey_env import trust
from odyssey_env.game import GAMES_DIR

from .conftest import cell, quiet

RULES = """
from pathlib import Path

from odyssey_env.rules import ActionRule, action_rule

Path(__file__).with_name("RAN").write_text("this rules.py ran")


@action_rule
class Dance(ActionRule):
    verb = "dance"
    description = "Dance a little."

    def apply(self, turn):
        turn.say("I danced.")

    def candidates(self, turn):
        yield "dance"
"""
COMMANDS = ["dance", "look", "dance", "wait", "dance", "jump around", "look"]


def odyssey(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "odyssey_eval.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    """A trusted folder with a verb-adding rules.py, one finished run of it, and the trust store env."""
    from odyssey_eval.runner import run_cell

    root = tmp_path_factory.mktemp("untrusted")
    folder = root / "dancing"
    shutil.copytree(GAMES_DIR / "mossfall", folder, ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
    world = json.loads((folder / "world.json").read_text())
    world["game"]["name"] = "dancing"
    (folder / "world.json").write_text(json.dumps(world))
    (folder / "rules.py").write_text(RULES)
    (root / "commands.txt").write_text("\n".join(COMMANDS) + "\n")
    cfg = cell(
        root / "runs",
        game={"name": "mossfall", "path": str(folder), "trust": True},
        agent={"name": "replay", "path": str(root / "commands.txt")},
        tutorial=False,
        max_steps=20,
        qa={"enabled": False},
    )
    run_cell(cfg, log=quiet)
    assert (folder / "RAN").exists()  # the run itself, trusted, did import it
    store = root / "trusted.json"
    env = {**os.environ, trust.TRUST_FILE_ENV: str(store), "HF_HUB_OFFLINE": "1"}
    return root, folder, env


def _ran(folder: Path) -> bool:
    return (folder / "RAN").exists()


def test_the_run_is_filed_under_the_folder_s_own_name_with_its_verbs_recorded(played):
    root, folder, _ = played
    (run_dir,) = [p.parent for p in (root / "runs").rglob("results.json")]
    assert run_dir.relative_to(root / "runs").parts[0] == "dancing"  # not runs/mossfall (game.name was "mossfall")
    record = json.loads((run_dir / "cell.json").read_text())
    assert record["game"]["name"] == "dancing"
    assert "dance" in record["facts"]["verbs"]
    assert record["content"] == trust.content_digest(folder)
    results = json.loads((run_dir / "results.json").read_text())
    assert "dance" in results["metrics"]["verbs_used"]


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted-in-store"])
def test_report_and_challenge_never_import_the_rules_and_stay_right(played, trusted):
    root, folder, env = played
    if trusted:  # even a folder the user trusts is not run by reading results: nothing there needs it
        subprocess.run(
            [sys.executable, "-m", "odyssey_eval.cli", "trust", str(folder)], env=env, check=True, capture_output=True
        )
    (folder / "RAN").unlink(missing_ok=True)
    done = odyssey("report", "runs", "--per-run", "--json", "rows.json", cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    assert not _ran(folder), "odyssey report imported the game's rules.py"
    (row,) = json.loads((root / "rows.json").read_text())["runs"]
    stored = json.loads((root / row["path"] / "results.json").read_text())["metrics"]
    assert row["action_exploration"] == stored["action_exploration"]  # the rules' own verb counted
    assert row["action_diversity"] == stored["action_diversity"]
    assert "warning" not in done.stdout
    done = odyssey("challenge", "runs", "--games", "dancing", "--json", cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    assert not _ran(folder), "odyssey challenge imported the game's rules.py"


def test_a_run_directory_pointed_at_a_hostile_folder_runs_nothing(played, tmp_path):
    """The attack a shared run directory invites: one handed over with cell.json naming a folder whose rules.py
    does harm, and no recorded facts, so a careless reader would load the game to compute metrics."""
    root, folder, env = played
    (src,) = [p.parent for p in (root / "runs").rglob("results.json")]
    evil = tmp_path / "evil"
    shutil.copytree(folder, evil)
    (evil / "RAN").unlink(missing_ok=True)
    runs = tmp_path / "runs"
    shutil.copytree(src, runs / "dancing" / "x")
    record = json.loads((runs / "dancing" / "x" / "cell.json").read_text())
    record["game"] = {"name": "mossfall", "path": str(evil)}
    del record["facts"]
    (runs / "dancing" / "x" / "cell.json").write_text(json.dumps(record))
    for command in (["report", "runs", "--no-html"], ["challenge", "runs", "--games", "dancing"]):
        done = odyssey(*command, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        assert not _ran(evil), f"odyssey {command[0]} imported a rules.py named by a run directory"
    assert "using stored metrics" in odyssey("report", "runs", "--no-html", cwd=tmp_path, env=env).stdout
