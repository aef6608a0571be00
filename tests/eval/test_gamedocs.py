"""The docs site's page per game is computed from the game's data, and says what the data says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from odyssey_env.game import available_games, load_game
from odyssey_eval.gamedocs import game_page, main
from odyssey_eval.qa.world_knowledge import initial_world

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", available_games())
def test_a_game_page_holds_the_games_verbs_dynamics_sizes_and_quest(name):
    game = load_game(name)
    page = game_page(name)
    summary = game.summary()
    assert page.startswith(f"# {game.title} (`{name}`)")
    assert f"| places | {summary['places']} |" in page and f"| areas | {summary['areas']} (levels" in page
    assert f"{summary['stages']} stages in {summary['chapters']} chapters" in page
    for rule in game.rules.actions.values():
        assert f"| `{rule.usage()}` |" in page
    step_rules = re.findall(r"^\| `([a-z_0-9]+)` \|", page.split("## World dynamics")[1], re.M)
    assert step_rules == [r.name for r in game.rules.steps]  # in the order they run
    outline = page.split("## Quest outline")[1]
    stages = [st for ch in game.quest.main.chapters for st in ch.stages]
    assert outline.count("\n1. ") == len(stages)
    for ch in game.quest.main.chapters:
        assert f"### {ch.title}" in outline


@pytest.mark.parametrize("name", ["mossfall", "quiet_bell"])
def test_the_map_draws_every_area_and_connection_of_the_starting_world(name):
    game = load_game(name)
    world = initial_world(game, 0, tutorial=False)
    svg = re.search(r"<svg.*?</svg>", game_page(name), re.S).group(0)
    drawn = re.findall(r"<title>([a-z_0-9]+) \(", svg)
    assert sorted(drawn) == sorted(world.areas)
    pairs = {tuple(sorted((a, b))) for a, area in world.areas.items() for b in area.exits}
    locked = {tuple(sorted((a, b))) for a, area in world.areas.items() for b, ex in area.exits.items() if ex.locked}
    assert svg.count("<line ") == len(pairs) and svg.count("stroke-dasharray") == len(locked)
    spawn = next(iter(world.agents.values())).area
    ringed = re.search(r"<title>([a-z_0-9]+) \([^<]*</title><circle [^>]*fill=\"none\"", svg)
    assert ringed and ringed.group(1) == spawn


def test_a_linear_quest_lists_no_prerequisites_and_a_dag_does():
    assert " — after " not in game_page("mossfall")  # linear: each stage follows the one before
    assert " — after " in game_page("lazaret")


def test_pages_of_a_game_folder_and_from_the_command_line(capsys):
    folder = ROOT / "tests" / "env" / "data" / "tiny"
    assert main([str(folder), "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "## Map" in out and "starts in" in out and "`pickpocket <npc_name>`" in out


def test_the_docs_hooks_put_a_page_per_game_and_module_in_the_nav():
    import importlib.util

    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "tools" / "mkdocs_hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    config = {"nav": [{"Home": "index.md"}, {"Games": "games.md"}, {"API reference": "api.md"}]}
    nav = hooks.on_config(config)["nav"]
    assert nav[0] == {"Home": "index.md"}
    assert nav[1]["Games"] == [{"Overview": "games.md"}, *(f"games/{g}.md" for g in available_games())]
    assert nav[2]["API reference"][1:] == [f"api/{m}.md" for m in hooks.API_MODULES]
    for module in hooks.API_MODULES:  # every module of the reference exists
        assert importlib.util.find_spec(module) is not None, module
