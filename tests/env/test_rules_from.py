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
    # its mirages and verbs are data now (rules.json's salt_mirage, listen and refract): rules_from takes a
    # game's code (its helpers and step rules in Python: none are left), not its rule file
    assert game.rules.step_rule("salt_mirage") is None
    assert "listen" not in game.rules.actions and "refract" not in game.rules.actions


@pytest.mark.parametrize("name", ["no_such_game", "mossfall"])  # unknown; shipped but without rules.py
def test_only_shipped_games_with_rules_may_be_named(tmp_path: Path, name: str) -> None:
    def take(world: dict) -> None:
        world["game"]["rules_from"] = [name]

    with pytest.raises(GameError, match="rules_from"):
        game_copy("mossfall", tmp_path / "other", take, trust=False)
