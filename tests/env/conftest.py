"""Shared fixtures for the engine tests: a tiny custom game with every verb, and a harness around it.

The tiny game (``data/tiny/world.json``) keeps these tests independent of the Mossfall game's tuning. Most
verb tests start from :func:`h`: the test kit's :class:`kit.Harness` on the tiny game, its spawn area emptied,
so that each test places exactly the objects and NPCs it talks about.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kit import Harness, Scripted, game_copy

from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.game import Game
from odyssey_env.listing import CHECK_ENV

DATA = Path(__file__).parent / "data"
TINY = DATA / "tiny"
SLOW_ENV = "ODYSSEY_SLOW_TESTS"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"slow: long random walks, run only when {SLOW_ENV}=1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip this folder's ``slow`` tests unless asked for: they take minutes, not seconds."""
    if os.environ.get(SLOW_ENV) == "1":
        return
    here = Path(__file__).parent
    skip = pytest.mark.skip(reason=f"slow: set {SLOW_ENV}=1 to run")
    for item in items:
        if "slow" in item.keywords and here in item.path.parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def tiny_game() -> Game:
    return load_game(TINY)


@pytest.fixture
def engine(tiny_game: Game) -> Engine:
    return Engine(tiny_game, 0)


@pytest.fixture
def h(engine: Engine) -> Harness:
    """An engine on the tiny game, standing in an emptied camp."""
    harness = Harness(engine)
    harness.clear()
    return harness


@pytest.fixture
def variant(tmp_path: Path) -> Callable[[Callable[[dict[str, Any]], None]], Harness]:
    """``variant(change)``: a harness (spawn area emptied) on a copy of the tiny game whose world data ``change``
    edited first, for the cases the tiny game's own numbers cannot show (three hands, no stats rule...)."""
    counter = itertools.count()

    def make(change: Callable[[dict[str, Any]], None]) -> Harness:
        harness = Harness(Engine(game_copy(TINY, tmp_path / f"tiny_variant_{next(counter)}", change), 0))
        harness.clear()
        return harness

    return make


def kind(world: dict[str, Any], section: str, name: str) -> dict[str, Any]:
    """The entry of object or NPC type ``name`` in world data (for ``variant`` changes)."""
    return next(entry for entry in world[section] if entry["name"] == name)


@pytest.fixture
def make_harness() -> type[Harness]:
    """The :class:`Harness` class, for tests that build their own engines."""
    return Harness


@pytest.fixture
def scripted() -> type[Scripted]:
    return Scripted


@pytest.fixture(autouse=True)
def _check_valid_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every engine these tests build compares each cached valid-action listing with a fresh one and
    fails on any difference (odyssey_env.listing), so every walk here also checks the cache."""
    monkeypatch.setenv(CHECK_ENV, "1")
