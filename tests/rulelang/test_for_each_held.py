"""``for_each`` over ``held`` things and ``{notes.comma}``, which carry Mirror Salt's ``glaze_cracked`` (the glaze
``refract``'s light cracks off everything I hold; docs/game-format.md, "Rules as data"): each thing in the
agent's hands, in the hands' order, with ``$each`` bound, and the notes joined with ", ". Misused, each is
refused naming file and field."""

from __future__ import annotations

import pytest

from odyssey_env.game import GameError

from .test_language import step, verb

#: ``scrub`` wipes the soot off everything in my hands that has any, and names what it wiped.
SCRUB = {
    "vars": [{"name": "soot", "kind": "counter", "scope": "held", "max": 9}],
    "verbs": [
        verb(
            "scrub",
            effects=[
                {
                    "for_each": "held",
                    "types": ["club", "torch", "stick"],
                    "do": [
                        {
                            "if": {"counter": "soot", "of": "$each", "at_least": 1},
                            "then": [{"note": "{each}"}, {"set": "soot", "value": 0, "of": "$each"}],
                        }
                    ],
                },
                {
                    "if": {"noted": True},
                    "then": [{"say": "I scrub {notes.comma}."}],
                    "else": [{"say": "Nothing to scrub."}],
                },
            ],
        )
    ],
}


def _soot(h):
    return h.engine.state.rule_data.get("rulelang", {}).get("vars", {}).get("soot", {})


def test_for_each_held_visits_the_hands_in_their_order(rh):
    from odyssey_env.rulelang.runtime import write_var

    h = rh(SCRUB)
    torch = h.hold_one("torch")
    club = h.hold_one("club")
    for thing in (club, torch):  # the soot came on the club first: the hands' order names the torch first
        write_var(h.engine, "soot", f"{h.agent.id}/{thing}", 2, 0)
    h.put("stick")  # lying here, not held: never visited
    assert "I scrub torch, club." in h.ok("scrub")
    assert _soot(h) == {}
    assert "Nothing to scrub." in h.ok("scrub")


def test_for_each_held_narrows_by_types(rh):
    from odyssey_env.rulelang.runtime import write_var

    h = rh(SCRUB)
    cap = h.hold_one("cap")  # not of the types asked about
    write_var(h.engine, "soot", f"{h.agent.id}/{cap}", 1, 0)
    assert "Nothing to scrub." in h.ok("scrub")
    assert _soot(h) == {f"{h.agent.id}/{cap}": 1}


def test_for_each_held_in_a_step_rule_about_agents(rh):
    rules = {
        "vars": [{"name": "seen", "kind": "set", "scope": "global", "max": 10}],
        "step_rules": [
            step("look", effects=[{"for_each": "held", "do": [{"remember": "seen", "value": "{each}"}]}]),
        ],
    }
    h = rh(rules)
    stick = h.hold_one("stick", 3)
    club = h.hold_one("club")
    h.ok("wait")
    assert h.engine.state.rule_data["rulelang"]["vars"]["seen"]["*"] == [stick, club]  # a stack once


@pytest.mark.parametrize(
    ("rule", "where", "says"),
    [
        (
            step("s", scope="area", effects=[{"for_each": "held", "do": [{"tell": "x"}]}]),
            "step_rules[0].effects[0].for_each",
            "not about an agent",
        ),
        (
            step("s", effects=[{"for_each": "held", "area": "$here", "do": [{"say": "x"}]}]),
            None,
            None,
        ),
        (
            step("s", effects=[{"for_each": "held", "area": "yard", "do": [{"say": "x"}]}]),
            "step_rules[0].effects[0].area",
            "hands",
        ),
        (
            step("s", effects=[{"for_each": "held", "types": ["clu"], "do": [{"say": "x"}]}]),
            "step_rules[0].effects[0].types[0]",
            "unknown object",
        ),
        (
            step("s", effects=[{"say": "{notes.commas}"}]),
            "step_rules[0].effects[0].say",
            "notes.commas",
        ),
    ],
)
def test_a_bad_for_each_held_is_refused_naming_its_field(rules_game, rule, where, says):
    if where is None:  # the default area, written out, is accepted
        rules_game({"step_rules": [rule]})
        return
    with pytest.raises(GameError) as err:
        rules_game({"step_rules": [rule]})
    lines = str(err.value).splitlines()
    assert any(line.startswith(f"rules.json: {where}") and says in line for line in lines), lines


def test_the_schema_offers_held_to_for_each():
    from odyssey_env.rulelang.spec import json_schema

    defs = json_schema()["$defs"]
    assert set(defs["ForEach"]["properties"]["for_each"]["enum"]) == {"npc", "object", "held", "phantom", "value"}
    # some has no "held" (its "carried" covers the hands); its "agent" and "carried" came with Lazaret's dark
    assert set(defs["Some"]["properties"]["some"]["enum"]) == {"npc", "object", "agent", "carried"}
