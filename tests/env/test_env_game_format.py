"""Game-folder validation: a broken game raises GameError naming the file, the field path and the problem."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from odyssey_env import GameError, load_game
from odyssey_env.engine import Engine

TINY_WORLD = json.loads((Path(__file__).parent / "data" / "tiny" / "world.json").read_text())


def _folder(
    tmp_path: Path, world=None, *, raw: str | None = None, rules: str | None = None, quest: str | None = None
) -> Path:
    folder = tmp_path / "game"
    folder.mkdir()
    (folder / "world.json").write_text(
        raw if raw is not None else json.dumps(world if world is not None else TINY_WORLD)
    )
    if rules is not None:
        (folder / "rules.py").write_text(rules)
    if quest is not None:
        (folder / "quest.json").write_text(quest)
    return folder


def _obj(world, name):
    return next(o for o in world["objects"] if o["name"] == name)


def _error(folder: Path) -> GameError:
    with pytest.raises(GameError) as info:
        load_game(folder, cache=False, trust=True)
    return info.value


def _mutated(mutate) -> dict:
    world = copy.deepcopy(TINY_WORLD)
    mutate(world)
    return world


def test_the_unmodified_copy_loads(tmp_path):
    game = load_game(_folder(tmp_path), cache=False)
    assert game.name == "tiny" and len(game.rules.actions) == 22


def test_bad_json(tmp_path):
    err = _error(_folder(tmp_path, raw='{"format": 1,\n  "game": oops}'))
    assert str(err).startswith("world.json: line 2 column 11: invalid JSON")


def test_bad_quest_json(tmp_path):
    err = _error(_folder(tmp_path, quest="[1, 2"))
    assert "quest.json: line 1" in str(err) and "invalid JSON" in str(err)


def _set(path: str, value):
    """A mutation that sets ``world[...]`` along a dotted path with [i] indexes (e.g. ``objects[0].value``)."""

    def mutate(world):
        keys = path.replace("[", ".").replace("]", "").split(".")
        target = world
        for k in keys[:-1]:
            target = target[int(k)] if k.isdigit() else target[k]
        last = keys[-1]
        target[int(last) if last.isdigit() else last] = value

    return mutate


CASES = [
    (
        "unknown field",
        _set("objects[11].capcity", 3),
        "world.json: objects[11].capcity: unknown field (did you mean 'capacity'?)",
    ),
    ("wrong type", _set("objects[1].value", "two"), "world.json: objects[1].value: expected an integer, got 'two'"),
    (
        "wrong type in nested list",
        _set("placement.objects_per_area", [0, "x"]),
        "world.json: placement.objects_per_area[1]: expected an integer, got 'x'",
    ),
    (
        "bad literal",
        _set("objects[1].category", "materail"),
        "world.json: objects[1].category: expected one of 'material'",
    ),
    ("missing field", lambda w: w.pop("spawn"), "world.json: spawn: required field is missing"),
    (
        "unknown ingredient",
        _set("objects[4].recipe.ingredients", {"iron_oar": 2}),
        "world.json: objects[4].recipe.ingredients.iron_oar: unknown object 'iron_oar' (did you mean 'iron_ore'?)",
    ),
    (
        "recipe amount that is no number",
        _set("objects[4].recipe.ingredients.iron_ore", "half"),
        "world.json: objects[4].recipe.ingredients.iron_ore: expected one of an integer, a number, got 'half'",
    ),
    (
        "fractional recipe amount finer than hundredths",
        _set("objects[4].recipe.ingredients.iron_ore", 0.333),
        "world.json: objects[4].recipe.ingredients.iron_ore: 0.333: a fractional amount must be positive and in "
        "hundredths (0.25, 0.5, 1.5)",
    ),
    (
        "negative fractional recipe amount",
        _set("objects[4].recipe.ingredients.iron_ore", -0.5),
        "world.json: objects[4].recipe.ingredients.iron_ore: -0.5: a fractional amount must be positive",
    ),
    (
        "whole recipe amount below one",
        _set("objects[4].recipe.ingredients.iron_ore", 0),
        "world.json: objects[4].recipe.ingredients.iron_ore: amounts must be at least 1",
    ),
    (
        "lockpick chance of a tool above one",
        _set("game.params", {"lockpick": {"chances": {"lockpick": 1.5}}}),
        "chances.lockpick: 1.5 must be a probability between 0 and 1",
    ),
    (
        "station that is not a station",
        _set("objects[4].recipe.stations", ["stick"]),
        "world.json: objects[4].recipe.stations: stick is not a station (category material)",
    ),
    (
        "unknown area in a connection",
        _set("graph.connections[0].b", "yrad"),
        "world.json: graph.connections[0].b: unknown area 'yrad' (did you mean 'yard'?)",
    ),
    (
        "self loop",
        _set("graph.connections[0].b", "camp"),
        "world.json: graph.connections[0]: a path must join two different areas",
    ),
    (
        "duplicate object name",
        lambda w: w["objects"].append(dict(w["objects"][1])),
        "world.json: objects[21].name: name 'stick' is already used by object at objects[1].name",
    ),
    (
        "NPC named like an area",
        _set("npcs[1].name", "yard"),
        "world.json: npcs[1].name: name 'yard' is already used by area at places[0].areas[1].name",
    ),
    (
        "instance-like name",
        _set("objects[1].name", "stick_2"),
        "world.json: objects[1].name: object name 'stick_2' must not end in _<number>",
    ),
    (
        "non-ASCII description",
        _set("places[0].areas[0].description", "A café by the road."),
        "world.json: places[0].areas[0].description: text may only use printable ASCII and newlines, found 'é'",
    ),
    (
        "non-ASCII dialogue",
        _set("npcs[0].dialogue", ["Bienvenue à vous"]),
        "world.json: npcs[0]: text may only use printable ASCII and newlines, found 'à'",
    ),
    (
        "unknown NPC in an area",
        _set("places[0].areas[0].npcs", ["mira", "bob"]),
        "world.json: places[0].areas[0].npcs[1]: unknown NPC 'bob'",
    ),
    (
        "unreachable area",
        lambda w: w["graph"]["connections"].pop(2),
        "world.json: graph.connections: areas not reachable from the spawn area: vault",
    ),
    (
        "key without the unlock use",
        _set("graph.connections[1].key", "stick"),
        "world.json: graph.connections[1].key: stick cannot open paths: give it the 'unlock' use",
    ),
    (
        "container without capacity",
        _set("objects[11].capacity", 0),
        "world.json: objects[11].capacity: a container needs a positive capacity",
    ),
    ("unknown optional verb", _set("game.verbs", ["fly"]), "world.json: game: unknown rule or verb name(s): fly"),
    (
        "parameters of an unknown rule",
        _set("game.params", {"weather": {"rain": 1}}),
        "world.json: game: parameters given for rule(s) that are not active: weather",
    ),
    (
        "bad parameter type",
        _set("game.params", {"sell": {"sell_ratio": "half"}}),
        "sell_ratio: expected a number, got 'half'",
    ),
]


@pytest.mark.parametrize(("mutate", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_broken_world_is_reported_precisely(tmp_path, mutate, message):
    err = _error(_folder(tmp_path, _mutated(mutate)))
    assert message in str(err), str(err)
    assert err.problems and all(p.file for p in err.problems)


def test_every_problem_is_reported_at_once(tmp_path):
    def two_problems(w):
        w["objects"][1]["value"] = "two"
        w["objects"][2]["size"] = "big"

    err = _error(_folder(tmp_path, _mutated(two_problems)))
    assert [p.path for p in err.problems] == ["objects[1].value", "objects[2].size"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("raise RuntimeError('boom')\n", "rules.py: <root>: cannot import: RuntimeError: boom"),
        ("def broken(:\n", "rules.py: <root>: cannot import: SyntaxError"),
        ("import no_such_module_here\n", "cannot import: ModuleNotFoundError"),
    ],
)
def test_bad_rules_py(tmp_path, source, message):
    assert message in str(_error(_folder(tmp_path, rules=source)))


def test_not_a_game_folder(tmp_path):
    err = _error(tmp_path)
    assert "not a shipped game" in str(err) and "nor a folder with a world.json" in str(err)


def test_rules_py_overrides_a_base_verb_and_adds_a_step_rule(tmp_path):
    rules = """
from odyssey_env.rules import ActionRule, StepRule, action_rule, step_rule


@action_rule
class LoudWait(ActionRule):
    verb = "wait"
    description = "Wait, loudly."

    def apply(self, turn):
        turn.say("I waited and whistled.")

    def candidates(self, turn):
        yield "wait"


@step_rule
class Bell(StepRule):
    name = "bell"
    after = ("experience",)

    def apply(self, engine):
        for agent_id in engine.state.agents:
            engine.say(agent_id, "A bell rings.")
"""
    game = load_game(_folder(tmp_path, rules=rules), cache=False, trust=True)
    engine = Engine(game, 0)
    engine.step({"player": "wait"})
    assert engine.state.feedback["player"][-2:] == ["I waited and whistled.", "A bell rings."]
    assert game.rules.step_rule("bell") is not None
