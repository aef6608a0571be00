"""Side quests: unlocked by exploring, seeded, paid in coins, one reward each."""

from __future__ import annotations

import copy

from odyssey_env.quests.side_quests import progress

from .conftest import WORLD, act

SIDE = {"side_quests": {"enabled": True, "unlock_after": 1, "reward": [2, 2]}}


def world_with_more_areas():
    world = copy.deepcopy(WORLD)
    areas = world["places"][0]["areas"]
    areas.append({"name": "orchard", "description": "Trees.", "objects": {"apple": 2, "stick": 1}, "scatter": False})
    world["graph"]["connections"].append({"a": "yard", "b": "orchard"})
    return world


def test_side_quests_unlock_after_exploring_and_are_offered_per_area(make_engine):
    engine = make_engine(SIDE, world_with_more_areas())
    assert progress(engine, "player")["active"] == []
    _, text = act(engine, "enter barn")
    assert "SIDE QUESTS UNLOCKED" in text
    first = progress(engine, "player")["active"]
    assert {q["kind"] for q in first} >= {"collect", "craft"}
    act(engine, "enter yard")
    assert progress(engine, "player")["active"] == first  # no new area, no new quests


def test_side_quests_are_seeded(make_engine):
    runs = []
    for _ in range(2):
        engine = make_engine(SIDE, world_with_more_areas(), seed=7)
        act(engine, "enter barn", "enter yard", "enter orchard")
        runs.append(progress(engine, "player"))
    assert runs[0] == runs[1]


def test_completing_a_collect_quest_pays_coins_once(make_engine):
    engine = make_engine(SIDE, world_with_more_areas())
    act(engine, "enter barn")
    collect = next(
        q for q in engine.state.rule_data["side_quests"]["player"]["active"].values() if q["kind"] == "collect"
    )
    assert collect["object"] == "hay"
    rewards = 0
    for _ in range(collect["count"]):
        out, text = act(engine, "pick up hay")
        rewards += out.reward.side_quest
    assert rewards == 1
    assert "Side quest complete" in text
    assert engine.state.agents["player"].hands.get("coin") == 2 or engine.state.areas["barn"].objects.get("coin") == 2
    assert progress(engine, "player")["completed"] == 1


def test_side_quests_off_means_none(make_engine):
    engine = make_engine({"side_quests": {"enabled": False}}, world_with_more_areas())
    act(engine, "enter barn", "enter yard", "enter orchard")
    assert "side_quests" not in engine.state.rule_data
