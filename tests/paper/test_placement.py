"""How imported games scatter objects: each reference game's own draws and guarantee, read from its
``world.py`` as a syntax tree, and worlds whose locked ways cannot be opened drawn again."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from odyssey_eval.paper.distribution import read_distribution
from odyssey_eval.paper.importer import import_release
from odyssey_eval.paper.release import open_release
from tests.paper import fake_release

MARK_LIKE = """
class World:
    def _distribute_objects(self, area_list, rng):
        for area in area_list:
            materials = [o for o in area.pool]
            k_materials = rng.randint(
                min(int(len(materials) * 2.5), int(d * 2.5)), min(int(len(materials) * 5), int(d * 5))
            )
"""


def test_the_draws_and_the_guarantee_are_read_from_the_code():
    mark = read_distribution(MARK_LIKE, "games/generated/mark/world.py")
    assert (mark.draws, mark.guarantee, mark.notes) == ((2.5, 5.0), False, [])
    base = read_distribution(fake_release.WORLD_CODE.format(payload=""), "world.py")
    assert (base.draws, base.guarantee, base.notes) == ((3.0, 6.0), True, [])


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (None, "absent"),
        ("def (:", "cannot parse"),
        ("x = 1\n", "no _distribute_objects"),
        ("def _distribute_objects(rng):\n    k_materials = rng.randint(a, b)\n", "not in the expected form"),
    ],
)
def test_a_file_of_another_shape_keeps_the_defaults_and_says_so(text, said):
    got = read_distribution(text, "world.py")
    assert (got.draws, got.guarantee) == ((2.0, 4.0), False)
    assert len(got.notes) == 1 and said in got.notes[0]


@pytest.fixture
def games(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "games"
    tree = fake_release.write_tree(tmp_path / "release", tmp_path / "payload-ran")
    import_release(open_release(tree), folder, ("base",))
    monkeypatch.setenv("ODYSSEY_GAMES_DIR", str(folder))
    return folder


def _edit(games: Path, change) -> None:
    path = games / "base" / "world.json"
    world = json.loads(path.read_text())
    change(world)
    path.write_text(json.dumps(world))


def _game():
    from odyssey_env.game import load_game

    return load_game("base", cache=False)


def test_the_import_writes_the_placement_and_areas_get_their_own_materials(games):
    world = json.loads((games / "base" / "world.json").read_text())
    assert world["placement"] == {
        "style": "agentodyssey",
        "draws": [3.0, 6.0],
        "guarantee": True,
        "enemies_per_level": [[0, 1], [1, 2]],  # the fake's _assign_npcs_to_areas, Base's bounds
    }
    from odyssey_env.worldgen import generate

    game = _game()
    for seed in range(10):
        state = generate(game, random.Random(seed))
        assert state.areas["glade"].objects.get("stick", 0) >= 2  # a level-2 area's own material: 2 at least
    _edit(games, lambda w: w["placement"].update(guarantee=False, draws=[0, 0]))
    bare = _game()
    assert all(generate(bare, random.Random(s)).areas["glade"].objects.get("stick", 0) == 0 for s in range(10))


def _lock(world, a: str, b: str) -> None:
    for c in world["graph"]["connections"]:
        if {c["a"], c["b"]} == {a, b}:
            c.update(locked=True, key="key")


def test_a_world_whose_lock_cannot_be_opened_is_drawn_again(games):
    # The forge's way to the glade is locked; a key is cut from a stick, and sticks lie only past the
    # lock (the glade's own) or are held by the trader and the wolves, who live in random areas: worlds
    # where none of them stands in the forge cannot be opened, and the engine draws them again.
    from odyssey_env import paperworld, worldgen

    _edit(games, lambda w: _lock(w, "forge", "glade"))
    game = _game()
    first_draws = [worldgen._draw(game, random.Random(f"odyssey:{s}:world"), 1) for s in range(12)]
    refused = [s for s, state in enumerate(first_draws) if not paperworld.opens_up(game, state)]
    assert 0 < len(refused) < 12
    for s in range(12):
        state = worldgen.generate(game, random.Random(f"odyssey:{s}:world"))
        assert paperworld.opens_up(game, state)
        again = worldgen.generate(game, random.Random(f"odyssey:{s}:world"))
        assert again.to_dict() == state.to_dict()  # redrawing is as deterministic as drawing


def test_a_world_that_no_draw_opens_keeps_its_first_draw(games):
    from odyssey_env import paperworld, worldgen

    _edit(games, lambda w: _lock(w, "green", "forge"))  # nothing but the spawn's own things before it
    game = _game()
    state = worldgen.generate(game, random.Random("odyssey:0:world"))
    assert not paperworld.opens_up(game, state)
    first = worldgen._draw(game, random.Random("odyssey:0:world"), 1).to_dict()
    assert {**state.to_dict(), "agents": {}} == first
    # a key lying at the spawn opens it
    _edit(games, lambda w: next(a for p in w["places"] for a in p["areas"] if a["name"] == "green")
          .setdefault("objects", {}).update(key=1))  # fmt: skip
    assert paperworld.opens_up(_game(), worldgen.generate(_game(), random.Random("odyssey:0:world")))
