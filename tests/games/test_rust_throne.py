"""Rust Throne: a kingdom of broken war machines (sizes, its six verbs, its eight step rules, its quest).

The sizes (those of the paper's game it stands in for) are computed from the data as ``odyssey games``
prints them. Each verb of the game's ``rules.py`` is played to success and to every refusal, with its exact
valid-action listing and its events; each step rule is shown firing and not firing. Most tests run a *quiet*
copy of the game (no ambushes, night spawns, respawns or reclaimed territory unless a test asks for them),
standing in an emptied signal tower, so that each test places exactly what it talks about.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import kit
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kit import PLAYER, Harness, conditions, obtainable, subprocess_digest

from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.env import OdysseyEnv
from odyssey_env.game import Game, GameError
from odyssey_env.games.rust_throne import rules as shipped_rules
from odyssey_env.listing import CHECK_ENV
from odyssey_env.quests.main_quest import plan
from odyssey_env.rules import BASE_RULE_MODULES, BASE_VERBS, RuleBook, RuleError
from odyssey_env.steprules.living import move_npc
from odyssey_env.verbs.combat import stance
from odyssey_env.world import add

GAME = "rust_throne"
VERBS = ("salvage", "scavenge", "rally", "siphon", "jam", "overload")
DYNAMICS = (
    "corrosion",
    "intimidation",
    "reclamation",
    "united_presence",
    "tactical_warnings",
    "forge_migration",
    "scrap_mending",
    "devil_drain",
)
QUIET = {**kit.QUIET, "respawn": {"enemy_chance": 0.0}, "reclamation": {"chance": 0.0}}
#: Events this kingdom's world makes on its own (beside the engine's): a refused command may coincide with them.
OWN_WORLD_EVENTS = frozenset(
    {
        "npc_intimidated",
        "npc_powered_down",
        "npc_fled",
        "npc_mended",
        "tactical_warning",
        "strike_jammed",
        "ally_struck",
        "object_corroded",
        "territory_reclaimed",
        "merchant_migrated",
        "devil_burn",
        "united_presence",
        "agent_hit",
        "agent_ambushed",
        "agent_died",
        "level_up",
        "npc_spawned",
        "npc_respawned",
        "npc_defeated",
    }
)


@pytest.fixture(scope="module", autouse=True)
def _check_valid_actions():
    """Every engine built here compares each cached valid-action listing with a fresh one and fails on any
    difference (odyssey_env.listing): each walk and listing below also checks the verbs' ``depends_on``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CHECK_ENV, "1")
        yield


def variant(root: Path, params: dict[str, dict[str, Any]] | None = None) -> Game:
    """:func:`kit.variant` of this game with the shipped rules module (the one ``tools/mutation.py`` mutates,
    whose checks must refuse a bad copy)."""
    return kit.variant(GAME, root, params, rules=shipped_rules)


class Kingdom(Harness):
    """The kit's harness on this kingdom, whose world does more on its own, and where a refused command is
    never listed."""

    refusal_events = OWN_WORLD_EVENTS
    refusal_unlisted = True


@pytest.fixture(scope="module")
def quiet_game(tmp_path_factory) -> Game:
    return variant(tmp_path_factory.mktemp("quiet"), QUIET)


@pytest.fixture
def k(quiet_game) -> Kingdom:
    """A quiet kingdom, standing in the emptied signal tower (level 4, one step from the muster yard)."""
    harness = Kingdom(Engine(quiet_game, 0, options={"expansion": False}))
    harness.goto("signal_tower")
    return harness


def _kinds(events) -> list[str]:
    return [e.kind for e in events]


# ============================================================================ sizes and data
def test_sizes_match_the_issue() -> None:
    s = load_game(GAME).summary()
    assert (s["places"], s["areas"], s["area_levels"]) == (4, 13, "1-5")
    assert (s["object_types"], s["npc_types"], s["enemy_types"], s["merchant_types"]) == (96, 7, 4, 2)
    assert (s["chapters"], s["stages"], s["leaves"], s["dag"]) == (4, 40, 22, True)
    assert s["tutorial_steps"] == 0 and s["side_quests"] and s["expansion"]
    assert s["extra_verbs"] == list(VERBS) and s["verbs"] == len(BASE_VERBS) + 6
    assert sorted(s["extra_step_rules"]) == sorted(DYNAMICS)


def test_odyssey_games_prints_the_sizes(capsys) -> None:
    from odyssey_eval.catalog import main

    assert main([GAME, "--details"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith(GAME))
    assert row.split()[2:12] == ["4", "13", "1-5", "96", "7", "40", "22", "4", "on", "0"]
    assert "(40 stages, 22 leaves, a DAG, in 4 chapters)" in out
    assert "NPC types (7): 4 enemies, 2 merchants" in out
    assert "extra verbs (6): salvage, scavenge, rally, siphon, jam, overload" in out
    assert "extra step rules (8):" in out


def test_rule_tables_name_real_things() -> None:
    """The parameters of the game's rules name objects, NPCs and areas that exist (a typo would crash play)."""
    game = load_game(GAME)
    rules = game.rules
    for wreck, parts in rules.actions["salvage"].settings.parts.items():
        assert wreck in game.objects and all(p in game.objects and not game.objects[p].instanced for p in parts)
    for area, finds in rules.actions["scavenge"].settings.finds.items():
        assert area in game.areas and all(f in game.objects and not game.objects[f].instanced for f in finds)
    siphon = rules.actions["siphon"].settings
    for full, empty in siphon.cells.items():
        assert game.objects[full].size == game.objects[empty].size  # a swap in a pack never overfills it
    assert set(siphon.machines) <= set(game.npcs)
    assert set(rules.actions["rally"].settings.recruits) <= set(game.npcs)
    assert set(rules.actions["jam"].settings.wedges) <= set(game.objects)
    assert set(rules.actions["overload"].settings.components) <= set(game.objects)
    devil = rules.step_rule("devil_drain").settings.objects
    assert len(devil) == 6 and all(game.objects[o].spawn_weight == 0 or o == "hellbrass_shard" for o in devil)
    assert all(s in game.objects for s in rules.step_rule("forge_migration").settings.stations)


def test_quest_predicates_name_a_verb_and_end_their_plan_with_its_event() -> None:
    game = load_game(GAME)
    events = {
        "salvage": "object_salvaged",
        "scavenge": "object_scavenged",
        "rally": "npc_rallied",
        "siphon": "power_siphoned",
        "jam": "npc_jammed",
        "overload": "component_overloaded",
    }
    names = set(game.objects) | set(game.npcs) | set(game.areas) | {"charge", "drain"}
    used = set()
    for stage in game.quest.stages():
        for c in conditions(stage.done):
            if c.type == "predicate" and c.name == "has_used":
                verb = c.args["verb"]
                used.add(verb)
                assert verb in VERBS and c.args.get("on") in names, stage.id
                assert c.plan and c.plan[-1].name == "did" and c.plan[-1].args["kind"] == events[verb], stage.id
    assert used == set(VERBS)  # the quest walks the player through every verb of the kingdom


def test_every_stage_hint_names_something_real() -> None:
    game = load_game(GAME)
    names = set(game.areas) | set(game.objects) | set(game.npcs)
    for stage in game.quest.stages():
        words = set(stage.hint.replace(",", " ").replace(".", " ").replace(":", " ").replace(";", " ").split())
        assert len(stage.hint) > 40, stage.id
        assert words & names, stage.id


def test_quest_objects_have_fixed_sources() -> None:
    """What the stages name comes from fixed placements, merchants, drops, salvage, finds or recipes over
    those: never only from the random scatter."""
    game = load_game(GAME)
    fixed: set[str] = set()
    for area in game.areas.values():
        fixed |= set(area.objects)
    for t in game.npcs.values():
        fixed |= set(t.stock) | set(t.drops)
    for parts in game.rules.actions["salvage"].settings.parts.values():
        fixed |= set(parts)
    for stage in game.quest.stages():
        fixed |= {p.object for p in stage.place}

    for stage in game.quest.stages():
        for c in conditions(stage.done):
            for obj in ((c.object,) if c.object else ()) + (c.objects[:1] if c.type == "equipped_any_of" else ()):
                assert obtainable(game, fixed, obj), f"{stage.id}: {obj}"


def test_the_quest_is_a_dag_of_four_chapter_trees() -> None:
    game = load_game(GAME)
    p = plan(game.quest.main)
    chapters = game.quest.main.chapters
    assert [len(ch.stages) for ch in chapters] == [10, 10, 10, 10]
    for i, ch in enumerate(chapters):
        roots = [s for s in ch.stages if not any(s.id in p.requires[o.id] for o in ch.stages)]
        assert len(roots) == 1, ch.id  # each chapter closes on one goal
        if i:  # the next chapter's leaves wait for it
            prev_root = chapters[i - 1].stages[-1].id
            leaves = [s for s in ch.stages if not any(r in {x.id for x in ch.stages} for r in p.requires[s.id])]
            assert all(p.requires[s.id] == (prev_root,) for s in leaves), ch.id


def test_a_stage_is_awarded_only_after_its_prerequisites() -> None:
    """Two black oil carried from the start do not complete "tap_black_oil" before chapter 1 is done."""
    engine = Engine(load_game(GAME), 0, options={"expansion": False})
    agent = engine.state.agents[PLAYER]
    agent.hands["black_oil"] = 2
    engine.step({PLAYER: "wait"})
    done = engine.state.rule_data["main_quest"]["agents"][PLAYER]["done"]
    assert "tap_black_oil" not in done
    for stage in [s.id for s in engine.game.quest.main.chapters[0].stages]:
        done.append(stage)
    engine.state.rule_data["main_quest"]["agents"][PLAYER]["open"] = ["sign_the_camp_roll"]
    done.remove("sign_the_camp_roll")
    agent.hands = {"tin_placard_0": 1}
    engine.state.instances["tin_placard_0"].text = "I go out for the  scrapwall"
    engine.step({PLAYER: "drop tin_placard_0"})
    assert "sign_the_camp_roll" in done and "tap_black_oil" not in done
    agent.hands["black_oil"] = 2
    out = engine.step({PLAYER: "wait"})[PLAYER]
    assert "tap_black_oil" in done and out.reward.quest == 1


# ============================================================================ salvage
def test_salvage_a_wreck_on_the_ground(k) -> None:
    (husk,) = k.put("rustling_husk")
    assert k.listed("salvage") == [f"salvage {husk}"]
    text = k.ok(f"salvage {husk}")
    assert "I strip rustling_husk for parts: 1 copper_coil, 1 tin_sheet, 1 rust_scrap now lie at my feet." in text
    assert k.area.objects == {"copper_coil": 1, "tin_sheet": 1, "rust_scrap": 1}
    assert k.emitted()[0] == (
        "object_salvaged",
        {
            "object": "rustling_husk",
            "handle": "rustling_husk",
            "parts": {"copper_coil": 1, "tin_sheet": 1, "rust_scrap": 1},
            "area": "signal_tower",
        },
    )
    assert k.state.rule_data["salvage"]["log"][PLAYER] == {"": 1, "rustling_husk": 1}


def test_salvage_from_hands_and_from_the_pack(k) -> None:
    pack = k.wear("tinker_satchel")
    k.hold("hound_carcass")
    k.stash(pack, "scrap_heap")
    assert sorted(k.listed("salvage")) == ["salvage hound_carcass", "salvage scrap_heap"]
    k.ok("salvage hound_carcass")
    assert "hound_carcass" not in k.agent.hands and k.area.objects["gear_tooth"] == 2
    k.ok("salvage scrap_heap")
    assert k.state.instances[pack].contents == {} and k.area.objects["rust_scrap"] == 4
    assert k.listed("salvage") == []


def test_salvage_refusals(k) -> None:
    k.put("iron_rod")
    k.put("rustling_husk", area="muster_yard")
    k.fails(
        "salvage rustling_husk", "Cannot salvage rustling_husk: it is not in my hands, my pack or on the ground here."
    )
    k.fails("salvage iron_rod", "Cannot salvage iron_rod: there is nothing in it worth stripping.")
    k.fails("salvage dragon", "Cannot salvage dragon: it is not in my hands")


# ============================================================================ scavenge
def test_scavenge_turns_up_each_hidden_thing_once_then_the_area_is_picked_clean(k) -> None:
    found = []
    for left in (1, 0):
        assert k.listed("scavenge") == ["scavenge"]
        text = k.ok("scavenge")
        ((_kind, data),) = [e for e in k.emitted() if e[0] == "object_scavenged"]
        assert data["area"] == "signal_tower" and data["left"] == left
        assert f"Searching signal_tower, I turn up 1 {data['object']} (in my hands)." in text
        found.append(data["object"])
    assert sorted(found) == ["quartz_fuse", "stormglass"]
    assert k.agent.hands == {"quartz_fuse": 1, "stormglass": 1}
    k.fails("scavenge", "I search signal_tower again, but it has been picked clean.")
    assert k.state.rule_data["scavenge"]["log"][PLAYER]["signal_tower"] == 2


def test_scavenge_with_full_hands_leaves_the_find_on_the_ground(k) -> None:
    k.hold("iron_rod", 2)
    text = k.ok("scavenge")
    assert "(on the ground)" in text and sum(k.area.objects.values()) == 1


def test_scavenge_where_nothing_is_hidden(k) -> None:
    k.goto("rust_throne")
    k.fails("scavenge", "I search rust_throne, but nothing useful is hidden here.")


def test_scavenge_draws_from_the_episode_rng(quiet_game) -> None:
    """Which find comes first depends on the seed, and the same seed finds the same thing."""
    firsts = []
    for seed in range(8):
        h = Kingdom(Engine(quiet_game, seed, options={"expansion": False}))
        h.goto("wreck_field")
        h.ok("scavenge")
        firsts.append(h.events("object_scavenged")[0]["object"])
    assert len(set(firsts)) > 1
    h = Kingdom(Engine(quiet_game, 3, options={"expansion": False}))
    h.goto("wreck_field")
    h.ok("scavenge")
    assert h.events("object_scavenged")[0]["object"] == firsts[3]


# ============================================================================ siphon, rally
def test_siphon_a_charge_into_a_dormant_sentinel_wakes_it(k) -> None:
    sentinel = k.npc("oath_sentinel")
    sentinel.hp = 10
    (cell,) = k.hold("charged_cell")
    assert k.listed("siphon") == [f"siphon {cell} {sentinel.handle}"]
    text = k.ok(f"siphon {cell} {sentinel.handle}")
    assert sentinel.hp == 50 and k.agent.hands == {"drained_cell": 1}
    assert "it stirs and stands awake (+40 health, 50/60). My cell is now a drained_cell." in text
    assert k.emitted()[0] == (
        "power_siphoned",
        {
            "direction": "charge",
            "npc": sentinel.handle,
            "type": "oath_sentinel",
            "object": "charged_cell",
            "amount": 40,
        },
    )
    assert sentinel.handle in k.state.rule_data["rally"]["awake"]
    log = k.state.rule_data["siphon"]["log"][PLAYER]
    assert log == {"": 1, "oath_sentinel": 1, "charge": 1}


def test_siphon_from_the_pack_keeps_the_cell_in_the_pack(k) -> None:
    pack = k.wear("tinker_satchel")
    k.stash(pack, "charged_cell")
    sentinel = k.npc("oath_sentinel")  # full health but dormant: a charge still wakes it
    k.ok(f"siphon charged_cell {sentinel.handle}")
    assert k.state.instances[pack].contents == {"drained_cell": 1}
    assert sentinel.hp == 60 and k.events("power_siphoned")[0]["amount"] == 0
    k.fails(f"siphon drained_cell {sentinel.handle}", "I will not drain an ally.")
    k.hold("charged_cell")
    k.fails(f"siphon charged_cell {sentinel.handle}", "it is awake and fully charged.")


def test_siphon_drains_a_hostile_machine_into_an_empty_cell(k) -> None:
    hound = k.npc("gearhound")
    k.hold("drained_cell")
    assert k.listed("siphon") == [f"siphon drained_cell {hound.handle}"]
    text = k.ok(f"siphon drained_cell {hound.handle}")
    assert hound.hp == 42 - 15 and k.agent.hands == {"charged_cell": 1}
    assert "the cell hums, a charged_cell now" in text and "The siphon drains gearhound_" in text
    assert hound.engaged == PLAYER and k.agent.combat == hound.handle
    assert k.kinds()[0] == "power_siphoned" and k.events("power_siphoned")[0]["direction"] == "drain"
    assert k.state.rule_data["siphon"]["log"][PLAYER]["drain"] == 1


def test_a_drain_can_finish_a_machine(k) -> None:
    rat = k.npc("rustling")
    rat.hp = 4
    k.hold("drained_cell")
    k.ok(f"siphon drained_cell {rat.handle}")
    assert k.events("power_siphoned")[0]["amount"] == 4
    assert k.events("npc_defeated")[0]["type"] == "rustling" and rat.handle not in k.state.npcs


def test_siphon_refusals(k) -> None:
    hound = k.npc("gearhound")
    peddler = k.npc("scrap_peddler")
    k.hold("charged_cell")
    k.hold("iron_rod")
    k.fails(f"siphon drained_cell {hound.handle}", "Cannot siphon with drained_cell: I do not carry it.")
    k.fails(f"siphon iron_rod {hound.handle}", "Cannot siphon with iron_rod: it cannot hold power.")
    k.fails("siphon charged_cell ghost_7", "Cannot siphon ghost_7: there is no one by that name here.")
    k.fails(f"siphon charged_cell {peddler.handle}", "they are flesh and blood, not a machine.")
    k.fails(f"siphon charged_cell {hound.handle}", "feeding power to a hostile machine would only mend it.")
    assert k.listed("siphon") == []


def test_siphon_without_a_machine_list_takes_enemies_and_fighters(tmp_path) -> None:
    game = variant(tmp_path, {**QUIET, "siphon": {"machines": []}})
    h = Kingdom(Engine(game, 0, options={"expansion": False}))
    h.goto("signal_tower")
    sentinel, hound, peddler = h.npc("oath_sentinel"), h.npc("gearhound"), h.npc("scrap_peddler")
    h.hold("charged_cell")
    h.hold("drained_cell")
    assert sorted(h.listed("siphon")) == sorted(
        [f"siphon charged_cell {sentinel.handle}", f"siphon drained_cell {hound.handle}"]
    )
    h.fails(f"siphon charged_cell {peddler.handle}", "not a machine")


def _awake_sentinel(k: Kingdom):
    sentinel = k.npc("oath_sentinel")
    k.state.rule_data.setdefault("rally", {}).setdefault("awake", {})[sentinel.handle] = k.state.step
    k.state.rule_data["rally"].setdefault("allies", {})
    return sentinel


def test_rally_a_woken_sentinel(k) -> None:
    sentinel = _awake_sentinel(k)
    assert k.listed("rally") == [f"rally {sentinel.handle}"]
    text = k.ok(f"rally {sentinel.handle}")
    assert "eyes flare: it falls in at my side" in text
    assert k.emitted()[0] == ("npc_rallied", {"npc": sentinel.handle, "type": "oath_sentinel", "area": "signal_tower"})
    assert k.state.rule_data["rally"]["allies"] == {sentinel.handle: PLAYER}
    k.fails(f"rally {sentinel.handle}", "it already fights at my side.")


def test_rally_refusals(quiet_game) -> None:
    k = Kingdom(Engine(quiet_game, 0, agents=(PLAYER, "bo"), options={"expansion": False}))
    k.goto("signal_tower")
    dormant = k.npc("oath_sentinel")
    hound = k.npc("gearhound")
    peddler = k.npc("scrap_peddler")
    other = _awake_sentinel(k)
    k.state.rule_data["rally"]["allies"][other.handle] = "bo"
    k.fails(f"rally {dormant.handle}", "it is dormant. Siphon power into it first.")
    k.fails(f"rally {hound.handle}", f"Cannot rally {hound.handle}: it is hostile.")
    k.fails(f"rally {peddler.handle}", "only the sentinels of the old host answer a rally.")
    k.fails(f"rally {other.handle}", "it already follows bo.")
    k.fails("rally ghost_7", "Cannot rally ghost_7: there is no one by that name here.")
    assert k.listed("rally") == []


def _here(k: Kingdom, kind: str) -> list[dict]:
    """This step's events of ``kind`` about the agent's area (the rest of the world has its own troubles)."""
    return [e.data for e in k.outcome.events if e.kind == kind and e.data.get("area") == k.agent.area]


def test_rally_leads_at_most_two(k) -> None:
    first, second, third = (_awake_sentinel(k) for _ in range(3))
    k.ok(f"rally {first.handle}")
    k.ok(f"rally {second.handle}")
    k.fails(f"rally {third.handle}", "I already lead 2 allies, as many as I can.")
    del k.state.npcs[first.handle]  # a fallen ally no longer counts
    k.area.npcs.remove(first.handle)
    k.ok(f"rally {third.handle}")


def test_a_rallied_ally_strikes_my_foe_and_may_finish_it(k) -> None:
    sentinel = _awake_sentinel(k)
    k.ok(f"rally {sentinel.handle}")
    rat = k.npc("rustling")  # pattern: attack, wait, defend, wait
    k.ok(f"attack {rat.handle}")  # 8 from me, then 12 from the sentinel (the rat is at its attack stance)
    assert k.events("ally_struck") == [{"npc": sentinel.handle, "target": rat.handle, "damage": 12}]
    assert f"{sentinel.handle} strikes {rat.handle} for 12 damage." in k.feedback
    assert rat.handle not in k.state.npcs  # 8 + 12 = 20
    assert k.events("npc_defeated")[0]["type"] == "rustling"
    assert k.agent.kills == {"rustling": 1}


def test_an_ally_does_not_strike_a_guarded_foe_hard_nor_when_apart(k) -> None:
    sentinel = _awake_sentinel(k)
    k.ok(f"rally {sentinel.handle}")
    hound = k.npc("gearhound")  # defense 2; pattern: wait, attack, attack, defend, wait
    hound.stance_index = 3  # guarding this turn
    k.ok(f"attack {hound.handle}")
    assert k.events("ally_struck")[0]["damage"] == 1  # (12 - 2) / 10
    k.do("wait")
    assert k.events("ally_struck")[0]["damage"] == 10
    sentinel.area = "muster_yard"  # apart: no blow
    k.area.npcs.remove(sentinel.handle)
    k.state.areas["muster_yard"].npcs.append(sentinel.handle)
    k.do("defend")
    assert k.events("ally_struck") == []


def test_an_ally_whose_leader_left_the_world_is_forgotten(k) -> None:
    sentinel = _awake_sentinel(k)
    k.state.rule_data["rally"]["allies"][sentinel.handle] = "nobody_here"
    rat = k.npc("rustling")
    k.ok(f"attack {rat.handle}")
    assert k.state.rule_data["rally"]["allies"] == {}


# ============================================================================ jam
def test_jam_stops_a_machines_strikes_for_its_turns(k) -> None:
    hound = k.npc("gearhound")  # pattern: wait, attack, attack, defend, wait
    (wedge,) = k.hold("iron_wedge")
    assert k.listed("jam") == [f"jam {wedge} {hound.handle}"]
    text = k.ok(f"jam {wedge} {hound.handle}")
    assert "I drive iron_wedge into gearhound_" in text and "strikes will fail for 3 turns" in text
    assert k.emitted()[0] == (
        "npc_jammed",
        {"npc": hound.handle, "type": "gearhound", "object": "iron_wedge", "turns": 3},
    )
    assert hound.engaged == PLAYER and k.agent.combat == hound.handle and hound.inventory["iron_wedge"] == 1
    hp = k.agent.hp
    for _ in range(2):  # turns 2 and 3 are strikes, and both fail
        k.do("defend")
        assert k.events("strike_jammed") and "jammed gears lock its arm" in k.feedback
    assert k.agent.hp == hp
    k.fails(f"jam {wedge} {hound.handle}", "Cannot jam with iron_wedge: I do not carry it.")
    k.hold("gear_spike")
    k.do("defend")  # the guard stance: the jam has run out
    assert hound.handle not in k.state.rule_data["jam"]["until"]
    k.ok(f"jam gear_spike {hound.handle}")  # jammable again
    k.state.rule_data["jam"]["until"].clear()
    k.do("defend")
    assert k.events("agent_hit")  # a machine without a jam strikes as its pattern says


def test_a_jammed_wedge_drops_with_the_machine(k) -> None:
    rat = k.npc("rustling")
    k.hold("gear_spike")
    k.ok(f"jam gear_spike {rat.handle}")
    rat.hp = 1
    k.ok(f"attack {rat.handle}")
    assert k.area.objects.get("gear_spike") == 1


def test_jam_refusals(k) -> None:
    hound = k.npc("gearhound")
    peddler = k.npc("scrap_peddler")
    k.hold("iron_wedge")
    k.hold("iron_rod")
    k.fails(f"jam iron_rod {hound.handle}", "Cannot jam with iron_rod: it is nothing to drive into gears.")
    k.fails("jam iron_wedge ghost_7", "Cannot jam ghost_7: there is no such creature here.")
    k.fails(f"jam iron_wedge {peddler.handle}", "they are not hostile.")
    k.fails(f"jam gear_spike {hound.handle}", "I do not carry it.")
    k.hold("iron_wedge")
    k.ok(f"jam iron_wedge {hound.handle}")
    k.fails(f"jam iron_wedge {hound.handle}", "its gears are already jammed.")


def test_jam_keeps_an_enemy_fighting_someone_else(k) -> None:
    """Jamming a machine that fights someone else does not make it my foe: my ally does not strike it."""
    sentinel = _awake_sentinel(k)
    k.ok(f"rally {sentinel.handle}")
    rat = k.npc("rustling")
    rat.engaged = "bo"
    k.hold("iron_wedge")
    k.ok(f"jam iron_wedge {rat.handle}")
    assert rat.engaged == "bo" and k.agent.combat is None
    assert not k.events("ally_struck") and rat.hp == rat.max_hp


# ============================================================================ overload
def test_overload_strikes_every_hostile_machine_here(k) -> None:
    rat, hound = k.npc("rustling"), k.npc("gearhound")
    sentinel = k.npc("oath_sentinel")
    k.hold("storm_coil")
    assert k.listed("overload") == ["overload storm_coil"]
    text = k.ok("overload storm_coil")
    assert "I overload storm_coil: it bursts in a crackling wave!" in text
    assert k.emitted()[0] == (
        "component_overloaded",
        {"object": "storm_coil", "area": "signal_tower", "hits": [rat.handle, hound.handle]},
    )
    assert rat.handle not in k.state.npcs and hound.hp == 42 - (30 - 2)
    assert f"The burst hits {rat.handle}" in text and f"The burst hits {sentinel.handle}" not in text
    assert hound.engaged == PLAYER and "storm_coil" not in k.agent.hands
    assert k.state.rule_data["overload"]["log"][PLAYER]["signal_tower"] == 1


def test_overload_with_nothing_hostile_about(k) -> None:
    pack = k.wear("tinker_satchel")
    k.stash(pack, "spark_cap")
    text = k.ok("overload spark_cap")
    assert "crackles harmlessly across signal_tower" in text and k.state.instances[pack].contents == {}


def test_overload_refusals(k) -> None:
    k.hold("iron_rod")
    k.fails("overload storm_coil", "Cannot overload storm_coil: I do not carry it.")
    k.fails("overload iron_rod", "Cannot overload iron_rod: it holds no charge to release.")


# ============================================================================ step rules
def test_corrosion_rusts_litter(k) -> None:
    k.hold("iron_rod", 2)
    (note,) = k.hold("tin_placard")
    k.do("drop iron_rod")
    k.do(f"drop {note}")
    k.hold("copper_coil")
    k.do("drop copper_coil")
    k.idle(10)
    k.do("pick up copper_coil")  # picked up again: forgotten
    said = []
    for _ in range(45):
        k.do("wait")
        rusted = [e.data for e in k.outcome.events if e.kind == "object_corroded" and e.data["area"] == "signal_tower"]
        if rusted:
            said.append((rusted, k.feedback))
    assert len(said) == 1
    rusted, text = said[0]
    assert rusted == [{"area": "signal_tower", "object": "iron_rod", "amount": 2}]
    assert "The iron_rod left lying here has rusted into 2 rust_scrap." in text
    assert k.state.step - 1 >= 40  # not before it lay its time
    assert k.area.objects == {note: 1, "rust_scrap": 2}  # writables are spared; the coil was taken back


def test_corrosion_spares_what_the_world_started_with(quiet_game) -> None:
    engine = Engine(quiet_game, 0, options={"expansion": False})
    before = {name: dict(a.objects) for name, a in engine.state.areas.items()}
    for _ in range(120):
        engine.step({PLAYER: "wait"})
        assert "object_corroded" not in engine.kinds
    assert {name: dict(a.objects) for name, a in engine.state.areas.items()} == before


def test_scrap_mending_heals_a_wounded_machine_from_scrap(k) -> None:
    hound = k.npc("gearhound")
    hound.hp = 30
    k.put("rust_scrap", 2)
    k.do("wait")
    assert hound.hp == 36 and k.area.objects["rust_scrap"] == 1
    assert "bolts it into its frame (+6 health, 36/42)" in k.feedback
    assert [e.data for e in k.outcome.events if e.kind == "npc_mended"] == [
        {"npc": hound.handle, "type": "gearhound", "object": "rust_scrap", "amount": 6, "area": "signal_tower"}
    ]
    k.do("wait")
    assert hound.hp == 42 and "rust_scrap" not in k.area.objects  # capped at its health
    hound.hp = 30
    k.do("wait")  # no scrap left: no mending
    assert hound.hp == 30 and not k.events("npc_mended")


def test_scrap_mending_leaves_healthy_machines_and_friendlies_alone(k) -> None:
    k.npc("gearhound")
    sentinel = k.npc("oath_sentinel")
    sentinel.hp = 10
    k.put("rust_scrap", 2)
    k.do("wait")
    assert k.area.objects["rust_scrap"] == 2 and not k.events("npc_mended")


def test_intimidation_wears_down_friendlies_near_enemies(k) -> None:
    peddler = k.npc("scrap_peddler")
    k.npc("gearhound")
    k.npc("rustling")
    k.do("wait")
    assert peddler.hp == 40 - 4 and "is shaken by the war machines here (-4 health, 36/40)" in k.feedback
    assert _here(k, "npc_intimidated") == [
        {"npc": peddler.handle, "type": "scrap_peddler", "amount": 4, "area": "signal_tower"}
    ]


def test_intimidation_does_not_fire_without_enemies_and_people_recover(k) -> None:
    peddler = k.npc("scrap_peddler")
    sentinel = k.npc("oath_sentinel")
    peddler.hp, sentinel.hp = 30, 30
    k.do("wait")
    assert peddler.hp == 31 and sentinel.hp == 30  # machines need power, not rest
    assert not _here(k, "npc_intimidated") and "shaken" not in k.feedback


def test_intimidation_powers_down_a_woken_ally(k) -> None:
    sentinel = _awake_sentinel(k)
    k.ok(f"rally {sentinel.handle}")
    sentinel.hp = 17
    k.npc("gearhound")
    k.do("wait")  # 17 - 2 = 15 <= a quarter of 60
    assert "cells fail: it sinks back into dormancy and leaves player's side." in k.feedback
    assert k.state.rule_data["rally"]["allies"] == {} and k.state.rule_data["rally"]["awake"] == {}
    assert _here(k, "npc_powered_down")[0]["npc"] == sentinel.handle
    k.fails(f"rally {sentinel.handle}", "it is dormant")


def test_intimidation_never_kills_and_frightened_traders_flee(k) -> None:
    peddler = k.npc("scrap_peddler")
    peddler.hp = 15
    k.npc("siege_juggernaut")
    k.npc("gearhound", area="muster_yard")
    k.clear("armory_ruin")
    k.do("wait")
    assert peddler.hp == 13 and peddler.area == "armory_ruin"  # fled to a neighbour without enemies
    assert [e.data for e in k.outcome.events if e.kind == "npc_fled" and e.data["npc"] == peddler.handle] == [
        {"npc": peddler.handle, "type": "scrap_peddler", "frm": "signal_tower", "to": "armory_ruin"}
    ]
    sentinel = k.npc("oath_sentinel")
    sentinel.hp = 2
    k.idle(3)
    assert sentinel.hp == 1


def test_intimidation_leaves_a_fixed_trader_in_place(k) -> None:
    k.goto("scrapwall_camp", clear=False)
    ilsa = k.state.npcs["cogwright_ilsa"]
    ilsa.hp = 10
    k.npc("gearhound")
    k.do("wait")
    assert ilsa.hp == 8 and ilsa.area == "scrapwall_camp"


def test_tactical_warning_names_the_next_stance(k) -> None:
    k.npc("scrap_peddler")
    hound = k.npc("gearhound")
    k.ok(f"attack {hound.handle}")
    coming = stance(k.engine, hound)
    assert [e.data for e in k.outcome.events if e.kind == "tactical_warning"] == [
        {"by": k.area.npcs[0], "npc": hound.handle, "stance": coming}
    ]
    words = {"attack": "strike", "defend": "raise its guard", "wait": "pause"}
    assert f'warns: "{hound.handle} will {words[coming]} next!"' in k.feedback
    k.do("defend")
    assert f"will {words[stance(k.engine, hound)]} next!" in k.feedback


def test_tactical_warning_prefers_my_ally_and_knows_a_jam(k) -> None:
    k.npc("scrap_peddler")
    sentinel = _awake_sentinel(k)
    k.ok(f"rally {sentinel.handle}")
    hound = k.npc("gearhound")  # wait, attack, attack, defend, wait
    k.hold("iron_wedge")
    k.ok(f"jam iron_wedge {hound.handle}")
    assert f'{sentinel.handle} warns: "{hound.handle} will try to strike next, but its gears are jammed!"' in k.feedback


def test_no_tactical_warning_without_a_friendly_or_a_fight(k) -> None:
    hound = k.npc("gearhound")
    k.ok(f"attack {hound.handle}")
    assert not k.events("tactical_warning")
    del k.state.npcs[hound.handle]
    k.area.npcs.remove(hound.handle)
    k.agent.combat = None
    k.npc("scrap_peddler")
    k.do("wait")
    assert not k.events("tactical_warning")


def test_devil_drain_burns_only_past_three_pieces(k) -> None:
    pack = k.wear("tinker_satchel")
    k.hold("hellbrass_shard", 2)
    k.stash(pack, "hellbrass_ingot")
    hp = k.agent.hp
    k.do("wait")
    assert k.agent.hp == hp and not [e for e in k.outcome.events if e.kind == "devil_burn"]
    k.agent.equipment["head"] = k.put("hellbrass_visor")[0]
    del k.area.objects["hellbrass_visor"]
    k.do("wait")
    assert k.agent.hp == hp - 2
    assert "The devil-forged things I carry (4 pieces) sear me for 2 damage" in k.feedback
    assert [e.data for e in k.outcome.events if e.kind == "devil_burn"] == [{"count": 4, "damage": 2}]
    k.hold("hellbrass_shard")  # 5 pieces: twice the burn
    k.do("wait")
    assert k.agent.hp == hp - 2 - 4


def test_devil_drain_can_kill(k) -> None:
    k.hold("hellbrass_shard", 2)
    k.agent.equipment["head"] = "hellbrass_visor"
    k.agent.equipment["hands"] = "hellbrass_gauntlets"
    k.agent.hp = 2
    k.do("wait")
    assert k.agent.deaths == 1 and k.agent.area == "scrapwall_camp"


def test_forge_migration_walks_a_trader_to_a_free_forge(k) -> None:
    engine, state = k.engine, k.state
    peddler = next(n for n in state.npcs.values() if n.area == "oil_springs")
    while state.step % 20 != 19:
        k.do("wait")
    k.do("wait")
    moved = [e.data for e in k.outcome.events if e.kind == "merchant_migrated"]
    # the market's forge has its trader; the muster yard's forge lies behind the bastion lock
    assert moved == [] and peddler.area == "oil_springs"
    state.areas["bastion_gate"].exits["muster_yard"].locked = False
    state.areas["muster_yard"].exits["bastion_gate"].locked = False
    route = []
    for _ in range(4):
        k.idle(20)
        route.append(peddler.area)
    assert route == ["fallen_colossus", "bastion_gate", "muster_yard", "muster_yard"]
    assert engine.state.npcs["scrap_peddler_0"].area == "cinder_market"  # the first keeps its forge


def test_forge_migration_waits_while_someone_is_at_the_stall(k) -> None:
    k.goto("oil_springs", clear=False)
    state = k.state
    state.areas["bastion_gate"].exits["muster_yard"].locked = False
    state.areas["muster_yard"].exits["bastion_gate"].locked = False
    peddler = next(n for n in state.npcs.values() if n.type == "scrap_peddler" and n.area == "oil_springs")
    k.idle(40)
    assert peddler.area == "oil_springs"


def test_reclamation_sends_machines_to_land_left_alone(tmp_path) -> None:
    game = variant(tmp_path, {**QUIET, "reclamation": {"period": 1, "delay": 0, "chance": 1.0, "max_alive": 3}})
    h = Kingdom(Engine(game, 0, options={"expansion": False}))
    events = h.idle(6)
    claims = [e.data for e in events if e.kind == "territory_reclaimed"]
    assert len(claims) == 3 and len({c["area"] for c in claims}) == 3
    locked_away = {"muster_yard", "signal_tower", "armory_ruin", "slag_causeway", "devil_forge", "rust_throne"}
    for c in claims:
        area = h.state.areas[c["area"]]
        assert c["area"] not in locked_away and c["area"] != "scrapwall_camp"
        npc = h.state.npcs[c["npc"]]
        assert npc.origin == "reclaim" and npc.type == c["type"]
        assert h.game.npcs[npc.type].level == max(
            t.level for t in h.game.npcs.values() if t.common_enemy and t.level <= area.level
        )
    assert sum(1 for n in h.state.npcs.values() if n.origin == "reclaim") == 3  # never more


def test_reclamation_spares_land_visited_lately(tmp_path) -> None:
    game = variant(tmp_path, {**QUIET, "reclamation": {"period": 1, "delay": 200, "chance": 1.0}})
    h = Kingdom(Engine(game, 0, options={"expansion": False}))
    assert not [e for e in h.idle(30) if e.kind == "territory_reclaimed"]


def test_reclamation_tells_every_agent(tmp_path) -> None:
    game = variant(tmp_path, {**QUIET, "reclamation": {"period": 1, "delay": 0, "chance": 1.0, "max_alive": 1}})
    h = Kingdom(Engine(game, 0, options={"expansion": False}))
    h.do("wait")
    (claim,) = h.events("territory_reclaimed")
    assert f"Far off, gears grind: a {claim['type']} has come to reclaim {claim['area']}." in h.feedback


def test_united_presence_with_two_agents() -> None:
    """Two agents in one world (the PettingZoo face): together each gains 3 defense, apart they lose it."""
    from odyssey_env.multiagent import parallel_env

    env = parallel_env(GAME, agents=["ada", "bo"])
    env.reset(seed=0)
    state = env.engine.state
    obs, _, _, _, infos = env.step({"ada": "wait", "bo": "wait"})
    assert state.agents["ada"].defense == state.agents["bo"].defense == 3
    assert "Standing with bo, we cover each other: my defense rises by 3." in obs["ada"]
    assert "My defense is at 3." in obs["bo"]
    assert next(e for e in infos["ada"]["events"] if e["kind"] == "united_presence")["bonus"] == 3
    obs, *_ = env.step({"ada": "wait", "bo": "wait"})
    assert "cover each other" not in obs["ada"] and state.agents["ada"].defense == 3  # said once, kept
    obs, *_ = env.step({"ada": "enter wreck_field", "bo": "wait"})
    assert state.agents["ada"].defense == state.agents["bo"].defense == 0
    assert "No one stands with me now" in obs["bo"]
    obs, _, _, _, infos = env.step({"ada": "wait", "bo": "wait"})
    assert "No one stands with me now" not in obs["bo"]  # said once
    assert not [e for e in infos["bo"]["events"] if e["kind"] == "united_presence"]


def test_united_presence_does_nothing_alone(k) -> None:
    k.do("wait")
    assert k.agent.defense == 0 and "united_presence" not in k.state.rule_data


# ============================================================================ edges (found by mutation testing)
def test_a_jam_lasts_exactly_its_turns(k) -> None:
    """An iron wedge jams 3 turns, the one it is driven in first; the next strike lands, and the jam is
    forgotten as soon as its last turn is played (so it may be jammed again)."""
    jug = k.npc("siege_juggernaut")  # pattern: defend, attack, wait, attack, wait, wait
    k.hold("iron_wedge")
    k.hold("gear_spike")
    k.ok(f"jam iron_wedge {jug.handle}")  # turn 1: it guards
    k.do("wait")  # turn 2: its strike fails
    assert k.events("strike_jammed") and not k.events("agent_hit")
    k.do(f"jam gear_spike {jug.handle}")  # turn 3, the last jammed one: it pauses
    assert k.outcome.failed and "its gears are already jammed." in k.feedback
    assert jug.handle not in k.state.rule_data["jam"]["until"]
    assert f"jam gear_spike {jug.handle}" in k.listed("jam")
    k.do("wait")  # turn 4: free again, it strikes
    assert k.events("agent_hit") and not k.events("strike_jammed")


def test_is_machine_without_a_siphon_rule() -> None:
    """With no siphon verb in a game, every enemy and fighter runs on power, and people do not."""
    from types import SimpleNamespace

    from odyssey_env.games.rust_throne.rules import is_machine

    engine = SimpleNamespace(rules=SimpleNamespace(actions={}), game=load_game(GAME))
    assert [is_machine(engine, t) for t in ("gearhound", "oath_sentinel", "scrap_peddler", "cogwright_ilsa")] == [
        True,
        True,
        False,
        False,
    ]


def test_what_lies_on_the_ground_is_not_carried(k) -> None:
    jug = k.npc("siege_juggernaut")
    k.put("drained_cell")
    k.put("iron_wedge")
    k.put("spark_cap")
    k.fails(f"siphon drained_cell {jug.handle}", "Cannot siphon with drained_cell: I do not carry it.")
    k.fails(f"jam iron_wedge {jug.handle}", "Cannot jam with iron_wedge: I do not carry it.")
    k.fails("overload spark_cap", "Cannot overload spark_cap: I do not carry it.")


def test_a_burst_or_an_ally_always_does_at_least_1_damage(k) -> None:
    regent = k.npc("iron_regent")  # defense 10
    k.hold("spark_cap")  # blast 10
    k.ok("overload spark_cap")
    assert regent.hp == regent.max_hp - 1 and f"The burst hits {regent.handle} for 1 damage" in k.feedback
    sentinel = _awake_sentinel(k)
    k.ok(f"rally {sentinel.handle}")
    rat = k.npc("rustling")  # its attack stance: no guard against the ally
    rat.defense, rat.hp, rat.max_hp = 30, 2, 20
    rat.engaged, k.agent.combat = PLAYER, rat.handle
    k.do("wait")
    assert k.events("ally_struck") == [{"npc": sentinel.handle, "target": rat.handle, "damage": 1}]
    assert f"{sentinel.handle} strikes {rat.handle} for 1 damage (1/20 health left)." in k.feedback
    assert rat.hp == 1 and rat.handle in k.state.npcs


def test_scrap_mending_stops_at_full_health(k) -> None:
    hound = k.npc("gearhound")
    hound.hp = 38
    k.put("rust_scrap")
    k.do("wait")
    assert hound.hp == 42 and "(+4 health, 42/42)" in k.feedback


def test_intimidation_thresholds(k) -> None:
    """A roaming trader flees at a third of its health (a boundary included), not above; a friendly at 1
    health is left alone."""
    calm, scared = k.npc("scrap_peddler"), k.npc("scrap_peddler")
    k.clear("armory_ruin")
    for npc, hp in ((calm, 37), (scared, 36)):  # -2: 35 stays, 34 = 0.34 of 100 flees
        npc.max_hp, npc.hp = 100, hp
    k.npc("gearhound")
    k.do("wait")
    assert (calm.area, calm.hp, scared.area, scared.hp) == ("signal_tower", 35, "armory_ruin", 34)
    sentinel = k.npc("oath_sentinel")
    sentinel.hp = 1
    k.do("wait")
    assert sentinel.hp == 1 and sentinel.handle not in [e["npc"] for e in _here(k, "npc_intimidated")]


def test_devil_drain_spares_an_agent_in_the_tutorial(k) -> None:
    k.hold("hellbrass_shard", 5)
    k.agent.in_tutorial = True
    hp = k.agent.hp
    k.do("wait")
    assert k.agent.hp == hp and not k.events("devil_burn")


def test_tactical_warnings_come_from_the_first_friendly_and_only_in_a_fight(k) -> None:
    peddler, _other = k.npc("scrap_peddler"), k.npc("scrap_peddler")
    hound = k.npc("gearhound")
    hound.engaged = PLAYER  # engaged with me, but I am not fighting: its rhythm does not run, nobody warns
    k.do("wait")
    assert not k.events("tactical_warning")
    k.ok(f"attack {hound.handle}")
    assert [e["by"] for e in k.events("tactical_warning")] == [peddler.handle]


def _reclaiming(tmp_path, **params) -> Kingdom:
    game = variant(tmp_path, {**QUIET, "reclamation": {"period": 1, "chance": 1.0, "max_alive": 20, **params}})
    h = Kingdom(Engine(game, 0, options={"expansion": False}))
    h.goto("signal_tower")  # behind the bastion lock: not open land
    return h


def test_reclamation_remembers_where_agents_stand(k) -> None:
    k.do("wait")
    assert k.state.rule_data["reclamation"]["last_seen"]["signal_tower"] == k.state.step


def test_reclamation_starts_when_land_has_waited_its_delay(tmp_path) -> None:
    h = _reclaiming(tmp_path, delay=10)
    claims = [
        (h.state.step, e.data)
        for _ in range(10)
        for e in [h.do("wait")] and h.outcome.events
        if e.kind == "territory_reclaimed"
    ]
    assert [step for step, _ in claims] == [10]


def test_reclamation_counts_from_the_last_visit_and_claims_an_area_once(tmp_path) -> None:
    h = _reclaiming(tmp_path, delay=10)
    seen = h.state.rule_data["reclamation"]["last_seen"]
    for name in h.state.areas:
        seen[name] = 10**6  # as if visited in the far future: never due
    seen["wreck_field"] = 5
    claims = [
        (h.state.step, e.data["area"])
        for _ in range(25)
        for e in [h.do("wait")] and h.outcome.events
        if e.kind == "territory_reclaimed"
    ]
    assert claims == [(15, "wreck_field")]


def test_reclamation_with_no_room_per_area(tmp_path) -> None:
    h = _reclaiming(tmp_path, delay=0, per_area=0)
    assert not [e for e in h.idle(5) if e.kind == "territory_reclaimed"]


def _corrosion(k: Kingdom) -> dict[str, Any]:
    return k.state.rule_data["corrosion"]["litter"]


def _wait_for_rust(k: Kingdom, steps: int) -> list[tuple[int, dict]]:
    rusted = []
    for _ in range(steps):
        k.do("wait")
        rusted += [(k.state.step, e.data) for e in k.outcome.events if e.kind == "object_corroded"]
    return rusted


def test_corrosion_notices_litter_on_its_period_and_rusts_it_exactly_its_delay_later(k) -> None:
    while k.state.step % 5 != 1:
        k.do("wait")
    k.hold("iron_rod")
    k.do("drop iron_rod")  # between two corrosion runs
    noticed = k.state.step + (-k.state.step) % 5
    k.idle(noticed - k.state.step + 5)
    assert _corrosion(k) == {"signal_tower": [["iron_rod", 1, noticed]]}  # once, not again each run
    rusted = _wait_for_rust(k, 45)
    assert rusted == [(noticed + 40, {"area": "signal_tower", "object": "iron_rod", "amount": 1})]
    assert k.area.objects == {"rust_scrap": 1} and _corrosion(k) == {}


def test_corrosion_counts_from_the_last_drop(k) -> None:
    """Picked up and dropped again later, a thing rusts the full delay after the second drop."""
    k.hold("iron_rod")
    k.do("drop iron_rod")
    k.idle(10)
    k.do("pick up iron_rod")
    k.idle(5)
    assert _corrosion(k) == {}  # picked up: forgotten
    k.idle(10)
    k.do("drop iron_rod")
    second = k.state.step
    rusted = _wait_for_rust(k, 50)
    assert len(rusted) == 1 and second + 40 <= rusted[0][0] < second + 45


def test_corrosion_forgets_the_newest_pieces_first(k) -> None:
    k.hold("iron_rod", 2)
    k.do("drop iron_rod")
    k.idle(10)
    k.hold("iron_rod")
    k.do("drop iron_rod")  # 1 more, 10 steps later
    k.idle(10)
    (old, new) = _corrosion(k)["signal_tower"]
    assert (old[:2], new[:2]) == (["iron_rod", 2], ["iron_rod", 1]) and new[2] > old[2]
    k.do("pick up iron_rod")  # one of three: the newest pile goes
    k.do("pick up iron_rod")  # and one of the old pair
    k.idle(5)
    assert _corrosion(k) == {"signal_tower": [["iron_rod", 1, old[2]]]}
    rusted = _wait_for_rust(k, 40)
    assert [(step, data["amount"]) for step, data in rusted] == [(old[2] + 40, 1)]


def test_corrosion_remembers_only_the_newest_piles(tmp_path) -> None:
    game = variant(tmp_path, {**QUIET, "corrosion": {"max_litter": 2}})
    h = Kingdom(Engine(game, 0, options={"expansion": False}))
    h.goto("signal_tower")
    for kind in ("iron_rod", "copper_coil", "tin_sheet"):
        h.hold(kind)
        h.do(f"drop {kind}")
        h.idle(5)
    assert [pile[0] for pile in h.state.rule_data["corrosion"]["litter"]["signal_tower"]] == [
        "copper_coil",
        "tin_sheet",
    ]
    h.idle(45)
    assert h.area.objects == {"iron_rod": 1, "rust_scrap": 2}  # the forgotten rod never rusts


def test_forge_migration_one_trader_per_free_forge(k) -> None:
    state = k.state
    state.areas["bastion_gate"].exits["muster_yard"].locked = False
    state.areas["muster_yard"].exits["bastion_gate"].locked = False
    first = next(n for n in state.npcs.values() if n.type == "scrap_peddler" and n.area == "oil_springs")
    move_npc(k.engine, first, "bastion_gate")
    second = k.npc("scrap_peddler", area="bastion_gate")
    while state.step % 20 != 19:
        k.do("wait")
    k.do("wait")
    assert [e.data for e in k.outcome.events if e.kind == "merchant_migrated"] == [
        {"npc": first.handle, "type": "scrap_peddler", "frm": "bastion_gate", "to": "muster_yard"}
    ]
    assert (first.area, second.area) == ("muster_yard", "bastion_gate")


@pytest.mark.parametrize(
    ("rule", "values", "message"),
    [
        ("jam", {"wedges": {"iron_wedge": 0}}, "wedges: iron_wedge must jam for at least 1 turn"),
        ("scrap_mending", {"scrap": []}, "scrap: name at least one object"),
        ("devil_drain", {"limit": -1}, "limit: -1 must be at least 0"),
    ],
)
def test_rule_parameters_that_make_no_sense_are_refused(tmp_path, rule, values, message) -> None:
    spec = load_game(GAME).spec.game
    with pytest.raises(RuleError, match=message):  # the shipped module's checks (a copy's would be another's)
        RuleBook(
            [*BASE_RULE_MODULES, shipped_rules],
            verbs=spec.verbs,
            step_rules=spec.step_rules,
            params={**spec.params, rule: {**spec.params.get(rule, {}), **values}},
        )
    with pytest.raises(GameError, match=message):  # and a game folder that sets them does not load
        variant(tmp_path, {rule: values})


def test_rule_parameters_at_their_bounds_load(tmp_path) -> None:
    game = variant(
        tmp_path,
        {
            "jam": {"wedges": {"iron_wedge": 1}},
            "devil_drain": {"limit": 0},
            "scrap_mending": {"scrap": ["slag_chunk", "rust_scrap"]},
        },
    )
    assert (
        game.rules.actions["jam"].settings.wedges == {"iron_wedge": 1}
        and game.rules.step_rule("devil_drain").settings.limit == 0
    )
    (fact,) = game.rules.step_rule("scrap_mending").facts(game)
    assert fact.answer == "a wounded machine eats slag_chunk to mend itself"  # the first it looks for


def test_corrosion_into_an_unknown_object_fails_at_the_start(tmp_path) -> None:
    game = variant(tmp_path, {"corrosion": {"into": "moonbeam"}})
    with pytest.raises(ValueError, match="corrosion: unknown object 'moonbeam'"):
        Engine(game, 0)


def test_jam_takes_up_a_fight_its_machine_already_has_with_me(k) -> None:
    hound = k.npc("gearhound")
    hound.engaged = PLAYER
    k.hold("iron_wedge")
    k.ok(f"jam iron_wedge {hound.handle}")
    assert k.agent.combat == hound.handle


def test_has_used_zero_times_is_always_true(k) -> None:
    from odyssey_env.games.rust_throne.rules import has_used

    assert has_used(k.engine, k.agent, "jam", count=0) and not has_used(k.engine, k.agent, "jam")


# ============================================================================ the valid-action cache
def test_listings_follow_what_another_agent_changes(quiet_game) -> None:
    """Scavenge, rally, siphon and jam read the kingdom's memory (``rule_data``) and a machine's health, which
    no fingerprint covers: another agent changes them without touching anything of mine, and my next
    listing still follows (the check mode would raise on a stale one)."""
    engine = Engine(quiet_game, 0, agents=(PLAYER, "bo"), options={"expansion": False})
    assert engine.check_valid_actions
    k = Kingdom(engine)
    k.goto("signal_tower")
    bo = engine.state.agents["bo"]
    bo.area = "signal_tower"
    sentinel = k.npc("oath_sentinel")
    sentinel.hp = 20
    (cell,) = k.hold("charged_cell")
    add(bo.hands, "charged_cell")
    assert k.listed("scavenge") == ["scavenge"] and k.listed("rally") == []
    assert k.listed("siphon") == [f"siphon {cell} {sentinel.handle}"]
    for _ in range(2):
        engine.step({"bo": "scavenge"})
    assert k.listed("scavenge") == []
    engine.step({"bo": f"siphon charged_cell {sentinel.handle}"})  # 20 + 40: awake and full
    assert sentinel.hp == sentinel.max_hp and k.listed("siphon") == []
    assert k.listed("rally") == [f"rally {sentinel.handle}"]
    engine.step({"bo": f"rally {sentinel.handle}"})
    assert k.listed("rally") == []
    hound = k.npc("gearhound")
    (wedge,) = k.hold("iron_wedge")
    add(bo.hands, "gear_spike")
    assert k.listed("jam") == [f"jam {wedge} {hound.handle}"]
    engine.step({"bo": f"jam gear_spike {hound.handle}"})
    assert k.listed("jam") == []
    add(bo.hands, "rustling_husk")
    assert k.listed("salvage") == []
    engine.step({"bo": "drop rustling_husk"})
    assert k.listed("salvage") == ["salvage rustling_husk"]


def test_a_change_to_the_rule_data_a_verb_reads_and_nothing_else_reaches_its_cached_listing(k) -> None:
    """Scavenge and jam declare the ``data`` dependency (``reads_data``): a test that edits only their
    ``rule_data`` (nothing of the agent, the area or the clock) still gets listings that follow, as the
    check mode (on in this module) proves by listing every verb afresh beside the cache."""
    assert k.engine.check_valid_actions
    (wedge,) = k.hold("iron_wedge")
    hound = k.npc("gearhound")
    here = k.agent.area
    assert k.listed("scavenge") == ["scavenge"] and k.listed("jam") == [f"jam {wedge} {hound.handle}"]
    k.state.rule_data.setdefault("scavenge", {})["left"] = {here: []}  # picked clean, by hand
    assert k.listed("scavenge") == [] and k.listed("jam") == [f"jam {wedge} {hound.handle}"]
    k.state.rule_data["scavenge"]["left"][here] = ["scrap_plate"]
    assert k.listed("scavenge") == ["scavenge"]
    k.state.rule_data.setdefault("jam", {})["until"] = {hound.handle: k.state.step + 3}
    assert k.listed("jam") == [] and k.listed("scavenge") == ["scavenge"]
    k.state.rule_data["jam"]["until"].clear()
    assert k.listed("jam") == [f"jam {wedge} {hound.handle}"]


def test_salvage_and_overload_are_listed_from_the_cache_while_what_they_read_stays(k, monkeypatch) -> None:
    """The two verbs that read only what is carried (and, for salvage, what lies here) are listed afresh
    only when that changes; scavenge, which reads where I am and rule_data["scavenge"], only when those do."""
    k.engine.check_valid_actions = False  # the check lists every verb afresh beside the cache
    calls: dict[str, int] = {}
    for verb in ("salvage", "overload", "scavenge"):
        cls = type(k.engine.rules.actions[verb])

        def counted(self, turn, _inner=cls.candidates, _verb=verb):
            calls[_verb] = calls.get(_verb, 0) + 1
            return _inner(self, turn)

        monkeypatch.setattr(cls, "candidates", counted)

    def listed_afresh() -> set[str]:
        before = dict(calls)
        k.listed()
        return {v for v in calls if calls[v] != before.get(v, 0)}

    pack = k.wear("tinker_satchel")
    k.stash(pack, "storm_coil")
    assert listed_afresh() == {"salvage", "overload", "scavenge"}
    k.do("wait")
    assert listed_afresh() == set()
    k.put("rustling_husk")
    assert listed_afresh() == {"salvage"}
    assert k.listed("salvage") == ["salvage rustling_husk"] and k.listed("overload") == ["overload storm_coil"]
    k.state.instances[pack].contents.clear()
    assert listed_afresh() == {"salvage", "overload"}
    assert k.listed("overload") == []
    k.state.rule_data.setdefault("scavenge", {})["left"] = {k.agent.area: []}
    assert listed_afresh() == {"scavenge"}


# ============================================================================ facts, predicate
def test_every_rule_of_the_kingdom_declares_true_facts() -> None:
    game = load_game(GAME)
    rules = [*(game.rules.actions[v] for v in VERBS), *(game.rules.step_rule(n) for n in DYNAMICS)]
    answers = {}
    for rule in rules:
        facts = list(rule.facts(game))
        assert facts, rule.name
        for f in facts:
            assert f.question.endswith("?") and len(set(f.distractors)) == 3 and f.answer not in f.distractors, f
        answers[rule.name] = [f.answer for f in facts]
    assert answers == {
        "salvage": ["1 copper_coil, 1 tin_sheet, 1 rust_scrap", "on the ground at my feet"],
        "scavenge": ["it runs out of finds and is picked clean"],
        "rally": ["siphon power into it", "it strikes my foe every turn while we stand together"],
        "siphon": ["it loses health and the cell becomes charged", "it wakes and mends it"],
        "jam": ["3", "it falls out when the machine is defeated"],
        "overload": ["every hostile machine in the area"],
        "corrosion": ["they rust into rust_scrap after a while"],
        "intimidation": ["they lose health"],
        "reclamation": ["war machines move back in"],
        "united_presence": ["3 defense each"],
        "tactical_warnings": ["a friendly in the area calls it out"],
        "forge_migration": ["to the forges"],
        "scrap_mending": ["a wounded machine eats rust_scrap to mend itself"],
        "devil_drain": ["3"],
    }
    (parts, _), ((turns, _), (limit,)) = (
        game.rules.actions["salvage"].facts(game),
        (game.rules.actions["jam"].facts(game), game.rules.step_rule("devil_drain").facts(game)),
    )
    assert parts.distractors == (
        "2 gear_tooth, 1 servo_joint, 1 rust_scrap",
        "2 boiler_plate, 1 hellbrass_shard, 2 rust_scrap",
        "2 boiler_plate, 3 rivet",
    )
    assert turns.distractors == limit.distractors == ("4", "5", "9")  # n + 1, n + 2, 2n + 3: never n
    rhythm = [f.answer for f in game.rules.step_rule("combat_rhythm").facts(game)]
    assert rhythm == ["each repeats its own fixed pattern of attacking, guarding and pausing", "strike"]


def test_has_used_counts_uses_per_target(k) -> None:
    from odyssey_env.games.rust_throne.rules import has_used

    assert not has_used(k.engine, k.agent, "salvage")
    k.put("rustling_husk", 2)
    k.ok("salvage rustling_husk")
    assert has_used(k.engine, k.agent, "salvage") and has_used(k.engine, k.agent, "salvage", "rustling_husk")
    assert not has_used(k.engine, k.agent, "salvage", "hound_carcass")
    assert not has_used(k.engine, k.agent, "salvage", "rustling_husk", count=2)
    k.ok("salvage rustling_husk")
    assert has_used(k.engine, k.agent, "salvage", "rustling_husk", count=2)


# ============================================================================ whole-game properties
def _walk(engine: Engine, steps: int, seed: int):
    rng = random.Random(seed)
    for _ in range(steps):
        va = engine.valid_actions(PLAYER)
        command = rng.choice(va[rng.choice(list(va))])
        out = engine.step({PLAYER: command})[PLAYER]
        assert not out.invalid and not out.failed, (command, engine.state.feedback[PLAYER])
        yield command


def test_random_walks_use_every_verb_and_stay_bounded() -> None:
    """Valid actions stay sound along random walks that reach every verb of the kingdom, and nothing grows
    without bound (reclaimed machines, litter, jams, alliances, the scavenged areas)."""
    seen: set[str] = set()
    for seed in range(3):
        engine = Engine(load_game(GAME), seed)
        npcs0 = len(engine.state.npcs)
        for command in _walk(engine, 1500, seed):
            seen.add(command.split()[0])
        state = engine.state
        assert sum(1 for n in state.npcs.values() if n.origin == "reclaim") <= 3
        assert len(state.npcs) <= npcs0 + 12
        assert all(len(piles) <= 32 for piles in state.rule_data["corrosion"]["litter"].values())
        assert len(state.rule_data.get("jam", {}).get("until", {})) <= len(state.npcs)
        assert len(json.dumps(state.rule_data)) < 60_000
    # rally needs a sentinel woken by a siphon first, which random walks do not manage: the oracle's
    # episodes and the rally tests above cover it
    assert set(VERBS) - {"rally"} <= seen, set(VERBS) - seen


def test_valid_actions_are_sound_and_complete_along_a_walk() -> None:
    from env.test_env_valid_actions import _check_state, _soundness

    engine = Engine(load_game(GAME), 4)
    _, bad = _soundness(engine, 120, 4, per_verb=None)
    assert not bad, bad[:5]
    problems = []
    for i, _ in enumerate(_walk(engine, 200, 9)):
        if i % 40 == 0:
            problems += _check_state(engine)
    assert not problems, problems[:5]


def test_expansion_adds_places_the_rules_can_live_with() -> None:
    engine = Engine(load_game(GAME), 0)
    state, agent = engine.state, engine.state.agents[PLAYER]
    for name in state.areas:
        if name != "wreck_field":
            agent.visited[name] = 1
    engine.step({PLAYER: "enter wreck_field"})
    assert "world_expanded" in engine.kinds
    new = [a for a in state.areas if a not in engine.game.areas]
    assert 2 <= len(new) <= 3
    agent.area = new[0]
    engine.step({PLAYER: "wait"})
    assert "scavenge" not in engine.valid_actions(PLAYER)
    agent.max_hp = agent.hp = 10**6  # nothing here may send me back to the camp
    for _ in range(60):
        engine.step({PLAYER: "wait"})
        assert "object_corroded" not in engine.kinds  # what the new places hold is not litter
    agent.hands["iron_rod"] = 1
    engine.step({PLAYER: "drop iron_rod"})
    rusted = []
    for _ in range(50):
        engine.step({PLAYER: "wait"})
        rusted += [e.data for e in engine.events if e.kind == "object_corroded"]
    assert rusted == [{"area": new[0], "object": "iron_rod", "amount": 1}]  # but what I leave there is


def test_same_seed_same_trajectory_across_processes() -> None:
    a = subprocess_digest(GAME, 3, 400, "0", pick_seed=7)
    assert len(a) == 64 and a == subprocess_digest(GAME, 3, 400, "4242", pick_seed=7)
    assert a != subprocess_digest(GAME, 4, 400, "0", pick_seed=7)


_NAMES = [
    "rustling_husk",
    "charged_cell",
    "drained_cell",
    "iron_wedge",
    "storm_coil",
    "oath_sentinel_0",
    "rustling_0",
    "gearhound_0",
    "cogwright_ilsa",
    "wreck_field",
    "hellbrass_shard",
    "x",
]
_any = st.text(st.characters(codec=None, exclude_categories=()), max_size=80)
_word = st.one_of(st.sampled_from(_NAMES), st.integers(-3, 10**6).map(str), _any)
_commands = st.one_of(
    _any,
    st.builds(
        lambda v, ws: " ".join([v, *ws]), st.sampled_from([*VERBS, "attack", "pick up"]), st.lists(_word, max_size=3)
    ),
)


@pytest.fixture(scope="module")
def fuzz_env():
    env = OdysseyEnv(GAME)
    env.reset(seed=0)
    return env


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=_commands)
def test_any_command_gets_an_answer(fuzz_env, command: str) -> None:
    obs, _, _, _, info = fuzz_env.step(command)
    assert fuzz_env.observation_space.contains(obs)
    assert info["invalid_action"] or info["action_failed"] or obs.strip()
    if fuzz_env.engine.state.done or fuzz_env.engine.state.agents["player"].hp <= 0:
        fuzz_env.reset(seed=0)


def test_saved_state_continues_identically_with_the_kingdoms_memory() -> None:
    """Jams, alliances, litter, logs and finds are saved with the state and continue exactly."""
    engine = Engine(load_game(GAME), 2)
    moves = list(_walk(engine, 300, 2))
    assert moves
    saved = json.loads(json.dumps(engine.save_state()))
    other = Engine(load_game(GAME), 0)
    other.load_state(copy.deepcopy(saved))
    rng = random.Random(11)
    for _ in range(200):
        va = engine.valid_actions(PLAYER)
        command = rng.choice(va[rng.choice(list(va))])
        assert other.valid_actions(PLAYER) == va
        engine.step({PLAYER: command})
        other.step({PLAYER: command})
    assert engine.state.to_dict() == other.state.to_dict()


def test_the_oracle_earns_one_reward_per_stage_and_uses_every_verb() -> None:
    """The maximum main-quest reward is the number of stage nodes, and the quest takes all six verbs."""
    from odyssey_agents.base import Task
    from odyssey_agents.oracle import OracleAgent

    env = OdysseyEnv(GAME)
    obs, info = env.reset(seed=1)
    agent = OracleAgent(env)
    agent.reset(Task(game=GAME, title=env.game.title, verbs=tuple(env.verbs()), seed=1, max_steps=500))
    quest_reward, verbs, terminated = 0.0, set(), False
    for _ in range(500):
        command = agent.act(obs, {**info, "engine": env.engine}).action
        verbs.add(command.split()[0])
        obs, _, terminated, _, info = env.step(command)
        quest_reward += info["reward_breakdown"]["quest"]
        assert not info["invalid_action"] and not info["action_failed"], command
        if terminated:
            break
    assert terminated and quest_reward == 40 == info["quest"]["total"]
    assert set(VERBS) <= verbs
