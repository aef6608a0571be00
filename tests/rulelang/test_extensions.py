"""The constructs the rule language gained to carry Lazaret's concoct and shove (docs/game-format.md, "Rules
as data"): type slots and ``is_type``, ``is_hostile``, ``salvage`` / ``winded`` / ``strike``, typed event
data, ``{received}`` / ``{salvaged}`` / ``{<slot>.type}``, ``records_event``, and the oracle's ``needs``
derived from an emit's guard and from other areas. Each is refused, naming file and field, when misused."""

from __future__ import annotations

import pytest

from odyssey_env.game import GameError
from odyssey_env.quests import hints

from .test_language import one_verb, step, verb

GRIND = {
    "verbs": [
        verb(
            "grind",
            slots=[
                {"name": "a", "domain": "type", "types": ["resin", "stick"], "refuse": "{a} is no ingredient."},
                {"name": "b", "domain": "type", "types": ["resin", "stick"], "refuse": "{b} is no ingredient."},
            ],
            requires=[
                {"check": {"none_of": [{"same": ["$a", "$b"]}]}, "refuse": "Not {a} with itself."},
                {"check": {"has": "$a"}, "refuse": "I carry no {a}."},
                {"check": {"has": "$b"}, "refuse": "I carry no {b}."},
            ],
            effects=[
                {"consume": "$a"},
                {"consume": "$b"},
                {
                    "if": {"all_of": [{"same": ["$a", "stick"]}, {"same": ["$b", "resin"]}]},
                    "then": [
                        {"produce": "torch", "cap": 10},
                        {"say": "A torch ({received})."},
                        {"emit": "ground", "data": {"made": "torch", "from": ["{a}", "{b}"], "ok": True, "n": 1}},
                    ],
                    "else": [{"say": "Nothing."}, {"emit": "ground", "data": {"made": "", "ok": False}}],
                },
            ],
            records_event=False,
        )
    ]
}


def test_type_slots_list_in_their_order_and_refuse_apart_from_what_i_carry(rh):
    h = rh(GRIND)
    assert h.listed("grind") == []
    h.hold("resin")
    h.hold("stick")
    assert h.listed("grind") == ["grind resin stick", "grind stick resin"]
    h.fails("grind apple stick", "apple is no ingredient.")
    h.fails("grind stick stick", "Not stick with itself.")
    h.agent.hands.pop("resin")
    h.fails("grind stick resin", "I carry no resin.")
    assert h.engine.rules.actions["grind"].depends_on == ("hands", "containers")


def test_typed_event_data_received_and_no_event_of_the_verb_s_own(rh):
    h = rh(GRIND)
    h.hold("stick")
    h.hold("resin")
    assert h.ok("grind stick resin") == "A torch (in my hands)."
    assert h.events("ground") == [{"made": "torch", "from": ["stick", "resin"], "ok": True, "n": 1}]
    assert h.kinds() == ["object_acquired", "ground"]  # no "grind" event: records_event is false
    assert h.engine.rules.actions["grind"].emits == ("ground",)


def test_needs_reads_the_slot_values_an_emit_s_guard_pins(rh):
    h = rh(GRIND)
    e, a = h.engine, h.agent
    r = e.rules.actions["grind"]
    assert r.needs(e, a, {"made": "torch"}) == hints.has("stick")
    h.hold("stick")
    assert r.needs(e, a, {"made": "torch"}) == hints.has("resin")
    h.hold("resin")
    assert r.needs(e, a, {"made": "torch"}) is None
    assert r.needs(e, a, {"made": "club"}) is None  # no emit of this verb makes one


TOPPLE = one_verb(
    "topple",
    slots=[
        {"name": "thing", "domain": "type", "types": ["club", "plank", "torch"]},
        {"name": "foe", "domain": "npc", "refuse": "No {foe} here."},
    ],
    requires=[
        {"check": {"lies_here": "$thing"}, "refuse": "No {thing} lies here."},
        {"check": {"is_hostile": "$foe"}, "refuse": "{foe} is no enemy."},
    ],
    effects=[
        {"remove": "$thing"},
        {"salvage": "$thing"},
        {"winded": True},
        {"if": {"same": ["{salvaged}", ""]}, "then": [{"say": "It falls."}], "else": [{"say": "Into {salvaged}."}]},
        {"emit": "toppled", "data": {"on": "{foe}", "kind": "{foe.type}", "what": "{thing.type}"}},
        {"strike": "$foe", "damage": 5, "how": "The {thing} crushes"},
    ],
)


def test_salvage_winded_and_a_strike_through_combat(rh):
    h = rh(TOPPLE)
    h.put("club")
    rat, tom = h.npc("rat"), h.npc("tom")
    assert h.listed("topple") == [f"topple club {rat.handle}"]
    h.fails(f"topple club {tom.handle}", f"{tom.handle} is no enemy.")
    h.fails(f"topple plank {rat.handle}", "No plank lies here.")
    text = h.ok(f"topple club {rat.handle}")
    assert "Into 1 stick." in text and f"The club crushes {rat.handle} for 5 damage (7/12 health left)." in text
    assert h.area.objects == {"stick": 1} and h.agent.stamina == 0.2
    assert rat.engaged == h.agent.id and h.agent.combat == rat.handle
    assert h.events("toppled") == [{"on": rat.handle, "kind": "rat", "what": "club"}]
    rat.hp = 3
    h.put("torch")
    assert "It falls." in h.ok(f"topple torch {rat.handle}")  # a torch's recipe: 1 stick, 1 resin: halves are 0
    assert rat.handle not in h.state.npcs and "npc_defeated" in h.kinds()


def test_needs_of_a_verb_about_what_is_here_points_to_the_nearest_area_where_it_works(rh):
    h = rh(TOPPLE)
    e, a = h.engine, h.agent
    r = e.rules.actions["topple"]
    assert r.needs(e, a, {}) is None  # nowhere: no hint
    h.put("club", area="yard")  # the yard has its rat
    assert r.needs(e, a, {}) == hints.in_area("yard")
    assert r.needs(e, a, {"kind": "wolf"}) is None  # the data an emit fills from a slot narrow the search
    assert r.needs(e, a, {"kind": "rat"}) == hints.in_area("yard")
    assert a.area == "camp"  # the search put me back


@pytest.mark.parametrize(
    ("rules", "where", "says"),
    [
        (one_verb(slots=[{"name": "x", "domain": "type"}]), "verbs[0].slots[0].domain", "names its object types"),
        (
            one_verb(requires=[{"check": {"is_type": "stick"}, "refuse": "no"}]),
            "verbs[0].requires[0].check.is_type",
            "give types, categories",
        ),
        (
            one_verb(requires=[{"check": {"is_type": "stick", "categories": ["gem"]}, "refuse": "no"}]),
            "verbs[0].requires[0].check.categories[0]",
            "unknown category",
        ),
        (
            one_verb(requires=[{"check": {"is_type": "stick", "types": ["stik"]}, "refuse": "no"}]),
            "verbs[0].requires[0].check.types[0]",
            "unknown object 'stik'",
        ),
        (
            one_verb(requires=[{"check": {"is_hostile": "$foe"}, "refuse": "no"}]),
            "verbs[0].requires[0].check.is_hostile",
            "names nothing",
        ),
        (one_verb(effects=[{"salvage": "club", "share": 0}]), "verbs[0].effects[0].share", "between 1"),
        (one_verb(effects=[{"winded": False}]), "verbs[0].effects[0].winded", "takes true"),
        (
            one_verb(slots=[{"name": "f", "domain": "npc"}], effects=[{"strike": "$f", "damage": 0}]),
            "verbs[0].effects[0].damage",
            "between 1",
        ),
        (
            {"step_rules": [step(scope="npc", effects=[{"strike": "$npc", "damage": 1}])]},
            "step_rules[0].effects[0].strike",
            "a verb's",
        ),
        (one_verb(effects=[{"say": "x"}], records_event=False), "verbs[0].records_event", "add an emit"),
        (
            one_verb(effects=[{"emit": "x"}], records_event=False, event="poked"),
            "verbs[0].event",
            "records_event false drops it",
        ),
        (one_verb(slots=[{"name": "received", "domain": "held"}]), "verbs[0].slots[0].name", "is taken"),
        ({"step_rules": [step(effects=[{"say": "{received}"}])]}, "step_rules[0].effects[0].say", "{received}"),
        (
            one_verb(slots=[{"name": "n", "domain": "amount", "max": 2}], effects=[{"say": "{n.type}"}]),
            "verbs[0].effects[0].say",
            "{n.type}",
        ),
        (
            one_verb(effects=[{"emit": "x", "data": {"who": ["{nobody}"]}}]),
            "verbs[0].effects[0].data.who[0]",
            "{nobody}",
        ),
    ],
)
def test_a_misused_new_construct_is_refused_naming_file_and_field(rules_game, rules, where, says):
    with pytest.raises(GameError) as err:
        rules_game(rules)
    lines = str(err.value).splitlines()
    assert any(line.startswith(f"rules.json: {where}:") and says in line for line in lines), lines
