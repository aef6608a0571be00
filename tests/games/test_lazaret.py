"""Lazaret: the plague-ward game (sizes, its six verbs, its three step rules, the quest).

The sizes (those of the paper's game it stands in for) are computed from the data as ``odyssey games``
prints them. Each verb is shown succeeding (with the events it emits), refused with each of its messages,
and listed exactly when it would succeed; each step rule is shown firing and not firing. The tests drive a
real engine on the shipped game, in areas emptied first, with an RNG that never rolls an ambush unless a
test asks for it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kit import PLAYER, Harness, Scripted, engine_on, game_copy, subprocess_digest

import odyssey_env
from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.env import OdysseyEnv
from odyssey_env.game import Game
from odyssey_env.games.lazaret import rules as q
from odyssey_env.listing import CHECK_ENV
from odyssey_env.quests import hints
from odyssey_env.quests.main_quest import plan
from odyssey_env.quests.spec import Condition
from odyssey_env.rulelang.runtime import KEY, write_var
from odyssey_env.rules import BASE_VERBS, Fact
from odyssey_env.world import make_objects
from odyssey_eval.catalog import main as games_main

GAME = "lazaret"
#: The remedies rules.json's concoct makes, and the herbs of each (what a test may ask for by name).
REMEDIES = {
    "fever_draught": ("feverfew", "sallow_bark"),
    "wormwood_purge": ("wormwood", "rue_sprig"),
    "four_thieves_vinegar": ("garlic_bulb", "hyssop"),
    "angelica_cordial": ("angelica_root", "feverfew"),
    "nightshade_drops": ("nightshade_berry", "hyssop"),
}
NEW_VERBS = ("refuel", "concoct", "shove", "eavesdrop", "burn corpses", "barricade")
#: Step rules of rules.json (the hunt of the risen was corpse_corruption's second half in rules.py; the
#: light's burning and the dark's lurkers and veil were rules.py's LampFuel, which the paper's Quarantine keeps).
DATA_RULES = ("corpse_corruption", "risen_hunt", "quarantine_lockdown", "lamp_fuel")
#: Steps after it was made that a corpse lying unburned rises, and steps before that it stirs (rules.json's
#: corpse_corruption: its per-object counter ``age`` is 1 in the step a corpse was made, so it rises at 49).
RISE_AFTER, WARN_BEFORE = 48, 6
#: Steps a corpse lies unburned before rules.json's quarantine_lockdown bars an area's doors.
LOCKDOWN_AFTER = 20
#: Blows of the risen a barricade takes (rules.json's barricade verb sets its per-exit counter to it).
BARRICADE_STRENGTH = 6
#: Steps between two moves of the risen (rules.json's risen_hunt runs every third step).
HUNT_PERIOD = 3
UNTAUGHT = ("barricade", "concoct", "shove", "eavesdrop")
#: Events step rules report on their own, whatever the command was.
WORLD = frozenset(
    {
        "agent_hit",
        "agent_ambushed",
        "level_up",
        "npc_spawned",
        "npc_respawned",
        "corpse_risen",
        "lockdown_started",
        "lockdown_lifted",
        "light_out",
        "struck_in_dark",
        "barricade_broken",
    }
)


class Ward(Harness):
    """The kit's harness on the lazaret game, every area emptied, the crypt door open, quests asleep, and an
    RNG that never rolls an ambush unless a test asks for it."""

    world_events = WORLD

    def __init__(
        self, area: str = "fever_ward", seed: int = 0, game: Game | None = None, agents: tuple[str, ...] = (PLAYER,)
    ):
        super().__init__(engine_on(game or GAME, seed, rng=Scripted(), agents=agents))
        self.clear_everywhere()
        state = self.state
        for a, b in (("fever_ward", "charnel_stair"), ("charnel_stair", "fever_ward")):
            state.areas[a].exits[b].locked = False
        state.rule_data["main_quest"]["agents"][PLAYER]["open"] = []  # no stage completes behind our back
        for var in ("age", q.STIRRING):  # the world's own dead, emptied away: their ages with them
            state.rule_data[KEY]["vars"].pop(var, None)
        self.agent.area = area

    def pack(self, *contents: tuple[str, int]) -> str:
        bag = self.wear("physic_bag")
        for type_name, n in contents:
            self.stash(bag, type_name, n)
        return bag

    def lamp(self, fuel: int, where: str = "hand") -> str:
        handle = self.hold("storm_lantern")[0] if where == "hand" else self.put("storm_lantern")[0]
        if fuel:
            q.set_fuel(self.engine, handle, fuel)
        return handle

    def fuel(self, handle: str) -> int:
        return q.fuel_of(self.state, handle)

    def aged(self) -> dict[str, int]:
        """Corpse -> rules.json's per-object counter ``age`` (steps counted since it was made), for those aged."""
        ages: dict[str, int] = self.state.rule_data[KEY]["vars"].get("age", {})
        return dict(ages)

    def stirring(self) -> list[str]:
        return [h for h, on in self.state.rule_data[KEY]["vars"].get(q.STIRRING, {}).items() if on]


@pytest.fixture(autouse=True)
def _check_valid_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every engine here compares each cached valid-action listing with a fresh one (odyssey_env.listing),
    so the listing checks below also check the verbs' ``depends_on``."""
    monkeypatch.setenv(CHECK_ENV, "1")


@pytest.fixture
def w() -> Ward:
    return Ward()


def variant(tmp_path: Path, change: Callable[[dict], None]) -> Game:
    """The game loaded from a copy of its folder whose world data ``change`` edited first, with the shipped
    rules module, ``odyssey_env.games.lazaret.rules`` (the one ``tools/mutation.py`` mutates)."""
    return game_copy(GAME, tmp_path / GAME, change, rules=q)


# ============================================================================ sizes and registration
def test_sizes_match_the_issue() -> None:
    s = load_game(GAME).summary()
    assert (s["places"], s["areas"], s["area_levels"]) == (2, 7, "1-5")
    assert (s["object_types"], s["npc_types"], s["enemy_types"], s["merchant_types"]) == (79, 4, 3, 1)
    assert (s["chapters"], s["stages"], s["leaves"], s["dag"]) == (2, 18, 10, True)
    assert s["tutorial_steps"] > 0 and s["side_quests"] and s["expansion"]
    assert s["verbs"] == 23 and set(s["verb_list"]) == set(BASE_VERBS) | set(NEW_VERBS)
    base = load_game("mossfall").summary()["step_rules"]
    assert set(s["step_rules"]) == set(base) | set(DATA_RULES)


def test_odyssey_games_prints_the_sizes(capsys) -> None:
    assert games_main([GAME]) == 0
    header, _, row, *notes = capsys.readouterr().out.splitlines()
    cells = dict(zip(header.split("  "), row.split(), strict=False))
    values = row.split()
    assert values.pop(1) == "Odyssey/Lazaret-v0" and "Odyssey/* are odyssey's own games" in "".join(notes)
    assert values[:9] == ["lazaret", "2", "7", "1-5", "79", "4", "18", "10", "2"], cells
    assert values[-2:] == ["23", "17"]


def test_the_env_id_is_registered_and_plays() -> None:
    env = gym.make("Odyssey/Lazaret-v0", tutorial=True)
    obs, info = env.reset(seed=0)
    assert info["in_tutorial"] and "cordon_tent" in obs
    obs, *_ = env.step("wait")
    assert env.observation_space.contains(obs)


def test_every_stage_awards_once_after_its_prerequisites() -> None:
    game = load_game(GAME)
    p = plan(game.quest.main)
    chapter_ids = {s.id: ch.id for ch in game.quest.main.chapters for s in ch.stages}
    leaves = [s for s in p.stages if not any(chapter_ids[r] == chapter_ids[s.id] for r in p.requires[s.id])]
    assert len(leaves) == 10
    # each chapter's stages that require nothing of their chapter open together; chapter 2 waits for chapter 1
    assert [s.id for s in p.stages if not p.requires[s.id]] == [
        "hear_the_sister",
        "take_a_lantern",
        "pick_feverfew",
        "strip_sallow_bark",
        "crush_vermin",
    ]
    assert all(p.requires[s.id] == ("barricade_the_crypt",) for s in game.quest.main.chapters[1].stages[:5])


def test_a_stage_done_before_it_opens_is_not_awarded() -> None:
    """Burning the dead before the lantern stage is complete does not count for burn_the_dead."""
    w = Ward("fever_ward")
    mine = w.state.rule_data["main_quest"]["agents"][PLAYER]
    mine["open"] = ["hear_the_sister", "take_a_lantern"]  # as at the start, minus what the test does not touch
    w.put("plague_corpse", 2)
    w.lamp(10)
    w.ok("burn corpses")
    # the burning fed lamp in hand completes its two stages, but burn_the_dead was not open yet
    assert mine["done"] == ["take_a_lantern", "light_the_lantern"]
    sister = w.npc("ward_sister")
    w.ok(f"talk to {sister.handle}")
    assert "burn_the_dead" in mine["open"] and len(q.corpses_in(w.engine, "fever_ward")) == 3  # laid out on opening
    w.ok("burn corpses")
    assert mine["done"][-1] == "burn_the_dead"


# ============================================================================ plan-hint helpers
def test_the_helpers_find_nothing_in_a_game_without_the_rules() -> None:
    engine = Engine(load_game("mossfall"), 0)
    agent = engine.state.agents[PLAYER]
    assert q.carried_lights(engine, agent) == [] and q.corpses_in(engine, agent.area) == []
    assert q.sees(engine, agent) and not q.locked_down(engine, agent.area)


# ============================================================================ the light
def test_refuel_fills_a_carried_light_from_its_fuel(w: Ward) -> None:
    lamp = w.lamp(0)
    w.pack(("lamp_oil", 2))
    text = w.ok(f"refuel {lamp}")
    assert f"I fill {lamp} with lamp_oil: it holds 20 turns of light now." in text
    assert w.fuel(lamp) == 20 and w.events("light_refueled") == [
        {"object": "storm_lantern", "handle": lamp, "fuel": 20}
    ]
    w.ok(f"refuel {lamp}")
    assert w.fuel(lamp) == 40
    assert w.state.instances[w.agent.equipment["pack"]].contents.get("lamp_oil", 0) == 0
    w.hold("lamp_oil")
    w.fails(f"refuel {lamp}", f"Cannot refuel {lamp}: it is full already.")


def test_refuel_caps_at_the_capacity_and_works_on_a_packed_light(w: Ward) -> None:
    bag = w.pack(("storm_lantern", 1))
    (lamp,) = list(w.state.instances[bag].contents)
    q.set_fuel(w.engine, lamp, 30)
    w.hold("lamp_oil")
    w.ok(f"refuel {lamp}")
    assert w.fuel(lamp) == 40 and "lamp_oil" not in w.agent.hands


def test_refuel_refusals(w: Ward) -> None:
    w.hold("tallow")
    w.fails("refuel tallow", "Cannot refuel tallow: it is not a light source.")
    lamp = w.lamp(0, where="ground")
    w.fails(f"refuel {lamp}", f"Cannot refuel {lamp}: I do not carry it.")
    w.ok(f"pick up {lamp}")
    w.fails(f"refuel {lamp}", f"Cannot refuel {lamp}: I carry no lamp_oil.")
    assert w.listed("refuel") == []
    bag = w.pack(("tallow_candle", 1))
    (candle,) = list(w.state.instances[bag].contents)
    assert w.listed("refuel") == [f"refuel {candle}"]  # the tallow in hand feeds the candle, not the lantern


def test_a_light_burns_only_in_the_dark_and_says_so(w: Ward) -> None:
    lamp = w.lamp(3)
    w.ok("wait")
    assert w.fuel(lamp) == 3 and "lights the dark" not in w.feedback  # lit ward: not a drop of oil
    w.ok("enter charnel_stair")
    assert w.fuel(lamp) == 2 and f"My {lamp} lights the dark (2 turns of lamp_oil left)." in w.feedback
    assert "beside me" not in w.feedback  # my own light, said once
    assert "(it is pitch dark)" not in w.engine.observe(PLAYER)
    w.ok("wait")
    w.ok("wait")
    assert w.fuel(lamp) == 0 and f"My {lamp} gutters out. Darkness closes in." in w.feedback
    assert "pitch dark" not in w.feedback
    assert w.events("light_out") == [{"handle": lamp, "area": "charnel_stair"}]
    w.ok("wait")
    assert w.fuel(lamp) == 0 and "It is pitch dark here and I carry no burning light" in w.feedback


def test_darkness_hides_the_area_and_bars_the_way_on(w: Ward) -> None:
    w.put("bone_shard", area="charnel_stair")
    w.ok("enter charnel_stair")  # from the light into the dark: always possible
    obs = w.engine.observe(PLAYER)
    assert "I see no objects near me (it is pitch dark)." in obs and "I see no one nearby (it is pitch dark)." in obs
    assert "bone_shard" not in obs
    assert w.listed("enter") == ["enter fever_ward"]
    w.fails("enter ossuary", "Cannot find my way to ossuary in the dark: I need a burning light.")
    lamp = w.lamp(5)
    assert w.listed("enter") == ["enter fever_ward", "enter ossuary"]
    w.ok("enter ossuary")
    assert w.fuel(lamp) == 4
    w.ok("enter charnel_stair")
    w.agent.hands.clear()
    w.ok("enter fever_ward")  # back into the light needs nothing
    assert "I see no objects near me." in w.engine.observe(PLAYER)


def test_someone_elses_light_lights_the_dark_for_me() -> None:
    game = load_game(GAME)
    engine = Engine(game, 0, agents=("ada", "bo"))
    engine.rng = Scripted()
    for agent in engine.state.agents.values():
        agent.area = "ossuary"
    ((lamp, _),) = make_objects(game, engine.state, "storm_lantern", 1)
    engine.state.agents["ada"].hands[lamp] = 1
    q.set_fuel(engine, lamp, 9)
    engine.step({"ada": "wait", "bo": "wait"})
    assert "I see by the light of someone beside me." in engine.state.feedback["bo"]
    assert not any("pitch dark" in line for line in engine.state.feedback["bo"])
    assert "(it is pitch dark)" not in engine.observe("bo")
    assert q.fuel_of(engine.state, lamp) == 8  # one lamp, one turn


def test_lurkers_strike_in_the_dark_only_without_light(w: Ward) -> None:
    husk = w.npc("risen_husk", "charnel_stair")
    w.agent.area = "charnel_stair"
    w.engine.rng = Scripted((0.999, 0.1))  # the ambush rule's roll fails; the lurker's succeeds
    w.ok("wait")
    hits = w.outcome.events
    assert [e.data for e in hits if e.kind == "struck_in_dark"] == [
        {"npc": husk.handle, "type": "risen_husk", "damage": husk.attack}
    ]
    assert husk.engaged == PLAYER and w.agent.combat == husk.handle and w.agent.hp == 100 - husk.attack
    assert f"{husk.handle} strikes at me out of the dark for {husk.attack} damage!" in w.feedback

    v = Ward("charnel_stair")
    v.npc("risen_husk")
    v.lamp(10)
    v.engine.rng = Scripted((0.999, 0.1))
    v.ok("wait")
    assert v.agent.combat is None and v.agent.hp == 100


@pytest.mark.parametrize("roll", [0.35, 0.5])
def test_a_lurker_needs_its_roll(w: Ward, roll: float) -> None:
    w.npc("risen_husk", "charnel_stair")
    w.agent.area = "charnel_stair"
    w.engine.rng = Scripted((0.999, roll))  # at or above lurk_chance 0.35
    w.ok("wait")
    assert w.agent.combat is None and w.agent.hp == 100


def test_only_an_idle_enemy_lurks_and_only_at_someone_not_fighting(w: Ward) -> None:
    # The rule alone, with a roll that strikes: the other rules roll first, and not always
    light = w.engine.rules.step_rule(q.LIGHT)
    w.agent.area = "charnel_stair"
    w.npc("ward_sister")  # not hostile
    fighting = w.npc("risen_husk")
    fighting.engaged = "someone else"
    w.engine.rng = Scripted((0.1,))
    light.apply(w.engine)
    assert w.agent.combat is None and w.agent.hp == 100
    rat = w.npc("plague_rat")
    rat.engaged, w.agent.combat = PLAYER, rat.handle  # fighting the rat; an idle husk waits its turn
    husk = w.npc("risen_husk")
    w.engine.rng = Scripted((0.1,))
    light.apply(w.engine)
    assert husk.engaged is None and w.agent.combat == rat.handle and w.agent.hp == 100
    w.agent.combat = None
    w.engine.rng = Scripted((0.1,))
    light.apply(w.engine)  # the same, not fighting: struck
    assert husk.engaged == PLAYER and w.agent.hp < 100


def test_the_light_need_names_the_next_missing_piece(w: Ward) -> None:
    e, a = w.engine, w.agent
    need = q.light_need(e, a, 10)
    assert need.type == "any_of" and [c.object for c in need.conditions] == [
        "storm_lantern",
        "tallow_candle",
        "pitch_torch",
    ]
    assert [c.object for c in q.light_need(e, a, 13).conditions] == ["storm_lantern", "pitch_torch"]
    assert len(q.light_need(e, a, 12).conditions) == 3  # a candle holds exactly 12 turns
    lamp = w.lamp(4)
    assert q.light_need(e, a, 10) == hints.has("lamp_oil")
    w.hold("lamp_oil")
    assert q.light_need(e, a, 10) is hints.did("light_refueled", handle=lamp)
    q.set_fuel(w.engine, lamp, 10)
    assert q.light_need(e, a, 10) is None and q.carries_light(e, a, fuel=10) and not q.carries_light(e, a, fuel=11)
    assert q.light_need(e, a, 41) is None or q.light_need(e, a, 41).type == "any_of"


def test_the_light_need_takes_the_first_light_i_carry_that_can_hold_enough(w: Ward) -> None:
    w.hold("tallow_candle")
    w.hold("storm_lantern")
    assert q.light_need(w.engine, w.agent, 12) == hints.has("tallow")
    assert q.light_need(w.engine, w.agent, 13) == hints.has("lamp_oil")


def test_refuel_needs(w: Ward) -> None:
    e, a = w.engine, w.agent
    r = e.rules.actions["refuel"]
    assert r.needs(e, a, {}).type == "any_of"
    assert r.needs(e, a, {"handle": "storm_lantern_99"}).type == "any_of"  # no such light (any more): any light
    lamp = w.lamp(0)
    assert r.needs(e, a, {}) == hints.has("lamp_oil")
    w.pack(("tallow_candle", 1))
    assert r.needs(e, a, {}) == hints.has("lamp_oil")  # the first light I carry
    assert r.needs(e, a, {"handle": lamp}) == hints.has("lamp_oil")
    w.hold("lamp_oil")
    assert r.needs(e, a, {"handle": lamp}) is None


# ============================================================================ the dead
def test_burn_corpses_burns_every_corpse_here(w: Ward) -> None:
    dead = w.put("plague_corpse", 3)
    w.put("plague_corpse", area="dispensary")
    lamp = w.lamp(5)
    assert w.listed("burn corpses") == ["burn corpses"]
    text = w.ok("burn corpses")
    assert f"I set 3 dead alight with the flame of {lamp}. They burn down to 3 bone_ash." in text
    assert w.events("corpses_burned") == [{"area": "fever_ward", "count": 3, "light": lamp}]
    assert all(h not in w.state.instances and h not in w.state.areas["fever_ward"].objects for h in dead)
    assert w.state.areas["fever_ward"].objects == {"bone_ash": 3}
    assert w.fuel(lamp) == 3 and len(q.corpses_in(w.engine, "dispensary")) == 1
    w.fails("burn corpses", "There are no dead here to burn.")


def test_burn_corpses_refusals(w: Ward) -> None:
    w.put("plague_corpse")
    lamp = w.lamp(1)
    w.fails("burn corpses", "Cannot burn the dead: I need a light I carry with 2 turns of fuel in it.")
    assert w.listed("burn corpses") == []
    q.set_fuel(w.engine, lamp, 2)
    rat = w.npc("plague_rat")
    rat.engaged, w.agent.combat = PLAYER, rat.handle
    w.fails("burn corpses", f"Cannot burn the dead while fighting {rat.handle}.")
    assert w.listed("burn corpses") == []


def test_burn_corpses_needs_a_flame_then_a_place(w: Ward) -> None:
    e, a = w.engine, w.agent
    r = e.rules.actions["burn corpses"]
    w.put("plague_corpse", area="physic_garden")
    assert r.needs(e, a, {}).type == "any_of"  # first a light
    w.lamp(2)
    assert r.needs(e, a, {}) == hints.in_area("physic_garden")  # then the nearest dead
    assert r.needs(e, a, {"area": "dispensary"}) == hints.in_area("dispensary")
    w.agent.area = "physic_garden"
    assert r.needs(e, a, {}) is None


def test_a_corpse_stirs_then_rises_as_a_husk(w: Ward) -> None:
    (corpse,) = w.put("plague_corpse", area="dispensary")
    w.agent.area = "dispensary"
    w.ok("wait")  # the rule finds it: counted once, in the step it was made
    assert w.aged() == {corpse: 1}
    assert "stirs" not in w.wait(RISE_AFTER - WARN_BEFORE - 1)
    w.ok("wait")
    assert f"{corpse} stirs under its shroud: it will rise unless it is burned soon." in w.feedback
    assert w.stirring() == [corpse] and q.stirring(w.engine, corpse)
    assert "stirs" not in w.wait(WARN_BEFORE - 1)  # warned once
    assert corpse in w.state.instances and not w.state.areas["dispensary"].npcs
    w.ok("wait")
    (husk,) = w.state.areas["dispensary"].npcs
    assert w.state.npcs[husk].type == "risen_husk" and corpse not in w.state.instances
    assert corpse not in w.state.areas["dispensary"].objects and w.stirring() == []
    assert f"{corpse} rises from the floor as {husk}!" in w.feedback
    assert [e.data for e in w.outcome.events if e.kind == "corpse_risen"] == [
        {"corpse": corpse, "npc": husk, "area": "dispensary"}
    ]
    assert corpse not in w.aged()


def test_a_carried_or_burned_corpse_does_not_rise(w: Ward) -> None:
    (corpse,) = w.put("plague_corpse")
    w.ok(f"pick up {corpse}")
    for _ in range(RISE_AFTER + 2):
        w.ok("wait")
    assert corpse in w.agent.hands and not w.state.areas["fever_ward"].npcs
    assert w.aged() == {corpse: RISE_AFTER + 3}  # it ages in my hands all the same
    w.ok(f"drop {corpse}")  # laid down again: it is long overdue
    assert w.state.areas["fever_ward"].npcs and corpse not in w.state.instances

    v = Ward()
    (other,) = v.put("plague_corpse")
    v.lamp(5)
    v.ok("burn corpses")
    for _ in range(RISE_AFTER + 2):
        v.ok("wait")
    assert not v.state.areas["fever_ward"].npcs and other not in v.aged()


def test_a_packed_corpse_ages_unseen(w: Ward) -> None:
    bag = w.pack()
    (corpse,) = w.put("plague_corpse")
    w.ok(f"pick up {corpse}")
    w.ok(f"store 1 {corpse} {bag}")
    w.wait(RISE_AFTER + 1)
    assert corpse in w.state.instances[bag].contents and not w.state.areas["fever_ward"].npcs
    assert w.aged()[corpse] == RISE_AFTER + 3 and w.stirring() == []  # it stirs only where it is seen


def test_a_corpse_burned_after_it_stirred_is_forgotten(w: Ward) -> None:
    (corpse,) = w.put("plague_corpse")
    assert f"{corpse} stirs" in w.wait(RISE_AFTER - WARN_BEFORE + 1)
    assert w.stirring() == [corpse]
    w.lamp(5)
    w.ok("burn corpses")
    assert w.aged() == {} and w.stirring() == []


def test_every_corpse_burned_at_once_is_forgotten_at_once(w: Ward) -> None:
    w.put("plague_corpse", 2)
    w.wait(2)
    assert len(w.aged()) == 2
    w.lamp(5)
    w.ok("burn corpses")
    assert w.aged() == {}


def test_the_world_s_own_dead_are_laid_out_from_the_start() -> None:
    engine = Engine(load_game(GAME), 0)
    state = engine.state
    corpses = {h for h, inst in state.instances.items() if inst.type == "plague_corpse"}
    ages = state.rule_data[KEY]["vars"]["age"]  # counted once before the first step, as made at step 0
    assert corpses and state.step == 0 and ages == dict.fromkeys(sorted(corpses), 1)


def test_the_first_corpse_of_a_world_without_any_is_laid_out(w: Ward) -> None:
    state = w.state
    for handle in [h for h, inst in state.instances.items() if inst.type == "plague_corpse"]:
        del state.instances[handle]
    del state.counters["plague_corpse"]
    w.engine.rules.step_rule(q.CORRUPTION).start(w.engine)
    w.ok("wait")
    (corpse,) = w.put("plague_corpse")
    w.ok("wait")
    assert corpse == "plague_corpse_0" and w.aged() == {corpse: 1}


def test_the_fallen_husk_leaves_a_corpse_that_is_timed_from_its_fall(w: Ward) -> None:
    husk = w.npc("risen_husk")
    husk.hp = 1
    w.hold("orderly_cudgel")
    w.ok(f"attack {husk.handle}")
    (corpse,) = q.corpses_in(w.engine, "fever_ward")
    assert w.aged()[corpse] == 1  # counted first in the step it fell


def test_the_risen_hunt_the_living_but_not_into_the_gatehouse(w: Ward) -> None:
    husk = w.npc("risen_husk", "ossuary")
    sister = w.npc("ward_sister", "ossuary")  # only the risen hunt
    w.agent.area = "fever_ward"  # two ways from the ossuary
    period = HUNT_PERIOD
    while w.state.step % period != period - 1:
        w.ok("wait")
    w.ok("wait")
    assert husk.area == "charnel_stair" and w.state.areas["charnel_stair"].npcs == [husk.handle]
    assert w.state.areas["ossuary"].npcs == [sister.handle] and sister.area == "ossuary"
    for _ in range(period):
        w.ok("wait")
    assert husk.area == "fever_ward" and f"{husk.handle} shambles in from charnel_stair." in w.feedback
    w.ok("enter cordon_gatehouse")
    for _ in range(2 * period):
        w.ok("wait")
    assert husk.area == "fever_ward"  # the braziers keep it out


def test_a_husk_beside_someone_stays_there() -> None:
    w = Ward(agents=(PLAYER, "ally"))
    w.state.agents["ally"].area = "dispensary"
    husk = w.npc("risen_husk")
    for _ in range(2 * HUNT_PERIOD):
        w.engine.step({PLAYER: "wait", "ally": "wait"})
        assert husk.area == "fever_ward"


def test_the_risen_do_not_hunt_beyond_their_reach(w: Ward) -> None:
    husk = w.npc("risen_husk", "drowned_cistern")
    w.agent.area = "fever_ward"  # three ways off
    for _ in range(9):
        w.ok("wait")
    assert husk.area == "drowned_cistern"


def test_a_barricade_holds_the_risen_until_they_batter_it_down(w: Ward) -> None:
    husk = w.npc("risen_husk", "charnel_stair")
    w.hold("deal_plank", 2)
    w.ok("barricade charnel_stair")
    strength = BARRICADE_STRENGTH
    period = HUNT_PERIOD
    told = w.wait(period * (strength - 1))
    assert (
        husk.area == "charnel_stair"
        and told.count("Something batters at the barricade to charnel_stair.") == strength - 1
    )
    assert q.barricades(w.state) == {"charnel_stair|fever_ward": 1}
    told, broken = [], []
    for _ in range(period):
        told.append(w.ok("wait"))
        broken += w.events("barricade_broken")
    told = "\n".join(told)
    assert not q.barricaded(w.state, "fever_ward", "charnel_stair")
    assert broken == [{"a": "charnel_stair", "b": "fever_ward", "by": husk.handle}]
    assert f"The barricade to charnel_stair gives way under {husk.handle}!" in told
    for _ in range(period):
        w.ok("wait")
    assert husk.area == "fever_ward"


def test_an_area_is_locked_down_while_its_dead_lie_too_long(w: Ward) -> None:
    after = LOCKDOWN_AFTER
    w.put("plague_corpse")
    w.wait(after)  # laid out on the first step, so one step short
    assert not q.locked_down(w.engine, "fever_ward") and "enter dispensary" in w.listed("enter")
    w.ok("wait")
    assert q.locked_down(w.engine, "fever_ward")
    assert [e.data for e in w.outcome.events if e.kind == "lockdown_started"] == [{"area": "fever_ward"}]
    assert "The wardens bar the doors of fever_ward" in w.feedback
    assert "fever_ward is under quarantine lockdown: no one leaves until its dead are burned." in w.feedback
    assert w.listed("enter") == []
    w.fails("enter dispensary", "Cannot leave fever_ward: it is under quarantine lockdown until its dead are burned.")
    w.fails("enter ossuary", "Cannot enter ossuary: it is not a neighboring area.")  # the usual refusals first
    w.fails("enter fever_ward", "I am already in fever_ward.")
    lamp = w.lamp(4)
    w.ok("burn corpses")
    assert not q.locked_down(w.engine, "fever_ward") and w.fuel(lamp) == 2
    assert [e.data for e in w.outcome.events if e.kind == "lockdown_lifted"] == [{"area": "fever_ward"}]
    assert "The doors of fever_ward are unbarred: the lockdown is lifted." in w.feedback
    w.ok("enter dispensary")


def test_the_lockdown_refusal_is_the_rule_file_s_and_comes_before_the_dark(w: Ward) -> None:
    w.ok("enter charnel_stair")  # dark, and no light: the way on into the dark is barred too
    (corpse,) = w.put("plague_corpse")
    write_var(w.engine, "lain", corpse, LOCKDOWN_AFTER)  # one step short: the wait puts the stair under lockdown
    w.ok("wait")
    assert q.locked_down(w.engine, "charnel_stair")
    refusal = "Cannot leave charnel_stair: it is under quarantine lockdown until its dead are burned."
    w.fails("enter ossuary", refusal)  # the lockdown first, as QuarantineEnter said it before the hook took it
    w.fails("enter fever_ward", refusal)
    assert w.listed("enter") == []
    enter = w.engine.rules.actions["enter"]
    assert isinstance(enter, q.QuarantineEnter) and type(enter) is not q.QuarantineEnter  # rules.json's hook on it
    assert "no one leaves an area under lockdown" in enter.description
    assert "lockdown" not in q.QuarantineEnter.description  # a game that binds rules.py alone has no lockdown
    del w.state.areas["charnel_stair"].objects[corpse]  # the dead gone, the lockdown lifted
    write_var(w.engine, q.LOCKDOWN_FLAG, "charnel_stair", False)
    w.fails("enter ossuary", "Cannot find my way to ossuary in the dark: I need a burning light.")
    assert w.listed("enter") == ["enter fever_ward"]


def test_a_second_lockdown_leaves_the_first_in_place(w: Ward) -> None:
    after = LOCKDOWN_AFTER
    w.put("plague_corpse", area="dispensary")
    w.wait(3)
    w.put("plague_corpse", area="physic_garden")
    seen = []
    for _ in range(after + 3):
        w.ok("wait")
        seen += [(e.kind, e.data["area"]) for e in w.outcome.events if e.kind.startswith("lockdown")]
    assert seen == [("lockdown_started", "dispensary"), ("lockdown_started", "physic_garden")]
    assert sorted(a for a in w.state.areas if q.locked_down(w.engine, a)) == ["dispensary", "physic_garden"]


def test_a_lockdown_lets_people_in_and_ends_when_the_dead_rise(w: Ward) -> None:
    w.put("plague_corpse", area="physic_garden")
    w.agent.area = "dispensary"
    w.wait(LOCKDOWN_AFTER + 1)
    assert q.locked_down(w.engine, "physic_garden") and "enter physic_garden" in w.listed("enter")
    w.ok("enter physic_garden")
    assert w.listed("enter") == []
    for _ in range(RISE_AFTER):
        w.ok("wait")
    assert not q.locked_down(w.engine, "physic_garden") and w.state.areas["physic_garden"].npcs


def test_nothing_rots_or_locks_in_the_tutorial() -> None:
    env = OdysseyEnv(GAME, tutorial=True)
    env.reset(seed=0)
    engine = env.engine
    engine.rng = Scripted()
    room = engine.state.agents[PLAYER].area
    ((corpse, _),) = make_objects(engine.game, engine.state, "plague_corpse", 1)
    engine.state.areas[room].objects[corpse] = 1
    for _ in range(60):
        engine.step({PLAYER: "wait"})
    assert corpse in engine.state.areas[room].objects and not q.locked_down(engine, room)


def test_enter_needs_name_the_light_and_the_burning(w: Ward) -> None:
    e, a = w.engine, w.agent
    enter = e.rules.actions["enter"]
    assert enter.needs(e, a, {"area": "dispensary"}) is None
    assert enter.needs(e, a, {"area": "charnel_stair"}).type == "any_of"
    w.lamp(20)
    assert enter.needs(e, a, {"area": "charnel_stair"}) is None
    write_var(e, q.LOCKDOWN_FLAG, "fever_ward", True)
    assert enter.needs(e, a, {"area": "dispensary", "from": "fever_ward"}) is hints.did(
        "corpses_burned", area="fever_ward"
    )


# ============================================================================ barricade, eavesdrop
def test_barricade_boards_a_way_and_i_climb_over_it(w: Ward) -> None:
    w.hold("deal_plank", 2)
    assert "barricade charnel_stair" in w.listed("barricade")
    text = w.ok("barricade charnel_stair")
    assert "I nailed 2 deal_plank across the way to charnel_stair" in text
    assert w.events("path_barricaded") == [{"a": "fever_ward", "b": "charnel_stair"}]
    assert "deal_plank" not in w.agent.hands and q.barricaded(w.state, "charnel_stair", "fever_ward")
    assert q.barricades(w.state) == {"charnel_stair|fever_ward": BARRICADE_STRENGTH}
    w.ok("enter charnel_stair")
    assert "I climbed over the barricade between fever_ward and charnel_stair." in w.feedback
    w.ok("enter fever_ward")
    assert "I climbed over the barricade between charnel_stair and fever_ward." in w.feedback
    w.ok("enter dispensary")
    assert "climbed" not in w.feedback


def test_barricade_refusals(w: Ward) -> None:
    w.fails("barricade fever_ward", "Cannot barricade fever_ward: I am standing in it.")
    w.fails("barricade ossuary", "Cannot barricade the way to ossuary: it is not a neighboring area.")
    w.fails("barricade dispensary", "Cannot barricade the way to dispensary: it takes 2 deal_plank and I carry 0.")
    w.hold("deal_plank")
    w.fails("barricade dispensary", "Cannot barricade the way to dispensary: it takes 2 deal_plank and I carry 1.")
    assert w.listed("barricade") == []
    w.pack(("deal_plank", 3))
    assert w.listed("barricade") == [f"barricade {a}" for a in w.state.areas["fever_ward"].exits]
    w.ok("barricade dispensary")
    w.fails("barricade dispensary", "Cannot barricade the way to dispensary: it is barricaded already.")
    assert "barricade dispensary" not in w.listed("barricade")
    rat = w.npc("plague_rat")
    rat.engaged, w.agent.combat = PLAYER, rat.handle
    w.fails("barricade physic_garden", f"Cannot barricade a way while fighting {rat.handle}.")
    assert w.listed("barricade") == []


def test_barricade_needs(w: Ward) -> None:
    e, a = w.engine, w.agent
    r = e.rules.actions["barricade"]
    assert r.needs(e, a, {"a": "fever_ward"}) == hints.has("deal_plank", 2)
    bag = w.pack(("deal_plank", 1))
    assert r.needs(e, a, {"a": "fever_ward"}) == hints.has("deal_plank", 2)
    w.state.instances[bag].contents["deal_plank"] = 2
    assert r.needs(e, a, {"a": "dispensary"}) == hints.in_area("dispensary")
    w.state.instances[bag].contents["deal_plank"] = 1
    w.hold("deal_plank")  # one in the pack and one in hand
    assert r.needs(e, a, {"a": "dispensary"}) == hints.in_area("dispensary")
    assert r.needs(e, a, {"a": "fever_ward"}) is None and r.needs(e, a, {}) is None


def test_eavesdrop_hears_who_is_next_door(w: Ward) -> None:
    rat = w.npc("plague_rat", "dispensary")
    sister = w.npc("ward_sister", "dispensary")
    w.put("plague_corpse", 2, area="dispensary")
    text = w.ok("eavesdrop dispensary")
    line = w.engine.game.npcs["ward_sister"].dialogue[w.state.step % 5]
    assert text.startswith("I listen at the way to dispensary. I hear ")
    assert f"{rat.handle} moving about" in text and f'{sister.handle} saying "{line}"' in text
    assert "the creak of 2 dead laid out." in text
    assert w.events("eavesdropped") == [{"area": "dispensary", "npcs": [rat.handle, sister.handle], "dead": 2}]
    assert "Silence: nothing moves there." in w.ok("eavesdrop physic_garden")


def test_eavesdrop_hears_fights_stirring_dead_lockdowns_and_barricades(w: Ward) -> None:
    husk = w.npc("risen_husk", "charnel_stair")
    husk.engaged = "someone"
    (corpse,) = w.put("plague_corpse", area="charnel_stair")
    w.hold("deal_plank", 2)
    w.ok("barricade charnel_stair")  # meanwhile the rule finds the corpse; say it has lain there a while
    write_var(w.engine, "lain", corpse, LOCKDOWN_AFTER, 0)  # rules.json's lockdown counts its own steps lain
    write_var(w.engine, q.STIRRING, corpse, True, False)  # and corpse_corruption saw it stir
    w.ok("wait")  # the lockdown falls at the end of this step
    assert q.locked_down(w.engine, "charnel_stair")
    text = w.ok("eavesdrop charnel_stair")
    assert f"{husk.handle} fighting" in text and "the creak of 1 dead laid out, one of them stirring" in text
    assert "it is under lockdown" in text and "my barricade creaking" in text


def test_eavesdrop_hears_someone_with_nothing_to_say_breathing(w: Ward, monkeypatch) -> None:
    npcs = w.engine.game.npcs
    monkeypatch.setitem(npcs, "ward_sister", dataclasses.replace(npcs["ward_sister"], dialogue=()))
    sister = w.npc("ward_sister", "dispensary")
    assert f"I hear {sister.handle} breathing." in w.ok("eavesdrop dispensary")


def test_eavesdrop_refusals(w: Ward) -> None:
    assert w.listed("eavesdrop") == [f"eavesdrop {a}" for a in w.state.areas["fever_ward"].exits]
    w.fails("eavesdrop fever_ward", "Cannot eavesdrop on fever_ward: I am in it.")
    w.fails("eavesdrop ossuary", "Cannot eavesdrop on ossuary: it is not a neighboring area.")
    rat = w.npc("plague_rat")
    rat.engaged, w.agent.combat = PLAYER, rat.handle
    w.fails("eavesdrop dispensary", f"Cannot listen at a door while fighting {rat.handle}.")
    assert w.listed("eavesdrop") == []


def test_eavesdrop_needs_a_door_to_the_place(w: Ward) -> None:
    e, a = w.engine, w.agent
    r = e.rules.actions["eavesdrop"]
    assert r.needs(e, a, {"area": "charnel_stair"}) is None  # next door already
    assert r.needs(e, a, {"area": "ossuary"}) == hints.in_area("charnel_stair")
    assert r.needs(e, a, {}) is None and r.needs(e, a, {"area": "nowhere"}) is None


# ============================================================================ concoct, shove
def test_concoct_grinds_a_pair_into_its_remedy(w: Ward) -> None:
    w.hold("feverfew")
    w.pack(("sallow_bark", 1))
    assert w.listed("concoct") == ["concoct feverfew sallow_bark", "concoct sallow_bark feverfew"]
    text = w.ok("concoct sallow_bark feverfew")
    assert "I grind sallow_bark with feverfew into 1 fever_draught (in my hands)." in text
    assert w.events("remedy_concocted") == [
        {"remedy": "fever_draught", "herbs": ["sallow_bark", "feverfew"], "ok": True}
    ]
    assert w.agent.hands == {"fever_draught": 1} and w.listed("concoct") == []
    assert w.state.instances[w.agent.equipment["pack"]].contents == {}


def test_concoct_takes_one_of_each_herb(w: Ward) -> None:
    w.hold("feverfew", 2)
    w.pack(("sallow_bark", 2))
    w.ok("concoct sallow_bark feverfew")
    assert w.agent.hands == {"feverfew": 1, "fever_draught": 1}
    assert w.state.instances[w.agent.equipment["pack"]].contents == {"sallow_bark": 1}


def test_concoct_spoils_a_wrong_pair(w: Ward) -> None:
    w.hold("wormwood")
    w.hold("garlic_bulb")
    text = w.ok("concoct wormwood garlic_bulb")
    assert "I grind wormwood with garlic_bulb, but they curdle into 1 grey_sludge (in my hands)." in text
    assert w.events("remedy_concocted") == [
        {"remedy": "grey_sludge", "herbs": ["wormwood", "garlic_bulb"], "ok": False}
    ]


def test_concoct_sets_the_remedy_down_when_my_hands_are_full(w: Ward) -> None:
    w.hold("orderly_cudgel")
    w.hold("linen_rag")
    w.pack(("garlic_bulb", 1), ("hyssop", 1))
    assert "1 four_thieves_vinegar (on the ground)" in w.ok("concoct garlic_bulb hyssop")
    assert w.state.areas["fever_ward"].objects == {"four_thieves_vinegar": 1}


def test_concoct_refusals(w: Ward) -> None:
    w.hold("feverfew", 2)
    w.fails("concoct feverfew feverfew", "Cannot concoct feverfew with itself: a remedy takes two different herbs.")
    assert w.listed("concoct") == []
    w.fails("concoct feverfew tallow", "Cannot concoct with tallow: it is not a herb.")
    w.fails("concoct tallow feverfew", "Cannot concoct with tallow: it is not a herb.")
    w.fails("concoct feverfew rue_sprig", "Cannot concoct with rue_sprig: I carry none.")
    w.fails("concoct rue_sprig feverfew", "Cannot concoct with rue_sprig: I carry none.")


def test_concoct_needs_the_missing_herb(w: Ward) -> None:
    e, a = w.engine, w.agent
    r = e.rules.actions["concoct"]
    assert r.needs(e, a, {"remedy": "wormwood_purge"}) == hints.has("wormwood")
    w.hold("wormwood")
    assert r.needs(e, a, {"remedy": "wormwood_purge"}) == hints.has("rue_sprig")
    w.hold("rue_sprig")
    assert r.needs(e, a, {"remedy": "wormwood_purge"}) is None
    assert r.needs(e, a, {"remedy": "lamp_oil"}) is None and r.needs(e, a, {}) is None


def test_shove_topples_furniture_through_a_guard(w: Ward) -> None:
    w.put("iron_cot")
    husk = w.npc("risen_husk")
    husk.stance_index = 3  # guarding: an attack would do a tenth
    assert w.listed("shove") == [f"shove iron_cot {husk.handle}"]
    text = w.ok(f"shove iron_cot {husk.handle}")
    assert (
        "I put my shoulder to iron_cot and it topples; I am winded. It breaks into 1 iron_scrap, 1 deal_plank." in text
    )
    assert f"iron_cot crushes {husk.handle} for 16 damage" in text
    assert husk.hp == husk.max_hp - 16 and husk.engaged == PLAYER and w.agent.stamina == 0.2
    assert w.events("npc_shoved") == [
        {"npc": husk.handle, "type": "risen_husk", "furniture": "iron_cot", "damage": 16, "area": "fever_ward"}
    ]
    assert w.state.areas["fever_ward"].objects == {"iron_scrap": 1, "deal_plank": 1}
    assert w.listed("shove") == []


def test_shove_can_kill(w: Ward) -> None:
    w.put("linen_press")
    rat = w.npc("plague_rat")
    w.ok(f"shove linen_press {rat.handle}")
    assert rat.handle not in w.state.npcs and w.kinds() == ["npc_shoved", "npc_defeated"]
    assert w.state.areas["fever_ward"].objects == {"deal_plank": 2, "hemp_cord": 1, "rat_pelt": 1, "groat": 1}
    assert w.agent.combat is None


def test_shoved_furniture_without_a_recipe_leaves_no_pieces(tmp_path) -> None:
    def change(world: dict) -> None:  # the copy's rules.json is there already: a bench joins the furniture
        rules_json = tmp_path / GAME / "rules.json"
        rules = json.loads(rules_json.read_text(encoding="utf-8"))
        (shove,) = [v for v in rules["verbs"] if v["verb"] == "shove"]
        shove["slots"][0]["types"].append("dispensary_bench")
        blow = {"emit": "npc_shoved", "data": {"npc": "{npc_name}", "damage": 3}}
        hit = {"strike": "$npc_name", "damage": 3, "how": "{furniture} crushes"}
        shove["effects"].append({"if": {"same": ["$furniture", "dispensary_bench"]}, "then": [blow, hit]})
        rules_json.write_text(json.dumps(rules), encoding="utf-8")

    w = Ward(game=variant(tmp_path, change))
    w.put("dispensary_bench")
    rat = w.npc("plague_rat")
    text = w.ok(f"shove dispensary_bench {rat.handle}")
    assert "I put my shoulder to dispensary_bench and it topples; I am winded.\n" in text
    assert "breaks into" not in text and rat.hp == rat.max_hp - 3
    assert w.state.areas["fever_ward"].objects == {}


def test_shove_refusals(w: Ward) -> None:
    rat = w.npc("plague_rat")
    sister = w.npc("ward_sister")
    w.put("tallow")
    w.fails(f"shove tallow {rat.handle}", "Cannot shove tallow: it is not heavy furniture.")
    w.fails(f"shove oak_pew {rat.handle}", "Cannot shove oak_pew: there is none here.")
    w.put("oak_pew")
    w.fails("shove oak_pew nobody", "Cannot shove oak_pew onto nobody: there is no such creature here.")
    w.fails(f"shove oak_pew {sister.handle}", f"Cannot shove oak_pew onto {sister.handle}: they are not hostile.")
    assert w.listed("shove") == [f"shove oak_pew {rat.handle}"]


def test_shove_needs_furniture_and_an_enemy_together(w: Ward) -> None:
    e, a = w.engine, w.agent
    r = e.rules.actions["shove"]
    assert r.needs(e, a, {}) is None
    w.put("oak_pew", area="dispensary")
    w.npc("plague_rat", "physic_garden")
    assert r.needs(e, a, {}) is None
    w.npc("plague_rat", "dispensary")
    assert r.needs(e, a, {}) == hints.in_area("dispensary")
    assert r.needs(e, a, {"type": "risen_husk"}) is None
    w.agent.area = "dispensary"
    assert r.needs(e, a, {}) is None


# ============================================================================ rule facts and parameters
def test_the_new_rules_declare_well_formed_facts() -> None:
    game = load_game(GAME)
    rules = [game.rules.actions[v] for v in (*NEW_VERBS, "enter")] + [
        game.rules.step_rule(n) for n in ("lamp_fuel", "corpse_corruption", "quarantine_lockdown")
    ]
    for rule in rules:
        facts = list(rule.facts(game))
        assert facts, rule
        for fact in facts:
            assert fact.question.endswith("?") and len(set(fact.distractors)) == 3
            assert fact.answer not in fact.distractors
    assert [len(list(r.facts(game))) for r in rules] == [1, 1, 1, 1, 1, 2, 2, 2, 2, 2]
    assert len(list(load_game("mossfall").rules.actions["enter"].facts(game))) == 1  # no dark, no fact about it
    answers = {f.answer for r in rules for f in r.facts(game)}
    assert "it rises as a risen_husk after about 8 hours" in answers
    assert "when a corpse has lain there unburned for 3.33333 hours" in answers
    assert "fever_draught" in answers and "2 deal_plank" in answers and "lamp_oil that I carry" in answers
    assert list(game.rules.actions["concoct"].facts(game)) == [
        Fact(
            "herbs",
            "Which remedy do feverfew and sallow_bark make together?",
            "fever_draught",
            ("wormwood_purge", "four_thieves_vinegar", "angelica_cordial"),
        )
    ]


def test_parameters_are_checked() -> None:
    q.LightSettings(lights={"lamp": q.Light("oil", 1, 1)}, margin=1)  # the least each may be
    with pytest.raises(ValueError):
        q.LightSettings(lights={"lamp": q.Light("oil", 1, 0)})
    with pytest.raises(ValueError):
        q.LightSettings(lights={"lamp": q.Light("oil", 0, 1)})
    with pytest.raises(ValueError):
        q.LightSettings(margin=0)


def test_every_name_in_the_parameters_is_in_the_world() -> None:
    game = load_game(GAME)
    light = game.rules.step_rule(q.LIGHT).settings
    assert set(light.dark_areas) <= set(game.areas)
    for name, spec in light.lights.items():
        assert game.objects[name].named and "light" in game.objects[name].uses and spec["fuel"] in game.objects
    assert game.objects[q.CORPSE].named and game.npcs["risen_husk"].hostile
    verbs = {v["verb"]: v for v in json.loads((game.path / "rules.json").read_text())["verbs"]}
    herbs = list(dict.fromkeys(h for pair in REMEDIES.values() for h in pair))  # rules.json checks the names
    assert [slot["types"] for slot in verbs["concoct"]["slots"]] == [herbs, herbs]
    assert all(remedy in game.objects for remedy in REMEDIES)
    for f in verbs["shove"]["slots"][0]["types"]:
        assert game.objects[f].category == "station"


# ============================================================================ a game's own parameters
def concoct_remedies(rules: dict, remedies: dict[str, list[str]], failure: str) -> None:
    """Rewrite the ``concoct`` verb of a rules.json for other remedies: its herbs (in the order they are
    listed), a branch per pair in either order, and what any other pair comes to (``failure``, or nothing)."""
    (verb,) = [v for v in rules["verbs"] if v["verb"] == "concoct"]
    herbs = list(dict.fromkeys(h for pair in remedies.values() for h in pair))
    for slot in verb["slots"]:
        slot["types"] = herbs

    def pair(a: str, b: str) -> dict:
        return {
            "any_of": [
                {"all_of": [{"same": ["$first_herb", a]}, {"same": ["$second_herb", b]}]},
                {"all_of": [{"same": ["$first_herb", b]}, {"same": ["$second_herb", a]}]},
            ]
        }

    def made(remedy: str, line: str, ok: bool) -> list[dict]:
        event = {"remedy": remedy, "herbs": ["{first_herb}", "{second_herb}"], "ok": ok}
        return [
            *([{"produce": remedy, "cap": 1000}] if remedy else []),
            {"say": line},
            {"emit": "remedy_concocted", "data": event},
        ]

    grind = "I grind {first_herb} with {second_herb}"
    effects = verb["effects"][:2]  # one of each herb consumed
    for remedy, (a, b) in remedies.items():
        effects.append({"if": pair(a, b), "then": made(remedy, f"{grind} into 1 {remedy} ({{received}}).", True)})
    other = (
        f"{grind}, but they curdle into 1 {failure} ({{received}})."
        if failure
        else f"{grind}, but nothing comes of it."
    )
    effects.append({"if": {"none_of": [pair(a, b) for a, b in remedies.values()]}, "then": made(failure, other, False)})
    verb["effects"] = effects


def one_plank_barricade(rules: dict) -> None:
    """Rewrite the ``barricade`` verb of a rules.json to take one plank, not two (its check, line and cost)."""
    (verb,) = [v for v in rules["verbs"] if v["verb"] == "barricade"]
    text = json.dumps(verb).replace('"count": 2', '"count": 1').replace("2 deal_plank", "1 deal_plank")
    verb.clear()
    verb.update(json.loads(text))


def crumbling_dead(rules: dict) -> None:
    """rules.json's corpse_corruption with a rise that only takes the corpse away (no risen, no line)."""
    (rule,) = [r for r in rules["step_rules"] if r["name"] == "corpse_corruption"]
    rise = rule["effects"][1]["then"][0]["then"]
    assert rise[0] == {"remove": "$object"}
    rise[:] = [op for op in rise if not {"spawn_npc", "tell", "emit"} & set(op)]


@pytest.fixture
def tuned(tmp_path) -> Game:
    """The game with other parameters: a weaker lurker, dead that vanish instead of rising, a one-plank
    barricade, two remedies and no sludge, a pew that breaks into an odd number of pieces."""

    def change(world: dict) -> None:
        params = world["game"]["params"]
        params["lamp_fuel"]["lurk_strength"] = 0.5
        # the dead, concoct and barricade are declared in rules.json, which the copy already holds when its
        # world data are edited
        rules_json = tmp_path / GAME / "rules.json"
        rules = json.loads(rules_json.read_text(encoding="utf-8"))
        crumbling_dead(rules)
        one_plank_barricade(rules)
        remedies = {"fever_draught": ["wormwood", "hyssop"], "wormwood_purge": ["rue_sprig", "feverfew"]}
        concoct_remedies(rules, remedies, failure="")
        rules_json.write_text(json.dumps(rules), encoding="utf-8")
        (pew,) = [o for o in world["objects"] if o["name"] == "oak_pew"]
        pew["recipe"]["ingredients"] = {"deal_plank": 3, "hemp_cord": 1}

    return variant(tmp_path, change)  # for each test: what building it runs counts for that test


def test_a_lurker_strikes_by_its_strength_the_world_s_modifier_and_my_defense(tuned: Game) -> None:
    w = Ward("charnel_stair", game=tuned)
    husk = w.npc("risen_husk")  # attack 11, at half strength 5.5
    w.agent.equipment["feet"] = "wooden_pattens"
    w.agent.defense = 2  # as the stats rule sets it from the pattens
    light = w.engine.rules.step_rule(q.LIGHT)
    expected = {None: 6 - 2, 2.0: 11 - 2, 0.1: 1}  # no modifier counts as 1; a strike does at least 1
    for modifier, damage in expected.items():  # the rule alone: the clock would set the modifier each step
        if modifier is None:
            w.state.modifiers.pop("enemy_attack", None)
        else:
            w.state.modifiers["enemy_attack"] = modifier
        w.agent.hp, w.agent.combat, husk.engaged = 100, None, None
        w.engine.rng = Scripted((0.1,))
        light.apply(w.engine)
        assert w.agent.hp == 100 - damage and husk.engaged == PLAYER, modifier


def test_without_a_risen_kind_the_dead_just_crumble(tuned: Game) -> None:
    w = Ward("dispensary", game=tuned)
    (corpse,) = w.put("plague_corpse")
    w.wait(RISE_AFTER + 2)
    assert corpse not in w.state.instances and corpse not in w.state.areas["dispensary"].objects
    assert w.state.areas["dispensary"].npcs == [] and w.aged() == {}


def test_a_one_plank_barricade(tuned: Game) -> None:
    w = Ward(game=tuned)
    r = w.engine.rules.actions["barricade"]
    assert r.needs(w.engine, w.agent, {}) == Condition(type="has_item_count", object="deal_plank", count=1)
    w.fails("barricade dispensary", "Cannot barricade the way to dispensary: it takes 1 deal_plank and I carry 0.")
    w.hold("deal_plank")
    assert r.needs(w.engine, w.agent, {}) is None
    w.ok("barricade dispensary")
    assert w.agent.hands == {}


def test_a_game_names_its_own_remedies(tuned: Game) -> None:
    w = Ward(game=tuned)
    bag = w.pack(("wormwood", 2), ("hyssop", 1), ("feverfew", 1))
    assert w.listed("concoct") == [
        "concoct wormwood hyssop",
        "concoct wormwood feverfew",
        "concoct hyssop wormwood",
        "concoct hyssop feverfew",
        "concoct feverfew wormwood",
        "concoct feverfew hyssop",
    ]
    assert "into 1 fever_draught" in w.ok("concoct hyssop wormwood")
    w.hold("rue_sprig")
    w.fails("concoct wormwood sallow_bark", "Cannot concoct with sallow_bark: it is not a herb.")
    assert "I grind wormwood with feverfew, but nothing comes of it." in w.ok("concoct wormwood feverfew")
    assert w.events("remedy_concocted") == [{"remedy": "", "herbs": ["wormwood", "feverfew"], "ok": False}]
    assert w.agent.hands == {"fever_draught": 1, "rue_sprig": 1} and w.state.instances[bag].contents == {}


def test_shoved_furniture_breaks_into_half_of_each_ingredient_rounded_down(tuned: Game) -> None:
    w = Ward(game=tuned)
    w.put("oak_pew")
    husk = w.npc("risen_husk")
    text = w.ok(f"shove oak_pew {husk.handle}")
    ground = w.state.areas["fever_ward"].objects
    assert "It breaks into 1 deal_plank." in text and ground.get("deal_plank") == 1 and "hemp_cord" not in ground


def test_a_game_without_corpses_has_no_corruption(tmp_path) -> None:
    def change(world: dict) -> None:
        world["game"]["disable"] = ["corpse_corruption"]  # rules.json's, as the paper's Quarantine does

    game = variant(tmp_path, change)
    steps = {r.name for r in game.rules.steps}
    # the lockdown is rules.json's, which names plague_corpse itself: it stays without the corruption
    assert q.LIGHT in steps and q.CORRUPTION not in steps and q.LOCKDOWN in steps
    shipped = variant(tmp_path / "as_shipped", lambda world: None)
    assert {q.CORRUPTION, q.LOCKDOWN} <= {r.name for r in shipped.rules.steps}


# ============================================================================ whole episodes
def test_the_tutorial_teaches_light_and_fire_and_leaves_four_verbs_untaught() -> None:
    game = load_game(GAME)
    text = " ".join(s.say for s in game.quest.tutorial.steps)
    for verb in UNTAUGHT:
        assert f"'{verb} " not in text, verb
    for verb in (
        "pick up",
        "equip",
        "unequip",
        "store",
        "take out",
        "drop",
        "write",
        "talk to",
        "buy",
        "sell",
        "craft",
        "attack",
        "enter",
        "inspect",
        "refuel",
        "burn corpses",
    ):
        assert f"'{verb}" in text, verb


def test_the_oracle_earns_exactly_one_reward_per_stage() -> None:
    from odyssey_agents.base import Task
    from odyssey_agents.oracle import OracleAgent

    env = OdysseyEnv(GAME, tutorial=False)
    obs, info = env.reset(seed=3)
    agent = OracleAgent(env)
    agent.reset(Task(game=GAME, title="", verbs=tuple(env.verbs()), seed=3))
    total, done = 0.0, False
    while not done:
        obs, _, done, _, info = env.step(agent.act(obs, {**info, "engine": env.engine}).action)
        total += info["reward_breakdown"]["quest"]
    assert total == 18 and info["quest"]["completed"] == 18


def test_the_oracle_refuels_before_the_dark_and_burns_its_way_out_of_a_lockdown() -> None:
    from odyssey_agents.oracle.planner import Planner

    w = Ward("fever_ward")
    lamp = w.lamp(3)
    w.hold("lamp_oil")
    planner = Planner(PLAYER)
    goal = odyssey_env.quests.spec.Condition(type="in_area", area="ossuary")
    assert planner.decide(w.engine, [goal])[0] == f"refuel {lamp}"
    w.ok(f"refuel {lamp}")
    assert planner.decide(w.engine, [goal])[0] == "enter charnel_stair"
    w.put("plague_corpse")
    write_var(w.engine, q.LOCKDOWN_FLAG, "fever_ward", True)
    assert planner.decide(w.engine, [goal])[0] == "burn corpses"


def test_online_expansion_opens_new_places_once_everything_is_explored() -> None:
    env = OdysseyEnv(GAME, tutorial=False)
    env.reset(seed=1)
    engine = env.engine
    agent = engine.state.agents[PLAYER]
    for name in list(engine.state.areas)[:-1]:
        agent.visited.setdefault(name, 0)
    engine.state.areas["ossuary"].exits["drowned_cistern"].locked = False
    agent.area = "ossuary"
    ((lamp, _),) = make_objects(engine.game, engine.state, "storm_lantern", 1)
    agent.hands[lamp] = 1
    q.set_fuel(engine, lamp, 20)
    before = set(engine.state.areas)
    _, _, _, _, info = env.step("enter drowned_cistern")
    grown = [e for e in info["events"] if e["kind"] == "world_expanded"]
    assert grown and set(engine.state.areas) - before == set(grown[0]["areas"])
    assert not any(a in q._light_params(engine).dark_areas for a in grown[0]["areas"])


# ============================================================================ determinism and fuzzing
def test_rollouts_are_identical_across_processes_and_hash_seeds() -> None:
    a = subprocess_digest(GAME, 4, 600, "0", pick_seed=7)
    assert len(a) == 64 and a == subprocess_digest(GAME, 4, 600, "1234", pick_seed=7)
    assert a != subprocess_digest(GAME, 5, 600, "0", pick_seed=7)


def _play(env: OdysseyEnv, pick: random.Random, n: int) -> list[tuple]:
    trace = []
    for _ in range(n):
        va = env.engine.valid_actions(PLAYER)
        action = pick.choice(va[pick.choice(sorted(va))])
        obs, r, _, _, info = env.step(action)
        trace.append((action, obs, r, json.dumps(info["events"], sort_keys=True)))
    return trace


def test_saved_states_continue_exactly_through_json() -> None:
    env = OdysseyEnv(GAME, tutorial=False)
    env.reset(seed=2)
    pick = random.Random(3)
    _play(env, pick, 300)
    saved = json.loads(json.dumps(env.save_state()))
    state = pick.getstate()
    expected = _play(env, pick, 200)
    fresh = OdysseyEnv(GAME)
    fresh.load_state(saved)
    pick.setstate(state)
    assert _play(fresh, pick, 200) == expected


HERBS = frozenset(h for pair in REMEDIES.values() for h in pair) | {
    "tallow",
    "lamp_oil",
}
VERBS = ["refuel", "concoct", "shove", "eavesdrop", "burn corpses", "barricade", "enter", "pick up", "drop"]
NAMES = [
    "storm_lantern_0",
    "lamp_oil",
    "feverfew",
    "sallow_bark",
    "iron_cot",
    "plague_rat_0",
    "charnel_stair",
    "ossuary",
    "plague_corpse_0",
    "deal_plank",
    "fever_ward",
    "tallow",
]
word = st.one_of(st.sampled_from(NAMES), st.text(st.characters(codec="ascii"), max_size=12))


@pytest.fixture(scope="module")
def fuzz_env() -> OdysseyEnv:
    env = OdysseyEnv(GAME, tutorial=False)
    env.reset(seed=0)
    return env


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(verb=st.sampled_from(VERBS), words=st.lists(word, max_size=3))
def test_any_command_of_the_new_verbs_gets_feedback(fuzz_env: OdysseyEnv, verb: str, words: list[str]) -> None:
    obs, _, _, _, info = fuzz_env.step(" ".join([verb, *words]))
    feedback = fuzz_env.engine.state.feedback[PLAYER]
    assert feedback and all(line.isascii() and line.isprintable() for line in feedback)
    assert fuzz_env.observation_space.contains(obs)
    assert not (info["invalid_action"] and info["action_failed"])


def test_the_sound_and_complete_listing_holds_on_a_random_walk() -> None:
    """Every listed command of the new verbs succeeds; every command of theirs that would succeed is listed."""
    from odyssey_agents.oracle.events import simulate

    env = OdysseyEnv(GAME, valid_actions=True, tutorial=False)
    _, info = env.reset(seed=6)
    pick = random.Random(6)
    engine = env.engine
    tried = set()
    for step in range(150):
        listed = info["valid_actions"]
        for verb in NEW_VERBS:
            options = listed.get(verb, [])
            for command in options[:2]:
                assert not _refused(engine, command, simulate), (step, command)
            for command in _every_command(engine, verb):
                if command not in options:
                    assert _refused(engine, command, simulate), (step, command)
                    tried.add(verb)
        verb = pick.choice(sorted(listed))
        _, _, _, _, info = env.step(pick.choice(listed[verb]))
        assert not info["action_failed"]
    assert tried == set(NEW_VERBS)


def _every_command(engine: Engine, verb: str) -> list[str]:
    state = engine.state
    agent = state.agents[PLAYER]
    here = state.areas[agent.area]
    pack = state.instances[agent.equipment["pack"]].contents if "pack" in agent.equipment else {}
    carried = list(dict.fromkeys([*agent.hands, *pack]))
    if verb == "burn corpses":
        return ["burn corpses"]
    if verb in ("eavesdrop", "barricade"):
        return [f"{verb} {a}" for a in [*here.exits, "ossuary", agent.area]]
    if verb == "refuel":
        return [f"refuel {h}" for h in [*carried, *here.objects]]
    if verb == "concoct":  # a herb on the ground, or one I do not carry, is never enough
        herbs = [h for h in [*carried, *here.objects] if engine.game.objects.get(h) and h in HERBS]
        return [f"concoct {a} {b}" for a in herbs for b in herbs]
    return [f"shove {f} {n}" for f in here.objects for n in here.npcs]


def _refused(engine: Engine, command: str, simulate) -> bool:
    import copy
    import pickle

    sim = copy.copy(engine)
    sim.state = pickle.loads(pickle.dumps(engine.state))
    sim.rng = Scripted()
    return sim.step({PLAYER: command})[PLAYER].failed


def test_a_long_rollout_keeps_the_world_bounded_and_consistent() -> None:
    from odyssey_gen.validate.invariants import state_problems, world_size

    env = OdysseyEnv(GAME, valid_actions=True, tutorial=False)
    _, info = env.reset(seed=0)
    start = world_size(env.engine)
    pick = random.Random(0)
    kinds = set()
    for _ in range(1500):
        va = info["valid_actions"]
        _, _, _, _, info = env.step(pick.choice(va[pick.choice(sorted(va))]))
        assert not info["action_failed"] and not state_problems(env.engine)
        kinds |= {e["kind"] for e in info["events"]}
    assert world_size(env.engine) <= 4 * start + 200
    assert {"corpse_risen", "lockdown_started", "eavesdropped"} <= kinds
    digest = hashlib.sha256(json.dumps(env.save_state(), sort_keys=True).encode()).hexdigest()
    assert len(digest) == 64
