"""Absurd numbers, sizes and nestings in a game folder: a GameError naming file and field, at load time.

Each case edits a copy of the shipped Mossfall game the way a careless designer or a generator might,
and must be refused by ``load_game`` before any episode starts: never a MemoryError, a hang, a
ZeroDivisionError or a RecursionError later, in play. (Every case loads in milliseconds; the bounds
make the work proportional to the file, which is at most 4 MiB.)
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from odyssey_env.game import GAMES_DIR, GameError, load_game

Edit = Callable[[dict, dict], None]


def _area(world: dict) -> dict:
    return world["places"][0]["areas"][0]


def _nest(levels: int) -> dict:
    cond: dict = {"type": "talked_to", "npc": "old_wick"}
    for _ in range(levels):
        cond = {"type": "all", "conditions": [cond]}
    return cond


def _set_done(quest: dict, cond: dict) -> None:
    quest["main"]["chapters"][0]["stages"][0]["done"] = cond


CASES: list[tuple[str, Edit, str, str, str]] = [
    # (id, edit(world, quest), file, field, words of the message)
    (
        "instanced_count",
        lambda w, q: _area(w)["objects"].update(small_pouch=10**7),
        "world.json",
        "places[0].areas[0].objects.small_pouch",
        "out of range",
    ),
    (
        "stack_count",
        lambda w, q: _area(w)["objects"].update(coin=10**8),
        "world.json",
        "places[0].areas[0].objects.coin",
        "out of range",
    ),
    (
        "scatter_floats",
        lambda w, q: w["placement"].update(objects_per_area=[1e9, 1e9]),
        "world.json",
        "placement.objects_per_area[0]",
        "expected an integer",
    ),
    (
        "scatter_ints",
        lambda w, q: w["placement"].update(objects_per_area=[10**6, 10**6]),
        "world.json",
        "placement.objects_per_area",
        "max <= 100",
    ),
    (
        "enemy_bounds_reversed",
        lambda w, q: w["placement"].update(style="agentodyssey", enemies_per_level=[[0, 1], [3, 2]]),
        "world.json",
        "placement.enemies_per_level[1]",
        "max <= 100",
    ),
    (
        "huge_npc_list",
        lambda w, q: _area(w).update(npcs=["odette_marl"] * 50_000),
        "world.json",
        "places[0].areas[0].npcs",
        "at most 2,000",
    ),
    (
        "xp_per_level_zero",
        lambda w, q: w["agent"].update(xp_per_level=0),
        "world.json",
        "agent.xp_per_level",
        "out of range",
    ),
    (
        "minutes_per_step_huge",
        lambda w, q: w["game"].update(minutes_per_step=10**12),
        "world.json",
        "game.minutes_per_step",
        "out of range",
    ),
    (
        "minutes_per_step_float",
        lambda w, q: w["game"].update(minutes_per_step=1e12),
        "world.json",
        "game.minutes_per_step",
        "expected an integer",
    ),
    (
        "minutes_per_step_week",
        lambda w, q: w["game"].update(minutes_per_step=10_080),
        "world.json",
        "game.minutes_per_step",
        "between 1 and 1440",
    ),
    (
        "level_decay_negative",
        lambda w, q: w["placement"].update(level_decay=-1),
        "world.json",
        "placement.level_decay",
        "between 0 and 1",
    ),
    (
        "nan_spawn_weight",
        lambda w, q: w["objects"][0].update(spawn_weight=float("nan")),
        "world.json",
        "objects[0].spawn_weight",
        "finite",
    ),
    (
        "infinite_attack",
        lambda w, q: w["npcs"][0].update(attack=float("inf")),
        "world.json",
        "npcs[0].attack",
        "expected an integer",
    ),
    (
        "negative_spawn_weight",
        lambda w, q: w["npcs"][0].update(spawn_weight=-3.0),
        "world.json",
        "npcs[0].spawn_weight",
        "out of range",
    ),
    ("hands_many", lambda w, q: w["agent"].update(hands=10**6), "world.json", "agent.hands", "out of range"),
    ("start_time", lambda w, q: w["game"].update(start_time="99:99"), "world.json", "game.start_time", "23:59"),
    ("long_name", lambda w, q: w["objects"][0].update(name="x" * 200), "world.json", "objects[0].name", "at most 64"),
    (
        "long_text",
        lambda w, q: w["objects"][0].update(description="x" * 100_000),
        "world.json",
        "objects[0].description",
        "at most 20,000",
    ),
    ("level_huge", lambda w, q: _area(w).update(level=10**6), "world.json", "places[0].areas[0].level", "out of range"),
    (
        "period_zero",
        lambda w, q: w["game"].update(params={"respawn": {"enemy_period": 0}}),
        "world.json",
        "game",
        "enemy_period: 0 must be a whole number of at least 1",
    ),
    (
        "chance_five",
        lambda w, q: w["game"].update(params={"ambush": {"chance_by_level": [5.0]}}),
        "world.json",
        "game",
        "probabilities between 0 and 1",
    ),
    (
        "param_nan",
        lambda w, q: w["game"].update(params={"ambush": {"strength": float("nan")}}),
        "world.json",
        "game.params.ambush.strength",
        "finite",
    ),
    (
        "quest_nesting_json",
        lambda w, q: _set_done(q, "DEEP"),  # replaced by 100,000 levels of JSON text
        "quest.json",
        "",
        "nested deeper",
    ),
    (
        "quest_nesting_schema",
        lambda w, q: _set_done(q, _nest(200)),
        "quest.json",
        "main.chapters[0].stages[0].done",
        "nested deeper than 64",
    ),
    (
        "condition_count",
        lambda w, q: _set_done(q, {"type": "has_item_count", "object": "coin", "count": 10**7}),
        "quest.json",
        "main.chapters[0].stages[0].done.count",
        "between 1 and 1000000",
    ),
    (
        "collect_amount",
        lambda w, q: q["side_quests"].update(collect_amount=[5, 1]),
        "quest.json",
        "side_quests.collect_amount",
        "min <= max",
    ),
    (
        "side_reward",
        lambda w, q: q["side_quests"].update(reward=[1, 10**8]),
        "quest.json",
        "side_quests.reward",
        "min <= max <= 1000000",
    ),
    (
        "expansions",
        lambda w, q: q["expansion"].update(max_expansions=10**6),
        "quest.json",
        "expansion.max_expansions",
        "out of range",
    ),
    (
        "expansion_areas",
        lambda w, q: q["expansion"].update(areas_per_place=[1, 10**4]),
        "quest.json",
        "expansion.areas_per_place",
        "max <= 20",
    ),
    (
        "tutorial_steps",
        lambda w, q: q["tutorial"].update(max_steps=0),
        "quest.json",
        "tutorial.max_steps",
        "out of range",
    ),
]


def _copy_base(tmp_path: Path) -> Path:
    folder = tmp_path / "base_copy"
    shutil.copytree(GAMES_DIR / "mossfall", folder, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return folder


@pytest.mark.parametrize(("edit", "file", "field", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_absurd_game_data_is_a_game_error_naming_the_field(tmp_path, edit, file, field, words):
    folder = _copy_base(tmp_path)
    world = json.loads((folder / "world.json").read_text())
    quest = json.loads((folder / "quest.json").read_text())
    edit(world, quest)
    (folder / "world.json").write_text(json.dumps(world))
    deep = '{"type": "all", "conditions": [' * 100_000 + '{"type": "talked_to", "npc": "old_wick"}' + "]}" * 100_000
    (folder / "quest.json").write_text(json.dumps(quest).replace('"DEEP"', deep))
    with pytest.raises(GameError) as caught:
        load_game(folder, cache=False)
    # a nesting's path is the path down to where it became too deep: it starts with the field
    matching = [p for p in caught.value.problems if p.file == file and p.path.startswith(field) and words in p.message]
    assert matching, [str(p) for p in caught.value.problems]


def test_a_huge_file_is_refused_before_it_is_read(tmp_path):
    folder = _copy_base(tmp_path)
    with open(folder / "world.json", "a") as f:
        f.write(" " * (5 * 2**20))
    with pytest.raises(GameError, match="a game file may have at most"):
        load_game(folder, cache=False)


def test_the_untouched_copy_loads(tmp_path):
    assert load_game(_copy_base(tmp_path), cache=False).name == "mossfall"
