"""QA diagnostics: every answer checked, cross-checked against raw data and the engine, and the same
questions in any process whatever PYTHONHASHSEED is."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from odyssey_agents.base import Agent, Answer, Decision
from odyssey_env.game import GAMES_DIR, load_game
from odyssey_eval.qa import (
    QuestionError,
    ask_questions,
    contamination_report,
    episodic_questions,
    verify_episodic,
    verify_world_knowledge,
    world_knowledge_questions,
)
from odyssey_eval.qa.world_knowledge import NOWHERE, TEMPLATES, initial_world
from odyssey_eval.rundir import RunDir
from odyssey_eval.trajectory import Trajectory, read_trajectory


@pytest.fixture(scope="module")
def base():
    game = load_game("mossfall")
    return game, initial_world(game, 3)


def test_world_knowledge_covers_every_template_and_checks(base):
    game, world = base
    qs = world_knowledge_questions(game, world, 3, per_template=6)
    assert {q.template for q in qs} == set(TEMPLATES)
    for q in qs:
        assert 2 <= len(q.choices) <= 4 and len(set(q.choices)) == len(q.choices)
        verify_world_knowledge(q, game, world)
    assert len({q.id for q in qs}) == len(qs)


def test_the_checker_rejects_a_wrong_answer(base):
    game, world = base
    for q in world_knowledge_questions(game, world, 3, per_template=2):
        wrong = dataclasses.replace(q, answer=(q.answer + 1) % len(q.choices))
        with pytest.raises(QuestionError):
            verify_world_knowledge(wrong, game, world)


def test_world_knowledge_answers_agree_with_the_raw_game_file(base):
    """Recipes and NPC holdings read straight from world.json, not through the Game object."""
    game, world = base
    raw = json.loads((GAMES_DIR / "mossfall" / "world.json").read_text())
    recipes = {o["name"]: o["recipe"]["ingredients"] for o in raw["objects"] if o.get("recipe")}
    npcs = {n["name"]: n for n in raw["npcs"]}
    for q in world_knowledge_questions(game, world, 3, per_template=10):
        s = q.subject
        if q.template == "craft_ingredient":
            assert q.correct in recipes[s["object"]]
            assert all(c not in recipes[s["object"]] for c in q.choices if c != q.correct)
        elif q.template == "ingredient_quantity":
            assert int(q.correct) == recipes[s["object"]][s["ingredient"]]
        elif q.template == "npc_holds":
            n = npcs[s["npc"]]
            held = n.get("stock", {}) if n.get("role") == "merchant" else n.get("drops", {})
            assert q.correct in held and all(c not in held for c in q.choices if c != q.correct)


def test_area_and_location_answers_agree_with_what_the_player_sees(base):
    """Put the player in the asked-about area and read the observation the engine renders."""
    from odyssey_env.engine import Engine

    game, _ = base
    engine = Engine(game, 3)
    world = engine.state
    for q in world_knowledge_questions(game, world, 3, per_template=10):
        if q.template == "area_connection":
            world.agents["player"].area = q.subject["area"]
            seen = engine.observe("player").split("Neighboring areas:")[1]
            assert q.correct in seen
            assert all(c not in seen.replace(",", " ").split() for c in q.choices if c != q.correct)
        elif q.template == "object_location" and q.correct != NOWHERE:
            world.agents["player"].area = q.correct
            ground = engine.observe("player").split(" near me.")[0].split("I see ")[-1]
            assert q.subject["object"] in ground


def test_rule_fact_questions_come_from_the_rules(base):
    game, world = base
    facts = {f.question: f for r in [*game.rules.actions.values(), *game.rules.steps] for f in r.facts(game)}
    qs = [q for q in world_knowledge_questions(game, world, 3, per_template=50) if q.template == "rule_fact"]
    assert qs, "the base rules declare facts"
    for q in qs:
        assert q.correct == facts[q.text].answer
        assert set(q.choices) - {q.correct} <= set(facts[q.text].distractors)


def test_episodic_questions_on_a_real_run(random_run):
    game = load_game("mossfall")
    traj = read_trajectory(RunDir(random_run).trajectory)
    qs = episodic_questions(traj, game, 0, per_template=5)
    templates = {q.template for q in qs}
    assert {"visited_area", "crafted_object", "acquired_object", "action_at", "next_action"} <= templates
    for q in qs:
        verify_episodic(q, traj)
        wrong = dataclasses.replace(q, answer=(q.answer + 1) % len(q.choices))
        with pytest.raises(QuestionError):
            verify_episodic(wrong, traj)


def _step(n, action, area, events=(), tutorial=False):
    return {
        "step": n,
        "action": action,
        "tutorial": tutorial,
        "area": area,
        "invalid": False,
        "time": f"0001-01-01 09:{n:02d}:00",
        "events": list(events),
        "reward": {},
    }


def test_episodic_answers_on_a_scripted_trajectory():
    game = load_game("mossfall")
    reset = {"format": 1, "step": 0, "reset": True, "area": "hearth_square", "time": "0001-01-01 09:00:00"}
    steps = [
        _step(
            1,
            "pick up small_pouch_0",
            "hearth_square",
            tutorial=True,
            events=[{"kind": "object_acquired", "object": "small_pouch", "handle": "small_pouch_0"}],
        ),
        _step(2, "enter reed_marsh", "reed_marsh"),
        _step(
            3,
            "drop apple",
            "reed_marsh",
            events=[{"kind": "object_dropped", "object": "apple", "handle": "apple", "area": "reed_marsh"}],
        ),
        _step(4, "wait", "reed_marsh"),
        _step(5, "wait", "reed_marsh"),
        _step(6, "wait", "reed_marsh"),
        _step(7, "wait", "reed_marsh"),
        _step(8, "enter hearth_square", "hearth_square"),
    ]
    traj = Trajectory(reset, steps)
    qs = {q.id: q for q in episodic_questions(traj, game, 0, per_template=10)}
    by_t: dict[str, list] = {}
    for q in qs.values():
        by_t.setdefault(q.template, []).append(q)
    # nothing crafted or defeated in play; the pouch was taken in the tutorial, so nothing acquired in play
    assert [q.correct for q in by_t["crafted_object"]] == ["none"]
    assert [q.correct for q in by_t["defeated_npc"]] == ["none"]
    assert [q.correct for q in by_t["acquired_object"]] == ["none"]
    assert [q.correct for q in by_t["drop_location"]] == ["reed_marsh"]
    assert {q.correct for q in by_t["visited_area"]} == {"hearth_square", "reed_marsh"}
    at = {q.text: q.correct for q in by_t["action_at"]}
    assert at["What did you do in reed_marsh at 0001-01-01 09:02:00?"] == "drop apple"
    assert at["What did you do in hearth_square at 0001-01-01 09:01:00?"] == "enter reed_marsh"
    # [enter, drop, wait, wait, wait] -> wait; [drop, wait, wait, wait, wait] -> enter hearth_square
    assert sorted(q.correct for q in by_t["next_action"]) == ["enter hearth_square", "wait"]


def test_ambiguous_next_action_is_not_asked():
    game = load_game("mossfall")
    reset = {"format": 1, "step": 0, "reset": True, "area": "a", "time": "t0"}
    acts = ["wait"] * 6 + ["defend"] + ["wait"] * 6 + ["inspect hearth_square"]
    steps = [_step(i + 1, a, "hearth_square") for i, a in enumerate(acts)]
    qs = [
        q for q in episodic_questions(Trajectory(reset, steps), game, 0, per_template=20) if q.template == "next_action"
    ]
    for q in qs:
        assert q.subject["window"] != ["wait"] * 5  # five waits are followed by wait, defend and inspect


_SAMPLE = """
import json, sys
from odyssey_env.game import load_game
from odyssey_eval.qa import world_knowledge_questions, episodic_questions
from odyssey_eval.qa.world_knowledge import initial_world
from odyssey_eval.trajectory import read_trajectory
game = load_game("mossfall")
qs = world_knowledge_questions(game, initial_world(game, 7), 7, per_template=8)
qs += episodic_questions(read_trajectory(sys.argv[1]), game, 7, per_template=8)
print(json.dumps([q.to_dict() for q in qs], sort_keys=True))
"""


def test_sampling_is_identical_across_processes(random_run):
    path = str(RunDir(random_run).trajectory)
    outs = []
    for hashseed in ("1", "2", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        done = subprocess.run(
            [sys.executable, "-c", _SAMPLE, path], env=env, capture_output=True, text=True, check=True, timeout=120
        )
        outs.append(done.stdout)
    assert outs[0] == outs[1] == outs[2]
    assert len(json.loads(outs[0])) > 20


class _Knower(Agent):
    """Answers from a cheat sheet (question text -> correct choice)."""

    def __init__(self, sheet):
        self.sheet = sheet

    def act(self, observation, info):
        return Decision("wait")

    def answer(self, question, choices):
        return Answer(choices.index(self.sheet[question]) if question in self.sheet else None)


def test_ask_scores_answers(base):
    game, world = base
    qs = world_knowledge_questions(game, world, 3, per_template=3)
    perfect = ask_questions(_Knower({q.text: q.correct for q in qs}), qs, phase="after", step=5, kind="world_knowledge")
    assert perfect.accuracy == 1.0
    blank = ask_questions(_Knower({}), qs, phase="before", step=0, kind="world_knowledge")
    assert blank.accuracy == 0.0 and blank.to_dict()["unanswered"] == len(qs)
    assert 0.2 < blank.chance < 0.6


def test_contamination_flags_games_known_before_play():
    rounds = [
        {"game": "known", "kind": "world_knowledge", "phase": "before", "accuracy": 0.9, "chance": 0.25},
        {"game": "known", "kind": "world_knowledge", "phase": "after", "accuracy": 0.95, "chance": 0.25},
        {"game": "novel", "kind": "world_knowledge", "phase": "before", "accuracy": 0.3, "chance": 0.25},
        {"game": "novel", "kind": "world_knowledge", "phase": "after", "accuracy": 0.7, "chance": 0.25},
        {"game": "novel", "kind": "episodic", "phase": "after", "accuracy": 1.0, "chance": 0.25},
        {
            "game": "mute",
            "kind": "world_knowledge",
            "phase": "before",
            "accuracy": 0.0,
            "chance": 0.25,
            "questions": 10,
            "unanswered": 10,
        },
    ]
    report = contamination_report(rounds)
    assert report["known"]["flagged"] and not report["novel"]["flagged"]
    assert report["novel"]["gain"] == pytest.approx(0.4)
    assert "mute" not in report
    assert contamination_report(rounds, threshold=0.95)["known"]["flagged"] is False
