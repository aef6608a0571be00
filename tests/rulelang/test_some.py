"""The ``some`` condition and a step rule's ``at_start``, which carry Lazaret's quarantine lockdown
(docs/game-format.md, "Rules as data"): "at least one NPC standing or thing lying in an area satisfies a
check", asked with ``$each`` bound, and effects run once per scope item before the first step (what the world
holds from the start has lain there a step already). Misused, each is refused naming file and field."""

from __future__ import annotations

import pytest

from odyssey_env.game import GameError

from .test_language import step, verb

#: Ore that has lain three steps in an area raises that area's alarm, which clears once no old ore lies there;
#: ``seek`` is refused unless an enemy stands here.
OLD_ORE = {
    "vars": [
        {"name": "lain", "kind": "counter", "scope": "object", "max": 99},
        {"name": "alarm", "kind": "flag", "scope": "area"},
    ],
    "step_rules": [
        step(
            "old_ore",
            scope="area",
            effects=[
                {"for_each": "object", "types": ["iron_ore"], "do": [{"add": "lain", "of": "$each"}]},
                {
                    "if": {
                        "some": "object",
                        "types": ["iron_ore"],
                        "check": {"counter": "lain", "of": "$each", "at_least": 3},
                    },
                    "then": [
                        {
                            "if": {"none_of": [{"flag": "alarm"}]},
                            "then": [{"set_flag": "alarm"}, {"emit": "alarm_raised", "data": {"area": "{here}"}}],
                        },
                        {"tell": "Old ore lies in {here}."},
                    ],
                    "else": [{"if": {"flag": "alarm"}, "then": [{"set_flag": "alarm", "value": False}]}],
                },
            ],
        )
    ],
    "verbs": [
        verb(
            "seek",
            requires=[{"check": {"some": "npc", "check": {"is_hostile": "$each"}}, "refuse": "No foe stands here."}],
            effects=[{"say": "I find a foe."}],
        )
    ],
}


def _alarm(h, area):
    return h.engine.state.rule_data["rulelang"]["vars"].get("alarm", {}).get(area, False)


def test_some_asks_each_lying_thing_with_each_bound(rh):
    h = rh(OLD_ORE)
    h.clear_everywhere()  # a stack's counter is its type's (one key): no ore lying elsewhere to count it too
    here = h.agent.area
    h.put("quill")  # not of the types asked about: never counted
    h.ok("wait")
    (ore,) = h.put("iron_ore")
    h.ok("wait")
    h.ok("wait")
    assert not _alarm(h, here)
    text = h.ok("wait")  # its third step lying here
    assert _alarm(h, here) and "Old ore lies in" in text
    assert h.events("alarm_raised") == [{"area": here}]
    h.engine.state.areas[here].objects.pop(ore)
    h.ok("wait")
    assert not _alarm(h, here)


def test_some_over_npcs_gates_a_verb_and_its_listing(rh):
    h = rh(OLD_ORE)
    h.fails("seek", "No foe stands here.")
    assert h.listed("seek") == []
    h.npc("mira")  # peaceful: not a foe
    h.fails("seek", "No foe stands here.")
    h.npc("rat")
    assert h.listed("seek") == ["seek"]
    assert "I find a foe." in h.ok("seek")
    assert h.engine.rules.actions["seek"].depends_on == ("place", "npcs")


@pytest.mark.parametrize(
    ("condition", "where", "says"),
    [
        ({"some": "thing", "check": {"in_combat": False}}, "step_rules[0].when.some", "thing"),
        (
            {"some": "object", "types": ["unobtanium"], "check": {"in_area": ["$here"]}},
            "step_rules[0].when.types[0]",
            "unknown object",
        ),
        (
            {"some": "npc", "types": ["iron_ore"], "check": {"in_area": ["$here"]}},
            "step_rules[0].when.types[0]",
            "unknown NPC type",
        ),
        ({"some": "object", "check": {"has": "rop"}}, "step_rules[0].when.check.has", "rop"),
        (
            {"some": "object", "check": {"some": "npc", "check": {"engaged": "$each"}}},
            "step_rules[0].when.check.some",
            "multiply without end",
        ),
        ({"some": "object", "area": "nowhere", "check": {"engaged": "$each"}}, "step_rules[0].when.area", "nowhere"),
    ],
)
def test_a_bad_some_is_refused_naming_its_field(rules_game, condition, where, says):
    with pytest.raises(GameError) as err:
        rules_game({"step_rules": [step("s", scope="area", when=condition, effects=[{"tell": "x"}])]})
    lines = str(err.value).splitlines()
    assert any(line.startswith(f"rules.json: {where}:") and says in line for line in lines), lines


def test_the_schema_names_some_as_a_condition():
    from odyssey_env.rulelang.spec import json_schema

    defs = json_schema()["$defs"]
    assert {"$ref": "#/$defs/Some"} in defs["Condition"]["anyOf"]
    assert defs["Some"]["required"] == ["some", "check"]
    assert defs["Some"]["properties"]["check"] == {"anyOf": [{"$ref": "#/$defs/Condition"}, {"type": "null"}]}


def test_at_start_runs_once_per_scope_item_before_the_first_step(rules_game):
    from kit import Harness

    from odyssey_env.engine import Engine

    rules = {
        "vars": [{"name": "seen", "kind": "counter", "scope": "area", "max": 99}],
        "step_rules": [
            step(
                "count",
                scope="area",
                trigger={"every": 1000},  # at_start runs whatever the trigger says
                at_start=[{"add": "seen", "value": 5}],
                effects=[{"add": "seen"}],
            )
        ],
    }
    h = Harness(Engine(rules_game(rules), 0))
    seen = h.engine.state.rule_data["rulelang"]["vars"]["seen"]
    assert seen and set(seen.values()) == {5}  # every area of the world once, before any step
    h.ok("wait")
    assert set(seen.values()) == {5}  # the step rule's own trigger has not fired


def test_at_start_with_an_event_trigger_is_refused_naming_its_field(rules_game):
    with pytest.raises(GameError) as err:
        rules_game({"step_rules": [step("s", trigger={"event": "x"}, at_start=[{"say": "hi"}])]})
    lines = str(err.value).splitlines()
    assert any(line.startswith("rules.json: step_rules[0].at_start:") for line in lines), lines
