"""The procedural author: complete, valid, solvable games from a seed, the same bytes for the same seed."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.quests.main_quest import plan
from odyssey_env.rules import OPTIONAL_VERBS
from odyssey_gen.procedural import ProceduralAuthor, draft
from odyssey_gen.procedural.items import raw_needs
from odyssey_gen.spec import OPTIONAL_DYNAMICS, RESPAWN_STYLES, GameSpec
from odyssey_gen.validate import validate

from .conftest import FAST, THEME, build, spec


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# A spread of sizes and shapes: each game must load, pass the execution test and be solved by the oracle.
CASES = [
    dict(seed=0),
    dict(seed=1, places=1, areas_per_place=4, max_level=2, objects=14, npcs=4, stages=3, locks=0),
    dict(seed=2, places=3, areas_per_place=3, max_level=5, objects=60, npcs=10, chapters=3, stages=5),
    dict(seed=3, places=2, max_level=3, chapters=2, stages=6, branching=2),
    dict(seed=4, places=4, areas_per_place=2, max_level=5, objects=80, npcs=12, chapters=4, stages=6, branching=3),
    dict(seed=5, verbs=OPTIONAL_VERBS, dynamics=OPTIONAL_DYNAMICS, objects=40),
    dict(
        seed=6,
        places=1,
        areas_per_place=8,
        max_level=5,
        objects=28,
        npcs=6,
        stages=9,
        branching=2,
        verbs=("eat", "throw"),
        dynamics=("noise", "quiet_enemies"),
    ),
    dict(seed=7, craft_depth=1, objects=20, tutorial=False, side_quests=False, expansion=False),
    dict(seed=8, craft_depth=5, objects=50, places=3, locks=2, action_rules=2, step_rules=3),
    dict(
        seed=9,
        theme="robot kingdom of broken gears and rusting kings",
        places=4,
        area_count=13,
        objects=96,
        npcs=7,
        max_level=5,
        chapters=4,
        stages=10,
        branching=3,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[f"seed{c['seed']}" for c in CASES])
def test_generated_games_load_run_and_are_solved(tmp_path, case):
    s = spec(**case)
    author = ProceduralAuthor(s)
    folder = write(tmp_path / s.name, author.files())
    game = load_game(folder, cache=False)
    summary = game.summary()
    assert summary["places"] == s.places and summary["areas"] == s.areas
    assert summary["area_levels"] == (f"1-{s.max_level}")
    # the invented mechanics bring their own tools, products and fixtures on top of the objects asked for
    assert summary["object_types"] == s.objects + len(author.draft.mechanics.objects)
    assert summary["npc_types"] == s.npcs + (2 if s.tutorial else 0)  # a tutorial brings its trainer and dummy
    assert summary["stages"] == s.chapters * s.stages and summary["chapters"] == s.chapters
    assert summary["side_quests"] == s.side_quests and summary["expansion"] == s.expansion
    assert bool(summary["tutorial_steps"]) == s.tutorial
    result = validate(folder, FAST)
    assert result.ok, [str(p) + "\n" + p.detail for p in result.problems]
    runs = result.stats["solvability"]["runs"]
    assert [r["stages"] for r in runs] == [s.chapters * s.stages] * FAST.seeds


def test_every_seed_of_a_sweep_loads(tmp_path):
    """Many seeds and shapes, checked for loading (the schema and every reference) in-process."""
    for seed in range(40):
        s = spec(
            seed=seed,
            places=1 + seed % 4,
            areas_per_place=1 + seed % 3,
            max_level=1 + seed % 3,
            chapters=1 + seed % 2,
            stages=4 + seed % 4,
            branching=1 + seed % 2,
            objects=16 + 3 * seed,
            npcs=4 + seed % 6,
            craft_depth=1 + seed % 4,
            action_rules=seed % 6,
            step_rules=seed % 11,
        )
        load_game(write(tmp_path / f"g{seed}", build(s)), cache=False)


def test_the_same_seed_gives_the_same_bytes_in_any_process():
    s = spec(seed=11, verbs=("eat",), branching=2, stages=6, action_rules=2, step_rules=2)  # rules.json too
    here = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in build(s).items()}
    assert "rules.json" in here
    code = (
        "import hashlib, json, sys; from odyssey_gen.spec import GameSpec; "
        "from odyssey_gen.procedural import ProceduralAuthor; "
        "s = GameSpec.from_dict(json.loads(sys.argv[1])); "
        "files = ProceduralAuthor(s).files(); "
        "print(json.dumps({n: hashlib.sha256(t.encode()).hexdigest() for n, t in files.items()}))"
    )
    for hashseed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        out = subprocess.run(
            [sys.executable, "-c", code, json.dumps(s.to_dict())], env=env, capture_output=True, text=True, check=True
        )
        assert json.loads(out.stdout) == here


def test_different_seeds_and_themes_give_different_games():
    a, b, c = build(spec(seed=0)), build(spec(seed=1)), build(spec(seed=0, theme="salt glass under a mirror sky"))
    assert a["world.json"] != b["world.json"] and a["world.json"] != c["world.json"]
    names = {o["name"] for o in json.loads(c["world.json"])["objects"]}
    assert any(w in n for n in names for w in ("salt", "glass", "mirror", "sky"))  # names come from the theme


def test_the_quest_only_asks_for_what_the_world_guarantees():
    d = draft(spec(seed=4, places=3, locks=2, objects=50, chapters=2, stages=6))
    # every key can be made from what lies before its lock, and enough of it lies there
    for lock in d.locks:
        for name, n in raw_needs(d, lock.key, 1).items():
            o = d.objects[name]
            assert o.zone < lock.zone, (lock.key, name)
            assert d.area(o.home).objects[name] >= n
    # every stage names existing things; enemies the quest hunts have homes
    for chapter in d.quest["main"]["chapters"]:
        for stage in chapter["stages"]:
            done = stage["done"]
            if done["type"] in ("defeated_n", "npc_defeated") and done["npc"] != d.npcs_of("boss")[0].name:
                assert d.npcs[done["npc"]].homes


def test_a_dag_quest_awards_stages_only_after_their_prerequisites(tmp_path):
    s = spec(seed=3, chapters=2, stages=6, branching=2)
    game = load_game(write(tmp_path / "dag", build(s)), cache=False)
    p = plan(game.quest.main)
    forks = [sid for sid, req in p.requires.items() if len(req) > 1]
    assert forks, "each chapter of a branching quest joins its chains"
    assert len({tuple(r) for r in p.requires.values()}) < len(p.requires)  # some stages share a prerequisite
    engine = Engine(game, 0)
    opened = engine.state.rule_data["main_quest"]["agents"]["player"]["open"]
    assert len(opened) == 1  # the root of chapter 1 first


def test_optional_verbs_and_dynamics_are_switched_on(tmp_path):
    s = spec(
        seed=5, verbs=("lockpick", "pickpocket"), dynamics=("noise", "rumor_notes"), params={"noise": {"threshold": 4}}
    )
    game = load_game(write(tmp_path / "opt", build(s)), cache=False)
    assert {"lockpick", "pickpocket"} <= set(game.rules.actions) and "eat" not in game.rules.actions
    assert {"noise", "rumor_notes"} <= {r.name for r in game.rules.steps}
    assert game.rules.step_rule("noise").settings.threshold == 4
    assert any(o.uses == ("lockpick",) for o in game.objects.values())  # the lockpick verb brings a lockpick
    # without names, the counts pick that many from the engine's library, by seed
    chosen = load_game(write(tmp_path / "n", build(spec(seed=2, action_rules=3, step_rules=4))), cache=False)
    assert len(set(chosen.rules.actions) & set(OPTIONAL_VERBS)) == 3
    respawn = chosen.rules.step_rule("respawn").settings
    styles = [s for s, values in RESPAWN_STYLES.items() if all(getattr(respawn, k) == v for k, v in values.items())]
    assert len({r.name for r in chosen.rules.steps} & set(OPTIONAL_DYNAMICS)) + len(styles) == 4


def test_a_respawn_style_sets_its_half_of_the_respawn_rule(tmp_path):
    game = load_game(write(tmp_path / "q", build(spec(seed=6, dynamics=("quiet_food",)))), cache=False)
    respawn = game.rules.step_rule("respawn").settings
    assert (respawn.food_period, respawn.food_chance, respawn.food_unwatched) == (30, 0.5, True)
    assert (respawn.refill, respawn.emptied_delay, respawn.world_cap) == ("residents", None, False)  # the default
    assert "quiet_food" not in {r.name for r in game.rules.steps}


@pytest.mark.parametrize(
    ("over", "words"),
    [
        (dict(name="Tide"), "lower_snake_case"),
        (dict(name="tide_2"), "_<number>"),
        (dict(places=1, areas_per_place=2, max_level=3), "levels need at least 3 areas"),
        (dict(stages=3, branching=2), "needs at least 4 stages"),
        (dict(verbs=("fly",)), "unknown optional verb"),
        (dict(dynamics=("storms",)), "unknown step rule"),
        (dict(objects=9), "object types are needed"),
        (dict(npcs=3), "expected a whole number from 4"),
        (dict(chapters=1, stages=1), "leave no room"),
        (dict(theme="  "), "theme"),
    ],
)
def test_impossible_requests_are_refused_with_a_reason(over, words):
    problems = spec(**over).problems()
    assert any(words in p for p in problems), problems


def test_a_spec_file_with_an_unknown_field_is_refused(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"theme": THEME, "name": "tide", "colour": "red"}))
    with pytest.raises(ValueError, match=r"unknown spec field.*colour"):
        GameSpec.from_file(path)


def test_a_total_of_areas_is_spread_over_the_places():
    s = spec(places=3, area_count=10, max_level=5)
    assert s.place_sizes == [4, 3, 3] and s.areas == 10
    world = json.loads(build(s)["world.json"])
    assert [len(p["areas"]) for p in world["places"]] == [4, 3, 3]
    assert any("area_count: expected a whole number from 3" in p for p in spec(places=3, area_count=2).problems())
