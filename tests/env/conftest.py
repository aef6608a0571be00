"""Shared fixtures for the engine tests: a tiny custom game with every verb, and a harness around it.

The tiny game (``data/tiny/world.json``) keeps these tests independent of the Base game's tuning. Most
verb tests start from :func:`harness`: an engine on the tiny game whose spawn area has been emptied, so
that each test places exactly the objects and NPCs it talks about.
"""

from __future__ import annotations

import itertools
import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from odyssey_env import load_game
from odyssey_env.engine import Engine, Outcome
from odyssey_env.game import Game
from odyssey_env.listing import CHECK_ENV
from odyssey_env.state import Area, Npc
from odyssey_env.world import add, make_objects
from odyssey_env.worldgen import spawn_npc

DATA = Path(__file__).parent / "data"
TINY = DATA / "tiny"
PLAYER = "player"
SLOW_ENV = "ODYSSEY_SLOW_TESTS"
#: Events the step rules report on their own (an enemy's blow, a level gained), whatever the command was.
WORLD_EVENTS = frozenset({"agent_hit", "agent_ambushed", "agent_died", "level_up", "npc_wandered", "npc_respawned",
                          "npc_spawned"})


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


class Harness:
    """Drive one engine by hand: place things, issue commands, read feedback."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.outcome: Outcome | None = None

    # ----------------------------------------------------------- views
    @property
    def state(self):
        return self.engine.state

    @property
    def game(self) -> Game:
        return self.engine.game

    @property
    def agent(self):
        return self.engine.state.agents[PLAYER]

    @property
    def area(self) -> Area:
        return self.state.areas[self.agent.area]

    @property
    def feedback(self) -> str:
        return "\n".join(self.state.feedback[PLAYER])

    # ----------------------------------------------------------- setup
    def clear(self, area: str | None = None) -> None:
        """Remove every object and NPC from an area (the agent's by default)."""
        target = self.state.areas[area or self.agent.area]
        target.objects.clear()
        for handle in list(target.npcs):
            del self.state.npcs[handle]
        target.npcs.clear()

    def put(self, type_name: str, n: int = 1, area: str | None = None) -> list[str]:
        """Create objects on the ground; returns their handles (instance names for bags and paper)."""
        target = self.state.areas[area or self.agent.area]
        pieces = make_objects(self.game, self.state, type_name, n)
        for handle, k in pieces:
            add(target.objects, handle, k)
        return [h for h, _ in pieces]

    def hold(self, type_name: str, n: int = 1) -> list[str]:
        """Create objects directly in the agent's hands."""
        pieces = make_objects(self.game, self.state, type_name, n)
        for handle, k in pieces:
            add(self.agent.hands, handle, k)
        return [h for h, _ in pieces]

    def wear(self, type_name: str) -> str:
        """Create an armor piece or a container and equip it directly."""
        (handle,) = [h for h, _ in make_objects(self.game, self.state, type_name, 1)]
        slot = self.game.objects[type_name].equip_slot
        assert slot is not None
        self.agent.equipment[slot] = handle
        return handle

    def stash(self, container: str, type_name: str, n: int = 1) -> None:
        """Put objects straight into a container instance."""
        for handle, k in make_objects(self.game, self.state, type_name, n):
            add(self.state.instances[container].contents, handle, k)

    def npc(self, type_name: str, area: str | None = None) -> Npc:
        return spawn_npc(self.game, self.state, self.game.npcs[type_name], area or self.agent.area)

    # ----------------------------------------------------------- acting
    def do(self, command) -> Outcome:
        self.outcome = self.engine.step({PLAYER: command})[PLAYER]
        return self.outcome

    def ok(self, command: str) -> str:
        """Run a command that must succeed; return its feedback."""
        out = self.do(command)
        assert not out.invalid and not out.failed, (command, self.feedback)
        return self.feedback

    def fails(self, command: str, message: str) -> str:
        """Run a command that must be refused by the state (not invalid) with ``message`` in the feedback."""
        before = self.state.step
        out = self.do(command)
        assert out.failed and not out.invalid, (command, self.feedback)
        assert self.state.step == before + 1
        assert message in self.feedback, (command, self.feedback)
        # A refused command changes nothing, so it reports nothing (the world may still report its own doings).
        assert not [e for e in out.events if e.kind not in WORLD_EVENTS], (command, out.events)
        return self.feedback

    def valid(self) -> list[str]:
        return [c for cmds in self.engine.valid_actions(PLAYER).values() for c in cmds]

    def events(self, kind: str) -> list[dict]:
        assert self.outcome is not None
        return [e.data for e in self.outcome.events if e.kind == kind]

    def emitted(self) -> list[tuple[str, dict]]:
        """``(kind, data)`` of every event of the last step but the world's own (:data:`WORLD_EVENTS`), in order."""
        assert self.outcome is not None
        return [(e.kind, e.data) for e in self.outcome.events if e.kind not in WORLD_EVENTS]

    def kinds(self) -> list[str]:
        """The kinds of :meth:`emitted`, in order."""
        return [kind for kind, _ in self.emitted()]


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
        world = json.loads((TINY / "world.json").read_text(encoding="utf-8"))
        change(world)
        folder = tmp_path / f"tiny_variant_{next(counter)}"
        folder.mkdir()
        (folder / "world.json").write_text(json.dumps(world), encoding="utf-8")
        harness = Harness(Engine(load_game(folder, cache=False), 0))
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


class Scripted(random.Random):
    """A seeded RNG whose ``random()`` first returns scripted values (to force a lock or a theft to succeed)."""

    def __init__(self, values: list[float], seed: int = 0):
        super().__init__(seed)
        self.values = list(values)

    def random(self) -> float:
        return self.values.pop(0) if self.values else 0.999


@pytest.fixture
def scripted() -> type[Scripted]:
    return Scripted


@pytest.fixture(autouse=True)
def _check_valid_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every engine these tests build compares each cached valid-action listing with a fresh one and
    fails on any difference (odyssey_env.listing), so every walk here also checks the cache."""
    monkeypatch.setenv(CHECK_ENV, "1")
