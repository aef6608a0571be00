"""Issue 23 items 1-2: a game folder runs code only from the bytes of a regular rules.py a person trusted.

Untrusted folders with non-regular entries and planted caches, trusted folders with planted files, and
a rules.py swapped between the trust check and the load: no payload runs, every refusal is one line
naming the entry.
"""

from __future__ import annotations

import os
import sys

import pytest

from odyssey_env import trust
from odyssey_env.game import GameError, UntrustedGameError, load_game

from .conftest import game_folder, odyssey, one_line_refusal, payload, plant_pyc


def _refused(folder, *needles):
    with pytest.raises(GameError) as info:
        load_game(folder, cache=False)
    assert not isinstance(info.value, UntrustedGameError) or "rules.py" in needles
    text = str(info.value)
    assert len(text.splitlines()) == 1, text
    for needle in needles:
        assert needle in text, text
    return text


@pytest.mark.parametrize("kind", ["directory", "symlink_devnull", "symlink_elsewhere", "dangling"])
def test_rules_py_that_is_not_a_regular_file_with_a_planted_pyc_never_runs(tmp_path, store, sentinel, kind):
    folder = game_folder(tmp_path)
    rules = folder / "rules.py"
    if kind == "directory":
        rules.mkdir()
    elif kind == "symlink_devnull":
        rules.symlink_to(os.devnull)
    elif kind == "symlink_elsewhere":
        (tmp_path / "elsewhere.py").write_text(payload("folders/pyc_payload.txt", sentinel))
        rules.symlink_to(tmp_path / "elsewhere.py")
    else:
        rules.symlink_to(tmp_path / "nothing-here.py")
    plant_pyc(folder, payload("folders/pyc_payload.txt", sentinel))
    _refused(folder, "__pycache__", "refused")
    for trusted in (False, True):  # not even trust=True runs a pyc
        with pytest.raises(GameError):
            load_game(folder, cache=False, trust=trusted)
    # without the pyc, the non-regular rules.py itself is named
    import shutil

    shutil.rmtree(folder / "__pycache__")
    _refused(folder, "rules.py", "not a regular file")
    with pytest.raises(GameError, match="not a regular file"):
        load_game(folder, cache=False, trust=True)
    assert not sentinel.exists()


def test_a_pyc_alone_is_code_not_data(tmp_path, store, sentinel):
    folder = game_folder(tmp_path)
    plant_pyc(folder, payload("folders/pyc_payload.txt", sentinel))
    assert trust.has_code(folder) and trust.needs_trust(folder)
    _refused(folder, "__pycache__", "compiled code")
    (folder / "stray.pyc").write_bytes(b"\0")
    assert "stray.pyc" in trust.code_entries(folder)
    assert not sentinel.exists()


def test_fifo_and_device_entries_are_refused_without_blocking(tmp_path, store):
    folder = game_folder(tmp_path)
    os.mkfifo(folder / "quest.json")
    _refused(folder, "quest.json", "named pipe")
    os.unlink(folder / "quest.json")
    os.mkfifo(folder / "rules.py")
    _refused(folder, "rules.py", "named pipe")
    os.unlink(folder / "rules.py")
    (folder / "quest.json").symlink_to("/dev/zero")
    _refused(folder, "quest.json", "symbolic link")


def test_world_json_that_is_a_link_or_a_folder_is_refused(tmp_path, store):
    folder = game_folder(tmp_path)
    real = tmp_path / "real-world.json"
    os.replace(folder / "world.json", real)
    (folder / "world.json").symlink_to(real)
    _refused(folder, "world.json", "symbolic link")
    os.unlink(folder / "world.json")
    (folder / "world.json").mkdir()
    with pytest.raises(GameError):
        load_game(folder, cache=False)


def test_a_trusted_folder_with_a_planted_pyc_runs_nothing_and_is_no_longer_ok(tmp_path, store, sentinel):
    folder = game_folder(tmp_path, rules=payload("folders/harmless_rules.txt", sentinel))
    trust.trust(folder)
    load_game(folder, cache=False)  # trusted: loads
    plant_pyc(folder, payload("folders/pyc_payload.txt", sentinel))
    _refused(folder, "__pycache__")
    with pytest.raises(GameError):
        load_game(folder, cache=False, trust=True)
    listed = odyssey("trust", "--list", cwd=tmp_path, store=store)
    assert "[ok]" not in listed.stdout and "refused" in listed.stdout, listed.stdout
    assert not sentinel.exists()


def test_rules_are_compiled_from_the_bytes_whose_digest_was_checked(tmp_path, store, sentinel, monkeypatch):
    """The file is swapped for a payload right after the trust check: what runs is what was checked."""
    harmless = payload("folders/harmless_rules.txt", sentinel)
    folder = game_folder(tmp_path, rules=harmless)
    trust.trust(folder)
    checked = trust.is_trusted

    def racing(path, code=None):
        verdict = checked(path, code)
        (folder / "rules.py").write_text(payload("folders/swap_payload.txt", sentinel))  # the attacker's swap
        return verdict

    monkeypatch.setattr(trust, "is_trusted", racing)
    load_game(folder, cache=False)
    assert not sentinel.exists(), sentinel.read_text()
    ran = [m for m in list(sys.modules.values()) if getattr(m, "__file__", None) == str(folder.resolve() / "rules.py")]
    assert [getattr(m, "HARMLESS", None) for m in ran] == [1], "the module holds the checked bytes"


def test_rules_never_go_through_the_import_system(tmp_path, store, monkeypatch):
    import importlib.util

    def refuse(*_a, **_k):
        raise AssertionError("the import system was asked to load a game folder's rules.py")

    monkeypatch.setattr(importlib.util, "spec_from_file_location", refuse)
    folder = game_folder(tmp_path, rules="X = 1\n")
    load_game(folder, cache=False, trust=True)
    assert not (folder / "__pycache__").exists(), "no pyc written"


def test_trust_command_never_calls_code_data_only(tmp_path, store, sentinel):
    folder = game_folder(tmp_path)
    plant_pyc(folder, payload("folders/pyc_payload.txt", sentinel))
    done = odyssey("trust", str(folder), cwd=tmp_path, store=store)
    assert "data only" not in done.stdout
    one_line_refusal(done, "__pycache__", "refused")
    assert not store.exists()
    plain = game_folder(tmp_path, name="plain")
    assert "data only" in odyssey("trust", str(plain), cwd=tmp_path, store=store).stdout
    (plain / "rules.py").mkdir()
    one_line_refusal(odyssey("trust", str(plain), cwd=tmp_path, store=store), "rules.py", "not a regular file")


@pytest.mark.parametrize("command", ["play", "run"])
def test_cli_refuses_planted_pyc_in_one_line(tmp_path, store, sentinel, command):
    folder = game_folder(tmp_path)
    (folder / "rules.py").mkdir()
    plant_pyc(folder, payload("folders/pyc_payload.txt", sentinel))
    if command == "play":
        done = odyssey("play", str(folder), cwd=tmp_path, store=store)
    else:
        done = odyssey(
            "run",
            f"game.path={folder}",
            "agent=random",
            "max_steps=3",
            f"eval.output_dir={tmp_path / 'runs'}",
            cwd=tmp_path,
            store=store,
        )
    one_line_refusal(done, "__pycache__")
    assert not sentinel.exists()
