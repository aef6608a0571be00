"""The main quest as the player meets it: what is told when, the events stages emit, chains of stages
completed in one step, objects and creatures brought in as stages open, and one quest per agent."""

from __future__ import annotations

import copy

import pytest

from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.quests.main_quest import MainQuestRule, open_stages, plan, progress
from odyssey_env.quests.spec import MainQuest
from odyssey_env.schema import load

from .conftest import QUEST, WORLD, act, write_game


def told(engine, who: str = "player") -> str:
    return "\n".join(engine.state.feedback[who])


def story_quest():
    """The default quest with intros, texts on opening and completing, a placement and a guide in the barn."""
    quest = copy.deepcopy(QUEST)
    main = quest["main"]
    main["intro"] = "The farm needs me."
    main["outro"] = "The farm is saved."
    main["guide"] = {"npc": "sage", "area": "barn"}
    one, two = main["chapters"]
    one["intro"] = "It begins."
    one["stages"][0]["on_complete"] = "The sage nods."
    one["stages"][1]["on_open"] = "The barn door creaks."
    one["stages"][1]["place"] = [{"object": "relic", "area": "loft", "amount": 2}]
    two["intro"] = "Trouble upstairs."
    return quest


def test_the_start_announces_the_quest_its_chapter_and_first_objective(make_engine):
    engine = make_engine(story_quest())
    text = told(engine)
    assert "=== MAIN QUEST: Tiny Quest === The farm needs me." in text
    assert "=== One === It begins." in text
    assert "New objective: Talk to the sage." in text
    assert "sage" in engine.state.areas["barn"].npcs  # the guide waits where the quest puts it
    assert progress(engine, "player") == {
        "title": "Tiny Quest",
        "completed": 0,
        "total": 4,
        "done": False,
        "current": [{"id": "talk", "title": "Talk to the sage", "chapter": "One"}],
    }


def test_a_guide_without_an_area_waits_at_the_spawn(make_engine):
    engine = make_engine()
    assert "sage" in engine.state.areas["yard"].npcs
    assert [n.origin for n in engine.state.npcs.values() if n.type == "sage"] == ["quest"]


def test_completing_stages_tells_counts_and_emits(make_engine):
    quest = story_quest()
    del quest["main"]["guide"]["area"]  # the sage stays in the yard
    engine = make_engine(quest)
    out, text = act(engine, "talk to sage")
    assert "Stage complete (1/4): The sage nods." in text
    assert "New objective: Go to the barn. The barn door creaks." in text
    assert "=== One ===" not in text  # same chapter: no chapter heading again
    assert [e.data for e in out.events if e.kind == "quest_stage_completed"] == [
        {"stage": "talk", "chapter": "One", "index": 1}
    ]
    assert out.reward.quest == 1


def test_a_stage_already_met_completes_in_the_same_step_and_closes_its_chapter(make_engine):
    engine = make_engine(story_quest())
    act(engine, "enter barn")  # the guide is in the barn: "go to the barn" will hold as soon as it opens
    out, text = act(engine, "talk to sage")
    assert out.reward.quest == 2
    assert [e.data["index"] for e in out.events if e.kind == "quest_stage_completed"] == [1, 2]
    assert "Stage complete (2/4): I completed: Go to the barn." in text
    assert "=== Chapter complete: One ===" in text
    assert "=== Two === Trouble upstairs." in text and "New objective: Kill the rat." in text
    assert progress(engine, "player")["current"] == [{"id": "rat", "title": "Kill the rat", "chapter": "Two"}]


def test_a_stage_brings_its_objects_and_creatures_when_it_opens(make_engine):
    engine = make_engine(story_quest())
    assert "relic" not in engine.state.areas["loft"].objects and "rat_0" not in engine.state.npcs
    act(engine, "enter barn", "talk to sage")
    assert engine.state.areas["loft"].objects["relic"] == 2
    assert engine.state.npcs["rat_0"].area == "loft" and engine.state.npcs["rat_0"].origin == "quest"


def test_the_last_stage_ends_the_episode(make_engine):
    engine = make_engine(story_quest())
    act(engine, "enter barn", "talk to sage", "enter loft")
    for _ in range(20):
        out = engine.step({"player": "attack rat_0"})["player"]
        if "rat_0" not in engine.state.npcs:
            break
    assert not engine.state.done
    out, text = act(engine, "pick up relic")
    assert engine.state.done and "=== The farm is saved. ===" in text
    assert "=== Chapter complete: Two ===" in text
    assert [e.data for e in out.events if e.kind == "quest_completed"] == [{"title": "Tiny Quest"}]
    assert progress(engine, "player")["done"] is True


def test_the_guide_hints_every_open_stage_and_then_has_nothing_to_ask(make_engine):
    quest = {
        "main": {
            "title": "Two ways",
            "guide": {"npc": "sage"},
            "chapters": [
                {
                    "id": "c",
                    "title": "C",
                    "stages": [
                        {
                            "id": "a",
                            "title": "A",
                            "hint": "Barn.",
                            "done": {"type": "in_area", "area": "barn"},
                            "requires": [],
                        },
                        {
                            "id": "b",
                            "title": "B",
                            "hint": "Hay.",
                            "done": {"type": "has_item_count", "object": "hay"},
                            "requires": [],
                        },
                    ],
                }
            ],
        }
    }
    engine = make_engine(quest)
    _, text = act(engine, "talk to sage")
    assert 'sage says: "A: Barn."' in text and 'sage says: "B: Hay."' in text
    engine.state.rule_data["main_quest"]["agents"]["player"]["open"] = []  # as after the last stage
    _, text = act(engine, "talk to sage")
    assert 'sage says: "You have done all I could ask."' in text
    _, text = act(engine, "talk to trader")
    assert "sage says" not in text


def test_each_agent_has_its_own_quest(tmp_path):
    game = load_game(write_game(tmp_path, WORLD, QUEST, name="duo"), cache=False)
    engine = Engine(game, 0, agents=("player", "rival"))
    assert "=== MAIN QUEST: Tiny Quest ===" in told(engine, "rival")
    out = engine.step({"player": "wait", "rival": "talk to sage"})
    assert out["rival"].reward.quest == 1 and out["player"].reward.quest == 0
    assert 'sage says: "Go to the barn: East."' in told(engine, "rival")
    assert "sage says" not in told(engine)
    assert progress(engine, "rival")["completed"] == 1 and progress(engine, "player")["completed"] == 0


def test_plan_orders_stages_and_makes_requires_explicit(make_engine):
    engine = make_engine()
    p = plan(engine.game.quest.main)
    assert [s.id for s in p.stages] == ["talk", "barn", "rat", "relic"]
    assert p.requires == {"talk": (), "barn": ("talk",), "rat": ("barn",), "relic": ("rat",)}
    assert {k: c.title for k, c in p.chapter_of.items()} == {"talk": "One", "barn": "One", "rat": "Two", "relic": "Two"}
    assert {k: c.title for k, c in p.last_of_chapter.items()} == {"barn": "One", "relic": "Two"}
    assert [s.id for s in open_stages(p, [])] == ["talk"]
    assert [s.id for s in open_stages(p, ["talk", "barn"])] == ["rat"]
    assert open_stages(p, ["talk", "barn", "rat", "relic"]) == []


def test_the_rule_is_active_only_in_games_with_a_main_quest(tmp_path):
    with_quest = load_game(write_game(tmp_path, WORLD, QUEST, name="with"), cache=False)
    without = load_game(write_game(tmp_path, WORLD, {}, name="without"), cache=False)
    assert MainQuestRule().active(with_quest) is True
    assert MainQuestRule().active(without) is False
    assert without.rules.step_rule("main_quest") is None


def _dag(*stages):
    return {"main": {"title": "Dag", "chapters": [{"id": "c", "title": "C", "stages": list(stages)}]}}


def _stage(sid, requires):
    return {
        "id": sid,
        "title": sid.upper(),
        "hint": "",
        "done": {"type": "in_area", "area": "yard"},
        "requires": requires,
    }


def test_stages_met_at_once_complete_in_the_quest_s_order(make_engine):
    """a and b are open from the start; c opens after a and comes before b in the file: a, c, b."""
    last = {**_stage("d", ["b", "c"]), "done": {"type": "in_area", "area": "barn"}}
    engine = make_engine(_dag(_stage("a", []), _stage("c", ["a"]), _stage("b", []), last))
    out, _ = act(engine, "wait")
    assert [e.data["stage"] for e in out.events if e.kind == "quest_stage_completed"] == ["a", "c", "b"]
    assert [e.data["index"] for e in out.events if e.kind == "quest_stage_completed"] == [1, 2, 3]


def test_stages_open_from_the_start_bring_their_things_once(make_engine):
    barn = {"place": [{"object": "relic", "area": "barn", "amount": 2}], "spawn": [{"npc": "rat", "area": "loft"}]}
    engine = make_engine(
        _dag(
            {**_stage("a", []), "done": {"type": "talked_to", "npc": "sage"}},
            {**_stage("b", []), "done": {"type": "in_area", "area": "loft"}, **barn},
            _stage("end", ["a", "b"]),
        )
    )
    assert engine.state.areas["barn"].objects["relic"] == 2  # b is open from the start
    assert [n.type for n in engine.state.npcs.values() if n.area == "loft"] == ["rat"]
    _, text = act(engine, "talk to sage")  # a completes; b is still open, and is not brought in again
    assert engine.state.areas["barn"].objects["relic"] == 2
    assert [n.type for n in engine.state.npcs.values() if n.area == "loft"] == ["rat"]
    assert "New objective: B." not in text


def test_a_dag_chapter_is_announced_once_with_all_its_leaves(make_engine):
    """Every leaf of a goal-tree chapter is the first of its chapter; the heading is said once for them all."""
    away = {"type": "in_area", "area": "loft"}
    quest = {
        "main": {
            "title": "Dag",
            "chapters": [
                {
                    "id": "c1",
                    "title": "First",
                    "stages": [
                        {**_stage("a", []), "done": {"type": "talked_to", "npc": "sage"}},
                        {**_stage("b", []), "done": away},
                        {**_stage("j1", ["a", "b"])},
                    ],
                },
                {
                    "id": "c2",
                    "title": "Second",
                    "stages": [
                        {**_stage("x", ["j1"]), "done": away},
                        {**_stage("y", ["j1"]), "done": away},
                        _stage("j2", ["x", "y"]),
                    ],
                },
            ],
        }
    }
    engine = make_engine(quest)
    text = told(engine)
    assert text.count("=== First ===") == 1 and "New objective: A." in text and "New objective: B." in text
    engine.state.agents["player"].area = "loft"
    act(engine, "wait")  # b
    engine.state.agents["player"].area = "yard"
    _, text = act(engine, "talk to sage")  # a, then j1 at once: the second chapter opens both its leaves
    assert text.count("=== Second ===") == 1 and "New objective: X." in text and "New objective: Y." in text


def test_plan_of_a_quest_built_in_code():
    main = load(MainQuest, _dag(_stage("a", []), _stage("b", ["a"]))["main"])
    assert [s.id for s in plan(main).stages] == ["a", "b"]
    cyclic = load(MainQuest, _dag(_stage("a", ["b"]), _stage("b", ["a"]), _stage("c", []))["main"])
    with pytest.raises(ValueError, match=r"^stages a, b can never open: their requires form a cycle$"):
        plan(cyclic)
