"""The reward breakdown: which events pay which component, firsts only where the paper counts firsts."""

from __future__ import annotations

import pytest

from odyssey_env.rewards import COMPONENTS, SUPPLEMENTARY, RewardBreakdown, breakdown, check_weights
from odyssey_env.turn import Event


def ev(kind: str, agent: str | None = "player", **data) -> Event:
    return Event(kind, agent, data)


def test_each_event_pays_its_component():
    r = breakdown(
        [
            ev("quest_stage_completed", stage="a"),
            ev("quest_stage_completed", stage="b"),
            ev("side_quest_completed"),
            ev("area_entered", area="yard", first=True),
            ev("object_crafted", object="plank", first=True),
            ev("npc_defeated", type="rat", first=True),
            ev("object_bought", object="apple", first=True),
            ev("object_sold", object="stick", first=True),
            ev("agent_died"),
        ],
        "player",
    )
    assert r.to_dict() == {
        "quest": 2,
        "side_quest": 1,
        "exploration": 1,
        "craft": 1,
        "defeat": 1,
        "trade": 2,
        "death": 1,
    }


def test_repeats_of_a_first_counted_component_pay_nothing():
    events = [
        ev("area_entered", area="yard", first=False),
        ev("object_crafted", object="plank"),
        ev("npc_defeated", type="rat", first=False),
        ev("object_sold", object="stick", first=False),
    ]
    assert breakdown(events, "player").to_dict() == dict.fromkeys(COMPONENTS, 0)


def test_only_the_agent_s_own_events_count():
    events = [
        ev("quest_stage_completed", "rival"),
        ev("area_entered", "rival", first=True),
        ev("agent_died", None),
        ev("object_acquired", object="coin", first=True),
        ev("talked_to", npc="x"),
    ]
    assert breakdown(events, "player").to_dict() == dict.fromkeys(COMPONENTS, 0)
    assert breakdown(events, "rival").to_dict() == {**dict.fromkeys(COMPONENTS, 0), "quest": 1, "exploration": 1}


def test_main_supplementary_and_weighted():
    r = RewardBreakdown(quest=2, side_quest=1, exploration=3, craft=4, defeat=5, trade=6, death=7)
    assert r.main == 2
    assert r.supplementary == 1 + 3 + 4 + 5  # trade and death are not in it (paper §3.4)
    assert SUPPLEMENTARY == ("side_quest", "exploration", "craft", "defeat")
    assert r.weighted({"quest": 1.0}) == 2.0
    assert r.weighted({"quest": 1.0, "exploration": 0.5, "death": -2.0}) == pytest.approx(2 + 1.5 - 14)
    assert r.weighted({}) == 0.0 and isinstance(r.weighted({"quest": 1}), float)


def test_weights_name_known_components():
    assert check_weights({"quest": 1, "death": -1}) == {"quest": 1.0, "death": -1.0}
    assert all(isinstance(v, float) for v in check_weights({"trade": 2}).values())
    with pytest.raises(ValueError, match=r"unknown reward component\(s\) \['gold', 'xp'\]; known: quest, side_quest"):
        check_weights({"quest": 1, "xp": 1, "gold": 2})
