"""The constructs the rule language gained to carry the rest of Lazaret's rules (docs/game-format.md, "Rules as
data"): per-object and per-exit variables (``scope``, ``of``, ``{var.<name>.<slot>}``), the ``{agent.foe}`` and
``{carried.<object>}`` templates, hooks on the engine's verbs (``hooks``), and ``move_toward``. Each is refused,
naming file and field, when misused; each does what the docs say; saving and loading carry their state."""

from __future__ import annotations

import json

import pytest

from odyssey_env.game import GameError
from odyssey_env.quests import hints

from .test_language import one_verb, step, verb

BOARD = {
    "vars": [{"name": "boards", "kind": "counter", "scope": "exit", "max": 3}],
    "verbs": [
        verb(
            "board",
            slots=[{"name": "way", "domain": "exit"}],
            requires=[
                {"check": {"counter": "boards", "of": "$way", "below": 1}, "refuse": "{way} is boarded already."},
                {"check": {"in_combat": False}, "refuse": "Not while {agent.foe} fights me."},
                {"check": {"has": "stick", "count": 2}, "refuse": "Two sticks; I carry {carried.stick}."},
            ],
            effects=[
                {"consume": "stick", "count": 2},
                {"set": "boards", "value": 3, "of": "$way"},
                {"say": "Boarded {way} ({var.boards.way} boards)."},
                {"emit": "boarded", "data": {"a": "{here}", "b": "{way}"}},
            ],
            records_event=False,
        ),
        verb(
            "kick",
            slots=[{"name": "way", "domain": "exit"}],
            requires=[{"check": {"counter": "boards", "of": "$way", "at_least": 1}, "refuse": "Nothing to kick."}],
            effects=[{"add": "boards", "value": -1, "of": "$way"}, {"say": "{var.boards.way} left."}],
        ),
    ],
}


# ============================================================================ refusals naming file and field
@pytest.mark.parametrize(
    ("rules", "where", "says"),
    [
        (
            one_verb(vars=[{"name": "v", "kind": "counter", "scope": "object", "max": 5}], effects=[{"add": "v"}]),
            "verbs[0].effects[0].of",
            "say whose with of",
        ),
        (
            one_verb(vars=[{"name": "v", "kind": "flag"}], effects=[{"set_flag": "v", "of": "$here"}]),
            "verbs[0].effects[0].of",
            "'of' is for per-object and per-exit variables",
        ),
        (
            one_verb(
                vars=[{"name": "v", "kind": "counter", "scope": "object", "max": 5}],
                effects=[{"add": "v", "of": "stick"}],
            ),
            "verbs[0].effects[0].of",
            "give a reference",
        ),
        (
            one_verb(
                vars=[{"name": "v", "kind": "counter", "scope": "object", "max": 5}],
                slots=[{"name": "to", "domain": "exit"}],
                effects=[{"add": "v", "of": "$to"}],
            ),
            "verbs[0].effects[0].of",
            "is a area, not a object",
        ),
        (
            one_verb(
                vars=[{"name": "v", "kind": "counter", "scope": "exit", "max": 5}],
                requires=[{"check": {"counter": "v", "of": "nowhere", "below": 1}, "refuse": "no"}],
            ),
            "verbs[0].requires[0].check.of",
            "unknown area 'nowhere'",
        ),
        (
            one_verb(vars=[{"name": "v", "kind": "counter", "scope": "exit", "max": 5}], effects=[{"say": "{var.v}"}]),
            "verbs[0].effects[0].say",
            "write {var.v.<slot>}",
        ),
        (one_verb(effects=[{"say": "{carried.stik}"}]), "verbs[0].effects[0].say", "unknown object 'stik'"),
        (
            {"step_rules": [step(scope="area", effects=[{"tell": "{agent.foe}"}])]},
            "step_rules[0].effects[0].tell",
            "names nothing",
        ),
        ({"hooks": [{"verb": "attack", "then": [{"say": "hi"}]}]}, "hooks[0].verb", "one of the engine's verbs"),
        ({"hooks": [{"verb": "enter"}]}, "hooks[0]", "an empty hook is a mistake"),
        (
            {"hooks": [{"verb": "enter", "then": [{"say": "a"}]}, {"verb": "enter", "then": [{"say": "b"}]}]},
            "hooks[1].verb",
            "hooked twice",
        ),
        ({"hooks": [{"verb": "enter", "then": [{"say": "{way}"}]}]}, "hooks[0].then[0].say", "{way} names nothing"),
        (
            {"verbs": [verb("enter")], "hooks": [{"verb": "enter", "then": [{"say": "a"}]}]},
            "hooks[0].verb",
            "declared in verbs too",
        ),
    ],
)
def test_a_misused_construct_is_refused_naming_file_and_field(rules_game, rules, where, says):
    with pytest.raises(GameError) as err:
        rules_game(rules)
    lines = str(err.value).splitlines()
    assert any(line.startswith(f"rules.json: {where}:") and says in line for line in lines), lines


# ============================================================================ per-exit and per-object variables
def test_a_per_exit_counter_is_one_value_for_both_sides_of_a_way(rh):
    h = rh(BOARD)
    assert h.listed("board") == []
    h.fails("board yard", "Two sticks; I carry 0.")
    h.hold("stick", 3)
    assert h.listed("board") == ["board yard", "board vault"]
    assert "Boarded yard (3 boards)." in h.ok("board yard")
    assert h.events("boarded") == [{"a": "camp", "b": "yard"}]
    assert h.engine.state.rule_data["rulelang"]["vars"]["boards"] == {"camp|yard": 3}
    h.fails("board yard", "yard is boarded already.")
    assert h.listed("board") == []  # one stick left
    assert h.listed("kick") == ["kick yard"]
    h.agent.area = "yard"  # the same way, from the other side
    assert h.listed("kick") == ["kick camp"]
    assert "2 left." in h.ok("kick camp")
    h.ok("kick camp")
    h.ok("kick camp")
    assert h.engine.state.rule_data["rulelang"]["vars"]["boards"] == {}  # back at its default: dropped
    h.fails("kick camp", "Nothing to kick.")


def test_the_agent_s_foe_and_what_it_carries_fill_a_refusal(rh):
    h = rh(BOARD)
    h.hold("stick", 2)
    rat = h.npc("rat")
    rat.engaged, h.agent.combat = "player", rat.handle
    h.fails("board yard", f"Not while {rat.handle} fights me.")


def test_a_per_object_counter_keeps_each_thing_apart(rh):
    h = rh(
        one_verb(
            "charge",
            vars=[{"name": "charge", "kind": "counter", "scope": "object", "max": 5}],
            slots=[{"name": "bag", "domain": "carried", "types": ["small_bag"]}],
            requires=[{"check": {"counter": "charge", "of": "$bag", "below": 2}, "refuse": "{bag} is full."}],
            effects=[{"add": "charge", "of": "$bag"}, {"say": "{bag} holds {var.charge.bag}."}],
        )
    )
    a, b = h.hold("small_bag", 2)
    assert "holds 1." in h.ok(f"charge {a}") and "holds 2." in h.ok(f"charge {a}")
    assert h.listed("charge") == [f"charge {b}"]
    h.fails(f"charge {a}", f"{a} is full.")
    assert "holds 1." in h.ok(f"charge {b}")
    assert h.engine.state.rule_data["rulelang"]["vars"]["charge"] == {a: 2, b: 1}
    assert h.engine.rules.actions["charge"].depends_on is None  # a variable: listed afresh


def test_the_oracle_is_sent_to_the_area_an_event_records(rh):
    h = rh(BOARD)
    rule, e, agent = h.engine.rules.actions["board"], h.engine, h.agent
    assert rule.needs(e, agent, {"a": "yard"}) == hints.has("stick", 2)
    h.hold("stick", 2)
    assert rule.needs(e, agent, {"a": "yard"}) == hints.in_area("yard")
    assert rule.needs(e, agent, {"a": "camp"}) is None and rule.needs(e, agent, {}) is None


def test_per_exit_values_continue_through_a_saved_state(rh):
    h = rh(BOARD)
    h.hold("stick", 2)
    h.ok("board yard")
    saved = json.loads(json.dumps(h.engine.save_state()))
    h.ok("kick yard")
    h.engine.load_state(saved)
    assert "2 left." in h.ok("kick yard")


# ============================================================================ hooks on the engine's verbs
GATE = {
    "vars": [{"name": "boards", "kind": "counter", "scope": "exit", "max": 3}],
    "hooks": [
        {
            "verb": "enter",
            "description": "Walk to a neighbouring area; the yard only with a stick in hand.",
            "requires": [
                {
                    "check": {"any_of": [{"none_of": [{"in_area": ["camp"]}]}, {"holds": "stick"}]},
                    "refuse": "Cannot go to {to} from {here} without a stick.",
                }
            ],
            "then": [
                {
                    "if": {"counter": "boards", "of": "$to", "at_least": 1},
                    "then": [{"say": "Over the boards to {to}."}],
                },
                {"say": "Left {here} for {to}."},
            ],
            "facts": [
                {
                    "topic": "moving",
                    "question": "What do I need to leave the camp?",
                    "answer": "a stick",
                    "distractors": ["a key", "nothing", "a torch"],
                },
            ],
        }
    ],
}


def test_a_hook_adds_a_refusal_and_effects_to_enter(rh):
    h = rh(GATE)
    enter = h.engine.rules.actions["enter"]
    assert enter.description.startswith("Walk to a neighbouring area; the yard")
    assert h.listed("enter") == []  # the vault is locked, the yard needs a stick
    h.fails("enter yard", "Cannot go to yard from camp without a stick.")
    h.fails("enter shed", "Cannot enter shed: it is not a neighboring area.")  # the verb's own refusals first
    h.fails("enter camp", "I am already in camp.")
    rat = h.npc("rat")
    rat.engaged, h.agent.combat = "player", rat.handle
    h.fails("enter yard", f"Cannot leave while fighting {rat.handle}.")
    rat.engaged, h.agent.combat = None, None
    h.hold("stick")
    assert h.listed("enter") == ["enter yard"]
    h.engine.state.rule_data.setdefault("rulelang", {"vars": {}, "timers": [], "spawned": {}, "was": {}})
    h.engine.state.rule_data["rulelang"]["vars"]["boards"] = {"camp|yard": 1}
    text = h.ok("enter yard")
    assert h.agent.area == "yard"
    assert text.index("I entered yard.") < text.index("Over the boards to yard.") < text.index("Left camp for yard.")
    back = h.ok("enter camp")  # the same way from the other side: the same boards
    assert "Over the boards to camp." in back and "Left yard for camp." in back
    assert [f.answer for f in enter.facts(h.engine.game)][-1] == "a stick"
    assert set(enter.depends_on) == {"place", "exits", "combat", "hands"}  # the verb's and what the hook reads


def test_a_hook_hints_what_its_refusal_needs(rh):
    h = rh(GATE)
    enter, e = h.engine.rules.actions["enter"], h.engine
    assert enter.needs(e, h.agent, {"area": "yard"}) == hints.has("stick")
    h.hold("stick")
    assert enter.needs(e, h.agent, {"area": "yard"}) is None


# ============================================================================ move_toward
def hunt(**extra):
    effect = {"move_toward": "$npc", "range": 1, "moved": [{"tell": "{npc} creeps in from {here}.", "area": "$next"}]}
    effect.update(extra)
    return {
        "vars": [{"name": "boards", "kind": "counter", "scope": "exit", "max": 3}],
        "step_rules": [step("creep", scope="npc", types=["rat"], effects=[effect])],
    }


def test_an_npc_moves_one_way_toward_the_living_and_says_so_where_it_arrives(rh):
    h = rh(hunt())
    (rat,) = [n for n in h.engine.state.npcs.values() if n.type == "rat"]
    assert rat.area == "yard" and h.agent.area == "camp"
    text = h.ok("wait")
    assert rat.area == "camp" and rat.handle in h.engine.state.areas["camp"].npcs
    assert f"{rat.handle} creeps in from yard." in text
    h.ok("wait")
    assert rat.area == "camp"  # beside me: it stays


def test_an_npc_stays_when_fighting_out_of_reach_or_kept_out(rh):
    h = rh(hunt(avoid=["camp"]))
    (rat,) = [n for n in h.engine.state.npcs.values() if n.type == "rat"]
    h.ok("wait")
    assert rat.area == "yard"  # the camp is to be avoided
    h = rh(hunt())
    (rat,) = [n for n in h.engine.state.npcs.values() if n.type == "rat"]
    rat.engaged = "someone"
    h.ok("wait")
    assert rat.area == "yard"
    rat.engaged = None
    h.agent.area = "shed"  # behind a locked way: no open way within reach
    h.ok("wait")
    assert rat.area == "yard"


def test_a_blocked_way_runs_stopped_instead(rh):
    stopped = [
        {"add": "boards", "value": -1, "of": "$next"},
        {"tell": "{npc} gnaws at the boards to {here} ({var.boards.next} left).", "area": "$next"},
    ]
    h = rh(hunt(blocked={"counter": "boards", "of": "$next", "at_least": 1}, stopped=stopped))
    (rat,) = [n for n in h.engine.state.npcs.values() if n.type == "rat"]
    h.engine.state.rule_data.setdefault("rulelang", {"vars": {}, "timers": [], "spawned": {}, "was": {}})
    h.engine.state.rule_data["rulelang"]["vars"]["boards"] = {"camp|yard": 2}
    assert f"{rat.handle} gnaws at the boards to yard (1 left)." in h.ok("wait") and rat.area == "yard"
    assert "(0 left)" in h.ok("wait") and rat.area == "yard"
    assert f"{rat.handle} creeps in from yard." in h.ok("wait") and rat.area == "camp"


@pytest.mark.parametrize(
    ("extra", "where", "says"),
    [
        ({"range": 0}, "step_rules[0].effects[0].range", "between 1 and 20"),
        ({"avoid": ["moon"]}, "step_rules[0].effects[0].avoid[0]", "unknown area 'moon'"),
        ({"stopped": [{"tell": "x"}]}, "step_rules[0].effects[0].stopped", "give blocked"),
        ({"blocked": {"counter": "boards", "below": 1}}, "step_rules[0].effects[0].blocked.of", "say whose"),
        ({"move_toward": "rat"}, "step_rules[0].effects[0].move_toward", "by reference"),
    ],
)
def test_a_bad_move_toward_is_refused_naming_its_field(rules_game, extra, where, says):
    with pytest.raises(GameError) as err:
        rules_game(hunt(**extra))
    lines = str(err.value).splitlines()
    assert any(line.startswith(f"rules.json: {where}") and says in line for line in lines), lines


def test_next_is_bound_only_inside_a_move_toward(rules_game):
    with pytest.raises(GameError, match=r"step_rules\[0\]\.effects\[1\]\.tell: \{next\} names nothing"):
        rules_game(
            {"step_rules": [step(scope="npc", effects=[hunt()["step_rules"][0]["effects"][0], {"tell": "{next}"}])]}
        )


def test_the_new_constructs_do_not_depend_on_hash_seeds(rules_game):
    from kit import subprocess_digest

    rules = hunt(blocked={"counter": "boards", "of": "$next", "at_least": 1}, stopped=[{"tell": "{npc} waits."}])
    rules["step_rules"][0]["trigger"] = {"chance": 0.5}
    rules["step_rules"].append(
        step("board", scope="area", trigger={"every": 7}, effects=[{"set": "boards", "value": 2, "of": "yard"}])
    )
    game = rules_game(rules)
    digests = {subprocess_digest(game.path, 3, 60, hash_seed) for hash_seed in ("0", "1", "random")}
    assert len(digests) == 1
