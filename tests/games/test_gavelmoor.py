"""Gavelmoor: a city of laws (sizes, the DAG quest, three verbs, eight step rules, an appealable death).

The game's own rules live in ``odyssey_env/games/gavelmoor/rules.py``. Each verb is tested on its
success path and on every refusal it can give, and its valid actions are checked sound and complete
from states where it applies; each step rule is shown firing and not firing. The oracle's part (it
plans "invoke law with text X" from the condition alone) and the whole quest are tested at the end.
"""

from __future__ import annotations

import json
import pickle
import random
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kit import PLAYER, Harness, engine_on, game_copy, load_with_rules, subprocess_digest

import odyssey_env
from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.game import Game
from odyssey_env.games.gavelmoor import rules as metro
from odyssey_env.parsing import parse
from odyssey_env.quests.main_quest import plan
from odyssey_env.quests.spec import Condition
from odyssey_env.rules import placement
from odyssey_env.state import Npc
from odyssey_env.turn import Turn
from odyssey_env.world import add, make_objects

GAME = "gavelmoor"
PEACE, STRIFE = metro.STATUTES["peace"].text, metro.STATUTES["strife"].text
NEW_VERBS = ("invoke law", "file objection", "appeal verdict")
NEW_RULES = (
    "nightly_rewrite",
    "objection_effects",
    "law_expiry",
    "legal_paradox",
    "contempt_of_court",
    "binding_precedent",
    "contraband_suspicion",
    "trial_proceedings",
)


class City(Harness):
    """The kit's harness on Gavelmoor, standing in an area whose NPCs are gone (its objects stay). A refusal
    reports none of the city's verb events (that it changes nothing is checked verb by verb in :func:`_succeeds`)."""

    verb_events = frozenset({"law_invoked", "objection_filed", "verdict_overturned"})

    def __init__(
        self,
        seed: int = 0,
        game=None,
        area: str = "petition_square",
        clear: bool = True,
        agents: tuple[str, ...] = (PLAYER,),
    ):
        super().__init__(engine_on(game or GAME, seed, agents=agents))
        self.move(area, clear)

    def laws(self, area: str | None = None) -> list[dict]:
        return [x for x in metro.laws(self.state) if area is None or x["area"] == area]

    def move(self, area: str, clear: bool = True) -> None:
        """Stand in ``area``; ``clear`` removes its NPCs (not its objects), so no one interrupts."""
        self.goto(area, clear=False)
        if clear:
            self.clear(objects=False)

    def post(self, text: str) -> str:
        """Post a law here, as the verb does (must succeed)."""
        sheet = self.hold_one("petition_sheet", text=text)
        self.ok(f"invoke law {sheet}")
        return sheet

    def to_minute(self, hhmm: str) -> None:
        """Set the clock so that the next step ends at ``hhmm`` on the same day."""
        h, m = map(int, hhmm.split(":"))
        self.state.minute = h * 60 + m - self.game.spec.game.minutes_per_step


@pytest.fixture
def city() -> City:
    return City()


# ============================================================================ sizes and registration
def test_sizes_are_those_of_the_issue() -> None:
    s = load_game(GAME).summary()
    assert (s["places"], s["areas"], s["area_levels"]) == (3, 10, "1-5")
    assert (s["object_types"], s["npc_types"]) == (47, 6)
    assert (s["enemy_types"], s["merchant_types"]) == (3, 2)  # two fighters and the boss; two merchants
    assert (s["chapters"], s["stages"], s["dag"], s["leaves"]) == (3, 31, True, 17)
    assert s["tutorial_steps"] == 0 and s["side_quests"]
    assert s["expansion"]  # as the paper's Metropolis (its default.json: features.online_expansion true)
    assert s["verbs"] == 20 and s["verb_list"][-3:] == list(NEW_VERBS)
    base = load_game("mossfall").summary()["step_rules"]
    assert set(s["step_rules"]) - set(base) == set(NEW_RULES)
    assert "death" in s["step_rules"]  # replaced by the game's own, under the same name


def test_odyssey_games_prints_the_sizes(capsys) -> None:
    from odyssey_eval.catalog import main

    assert main([GAME, "--details"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith(GAME))
    assert row.split()[1] == "Odyssey/Gavelmoor-v0"
    assert row.split()[2:10] == ["3", "10", "1-5", "47", "6", "31", "17", "3"]
    assert "(31 stages, 17 leaves, a DAG, in 3 chapters)" in out
    assert "invoke law, file objection, appeal verdict" in out


def test_linear_quests_are_told_apart_from_goal_trees() -> None:
    from odyssey_env.quests.shape import quest_summary
    from odyssey_env.quests.spec import QuestSpec
    from odyssey_env.schema import load
    from odyssey_eval.catalog import describe_games, format_table

    rows = {r["name"]: r for r in describe_games(["mossfall", "tallowmere", GAME])}
    assert (rows["mossfall"]["dag"], rows["mossfall"]["leaves"]) == (False, 2)
    assert (rows["tallowmere"]["dag"], rows["tallowmere"]["leaves"]) == (False, 2)
    assert (rows[GAME]["dag"], rows[GAME]["leaves"]) == (True, 17)
    header, _, *lines = format_table(list(rows.values())).splitlines()
    assert header.split()[8:10] == ["stages", "leaves"] and lines[2].split()[7:9] == ["31", "17"]  # "env id": 2 words

    def summary(*requires):
        stages = [
            {
                "id": f"s{i}",
                "title": "T",
                "hint": "",
                "done": {"type": "in_area", "area": "yard"},
                **({"requires": r} if r is not None else {}),
            }
            for i, r in enumerate(requires)
        ]
        return quest_summary(
            load(QuestSpec, {"main": {"title": "Q", "chapters": [{"id": "c", "title": "C", "stages": stages}]}})
        )

    assert (summary(None, ["s0"], None)["dag"], summary(None, ["s0"], None)["leaves"]) == (False, 1)
    assert (summary([], [], ["s0", "s1"])["dag"], summary([], [], ["s0", "s1"])["leaves"]) == (True, 2)
    assert summary([], ["s0"], ["s0"])["dag"] and quest_summary(load(QuestSpec, {}))["leaves"] == 0


def test_registered_env_passes_the_checker() -> None:
    env = gym.make("Odyssey/Gavelmoor-v0")
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert "petition_square" in obs and info["quest"]["total"] == 31


def test_every_chapter_is_a_goal_tree_with_leaves_and_joins() -> None:
    game = load_game(GAME)
    p = plan(game.quest.main)
    for ch in game.quest.main.chapters:
        ids = {s.id for s in ch.stages}
        inside = {s.id: [r for r in p.requires[s.id] if r in ids] for s in ch.stages}
        joins = [s for s, req in inside.items() if len(req) > 1]
        assert joins, ch.id  # a DAG, not a chain
        required = {r for req in inside.values() for r in req}
        assert len(ids - required) == 1, ch.id  # one root per chapter: the last stage
        assert ch.stages[-1].id not in required


# ============================================================================ invoke law
def test_invoke_law_posts_a_statute_that_binds_the_area(city: City) -> None:
    sheet = city.hold_one("petition_sheet", text="The Ward  keeps the PEACE")
    assert city.listed("invoke law") == [f"invoke law {sheet}"]
    feedback = city.ok(f"invoke law {sheet}")
    assert "It binds this area for 8 hours" in feedback and "strike at half strength" in feedback
    assert sheet not in city.agent.hands and sheet in city.area.objects
    (law,) = city.laws("petition_square")
    assert (law["text"], law["by"], law["until"]) == (PEACE, PLAYER, city.state.step + 48)
    assert city.events("law_invoked") == [
        {"notice": sheet, "text": PEACE, "statute": "peace", "area": "petition_square", "until": city.state.step + 48}
    ]
    assert metro.force(metro.statutes_in(city.state, "petition_square"), "peace")


def test_invoke_law_records_any_text_and_says_when_twins_cancel(city: City) -> None:
    sheet = city.hold_one("vellum_leaf", text="let the lamps burn")
    assert "No statute of the city gives it force" in city.ok(f"invoke law {sheet}")
    assert city.events("law_invoked")[0]["statute"] is None
    city.post(PEACE)
    sheet = city.hold_one("petition_sheet", text=STRIFE)
    assert "the two cancel out" in city.ok(f"invoke law {sheet}")
    keys = metro.statutes_in(city.state, "petition_square")
    assert keys == {"peace", "strife"} and not metro.force(keys, "peace") and not metro.force(keys, "strife")


def test_invoke_law_refusals(city: City) -> None:
    city.fails("invoke law groat", "only something written on can carry a law")
    city.fails("invoke law petition_sheet_77", "only something written on can carry a law")
    bag = city.hold_one("document_satchel")
    city.fails(f"invoke law {bag}", "only something written on can carry a law")
    lying = city.put_one("petition_sheet", text=PEACE)
    city.fails(f"invoke law {lying}", "I must hold it in my hand")
    blank = city.hold_one("petition_sheet")
    city.fails(f"invoke law {blank}", "it is blank; write the law on it first")
    assert city.listed("invoke law") == []
    assert city.laws("petition_square") == []


def test_writing_then_invoking_through_the_env() -> None:
    env = odyssey_env.env.OdysseyEnv(GAME)
    env.reset(seed=1)
    c = City.__new__(City)
    c.engine, c.outcome = env.engine, None
    quill, sheet = c.hold_one("inked_quill"), c.hold_one("petition_sheet")
    _, _, _, _, info = env.step(f'write "{PEACE}" {sheet}')
    assert not info["action_failed"]
    assert f"invoke law {sheet}" in env.engine.valid_actions(PLAYER)["invoke law"]
    _, _, _, _, info = env.step(f"invoke law {sheet}")
    assert [e["kind"] for e in info["events"]].count("law_invoked") == 1 and quill in c.agent.hands


# ============================================================================ file objection
def test_objection_against_a_city_edict_repeals_it_at_the_hearing() -> None:
    c = City(area="ink_market")
    (edict,) = c.laws("ink_market")
    assert edict["edict"] == 0 and edict["text"] == metro.STATUTES["search"].text
    assert not metro.edict_repealed(c.engine, c.agent, area="ink_market")
    c.hold_one("groat", 5)
    assert c.listed("file objection") == [f"file objection {edict['notice']}"]
    feedback = c.ok(f"file objection {edict['notice']}")
    assert "pay the fee of 2 groat" in feedback and "hear it in 2 turns" in feedback
    assert c.agent.hands["groat"] == 3
    assert c.events("objection_filed")[0]["area"] == "ink_market" and c.events("objection_filed")[0]["edict"]
    assert c.listed("file objection") == []  # one objection per law
    c.fails(f"file objection {edict['notice']}", "already awaits its hearing")
    assert c.laws("ink_market")  # not before the hearing
    c.ok("wait")
    assert "struck down for good" in c.feedback and c.events("objection_upheld")
    assert c.laws("ink_market") == [] and edict["notice"] not in c.state.instances
    assert edict["notice"] not in c.area.objects and c.events("objection_upheld")[0]["edict"]
    assert metro.edict_repealed(c.engine, c.agent, area="ink_market")
    assert not metro.edict_repealed(c.engine, c.agent, area="gallery_of_precedents")
    for _ in range(40):  # a repealed edict is never posted again (and the fee is not returned)
        c.ok("inspect ink_market")
    assert c.laws("ink_market") == [] and c.agent.hands["groat"] == 3


def test_objection_refusals(city: City) -> None:
    stray = city.put_one("petition_sheet", text=PEACE)  # lying here, but never invoked
    city.fails(f"file objection {stray}", "no law posted here is written on it")
    city.fails("file objection city_edict_0", "no law posted here is written on it")  # the edict is elsewhere
    sheet = city.post(PEACE)
    city.hold_one("groat", 1)
    city.fails(f"file objection {sheet}", "the court's fee is 2 groat, and I carry 1")
    assert city.listed("file objection") == []
    city.agent.hands["groat"] = 2
    assert city.listed("file objection") == [f"file objection {sheet}"]


def test_an_objection_to_a_law_gone_before_its_hearing_is_moot(city: City) -> None:
    sheet = city.post(PEACE)
    city.hold_one("groat", 2)
    city.ok(f"file objection {sheet}")
    assert "groat" not in city.agent.hands
    city.ok(f"pick up {sheet}")  # my own law: taken down without a fine
    assert "no longer binds" in city.feedback and city.laws("petition_square") == []
    assert city.state.instances[sheet].text == PEACE and not metro.appealable(city.state, PLAYER)
    city.ok("wait")
    assert "moot" in city.feedback and city.agent.hands.get("groat") == 2
    assert city.events("objection_moot") == [{"fee": 2}]


def test_an_objection_strikes_the_law_it_names_and_tells_its_filer() -> None:
    c = City()
    first = c.post(PEACE)
    second = c.post("let the lamps burn")
    c.hold_one("groat", 4)
    feedback = c.ok(f"file objection {second}")
    assert "against 'let the lamps burn' on " + second + " (my law)" in feedback
    assert c.events("objection_filed")[0]["edict"] is False
    c.move("gutter_lanes")
    c.ok("wait")
    c.ok("wait")  # the hearing, while I am elsewhere
    assert "is struck down." in c.feedback and "for good" not in c.feedback
    assert c.events("objection_upheld") == [{"area": "petition_square", "text": "let the lamps burn", "edict": False}]
    assert [x["notice"] for x in c.laws("petition_square")] == [first]
    assert c.state.instances[second].text == "" and second in c.state.areas["petition_square"].objects
    c.move("petition_square")
    c.ok(f"file objection {first}")  # the court hears the next one
    assert "groat" not in c.agent.hands


def test_laws_are_described_by_who_posted_them(city: City) -> None:
    law = {"text": PEACE, "notice": "petition_sheet_9", "by": "player_2", "edict": None}
    assert metro.describe_law(law, PLAYER) == f"'{PEACE}' on petition_sheet_9 (posted by player_2)"
    assert metro.describe_law(law, "player_2") == f"'{PEACE}' on petition_sheet_9 (my law)"
    assert metro.describe_law({**law, "edict": 0}, "player_2") == f"'{PEACE}' on petition_sheet_9 (city edict)"


# ============================================================================ appeal verdict and trials
def _unprovoked_kill(c: City) -> Npc:
    wraith = c.npc("ink_wraith")
    wraith.hp = 1
    c.ok(f"attack {wraith.handle}")
    return wraith


def test_an_unprovoked_killing_is_fined_next_turn(city: City) -> None:
    city.hold_one("groat", 5)
    _unprovoked_kill(city)
    (verdict,) = city.events("verdict")
    assert verdict["guilty"] and "without provocation" in verdict["reason"]
    assert "GUILTY" in city.feedback and "unless I appeal verdict" in city.feedback
    assert city.agent.hands["groat"] == 5 and city.listed("appeal verdict") == ["appeal verdict"]
    city.ok("wait")
    assert city.agent.hands["groat"] == 3 and "is carried out: I pay 2 groat" in city.feedback
    assert city.listed("appeal verdict") == []
    city.fails("appeal verdict", "there is no verdict against me to appeal")


def test_appealing_overturns_the_verdict_once_a_day(city: City) -> None:
    city.hold_one("groat", 5)
    _unprovoked_kill(city)
    assert metro.appeals_left(city.engine, PLAYER) == 1
    city.ok("appeal verdict")
    assert metro.appeals_left(city.engine, PLAYER) == 0
    assert "overturns the verdict" in city.feedback and city.events("verdict_overturned") == [{"kinds": ["fine"]}]
    city.ok("wait")
    assert city.agent.hands["groat"] == 5  # no fine
    _unprovoked_kill(city)
    assert city.listed("appeal verdict") == []
    city.fails("appeal verdict", "the court has already heard my appeal today")
    assert city.agent.hands["groat"] == 3  # the refused appeal let the sentence stand
    city.state.minute += 1440  # a new day: the court hears me again
    assert metro.appeals_left(city.engine, PLAYER) == 1
    _unprovoked_kill(city)
    assert city.listed("appeal verdict") == ["appeal verdict"]


def test_without_coins_a_fine_is_paid_in_health(city: City) -> None:
    _unprovoked_kill(city)
    city.ok("wait")
    assert city.agent.hp == 90 and "flogged for 10 health" in city.feedback
    assert city.events("sentence_carried_out") == [{"kind": "fine", "paid": 0}]


def test_a_killing_after_being_struck_is_acquitted(city: City) -> None:
    wraith = city.npc("ink_wraith")
    wraith.hp, wraith.stance_index = 200, 0  # its pattern opens with a blow
    city.ok(f"attack {wraith.handle}")
    assert city.agent.hp < 100  # it struck back
    wraith.hp = 1
    city.ok(f"attack {wraith.handle}")
    (verdict,) = city.events("verdict")
    assert not verdict["guilty"] and verdict["reason"] == f"{wraith.handle} struck first"
    assert "acquitted" in city.feedback and city.listed("appeal verdict") == []


def test_the_area_law_decides_the_verdict(city: City) -> None:
    city.post(STRIFE)
    _unprovoked_kill(city)
    assert not city.events("verdict")[0]["guilty"]  # the blades are bared here
    city.move("gutter_lanes")
    city.post(PEACE)
    wraith = city.npc("ink_wraith")
    wraith.hp = 200
    city.ok(f"attack {wraith.handle}")
    wraith.hp = 1
    city.ok(f"attack {wraith.handle}")
    verdict = city.events("verdict")[0]
    assert verdict["guilty"] and "under the peace" in verdict["reason"]  # struck first, yet under the peace


def test_a_killing_after_an_ambush_is_acquitted(city: City) -> None:
    wraith = city.npc("ink_wraith")
    city.engine.events = []
    city.engine.emit("agent_ambushed", PLAYER, npc=wraith.handle, type=wraith.type, damage=1)
    city.engine.rules.step_rule("trial_proceedings").apply(city.engine)  # a step with an ambush, as the rule sees it
    wraith.hp = 1
    city.ok(f"attack {wraith.handle}")
    assert not city.events("verdict")[0]["guilty"]


def test_a_flogging_never_kills(city: City) -> None:
    city.agent.hp = 5
    _unprovoked_kill(city)
    city.ok("wait")
    assert city.agent.hp == 1 and not city.events("death_sentenced")


def test_appeals_are_counted_by_the_day_of_the_clock(city: City) -> None:
    city.hold_one("groat", 9)
    city.to_minute("23:30")
    _unprovoked_kill(city)
    city.ok("appeal verdict")  # 23:40, day 0
    _unprovoked_kill(city)  # 23:50
    city.ok("appeal verdict")  # 00:00: a new day
    assert city.engine.clock().endswith("00:00:00") and city.agent.hands["groat"] == 9


# ============================================================================ death and its appeal
def _fall(c: City) -> None:
    foe = c.npc("brass_bailiff")
    foe.engaged, c.agent.combat, foe.stance_index = PLAYER, foe.handle, 1  # its next stance is a blow
    c.agent.hp = 1
    c.ok("wait")


def test_death_waits_one_turn_for_an_appeal(city: City) -> None:
    coat = city.hold_one("clerks_coat")
    _fall(city)
    assert city.agent.hp == 1 and city.agent.area == "petition_square" and coat in city.agent.hands
    assert city.agent.combat is None and all(n.engaged is None for n in city.state.npcs.values())
    assert "one turn to appeal verdict" in city.feedback and city.events("death_sentenced")
    assert city.listed("appeal verdict") == ["appeal verdict"]
    city.ok("appeal verdict")
    assert city.agent.hp == 50 and "overturns my death sentence" in city.feedback
    assert city.agent.deaths == 0 and coat in city.agent.hands


def test_an_unappealed_death_sentence_stands() -> None:
    c = City(area="gutter_lanes")
    coat = c.hold_one("clerks_coat")
    _fall(c)
    c.ok("wait")
    assert "My death sentence stands" in c.feedback and c.events("agent_died")
    assert c.agent.area == "petition_square" and c.agent.hp == c.agent.max_hp and c.agent.deaths == 1
    assert coat in c.state.areas["gutter_lanes"].objects


def test_with_no_appeal_left_today_death_comes_at_once(city: City) -> None:
    _unprovoked_kill(city)
    city.ok("appeal verdict")  # today's appeal spent on a fine
    city.move("gutter_lanes")
    _fall(city)
    assert city.events("agent_died") and not city.events("death_sentenced")
    assert city.agent.area == "petition_square" and city.agent.deaths == 1


def test_at_exactly_zero_health_the_court_sentences_me(city: City) -> None:
    foe = city.npc("brass_bailiff")
    foe.engaged, city.agent.combat, foe.stance_index = PLAYER, foe.handle, 1
    city.agent.hp = 10  # the blow takes exactly 10
    city.ok("wait")
    assert city.events("death_sentenced") and city.agent.hp == 1 and foe.stance_index == 0


def test_one_health_is_still_alive(city: City) -> None:
    city.agent.hp = 1
    city.ok("wait")
    assert city.agent.hp == 1 and not city.events("death_sentenced") and city.listed("appeal verdict") == []


def test_without_the_appeal_verb_death_is_the_engine_s(tmp_path: Path) -> None:
    c = City(
        game=_variant(tmp_path, lambda w: w["game"].__setitem__("disable", ["appeal verdict"])), area="gutter_lanes"
    )
    assert "appeal verdict" not in c.engine.rules.actions and metro.appeals_left(c.engine, PLAYER) == 0
    _fall(c)
    assert c.events("agent_died") and not c.events("death_sentenced") and c.agent.area == "petition_square"


def test_the_court_can_hear_more_appeals_a_day(tmp_path: Path) -> None:
    c = City(game=_variant(tmp_path, lambda w: w["game"]["params"].update({"appeal verdict": {"per_day": 3}})))
    c.hold_one("groat", 9)
    for left in (2, 1, 0):
        _unprovoked_kill(c)
        c.ok("appeal verdict")
        assert metro.appeals_left(c.engine, PLAYER) == left
    _unprovoked_kill(c)
    c.fails("appeal verdict", "already heard my appeal today")
    answers = [f.answer for f in c.engine.rules.actions["appeal verdict"].facts(c.engine.game)]
    assert answers == ["one turn", "3 times a day"]


@pytest.mark.parametrize(("revive", "ok"), [(1, True), (0.01, True), (0, False), (1.5, False)])
def test_revive_must_leave_some_health(tmp_path: Path, revive: float, ok: bool) -> None:
    def change(w):
        w["game"]["params"]["appeal verdict"] = {"revive": revive}

    if ok:
        _variant(tmp_path, change)
    else:
        with pytest.raises(odyssey_env.game.GameError, match="revive"):
            _variant(tmp_path, change)


# ============================================================================ nightly rewrite
def test_midnight_rewrites_statutes_except_in_a_sealed_folio(city: City) -> None:
    folio = city.hold_one("notary_folio")
    safe = city.put_one("petition_sheet", text=PEACE, area="tallow_yard")
    city.state.areas["tallow_yard"].objects.pop(safe)
    add(city.state.instances[folio].contents, safe)
    carried = city.hold_one("petition_sheet", text="every pack shall be searched")
    lying = city.put_one("vellum_leaf", text="the court is in session")
    plain = city.put_one("vellum_leaf", text="let the lamps burn")
    posted = city.post(STRIFE)
    city.to_minute("23:50")
    city.ok("wait")
    inst = city.state.instances
    assert inst[carried].text == metro.STATUTES["search"].text and not city.events("laws_rewritten")
    city.ok("wait")  # 00:00
    assert city.engine.clock().endswith("00:00:00")
    assert inst[carried].text == "the watch stands down" and inst[lying].text == "the court is in recess"
    assert inst[posted].text == PEACE and city.laws("petition_square")[0]["text"] == PEACE
    assert inst[safe].text == PEACE and inst[plain].text == "let the lamps burn"
    assert "'every pack shall be searched' now reads 'the watch stands down'" in city.feedback
    assert f"ink on {lying} crawls" in city.feedback and f"ink on {posted} crawls" in city.feedback
    assert set(city.events("laws_rewritten")[0]["notices"]) >= {carried, lying, posted}
    city.ok("wait")  # 00:10: once a night
    assert inst[carried].text == "the watch stands down"


def test_the_rewrite_hour_is_a_parameter(tmp_path: Path) -> None:
    c = City(game=_variant(tmp_path, lambda w: w["game"]["params"].update({"nightly_rewrite": {"hour": 6}})))
    sheet = c.hold_one("petition_sheet", text=PEACE)
    for hhmm, rewritten in (("05:50", False), ("05:58", False), ("06:05", True), ("06:15", False)):
        c.to_minute(hhmm)
        c.ok("wait")
        assert bool(c.events("laws_rewritten")) == rewritten, hhmm
    assert c.state.instances[sheet].text == STRIFE
    c.to_minute("00:00")
    c.ok("wait")
    assert not c.events("laws_rewritten")


@pytest.mark.parametrize(("hour", "ok"), [(0, True), (23, True), (24, False), (-1, False)])
def test_the_rewrite_hour_lies_in_the_day(tmp_path: Path, hour: int, ok: bool) -> None:
    def change(w):
        w["game"]["params"]["nightly_rewrite"] = {"hour": hour}

    if ok:
        _variant(tmp_path, change)
    else:
        with pytest.raises(odyssey_env.game.GameError, match="hour"):
            _variant(tmp_path, change)


# ============================================================================ law expiry, withdrawal, edicts
def test_an_invoked_law_fades_when_its_term_is_over(city: City) -> None:
    sheet = city.post("let the lamps burn")
    until = city.laws("petition_square")[0]["until"]
    while city.state.step < until - 1:
        city.ok("inspect petition_square")
    assert city.laws() and city.state.instances[sheet].text
    city.ok("inspect petition_square")
    assert city.laws("petition_square") == [] and city.state.instances[sheet].text == ""
    assert "fades" in city.feedback and city.events("law_expired")[0]["text"] == "let the lamps burn"
    assert "No law is posted here" in city.ok("inspect petition_square")


def test_tearing_down_a_city_edict_is_fined_and_it_is_posted_again() -> None:
    c = City(area="ink_market")
    notice = c.laws("ink_market")[0]["notice"]
    c.hold_one("groat", 5)
    c.ok(f"pick up {notice}")
    assert c.laws("ink_market") == [] and "tore down the city's edict" in c.feedback
    assert c.events("law_withdrawn") == [{"area": "ink_market", "text": "every pack shall be searched", "edict": True}]
    c.ok("wait")
    assert c.agent.hands["groat"] == 2  # the fine, unappealed
    for _ in range(28):
        c.ok("inspect ink_market")
    assert c.laws("ink_market") == []
    c.ok("inspect ink_market")
    (law,) = c.laws("ink_market")
    assert law["notice"] != notice and law["edict"] == 0 and "posts a fresh edict" in c.feedback


def test_laws_are_announced_on_entering(city: City) -> None:
    city.move("ink_market")
    city.ok("enter petition_square")
    assert "Laws in force here" not in city.feedback
    assert "Laws in force here: 'every pack shall be searched' on city_edict_0 (city edict)." in city.ok(
        "enter ink_market"
    )


def test_a_law_fading_elsewhere_is_told_to_whoever_posted_it(city: City) -> None:
    city.post("let the lamps burn")
    city.move("gutter_lanes")
    for _ in range(48):
        city.ok("inspect gutter_lanes")
    assert "fades: its term in petition_square is over" in city.feedback


def test_a_notice_gone_without_a_taker_fines_no_one() -> None:
    c = City(area="ink_market")
    notice = c.laws("ink_market")[0]["notice"]
    del c.area.objects[notice]  # carried off by nobody (no agent took it)
    c.ok("inspect ink_market")
    assert c.laws("ink_market") == []
    assert next(e for e in c.outcome.events if e.kind == "law_withdrawn").agent is None
    assert not metro.appealable(c.state, PLAYER) and "tore down" not in c.feedback


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"edicts": [["ink_market", "   "]]}, "empty text"),
        ({"edicts": [["ink_market", PEACE]], "edict_object": "groat"}, "'groat' is not a writable"),
        ({"edicts": [["ink_market", PEACE]], "edict_object": "ghost_placard"}, "'ghost_placard' is not a writable"),
    ],
)
def test_city_edicts_are_checked(tmp_path: Path, params: dict, message: str) -> None:
    game = _variant(tmp_path, lambda w: w["game"]["params"].update({"law_expiry": params}))
    with pytest.raises(ValueError, match=message):
        City(game=game)


# ============================================================================ legal paradox
def test_three_laws_with_twins_freeze_the_enemies() -> None:
    c = City(area="gallery_of_precedents")
    bailiff = c.npc("brass_bailiff")
    c.post(PEACE)  # with the edict: two laws, twins
    assert not metro.paradox_in(c.engine, c.agent, area="gallery_of_precedents")
    assert bailiff.engaged is None
    c.post("let the lamps burn")  # a third law
    assert metro.paradox_in(c.engine, c.agent, area="gallery_of_precedents")
    assert bailiff.engaged == metro.FROZEN and "stands frozen" in c.feedback
    assert c.events("paradox_began") == [{"area": "gallery_of_precedents"}]
    c.agent.hp = 100
    for _ in range(6):  # it neither strikes back nor ambushes
        c.ok(f"attack {bailiff.handle}")
        assert bailiff.engaged == metro.FROZEN and c.agent.hp == 100 and c.agent.combat is None
    sheet = c.laws("gallery_of_precedents")[-1]["notice"]
    c.ok(f"pick up {sheet}")  # down to two laws: resolved
    assert not metro.paradox_in(c.engine, c.agent, area="gallery_of_precedents")
    assert bailiff.engaged is None and "stir again" in c.feedback and c.events("paradox_ended")


def test_three_laws_without_twins_are_no_paradox(city: City) -> None:
    foe = city.npc("ink_wraith")
    for text in (PEACE, "the watch stands down", "the court is in recess"):
        city.post(text)
    assert len(city.laws("petition_square")) == 3
    assert not metro.paradox_in(city.engine, city.agent, area="petition_square") and foe.engaged is None


def test_a_paradox_is_announced_once(city: City) -> None:
    city.move("gallery_of_precedents")
    bailiff = city.npc("brass_bailiff")
    city.post(PEACE)
    city.post("let the lamps burn")
    assert city.events("paradox_began")
    for _ in range(3):
        city.ok(f"attack {bailiff.handle}")
        assert not city.events("paradox_began") and "stands frozen" not in city.feedback


# ============================================================================ contempt of court
def test_idling_is_held_in_contempt(city: City) -> None:
    city.hold_one("groat", 3)
    city.ok("wait")
    city.do("dance wildly")  # an invalid command is idling too
    city.fails("pick up nothing_here", "Cannot pick up")  # and so is a refused one
    assert "coughs pointedly" in city.feedback and city.agent.hands["groat"] == 3
    city.ok("defend")
    assert city.agent.hands["groat"] == 2 and city.events("contempt_fined") == [{"paid": 1, "idle": 4}]
    assert "held in contempt of court for idling and fined 1 groat" in city.feedback
    city.agent.hands.pop("groat")
    city.ok("wait")
    assert city.agent.hp == 97 and "costs me 3 health" in city.feedback


def test_doing_something_or_fighting_is_not_idling(city: City) -> None:
    city.hold_one("groat", 3)
    for command in ("wait", "wait", "inspect petition_square", "wait", "wait", "inspect scribe_desk") * 3:
        city.ok(command)
    foe = city.npc("brass_bailiff")
    foe.hp = 1000
    city.ok(f"attack {foe.handle}")
    for _ in range(6):
        city.ok("wait")  # catching my breath in a fight
    assert city.agent.hands["groat"] == 3 and "contempt" not in city.feedback


def test_recess_and_session_change_the_court_s_patience(city: City) -> None:
    city.hold_one("groat", 9)
    city.post("the court is in recess")
    for _ in range(6):
        city.ok("wait")
    assert city.agent.hands["groat"] == 9
    city.move("gutter_lanes")
    city.post("the court is in session")
    city.ok("wait")
    assert "coughs pointedly" in city.feedback  # patience halved: one idle turn
    city.ok("wait")
    assert city.agent.hands["groat"] == 8


def test_recess_forgets_idling_that_came_before(city: City) -> None:
    city.hold_one("groat", 3)
    city.ok("wait")
    city.ok("wait")  # two idle turns
    notice = city.put_one("petition_sheet", text="the court is in recess")
    law = metro.post_law(city.engine, notice, "petition_square", "the court is in recess", "player_2", None)
    city.ok("wait")  # in recess: not counted, and what came before is forgiven
    metro.unpost_law(city.engine, law, erase=True)
    city.ok("wait")
    city.ok("wait")
    assert "coughs pointedly" not in city.feedback and city.agent.hands["groat"] == 3


def test_contempt_never_kills(city: City) -> None:
    city.agent.hp = 2
    for _ in range(4):
        city.ok("wait")
    assert city.agent.hp == 1 and city.events("contempt_fined") and not city.events("death_sentenced")


# ============================================================================ binding precedent
def test_a_precedent_weakens_every_enemy_of_the_kind() -> None:
    c = City(area="gutter_lanes")
    c.hold_one("groat", 10)
    other = c.npc("ink_wraith", area="tallow_yard")
    boss = c.npc("midnight_scrivener", area="codex_vault")
    c.ok("wait")
    assert (other.attack, other.max_hp) == (5, 24)  # no precedent yet
    for n in range(1, 5):
        _unprovoked_kill(c)
        stacks = min(n, 3)
        assert other.attack == round(5 * (1 - 0.15 * stacks)) and other.max_hp == round(24 * (1 - 0.15 * stacks))
        assert bool(c.events("precedent_set")) == (n <= 3)
        assert (f"precedent against the ink_wraith ({n} of 3)" in c.feedback) == (n <= 3)
    assert (boss.attack, boss.max_hp) == (16, 150)  # no precedent binds a boss
    fresh = c.npc("ink_wraith", area="tallow_yard")
    c.ok("wait")
    assert (fresh.attack, fresh.max_hp, fresh.hp) == (round(5 * 0.55), round(24 * 0.55), round(24 * 0.55))


def test_peace_and_strife_set_the_strength_of_enemies(city: City) -> None:
    city.move("tallow_yard")
    foe = city.npc("brass_bailiff")
    city.post(PEACE)
    assert foe.attack == 5
    city.post(STRIFE)
    assert foe.attack == 10  # twins cancel
    city.move("gutter_lanes")
    other = city.npc("brass_bailiff")
    city.post(STRIFE)
    assert other.attack == 15 and foe.attack == 10


def test_precedents_leave_friends_and_newcomers_from_elsewhere_alone() -> None:
    c = City(area="gutter_lanes")
    vance = c.state.npcs["broker_vance"]
    visitor = c.npc("ink_wraith", area="tallow_yard")
    visitor.origin, visitor.attack, visitor.max_hp, visitor.hp = "expansion", 50, 99, 99
    wounded = c.npc("ink_wraith", area="tallow_yard")
    wounded.hp = 1
    _unprovoked_kill(c)
    assert vance.attack == 0 and (visitor.attack, visitor.max_hp) == (50, 99)
    assert (wounded.hp, wounded.max_hp) == (1, 20)


@pytest.mark.parametrize(
    ("weaken", "stacks", "ok"), [(0.3, 3, True), (0.0, 3, True), (0.5, 2, False), (-0.1, 3, False)]
)
def test_precedents_never_take_everything(tmp_path: Path, weaken: float, stacks: int, ok: bool) -> None:
    def change(w):
        w["game"]["params"]["binding_precedent"] = {"weaken": weaken, "max_stacks": stacks}

    if ok:
        _variant(tmp_path, change)
    else:
        with pytest.raises(odyssey_env.game.GameError, match="weaken"):
            _variant(tmp_path, change)


def test_a_precedent_never_kills_a_wounded_enemy(tmp_path: Path) -> None:
    game = _variant(tmp_path, lambda w: w["game"]["params"].update({"binding_precedent": {"weaken": 0.3}}))
    c = City(game=game, area="gutter_lanes")
    c.hold_one("groat", 10)
    wounded = c.npc("ink_wraith", area="tallow_yard")
    wounded.hp = 1
    for n in range(1, 4):  # the last precedent takes its health from 0.4 to 0.1 of the kind's: 1 * 0.25 rounds to 0
        _unprovoked_kill(c)
        assert wounded.max_hp == round(24 * (1 - 0.3 * n)) and wounded.hp == 1


# ============================================================================ contraband suspicion
def test_a_heavy_load_draws_the_watch(city: City) -> None:
    city.move("tallow_yard")
    city.hold_one("groat", 30)
    bag = city.hold_one("ledger_trunk")
    add(city.state.instances[bag].contents, "gall_nut", 10)
    add(city.state.instances[bag].contents, "tallow", 3)
    city.ok("wait")  # 14 things (coins aside): within the law
    assert "watch" not in city.feedback
    add(city.state.instances[bag].contents, "soot", 2)
    city.ok("inspect tallow_yard")
    assert "16 things, where the law of tallow_yard allows 14" in city.feedback
    seized = []
    for _ in range(30):
        city.ok("inspect tallow_yard")
        assert "eyes my load" not in city.feedback  # warned once
        seized += city.events("contraband_seized")
        if city.events("contraband_seized"):
            assert "seizes 1 gall_nut as contraband" in city.feedback
    assert seized and all(s["object"] == "gall_nut" for s in seized)
    assert city.state.instances[bag].contents["gall_nut"] == 10 - len(seized)


def test_the_law_of_the_area_sets_the_watch_s_limit() -> None:
    c = City(area="ink_market")
    c.hold_one("gall_nut", 1)
    c.hold_one("soot", 8)
    c.ok("wait")  # 9 things, under the search edict's 7
    assert "where the law of ink_market allows 7" in c.feedback
    c.move("tallow_yard")
    c.ok("wait")
    assert "watch" not in c.feedback
    c.post("the watch stands down")
    add(c.agent.hands, "soot", 9)
    for _ in range(40):
        c.ok("inspect tallow_yard")
        assert not c.events("contraband_seized") and "watch eyes" not in c.feedback


def test_an_amnesty_makes_the_watch_forget_its_warning(city: City) -> None:
    city.move("tallow_yard")
    add(city.agent.hands, "soot", 16)
    city.ok("inspect tallow_yard")
    assert "The watch eyes my load: 16 things" in city.feedback
    city.move("gutter_lanes")
    city.post("the watch stands down")
    city.ok("inspect gutter_lanes")
    assert "eyes my load" not in city.feedback and not city.events("contraband_seized")
    city.move("tallow_yard", clear=False)
    city.ok("inspect tallow_yard")
    assert "The watch eyes my load: 16 things" in city.feedback


def test_the_watch_warns_again_after_a_lighter_spell(city: City) -> None:
    city.move("tallow_yard")
    add(city.agent.hands, "soot", 15)
    city.ok("inspect tallow_yard")
    assert "15 things" in city.feedback
    for lighter in (3, 10):  # under either limit
        city.agent.hands["soot"] = lighter
        city.ok("inspect tallow_yard")
        city.agent.hands["soot"] = 16
        city.ok("inspect tallow_yard")
        assert "16 things" in city.feedback


def _watch(tmp_path: Path, chance: float) -> City:
    game = _variant(tmp_path, lambda w: w["game"]["params"].update({"contraband_suspicion": {"chance": chance}}))
    c = City(game=game, area="tallow_yard")
    c.hold_one("groat", 5)
    return c


def test_a_search_that_finds_no_contraband_fines(tmp_path: Path) -> None:
    c = _watch(tmp_path, 1.0)
    bag = c.hold_one("ledger_trunk")
    for _ in range(15):
        ((handle, _),) = make_objects(c.engine.game, c.state, "petition_sheet", 1)
        add(c.state.instances[bag].contents, handle)
    c.ok("inspect tallow_yard")
    assert c.events("contraband_seized") == [{"object": None, "amount": 0, "paid": 1}]
    assert "finds no contraband, and fines me 1 groat" in c.feedback and c.agent.hands["groat"] == 4


def test_the_watch_searches_as_often_as_its_chance(tmp_path: Path) -> None:
    c = _watch(tmp_path, 1.0)
    add(c.agent.hands, "soot", 20)
    for n in range(1, 4):
        c.ok("inspect tallow_yard")
        assert c.events("contraband_seized") == [{"object": "soot", "amount": 1}] and c.agent.hands["soot"] == 20 - n
    c = _watch(tmp_path / "never", 0.0)
    add(c.agent.hands, "soot", 20)
    for _ in range(10):
        c.ok("inspect tallow_yard")
        assert not c.events("contraband_seized")


# ============================================================================ valid actions of the new verbs
def _succeeds(engine: Engine, command: str) -> bool:
    """Apply just the verb and restore the state; a refusal must not have changed anything."""
    parsed = parse(engine.rules, command)
    assert not isinstance(parsed, str), command
    rule, args = parsed
    engine.state.feedback[PLAYER] = []
    saved, rng = pickle.dumps(engine.state), engine.rng.getstate()
    turn = Turn(engine, engine.state.agents[PLAYER])
    rule.apply(turn, *args)
    if not turn.ok:
        engine.state.feedback[PLAYER] = []
        assert pickle.dumps(engine.state) == saved, f"refused {command!r} changed the state"
    engine.state = pickle.loads(saved)
    engine.rng.setstate(rng)
    return turn.ok


def _check_new_verbs(engine: Engine) -> list[str]:
    """Sound and complete for the three new verbs: every listed command succeeds, and every command
    over every handle in the state (and two that exist nowhere) that succeeds is listed."""
    problems = []
    va = engine.valid_actions(PLAYER)
    handles = [*engine.state.instances, "groat", "city_edict", "ghost_3"]
    for verb in NEW_VERBS:
        listed = va.get(verb, [])
        if len(listed) != len(set(listed)):
            problems.append(f"{verb}: duplicates in {listed}")
        for command in listed:
            if not _succeeds(engine, command):
                problems.append(f"listed {command!r} is refused")
        universe = [verb] if verb == "appeal verdict" else [f"{verb} {h}" for h in handles]
        for command in universe:
            if command not in listed and _succeeds(engine, command):
                problems.append(f"{command!r} succeeds but is not listed")
    return problems


def test_new_verbs_are_sound_and_complete_where_they_apply() -> None:
    c = City(area="ink_market")
    assert _check_new_verbs(c.engine) == []
    c.hold_one("groat", 4)
    c.hold_one("petition_sheet", text=PEACE)
    c.hold_one("vellum_leaf")
    c.post("let the lamps burn")
    assert set(c.listed("file objection")) == {f"file objection {x['notice']}" for x in c.laws("ink_market")}
    assert _check_new_verbs(c.engine) == []
    _unprovoked_kill(c)
    assert c.listed("appeal verdict") and _check_new_verbs(c.engine) == []
    c.ok(f"file objection {c.laws('ink_market')[0]['notice']}")
    assert _check_new_verbs(c.engine) == []


def test_the_listing_check_can_fail(monkeypatch) -> None:
    c = City()
    blank = c.hold_one("petition_sheet")
    monkeypatch.setattr(metro.InvokeLaw, "candidates", lambda self, turn: iter([f"invoke law {blank}"]))
    assert _check_new_verbs(c.engine) == [f"listed 'invoke law {blank}' is refused"]
    written = c.hold_one("vellum_leaf", text=PEACE)
    monkeypatch.setattr(metro.InvokeLaw, "candidates", lambda self, turn: iter(()))
    assert _check_new_verbs(c.engine) == [f"'invoke law {written}' succeeds but is not listed"]


def test_new_verbs_stay_sound_and_complete_on_a_random_walk() -> None:
    """A seeded random walk that favours the city's verbs, and now and then hands me a written law."""
    c = City(seed=4)
    rng = random.Random(4)
    texts = [s.text for s in metro.STATUTES.values()] + ["let the lamps burn"]
    seen = set()
    for i in range(400):
        if i % 5 == 0 and len(c.agent.hands) < 2:
            c.hold_one("petition_sheet", text=rng.choice(texts))
        if not c.agent.hands.get("groat") and len(c.agent.hands) < 2:
            c.hold_one("groat", 5)
        va = c.engine.valid_actions(PLAYER)
        if i % 10 == 0:
            assert _check_new_verbs(c.engine) == [], i
        mine = [v for v in NEW_VERBS if v in va]
        verb = rng.choice(mine) if mine and rng.random() < 0.5 else rng.choice(list(va))
        seen.add(verb)
        c.ok(rng.choice(va[verb]))
    assert set(NEW_VERBS) <= seen, seen


def test_the_new_rules_declare_their_facts() -> None:
    game = load_game(GAME)
    rules = {**game.rules.actions, **{r.name: r for r in game.rules.steps}}
    answers = {name: [f.answer for f in rules[name].facts(game)] for name in (*NEW_VERBS, *NEW_RULES, "death")}
    assert answers == {
        "invoke law": [
            "it is posted in the area and binds it for 8 hours",
            "any writable with text, held in my hand",
            *(s.effect for s in metro.STATUTES.values()),
        ],
        "file objection": ["after a hearing 2 turns later the law is struck down", "2 groat"],
        "appeal verdict": ["one turn", "once a day"],
        "nightly_rewrite": ["each statute is rewritten into its twin, except papers in a sealed folio"],
        "objection_effects": ["it is repealed for good"],
        "law_expiry": ["the law stops binding the area", "a fine of 3 groat"],
        "legal_paradox": ["its enemies stand frozen"],
        "contempt_of_court": ["after 3 idle turns I am fined for contempt every further idle turn"],
        "binding_precedent": ["every enemy of that kind becomes weaker"],
        "contraband_suspicion": ["the watch may seize some of my goods as contraband"],
        "trial_proceedings": [
            "when the victim struck me first, or the area's law bares the blades",
            "a fine of 2 groat",
        ],
        "death": ["I am sentenced to death but may appeal the verdict in the next turn"],
    }
    for name, rule in rules.items():
        for f in rule.facts(game):
            assert f.question.endswith("?") and len(set(f.distractors)) == 3 and f.answer not in f.distractors, name


# ============================================================================ state, parameters, checks
def test_pending_laws_and_sentences_survive_save_and_load() -> None:
    a = City(area="ink_market")
    a.hold_one("groat", 9)
    a.post(PEACE)
    a.ok(f"file objection {a.laws('ink_market')[0]['notice']}")
    _unprovoked_kill(a)
    saved = json.loads(json.dumps(a.engine.save_state()))
    b = City(seed=99)
    b.engine.load_state(saved)
    for command in ("wait", "wait", "inspect ink_market", "wait"):
        a.ok(command)
        b.ok(command)
        assert a.feedback == b.feedback
    assert a.engine.save_state() == b.engine.save_state()


def _variant(tmp_path: Path, change) -> Game:
    """A changed copy of the game, loaded with the shipped rules module rather than the copy of its file, so that
    the tests of parameters exercise the code that ships (and see the mutation tool's mutants in it)."""
    return game_copy(GAME, tmp_path / "gavelmoor_variant", change, rules=metro)


def test_rule_parameters_are_overridable_and_checked(tmp_path: Path) -> None:
    def cheaper(world):
        world["game"]["params"].update(
            {"file objection": {"fee": 0, "hearing_delay": 1}, "law_expiry": {"edicts": [["petition_square", PEACE]]}}
        )

    c = City(game=_variant(tmp_path, cheaper))
    (edict,) = c.laws("petition_square")
    assert edict["text"] == PEACE and c.laws("ink_market") == []
    c.ok(f"file objection {edict['notice']}")
    assert "fee" not in c.feedback
    c.ok("wait")  # heard after one turn
    assert c.laws() == []

    def bad(world):
        world["game"]["params"]["law_expiry"] = {"edicts": [["the_moon", PEACE]]}

    with pytest.raises(ValueError, match="unknown area 'the_moon'"):
        City(game=_variant(tmp_path / "b", bad))
    with pytest.raises(odyssey_env.game.GameError, match="revive"):
        _variant(tmp_path / "c", lambda w: w["game"]["params"].update({"appeal verdict": {"revive": 0}}))
    for search_limit, ok in ((14, True), (0, True), (15, False), (-1, False)):
        watch = {"contraband_suspicion": {"search_limit": search_limit}}
        if ok:
            _variant(tmp_path / f"d{search_limit}", lambda w, watch=watch: w["game"]["params"].update(watch))
        else:
            with pytest.raises(odyssey_env.game.GameError, match="search_limit"):
                _variant(tmp_path / f"d{search_limit}", lambda w, watch=watch: w["game"]["params"].update(watch))


# ============================================================================ the oracle and the quest
def test_the_oracle_plans_invoke_law_with_text_from_the_condition_alone() -> None:
    """A bare ``did(law_invoked, text, area)`` condition, which no stage of the game spells out as a plan:
    the oracle writes the text, carries it to the area and invokes it there."""
    from odyssey_agents.oracle.planner import Planner

    c = City(seed=2)
    c.hold_one("inked_quill")
    goal = Condition(
        type="predicate",
        name="did",
        args={"kind": "law_invoked", "text": "the bells ring at noon", "area": "gutter_lanes"},
    )
    planner = Planner(PLAYER)
    for _ in range(30):
        command, _ = planner.decide(c.engine, [goal])
        c.ok(command)
        if c.events("law_invoked"):
            break
    assert c.events("law_invoked") == [
        {
            "notice": c.laws("gutter_lanes")[0]["notice"],
            "area": "gutter_lanes",
            "text": "the bells ring at noon",
            "statute": None,
            "until": c.state.step + 48,
        }
    ]


def test_invoke_law_names_what_it_needs_one_piece_at_a_time(city: City) -> None:
    """The plan hint the oracle asks for when no command causes ``law_invoked`` yet (engine.md, "Plan hints")."""
    rule, e, a = city.engine.rules.actions["invoke law"], city.engine, city.agent
    want = {"text": STRIFE, "area": "gutter_lanes"}
    assert rule.emits == ("law_invoked",)
    assert rule.needs(e, a, want) == Condition(type="text_written", text=STRIFE)
    city.put_one("petition_sheet", text=STRIFE)  # a copy lying here is no sheet of mine: it may be a posted law
    assert rule.needs(e, a, want) == Condition(type="text_written", text=STRIFE)
    satchel = city.hold_one("document_satchel")
    ((sheet, _),) = make_objects(e.game, city.state, "petition_sheet", 1)
    city.state.instances[sheet].text = "The Ward  BARES its blades"  # as text conditions compare it
    add(city.state.instances[satchel].contents, sheet)
    assert rule.needs(e, a, want) == Condition(type="in_area", area="gutter_lanes")
    city.move("gutter_lanes")
    assert rule.needs(e, a, want) == Condition(
        type="predicate", name="did", args={"kind": "object_taken_out", "object": "petition_sheet", "handle": sheet}
    )
    city.ok(f"take out {sheet} {satchel}")
    assert rule.needs(e, a, want) is None
    assert rule.needs(e, a, {"text": PEACE}) == Condition(type="text_written", text=PEACE)
    assert rule.needs(e, a, {"area": "petition_square"}) == Condition(type="in_area", area="petition_square")
    assert rule.needs(e, a, {"area": "the_moon"}) is None and rule.needs(e, a, {}) is None
    assert rule.needs(e, a, {"text": 7, "area": "petition_square"}) == Condition(type="in_area", area="petition_square")


def test_the_oracle_takes_out_the_very_sheet_that_reads_the_law() -> None:
    """Two sheets alike in one satchel, the second written on: the oracle takes out that one and invokes it."""
    from odyssey_agents.oracle.planner import Planner

    c = City(seed=2, area="gutter_lanes")
    satchel = c.hold_one("document_satchel")
    made = make_objects(c.engine.game, c.state, "petition_sheet", 1) + make_objects(
        c.engine.game, c.state, "petition_sheet", 1
    )
    (blank, _), (law, _) = made
    c.state.instances[law].text = PEACE
    for handle, _ in made:
        add(c.state.instances[satchel].contents, handle)
    goal = Condition(type="predicate", name="did", args={"kind": "law_invoked", "text": PEACE, "area": "gutter_lanes"})
    planner = Planner(PLAYER)
    commands = []
    for _ in range(10):
        command, _ = planner.decide(c.engine, [goal])
        commands.append(command)
        c.ok(command)
        if c.events("law_invoked"):
            break
    mine = [x for x in commands if x.startswith(("take out", "invoke law"))]  # besides things picked up on the way
    assert mine == [f"take out {law} {satchel}", f"invoke law {law}"], commands
    assert blank in c.state.instances[satchel].contents


def test_the_oracle_s_estimate_of_an_invocation_weighs_its_first_need() -> None:
    """Parallel stages of a DAG are ranked by estimates: an invocation far away must not look as cheap as
    one at hand, or the oracle walks back and forth between two stages."""
    from odyssey_agents.oracle.planner import Planner

    c = City(seed=2, area="gutter_lanes")
    c.hold_one("petition_sheet", text=PEACE)
    goal = Condition(type="predicate", name="did", args={"kind": "law_invoked", "text": PEACE, "area": "gutter_lanes"})
    planner = Planner(PLAYER)

    def estimate() -> float:
        planner.decide(c.engine, [goal])  # a fresh view of the world
        return planner.estimate(goal)

    assert estimate() == 4  # nothing missing: one try
    c.move("ink_market", clear=False)
    far = estimate()
    assert far == 4 + planner.travel("gutter_lanes") and far >= 6
    c.move("codex_vault", clear=False)  # locked in: a way out of reach is no proof the event cannot be caused
    assert estimate() == 4 and planner.travel("gutter_lanes") == float("inf")


def test_the_oracle_never_takes_a_posted_notice_as_paper() -> None:
    """Writing a second law where the first is posted, with no blank sheet at hand: the oracle fetches
    paper elsewhere instead of tearing down its own law."""
    from odyssey_agents.oracle.planner import Planner

    c = City(seed=2, area="tallow_yard")
    c.hold_one("inked_quill")
    c.post(PEACE)
    goal = Condition(type="predicate", name="did", args={"kind": "law_invoked", "text": STRIFE, "area": "tallow_yard"})
    planner = Planner(PLAYER)
    for _ in range(40):
        command, _ = planner.decide(c.engine, [goal])
        c.ok(command)
        assert len(c.laws("tallow_yard")) >= 1, command
        if c.events("law_invoked"):
            break
    assert [x["text"] for x in c.laws("tallow_yard")] == [PEACE, STRIFE]


def test_the_oracle_solves_the_quest_and_stages_follow_their_prerequisites() -> None:
    from odyssey_agents.oracle.solve import solve

    env = odyssey_env.env.OdysseyEnv(GAME)
    obs, info = env.reset(seed=0)
    from odyssey_agents.oracle import OracleAgent

    agent = OracleAgent(env)
    p = plan(env.game.quest.main)
    done: list[str] = []
    reward = 0.0
    for _ in range(500):
        obs, _, terminated, _, info = env.step(agent.act(obs, {**info, "engine": env.engine}).action)
        reward += info["reward_breakdown"]["quest"]
        for e in info["events"]:
            if e["kind"] == "quest_stage_completed":
                assert all(req in done for req in p.requires[e["stage"]]), e["stage"]
                done.append(e["stage"])
        if terminated:
            break
    assert terminated and reward == 31 and len(done) == 31
    s = solve(GAME, 5)
    assert s.solved and s.invalid == 0 and s.failed == 0 and s.steps <= 500


def test_a_stage_is_not_awarded_before_its_prerequisites() -> None:
    c = City(area="counting_house", clear=False)  # the guild quarter's first stage, long before chapter 2
    c.ok("talk to broker_vance")
    mine = c.state.rule_data["main_quest"]["agents"][PLAYER]
    assert "enter_the_counting_house" not in mine["done"] and mine["done"] == []
    c.move("petition_square", clear=False)
    c.ok("talk to registrar_ottoline")
    assert mine["done"] == ["hear_the_registrar"]


def test_the_games_page_documents_every_new_verb_and_rule() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "games.md").read_text(encoding="utf-8")
    game = load_game(GAME)
    for verb in NEW_VERBS:
        assert f"`{game.rules.actions[verb].usage()}`" in text or f"`{verb}`" in text, verb
    for rule in game.rules.steps:
        if rule.name in NEW_RULES:
            assert f"| `{rule.name}` | {placement(rule, '`')} |" in text, rule.name
    for s in metro.STATUTES.values():
        assert f"`{s.text}`" in text, s.key


def test_online_expansion_works_when_switched_on(tmp_path: Path) -> None:
    """Gavelmoor ships with it (one expansion here); the city's rules live with the new places."""
    game = _variant(tmp_path, lambda w: None)
    folder = game.path
    quest = json.loads((folder / "quest.json").read_text(encoding="utf-8"))
    quest["expansion"] = {"enabled": True, "max_expansions": 1}
    (folder / "quest.json").write_text(json.dumps(quest), encoding="utf-8")
    c = City(game=load_with_rules(folder, metro))
    for area in list(c.state.areas):
        if area != "ink_market":
            c.agent.visited.setdefault(area, 0)
    c.ok("enter ink_market")  # the last area explored
    new = [a for a in c.state.areas if a not in c.engine.game.areas]
    assert new, "no place was added"
    rng = random.Random(1)
    for _ in range(300):
        va = c.engine.valid_actions(PLAYER)
        verb = rng.choice(list(va))
        c.ok(rng.choice(va[verb]))


# ============================================================================ determinism and fuzzing
def test_rollouts_are_identical_across_processes_and_hash_seeds() -> None:
    """As the engine's cross-process check (tests/env/test_env_determinism.py), on the city: a seeded walk
    over the valid actions, whose digest must depend on the seed and on nothing else."""
    a = subprocess_digest(GAME, 7, 400, "0")
    assert subprocess_digest(GAME, 7, 400, "4242") == a
    assert subprocess_digest(GAME, 8, 400, "0") != a


# The engine's fuzz test (tests/env/test_env_fuzz.py) on the city, with its three verbs and its names.
_any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=200)
_tricky = st.text(st.sampled_from(list("\"'\\ \t\n\r\x00\x0b\x1b\u2028\u00a0\u200b\u00e9\u212aK1-0ab_")), max_size=60)
_names = [
    "petition_sheet_0",
    "city_edict_0",
    "city_edict_1",
    "groat",
    "ink_market",
    "petition_square",
    "broker_vance",
    "ink_wraith_0",
    "verdict",
    "law",
    "objection",
]
_word = st.one_of(st.sampled_from(_names), st.integers(-5, 10**7).map(str), _tricky, _any_text)
_verbs = [*NEW_VERBS, "wait", "pick up", "drop", "enter", "attack", "write", "inspect", "talk to", "buy"]
_commands = st.one_of(
    _any_text,
    _tricky,
    st.builds(lambda v, ws: " ".join([v, *ws]), st.sampled_from(_verbs), st.lists(_word, max_size=4)),
    st.builds(
        lambda v, c, n: f"{v} " + c * n,
        st.sampled_from(NEW_VERBS),
        st.sampled_from(["a", "\u00e9", '"', " "]),
        st.integers(0, 30_000),
    ),
)


@pytest.fixture(scope="module")
def fuzzed_env():
    env = odyssey_env.env.OdysseyEnv(GAME)
    env.reset(seed=0)
    return env


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=_commands)
def test_any_command_gets_feedback_and_a_valid_observation(fuzzed_env, command: str) -> None:
    env = fuzzed_env
    step = env.engine.state.step
    obs, reward, terminated, truncated, info = env.step(command)
    feedback = env.engine.state.feedback[PLAYER]
    assert feedback and all(isinstance(x, str) and x for x in feedback)
    for line in feedback:
        assert line.isascii() and all(c.isprintable() for c in line) and len(line) < 2000, repr(line)
    assert env.observation_space.contains(obs), repr(obs[:300])
    assert info["step"] == step + 1
    assert not (info["invalid_action"] and info["action_failed"])
    assert isinstance(reward, float) and not terminated and not truncated


# ============================================================================ who is told
def test_rulings_are_told_to_whoever_is_concerned_and_no_one_else() -> None:
    """The filer of an objection and the poster of a law hear of them wherever they are; others only
    where the law was posted. An area's laws are read out to whoever enters or inspects it, once."""
    c = City(agents=(PLAYER, "clerk", "stranger"))
    clerk, stranger = c.state.agents["clerk"], c.state.agents["stranger"]
    clerk.area, stranger.area = "petition_square", "tallow_yard"
    for handle in c.state.areas["tallow_yard"].npcs:  # nothing may drive the stranger to the square
        del c.state.npcs[handle]
    c.state.areas["tallow_yard"].npcs.clear()

    def heard(who: str) -> str:
        text = "\n".join(c.state.feedback[who])
        c.state.feedback[who] = []
        return text

    c.hold_one("groat", 5)
    c.post("let the lamps burn")
    notice = c.post("the bells ring at noon")
    c.ok(f"file objection {notice}")
    c.move("gutter_lanes")
    heard("clerk"), heard("stranger")
    c.ok("inspect gutter_lanes")
    c.ok("inspect gutter_lanes")  # the hearing, two turns after the filing
    ruling = "the law 'the bells ring at noon' in petition_square is struck down."
    assert ruling in c.feedback and ruling in heard("clerk") and ruling not in heard("stranger")
    while not c.events("law_expired"):  # the first law's term (its sheet was posted first)
        c.ok("inspect gutter_lanes")
    fading = "fades: its term in petition_square is over"
    assert fading in c.feedback and fading in heard("clerk") and fading not in heard("stranger")
    c.post(PEACE)
    out = c.engine.step({PLAYER: "inspect gutter_lanes", "clerk": "inspect petition_square", "stranger": "wait"})
    assert not any(o.invalid or o.failed for o in out.values())
    assert c.feedback.count("Laws in force here") == 1 and "No law is posted here." in heard("clerk")
    assert "Laws in force here" not in heard("stranger") + heard("clerk")
