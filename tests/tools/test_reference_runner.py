"""benchmarks/reference.py, which runs the reference engine from its wheel in a subprocess.

Offline: a small stand-in wheel (its hash pinned for the test) checks the plumbing a benchmark relies
on: the wheel is refused unless its bytes are the pinned ones, unpacked once, the driver runs in the
unpacked tree with its modules and the drivers importable, no API key reaches it, the hash seed is fixed,
and the result comes back. The real wheel is stepped only when ``ODYSSEY_REFERENCE_WHEEL`` names it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
REAL_WHEEL = os.environ.get("ODYSSEY_REFERENCE_WHEEL")  # read before the fixture clears it
REAL_CACHE = os.environ.get("ODYSSEY_REFERENCE_CACHE")


@pytest.fixture
def reference(monkeypatch):
    spec = importlib.util.spec_from_file_location("odyssey_reference_runner", BENCHMARKS / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("ODYSSEY_REFERENCE_WHEEL", "ODYSSEY_REFERENCE_PYTHON", "ODYSSEY_REFERENCE_CACHE"):
        monkeypatch.delenv(name, raising=False)
    return module


def _stand_in_wheel(folder: Path) -> Path:
    wheel = folder / "stand-in.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("games/base/env.py", "")
        archive.writestr("utils.py", "ANSWER = 42\n")
    return wheel


def _pin(reference, monkeypatch, wheel: Path) -> None:
    monkeypatch.setattr(reference, "WHEEL_SHA256", hashlib.sha256(wheel.read_bytes()).hexdigest())


def test_a_wheel_that_is_not_pypis_is_refused_before_anything_runs(reference, tmp_path):
    wheel = _stand_in_wheel(tmp_path)
    with pytest.raises(reference.ReferenceUnavailable, match=r"is not PyPI's agentodyssey 0\.1\.0 wheel"):
        reference.ensure_tree(wheel, tmp_path / "cache")
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").glob("agentodyssey-*"))
    with pytest.raises(reference.ReferenceUnavailable, match="does not exist"):
        reference.ensure_wheel(tmp_path / "missing.whl", tmp_path / "cache")


def test_the_driver_runs_in_the_tree_without_api_keys_and_with_a_fixed_hash_seed(reference, tmp_path, monkeypatch):
    wheel = _stand_in_wheel(tmp_path)
    _pin(reference, monkeypatch, wheel)
    monkeypatch.setenv("ODYSSEY_REFERENCE_PYTHON", sys.executable)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-reach-the-reference")
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    driver = tmp_path / "driver.py"
    driver.write_text(
        "import os, sys, utils, refgame\n"
        "refgame.emit({'cwd': os.getcwd(), 'answer': utils.ANSWER, 'keys': sorted(os.environ),\n"
        "              'hash_seed': os.environ['PYTHONHASHSEED'], 'args': sys.argv[1:]})\n"
    )
    cache = tmp_path / "cache"
    result = reference.run_json(driver, ["remnant", 7], wheel=wheel, cache=cache)
    tree = next(cache.glob("agentodyssey-*"))
    assert Path(result["cwd"]) == tree
    assert result["answer"] == 42  # the wheel's top-level modules import
    assert result["args"] == ["remnant", "7"]
    assert result["hash_seed"] == "0"
    assert not any("KEY" in key or "TOKEN" in key for key in result["keys"])
    (tree / "utils.py").write_text("ANSWER = 4343\n")  # unpacked once: a second run reuses the tree
    assert reference.run_json(driver, [], wheel=wheel, cache=cache)["answer"] == 4343


def test_a_failing_driver_raises_with_its_stderr_and_a_silent_one_is_an_error(reference, tmp_path, monkeypatch):
    wheel = _stand_in_wheel(tmp_path)
    _pin(reference, monkeypatch, wheel)
    monkeypatch.setenv("ODYSSEY_REFERENCE_PYTHON", sys.executable)
    failing = tmp_path / "failing.py"
    failing.write_text("raise SystemExit('the engine broke')\n")
    with pytest.raises(subprocess.CalledProcessError) as caught:
        reference.run_driver(failing, wheel=wheel, cache=tmp_path / "cache")
    assert "the engine broke" in caught.value.stderr
    silent = tmp_path / "silent.py"
    silent.write_text("print('a line of the reference, not a result')\n")
    with pytest.raises(ValueError, match="no result line"):
        reference.run_json(silent, wheel=wheel, cache=tmp_path / "cache")


def test_the_drivers_result_prefix_is_the_runners(reference):
    spec = importlib.util.spec_from_file_location("odyssey_refgame", BENCHMARKS / "reference_drivers" / "refgame.py")
    refgame = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(refgame)
    assert refgame.RESULT_PREFIX == reference.RESULT_PREFIX


def test_game_files_name_each_reference_game_and_refuse_others(reference, tmp_path):
    world, config = reference.game_files("saltglass", tmp_path)
    assert world == tmp_path / "assets/world_definitions/generated/saltglass/default.json"
    assert config == tmp_path / "assets/env_configs/generated/saltglass/initial.json"
    assert reference.game_files("base", tmp_path)[0] == tmp_path / "assets/world_definitions/base/default.json"
    with pytest.raises(ValueError, match="unknown reference game 'mossfall'"):
        reference.game_files("mossfall", tmp_path)


@pytest.mark.skipif(not REAL_WHEEL, reason="set ODYSSEY_REFERENCE_WHEEL to the wheel (and ODYSSEY_REFERENCE_CACHE)")
def test_every_reference_game_steps_under_the_throughput_driver(reference, tmp_path):
    cache = Path(REAL_CACHE) if REAL_CACHE else tmp_path
    for game in reference.GAMES:
        args = [game, "30", "0", "10"]
        result = reference.run_json(reference.DRIVERS / "throughput.py", args, wheel=REAL_WHEEL, cache=cache)
        assert result["steps"] == 30 and set(result["checkpoints_cpu_s"]) == {"10", "30"}


def test_env_throughput_runs_odyssey_alone_and_skips_a_missing_textworld_with_a_line():
    """The side-by-side benchmark's plumbing without the reference: fresh odyssey workers, their
    checkpoints, and the optional peer's one-line skip (no figure is checked: benchmarks print them)."""
    script = BENCHMARKS / "env_throughput.py"
    args = ["mossfall", "--no-reference", "--steps", "20", "40", "--rounds", "2", "--quiet"]
    done = subprocess.run([sys.executable, str(script), *args, "--json"], capture_output=True, text=True, check=True)
    (row,) = json.loads(done.stdout)["games"]
    assert row["odyssey_game"] == "mossfall" and row["reference_game"] == "base"
    assert [set(run["checkpoints_cpu_s"]) for run in row["runs"]["odyssey"]] == [{"20", "40"}] * 2
    missing = subprocess.run(
        [sys.executable, str(script), *args, "--textworld", "--textworld-python", sys.executable],
        capture_output=True,
        text=True,
        check=True,
    )
    if importlib.util.find_spec("textworld") is None:
        assert "TextWorld peer skipped: textworld is not installed (pip install textworld==1.7.0)" in missing.stdout
    unknown = subprocess.run([sys.executable, str(script), "nowhere", "--no-reference"], capture_output=True, text=True)
    assert unknown.returncode != 0 and "no pair has a game 'nowhere'" in unknown.stderr


@pytest.mark.skipif(not REAL_WHEEL, reason="set ODYSSEY_REFERENCE_WHEEL to the wheel (and ODYSSEY_REFERENCE_CACHE)")
def test_the_harm_and_census_drivers_account_for_every_death_and_npc(reference, tmp_path):
    """benchmarks/harm_trace.py's reference side: a death is put on the rule that dealt it, each one; the
    census lists the world's areas with their NPCs."""
    cache = Path(REAL_CACHE) if REAL_CACHE else tmp_path
    run = reference.run_json(reference.DRIVERS / "harm_trace.py", ["base", "0", "300"], wheel=REAL_WHEEL, cache=cache)
    assert run["died"] > 0 and sum(run["deaths"].values()) == run["died"], run
    assert set(run["lost"]) <= {"combat_rhythm_step", "active_attack_step", "action"}
    census = reference.run_json(reference.DRIVERS / "world_census.py", ["mark", "0"], wheel=REAL_WHEEL, cache=cache)
    assert census["spawn"] in census["areas"] and len(census["areas"]) == 14
    assert any(n["enemy"] for a in census["areas"].values() for n in a["npcs"])
