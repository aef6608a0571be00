"""What moving Mirror Salt's ``refract`` into its rules.json took (docs/game-format.md, "Mirror Salt's refract"):
the ``dispel`` effect (a rule's phantoms taken back, ``do`` per pile, ``else``, ``$removed``), a verb's
``params`` (set by ``game.params.<verb>``, read as ``"$param.<name>"`` in a slot's or an ``is_type``'s
``types`` and as ``{param.<name>}`` in its texts) and ``{notes.space}``. Misused, each is refused naming file
and field."""

from __future__ import annotations

import json

import pytest
from kit import subprocess_digest

from odyssey_env.game import GameError
from odyssey_env.rulelang import phantoms
from odyssey_env.rulelang.spec import json_schema

from .conftest import tiny_game
from .test_language import step, verb
from .test_phantoms import ghosts

UNVEIL = verb(
    "unveil",
    records_event=False,
    effects=[
        {"note": "I look hard at {here}."},
        {
            "dispel": "ghosts",
            "do": [
                {"note": "The {each} was a ghost ({removed} of it)."},
                {"emit": "unveiled", "data": {"object": "$each", "amount": "$removed"}},
            ],
            "else": [{"note": "Nothing here is false."}],
        },
        {"say": "{notes.space}"},
        {"emit": "looked", "data": {"area": "{here}", "taken": "$removed"}},
    ],
)


def with_unveil(**kw):
    rules = ghosts(**kw)
    rules["verbs"] = [UNVEIL]
    return rules


def test_dispel_takes_a_rule_s_phantoms_here_back_and_says_each_pile(rh):
    h = rh(with_unveil(when={"phantoms": "*", "below": 1}))
    h.ok("wait")
    there = h.events("ghost_formed")[0]["area"]
    h.agent.area = there
    lying = h.engine.state.areas[there].objects.get("stick", 0)
    assert lying == 1  # the phantom lists as a real stick would
    text = h.ok("unveil")
    assert "I look hard at " + there + ". The stick was a ghost (1 of it)." in text
    assert h.events("unveiled") == [{"object": "stick", "amount": 1}]
    assert h.events("looked") == [{"area": there, "taken": 1}]  # $removed after it: the whole count
    assert "stick" not in h.engine.state.areas[there].objects
    assert there not in phantoms.piles_of(h.engine, "ghosts")
    assert "Nothing here is false." in h.ok("unveil")  # none left: else
    assert h.events("looked") == [{"area": there, "taken": 0}] and not h.events("unveiled")


def test_dispel_leaves_real_things_and_other_areas_alone(rh):
    h = rh(with_unveil())
    h.ok("wait")
    there = h.events("ghost_formed")[0]["area"]
    here = h.agent.area
    h.engine.state.areas[here].objects["stick"] = 2  # real sticks where I stand
    assert "Nothing here is false." in h.ok("unveil")
    assert h.engine.state.areas[here].objects["stick"] == 2
    assert there in phantoms.piles_of(h.engine, "ghosts")  # the phantoms elsewhere stay


def test_a_verb_s_params_are_set_by_game_params_and_read_in_types_and_texts(tmp_path):
    poke = verb(
        "poke",
        params={"pokers": ["stick"], "word": "poke"},
        slots=[{"name": "tool", "domain": "carried", "refuse": "I carry no {tool}."}],
        requires=[
            {"check": {"is_type": "$tool", "types": ["$param.pokers"]}, "refuse": "I cannot {param.word} with it."}
        ],
        effects=[{"say": "I {param.word} about with {tool}."}],
    )
    held = verb("wave", params={"wands": ["stick"]}, slots=[{"name": "w", "domain": "held", "types": ["$param.wands"]}])
    rules = {"verbs": [poke, held]}
    from kit import Harness

    from odyssey_env.engine import Engine

    default = Harness(Engine(tiny_game(tmp_path, rules, name="default"), 0))
    default.clear()
    default.hold("stick")
    default.hold("resin")
    assert default.engine.rules.actions["poke"].settings.pokers == ("stick",)
    assert "I poke about with stick." in default.ok("poke stick")
    assert "I cannot poke with it." in default.fails("poke resin", "cannot")
    assert default.listed("poke") == ["poke stick"] and default.listed("wave") == ["wave stick"]
    game = tiny_game(tmp_path, rules, params={"poke": {"pokers": ["resin"], "word": "prod"}}, name="set")
    h = Harness(Engine(game, 0))
    h.clear()
    h.hold("stick")
    h.hold("resin")
    assert h.engine.rules.actions["poke"].settings == type(h.engine.rules.actions["poke"].settings)(("resin",), "prod")
    assert "I prod about with resin." in h.ok("poke resin")
    assert h.listed("poke") == ["poke resin"]


@pytest.mark.parametrize(
    ("rules", "params", "file", "where", "says"),
    [
        (with_unveil(), None, "rules.json", None, None),
        (
            {**ghosts(), "verbs": [verb("unveil", effects=[{"dispel": "nope"}])]},
            None,
            "rules.json",
            "verbs[0].effects[0].dispel",
            "declares phantoms",
        ),
        (
            {"step_rules": [step("plain")], "verbs": [verb("unveil", effects=[{"dispel": "plain"}])]},
            None,
            "rules.json",
            "verbs[0].effects[0].dispel",
            "declares phantoms",
        ),
        (
            {
                **ghosts(),
                "verbs": [
                    verb("unveil", effects=[{"for_each": "npc", "do": [{"dispel": "ghosts", "do": [{"note": "x"}]}]}])
                ],
            },
            None,
            "rules.json",
            "do[0].dispel",
            "multiply",
        ),
        (
            {"verbs": [verb("poke", slots=[{"name": "t", "domain": "held", "types": ["$param.nope"]}])]},
            None,
            "rules.json",
            "verbs[0].slots[0].types[0]",
            "declares no such parameter",
        ),
        (
            {
                "verbs": [
                    verb(
                        "poke", params={"ts": ["stik"]}, slots=[{"name": "t", "domain": "held", "types": ["$param.ts"]}]
                    )
                ]
            },
            None,
            "rules.json",
            "verbs[0].slots[0].types[0]",
            "unknown object 'stik'",
        ),
        (
            {
                "verbs": [
                    verb(
                        "poke",
                        params={"ts": ["stick"]},
                        slots=[{"name": "t", "domain": "held"}],
                        requires=[{"check": {"is_type": "$t", "types": ["$param.ts"]}, "refuse": "no"}],
                    )
                ]
            },
            {"poke": {"ts": ["stik"]}},
            "rules.json",
            "requires[0].check.types",
            "unknown object 'stik'",
        ),
        (
            {"verbs": [verb("poke", params={"ts": ["stick"]})]},
            {"poke": {"tss": ["stick"]}},
            "world.json",
            "game.params.poke.tss",
            "no parameter 'tss'",
        ),
        (
            {"verbs": [verb("poke", params={"ts": ["stick"]})]},
            {"poke": {"ts": 3}},
            "world.json",
            "game.params.poke.ts",
            "kind of its default",
        ),
        (
            {"verbs": [verb("poke", effects=[{"say": "{param.word}"}])]},
            None,
            "rules.json",
            "verbs[0].effects[0].say",
            "declares no parameter 'word'",
        ),
    ],
)
def test_misused_dispel_and_verb_params_are_refused_naming_file_and_field(tmp_path, rules, params, file, where, says):
    if where is None:  # the well-formed file loads
        tiny_game(tmp_path, rules, params)
        return
    with pytest.raises(GameError) as err:
        tiny_game(tmp_path, rules, params)
    text = str(err.value)
    assert file in text and where in text and says in text, text


def test_the_schema_names_dispel_and_a_verb_s_params():
    defs = json_schema()["$defs"]
    assert {"dispel", "do", "else", "area"} <= set(defs["Dispel"]["properties"])
    assert defs["Dispel"]["properties"]["do"]["items"] == {"$ref": "#/$defs/Effect"}
    assert "params" in defs["VerbSpec"]["properties"]


def test_a_dispel_survives_save_and_load_and_does_not_depend_on_hash_seeds(rules_game, rh):
    h = rh(with_unveil(when={"phantoms": "*", "below": 1}))
    h.ok("wait")
    there = h.events("ghost_formed")[0]["area"]
    h.agent.area = there
    saved = json.loads(json.dumps(h.engine.save_state()))
    first = h.ok("unveil")
    h.engine.load_state(saved)
    assert h.ok("unveil") == first and h.events("unveiled") == [{"object": "stick", "amount": 1}]
    game = rules_game(with_unveil())
    digests = {subprocess_digest(game.path, 3, 40, hash_seed) for hash_seed in ("0", "random")}
    assert len(digests) == 1


def test_the_documented_refract_and_listen_are_mirror_salt_s():
    """docs/game-format.md's examples of the section are the shipped verbs as written (not a paraphrase)."""
    from pathlib import Path

    root = Path(__file__).parents[2]
    doc = (root / "docs" / "game-format.md").read_text(encoding="utf-8")
    section = doc.split("### Mirror Salt's listen and refract", 1)[1].split("\n### ", 1)[0]
    blocks = [json.loads(b.split("```", 1)[0]) for b in section.split("```json")[1:]]
    shipped = json.loads((root / "odyssey_env" / "games" / "mirror_salt" / "rules.json").read_text(encoding="utf-8"))
    verbs = {v["verb"]: v for v in shipped["verbs"]}
    refract = blocks[0]
    for key in ("params", "records_event", "slots", "requires", "effects"):
        assert refract[key] == verbs["refract"][key], key
    here = verbs["listen"]["effects"][0]
    assert here["if"] == {"is_a": "$target", "kind": "here"} and here["then"] == blocks[1]
