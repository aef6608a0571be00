"""Engine pieces the new games lean on: individually named objects, observation veils, verbs' plan hints,
and the leaves of a quest's stage graph as ``odyssey games`` counts them."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from odyssey_env import GameError, load_game
from odyssey_env.engine import Engine
from odyssey_env.quests.shape import leaf_stages, quest_summary
from odyssey_env.rules import ActionRule, StepRule
from odyssey_eval.catalog import format_details, format_table

TINY_WORLD = json.loads((Path(__file__).parent / "data" / "tiny" / "world.json").read_text())


def _folder(tmp_path: Path, change=None, rules: str | None = None, quest: dict | None = None) -> Path:
    world = copy.deepcopy(TINY_WORLD)
    if change is not None:
        change(world)
    folder = tmp_path / "game"
    folder.mkdir()
    (folder / "world.json").write_text(json.dumps(world))
    if rules is not None:
        (folder / "rules.py").write_text(rules)
    if quest is not None:
        (folder / "quest.json").write_text(json.dumps(quest))
    return folder


def _obj(world: dict, name: str) -> dict:
    return next(o for o in world["objects"] if o["name"] == name)


# ----------------------------------------------------------------------------- named objects
def _named_torch(world: dict) -> None:
    _obj(world, "torch")["named"] = True
    world["places"][0]["areas"][0]["objects"]["torch"] = 2


def test_a_named_object_gets_a_handle_per_unit_and_moves_like_one(tmp_path) -> None:
    game = load_game(_folder(tmp_path, _named_torch), cache=False)
    assert game.objects["torch"].instanced and not game.objects["stick"].instanced
    engine = Engine(game, 0)
    camp = engine.state.areas[engine.state.spawn]
    torches = [h for h in camp.objects if h.startswith("torch_")]
    assert len(torches) == 2 and all(
        camp.objects[h] == 1 and engine.state.instances[h].type == "torch" for h in torches
    )
    engine.step({"player": f"pick up {torches[0]}"})
    assert engine.state.agents["player"].hands == {torches[0]: 1}
    engine.step({"player": f"drop {torches[0]}"})
    assert camp.objects[torches[0]] == 1 and torches[0] in engine.state.instances


@pytest.mark.parametrize(
    ("name", "category"),
    [("coin", "currency"), ("workbench", "station"), ("apple", "food"), ("cap", "armor"), ("stick", "material")],
)
def test_only_some_categories_may_be_named(tmp_path, name: str, category: str) -> None:
    def change(world: dict) -> None:
        _obj(world, name)["named"] = True

    with pytest.raises(GameError) as info:
        load_game(_folder(tmp_path, change), cache=False)
    index = [o["name"] for o in TINY_WORLD["objects"]].index(name)
    assert (
        f"world.json: objects[{index}].named: a {category} cannot be named one by one (only key, misc, quest, "
        "tool, weapon can)" in str(info.value)
    )


def test_a_named_object_is_no_ingredient(tmp_path) -> None:
    def change(world: dict) -> None:
        _obj(world, "charm")["named"] = True
        _obj(world, "club")["recipe"] = {"ingredients": {"charm": 1}}

    with pytest.raises(GameError, match="charm is individually named; ingredients must be plain carried objects"):
        load_game(_folder(tmp_path, change), cache=False)


# ----------------------------------------------------------------------------- veils
VEIL_RULES = """
from odyssey_env.rules import StepRule, step_rule


@step_rule
class Fog(StepRule):
    name = "fog"
    after = ("quiet",)

    def apply(self, engine):
        pass

    def veil(self, engine, agent):
        return "the fog is too thick" if agent.area == engine.state.spawn else None


@step_rule
class Quiet(StepRule):
    name = "quiet"
    after = ("experience",)

    def apply(self, engine):
        pass
"""


def test_a_veil_hides_what_lies_and_stands_here(tmp_path) -> None:
    game = load_game(_folder(tmp_path, rules=VEIL_RULES), cache=False, trust=True)
    assert [r.name for r in game.rules.veils] == ["fog"]
    engine = Engine(game, 0)
    state = engine.state
    state.areas[state.spawn].objects["stick"] = 1
    obs = engine.observe("player")
    assert "I see no objects near me (the fog is too thick).\nI see no one nearby (the fog is too thick)." in obs
    assert "stick" not in obs
    state.agents["player"].area = "yard"
    assert "I see no objects near me (" not in engine.observe("player")


def test_without_veils_the_observation_lists_everything() -> None:
    game = load_game(Path(__file__).parent / "data" / "tiny")
    assert game.rules.veils == ()
    engine = Engine(game, 0)
    engine.state.areas[engine.state.spawn].objects["stick"] = 3
    assert "3 stick" in engine.observe("player")


def test_veils_reach_through_the_provenance_tracker(tmp_path) -> None:
    game = load_game(_folder(tmp_path, rules=VEIL_RULES), cache=False, trust=True)
    engine = Engine(game, 0, options={"provenance": True})
    assert [r.name for r in engine.rules.veils] == ["fog"]
    assert "(the fog is too thick)" in engine.observe("player")


# ----------------------------------------------------------------------------- plan hints
def test_rules_give_no_hints_unless_they_say_so() -> None:
    game = load_game(Path(__file__).parent / "data" / "tiny")
    engine = Engine(game, 0)
    agent = engine.state.agents["player"]
    for rule in game.rules.actions.values():
        assert rule.emits == () and rule.needs(engine, agent, {}) is None
    assert all(rule.veil(engine, agent) is None for rule in game.rules.steps)
    assert ActionRule.emits == () and StepRule.veil is not None


# ----------------------------------------------------------------------------- leaves
def _stage(sid: str, requires=None) -> dict:
    out = {"id": sid, "title": sid, "hint": "-", "done": {"type": "in_area", "area": "yard"}}
    if requires is not None:
        out["requires"] = requires
    return out


def test_a_linear_chapter_has_one_leaf_and_a_tree_has_its_tips(tmp_path) -> None:
    quest = {
        "main": {
            "title": "t",
            "chapters": [
                {"id": "one", "title": "1", "stages": [_stage("a"), _stage("b"), _stage("c")]},
                {
                    "id": "two",
                    "title": "2",
                    "stages": [_stage("d", ["c"]), _stage("e", ["c"]), _stage("f", ["d", "e"]), _stage("g", ["d"])],
                },
            ],
        }
    }
    game = load_game(_folder(tmp_path, quest=quest), cache=False)
    assert leaf_stages(game.quest.main) == ["a", "d", "e"]
    summary = quest_summary(game.quest)
    assert (summary["stages"], summary["leaves"], summary["dag"]) == (7, 3, True)
    row = game.summary() | {"step_rule_count": 1}
    assert format_table([row]).splitlines()[0].split()[8:10] == ["stages", "leaves"]  # after "env id"
    assert "(7 stages, 3 leaves, a DAG, in 2 chapters)" in format_details(row)


def test_shipped_linear_games_count_a_leaf_per_chapter() -> None:
    for name, chapters in (("mossfall", 2), ("tallowmere", 2), ("quiet_bell", 5)):
        summary = load_game(name).summary()
        assert summary["leaves"] == chapters and not summary["dag"], name
        assert "linear" in format_details(summary | {"step_rule_count": 0})
