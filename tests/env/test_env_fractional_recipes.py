"""Recipes whose amounts are fractions of a unit (the paper's games: a tension wrench takes 0.5 iron_bar).

``craft n`` needs and uses the amount times n rounded up: one bar makes two wrenches in one ``craft 2``,
while ``craft 1`` uses the whole bar. The listing, the refusals, the salvage, the QA facts and the hints
all count the same way (``Recipe.uses`` / ``Recipe.batches``).
"""

from __future__ import annotations

import os
import random

import pytest

from odyssey_env.content import Recipe
from odyssey_env.listing import CHECK_ENV
from odyssey_eval.qa.world_knowledge import _ingredient_quantity, verify_world_knowledge

from .conftest import kind


def _fractional(world):
    world["objects"] += [
        {
            "name": "wire",
            "category": "tool",
            "description": "A bent wire of half a bar.",
            "uses": ["lockpick"],
            "recipe": {"ingredients": {"iron_bar": 0.5}, "stations": ["workbench"]},
        },
        {
            "name": "salve",
            "category": "food",
            "description": "Resin and a little stick.",
            "hp_restore": 3,
            "recipe": {"ingredients": {"resin": 1.5, "stick": 0.25}},
        },
    ]
    kind(world, "objects", "lockpick")["recipe"] = {"ingredients": {"iron_bar": 1, "stick": 0.5}}


@pytest.fixture
def f(variant):
    """The tiny game with fractional recipes; every listing is checked against a fresh one (the folder's
    conftest sets ODYSSEY_CHECK_VALID_ACTIONS=1, asserted here)."""
    assert os.environ.get(CHECK_ENV) == "1"
    return variant(_fractional)


def test_amounts_are_counted_in_whole_units_rounded_up():
    r = Recipe({"bar": 0.5, "herb": 1.5, "salt": 0.1, "stick": 2})
    assert [r.uses("bar", n) for n in range(5)] == [0, 1, 1, 2, 2]
    assert [r.uses("herb", n) for n in (1, 2, 3)] == [2, 3, 5]
    assert r.uses("salt", 3) == 1 and r.uses("salt", 10) == 1 and r.uses("salt", 11) == 2  # exact: no 0.30000000004
    assert r.uses("stick", 3) == 6
    assert [r.batches("bar", k) for k in range(4)] == [0, 2, 4, 6]
    assert [r.batches("herb", k) for k in range(5)] == [0, 0, 1, 2, 2]
    assert r.batches("salt", 7) == 70 and r.batches("stick", 5) == 2
    # the most batches as dear as n: one bar for craft 1 is one bar for craft 2
    assert Recipe({"bar": 0.5}).most_batches(1) == 2 and Recipe({"bar": 0.5, "stick": 1}).most_batches(1) == 1
    assert Recipe({"salt": 0.2}).most_batches(3) == 5 and Recipe({"stick": 2}).most_batches(3) == 3
    # taking apart gives back half rounded up, never more than the whole units of the amount
    assert Recipe({"bar": 0.5, "herb": 1.5, "stick": 3}).salvage() == {"herb": 1, "stick": 2}


def test_one_bar_makes_two_wrenches_in_one_craft(f):
    f.put("workbench")
    f.hold("iron_bar")
    assert f.engine.valid_actions("player")["craft"] == ["craft 1 wire", "craft 2 wire"]
    f.ok("craft 2 wire")
    assert not f.agent.hands and f.area.objects == {"workbench": 1, "wire": 2}
    assert f.emitted() == [("object_crafted", {"object": "wire", "amount": 2, "area": "camp", "first": True})]


def test_craft_one_uses_the_whole_unit(f):
    f.put("workbench")
    f.hold("iron_bar", 2)
    f.ok("craft 1 wire")
    assert f.agent.hands == {"iron_bar": 1} and f.area.objects["wire"] == 1  # the other half is not kept
    f.fails("craft 3 wire", "Cannot craft 3 wire: I need 2 iron_bar (I carry 1).")
    assert f.agent.hands == {"iron_bar": 1}


def test_units_are_taken_across_hands_and_pack(f):
    f.put("workbench")
    bag = f.wear("small_bag")
    f.hold("iron_bar")
    f.stash(bag, "iron_bar", 2)
    assert f.engine.valid_actions("player")["craft"] == ["craft 1 wire", "craft 6 wire"]
    f.ok("craft 3 wire")  # 1.5 bars, rounded up: 2, the hand's first
    assert not f.agent.hands and f.state.instances[bag].contents == {"iron_bar": 1}
    assert f.area.objects["wire"] == 3


def test_a_fraction_above_one_and_two_fractions_at_once(f):
    f.hold("resin", 3)
    f.hold("stick", 1)
    salves = [c for c in f.engine.valid_actions("player")["craft"] if c.endswith(" salve")]
    assert salves == ["craft 1 salve", "craft 2 salve"]  # 3 resin / 1.5 and 1 stick / 0.25: 2
    f.ok("craft 1 salve")
    assert f.agent.hands == {"resin": 1} and f.area.objects == {"salve": 1}  # 2 resin and 1 stick
    assert "craft 1 salve" not in f.engine.valid_actions("player").get("craft", [])  # 1 resin: short of 1.5
    f.fails("craft 1 salve", "Cannot craft 1 salve: I need 2 resin (I carry 1), 1 stick (I carry 0).")


def test_what_a_fraction_of_a_unit_makes_gives_nothing_back(f):
    f.put("wire")
    assert "disassemble" not in f.engine.valid_actions("player")  # nothing to recover: not offered
    f.fails("disassemble wire", "Cannot disassemble wire: it cannot be taken apart.")
    f.put("lockpick")  # 1 iron_bar and 0.5 stick: the bar's half, rounded up, and none of the stick
    f.ok("disassemble lockpick")
    assert f.area.objects == {"wire": 1, "iron_bar": 1}


def test_inspect_and_hints_read_the_fraction(f):
    f.hold("wire")
    f.ok("inspect wire")
    assert "Crafting 1 takes 0.5 iron_bar at a workbench." in f.feedback


def test_qa_asks_what_one_craft_uses_up(f):
    game, world = f.engine.game, f.engine.state
    questions = _ingredient_quantity(game, world, random.Random(0), 100, 4)
    by_pair = {(q.subject["object"], q.subject["ingredient"]): q for q in questions}
    wire = by_pair[("wire", "iron_bar")]
    assert wire.choices[wire.answer] == "1"  # craft 1 wire uses up the whole bar
    salve = by_pair[("salve", "resin")]
    assert salve.choices[salve.answer] == "2"
    for q in questions:
        verify_world_knowledge(q, game, world)
