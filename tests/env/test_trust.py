"""The trust model: a game folder's rules.py is code and runs only when the user trusts it."""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import odyssey_env
from odyssey_env import trust
from odyssey_env.env import OdysseyEnv
from odyssey_env.game import GAMES_DIR, UntrustedGameError, load_game

TINY = Path(__file__).parent / "data" / "tiny"
#: Importing this rules.py leaves a file behind: the proof that code ran.
TOUCH = "from pathlib import Path\nPath(__file__).with_name('RAN').write_text('x')\n"


@pytest.fixture
def store(tmp_path, monkeypatch):
    path = tmp_path / "config" / "trusted.json"
    monkeypatch.setenv(trust.TRUST_FILE_ENV, str(path))
    return path


def _game(tmp_path: Path, rules: str | None = TOUCH, name: str = "game") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(TINY / "world.json", folder / "world.json")
    if rules is not None:
        (folder / "rules.py").write_text(rules)
    return folder


def test_untrusted_rules_never_run(tmp_path, store):
    folder = _game(tmp_path)
    with pytest.raises(UntrustedGameError) as info:
        load_game(folder, cache=False)
    assert not (folder / "RAN").exists()
    message = str(info.value)
    assert "trust=True" in message and f"odyssey trust {folder}" in message
    with pytest.raises(UntrustedGameError):
        OdysseyEnv(folder)
    with pytest.raises(UntrustedGameError):
        odyssey_env.register_game(folder, name="untrusted_probe")
    assert not (folder / "RAN").exists()


def test_trust_flag_runs_them(tmp_path, store):
    folder = _game(tmp_path)
    load_game(folder, cache=False, trust=True)
    assert (folder / "RAN").exists()
    assert not store.exists(), "a per-load trust=True records nothing"


def test_data_only_and_shipped_games_need_no_trust(tmp_path, store):
    assert not trust.needs_trust(_game(tmp_path, rules=None))
    load_game(tmp_path / "game", cache=False)
    for name in odyssey_env.available_games():
        assert not trust.needs_trust(GAMES_DIR / name)
    # a shipped game's rules.py would be trusted: it comes with the package
    assert trust.is_shipped(GAMES_DIR / "mossfall") and not trust.is_shipped(tmp_path / "game")


def test_rules_json_is_content_an_edit_of_it_changes_the_digest(tmp_path, store):
    # data needs no trust, yet its mechanics are the game: results and resumes compare its digest
    folder = _game(tmp_path, rules=None)
    assert "rules.json" not in trust.content_digest(folder)
    (folder / "rules.json").write_text('{"format": 1, "verbs": []}\n')
    before = trust.content_digest(folder)
    assert set(before) == {"world.json", "rules.json"} and not trust.needs_trust(folder)
    (folder / "rules.json").write_text('{"format": 1, "verbs": [], "step_rules": []}\n')
    after = trust.content_digest(folder)
    assert after["rules.json"] != before["rules.json"] and after["world.json"] == before["world.json"]
    # a shipped game's rule file is digested as well
    assert "rules.json" in trust.content_digest(GAMES_DIR / "lazaret")


def test_trust_store_records_the_digest_and_an_edit_withdraws_it(tmp_path, store):
    folder = _game(tmp_path, rules="X = 1\n")
    assert not trust.is_trusted(folder)
    digest = trust.trust(folder)
    assert json.loads(store.read_text()) == {"folders": {str(folder.resolve()): digest}}
    assert trust.is_trusted(folder)
    load_game(folder, cache=False)  # no flag needed now
    (folder / "rules.py").write_text("X = 2\n")
    assert not trust.is_trusted(folder)
    with pytest.raises(UntrustedGameError):
        load_game(folder, cache=False)
    assert trust.forget(folder) and not trust.forget(folder)
    assert trust.trusted_folders() == {}


def test_a_damaged_store_is_a_game_error_not_trust(tmp_path, store):
    folder = _game(tmp_path)
    store.parent.mkdir(parents=True)
    store.write_text("[1, 2]")
    with pytest.raises(odyssey_env.GameError, match=r"trust store .* is damaged"):
        load_game(folder, cache=False)
    assert not (folder / "RAN").exists()


def test_registered_trust_travels_with_the_env(tmp_path, store):
    folder = _game(tmp_path, rules="X = 1\n", name="trusted_travel")
    ident = odyssey_env.register_game(folder, name="trusted_travel", trust=True)
    env = gym.make(ident)
    env.reset(seed=0)
    clone = pickle.loads(pickle.dumps(env.unwrapped))
    assert clone.game.path == folder.resolve()


def test_cli(tmp_path, store):
    folder = _game(tmp_path, rules="X = 1\n")

    def odyssey(*args):
        return subprocess.run(
            [sys.executable, "-m", "odyssey_eval.cli", *args],
            capture_output=True,
            text=True,
            env={**__import__("os").environ, trust.TRUST_FILE_ENV: str(store)},
        )

    done = odyssey("trust", str(folder))
    assert done.returncode == 0 and "trusted:" in done.stdout
    assert trust.is_trusted(folder)
    listed = odyssey("trust", "--list")
    assert f"{folder.resolve()}  [ok]" in listed.stdout
    assert odyssey("trust", "--forget", str(folder)).stdout.startswith("forgot")
    bad = odyssey("trust", str(tmp_path / "nope"))
    assert bad.returncode == 2 and "not a game folder" in bad.stderr and "Traceback" not in bad.stderr
    played = odyssey("play", str(folder))
    assert played.returncode == 2 and "not trusted" in played.stderr and "Traceback" not in played.stderr


def test_a_name_taken_by_another_game_is_refused_not_swapped(tmp_path, store):
    folder = _game(tmp_path, rules=None, name="other_base")
    world = json.loads((folder / "world.json").read_text())
    world["game"]["name"] = "mossfall"
    (folder / "world.json").write_text(json.dumps(world))
    with pytest.raises(odyssey_env.GameError, match=r"Odyssey/Mossfall-v0 is already registered for mossfall"):
        odyssey_env.register_game(folder)
    ident = odyssey_env.register_game(folder, name="my_base")
    assert gym.make(ident).unwrapped.game.path == folder.resolve()
    assert odyssey_env.register_game(folder, name="my_base") == ident  # the same folder again is fine
