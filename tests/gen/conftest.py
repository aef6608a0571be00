"""Shared settings for the generator tests: validation small enough for seconds per game."""

from __future__ import annotations

import pytest

from odyssey_gen.procedural import ProceduralAuthor
from odyssey_gen.spec import GameSpec, ValidationSettings
from tests.kit import bwrap_works

THEME = "a drowned cathedral city where the tide keeps the only records"

#: Fewer seeds and steps than the defaults (3 seeds, 1,000 random steps): a few seconds per game.
FAST = ValidationSettings(seeds=2, random_steps=200, oracle_budget=500, timeout=120)


def spec(**over) -> GameSpec:
    values = {"theme": THEME, "name": "tide", "seed": 0}
    values.update(over)
    return GameSpec(**values)


def build(s: GameSpec, attempt: int = 1) -> dict[str, str]:
    """The procedural author's files for ``s`` (what its stages write into a candidate folder)."""
    return ProceduralAuthor(s).files(attempt)


def quiet(_text: str) -> None:
    pass


@pytest.fixture
def fast() -> ValidationSettings:
    return FAST


#: Model-written code is validated only under bubblewrap; where it is missing those tests cannot run
#: (``.ci/run`` installs it; tests/security checks the one-line refusal that takes their place).
needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap (bwrap) is not usable here")
