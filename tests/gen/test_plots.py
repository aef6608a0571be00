"""Quest skeletons: several plot shapes and branch structures, chosen by seed, each solved by the oracle in play."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from odyssey_gen.procedural import ProceduralAuthor, draft
from odyssey_gen.procedural.plots import PLOTS, STRUCTURES
from odyssey_gen.spec import SpecError
from odyssey_gen.validate import validate

from .conftest import FAST, spec
from .test_lexicon import THEMES

THEME_LIST = sorted(THEMES)


def stages_of(d) -> list[dict]:
    return [s for ch in d.quest["main"]["chapters"] for s in ch["stages"]]


def _seed_with(structure: str, **over) -> int:
    """The first seed whose DAG quest has ``structure`` (the structure is the seed's choice, as the plot is)."""
    for seed in range(200):
        if draft(spec(seed=seed, **over)).structure == structure:
            return seed
    raise AssertionError(f"no seed below 200 gives {structure}")


CASES = [
    (plot, branching, THEME_LIST[(2 * i + branching) % len(THEME_LIST)])
    for i, plot in enumerate(PLOTS)
    for branching in (1, 2 + i % 2)
]


@pytest.mark.parametrize(("plot", "branching", "theme"), CASES, ids=[f"{p}-b{b}" for p, b, _ in CASES])
def test_every_plot_and_structure_is_played_and_solved(tmp_path: Path, plot, branching, theme):
    over = dict(theme=theme, plot=plot, branching=branching, stages=4 + 2 * branching, chapters=1 + branching % 2)
    if branching > 1:
        structure = STRUCTURES[list(PLOTS).index(plot) % len(STRUCTURES)]
        over["seed"] = _seed_with(structure, **over)
    s = spec(**over)
    d = draft(s)
    assert d.plot == plot
    folder = tmp_path / s.name
    folder.mkdir()
    for name, text in ProceduralAuthor(s).files().items():
        (folder / name).write_text(text, encoding="utf-8")
    result = validate(folder, FAST)  # loads, a random agent plays, the oracle must finish every stage
    assert result.ok, [str(p) + "\n" + p.detail for p in result.problems]
    runs = result.stats["solvability"]["runs"]
    assert [r["stages"] for r in runs] == [s.chapters * s.stages] * FAST.seeds


def test_seeds_choose_among_the_plots_and_structures():
    plots, structures, shapes = set(), set(), set()
    for seed in range(40):
        d = draft(spec(seed=seed, branching=2, stages=6))
        plots.add(d.plot)
        structures.add(d.structure)
        shapes.add(tuple((s["done"]["type"], tuple(s.get("requires") or ())) for s in stages_of(d)))
    assert plots == set(PLOTS) and structures == set(STRUCTURES)
    assert len(shapes) >= 30  # hardly two seeds share a skeleton


def test_each_plot_opens_and_ends_its_own_way():
    def first_and_last(plot: str):
        d = draft(spec(seed=3, plot=plot, stages=7))
        st = stages_of(d)
        return d, st[0], st[-1], st

    d, first, last, _ = first_and_last("recovery")
    assert first["done"]["type"] == "talked_to" and last["done"] == {
        "type": "object_in_area",
        "object": d.of_kind("trophy")[0].name,
        "area": d.spawn.name,
    }
    d, first, last, _ = first_and_last("hunt")
    assert [c["type"] for c in last["done"]["conditions"]] == ["has_item_count", "talked_to"]
    d, first, last, st = first_and_last("forging")
    trophy = d.of_kind("trophy")[0].name
    masterwork = last["done"]["object"]
    assert last["done"]["type"] == "object_crafted" and trophy in d.objects[masterwork].recipe["ingredients"]
    assert not any(masterwork in json.dumps(s["done"]) for s in st[:-1])  # nothing earlier asks for it
    d, first, last, _ = first_and_last("pilgrimage")
    assert first["done"]["type"] == "visited_k_of" and last["done"]["type"] == "text_equals_in"
    d, first, last, _ = first_and_last("trade")
    merchants = {n.name for n in d.npcs_of("merchant")}
    assert first["done"]["type"] == "talked_to" and first["done"]["npc"] in merchants
    homes = {n.homes[0] for n in d.npcs_of("merchant")}
    assert last["done"]["type"] == "object_in_area" and last["done"]["area"] in homes
    d, first, last, st = first_and_last("siege")
    assert first["done"] == {"type": "holds_category", "category": "weapon"}
    boss = d.npcs_of("boss")[0].name
    at = next(i for i, s in enumerate(st) if s["done"] == {"type": "npc_defeated", "npc": boss})
    assert st[at - 1]["done"]["type"] == "defeated_n"  # the siege is broken before the boss


def test_choices_offer_two_different_tasks():
    found = 0
    for seed in range(30):
        for s in stages_of(draft(spec(seed=seed, plot="trade", stages=8))):
            if s["done"]["type"] == "any_of":
                a, b = s["done"]["conditions"]
                assert a != b and " or " in s["title"]
                found += 1
    assert found >= 5


def test_a_lattice_links_its_chains():
    over = dict(branching=2, stages=8)
    d = draft(spec(seed=_seed_with("lattice", **over), **over))
    ids = {s["id"]: s for s in stages_of(d)}
    boss = d.npcs_of("boss")[0].name
    crossed = [
        s
        for s in ids.values()
        if len(s.get("requires") or ()) > 1 and s["done"] != {"type": "npc_defeated", "npc": boss}
    ]
    assert crossed  # a stage inside the chains waits on two of them


def test_an_unknown_plot_is_refused():
    with pytest.raises(SpecError, match=r"plot: unknown plot 'saga'; known: recovery, hunt"):
        spec(plot="saga").check()
