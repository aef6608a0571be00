"""A step rule of scope ``instance``, the ``on_ground`` condition and ``$spawned``, which carry Lazaret's
corpse corruption (docs/game-format.md, "Rules as data"): each named thing of the rule's types wherever it is,
in hands, in a bag or on a floor (a per-object counter it adds to each step is its age since it was made),
"this very thing lies on the floor here", and the NPC a ``spawn_npc`` just made. Misused, each is refused
naming file and field."""

from __future__ import annotations

import pytest

from odyssey_env.game import GameError

from .test_language import step

#: A parchment left lying three steps it was made crumbles into a rat; one carried ages all the same.
CRUMBLE = {
    "vars": [{"name": "age", "kind": "counter", "scope": "object", "max": 99}],
    "step_rules": [
        step(
            "crumble",
            scope="instance",
            types=["parchment"],
            effects=[
                {"add": "age", "of": "$object"},
                {
                    "if": {"all_of": [{"counter": "age", "of": "$object", "at_least": 3}, {"on_ground": "$object"}]},
                    "then": [
                        {"remove": "$object"},
                        {"spawn_npc": "rat", "max_alive": 5},
                        {"tell": "{object} crumbles into {spawned} in {here}."},
                        {"emit": "crumbled", "data": {"thing": "{object}", "npc": "$spawned"}},
                    ],
                },
            ],
        )
    ],
}


def _age(h, handle):
    return h.engine.state.rule_data["rulelang"]["vars"].get("age", {}).get(handle, 0)


def test_an_instance_rule_ages_a_thing_wherever_it_is_and_acts_where_it_lies(rh):
    h = rh(CRUMBLE)
    h.clear_everywhere()  # the world's own parchment, wherever it lies, is not this test's
    here = h.agent.area
    (held,) = h.hold("parchment")
    bag = h.wear("small_bag")
    h.stash(bag, "parchment", 1)
    (packed,) = h.engine.state.instances[bag].contents
    (lying,) = h.put("parchment")
    h.put("scrap")  # a named thing of another type: never counted
    h.wait(2)
    assert [_age(h, t) for t in (held, packed, lying)] == [2, 2, 2]
    text = h.ok("wait")
    assert [_age(h, t) for t in (held, packed, lying)] == [3, 3, 3]
    (rat,) = [n for n in h.engine.state.areas[here].npcs if h.engine.state.npcs[n].type == "rat"]
    assert f"{lying} crumbles into {rat} in {here}." in text and lying not in h.engine.state.instances
    assert h.events("crumbled") == [{"thing": lying, "npc": rat}]
    assert held in h.agent.hands and packed in h.engine.state.instances[bag].contents  # carried: not on a floor
    assert not any(k.startswith("scrap") for k in h.engine.state.rule_data["rulelang"]["vars"]["age"])
    h.ok(f"drop {held}")  # laid down long overdue: it crumbles in the step it lands
    assert held not in h.engine.state.instances


def test_on_ground_asks_of_the_one_thing_not_its_type(rh):
    rules = {
        "vars": [{"name": "seen", "kind": "flag", "scope": "object"}],
        "step_rules": [
            step(
                "look",
                scope="instance",
                types=["parchment"],
                effects=[{"if": {"on_ground": "$object"}, "then": [{"set_flag": "seen", "of": "$object"}]}],
            )
        ],
    }
    h = rh(rules)
    h.clear_everywhere()
    (held,) = h.hold("parchment")
    (lying,) = h.put("parchment")  # another parchment lies here: the held one is not on the ground for that
    h.ok("wait")
    seen = h.engine.state.rule_data["rulelang"]["vars"]["seen"]
    assert seen == {lying: True}
    assert held not in seen


def test_an_instance_rule_visits_things_in_the_order_they_were_made(rh):
    remember = [{"remember": "order", "value": "{object}"}]
    rules = {
        "vars": [{"name": "order", "kind": "set", "scope": "global", "max": 10}],
        "step_rules": [step("list", scope="instance", types=["parchment"], effects=remember)],
    }
    h = rh(rules)
    h.clear_everywhere()
    first = h.put("parchment")[0]
    second = h.hold("parchment")[0]
    third = h.put("parchment")[0]
    h.ok("wait")
    assert h.engine.state.rule_data["rulelang"]["vars"]["order"]["*"] == [first, second, third]


@pytest.mark.parametrize(
    ("rule", "where", "says"),
    [
        (step("s", scope="instance", effects=[{"tell": "x"}]), "step_rules[0].types", "name at least one"),
        (step("s", scope="instance", types=["iron_ore"], effects=[{"tell": "x"}]), "step_rules[0].types[0]", "named"),
        (step("s", scope="instance", types=["parchment"], tutorial=True), "step_rules[0].tutorial", "agents"),
        (
            step("s", scope="instance", types=["parchment"], when={"on_ground": "rop"}),
            "step_rules[0].when.on_ground",
            "unknown object",
        ),
        (step("s", scope="area", when={"on_ground": "$object"}), "step_rules[0].when.on_ground", "$object"),
        (
            step("s", scope="area", effects=[{"move_npc": "$spawned", "to": "$object"}]),
            "step_rules[0].effects[0]",
            "$object",
        ),
    ],
)
def test_a_bad_instance_rule_is_refused_naming_its_field(rules_game, rule, where, says):
    with pytest.raises(GameError) as err:
        rules_game({"step_rules": [rule]})
    lines = str(err.value).splitlines()
    assert any(line.startswith(f"rules.json: {where}") and says in line for line in lines), lines


def test_spawned_is_an_npc_reference():
    from odyssey_env.rulelang.checks import Checker, Where, World

    c = Checker("rules.json", World(objects={}, npcs={}, areas=set(), places=set()))
    c.ref("$spawned", "npc", "p", Where(bindings={}, agent=False))
    c.ref("$spawned", "area", "q", Where(bindings={}, agent=False))
    assert [(p.path, "npc" in p.message) for p in c.problems] == [("q", True)]


def test_the_schema_names_the_instance_scope_and_on_ground():
    from odyssey_env.rulelang.spec import json_schema

    out = json_schema()
    defs = out["$defs"]
    assert {"$ref": "#/$defs/OnGround"} in defs["Condition"]["anyOf"]
    assert defs["OnGround"]["required"] == ["on_ground"]
    assert "instance" in defs["StepSpec"]["properties"]["scope"]["enum"]


def test_ages_survive_save_and_load_and_do_not_depend_on_hash_seeds(rules_game, rh):
    import json

    from kit import subprocess_digest

    h = rh(CRUMBLE)
    h.clear_everywhere()
    (paper,) = h.hold("parchment")
    h.ok("wait")
    saved = json.loads(json.dumps(h.engine.save_state()))
    h.ok("wait")
    assert _age(h, paper) == 2
    h.engine.load_state(saved)
    assert _age(h, paper) == 1
    h.ok(f"drop {paper}")
    h.ok("wait")  # its third step: it crumbles where it lies
    assert paper not in h.engine.state.instances and h.events("crumbled")
    game = rules_game(CRUMBLE)
    digests = {subprocess_digest(game.path, 3, 60, hash_seed) for hash_seed in ("0", "random")}
    assert len(digests) == 1


def test_on_ground_gates_a_verb_its_listing_and_its_plan(rh):
    from .test_language import verb

    rules = {
        "verbs": [
            verb(
                "smooth",
                slots=[{"name": "sheet", "domain": "near", "types": ["parchment"]}],
                requires=[{"check": {"on_ground": "$sheet"}, "refuse": "{sheet} must lie flat on the floor."}],
                effects=[{"say": "I smooth {sheet} flat."}],
            )
        ]
    }
    h = rh(rules)
    h.clear_everywhere()
    (held,) = h.hold("parchment")
    h.fails(f"smooth {held}", f"{held} must lie flat on the floor.")
    assert h.listed("smooth") == []
    (lying,) = h.put("parchment")
    assert h.listed("smooth") == [f"smooth {lying}"]
    assert f"I smooth {lying} flat." in h.ok(f"smooth {lying}")
    assert {"ground", "place"} <= set(h.engine.rules.actions["smooth"].depends_on)


def test_becomes_in_an_instance_scope_fires_once_per_thing_wherever_it_is_carried(rh):
    rules = {
        "vars": [{"name": "age", "kind": "counter", "scope": "object", "max": 99}],
        "step_rules": [
            step(
                "old",
                scope="instance",
                types=["parchment"],
                trigger={"becomes": {"counter": "age", "of": "$object", "at_least": 2}},
                effects=[{"emit": "grew_old", "data": {"thing": "{object}", "where": "{here}"}}],
            ),
            step("count", scope="instance", types=["parchment"], effects=[{"add": "age", "of": "$object"}]),
        ],
    }
    rules["step_rules"][1]["after"], rules["step_rules"][1]["before"] = ["day_night"], ["old"]
    h = rh(rules)
    h.clear_everywhere()
    (paper,) = h.hold("parchment")
    h.wait(2)
    here = h.agent.area
    assert h.events("grew_old") == [{"thing": paper, "where": here}]
    (way, *_) = h.engine.state.areas[here].exits
    h.engine.state.areas[here].exits[way].locked = False
    h.ok(f"enter {way}")  # carried elsewhere: the same thing, already old
    assert h.events("grew_old") == []
    h.ok("wait")
    assert h.events("grew_old") == []
