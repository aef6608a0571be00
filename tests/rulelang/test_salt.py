"""The constructs the rule language gained to carry Mirror Salt's mechanics (docs/game-format.md, "Rules as
data"): the ``recipe`` scope with ``can_craft`` and ``{stations}`` (forge_alert), and ``tutorial`` on a step
rule. Each is shown working on the tiny game, refused naming file and field when misused, and deterministic."""

from __future__ import annotations

import pytest

from odyssey_env.game import GameError
from odyssey_env.quests import hints

from .test_language import one_verb, step

# ============================================================================ recipe scope, can_craft, {stations}
ALERT = {
    "step_rules": [
        step(
            "alert",
            scope="recipe",
            after=["craft_hints"],
            before=["experience"],
            trigger={"becomes": {"can_craft": "$recipe"}},
            effects=[
                {"say": "By the {stations}: {recipe}."},
                {"emit": "ready", "data": {"area": "{here}", "objects": ["{recipe}"]}},
            ],
        )
    ]
}


def test_a_recipe_rule_fires_once_per_recipe_that_becomes_craftable_here(rh):
    h = rh(ALERT)  # in the camp, emptied: no workbench yet
    h.hold("stick", 2)
    h.ok("wait")
    assert not h.events("ready")  # plank and club want the workbench
    h.put("workbench")
    h.ok("wait")
    assert h.events("ready") == [{"area": "camp", "objects": ["plank"]}, {"area": "camp", "objects": ["club"]}]
    assert "By the workbench: plank." in h.feedback and "By the workbench: club." in h.feedback
    h.ok("wait")
    assert not h.events("ready")  # told once while it stays craftable
    h.hold("resin")
    h.ok("wait")
    # only what became craftable, in file order; a recipe that needs no station is craftable anywhere
    assert [e["objects"] for e in h.events("ready")] == [["torch"], ["charm"], ["big_bag"]]


def test_a_recipe_rule_fires_again_after_the_ingredients_or_the_area_change(rh):
    h = rh(ALERT)
    h.put("workbench")
    h.hold("stick")
    h.ok("wait")
    assert h.events("ready") == [{"area": "camp", "objects": ["plank"]}]
    h.agent.hands.pop("stick")
    h.ok("wait")
    assert not h.events("ready")
    h.hold("stick")
    h.ok("wait")
    assert h.events("ready") == [{"area": "camp", "objects": ["plank"]}]
    h.put("workbench", area="yard")
    h.ok("enter yard")  # another area: craftable there anew
    assert h.events("ready") == [{"area": "yard", "objects": ["plank"]}]
    assert "By the furnace and workbench: plank." in h.feedback  # every station lying there, in order


def test_a_recipe_rule_reads_ingredients_in_bags_and_narrows_to_its_types(rh):
    rules = {"step_rules": [{**ALERT["step_rules"][0], "types": ["club"]}]}
    h = rh(rules)
    h.put("workbench")
    bag = h.wear("small_bag")
    h.stash(bag, "stick", 2)
    h.ok("wait")
    assert h.events("ready") == [{"area": "camp", "objects": ["club"]}]  # no plank: not among its types


def test_can_craft_as_a_verb_s_precondition_and_what_the_oracle_needs(rh):
    rules = one_verb(
        "forge",
        requires=[{"check": {"can_craft": "iron_bar"}, "refuse": "Not here, not yet."}],
        effects=[{"say": "Ready."}],
    )
    h = rh(rules)
    rule = h.engine.rules.actions["forge"]
    assert set(rule.depends_on or ()) >= {"hands", "containers", "ground", "place"}
    h.fails("forge", "Not here, not yet.")
    assert h.listed("forge") == []
    assert rule.needs(h.engine, h.agent, {}) == hints.has("iron_ore", 2)
    h.hold("iron_ore", 2)
    assert rule.needs(h.engine, h.agent, {}) == hints.in_area("yard")  # the furnace stands in the yard
    h.ok("enter yard")
    assert h.listed("forge") == ["forge"] and h.ok("forge") == "Ready."


def test_a_rule_reaches_the_tutorial_only_when_it_says_so(rh):
    def tutored(rules):
        h = rh(rules)
        h.agent.in_tutorial = True
        h.put("workbench")
        h.hold("stick")
        h.ok("wait")
        return h.events("ready")

    assert tutored(ALERT) == []
    assert tutored({"step_rules": [{**ALERT["step_rules"][0], "tutorial": True}]}) == [
        {"area": "camp", "objects": ["plank"]}
    ]


@pytest.mark.parametrize(
    ("rules", "where", "says"),
    [
        ({"step_rules": [step(scope="recipe", types=["stick"])]}, "step_rules[0].types[0]", "has no recipe"),
        ({"step_rules": [step(scope="recipe", types=["stik"])]}, "step_rules[0].types[0]", "unknown object"),
        ({"step_rules": [step(scope="area", tutorial=True)]}, "step_rules[0].tutorial", "scope agent or recipe"),
        (
            one_verb(requires=[{"check": {"can_craft": "stick"}, "refuse": "no"}]),
            "verbs[0].requires[0].check.can_craft",
            "has no recipe",
        ),
        (
            one_verb(requires=[{"check": {"can_craft": "$recipe"}, "refuse": "no"}]),
            "verbs[0].requires[0].check.can_craft",
            "names nothing",
        ),
        (
            {"step_rules": [step(scope="area", when={"can_craft": "plank"})]},
            "step_rules[0].when.can_craft",
            "not about an agent",
        ),
        (
            {"step_rules": [step(scope="npc", effects=[{"say": "{recipe}"}])]},
            "step_rules[0].effects[0].say",
            "{recipe}",
        ),
        (
            one_verb(slots=[{"name": "recipe", "domain": "held"}]),
            "verbs[0].slots[0].name",
            "is taken",
        ),
    ],
)
def test_the_recipe_constructs_are_refused_when_misused(rules_game, rules, where, says):
    with pytest.raises(GameError) as err:
        rules_game(rules)
    lines = str(err.value).splitlines()
    assert any(line.startswith(f"rules.json: {where}:") and says in line for line in lines), lines


def test_recipe_rules_do_not_depend_on_hash_seeds(rules_game):
    from kit import subprocess_digest

    rules = {"step_rules": [{**ALERT["step_rules"][0], "tutorial": True}]}
    game = rules_game(rules)
    digests = {subprocess_digest(game.path, 3, 60, hash_seed) for hash_seed in ("0", "random")}
    assert len(digests) == 1


def test_the_schema_knows_the_recipe_constructs():
    from odyssey_env.rulelang import json_schema

    out = json_schema()
    defs = out["$defs"]
    assert "recipe" in defs["StepSpec"]["properties"]["scope"]["enum"]
    assert defs["StepSpec"]["properties"]["tutorial"]["type"] == "boolean"
    assert {"$ref": "#/$defs/CanCraft"} in defs["Condition"]["anyOf"]
