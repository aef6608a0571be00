"""The user games directory (issue 29 item 11): games made or imported are found by name everywhere."""

from __future__ import annotations

import json
import shutil

import gymnasium as gym
import pytest

from odyssey_env.game import GAMES_DIR, GameError, load_game


@pytest.fixture
def whales(tmp_path, monkeypatch):
    games = tmp_path / "games"
    folder = games / "whales"
    folder.mkdir(parents=True)
    for name in ("world.json", "quest.json"):
        shutil.copyfile(GAMES_DIR / "mossfall" / name, folder / name)
    world = json.loads((folder / "world.json").read_text())
    world["game"]["name"] = "whales"
    (folder / "world.json").write_text(json.dumps(world))
    monkeypatch.setenv("ODYSSEY_GAMES_DIR", str(games))
    return folder


def test_a_user_game_is_found_by_name_and_registered(whales):
    from odyssey_env.registration import register_envs
    from odyssey_env.userdir import origin, user_games

    assert user_games() == ["whales"]
    assert load_game("whales", cache=False).path == whales.resolve()
    register_envs()
    try:
        env = gym.make("Odyssey/Whales-v0")
        env.reset(seed=0)
        env.close()
    finally:
        gym.registry.pop("Odyssey/Whales-v0", None)
    assert origin(whales)["kind"] == "user"
    assert origin(GAMES_DIR / "mossfall")["kind"] == "odyssey"


def test_the_catalog_lists_user_games(whales, capsys):
    from odyssey_eval.catalog import main

    assert main(["whales"]) == 0
    assert "whales" in capsys.readouterr().out
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "whales" in out and "Odyssey/Mossfall-v0" in out


def test_odyssey_run_takes_a_user_game_by_name(whales):
    from odyssey_eval.run import _user_games

    assert _user_games(["game=whales", "seed=1"]) == ["game.name=whales", "seed=1"]
    assert _user_games(["game=mossfall"]) == ["game=mossfall"]  # a game with its own config keeps it
    assert _user_games(["game=remnant"]) == ["game=remnant"]  # a paper game has a config (it names the import)


def test_a_paper_game_not_imported_names_the_import_command(tmp_path, monkeypatch):
    monkeypatch.setenv("ODYSSEY_GAMES_DIR", str(tmp_path / "none"))
    with pytest.raises(GameError, match="odyssey paper import"):
        load_game("remnant", cache=False)
    from odyssey_env.registration import register_envs

    register_envs()
    assert "AgentOdyssey/Remnant-v0" not in gym.registry  # only imported games are registered
