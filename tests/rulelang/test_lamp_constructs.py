"""What Lazaret's ``lamp_fuel`` needed of the rule language (docs/game-format.md, "Lazaret's light and dark"):
``first`` (the first carried light with fuel left), ``some`` over the agents of an area and over what an agent
carries, ``pick`` (one idle enemy drawn from the episode's RNG), ``npc_strikes`` (its blow out of turn), a step
rule's ``veil`` (what the observation hides) and table-valued rule ``params``. Shown working on the tiny game,
refused naming file and field when misused, and in the JSON Schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kit import Harness, Scripted

from odyssey_env.engine import Engine
from odyssey_env.game import GameError
from odyssey_env.observation import render as observe
from odyssey_env.rulelang.runtime import data

from .conftest import tiny_game as _game
from .test_language import step

FUEL = {"name": "fuel", "kind": "counter", "scope": "object", "max": 40}
LIT = {"counter": "fuel", "of": "$each", "at_least": 1}
#: Someone standing here (me too) carries a light with fuel left.
SOMEONE_LIT = {"some": "agent", "check": {"some": "carried", "types": ["$param.lights"], "check": LIT}}


def _harness(game: Any, seed: int = 0) -> Harness:
    h = Harness(Engine(game, seed))
    h.clear()
    return h


def _fuel(h: Harness) -> dict[str, int]:
    return data(h.engine)["vars"].setdefault("fuel", {})


def _dark(**extra: Any) -> dict[str, Any]:
    """A light that burns in the yard (a dark area by parameter), a line seeing by another's light, and a lurk."""
    return {
        "vars": [FUEL],
        "step_rules": [
            step(
                "dark",
                params={"dark_areas": ["yard"], "lights": {"torch": {"fuel": "resin"}}, "lurk": 0.5, "strength": 1.0},
                when={"in_area": ["$param.dark_areas"]},
                effects=[
                    {
                        "first": "carried",
                        "types": ["$param.lights"],
                        "check": LIT,
                        "do": [{"add": "fuel", "value": -1, "of": "$each"}, {"say": "My {each} burns."}],
                        "else": [
                            {
                                "if": SOMEONE_LIT,
                                "then": [{"say": "I see by another's light."}],
                                "else": [
                                    {
                                        "pick": "npc",
                                        "hostile": True,
                                        "idle": True,
                                        "chance": "$param.lurk",
                                        "do": [
                                            {
                                                "npc_strikes": "$each",
                                                "times": "$param.strength",
                                                "then": [
                                                    {"say": "{each} hits me for {damage}."},
                                                    {"emit": "lurked", "data": {"npc": "$each", "damage": "$damage"}},
                                                ],
                                            }
                                        ],
                                    }
                                ],
                            }
                        ],
                    }
                ],
                veil={
                    "when": {"all_of": [{"in_area": ["$param.dark_areas"]}, {"none_of": [SOMEONE_LIT]}]},
                    "say": "dark",
                },
                **extra,
            )
        ],
    }


# ============================================================================ first
def test_first_burns_a_light_carried_in_a_bag_until_it_is_empty(tmp_path):
    h = _harness(_game(tmp_path, _dark()))
    h.goto("yard")
    h.clear_everywhere(npcs=lambda npc: True)
    bag = h.hold_one("small_bag")
    h.stash(bag, "torch")
    _fuel(h)["torch"] = 2  # the tiny torch is a stack: its counter is its type's
    text = h.ok("wait")
    assert "My torch burns." in text and _fuel(h) == {"torch": 1}  # the one in the bag: none in hand
    h.ok("wait")
    text = h.ok("wait")  # empty now: else, and no one to pick (nothing drawn)
    assert "burns" not in text and _fuel(h) == {}


def test_first_without_a_match_runs_else_and_binds_no_each(tmp_path):
    rules = {
        "step_rules": [
            step(
                "look",
                effects=[
                    {
                        "first": "object",
                        "types": ["quill"],
                        "do": [{"say": "First is {each}."}],
                        "else": [{"say": "Nothing of the kind."}],
                    }
                ],
            )
        ]
    }
    h = _harness(_game(tmp_path, rules))
    assert "Nothing of the kind." in h.ok("wait")
    h.put("quill")
    assert "First is quill." in h.ok("wait")


# ============================================================================ some agent / carried
def test_another_agent_s_light_lets_me_see(tmp_path):
    engine = Engine(_game(tmp_path, _dark()), 0, agents=("a", "b"))
    me, other = engine.state.agents["a"], engine.state.agents["b"]
    for agent in (me, other):
        agent.area, agent.in_tutorial = "yard", False
        agent.hands.clear()
    engine.state.areas["yard"].npcs.clear()
    assert "(dark)" in observe(engine, "a")
    other.hands["torch"] = 1
    data(engine)["vars"]["fuel"] = {"torch": 5}
    assert "(dark)" not in observe(engine, "a") and "(dark)" not in observe(engine, "b")
    engine.step({"a": "wait", "b": "wait"})
    assert "I see by another's light." in observe(engine, "a") and "My torch burns." in observe(engine, "b")


def test_some_carried_reads_hands_and_bags_and_gates_the_veil(tmp_path):
    h = _harness(_game(tmp_path, _dark()))
    h.goto("yard")
    h.clear_everywhere()
    text = observe(h.engine, h.agent.id)
    assert "I see no objects near me (dark)." in text and "I see no one nearby (dark)." in text
    bag = h.hold_one("small_bag")
    h.stash(bag, "torch")
    assert "(dark)" in observe(h.engine, h.agent.id)  # a light without fuel shows nothing
    _fuel(h)["torch"] = 3
    assert "(dark)" not in observe(h.engine, h.agent.id)
    h.goto("camp", clear=False)
    _fuel(h).clear()
    assert "(dark)" not in observe(h.engine, h.agent.id)  # not a dark area


def test_a_rule_without_a_veil_hides_nothing(tmp_path):
    game = _game(tmp_path, {"step_rules": [step("tick", effects=[{"say": "tick"}])]})
    assert game.rules.veils == ()
    assert [r.name for r in _game(tmp_path, _dark(), name="d").rules.veils] == ["dark"]


# ============================================================================ pick and npc_strikes
def test_pick_draws_only_with_someone_to_pick_then_strikes(tmp_path):
    h = _harness(_game(tmp_path, _dark()))
    h.goto("yard")
    h.clear_everywhere()
    h.engine.rng = Scripted((0.1,))
    h.ok("wait")
    assert h.engine.rng.values == [0.1]  # no one to pick: nothing drawn
    h.npc("mira")  # not hostile: never picked
    wolf = h.npc("wolf")
    wolf.engaged = "someone else"  # not idle
    h.ok("wait")
    assert h.engine.rng.values == [0.1] and h.agent.hp == h.agent.max_hp
    rat = h.npc("rat")
    h.engine.rng = Scripted((0.6,))  # at or above the chance 0.5: no one
    h.ok("wait")
    assert h.agent.combat is None
    h.engine.rng = Scripted((0.4,))
    hp = h.agent.hp
    text = h.ok("wait")
    damage = max(1, rat.attack - h.agent.defense)
    assert f"{rat.handle} hits me for {damage}." in text
    assert h.events("lurked") == [{"npc": rat.handle, "damage": damage}]
    assert rat.engaged == h.agent.id and h.agent.combat == rat.handle and h.agent.hp <= hp - damage + 1


def test_npc_strikes_by_times_the_world_s_modifier_and_defense(tmp_path):
    rules = {
        "step_rules": [
            step(
                "blow",
                params={"strength": 0.5},
                effects=[
                    {
                        "first": "npc",
                        "types": ["wolf"],
                        "do": [{"npc_strikes": "$each", "times": "$param.strength", "then": [{"say": "ow {damage}"}]}],
                    }
                ],
            )
        ]
    }
    game = _game(tmp_path, rules)
    rule = game.rules.step_rule("blow")
    h = _harness(game)
    wolf = h.npc("wolf")
    wolf.attack = 11
    h.agent.defense = 2
    for modifier, damage in {None: 6 - 2, 2.0: 11 - 2, 0.1: 1}.items():
        if modifier is None:
            h.state.modifiers.pop("enemy_attack", None)
        else:
            h.state.modifiers["enemy_attack"] = modifier
        h.agent.hp, h.agent.combat, wolf.engaged = 100, None, None
        rule.apply(h.engine)
        assert h.agent.hp == 100 - damage and wolf.engaged == h.agent.id and h.agent.combat == wolf.handle
    wolf.area = "vault"  # elsewhere: the blow falls on nothing
    h.agent.hp = 100
    rule.apply(h.engine)
    assert h.agent.hp == 100


# ============================================================================ table params
def test_a_table_param_is_set_by_world_json_and_names_types(tmp_path):
    game = _game(tmp_path, _dark(), {"dark": {"lights": {"club": {"fuel": "stick"}}}})
    settings = game.rules.step_rule("dark").settings
    assert settings.lights == {"club": {"fuel": "stick"}}
    h = _harness(game)
    h.goto("yard")
    h.clear_everywhere()
    h.hold("club")
    _fuel(h)["club"] = 2
    assert "My club burns." in h.ok("wait")  # the first's types are the table's rows as this game sets them


def test_param_templates_read_a_value_and_a_bound_thing_s_row(tmp_path):
    rules = _dark()
    rules["step_rules"][0]["effects"][0]["do"][1] = {
        "say": "My {each} burns its {param.lights.each.fuel} in {param.dark_areas} ({param.lurk})."
    }
    h = _harness(_game(tmp_path, rules, {"dark": {"lights": {"torch": {"fuel": "resin"}, "club": {"fuel": "stick"}}}}))
    h.goto("yard")
    h.clear_everywhere()
    h.hold("club")
    _fuel(h)["club"] = 2
    assert "My club burns its stick in yard (0.5)." in h.ok("wait")  # the row of the thing's own type


@pytest.mark.parametrize(
    ("say", "says"),
    [
        ("{param.nope}", "declares no parameter 'nope'"),
        ("{param.lights}", "is a table"),
        ("{param.lurk.each.fuel}", "not a table"),
        ("{param.lights.here.fuel}", "name a thing or NPC bound here"),
        ("{param.lights.each.oil}", "no field 'oil'"),
    ],
)
def test_a_param_template_that_reads_nothing_is_refused(tmp_path, say, says):
    rules = _dark()
    rules["step_rules"][0]["effects"][0]["do"][1] = {"say": say}
    with pytest.raises(GameError) as err:
        _game(tmp_path, rules)
    assert "rules.json: step_rules[0].effects[0].do[1].say" in str(err.value) and says in str(err.value)


def test_a_verb_has_no_params_to_read(tmp_path):
    rules = {"verbs": [{"verb": "poke", "description": "poke.", "effects": [{"say": "{param.x}"}]}]}
    with pytest.raises(GameError, match=r"verbs\[0\].effects\[0\].say: \{param.x\}: the rule declares no"):
        _game(tmp_path, rules)


@pytest.mark.parametrize(
    ("params", "field", "says"),
    [
        ({"dark": {"lights": {"club": {"oil": "stick"}}}}, "game.params.dark.lights", "fields"),
        ({"dark": {"lights": {"club": {"fuel": 3}}}}, "game.params.dark.lights", "kind"),
        ({"dark": {"lights": ["club"]}}, "game.params.dark.lights", "kind of its default"),
        ({"dark": {"lights": {"quill_x": {"fuel": "stick"}}}}, "step_rules[0].effects[0].types", "unknown object"),
    ],
)
def test_a_table_param_that_does_not_fit_is_refused_naming_the_field(tmp_path, params, field, says):
    with pytest.raises(GameError) as err:
        _game(tmp_path, _dark(), params)
    assert field in str(err.value) and says in str(err.value)


def test_a_table_whose_rows_differ_is_refused(tmp_path):
    rules = {"step_rules": [step("t", params={"rows": {"a": {"x": 1}, "b": {"y": 1}}}, effects=[{"say": "x"}])]}
    with pytest.raises(GameError, match=r"rules.json: step_rules\[0\].params.rows: a table's rows have the same"):
        _game(tmp_path, rules)


# ============================================================================ refusals naming file and field
def _refused(tmp_path: Path, rule: dict[str, Any], field: str, says: str) -> None:
    with pytest.raises(GameError) as err:
        _game(tmp_path, {"vars": [FUEL], "step_rules": [rule]})
    text = str(err.value)
    assert f"rules.json: {field}" in text and says in text, text


@pytest.mark.parametrize(
    ("rule", "field", "says"),
    [
        (
            step("t", scope="area", effects=[{"first": "carried", "do": [{"say": "x"}]}]),
            "step_rules[0].effects[0].first",
            "not about an agent",
        ),
        (
            step("t", effects=[{"first": "carried", "area": "yard", "do": [{"say": "x"}]}]),
            "step_rules[0].effects[0].area",
            "give no area",
        ),
        (step("t", effects=[{"first": "object"}]), "step_rules[0].effects[0]", "give do, else or both"),
        (
            step("t", effects=[{"pick": "npc", "chance": 1.5, "do": [{"say": "x"}]}]),
            "step_rules[0].effects[0].chance",
            "between 0 and 1",
        ),
        (
            step("t", effects=[{"pick": "npc", "chance": "$param.nope", "do": [{"say": "x"}]}]),
            "step_rules[0].effects[0].chance",
            "parameter the rule declares",
        ),
        (
            step("t", params={"p": "text"}, effects=[{"pick": "npc", "chance": "$param.p", "do": [{"say": "x"}]}]),
            "step_rules[0].effects[0].chance",
            "not a number",
        ),
        (
            step("t", scope="area", effects=[{"pick": "npc", "do": [{"npc_strikes": "$each"}]}]),
            "step_rules[0].effects[0].do[0].npc_strikes",
            "agent",
        ),
        (
            step("t", effects=[{"pick": "npc", "do": [{"npc_strikes": "$each", "times": 11}]}]),
            "step_rules[0].effects[0].do[0].times",
            "between 0 and 10",
        ),
        (step("t", effects=[{"npc_strikes": "$here"}]), "step_rules[0].effects[0].npc_strikes", "not a npc"),
        (
            step("t", effects=[{"if": {"some": "agent", "types": ["wolf"], "check": {"in_combat": False}}}]),
            "step_rules[0].effects[0].if.types",
            "an agent has no type",
        ),
        (
            step(
                "t",
                effects=[{"if": {"some": "agent", "check": {"some": "npc", "check": {"is_hostile": "$each"}}}}],
            ),
            "step_rules[0].effects[0].if.check.some",
            "could multiply without end",
        ),
        (
            step("t", scope="area", effects=[{"if": {"some": "carried", "check": LIT}, "then": [{"say": "x"}]}]),
            "step_rules[0].effects[0].if.some",
            "not about an agent",
        ),
        (
            step("t", effects=[{"say": "x"}], veil={"when": {"in_area": ["yard"]}, "say": " "}),
            "step_rules[0].veil.say",
            "say why",
        ),
        (
            step("t", effects=[{"say": "x"}], veil={"when": {"in_area": ["yrad"]}, "say": "dark"}),
            "step_rules[0].veil.when.in_area[0]",
            "unknown area",
        ),
        (
            step("t", effects=[{"first": "carried", "types": ["$param.none"], "do": [{"say": "x"}]}]),
            "step_rules[0].effects[0].types[0]",
            "no such parameter",
        ),
    ],
)
def test_misuse_is_refused_naming_file_and_field(tmp_path, rule, field, says):
    _refused(tmp_path, rule, field, says)


def test_the_json_schema_knows_the_new_constructs():
    from odyssey_env.rulelang import json_schema

    defs = json_schema()["$defs"]
    effects = {alt["$ref"].rsplit("/", 1)[1] for alt in defs["Effect"]["anyOf"]}
    assert {"First", "Pick", "NpcStrikes"} <= effects
    assert set(defs["Some"]["properties"]["some"]["enum"]) >= {"agent", "carried"}
    assert defs["First"]["properties"]["do"]["items"] == {"$ref": "#/$defs/Effect"}
    assert defs["First"]["properties"]["check"]["anyOf"][0] == {"$ref": "#/$defs/Condition"}
    assert defs["NpcStrikes"]["properties"]["then"]["items"] == {"$ref": "#/$defs/Effect"}
    assert defs["Veil"]["properties"]["when"]["anyOf"][0] == {"$ref": "#/$defs/Condition"}
    assert "veil" in defs["StepSpec"]["properties"]
