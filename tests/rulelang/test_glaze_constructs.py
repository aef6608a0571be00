"""What Mirror Salt's ``salt_glaze`` needed on top of the ``held`` scope (docs/game-format.md, "Mirror Salt's
constructs"): ``stat`` of a held thing's type (``of``), a held rule's ``let_go``, step-rule ``params`` that
``world.json`` sets and ``$param.<name>`` reads in ``in_area``, and ``{wield.<slot>}``. Shown working on the
tiny game, refused naming file and field when misused, and in the JSON Schema."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kit import Harness

from odyssey_env.engine import Engine
from odyssey_env.game import GameError
from odyssey_env.rulelang.runtime import data

from .conftest import tiny_game as _game
from .test_language import step

GLAZE_VAR = {"name": "glaze", "kind": "counter", "scope": "held", "max": 3}


def _glaze(h: Harness) -> dict[str, int]:
    return data(h.engine)["vars"].get("glaze", {})


def _harness(game: Any) -> Harness:
    h = Harness(Engine(game, 0))
    h.clear()
    return h


# ============================================================================ stat of an object type
EDGED = {
    "vars": [GLAZE_VAR],
    "step_rules": [
        step(
            "edge",
            scope="held",
            when={"stat": "attack", "of": "$object", "at_least": 4},
            effects=[{"add": "glaze", "of": "$object"}, {"emit": "edged", "data": {"handle": "$object"}}],
        )
    ],
}


def test_a_stat_of_the_held_thing_is_its_type_s(rh):
    h = rh(EDGED)
    h.hold("stick")  # no attack
    h.hold("torch")  # attack 3: below 4
    h.ok("wait")
    assert h.events("edged") == [] and _glaze(h) == {}
    h.agent.hands.pop("stick")
    h.hold("club")  # attack 8
    h.ok("wait")
    assert h.events("edged") == [{"handle": "club"}] and _glaze(h) == {f"{h.agent.id}/club": 1}


def test_a_stat_of_an_object_in_an_effect_s_if_is_asked_the_same_way(rh):
    rules = {
        "step_rules": [
            step(
                "edge",
                scope="held",
                effects=[
                    {
                        "if": {"stat": "attack", "of": "$object", "below": 4},
                        "then": [{"emit": "blunt", "data": {"handle": "$object"}}],
                    }
                ],
            )
        ]
    }
    h = rh(rules)
    h.hold("club")
    h.hold("torch")
    h.ok("wait")
    assert h.events("blunt") == [{"handle": "torch"}]


# ============================================================================ let_go
LET_GO = {
    "vars": [GLAZE_VAR, {"name": "sun", "kind": "counter", "scope": "held", "max": 9}],
    "step_rules": [
        step(
            "glazing",
            scope="held",
            effects=[{"add": "sun", "of": "$object"}, {"add": "glaze", "of": "$object"}],
            let_go=[
                {
                    "if": {"counter": "glaze", "of": "$object", "at_least": 2},
                    "then": [{"say": "The glaze flakes off {object} ({var.glaze.object} layers)."}],
                    "else": [{"emit": "let_go", "data": {"handle": "$object", "sun": "{var.sun.object}"}}],
                }
            ],
        )
    ],
}


def test_let_go_runs_for_what_left_the_hands_with_its_values_then_forgets_them(rh):
    h = rh(LET_GO)
    h.hold("club")
    h.hold("stick")
    h.wait(2)
    me = h.agent.id
    assert _glaze(h) == {f"{me}/club": 2, f"{me}/stick": 2}
    h.ok("drop club")  # the step the club leaves my hands: let go of in that step's rules
    assert "The glaze flakes off club (2 layers)." in h.feedback  # its values still read, once
    assert _glaze(h) == {f"{me}/stick": 3}  # forgotten, each variable of it
    assert f"{me}/club" not in data(h.engine)["vars"]["sun"]
    h.ok("wait")
    assert "flakes" not in h.feedback  # let go of once
    h.hold("club")
    h.ok("wait")
    assert _glaze(h)[f"{me}/club"] == 1  # held again: a fresh start


def test_let_go_reads_values_kept_in_any_held_variable_and_runs_even_with_empty_hands(rh):
    h = rh(LET_GO)
    h.hold("club")
    h.ok("wait")
    h.agent.hands.clear()
    h.ok("wait")
    assert h.events("let_go") == [{"handle": "club", "sun": 1}]
    assert data(h.engine)["vars"]["sun"] == {} and _glaze(h) == {}


def test_let_go_is_per_agent_and_leaves_the_tutorial_alone(rh):
    h = rh(LET_GO)
    h.hold("club")
    h.ok("wait")
    h.agent.in_tutorial = True
    h.agent.hands.clear()
    h.ok("wait")
    assert h.events("let_go") == [] and _glaze(h) == {f"{h.agent.id}/club": 1}  # out of its scope, untouched


# ============================================================================ params and $param in in_area
SHADE = {
    "step_rules": [
        step(
            "shade",
            scope="agent",
            params={"shaded": ["shed"], "strength": 2},
            effects=[
                {
                    "if": {"in_area": ["vault", "$param.shaded"]},
                    "then": [{"emit": "shade", "data": {"area": "{here}"}}],
                    "else": [{"emit": "sun", "data": {"area": "{here}"}}],
                }
            ],
        )
    ]
}


def test_a_rule_s_params_are_read_where_it_says_and_set_by_world_json(tmp_path):
    h = _harness(_game(tmp_path, SHADE))
    assert h.game.rules.step_rule("shade").settings.shaded == ("shed",)
    h.goto("shed")
    h.ok("wait")
    assert h.events("shade") == [{"area": "shed"}]
    h.goto("yard")
    h.ok("wait")
    assert h.events("sun") == [{"area": "yard"}]
    other = _harness(_game(tmp_path, SHADE, {"shade": {"shaded": ["yard", "camp"]}}, name="g2"))
    rule = other.game.rules.step_rule("shade")
    assert rule.settings.shaded == ("yard", "camp") and rule.settings.strength == 2
    for area, kind in (("yard", "shade"), ("camp", "shade"), ("shed", "sun"), ("vault", "shade")):
        other.goto(area)
        other.ok("wait")
        assert other.events(kind) == [{"area": area}], area


@pytest.mark.parametrize(
    ("params", "rule_params", "where", "says"),
    [
        (None, {"shaded": ["shack"]}, "rules.json: step_rules[0].effects[0].if.in_area[1]", "unknown area 'shack'"),
        ({"shade": {"shaded": ["shack"]}}, None, "rules.json: step_rules[0].effects[0].if.in_area[1]", "'shack'"),
        ({"shade": {"colour": 1}}, None, "world.json: game.params.shade.colour", "has no parameter 'colour'"),
        ({"shade": {"shaded": 3}}, None, "world.json: game.params.shade.shaded", "kind of its default"),
        (None, {"shaded": {"a": 1}}, "rules.json: step_rules[0].params.shaded", "a list of at most"),
        (None, {"shade": ["shed"]}, "rules.json: step_rules[0].effects[0].if.in_area[1]", "no such parameter"),
        (None, {"shaded": 3}, "rules.json: step_rules[0].effects[0].if.in_area[1]", "not an area or a list"),
    ],
)
def test_params_are_refused_naming_file_and_field(tmp_path, params, rule_params, where, says):
    rules = json.loads(json.dumps(SHADE))
    if rule_params is not None:
        rules["step_rules"][0]["params"] = rule_params
    with pytest.raises(GameError) as err:
        _game(tmp_path, rules, params)
    lines = str(err.value).splitlines()
    assert any(line.startswith(where) and says in line for line in lines), lines


def test_a_rule_without_params_still_takes_none_from_world_json(tmp_path):
    rules = {"step_rules": [step("plain", effects=[{"say": "tick"}])]}
    with pytest.raises(GameError) as err:
        _game(tmp_path, rules, {"plain": {"x": 1}})
    assert "takes no parameters" in str(err.value)


# ============================================================================ {wield.<slot>}
BLUNTING = {  # docs/game-format.md's example
    "vars": [GLAZE_VAR],
    "step_rules": [
        {
            "name": "blunting",
            "description": "What I hold in the sun blunts, a unit a step.",
            "scope": "held",
            "after": ["attack_update"],
            "effects": [
                {
                    "if": {"counter": "glaze", "of": "$object", "below": 3},
                    "then": [
                        {"add": "glaze", "of": "$object"},
                        {"say": "Salt crusts {object} ({var.glaze.object} of 3): {wield.object} less."},
                    ],
                }
            ],
            "wield": {"counter": "glaze", "less": 2, "floor": 0.5},
        }
    ],
}


def test_wield_of_a_slot_tells_what_the_wield_takes_from_it(rh):
    h = rh(BLUNTING)
    base = h.agent.base_attack
    h.hold("club")  # attack 8
    h.hold("stick")  # no attack: nothing to take
    told = h.wait(3)
    assert "Salt crusts club (1 of 3): 2 less." in told and "Salt crusts club (2 of 3): 4 less." in told
    assert "Salt crusts club (3 of 3): 4 less." in told  # 3 x 2 = 6, but never below half of 8
    assert "Salt crusts stick (1 of 3): 0 less." in told
    assert h.agent.attack == base + 4


def test_wield_of_a_slot_needs_a_wield_and_a_held_thing(rules_game):
    no_wield = {**BLUNTING, "step_rules": [{**BLUNTING["step_rules"][0], "wield": None}]}
    del no_wield["step_rules"][0]["wield"]
    for rules, says in ((no_wield, "this rule has none"),):
        with pytest.raises(GameError) as err:
            rules_game(rules)
        assert "rules.json: step_rules[0].effects[0].then[1].say" in str(err.value) and says in str(err.value)


@pytest.mark.parametrize(
    ("rules", "where", "says"),
    [
        (
            {"step_rules": [step(scope="held", when={"stat": "hp", "of": "$object", "at_least": 1})]},
            "step_rules[0].when.stat",
            "an attack and a defense",
        ),
        (
            {"step_rules": [step(scope="held", when={"stat": "attack", "of": "club", "at_least": 1})]},
            "step_rules[0].when.of",
            "by reference",
        ),
        (
            {"step_rules": [step(scope="area", when={"stat": "attack", "of": "$object", "at_least": 1})]},
            "step_rules[0].when.of",
            "names nothing",
        ),
        (
            {"vars": [GLAZE_VAR], "step_rules": [step(scope="agent", let_go=[{"say": "x"}])]},
            "step_rules[0].let_go",
            "scope must be 'held'",
        ),
        (
            {"step_rules": [step(scope="held", let_go=[{"say": "x"}])]},
            "step_rules[0].let_go",
            "nothing to let go of",
        ),
    ],
)
def test_the_glaze_constructs_are_refused_when_misused(rules_game, rules, where, says):
    with pytest.raises(GameError) as err:
        rules_game(rules)
    lines = str(err.value).splitlines()
    assert any(line.startswith(f"rules.json: {where}") and says in line for line in lines), lines


def test_the_schema_knows_the_glaze_constructs():
    from odyssey_env.rulelang import json_schema

    defs = json_schema()["$defs"]
    assert {"let_go", "params"} <= set(defs["StepSpec"]["properties"])
    assert "of" in defs["StatIs"]["properties"]
