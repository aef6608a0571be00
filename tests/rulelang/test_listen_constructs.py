"""What moving Mirror Salt's ``listen`` into its rules.json took (docs/game-format.md, "Mirror Salt's listen and
refract"): an ``any`` slot (a union of domains) and ``is_a``; ``modified``, ``is_phantom`` and ``lies_here:
"*"``; ``for_each`` over phantom piles (``$count``) and over a set's values (``$left``); named note lists and
``{notes.and}``; ``{<npc>.stance}`` / ``$<npc>.stance``, ``{<npc>.coins}``, ``{currency}``, ``{<area>.npc_kinds}``;
``add`` by reference. Misused, each is refused naming file and field."""

from __future__ import annotations

import json

import pytest
from kit import subprocess_digest

from odyssey_env.rulelang.spec import json_schema

from .test_language import step, verb
from .test_phantoms import ghosts

HARK = verb(
    "hark",
    records_event=False,
    slots=[{"name": "target", "domain": "any", "of": ["area", "npc", "near"], "refuse": "No {target} to hark to."}],
    effects=[
        {
            "if": {"is_a": "$target", "kind": "here"},
            "then": [
                {"if": {"lies_here": "*"}, "then": [{"note": "Things lie here."}], "else": [{"note": "Bare."}]},
                {"say": "Here, {target}. {notes.space}"},
            ],
        },
        {
            "if": {"is_a": "$target", "kind": "exit"},
            "then": [
                {"say": "Toward {target}: [{target.npc_kinds}]."},
                {"emit": "harked", "data": {"kinds": "{target.npc_kinds}", "area": "{target}"}},
            ],
        },
        {
            "if": {"all_of": [{"is_a": "$target", "kind": "npc"}, {"none_of": [{"is_a": "$target", "kind": "area"}]}]},
            "then": [
                {
                    "if": {"is_hostile": "$target"},
                    "then": [{"say": "{target} will {target.stance}."}],
                    "else": [{"say": "{target} carries {target.coins} {currency}."}],
                },
                {"emit": "harked_npc", "data": {"stance": "$target.stance", "type": "{target.type}"}},
            ],
        },
        {
            "if": {"none_of": [{"is_a": "$target", "kind": "area"}, {"is_a": "$target", "kind": "npc"}]},
            "then": [{"say": "A thing: {target}."}],
        },
    ],
)


def test_an_any_slot_lists_its_domains_in_turn_and_is_a_tells_them_apart(rh):
    h = rh({"verbs": [HARK]})
    here = h.agent.area
    h.hold("stick")
    listed = h.listed("hark")
    exits = list(h.engine.state.areas[here].exits)
    npcs = list(h.engine.state.areas[here].npcs)
    assert listed[: 1 + len(exits) + len(npcs)] == [f"hark {a}" for a in (here, *exits, *npcs)]
    assert "hark stick" in listed and len(listed) == len(set(listed))
    assert f"Here, {here}. Bare." in h.ok(f"hark {here}")  # the harness emptied the ground here
    h.put("resin")
    assert f"Here, {here}. Things lie here." in h.ok(f"hark {here}")
    assert "A thing: stick." in h.ok("hark stick") and "A thing: resin." in h.ok("hark resin")
    assert "No dragon to hark to." in h.fails("hark dragon", "No dragon")


def test_npc_kinds_stance_coins_and_currency(rh):
    h = rh({"verbs": [HARK]})
    state = h.engine.state
    here = h.agent.area
    yard = next(a for a in state.areas[here].exits if a == "yard")
    rat = next(h for h in state.areas[yard].npcs if state.npcs[h].type == "rat")
    assert f"Toward {yard}: [1 rat]." in h.ok(f"hark {yard}")
    assert h.events("harked") == [{"kinds": {"rat": 1}, "area": yard}]  # a datum of its own: the count by kind
    h.agent.area = yard
    from odyssey_env.verbs.combat import stance

    assert f"{rat} will {stance(h.engine, state.npcs[rat])}." in h.ok(f"hark {rat}")
    assert h.events("harked_npc") == [{"stance": stance(h.engine, state.npcs[rat]), "type": "rat"}]
    h.agent.area = here
    friend = h.npc("tom").handle
    coins = state.npcs[friend].coins
    assert f"{friend} carries {coins} {h.engine.game.currency}." in h.ok(f"hark {friend}")
    assert h.events("harked_npc")[0]["stance"] is None  # a peaceful NPC has no stance: None, not ""


def test_modified_asks_whether_a_modify_rule_holds_an_npc_s_stat(rh):
    cowed = step(
        "cowed", scope="npc", types=["rat"], when={"in_area": ["yard"]}, modify={"stat": "attack", "times": 0.5}
    )
    eye = verb(
        "eye",
        slots=[{"name": "n", "domain": "npc"}],
        effects=[
            {
                "if": {"modified": "$n", "by": "cowed"},
                "then": [{"say": "{n} cowers."}],
                "else": [{"say": "{n} stands tall."}],
            }
        ],
    )
    h = rh({"verbs": [eye], "step_rules": [cowed]})
    h.agent.area = "yard"
    rat = next(n for n in h.engine.state.areas["yard"].npcs)
    h.ok("wait")  # the modify holds from the step rules on
    assert f"{rat} cowers." in h.ok(f"eye {rat}")
    h.agent.area = "camp"
    assert "stands tall." in h.ok(f"eye {h.npc('tom').handle}")


def test_for_each_phantom_is_phantom_named_notes_and_add_by_reference(rh):
    tally = verb(
        "tally",
        effects=[
            {"set": "n", "value": 0},
            {"for_each": "phantom", "do": [{"note": "the {each}", "list": "g"}, {"add": "n", "value": "$count"}]},
            {"if": {"noted": True, "list": "g"}, "then": [{"note": "False: {notes.g.and} ({var.n})."}]},
            {"if": {"noted": False}, "then": [{"note": "Nothing false."}]},
            {"say": "{notes.space}"},
        ],
    )
    sniff = verb(
        "sniff",
        slots=[{"name": "t", "domain": "ground"}],
        effects=[{"if": {"is_phantom": "$t"}, "then": [{"say": "{t} is a ghost."}], "else": [{"say": "{t} is real."}]}],
    )
    rules = ghosts(types=("stick", "resin"))
    rules["verbs"] = [tally, sniff]
    rules["vars"] = [{"name": "n", "kind": "counter", "max": 100}]
    h = rh(rules)
    h.wait(2)
    formed = h.events("ghost_formed") or []
    piles = {a: k for a, k in _piles(h)}
    assert piles, formed
    there = next(iter(piles))
    h.agent.area = there
    kinds = piles[there]
    text = h.ok("tally")
    assert f"False: {' and '.join(f'the {k}' for k in kinds)} ({len(kinds)})." in text
    assert f"{kinds[0]} is a ghost." in h.ok(f"sniff {kinds[0]}")
    h.put("iron_ore")
    assert "iron_ore is real." in h.ok("sniff iron_ore")
    now = dict(_piles(h))
    clean = [a for a in h.engine.state.areas if a not in now]  # none forms where I stand: it is watched
    h.agent.area = clean[0]
    assert "Nothing false." in h.ok("tally")


def _piles(h):
    from odyssey_env.rulelang import phantoms

    for area, kinds in phantoms.piles_of(h.engine, "ghosts").items():
        yield area, list(kinds)


def test_for_each_value_visits_a_lasting_set_with_the_steps_left(rh):
    rules = {
        "vars": [{"name": "seen", "kind": "set", "max": 10, "lasts": 5}, {"name": "kept", "kind": "set", "max": 10}],
        "verbs": [
            verb("mark", effects=[{"remember": "seen", "value": "{here}"}, {"remember": "kept", "value": "{here}"}]),
            verb(
                "recall",
                effects=[
                    {"for_each": "value", "var": "seen", "do": [{"note": "{each} for {left}"}]},
                    {"for_each": "value", "var": "kept", "do": [{"note": "{each} ({left})"}]},
                    {"say": "Recalled: {notes.comma}."},
                ],
            ),
        ],
    }
    h = rh(rules)
    here = h.agent.area
    h.ok("mark")
    assert f"Recalled: {here} for 4, {here} (0)." in h.ok("recall")
    h.wait(3)
    assert f"Recalled: {here} for 0" not in h.ok("recall") and f"{here} for " not in h.feedback
    assert f"{here} (0)" in h.feedback  # the set that does not last keeps it


@pytest.mark.parametrize(
    ("rules", "where", "says"),
    [
        ({"verbs": [verb("hark", slots=[{"name": "t", "domain": "any"}])]}, "slots[0].of", "at least one"),
        (
            {"verbs": [verb("hark", slots=[{"name": "t", "domain": "any", "of": ["npc", "npc"]}])]},
            "slots[0].of",
            "twice",
        ),
        (
            {"verbs": [verb("hark", slots=[{"name": "t", "domain": "any", "of": ["near"], "types": ["stick"]}])]},
            "slots[0].domain",
            "not narrowed",
        ),
        ({"verbs": [verb("hark", slots=[{"name": "t", "domain": "npc", "of": ["near"]}])]}, "slots[0].of", "any slot"),
        (
            {
                "verbs": [
                    verb(
                        "hark",
                        slots=[{"name": "t", "domain": "npc"}],
                        requires=[{"check": {"is_a": "$t", "kind": "moon"}, "refuse": "x"}],
                    )
                ]
            },
            "requires[0].check.kind",
            "moon",
        ),
        (
            {
                "verbs": [
                    verb(
                        "eye",
                        slots=[{"name": "n", "domain": "npc"}],
                        effects=[{"if": {"modified": "$n", "by": "tick"}, "then": []}],
                    )
                ],
                "step_rules": [step("tick")],
            },
            "effects[0].if.by",
            "modify",
        ),
        (
            {"verbs": [verb("recall", effects=[{"for_each": "value", "var": "nope", "do": []}])]},
            "effects[0].var",
            "unknown variable",
        ),
        (
            {
                "vars": [{"name": "c", "kind": "counter"}],
                "verbs": [verb("recall", effects=[{"for_each": "value", "var": "c", "do": []}])],
            },
            "effects[0].var",
            "not a set",
        ),
        (
            {"verbs": [verb("recall", effects=[{"for_each": "npc", "var": "c", "do": []}])]},
            "effects[0].var",
            "over values",
        ),
        ({"verbs": [verb("poke", effects=[{"say": "{notes.g}"}])]}, "effects[0].say", "notes.g"),
        ({"verbs": [verb("poke", effects=[{"note": "x", "list": "comma"}])]}, "effects[0].list", "joined"),
        (
            {
                "vars": [{"name": "c", "kind": "counter"}],
                "verbs": [verb("poke", effects=[{"add": "c", "value": "$nope"}])],
            },
            "effects[0].value",
            "$nope",
        ),
        (
            {
                "vars": [{"name": "c", "kind": "counter"}],
                "verbs": [verb("poke", effects=[{"set": "c", "value": "$removed"}])],
            },
            "effects[0].value",
            "expected an integer",
        ),
        ({"verbs": [verb("poke", effects=[{"say": "{target.stance}"}])]}, "effects[0].say", "target.stance"),
    ],
)
def test_misused_listen_pieces_are_refused_naming_the_field(rules_game, rules, where, says):
    from odyssey_env.game import GameError

    with pytest.raises(GameError) as err:
        rules_game(rules)
    text = str(err.value)
    assert "rules.json" in text and where in text and says in text, text


def test_the_schema_names_the_listen_pieces():
    defs = json_schema()["$defs"]
    assert {"IsA", "Modified", "IsPhantom"} <= set(defs)
    assert "any" in defs["Slot"]["properties"]["domain"]["enum"] and "of" in defs["Slot"]["properties"]
    assert set(defs["IsA"]["properties"]["kind"]["enum"]) == {"here", "exit", "area", "npc", "object"}
    assert "list" in defs["Note"]["properties"] and "var" in defs["ForEach"]["properties"]


def test_an_any_slot_verb_survives_save_and_load_and_does_not_depend_on_hash_seeds(rules_game, rh):
    h = rh({"verbs": [HARK]})
    yard = "yard"
    saved = json.loads(json.dumps(h.engine.save_state()))
    first = h.ok(f"hark {yard}")
    h.engine.load_state(saved)
    assert h.ok(f"hark {yard}") == first
    game = rules_game({"verbs": [HARK]})
    digests = {subprocess_digest(game.path, 3, 40, hash_seed) for hash_seed in ("0", "random")}
    assert len(digests) == 1
