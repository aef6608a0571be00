"""Main-quest machinery: stage order, prerequisites, rewards, guide, bosses, DAGs, validation."""

from __future__ import annotations

import copy
import json

import pytest

from odyssey_env import GameError, available_games, load_game
from odyssey_env.quests.main_quest import plan, progress

from .conftest import QUEST, act, write_game


def kill_rat(engine):
    for _ in range(20):
        if "rat_0" not in engine.state.npcs:
            return
        act(engine, "attack rat_0")
    raise AssertionError("the rat would not die")


def test_linear_quest_awards_every_stage_exactly_once_and_terminates(make_engine):
    engine = make_engine()
    total = 0
    out, _ = act(engine, "talk to sage")
    total += out.reward.quest
    out, _ = act(engine, "enter barn")
    total += out.reward.quest
    act(engine, "enter loft")
    for _ in range(20):
        out = engine.step({"player": "attack rat_0"})["player"]
        total += out.reward.quest
        if "rat_0" not in engine.state.npcs:
            break
    out, text = act(engine, "pick up relic")
    total += out.reward.quest
    assert total == 4 == len(plan(engine.game.quest.main).stages)
    assert engine.state.done
    assert "completed the main quest" in text
    assert progress(engine, "player") == {
        "title": "Tiny Quest",
        "completed": 4,
        "total": 4,
        "current": [],
        "done": True,
    }


def test_state_condition_met_early_counts_only_once_the_stage_opens(make_engine):
    engine = make_engine()
    out, _ = act(engine, "enter barn")
    assert out.reward.quest == 0
    act(engine, "enter yard")
    out, _ = act(engine, "talk to sage")
    assert out.reward.quest == 1  # "go to the barn" is not awarded while standing in the yard
    out, _ = act(engine, "enter barn")
    assert out.reward.quest == 1


def test_event_before_the_stage_opens_does_not_count(make_engine):
    quest = copy.deepcopy(QUEST)
    quest["main"]["chapters"][0]["stages"][1] = {
        "id": "doll",
        "title": "Make a doll",
        "hint": "Hay and a stick at the bench.",
        "done": {"type": "object_crafted", "object": "doll"},
    }
    engine = make_engine(quest)
    act(engine, "pick up stick", "enter barn", "pick up hay", "enter yard")
    out, _ = act(engine, "craft 1 doll")  # stage 1 (talk) still open: crafting now is too early
    assert out.reward.quest == 0
    act(engine, "talk to sage", "drop doll", "enter barn", "pick up hay", "enter yard", "pick up stick")
    out, _ = act(engine, "craft 1 doll")
    assert out.reward.quest == 1


def test_guide_answers_with_the_open_stage_hint(make_engine):
    engine = make_engine()
    act(engine, "talk to sage")
    _, text = act(engine, "talk to sage")
    assert 'sage says: "Go to the barn: East."' in text


def test_boss_appears_when_its_stage_opens(make_engine):
    engine = make_engine()
    assert not any(n.type == "rat" for n in engine.state.npcs.values())
    act(engine, "talk to sage", "enter barn")
    assert "rat_0" in engine.state.areas["loft"].npcs


def test_dag_quest_opens_parallel_stages(make_engine):
    quest = {
        "main": {
            "title": "Fork",
            "chapters": [
                {
                    "id": "c",
                    "title": "C",
                    "stages": [
                        {
                            "id": "a",
                            "title": "A",
                            "hint": "",
                            "done": {"type": "in_area", "area": "barn"},
                            "requires": [],
                        },
                        {
                            "id": "b",
                            "title": "B",
                            "hint": "",
                            "done": {"type": "talked_to", "npc": "sage"},
                            "requires": [],
                        },
                        {
                            "id": "end",
                            "title": "End",
                            "hint": "",
                            "done": {"type": "in_area", "area": "loft"},
                            "requires": ["a", "b"],
                        },
                    ],
                }
            ],
        }
    }
    engine = make_engine(quest)
    assert [s["id"] for s in progress(engine, "player")["current"]] == ["a", "b"]
    act(engine, "enter barn", "enter loft")  # "end" must wait for "b"
    assert progress(engine, "player")["completed"] == 1
    act(engine, "enter barn", "enter yard", "talk to sage", "enter barn")
    out, _ = act(engine, "enter loft")
    assert out.reward.quest == 1 and engine.state.done


def test_quest_save_load_continues_identically(make_engine):
    a = make_engine()
    act(a, "talk to sage", "enter barn")
    saved = json.loads(json.dumps(a.save_state()))
    b = make_engine()
    b.load_state({**saved, "game": b.game.name})
    for engine in (a, b):
        act(engine, "enter loft")
        kill_rat(engine)
        act(engine, "pick up relic")
    assert a.state.to_dict() == b.state.to_dict()
    assert progress(a, "player") == progress(b, "player")


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"type": "in_area"}, "needs 'area'"),
        ({"type": "in_area", "area": "moon"}, "unknown area 'moon'"),
        ({"type": "in_area", "area": "barn", "object": "hay"}, "not used by condition type"),
        ({"type": "in_area", "area": "barn", "args": {"n": 2}}, "not used by condition type"),
        ({"type": "in_area", "area": "barn", "count": 2}, "not used by condition type"),
        ({"type": "fly_to", "area": "barn"}, "unknown condition type 'fly_to'"),
        ({"type": "predicate", "name": "nope"}, "no predicate 'nope'"),
        ({"type": "any_of", "conditions": [{"type": "has_item_count", "object": "gold"}]}, "unknown object 'gold'"),
    ],
)
def test_bad_conditions_are_reported_with_file_and_field(tmp_path, bad, message):
    quest = copy.deepcopy(QUEST)
    quest["main"]["chapters"][0]["stages"][1]["done"] = bad
    folder = write_game(tmp_path, quest=quest, name="broken")
    with pytest.raises(GameError) as err:
        load_game(folder, cache=False)
    assert "quest.json: main.chapters[0].stages[1].done" in str(err.value)
    assert message in str(err.value)


def test_requires_cycle_is_rejected(tmp_path):
    quest = copy.deepcopy(QUEST)
    stages = quest["main"]["chapters"][0]["stages"]
    stages[0]["requires"] = ["barn"]
    stages[1]["requires"] = ["talk"]
    with pytest.raises(GameError, match="cycle"):
        load_game(write_game(tmp_path, quest=quest, name="cyclic"), cache=False)


def test_duplicate_stage_ids_are_rejected(tmp_path):
    quest = copy.deepcopy(QUEST)
    quest["main"]["chapters"][1]["stages"][0]["id"] = "talk"
    with pytest.raises(GameError, match="already used"):
        load_game(write_game(tmp_path, quest=quest, name="dupes"), cache=False)


@pytest.mark.parametrize("name", available_games())
def test_shipped_quests_count_one_reward_per_stage(name):
    game = load_game(name)
    if game.quest.main is None:
        pytest.skip("no main quest")
    stages = plan(game.quest.main).stages
    assert len({s.id for s in stages}) == len(stages) == game.summary()["stages"]


def test_chapters_with_the_same_title_keep_their_own_intros(make_engine):
    quest = copy.deepcopy(QUEST)
    for i, chapter in enumerate(quest["main"]["chapters"]):
        chapter["title"], chapter["intro"] = "Interlude", f"intro {i}"
    engine = make_engine(quest)
    act(engine, "talk to sage")
    _, text = act(engine, "enter barn")
    assert "=== Interlude === intro 1" in text


def test_a_dag_chapter_is_announced_once_when_several_stages_open_it(make_engine):
    """Several leaves open a DAG chapter together: its heading is said once, each objective once."""
    quest = {
        "main": {
            "title": "Fork",
            "chapters": [
                {
                    "id": "c",
                    "title": "C",
                    "intro": "first",
                    "stages": [
                        {
                            "id": "a",
                            "title": "A",
                            "hint": "",
                            "done": {"type": "talked_to", "npc": "sage"},
                            "requires": [],
                        }
                    ],
                },
                {
                    "id": "d",
                    "title": "D",
                    "intro": "second",
                    "stages": [
                        {
                            "id": "x",
                            "title": "X",
                            "hint": "",
                            "done": {"type": "in_area", "area": "barn"},
                            "requires": ["a"],
                        },
                        {
                            "id": "y",
                            "title": "Y",
                            "hint": "",
                            "done": {"type": "in_area", "area": "loft"},
                            "requires": ["a"],
                        },
                        {
                            "id": "z",
                            "title": "Z",
                            "hint": "",
                            "done": {"type": "in_area", "area": "yard"},
                            "requires": ["x", "y"],
                        },
                    ],
                },
                {
                    "id": "e",
                    "title": "E",
                    "intro": "third",
                    "stages": [
                        {
                            "id": "p",
                            "title": "P",
                            "hint": "",
                            "done": {"type": "talked_to", "npc": "sage"},
                            "requires": [],
                        },
                        {
                            "id": "q",
                            "title": "Q",
                            "hint": "",
                            "done": {"type": "talked_to", "npc": "trader"},
                            "requires": [],
                        },
                    ],
                },
            ],
        }
    }
    engine = make_engine(quest)
    first = "\n".join(engine.state.feedback["player"])
    assert first.count("=== C === first") == 1 and first.count("=== E === third") == 1
    assert first.count("New objective: P.") == 1 and first.count("New objective: Q.") == 1
    _, text = act(engine, "talk to sage")
    assert text.count("=== D === second") == 1
    assert text.count("New objective: X.") == 1 and text.count("New objective: Y.") == 1
    _, text = act(engine, "enter barn", "enter loft")
    assert "=== D ===" not in text  # z does not begin its chapter


def test_summary_counts_the_leaves_of_a_dag(tmp_path):
    from .conftest import write_game

    quest = {
        "main": {
            "title": "Fork",
            "chapters": [
                {
                    "id": "c",
                    "title": "C",
                    "stages": [
                        {
                            "id": "a",
                            "title": "A",
                            "hint": "",
                            "done": {"type": "in_area", "area": "barn"},
                            "requires": [],
                        },
                        {
                            "id": "b",
                            "title": "B",
                            "hint": "",
                            "done": {"type": "in_area", "area": "loft"},
                            "requires": [],
                        },
                        {
                            "id": "ab",
                            "title": "AB",
                            "hint": "",
                            "done": {"type": "in_area", "area": "yard"},
                            "requires": ["a", "b"],
                        },
                    ],
                },
                {
                    "id": "d",
                    "title": "D",
                    "stages": [
                        {
                            "id": "x",
                            "title": "X",
                            "hint": "",
                            "done": {"type": "in_area", "area": "barn"},
                            "requires": ["ab"],
                        },
                        {
                            "id": "y",
                            "title": "Y",
                            "hint": "",
                            "done": {"type": "in_area", "area": "loft"},
                            "requires": ["x"],
                        },
                    ],
                },
            ],
        }
    }
    summary = load_game(write_game(tmp_path, quest=quest, name="fork"), cache=False).summary()
    assert (summary["stages"], summary["leaves"], summary["dag"]) == (5, 3, True)
    linear = load_game(write_game(tmp_path, name="line"), cache=False).summary()
    assert (linear["stages"], linear["leaves"], linear["dag"]) == (4, 2, False)  # one leaf per chapter
