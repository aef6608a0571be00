"""The constructs the rule language gained to carry Mirror Salt's mechanics (docs/game-format.md, "Rules as
data"): the ``recipe`` scope with ``can_craft`` and ``{stations}`` (forge_alert), and ``tutorial`` on a step
rule. Each is shown working on the tiny game, refused naming file and field when misused, and deterministic."""

from __future__ import annotations

import random

import pytest
from kit import Harness

from odyssey_env.engine import Engine
from odyssey_env.game import GameError
from odyssey_env.quests import hints
from odyssey_env.rulelang.expr import can_craft, craftable
from odyssey_env.rulelang.runtime import Ctx

from .conftest import tiny_game
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


def test_craftable_agrees_with_can_craft_over_random_holdings(tmp_path):
    """``craftable`` (every recipe at once, for a recipe rule whose effects change no holding) answers as
    ``can_craft`` does, recipe by recipe: ingredients in the hands, in a held bag and in the worn pack,
    stations here or not."""
    game = tiny_game(tmp_path, ALERT)
    rng = random.Random(7)
    recipes = [t.name for t in game.recipes]
    for _ in range(200):
        h = Harness(Engine(game, 0))
        h.clear()
        h.agent.hands.clear()
        h.agent.equipment.clear()
        for st in ("workbench", "furnace"):
            if rng.random() < 0.5:
                h.put(st)
        bag = h.hold_one("small_bag") if rng.random() < 0.5 else None
        pack = h.wear("big_bag") if rng.random() < 0.5 else None
        for kind in ("stick", "resin", "iron_ore", "iron_bar", "scrap"):
            for where in ("hands", bag, pack):
                n = rng.choice((0, 0, 1, 2))
                if n and where == "hands":
                    h.hold(kind, n)
                elif n and where is not None:
                    h.stash(where, kind, n)
        ctx = Ctx(h.engine, h.agent, h.agent.area, {})
        assert craftable(h.engine, h.agent, recipes) == [k for k in recipes if can_craft(ctx, k)]


def test_a_recipe_rule_whose_effects_change_holdings_asks_each_recipe_as_it_comes(rh):
    """A recipe rule whose effects change what the agent carries asks each recipe after the last one fired
    (not all of them at once beforehand): one stick makes the plank's alert, which gives a second stick, and
    so the club (two sticks), asked next, is craftable on the same step."""
    rule = {
        **ALERT["step_rules"][0],
        "types": ["plank", "club"],
        "effects": [{"produce": "stick", "cap": 5}, {"emit": "ready", "data": {"objects": ["{recipe}"]}}],
    }
    h = rh({"step_rules": [rule]})
    h.put("workbench")
    h.hold("stick")
    h.ok("wait")
    assert h.events("ready") == [{"objects": ["plank"]}, {"objects": ["club"]}]
    assert h.agent.hands["stick"] + h.state.areas["camp"].objects.get("stick", 0) == 3  # two produced


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

    said = step("said", trigger={"event": "object_dropped"}, effects=[{"emit": "ready", "data": {"area": "{here}"}}])
    for reach, heard in ((False, []), (True, [{"area": "camp"}])):
        h = rh({"step_rules": [{**said, "tutorial": reach}]})
        h.agent.in_tutorial = True
        h.hold("stick")
        h.ok("drop stick")
        assert h.events("ready") == heard  # an event trigger's agent too


@pytest.mark.parametrize(
    ("rules", "where", "says"),
    [
        ({"step_rules": [step(scope="recipe", types=["stick"])]}, "step_rules[0].types[0]", "has no recipe"),
        ({"step_rules": [step(scope="recipe", types=["stik"])]}, "step_rules[0].types[0]", "unknown object"),
        ({"step_rules": [step(scope="area", tutorial=True)]}, "step_rules[0].tutorial", "scope agent, recipe or held"),
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


# ============================================================================ unwatched after, tally, counts
SINK = {
    "vars": [{"name": "sunk", "kind": "tally", "scope": "area", "max": 2}],
    "step_rules": [
        step(
            "sink",
            after=["respawn"],
            before=[],
            trigger={"event": ["object_dropped", "object_discarded"]},
            when={"none_of": [{"is_type": "$event.handle", "categories": ["container"]}]},
            effects=[
                {
                    "after": 3,
                    "unwatched": True,
                    "do": [
                        {"remove": "$event.handle", "count": "$event.amount"},
                        {
                            "if": {"same": ["{removed}", "0"]},
                            "else": [
                                {"tally": "sunk", "item": "$event.handle", "by": "$removed"},
                                {
                                    "emit": "sank",
                                    "data": {"object": "$event.handle", "n": "$removed", "t": "{removed}"},
                                },
                                {"tell": "Gone: {tally.sunk}."},
                            ],
                        },
                    ],
                }
            ],
        )
    ],
}


def sinking(rh):
    h = rh(SINK)
    h.hold("stick", 3)
    return h


def test_an_unwatched_countdown_waits_while_someone_stands_there(rh):
    h = sinking(rh)
    h.ok("drop stick")  # all three
    h.wait(5)
    assert h.area.objects == {"stick": 3}  # watched all along: nothing happens
    h.ok("enter yard")  # the first step nobody stands in the camp
    h.wait(1)
    assert h.state.areas["camp"].objects == {"stick": 3}
    outcome = h.idle(1)
    assert h.state.areas["camp"].objects == {}  # the third step with nobody there
    assert [e.data for e in outcome if e.kind == "sank"] == [{"object": "stick", "n": 3, "t": "3"}]  # typed by $ref


def test_a_countdown_left_unwatched_then_visited_starts_again(rh):
    h = sinking(rh)
    h.ok("drop stick")
    h.ok("enter yard")
    h.ok("wait")
    h.ok("enter camp")  # back before it came due: the count starts again when I leave
    h.ok("enter yard")
    h.wait(1)
    assert h.state.areas["camp"].objects == {"stick": 3}
    h.ok("wait")
    assert h.state.areas["camp"].objects == {}


def test_remove_takes_at_most_what_lies_there_and_says_how_many(rh):
    h = sinking(rh)
    h.ok("drop stick")  # three dropped
    h.area.objects["stick"] = 1  # two taken some way no rule saw
    h.hold("resin", 2)
    h.ok("drop resin")
    h.ok("enter yard")
    h.wait(1)
    outcome = h.idle(1)
    assert h.state.areas["camp"].objects == {}
    assert h.state.rule_data["rulelang"]["vars"]["sunk"]["camp"] == {"stick": 1, "resin": 2}
    assert [e.data["n"] for e in outcome if e.kind == "sank"] == [1, 2]


def test_a_tally_counts_at_most_its_max_names_and_reads_as_text(rh):
    h = rh(SINK)
    for kind in ("stick", "resin", "apple"):
        h.hold(kind)
        h.ok(f"drop {kind}")
    h.ok("enter yard")
    h.wait(2)
    h.ok("enter camp")
    assert h.state.rule_data["rulelang"]["vars"]["sunk"]["camp"] == {"stick": 1, "resin": 1}  # apple: past max
    assert h.state.areas["camp"].objects == {}  # it sank all the same


def test_tally_text_and_a_tally_read_in_a_verb(rh):
    rules = {
        "vars": [{"name": "seen", "kind": "tally", "scope": "agent", "max": 5}],
        "verbs": [
            {
                "verb": "count",
                "description": "Count what I see.",
                "slots": [{"name": "thing", "domain": "ground"}],
                "effects": [{"tally": "seen", "item": "{thing}", "by": 2}, {"say": "So far: {tally.seen}."}],
            }
        ],
    }
    h = rh(rules)
    h.put("stick")
    h.put("resin")
    assert h.ok("count stick") == "So far: 2 stick."
    assert h.ok("count resin") == "So far: 2 stick, 2 resin."
    assert h.ok("count stick") == "So far: 4 stick, 2 resin."


def test_what_a_named_thing_is_is_read_through_its_handle(rh):
    h = rh(SINK)
    bag = h.hold("small_bag")[0]
    h.ok(f"drop {bag}")
    h.ok("enter yard")
    h.wait(4)
    assert bag in h.state.areas["camp"].objects  # a container: the rule's when spares it
    assert h.state.rule_data.get("rulelang", {}).get("timers", []) == []


@pytest.mark.parametrize(
    ("rules", "where", "says"),
    [
        (one_verb(effects=[{"remove": "stick", "count": "three"}]), "verbs[0].effects[0].count", "a $reference"),
        (one_verb(effects=[{"remove": "stick", "count": "$nothing"}]), "verbs[0].effects[0].count", "names nothing"),
        (one_verb(effects=[{"remove": "stick", "count": 0}]), "verbs[0].effects[0].count", "between 1"),
        (one_verb(effects=[{"tally": "sunk", "item": "x"}]), "verbs[0].effects[0].tally", "unknown variable"),
        (
            one_verb(effects=[{"tally": "n", "item": "x"}], vars=[{"name": "n", "kind": "counter"}]),
            "verbs[0].effects[0].tally",
            "is a counter, not a tally",
        ),
        (
            one_verb(effects=[{"tally": "t", "item": "{nope}"}], vars=[{"name": "t", "kind": "tally"}]),
            "verbs[0].effects[0].item",
            "{nope}",
        ),
        (
            one_verb(effects=[{"tally": "t", "item": "x", "by": "2"}], vars=[{"name": "t", "kind": "tally"}]),
            "verbs[0].effects[0].by",
            "a $reference",
        ),
        ({"vars": [{"name": "t", "kind": "tally", "max": 5000}]}, "vars[0].max", "between 1"),
        ({"vars": [{"name": "t", "kind": "tally", "scope": "object"}]}, "vars[0].scope", "per area"),
        (one_verb(effects=[{"say": "{tally.t}"}]), "verbs[0].effects[0].say", "unknown variable 't'"),
        (one_verb(effects=[{"emit": "x", "data": {"a": "$nope"}}]), "verbs[0].effects[0].data.a", "names nothing"),
        ({"step_rules": [step(trigger={"event": []})]}, "step_rules[0].trigger.event", "at least one"),
        ({"step_rules": [step(trigger={"event": ["ok", "Bad"]})]}, "step_rules[0].trigger.event[1]", "not a name"),
        (
            {"step_rules": [step(effects=[{"after": 2, "unwatched": "yes", "do": []}])]},
            "step_rules[0].effects[0].unwatched",
            "expected",
        ),
    ],
)
def test_the_salt_constructs_are_refused_when_misused(rules_game, rules, where, says):
    with pytest.raises(GameError) as err:
        rules_game(rules)
    lines = str(err.value).splitlines()
    assert any(line.startswith(f"rules.json: {where}:") and says in line for line in lines), lines


def test_unwatched_countdowns_survive_save_and_load_and_do_not_depend_on_hash_seeds(rules_game, rh):
    import json

    from kit import subprocess_digest

    h = sinking(rh)
    h.ok("drop stick")
    h.ok("enter yard")
    saved = json.loads(json.dumps(h.engine.save_state()))
    h.wait(3)
    after = h.state.areas["camp"].objects.copy()
    h.engine.load_state(saved)
    h.wait(3)
    assert h.state.areas["camp"].objects == after == {}
    game = rules_game(SINK)
    digests = {subprocess_digest(game.path, 5, 80, hash_seed) for hash_seed in ("0", "random")}
    assert len(digests) == 1


# ============================================================================ common_enemy, lasting sets, modify
FALTER = {
    "vars": [{"name": "ringing", "kind": "set", "scope": "area", "max": 5, "lasts": 4}],
    "step_rules": [
        step(
            "note",
            trigger={"event": "npc_defeated"},
            when={"common_enemy": "$event.type"},
            effects=[
                {"remember": "ringing", "value": "{event.type}"},
                {"emit": "noted", "data": {"type": "$event.type"}},
                {
                    "after": 4,
                    "do": [
                        {
                            "if": {"none_of": [{"in_set": "ringing", "value": "{event.type}"}]},
                            "then": [{"tell": "The {event.type} note fades."}],
                        }
                    ],
                },
            ],
        ),
        step(
            "falter",
            after=["note"],
            scope="npc",
            when={"in_set": "ringing", "value": "{npc.type}"},
            modify={"stat": "attack", "times": 0.5},
        ),
    ],
}


def kill(h, npc):
    npc.hp = 1
    h.agent.attack = 100
    return h.ok(f"attack {npc.handle}")


def test_a_kill_of_a_common_enemy_holds_its_kin_weak_while_the_note_lasts(rh):
    h = rh(FALTER)
    prey, kin, other = h.npc("rat"), h.npc("rat"), h.npc("wolf")
    kill(h, prey)
    assert h.events("noted") == [{"type": "rat"}]
    assert (kin.attack, other.attack) == (2, 9)  # the wolf is of another kind
    kin.engaged = other.engaged = None
    h.agent.combat = None
    h.goto("yard", clear=False)
    h.wait(3)
    assert kin.attack == 2  # it rings where the rat fell, whoever is there
    h.goto("camp", clear=False)
    h.ok("wait")  # the fourth step after: the note is forgotten
    assert kin.attack == 4 and "The rat note fades." in h.feedback


def test_remembering_again_makes_it_last_longer_and_leaving_gives_the_stat_back(rh):
    h = rh(FALTER)
    first, second, kin = h.npc("rat"), h.npc("rat"), h.npc("rat")
    kill(h, first)
    h.ok("wait")
    kill(h, second)  # two steps later: rings until four steps from now
    h.wait(2)
    assert kin.attack == 2 and "fades" not in h.feedback  # the first note's time came; it rings on
    h.state.areas["camp"].npcs.remove(kin.handle)
    h.state.areas["yard"].npcs.append(kin.handle)
    kin.area, kin.engaged, h.agent.combat = "yard", None, None
    h.ok("wait")
    assert kin.attack == 4  # out of the ringing area: given back
    assert h.state.rule_data["rulelang"]["modified"]["falter"] == {}


def test_common_enemy_holds_for_a_many_kind_of_foe_only(rh):
    def fires(kind: str) -> bool:
        h = rh({"step_rules": [step(when={"common_enemy": kind}, effects=[{"emit": "noted"}])]})
        h.ok("wait")
        return bool(h.events("noted"))

    assert [fires(kind) for kind in ("rat", "wolf", "tom", "mira")] == [True, True, False, False]
    h = rh({"step_rules": [step(scope="npc", when={"common_enemy": "$npc"}, effects=[{"emit": "noted"}])]})
    h.npc("rat")
    h.ok("wait")
    assert len(h.events("noted")) == sum(h.game.npcs[n.type].common_enemy for n in h.state.npcs.values())


def test_a_lasting_set_keeps_at_most_max_values_and_forgets_on_time(rh):
    rules = {
        "vars": [{"name": "seen", "kind": "set", "max": 2, "lasts": 5}],
        "verbs": [
            {
                "verb": "note",
                "description": "Note a thing.",
                "slots": [{"name": "thing", "domain": "ground"}],
                "effects": [{"remember": "seen", "value": "{thing}"}],
            },
            {
                "verb": "recall",
                "description": "Recall a thing.",
                "slots": [{"name": "thing", "domain": "ground"}],
                "requires": [{"check": {"in_set": "seen", "value": "{thing}"}, "refuse": "Not {thing}."}],
                "effects": [{"say": "Yes, {thing}."}],
            },
        ],
    }
    h = rh(rules)
    for kind in ("stick", "resin", "apple"):
        h.put(kind)
    h.ok("note stick")
    h.ok("note resin")
    h.ok("note apple")  # full: not kept
    h.fails("recall apple", "Not apple.")
    assert h.ok("recall stick") == "Yes, stick."  # four steps after it was noted
    h.ok("wait")
    h.fails("recall stick", "Not stick.")  # six: its five are over
    h.ok("note apple")  # room again
    assert h.ok("recall apple") == "Yes, apple."


@pytest.mark.parametrize(
    ("rules", "where", "says"),
    [
        ({"vars": [{"name": "n", "kind": "counter", "lasts": 3}]}, "vars[0].lasts", "only a set"),
        ({"vars": [{"name": "n", "kind": "set", "lasts": 0}]}, "vars[0].lasts", "between 1"),
        ({"vars": [{"name": "n", "kind": "set", "scope": "object", "lasts": 3}]}, "vars[0].lasts", "per area"),
        (
            {"step_rules": [step(scope="npc", when={"in_combat": True}, modify={"stat": "attack", "times": 2})]},
            "step_rules[0].when.in_combat",
            "not about an agent",
        ),
        ({"step_rules": [step(modify={"stat": "attack", "times": 0.5})]}, "step_rules[0].modify", "must be 'npc'"),
        (
            {"step_rules": [step(scope="npc", modify={"stat": "attack", "times": 0.5})]},
            "step_rules[0].modify",
            "a when",
        ),
        (
            {"step_rules": [step(scope="npc", when={"npc_here": "rat"}, modify={"stat": "hp", "times": 0.5})]},
            "step_rules[0].modify.stat",
            "attack or defense",
        ),
        (
            {"step_rules": [step(scope="npc", when={"npc_here": "rat"}, modify={"stat": "attack", "times": 0})]},
            "step_rules[0].modify.times",
            "above 0",
        ),
        (
            {
                "step_rules": [
                    step(
                        scope="npc",
                        when={"npc_here": "rat"},
                        trigger={"every": 2},
                        modify={"stat": "attack", "times": 0.5},
                    )
                ]
            },
            "step_rules[0].modify",
            "no trigger",
        ),
        ({"step_rules": [step(when={"common_enemy": "bat"})]}, "step_rules[0].when.common_enemy", "unknown NPC"),
        ({"step_rules": [step(when={"common_enemy": "$x"})]}, "step_rules[0].when.common_enemy", "names nothing"),
    ],
)
def test_the_imprint_constructs_are_refused_when_misused(rules_game, rules, where, says):
    with pytest.raises(GameError) as err:
        rules_game(rules)
    lines = str(err.value).splitlines()
    assert any(line.startswith(f"rules.json: {where}:") and says in line for line in lines), lines


def test_held_stats_survive_save_and_load_and_do_not_depend_on_hash_seeds(rules_game, rh):
    import json

    from kit import subprocess_digest

    h = rh(FALTER)
    prey, kin = h.npc("rat"), h.npc("rat")
    kill(h, prey)
    saved = json.loads(json.dumps(h.engine.save_state()))
    h.engine.load_state(saved)
    kin = h.state.npcs[kin.handle]
    kin.engaged, h.agent.combat = None, None
    h.goto("yard", clear=False)
    h.wait(4)
    assert kin.attack == 4
    game = rules_game(FALTER)
    digests = {subprocess_digest(game.path, 5, 80, hash_seed) for hash_seed in ("0", "random")}
    assert len(digests) == 1


def test_the_recipes_whose_stations_lie_here_keep_file_order_whatever_was_asked_before():
    from types import SimpleNamespace as NS

    from odyssey_env.rulelang.compiler import _Stations

    def kind(name, *stations):
        return NS(name=name, recipe=NS(stations=stations))

    table = _Stations([kind("a", "kiln"), kind("b"), kind("c", "kiln", "wheel"), kind("d", "wheel"), kind("e")])
    assert table.here({}) == ["b", "e"]
    assert table.here({"wheel": 1}) == ["b", "d", "e"]
    assert table.here({"kiln": 1, "wheel": 1, "sand": 3}) == ["a", "b", "c", "d", "e"]
    assert table.here({"kiln": 2}) == ["a", "b", "e"]
    assert table.here({"wheel": 1}) == ["b", "d", "e"]  # remembered, the same
