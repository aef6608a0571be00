"""Phantom objects and the pieces that lay them (Mirror Salt's mirages; docs/game-format.md, "Mirror Salt's
mirages"): a step rule's ``phantoms`` and its ``phantom`` effect, ``pick`` over areas and object types, the
conditions ``phantoms`` and ``fits_level``, scope ``world`` and a ``$param`` period. Misused, each is refused
naming file and field."""

from __future__ import annotations

import pytest

from odyssey_env.game import GameError
from odyssey_env.rulelang import phantoms
from odyssey_env.rulelang.spec import json_schema

from .test_language import step

PHANTOMS = {
    "lasts": 3,
    "event": "ghost",
    "vanish": "The {object} melts away.",
    "fade": "The {object} fades.",
    "thin": "A real {object} lands; the ghost thins.",
}


def ghosts(*, types=("stick",), when=None, **kw):
    rule = step(
        "ghosts",
        scope="world",
        phantoms=PHANTOMS,
        params={"period": 1},
        trigger={"every": "$param.period"},
        effects=[
            {
                "pick": "area",
                "unwatched": True,
                "do": [
                    {
                        "pick": "type",
                        "types": list(types),
                        "check": {"all_of": [{"none_of": [{"lies_here": "$each"}]}, {"fits_level": "$each"}]},
                        "do": [{"phantom": "$each"}],
                    }
                ],
            }
        ],
        **kw,
    )
    if when is not None:
        rule["when"] = when
    return {"step_rules": [rule]}


def test_phantoms_form_unwatched_vanish_when_taken_and_fade(rh):
    h = rh(ghosts(when={"phantoms": "*", "below": 1}))
    here = h.agent.area
    h.ok("wait")
    formed = h.events("ghost_formed")
    assert len(formed) == 1 and formed[0]["area"] != here and formed[0]["object"] == "stick"
    there = formed[0]["area"]
    rule = h.engine.rules.step_rule("ghosts")
    assert list(rule.phantoms(h.engine)) == [(there, "stick", 1)]
    h.ok("wait")
    assert not h.events("ghost_formed")  # below 1: one pile at a time
    h.agent.area = there
    text = h.ok("pick up stick")
    assert "The stick melts away." in text and h.events("ghost_vanished")[0]["amount"] == 1
    assert "stick" not in h.agent.hands and "stick" not in h.agent.acquired  # no find
    h.agent.area = here
    for _ in range(5):
        h.ok("wait")
        if h.events("ghost_faded"):
            break
    assert h.events("ghost_faded")


def test_a_real_thing_landing_on_a_phantom_pile_thins_it(rh):
    h = rh(ghosts())
    h.ok("wait")
    there = h.events("ghost_formed")[0]["area"]
    h.engine.state.areas[there].objects["stick"] += 1  # a real one arrives
    h.agent.area = there
    assert "A real stick lands; the ghost thins." in h.ok("wait")
    assert (
        there not in phantoms.piles_of(h.engine, "ghosts")
        or "stick" not in phantoms.piles_of(h.engine, "ghosts")[there]
    )
    assert h.engine.state.areas[there].objects["stick"] == 1


def test_no_phantom_of_money_named_or_worn_things(rh):
    h = rh(ghosts(types=("coin", "cap")))
    h.wait(3)
    assert not h.events("ghost_formed") and phantoms.count(h.engine, None) == 0


@pytest.mark.parametrize(
    ("rules", "where", "says"),
    [
        ({"step_rules": [step("s", effects=[{"phantom": "stick"}])]}, "effects[0].phantom", "declare the step rule"),
        ({"step_rules": [step("s", scope="area", phantoms=PHANTOMS)]}, "phantoms", "scope must be 'world'"),
        (
            {
                "step_rules": [
                    step("s", scope="world", phantoms=PHANTOMS, effects=[{"phantom": "coin", "area": "yard"}])
                ]
            },
            "effects[0].phantom",
            "money",
        ),
        ({"step_rules": [step("s", scope="world", effects=[{"pick": "type", "do": []}])]}, "types", "at least one"),
        (
            {"step_rules": [step("s", scope="world", effects=[{"pick": "area", "do": [{"pick": "area", "do": []}]}])]},
            "do[0].pick",
            "another kind",
        ),
        (ghosts(when={"phantoms": "*", "below": "$param.nope"}), "when.below", "declares"),
        (ghosts(when={"phantoms": "*"}), "when.phantoms", "at_least, below"),
        ({"step_rules": [step("s", trigger={"every": "$param.gone"})]}, "trigger.every", "declares"),
        ({"step_rules": [step("s", effects=[{"pick": "area", "idle": True, "do": []}])]}, "pick", "NPCs"),
    ],
)
def test_misused_phantom_pieces_are_refused_naming_the_field(rules_game, rules, where, says):
    with pytest.raises(GameError) as err:
        rules_game(rules)
    text = str(err.value)
    assert "rules.json" in text and where in text and says in text, text


def test_the_schema_names_the_phantom_pieces():
    defs = json_schema()["$defs"]
    assert {"Phantom", "PhantomsAre", "FitsLevel", "Phantoms"} <= set(defs)
    assert defs["Pick"]["properties"]["pick"]["enum"] == ["npc", "area", "type"]


def test_phantoms_survive_save_and_load_and_do_not_depend_on_hash_seeds(rules_game, rh):
    import json

    from kit import subprocess_digest

    h = rh(ghosts())
    h.ok("wait")
    saved = json.loads(json.dumps(h.engine.save_state()))
    before = sorted(h.engine.rules.step_rule("ghosts").phantoms(h.engine))
    assert before
    h.wait(5)  # they fade
    h.engine.load_state(saved)
    assert sorted(h.engine.rules.step_rule("ghosts").phantoms(h.engine)) == before
    game = rules_game(ghosts())
    digests = {subprocess_digest(game.path, 3, 40, hash_seed) for hash_seed in ("0", "random")}
    assert len(digests) == 1
