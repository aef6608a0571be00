"""``odyssey play``: the terminal loop, its meta-commands, saving and loading, by feeding input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from odyssey_env.env import OdysseyEnv
from odyssey_eval import play

TINY = str(Path(__file__).parent / "data" / "tiny")


def run(monkeypatch, capsys, lines, *argv):
    """Run ``play.main`` with ``lines`` typed in (then end-of-input); return (exit code, stdout, stderr)."""
    feed = iter(lines)

    def fake_input(prompt=""):
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", fake_input)
    code = play.main([*argv] if argv else [TINY])
    out, err = capsys.readouterr()
    return code, out, err


def test_start_observe_and_leave_on_end_of_input(monkeypatch, capsys):
    code, out, _ = run(monkeypatch, capsys, [], TINY, "--seed", "2")
    assert code == 0
    assert "Tiny Test Hollow (seed 2). Type 'help'" in out
    assert "Current Location: Hollow Camp, camp" in out and "I wake in a quiet camp." in out


def test_commands_are_played_and_rewards_shown(monkeypatch, capsys):
    code, out, _ = run(monkeypatch, capsys, ["enter yard", "dance", "", "   "])
    assert code == 0
    assert "I entered yard." in out and "[+1 exploration]" in out
    assert "Invalid action: could not understand 'dance'" in out
    assert out.count("Current Time:") == 3  # empty lines cost no turn
    assert "Current Time: 0001-01-01 08:20:00" in out


def test_help_lists_every_verb_and_the_meta_commands(monkeypatch, capsys):
    _, out, _ = run(monkeypatch, capsys, ["help"])
    for usage in OdysseyEnv(TINY).verbs():
        assert f"  {usage} " in out
    assert "Put objects from my hands" in out
    for meta in ("help", "actions", "save FILE", "load FILE", "quit"):
        assert f"  {meta} " in out
    assert "Current Time: 0001-01-01 08:10:00" not in out  # help takes no game time


def test_actions_are_grouped_by_verb(monkeypatch, capsys):
    _, out, _ = run(monkeypatch, capsys, ["actions"])
    lines = out.splitlines()
    assert "wait: wait" in lines
    assert any(line.startswith("pick up: pick up coin | pick up stick") for line in lines)
    assert any(line.startswith("talk to: talk to mira | talk to tom") for line in lines)


def test_quit_stops_reading(monkeypatch, capsys):
    code, out, _ = run(monkeypatch, capsys, ["quit", "enter yard"])
    assert code == 0 and "I entered yard." not in out


def test_save_and_load_round_trip(monkeypatch, capsys, tmp_path):
    file = tmp_path / "game.json"
    lines = ["pick up stick", f"save {file}", "drop stick", "enter yard", f"load {file}", "wait"]
    code, out, _ = run(monkeypatch, capsys, lines)
    assert code == 0
    assert f"Saved to {file} (step 1)." in out
    assert f"Loaded {file}." in out
    after = out.split(f"Loaded {file}.")[1]
    assert "I am holding 1 stick." in after and "Current Location: Hollow Camp, camp" in after
    assert "Current Time: 0001-01-01 08:20:00" in after  # the wait after loading is step 2 again
    saved = json.loads(file.read_text())
    assert saved["game"] == "tiny" and saved["world"]["step"] == 1
    assert not list(tmp_path.glob("*.tmp"))


def test_resume_from_the_command_line(monkeypatch, capsys, tmp_path):
    file = tmp_path / "game.json"
    run(monkeypatch, capsys, ["enter yard", "pick up quill", f"save {file}"], TINY, "--seed", "5")
    code, out, _ = run(monkeypatch, capsys, ["wait"], TINY, "--load", str(file))
    assert code == 0
    assert "Current Location: Hollow Camp, yard" in out and "I am holding 1 quill." in out
    assert "Current Time: 0001-01-01 08:30:00" in out


BAD_FILES = {
    "missing": (None, "No such file or directory"),
    "not json": ("{oops", "not a saved game (invalid JSON"),
    "a list": ("[1, 2, 3]", "not a saved game"),
    "wrong format": (json.dumps({"format": 7}), "unsupported state format 7"),
    "missing fields": (json.dumps({"format": 1, "game": "tiny"}), "not a saved game (no 'rng' field)"),
    "corrupt world": ("CORRUPT", "state: "),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_load_file_keeps_the_game(monkeypatch, capsys, tmp_path, case):
    text, message = BAD_FILES[case]
    file = tmp_path / "save.json"
    if text == "CORRUPT":
        env = OdysseyEnv(TINY)
        env.reset(seed=0)
        state = env.save_state()
        state["world"]["agents"]["player"]["hp"] = "lots"
        text = json.dumps(state)
    if text is not None:
        file.write_text(text)
    code, out, _ = run(monkeypatch, capsys, ["pick up stick", f"load {file}", "wait"])
    assert code == 0
    assert f"Cannot load {file}: " in out and message in out
    tail = out.split(f"Cannot load {file}")[1]
    assert "I am holding 1 stick." in tail and "Current Time: 0001-01-01 08:20:00" in tail


def test_state_of_another_game_is_refused(monkeypatch, capsys, tmp_path):
    file = tmp_path / "base.json"
    run(monkeypatch, capsys, [f"save {file}"], "mossfall")
    _, out, _ = run(monkeypatch, capsys, [f"load {file}"])
    assert "state is for game 'mossfall', this engine runs 'tiny'" in out


def test_bad_load_file_on_the_command_line(monkeypatch, capsys, tmp_path):
    code, out, err = run(monkeypatch, capsys, [], TINY, "--load", str(tmp_path / "nope.json"))
    assert code == 2 and "Cannot load" in err and "Current Time" not in out


def test_save_errors_are_reported_and_keep_playing(monkeypatch, capsys, tmp_path):
    code, out, _ = run(monkeypatch, capsys, [f"save {tmp_path / 'no' / 'such' / 'dir.json'}", "save", "load", "wait"])
    assert code == 0
    assert "Cannot save to" in out and "No such file or directory" in out
    assert "Usage: save FILE" in out and "Usage: load FILE" in out
    assert "I waited for a while." in out


def test_tutorial_flag_reaches_the_env(monkeypatch, capsys, tmp_path):
    file = tmp_path / "t.json"
    run(monkeypatch, capsys, [f"save {file}"], TINY, "--tutorial")
    assert json.loads(file.read_text())["options"]["tutorial"] is True


def test_unknown_game(monkeypatch, capsys):
    code, _, err = run(monkeypatch, capsys, [], "no_such_game")
    assert code == 2 and "no game named 'no_such_game'" in err and "a folder with a world.json" in err


def test_end_of_the_story_ends_the_session(monkeypatch, capsys):
    real_step = OdysseyEnv.step

    def finishing_step(self, action):
        obs, reward, _, truncated, info = real_step(self, action)
        return obs, reward, True, truncated, info

    monkeypatch.setattr(OdysseyEnv, "step", finishing_step)
    code, out, _ = run(monkeypatch, capsys, ["wait", "wait"])
    assert code == 0 and "The story is complete." in out and out.count("I waited") == 1


def test_ctrl_c_leaves(monkeypatch, capsys):
    def interrupt(prompt=""):
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", interrupt)
    assert play.main([TINY]) == 130


def test_as_a_program_with_piped_input():
    done = subprocess.run(
        [sys.executable, "-m", "odyssey_eval.play", TINY, "--seed", "1"],
        input="wait\nquit\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "I waited for a while." in done.stdout and done.stdout.count("> ") == 2
