"""The day in periods (``day_cycle``, odyssey_env/steprules/day_cycle.py): the paper Remnant's and Mark's day.

Played on a copy of Quiet Bell whose only optional dynamic is the day cycle, in place of the base day/night
rhythm, with ambushes, night spawns and respawns off so that nothing else draws from the episode's RNG.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kit import variant

from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.game import Game
from odyssey_env.steprules.combat import ambush_chance
from odyssey_env.steprules.day_cycle import FELT, PERIODS, DayCycle, period_of

SPAWN_FREE = {"ambush": {"chance_by_level": [0, 0, 0, 0, 0]}}


def day_game(tmp_path: Path, **params: Any) -> Game:
    def only_the_day(world: dict[str, Any]) -> None:
        game = world["game"]
        game["step_rules"] = ["day_cycle"]
        game["disable"] = ["day_night", "night_spawn", "respawn"]
        game["params"] = {"day_cycle": params, **SPAWN_FREE}

    return variant("quiet_bell", tmp_path, change=only_the_day)


def engine_for(game: Game, seed: int = 0) -> Engine:
    return Engine(game, seed, options={"tutorial": False})


def hour(engine: Engine) -> int:
    return engine.state.minute // 60 % 24


def test_periods_cover_the_day_in_order() -> None:
    firsts = [first for _, first in PERIODS]
    assert firsts == sorted(firsts) and firsts[0] == 0
    assert [period_of(h) for h in (0, 1, 5, 6, 7, 11, 12, 13, 17, 18, 23)] == [
        "midnight", "small_hours", "small_hours", "dawn", "morning", "morning", "noon", "afternoon", "afternoon",
        "evening", "evening",
    ]  # fmt: skip


def test_each_hour_sets_the_reference_s_modifiers(tmp_path: Path) -> None:
    engine = engine_for(day_game(tmp_path, midnight_ambush=0.15))
    rule = engine.rules.step_rule("day_cycle")
    assert isinstance(rule, DayCycle) and engine.rules.step_rule("day_night") is None
    want = {"midnight": 1.3, "small_hours": 1.2, "noon": 0.8, "afternoon": 0.8}
    seen = set()
    for _ in range(150):  # a day and then some (10 minutes a step)
        engine.step({"player": "wait"})
        mods, h = engine.state.modifiers, hour(engine)
        seen.add(period_of(h))
        assert mods["enemy_attack"] == pytest.approx(want.get(period_of(h), 1.0)) == rule.attack_at(h)
        assert mods.get("ambush_add", 0.0) == (0.15 if h == 0 else 0.0)  # Mark's number, as set above
        assert mods.get("ambush_set") == (0.05 if h == 12 else None)
    assert seen == {name for name, _ in PERIODS}


def test_ambush_odds_add_the_hour_s_or_take_its_fixed_odds() -> None:
    table = (0.05, 0.075, 0.1, 0.125, 0.15)
    assert ambush_chance(table, 2, {}) == 0.075
    assert ambush_chance(table, 2, {"ambush_add": 0.3}) == pytest.approx(0.375)
    assert ambush_chance(table, 5, {"ambush_add": 0.3, "ambush": 2.0}) == pytest.approx(0.9)
    assert ambush_chance(table, 5, {"ambush_set": 0.05, "ambush_add": 0.3}) == 0.05  # a calm noon, any area
    assert ambush_chance(table, 9, {}) == 0.15  # above the table's levels: its last odds


def test_a_period_is_felt_once_as_it_begins_and_never_named(tmp_path: Path) -> None:
    engine = engine_for(day_game(tmp_path))
    said: list[tuple[int, str]] = []
    for step in range(150):
        engine.step({"player": "wait"})
        said += [(step, line) for line in engine.state.feedback.get("player", ()) if line in FELT.values()]
    # from 08:00 for 25 hours: noon first; dawn is not felt (its coins are seen)
    order = ("noon", "afternoon", "evening", "midnight", "small_hours", "morning")
    assert [line for _, line in said] == [FELT[p] for p in order]
    assert not any(word in line.lower() for _, line in said for word in ("ambush", "attack", "%"))


def test_dawn_leaves_coins_where_merchants_trade_and_only_there(tmp_path: Path) -> None:
    engine = engine_for(day_game(tmp_path, dawn_coins=[2, 2]))
    state, game = engine.state, engine.game
    merchants = {a.name for a in state.areas.values() if any(game.npcs[state.npcs[h].type].merchant for h in a.npcs)}
    assert merchants
    before = {name: area.objects.get("coin", 0) for name, area in state.areas.items()}
    dawns = []
    for _ in range(144):
        engine.step({"player": "wait"})
        dawns += [e for e in engine.events if e.kind == "dawn_coins"]
        if dawns:
            assert hour(engine) == 6 and engine.state.minute % 60 < 10  # the first step of 06:00
            break
    assert {e.data["area"] for e in dawns} == merchants and all(e.data["amount"] == 2 for e in dawns)
    for name, area in state.areas.items():
        assert area.objects.get("coin", 0) == before[name] + (2 if name in merchants else 0), name


def test_an_evening_craft_may_give_one_more(tmp_path: Path) -> None:
    def craft_at(engine: Engine) -> int:
        state, agent = engine.state, engine.state.agents["player"]
        area = state.areas[agent.area]
        agent.hands.clear()
        agent.hands.update({"deadfall_branch": 1, "twine": 1})
        before = area.objects.get("briar_cudgel", 0)
        engine.step({"player": "craft 1 briar_cudgel"})
        assert [e for e in engine.events if e.kind == "object_crafted"], engine.state.feedback
        return area.objects.get("briar_cudgel", 0) - before

    engine = engine_for(day_game(tmp_path, evening_bonus=1.0))
    assert period_of(hour(engine)) == "morning"
    assert craft_at(engine) == 1  # not in the evening: no bonus
    while period_of(hour(engine)) != "afternoon" or hour(engine) != 17 or engine.state.minute % 60 < 50:
        engine.step({"player": "wait"})
    assert craft_at(engine) == 2  # this step runs at 18:00: the evening's bonus, every time at chance 1
    assert any(e.kind == "evening_bonus" for e in engine.events)


def test_the_rule_is_optional_and_off_in_the_shipped_games() -> None:
    for name in ("mossfall", "quiet_bell", "tallowmere"):
        assert "day_cycle" not in {r.name for r in load_game(name).rules.steps}, name


def test_a_bad_parameter_names_itself(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="dawn_coins"):
        day_game(tmp_path, dawn_coins=[3, 1])
    with pytest.raises(Exception, match="evening_bonus"):
        day_game(tmp_path, evening_bonus=2)
