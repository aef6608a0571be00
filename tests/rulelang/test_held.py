"""The ``held`` scope, per-held variables and ``wield`` (docs/game-format.md, "Mirror Salt's constructs"): a step rule
about each thing in each agent's hands, and a value kept per agent and held thing (what Mirror Salt's
glaze needs before it can move to rules.json), and an attack computed from the best held weapon under its
counter. Shown working on the tiny game, refused naming file and field
when misused, and deterministic."""

from __future__ import annotations

import pytest

from odyssey_env.game import GameError
from odyssey_env.rulelang.runtime import KEY, data

from .test_language import step

GLAZE = {
    "vars": [{"name": "glaze", "kind": "counter", "scope": "held", "max": 2}],
    "step_rules": [
        step(
            "glaze",
            scope="held",
            types=["stick", "club"],
            effects=[
                {"add": "glaze", "of": "$object"},
                {"say": "Glaze on {object}: {var.glaze.object}."},
                {"emit": "glazed", "data": {"handle": "$object"}},
            ],
        )
    ],
}


def _glaze(h) -> dict:
    return h.state.rule_data.get(KEY, {}).get("vars", {}).get("glaze", {})


def test_a_held_rule_runs_for_each_thing_in_hand_of_its_types_and_keeps_a_value_per_agent_and_thing(rh):
    h = rh(GLAZE)
    h.ok("wait")
    assert h.events("glazed") == []  # empty hands: nothing to run for
    h.hold("stick", 2)  # a stack: one thing, by its type
    h.hold("resin")  # not among its types
    h.ok("wait")
    assert h.events("glazed") == [{"handle": "stick"}]
    assert "Glaze on stick: 1." in h.feedback
    h.ok("wait")
    h.ok("wait")
    assert "Glaze on stick: 2." in h.feedback  # held at its max
    assert _glaze(h) == {f"{h.agent.id}/stick": 2}
    h.ok("drop stick")
    h.ok("wait")
    assert h.events("glazed") == []  # out of the hands, out of the scope; its value stays until written
    assert _glaze(h) == {f"{h.agent.id}/stick": 2}


def test_a_held_rule_leaves_the_tutorial_alone_unless_it_says_so(rh):
    for reach, heard in ((False, []), (True, [{"handle": "stick"}])):
        h = rh({**GLAZE, "step_rules": [{**GLAZE["step_rules"][0], "tutorial": reach}]})
        h.agent.in_tutorial = True
        h.hold("stick")
        h.ok("wait")
        assert h.events("glazed") == heard


def test_becomes_in_a_held_scope_fires_once_per_held_thing_and_again_once_it_was_let_go(rh):
    taken = step(
        "taken",
        scope="held",
        trigger={"becomes": {"holds": "$object"}},
        effects=[{"emit": "grip", "data": {"handle": "$object"}}],
    )
    h = rh({"step_rules": [taken]})
    h.hold("stick")
    h.ok("wait")
    assert h.events("grip") == [{"handle": "stick"}]
    h.hold("resin")
    h.ok("wait")
    assert h.events("grip") == [{"handle": "resin"}]  # the stick was told already
    h.ok("drop stick")
    h.ok("wait")
    assert h.events("grip") == []
    h.hold("stick")
    h.ok("wait")
    assert h.events("grip") == [{"handle": "stick"}]  # let go, then taken again


# ============================================================================ wield: a computed attack
BLUNT = {
    "vars": [{"name": "glaze", "kind": "counter", "scope": "held", "max": 9}],
    "step_rules": [
        step(
            "blunt",
            scope="held",
            after=["attack_update"],
            before=["experience"],
            effects=[{"add": "glaze", "of": "$object"}],
            wield={"counter": "glaze", "less": 2, "floor": 0.5},
        )
    ],
}


def test_wield_blunts_the_best_held_weapon_by_its_counter_never_below_its_floor(rh):
    h = rh(BLUNT)
    base = h.agent.base_attack
    h.ok("wait")
    assert h.agent.attack == base  # empty hands
    h.hold("club")  # attack 8
    h.ok("wait")
    assert h.agent.attack == base + 8 - 2  # one unit of glaze
    h.ok("wait")
    assert h.agent.attack == base + 8 - 4
    h.hold("torch")  # attack 3, one unit of glaze: max(3 - 2, 2) = 2; the club is still the better blade
    h.ok("wait")
    assert h.agent.attack == base + 4  # 8 - 6 = 2, but never below half of 8
    h.wait(2)
    assert h.agent.attack == base + 4
    h.agent.hands.pop("club")
    h.ok("wait")
    assert h.agent.attack == base + 2  # the torch at its floor: half of 3, rounded up


def test_wield_with_no_glaze_is_what_attack_update_gives_and_spares_the_tutorial(rh):
    still = {**BLUNT, "step_rules": [{**BLUNT["step_rules"][0], "effects": []}]}
    h = rh(still)
    h.hold("club")
    h.hold("torch")
    h.ok("wait")
    assert h.agent.attack == h.agent.base_attack + 8
    for reach, attack in ((False, 8), (True, 4)):
        h = rh({**still, "step_rules": [{**still["step_rules"][0], "tutorial": reach}]})
        h.agent.in_tutorial = True
        h.hold("club")
        h.ok("wait")
        data(h.engine)["vars"]["glaze"] = {f"{h.agent.id}/club": 3}
        h.ok("wait")
        assert h.agent.attack == h.agent.base_attack + attack  # else attack_update's: the tutorial is let be


@pytest.mark.parametrize(
    ("rules", "where", "says"),
    [
        ({"step_rules": [step(scope="held", types=["stik"])]}, "step_rules[0].types[0]", "unknown object"),
        (
            {**GLAZE, "step_rules": [step(scope="area", effects=[{"add": "glaze", "of": "$object"}])]},
            "step_rules[0].effects[0]",
            "not about an agent",
        ),
        (
            {**GLAZE, "step_rules": [step(scope="held", effects=[{"add": "glaze"}])]},
            "step_rules[0].effects[0]",
            "say whose with of",
        ),
        (
            {**GLAZE, "step_rules": [step(scope="held", effects=[{"add": "glaze", "of": "stick"}])]},
            "step_rules[0].effects[0]",
            "give a reference",
        ),
        (
            {"vars": [{"name": "t", "kind": "tally", "scope": "held", "max": 2}]},
            "vars[0].scope",
            "globally, per agent or per area",
        ),
        (
            {"vars": [{"name": "t", "kind": "set", "scope": "held", "max": 2, "lasts": 3}]},
            "vars[0].lasts",
            "globally, per agent or per area",
        ),
        ({"step_rules": [step(scope="npc", tutorial=True)]}, "step_rules[0].tutorial", "recipe or held"),
        (
            {**BLUNT, "step_rules": [step(scope="agent", wield={"counter": "glaze"})]},
            "step_rules[0].wield",
            "scope must be 'held'",
        ),
        (
            {
                "vars": [{"name": "glaze", "kind": "counter", "scope": "agent"}],
                "step_rules": [step(scope="held", wield={"counter": "glaze"})],
            },
            "step_rules[0].wield.counter",
            "scope 'held'",
        ),
        (
            {**BLUNT, "step_rules": [step(scope="held", wield={"counter": "glaze", "floor": 1.5})]},
            "step_rules[0].wield.floor",
            "between 0 and 1",
        ),
        (
            {**BLUNT, "step_rules": [step(scope="held", wield={"counter": "glaze", "less": -1})]},
            "step_rules[0].wield.less",
            "between 0 and",
        ),
    ],
)
def test_the_held_constructs_are_refused_when_misused(rules_game, rules, where, says):
    with pytest.raises(GameError) as err:
        rules_game(rules)
    lines = str(err.value).splitlines()
    assert any(line.startswith(f"rules.json: {where}") and says in line for line in lines), lines


def test_held_values_survive_save_and_load_and_do_not_depend_on_hash_seeds(rules_game, rh):
    import json

    from kit import subprocess_digest

    h = rh(GLAZE)
    h.hold("stick")
    h.ok("wait")
    saved = json.loads(json.dumps(h.engine.save_state()))
    h.ok("wait")
    assert _glaze(h) == {f"{h.agent.id}/stick": 2}
    h.engine.load_state(saved)
    assert _glaze(h) == {f"{h.agent.id}/stick": 1}
    h.ok("wait")
    assert _glaze(h) == {f"{h.agent.id}/stick": 2}
    game = rules_game({**GLAZE, "step_rules": [{**GLAZE["step_rules"][0], "types": []}]})
    digests = {subprocess_digest(game.path, 3, 60, hash_seed) for hash_seed in ("0", "random")}
    assert len(digests) == 1


def test_the_schema_knows_the_held_scope():
    from odyssey_env.rulelang import json_schema

    defs = json_schema()["$defs"]
    assert "held" in defs["StepSpec"]["properties"]["scope"]["enum"]
    assert "held" in defs["Var"]["properties"]["scope"]["enum"]
    assert set(defs["Wield"]["properties"]) == {"counter", "less", "floor"}
