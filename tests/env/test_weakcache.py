"""What the engine works out once per condition, main quest or game is dropped with it (``IdentityCache``).

A generator validates many candidate games in one process and a sweep loads many games: a cache that
kept each one alive would grow without bound. These tests load a game afresh, play it (which fills the
condition, main-quest and info caches), let it go, and check that the game, its conditions and every
cache entry are gone.
"""

from __future__ import annotations

import gc
import weakref
from dataclasses import dataclass, field

from kit import game_copy

from odyssey_env.env import OdysseyEnv
from odyssey_env.face import _info_plans
from odyssey_env.quests.conditions import _triggers, triggers
from odyssey_env.quests.main_quest import _plans, plan
from odyssey_env.quests.spec import Condition
from odyssey_env.weakcache import IdentityCache


@dataclass(frozen=True)
class _Thing:
    """Compares by value and holds a dict (so it cannot be a dict key), like a quest condition."""

    name: str
    args: dict = field(default_factory=dict)


def test_values_are_made_once_per_object_by_identity_and_dropped_with_it():
    made = []
    cache: IdentityCache[_Thing, str] = IdentityCache(lambda t: made.append(t.name) or t.name.upper())
    a, b = _Thing("x"), _Thing("x")
    assert a == b and a is not b
    assert cache(a) == cache(a) == "X" and made == ["x"]
    assert cache(b) == "X" and made == ["x", "x"], "an equal object is another object"
    assert len(cache) == 2
    del a
    gc.collect()
    assert len(cache) == 1
    c = _Thing("y")  # whatever address it gets, it never sees a dead object's value
    assert cache(c) == "Y" and made[-1] == "y"


def test_a_played_game_its_conditions_and_their_cache_entries_are_released(tmp_path):
    before = (len(_triggers), len(_plans), len(_info_plans))
    game = game_copy("mossfall", tmp_path / "copy")
    env = OdysseyEnv(game)
    env.reset(seed=0)
    for _ in range(5):
        env.step("wait")
    stage = next(iter(game.quest.stages()))
    condition = stage.done
    assert triggers(condition) is triggers(condition)  # cached
    assert plan(game.quest.main) is plan(game.quest.main)
    assert len(_triggers) > before[0] and len(_plans) > before[1] and len(_info_plans) > before[2]
    refs = [weakref.ref(game), weakref.ref(condition), weakref.ref(game.quest.main)]
    del env, game, stage, condition
    gc.collect()
    assert [r() for r in refs] == [None, None, None], "a cache (or something else) keeps the game alive"
    assert (len(_triggers), len(_plans), len(_info_plans)) == before


def test_a_condition_made_and_dropped_leaves_no_entry():
    before = len(_triggers)
    cond = Condition(type="any_of", conditions=(Condition(type="in_area", area="camp"),))
    assert triggers(cond) is None
    assert len(_triggers) == before + 2  # the condition and its part
    del cond
    gc.collect()
    assert len(_triggers) == before
