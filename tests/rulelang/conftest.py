"""Fixtures for the rule language's tests: the tiny engine-test game with a ``rules.json`` of the test's own."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kit import Harness

from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.game import Game
from odyssey_env.listing import CHECK_ENV

TINY = Path(__file__).parent.parent / "env" / "data" / "tiny"


def tiny_game(tmp_path: Path, rules: dict[str, Any], params: dict[str, Any] | None = None, name: str = "g") -> Game:
    """The tiny game with ``rules`` as its rules.json and ``params`` as world.json's ``game.params``."""
    folder = tmp_path / name
    shutil.copytree(TINY, folder)
    (folder / "rules.json").write_text(json.dumps(rules), encoding="utf-8")
    if params is not None:
        world = json.loads((folder / "world.json").read_text(encoding="utf-8"))
        world["game"].setdefault("params", {}).update(params)
        (folder / "world.json").write_text(json.dumps(world), encoding="utf-8")
    return load_game(folder, cache=False)


@pytest.fixture(autouse=True)
def _check_valid_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every engine here compares each cached listing with a fresh one (odyssey_env.listing)."""
    monkeypatch.setenv(CHECK_ENV, "1")


@pytest.fixture
def rules_game(tmp_path: Path) -> Callable[..., Game]:
    """``rules_game(rules)``: the tiny game with ``rules`` (a dict, written as rules.json), loaded afresh."""
    counter = itertools.count()

    def make(rules: dict[str, Any], quest: Callable[[dict[str, Any]], None] | None = None) -> Game:
        folder = tmp_path / f"tiny_rules_{next(counter)}"
        shutil.copytree(TINY, folder)
        (folder / "rules.json").write_text(json.dumps(rules), encoding="utf-8")
        if quest is not None:
            data = json.loads((folder / "quest.json").read_text(encoding="utf-8"))
            quest(data)
            (folder / "quest.json").write_text(json.dumps(data), encoding="utf-8")
        return load_game(folder, cache=False)

    return make


@pytest.fixture
def rh(rules_game: Callable[..., Game]) -> Callable[..., Harness]:
    """``rh(rules)``: a harness (spawn area emptied) on the tiny game with ``rules``."""

    def make(rules: dict[str, Any], seed: int = 0) -> Harness:
        harness = Harness(Engine(rules_game(rules), seed))
        harness.clear()
        return harness

    return make
