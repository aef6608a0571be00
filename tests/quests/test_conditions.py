"""The quest-condition vocabulary, one type at a time: each shown true and shown false.

Every condition is judged by :func:`holds` right after a real step, so event conditions see the
events the verbs actually emitted. :data:`CASES` is a table of (setup, condition, expected); a test
checks that it shows every type of :data:`VOCABULARY` both ways, so a new type cannot land untested.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.game import Game
from odyssey_env.quests.conditions import (
    VOCABULARY,
    check_condition,
    describe_vocabulary,
    holds,
    owned,
    owned_counts,
    triggers,
)
from odyssey_env.quests.spec import Condition
from odyssey_env.schema import load
from odyssey_env.world import add, make_objects
from odyssey_env.worldgen import spawn_npc

from .conftest import QUEST, WORLD, write_game

PLAYER, RIVAL = "player", "rival"


def _world() -> dict[str, Any]:
    """The quest tests' tiny world, plus a bag, boots, a second writable, a crow and the eat verb."""
    world = copy.deepcopy(WORLD)
    world["game"]["verbs"] = ["eat"]
    world["objects"] += [
        {"name": "bag", "category": "container", "description": "A bag.", "capacity": 6, "value": 2},
        {"name": "boots", "category": "armor", "slot": "feet", "description": "Boots.", "defense": 1, "value": 2},
        {"name": "card", "category": "writable", "description": "A card.", "max_text": 20, "size": 0},
    ]
    world["npcs"].append(
        {"name": "crow", "kind": "enemy", "description": "A crow.", "hp": 1, "attack": 1, "spawn_weight": 0}
    )
    return world


@pytest.fixture(scope="module")
def game(tmp_path_factory) -> Game:
    return load_game(write_game(tmp_path_factory.mktemp("conditions"), _world(), QUEST, name="cond"), cache=False)


class World:
    """One engine with a player and a rival standing in the yard; set things up, act, ask conditions."""

    def __init__(self, game: Game):
        self.engine = Engine(game, 0, agents=(PLAYER, RIVAL))

    @property
    def state(self):
        return self.engine.state

    def agent(self, who: str = PLAYER):
        return self.state.agents[who]

    def hold(self, type_name: str, n: int = 1, who: str = PLAYER) -> list[str]:
        pieces = make_objects(self.engine.game, self.state, type_name, n)
        for handle, k in pieces:
            add(self.agent(who).hands, handle, k)
        return [h for h, _ in pieces]

    def wear(self, type_name: str) -> str:
        (handle,) = [h for h, _ in make_objects(self.engine.game, self.state, type_name, 1)]
        self.agent().equipment[self.engine.game.objects[type_name].equip_slot] = handle
        return handle

    def stash(self, container: str, type_name: str, n: int = 1) -> None:
        for handle, k in make_objects(self.engine.game, self.state, type_name, n):
            add(self.state.instances[container].contents, handle, k)

    def put(self, type_name: str, n: int = 1, area: str = "yard") -> list[str]:
        pieces = make_objects(self.engine.game, self.state, type_name, n)
        for handle, k in pieces:
            add(self.state.areas[area].objects, handle, k)
        return [h for h, _ in pieces]

    def do(self, command: str, rival: str | None = None) -> None:
        actions = {PLAYER: command} if rival is None else {PLAYER: command, RIVAL: rival}
        out = self.engine.step(actions)
        for who, outcome in out.items():
            assert not outcome.invalid and not outcome.failed, (who, self.state.feedback[who])

    def kill(self, npc_type: str) -> None:
        npc = spawn_npc(self.engine.game, self.state, self.engine.game.npcs[npc_type], self.agent().area)
        for _ in range(10):
            self.do(f"attack {npc.handle}")
            if npc.handle not in self.state.npcs:
                return
        raise AssertionError(f"{npc.handle} would not die")

    def holds(self, cond: dict[str, Any], who: str = PLAYER) -> bool:
        result = holds(self.engine, self.agent(who), condition(cond))
        assert isinstance(result, bool), result
        return result


def condition(data: dict[str, Any]) -> Condition:
    return load(Condition, data, file="test")


# ---------------------------------------------------------------------------------------- setups
def nothing(w: World) -> None:
    pass


def kill_rat(w: World) -> None:
    w.kill("rat")


def kill_rat_then_wait(w: World) -> None:
    w.kill("rat")
    w.do("wait")


def kill_rat_and_crow(w: World) -> None:
    w.kill("rat")
    w.kill("crow")


def craft_doll(w: World) -> None:
    w.hold("hay")
    w.hold("stick")
    w.do("craft 1 doll")


def buy_apple(w: World) -> None:
    w.hold("coin", 5)
    w.do("buy 1 apple trader")


def sell_apple(w: World) -> None:
    w.hold("apple")
    w.do("sell 1 apple trader")


def enter_barn(w: World) -> None:
    w.do("enter barn")


def enter_barn_then_wait(w: World) -> None:
    w.do("enter barn")
    w.do("wait")


def talk_to_sage(w: World) -> None:
    w.do("talk to sage")


def write_on_note(w: World) -> None:
    w.do("pick up pen")
    w.do("pick up note_0")
    w.do('write "Meet  at DAWN" note_0')


def write_then_drop_note(w: World) -> None:
    write_on_note(w)
    w.do("drop note_0")


def write_then_store_note(w: World) -> None:
    write_on_note(w)
    w.do("drop pen")
    bag = w.wear("bag")
    w.do(f"store 1 note_0 {bag}")


def eat_apple(w: World) -> None:
    w.hold("apple")
    w.do("eat apple")


def drop_stick(w: World) -> None:
    w.hold("stick")
    w.do("drop stick")


def carry_everywhere(w: World) -> None:
    """Sticks in a hand and in the pack, hay in a hand and in the pack, boots worn: stick 3, hay 2, boots 1."""
    w.hold("stick")
    w.hold("hay")
    bag = w.wear("bag")
    w.stash(bag, "stick", 2)
    w.stash(bag, "hay")
    w.wear("boots")


def wear_boots_and_hold_boots(w: World) -> None:
    w.wear("boots")
    w.hold("boots")


def hold_boots(w: World) -> None:
    w.hold("boots")


def hold_a_stick(w: World) -> None:
    w.hold("stick")


def visit_barn_and_loft(w: World) -> None:
    w.do("enter barn")
    w.do("enter loft")


def level_two(w: World) -> None:
    w.agent().level = 2


def finish_the_first_stage(w: World) -> None:
    w.do("talk to sage")
    w.do("wait")


# ---------------------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class Case:
    setup: Callable[[World], None]
    cond: dict[str, Any]
    expected: bool

    @property
    def id(self) -> str:
        fields = ",".join(f"{k}={v}" for k, v in self.cond.items() if k not in ("type", "conditions"))
        return f"{self.cond['type']}({fields})-{self.setup.__name__}-{self.expected}"


STICK_OR_SAGE = {
    "type": "any_of",
    "conditions": [{"type": "has_item_count", "object": "stick"}, {"type": "talked_to", "npc": "sage"}],
}


def _counts_of(*wanted: tuple[str, int]) -> dict[str, Any]:
    """An any_of of has_item_count parts, (object, count) each."""
    return {
        "type": "any_of",
        "conditions": [{"type": "has_item_count", "object": kind, "count": n} for kind, n in wanted],
    }


CASES = [
    # ---- events
    Case(kill_rat, {"type": "npc_defeated", "npc": "rat"}, True),
    Case(kill_rat, {"type": "npc_defeated", "npc": "crow"}, False),
    Case(kill_rat, {"type": "npc_defeated", "npcs": ["crow", "rat"]}, True),
    Case(kill_rat, {"type": "npc_defeated", "npcs": ["crow", "mentor"]}, False),
    Case(kill_rat, {"type": "npc_defeated"}, True),
    Case(kill_rat_then_wait, {"type": "npc_defeated"}, False),
    Case(craft_doll, {"type": "object_crafted", "object": "doll"}, True),
    Case(craft_doll, {"type": "object_crafted", "object": "stick"}, False),
    Case(buy_apple, {"type": "object_bought", "object": "apple"}, True),
    Case(buy_apple, {"type": "object_bought", "object": "coin"}, False),
    Case(sell_apple, {"type": "object_sold", "object": "apple"}, True),
    Case(sell_apple, {"type": "object_sold", "object": "coin"}, False),
    Case(enter_barn, {"type": "area_entered", "area": "barn"}, True),
    Case(enter_barn, {"type": "area_entered", "area": "yard"}, False),
    Case(enter_barn_then_wait, {"type": "area_entered", "area": "barn"}, False),
    Case(talk_to_sage, {"type": "talked_to", "npc": "sage"}, True),
    Case(talk_to_sage, {"type": "talked_to", "npc": "trader"}, False),
    Case(write_on_note, {"type": "text_written"}, True),
    Case(write_on_note, {"type": "text_written", "text": "meet at dawn"}, True),  # case and spacing do not matter
    Case(write_on_note, {"type": "text_written", "text": "meet at dusk"}, False),
    Case(write_on_note, {"type": "text_written", "text": "meet at dawn", "object": "note"}, True),
    Case(write_on_note, {"type": "text_written", "text": "meet at dawn", "object": "card"}, False),
    Case(write_on_note, {"type": "text_written", "text": "meet at dusk", "object": "note"}, False),
    Case(write_then_drop_note, {"type": "text_written"}, False),
    Case(eat_apple, {"type": "object_eaten", "object": "apple"}, True),
    Case(eat_apple, {"type": "object_eaten", "object": "doll"}, False),
    Case(drop_stick, {"type": "object_dropped", "object": "stick"}, True),
    Case(drop_stick, {"type": "object_dropped", "object": "stick", "area": "yard"}, True),
    Case(drop_stick, {"type": "object_dropped", "object": "stick", "area": "barn"}, False),
    Case(drop_stick, {"type": "object_dropped", "object": "hay", "area": "yard"}, False),
    # ---- states
    Case(nothing, {"type": "in_area", "area": "yard"}, True),
    Case(nothing, {"type": "in_area", "area": "barn"}, False),
    Case(carry_everywhere, {"type": "has_item_count", "object": "stick", "count": 3}, True),
    Case(carry_everywhere, {"type": "has_item_count", "object": "stick", "count": 4}, False),
    Case(carry_everywhere, {"type": "has_item_count", "object": "hay", "count": 2}, True),
    Case(carry_everywhere, {"type": "has_item_count", "object": "hay", "count": 3}, False),
    Case(carry_everywhere, {"type": "has_item_count", "object": "boots"}, True),
    Case(carry_everywhere, {"type": "has_item_count", "object": "boots", "count": 2}, False),
    Case(carry_everywhere, {"type": "has_item_count", "object": "bag"}, True),
    Case(wear_boots_and_hold_boots, {"type": "has_item_count", "object": "boots", "count": 2}, True),
    Case(nothing, {"type": "has_item_count", "object": "stick"}, False),
    # an any_of of has_item_count alone is counted in one pass (owned_counts): the same answers
    Case(carry_everywhere, _counts_of(("stick", 4), ("hay", 2)), True),
    Case(carry_everywhere, _counts_of(("stick", 4), ("hay", 3), ("boots", 2), ("bag", 2)), False),
    Case(carry_everywhere, _counts_of(("doll", 1), ("bag", 1)), True),
    Case(wear_boots_and_hold_boots, _counts_of(("stick", 1), ("boots", 2)), True),
    Case(nothing, _counts_of(("stick", 1), ("hay", 1)), False),
    Case(carry_everywhere, _counts_of(("hay", 3), ("stick", 5), ("hay", 2)), True),  # the fewest of a type
    Case(carry_everywhere, _counts_of(("hay", 2), ("stick", 5), ("hay", 3)), True),
    Case(carry_everywhere, {"type": "equipped_any_of", "objects": ["doll", "boots"]}, True),
    Case(carry_everywhere, {"type": "equipped_any_of", "objects": ["doll", "stick"]}, False),
    Case(hold_boots, {"type": "equipped_any_of", "objects": ["boots"]}, False),
    Case(hold_a_stick, {"type": "holds_category", "category": "material"}, True),
    Case(hold_a_stick, {"type": "holds_category", "category": "tool"}, False),
    Case(carry_everywhere, {"type": "holds_category", "category": "armor"}, False),  # worn is not held
    Case(visit_barn_and_loft, {"type": "visited_k_of", "areas": ["barn", "loft"], "count": 2}, True),
    Case(enter_barn, {"type": "visited_k_of", "areas": ["barn", "loft"], "count": 2}, False),
    Case(enter_barn, {"type": "visited_k_of", "areas": ["barn", "loft"]}, True),
    Case(visit_barn_and_loft, {"type": "visited_k_of", "count": 3}, True),  # no areas: every world area
    Case(enter_barn, {"type": "visited_k_of", "count": 3}, False),
    Case(kill_rat_and_crow, {"type": "defeated_n", "count": 2}, True),
    Case(kill_rat_and_crow, {"type": "defeated_n", "count": 3}, False),
    Case(kill_rat_and_crow, {"type": "defeated_n", "npc": "rat"}, True),
    Case(kill_rat_and_crow, {"type": "defeated_n", "npc": "rat", "count": 2}, False),
    Case(kill_rat_and_crow, {"type": "defeated_n", "npc": "mentor"}, False),
    Case(nothing, {"type": "defeated_n"}, False),
    Case(write_then_drop_note, {"type": "text_equals_in", "text": "MEET AT DAWN", "area": "yard"}, True),
    Case(
        write_then_drop_note, {"type": "text_equals_in", "text": "meet at dawn", "area": "yard", "object": "note"}, True
    ),
    Case(
        write_then_drop_note,
        {"type": "text_equals_in", "text": "meet at dawn", "area": "yard", "object": "card"},
        False,
    ),
    Case(write_then_drop_note, {"type": "text_equals_in", "text": "meet at noon", "area": "yard"}, False),
    Case(write_then_drop_note, {"type": "text_equals_in", "text": "meet at dawn", "area": "barn"}, False),
    Case(write_then_drop_note, {"type": "text_equals_in", "text": "meet at dawn", "area": "moon"}, False),
    Case(write_then_drop_note, {"type": "text_equals_in", "text": "meet at dawn"}, False),  # not carried now
    Case(write_on_note, {"type": "text_equals_in", "text": "meet at dawn"}, True),  # in my hand
    Case(write_then_store_note, {"type": "text_equals_in", "text": "meet at dawn"}, True),  # in my pack
    Case(write_then_store_note, {"type": "text_equals_in", "text": "meet at dawn", "area": "yard"}, False),
    Case(nothing, {"type": "object_in_area", "object": "stick", "area": "yard", "count": 3}, True),
    Case(nothing, {"type": "object_in_area", "object": "stick", "area": "yard", "count": 4}, False),
    Case(nothing, {"type": "object_in_area", "object": "note", "area": "yard"}, True),  # an instance, by type
    Case(nothing, {"type": "object_in_area", "object": "stick", "area": "barn"}, False),
    Case(nothing, {"type": "object_in_area", "object": "stick", "area": "moon"}, False),
    Case(nothing, {"type": "level_at_least", "count": 1}, True),
    Case(nothing, {"type": "level_at_least", "count": 2}, False),
    Case(level_two, {"type": "level_at_least", "count": 2}, True),
    Case(level_two, {"type": "level_at_least", "count": 3}, False),
    Case(nothing, {"type": "stage_completed", "stage": "talk"}, False),
    Case(finish_the_first_stage, {"type": "stage_completed", "stage": "talk"}, True),
    Case(finish_the_first_stage, {"type": "stage_completed", "stage": "barn"}, False),
    # ---- combinators, nested
    Case(hold_a_stick, STICK_OR_SAGE, True),
    Case(talk_to_sage, STICK_OR_SAGE, True),
    Case(nothing, STICK_OR_SAGE, False),
    Case(hold_a_stick, {"type": "all_of", "conditions": [{"type": "in_area", "area": "yard"}, STICK_OR_SAGE]}, True),
    Case(hold_a_stick, {"type": "all_of", "conditions": [{"type": "in_area", "area": "barn"}, STICK_OR_SAGE]}, False),
    Case(nothing, {"type": "all_of", "conditions": [{"type": "in_area", "area": "yard"}, STICK_OR_SAGE]}, False),
    Case(
        enter_barn,
        {
            "type": "all_of",
            "conditions": [{"type": "area_entered", "area": "barn"}, {"type": "in_area", "area": "barn"}],
        },
        True,
    ),
    Case(
        enter_barn,
        {
            "type": "all_of",
            "conditions": [{"type": "area_entered", "area": "barn"}, {"type": "talked_to", "npc": "sage"}],
        },
        False,
    ),
    Case(
        talk_to_sage,
        {
            "type": "any_of",
            "conditions": [
                {
                    "type": "all_of",
                    "conditions": [{"type": "in_area", "area": "barn"}, {"type": "talked_to", "npc": "sage"}],
                },
                {
                    "type": "all_of",
                    "conditions": [{"type": "in_area", "area": "yard"}, {"type": "talked_to", "npc": "sage"}],
                },
            ],
        },
        True,
    ),
    Case(
        talk_to_sage,
        {
            "type": "any_of",
            "conditions": [
                {
                    "type": "all_of",
                    "conditions": [{"type": "in_area", "area": "barn"}, {"type": "talked_to", "npc": "sage"}],
                },
                {
                    "type": "all_of",
                    "conditions": [{"type": "in_area", "area": "loft"}, {"type": "talked_to", "npc": "sage"}],
                },
            ],
        },
        False,
    ),
    Case(
        enter_barn,
        {"type": "any_of", "conditions": [{"type": "talked_to", "npc": "sage"}, {"type": "npc_defeated"}]},
        False,
    ),
    # ---- predicates (the engine's own ``did``)
    Case(drop_stick, {"type": "predicate", "name": "did", "args": {"kind": "object_dropped", "object": "stick"}}, True),
    Case(drop_stick, {"type": "predicate", "name": "did", "args": {"kind": "object_dropped", "object": "hay"}}, False),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_condition(game, case):
    w = World(game)
    case.setup(w)
    assert w.holds(case.cond) is case.expected


def test_every_condition_type_is_shown_true_and_false():
    shown: dict[str, set[bool]] = {}
    for case in CASES:
        shown.setdefault(case.cond["type"], set()).add(case.expected)
    missing = {name for name in VOCABULARY if shown.get(name) != {True, False}}
    assert not missing, f"condition types not shown both true and false: {sorted(missing)}"
    nested = [c for c in CASES if any(s["type"] in ("any_of", "all_of") for s in c.cond.get("conditions", ()))]
    assert {c.expected for c in nested} == {True, False}


@pytest.mark.parametrize("setup", [nothing, carry_everywhere, wear_boots_and_hold_boots, hold_boots])
def test_owned_counts_counts_every_type_as_owned_does(game, setup):
    w = World(game)
    setup(w)
    counts = owned_counts(w.engine, w.agent())
    assert {kind: owned(w.engine, w.agent(), kind) for kind in game.objects} == {
        kind: counts.get(kind, 0) for kind in game.objects
    }
    assert set(counts) <= set(game.objects)


def test_an_any_of_of_item_counts_with_a_part_asking_for_none_holds(game):
    """Counts below 1 never pass the checks, but a condition made in code may have one: it holds, as
    ``has_item_count`` of 0 does."""
    w = World(game)
    assert w.holds(_counts_of(("stick", 1), ("hay", 0))) is w.holds(
        {"type": "has_item_count", "object": "hay", "count": 0}
    )
    assert w.holds(_counts_of(("stick", 1), ("hay", 0)))


def test_stage_completed_is_false_in_a_game_without_a_main_quest(tmp_path):
    w = World(load_game(write_game(tmp_path, _world(), {}, name="nomain"), cache=False))
    assert w.holds({"type": "stage_completed", "stage": "talk"}) is False


# ---------------------------------------------------------------------------------------- whose events
def test_events_count_only_for_the_agent_that_caused_them(game):
    w = World(game)
    w.do("wait", rival="talk to sage")
    assert w.holds({"type": "talked_to", "npc": "sage"}, who=RIVAL)
    assert not w.holds({"type": "talked_to", "npc": "sage"})


def test_events_of_another_kind_do_not_count(game):
    """The rival crafts a doll while the player drops one: 'object_crafted doll' holds for the rival only."""
    w = World(game)
    w.hold("doll")
    w.hold("hay", who=RIVAL)
    w.hold("stick", who=RIVAL)
    w.do("drop doll", rival="craft 1 doll")
    assert w.holds({"type": "object_crafted", "object": "doll"}, who=RIVAL)
    assert not w.holds({"type": "object_crafted", "object": "doll"})
    assert w.holds({"type": "object_dropped", "object": "doll"})
    assert not w.holds({"type": "object_dropped", "object": "doll"}, who=RIVAL)


def test_an_event_condition_holds_only_on_its_step(game):
    w = World(game)
    w.do("talk to sage")
    assert w.holds({"type": "talked_to", "npc": "sage"})
    w.do("wait")
    assert not w.holds({"type": "talked_to", "npc": "sage"})


# ---------------------------------------------------------------------------------------- triggers
@pytest.mark.parametrize(
    ("cond", "expected"),
    [
        ({"type": "talked_to", "npc": "sage"}, {"talked_to"}),
        ({"type": "in_area", "area": "barn"}, None),
        ({"type": "predicate", "name": "did", "args": {"kind": "object_dropped"}}, None),
        (
            {"type": "any_of", "conditions": [{"type": "talked_to", "npc": "sage"}, {"type": "npc_defeated"}]},
            {"talked_to", "npc_defeated"},
        ),
        (
            {
                "type": "any_of",
                "conditions": [{"type": "talked_to", "npc": "sage"}, {"type": "in_area", "area": "barn"}],
            },
            None,
        ),
        (
            {
                "type": "all_of",
                "conditions": [
                    {"type": "in_area", "area": "barn"},
                    {"type": "npc_defeated"},
                    {"type": "talked_to", "npc": "sage"},
                ],
            },
            {"npc_defeated"},
        ),
        (
            {
                "type": "all_of",
                "conditions": [{"type": "in_area", "area": "barn"}, {"type": "level_at_least", "count": 2}],
            },
            None,
        ),
    ],
)
def test_triggers_name_the_events_a_condition_needs(cond, expected):
    """``triggers`` lets quest rules skip conditions whose events did not happen: never one that could hold."""
    tree = condition(cond)
    result = triggers(tree)
    assert result == (frozenset(expected) if expected is not None else None)
    assert triggers(tree) == result  # asked again (quest rules ask every step)
    assert triggers(condition(cond)) == result  # an equal tree gets the same answer


# ---------------------------------------------------------------------------------------- checking
def _problems(game: Game, data: dict[str, Any], extra_areas: tuple[str, ...] = ()) -> list[str]:
    return [f"{p.path}: {p.message}" for p in check_condition(game, condition(data), "quest.json", "done", extra_areas)]


def test_every_shown_condition_passes_the_checks(game):
    """The table uses the vocabulary as quests must (but for one area that exists nowhere, on purpose)."""
    for case in CASES:
        if case.cond.get("area") != "moon":
            assert _problems(game, case.cond) == [], case.id


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"type": "fly_to"}, ["done.type: unknown condition type 'fly_to'; known: npc_defeated, "]),
        ({"type": "in_area"}, ["done.area: condition type 'in_area' needs 'area'"]),
        (
            {"type": "in_area", "area": "barn", "object": "hay"},
            ["done.object: not used by condition type 'in_area' (it takes area)"],
        ),
        (
            {"type": "in_area", "area": "barn", "count": 2},
            ["done.count: not used by condition type 'in_area' (it takes area)"],
        ),
        ({"type": "has_item_count", "object": "stick", "count": 0}, ["done.count: must lie between 1 and 1000000"]),
        ({"type": "level_at_least", "count": 0}, ["done.count: must lie between 1 and 1000000"]),
        ({"type": "has_item_count", "object": "gold"}, ["done: unknown object 'gold'"]),
        ({"type": "equipped_any_of", "objects": ["boots", "crown"]}, ["done: unknown object 'crown'"]),
        ({"type": "talked_to", "npc": "king"}, ["done: unknown NPC 'king'"]),
        ({"type": "npc_defeated", "npcs": ["rat", "dragon"]}, ["done: unknown NPC 'dragon'"]),
        ({"type": "in_area", "area": "moon"}, ["done: unknown area 'moon'"]),
        ({"type": "visited_k_of", "areas": ["barn", "moon"]}, ["done: unknown area 'moon'"]),
        ({"type": "holds_category", "category": "gem"}, ["done.category: unknown category 'gem'"]),
        (
            {"type": "predicate", "name": "nope"},
            ["done.name: no predicate 'nope' is registered by the game's rules.py (known: did)"],
        ),
        (
            {
                "type": "all_of",
                "conditions": [
                    {"type": "in_area", "area": "barn"},
                    {"type": "any_of", "conditions": [{"type": "talked_to", "npc": "king"}]},
                ],
            },
            ["done.conditions[1].conditions[0]: unknown NPC 'king'"],
        ),
        (
            {"type": "any_of", "conditions": [{"type": "in_area"}, {"type": "has_item_count", "object": "gold"}]},
            [
                "done.conditions[0].area: condition type 'in_area' needs 'area'",
                "done.conditions[1]: unknown object 'gold'",
            ],
        ),
    ],
)
def test_bad_conditions_are_named_by_path(game, data, expected):
    problems = _problems(game, data)
    assert len(problems) == len(expected), problems
    for got, want in zip(problems, expected, strict=True):
        assert got.startswith(want), (got, want)


def test_an_area_the_expansion_adds_is_known(game):
    assert _problems(game, {"type": "in_area", "area": "moon"}, extra_areas=("moon",)) == []


def test_a_required_field_left_empty_is_reported_once_per_field(game):
    assert _problems(game, {"type": "object_in_area"}) == [
        "done.object: condition type 'object_in_area' needs 'object'",
        "done.area: condition type 'object_in_area' needs 'area'",
    ]


def test_the_vocabulary_table_lists_every_type_with_its_fields():
    table = describe_vocabulary().splitlines()
    assert table[:2] == ["| type | family | fields | meaning |", "|---|---|---|---|"]
    assert len(table) == 2 + len(VOCABULARY)
    assert (
        "| `object_dropped` | event | object, [area] | The agent drops `object` (optionally in `area`) this step. |"
    ) in table
    assert "| `visited_k_of` | state | [areas], [count] |" in "\n".join(table)
