"""``game.rules_from``: a game folder may take the rules of shipped games (the imported paper games do)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit import game_copy

from odyssey_env.game import GameError


def test_a_folder_without_code_plays_a_shipped_game_s_rules_untrusted(tmp_path: Path) -> None:
    def take(world: dict) -> None:
        world["game"]["rules_from"] = ["mirror_salt"]

    game = game_copy("mossfall", tmp_path / "salted", take, trust=False)
    assert {"listen", "refract"} <= set(game.rules.actions)
    assert game.rules.step_rule("salt_mirage") is not None


@pytest.mark.parametrize("name", ["no_such_game", "mossfall"])  # unknown; shipped but without rules.py
def test_only_shipped_games_with_rules_may_be_named(tmp_path: Path, name: str) -> None:
    def take(world: dict) -> None:
        world["game"]["rules_from"] = [name]

    with pytest.raises(GameError, match="rules_from"):
        game_copy("mossfall", tmp_path / "other", take, trust=False)


def test_a_shipped_rule_file_joins_a_folder_that_names_it(tmp_path: Path) -> None:
    """``game.rule_files_from``: a shipped game's rules.json (data), checked against the world that names it."""

    def take(world: dict) -> None:
        world["game"]["rules_from"] = ["mirror_salt"]
        world["game"]["rule_files_from"] = ["mirror_salt"]

    game = game_copy("mossfall", tmp_path / "salted", take, trust=False)
    steps = {r.name for r in game.rules.steps}
    assert {"forge_alert", "salt_sink", "resonance_imprint", "imprint_falter", "salt_mirage"} <= steps


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("no_such_game", "game.rule_files_from: 'no_such_game' is not a shipped game with rules.json"),
        ("mossfall", "game.rule_files_from: 'mossfall' is not a shipped game with rules.json"),
        ("lazaret", "lazaret/rules.json: verbs[0]"),  # Lazaret's names Lazaret's herbs: not this world's
    ],
)
def test_only_a_shipped_rule_file_that_fits_the_world_may_be_named(tmp_path: Path, name: str, says: str) -> None:
    def take(world: dict) -> None:
        world["game"]["rule_files_from"] = [name]

    with pytest.raises(GameError, match=says.replace("[", r"\[").replace("]", r"\]")):
        game_copy("mossfall", tmp_path / "other", take, trust=False)
