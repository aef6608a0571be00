"""What the reference decides at run time and the import must keep: instance stock, stock set by quest code.

Offline: the fake release of :mod:`tests.paper.fake_release` and small syntax trees written here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from odyssey_eval.paper.bootstrap import stock_in_code
from odyssey_eval.paper.importer import import_release
from odyssey_eval.paper.release import open_release
from tests.paper import fake_release

QUEST_CODE = """
class MainQuestStepRule:
    SEAL_ID = "obj_seal"

    def _ensure_static_quest_npcs(self, env, world):
        for npc_inst_id, npc_inst in world.npc_instances.items():
            if get_def_id(npc_inst_id) == "npc_vesin":
                self._setup_seal_stock(world, npc_inst_id)
        inst = self._create_npc_instance(world, "npc_quest_guide", "area_a", rng)
        inst = self._create_npc_instance(world, "npc_quest_tide", "area_b", rng)
        if inst:
            self._setup_tide_stock(world, inst)

    def _setup_seal_stock(self, world, npc_inst_id):
        npc = world.npc_instances.get(npc_inst_id)
        npc.inventory[self.SEAL_ID] = max(int(npc.inventory.get(self.SEAL_ID, 0)), 1)

    def _setup_tide_stock(self, world, npc_inst_id):
        npc = world.npc_instances.get(npc_inst_id)
        npc.coins = max(int(getattr(npc, "coins", 0)), 400)
        npc.inventory["obj_heart"] = max(int(npc.inventory.get("obj_heart", 0)), 1)
        if "obj_salt" in world.objects:
            npc.inventory["obj_salt"] = max(int(npc.inventory.get("obj_salt", 0)), 4)
"""


def test_stock_set_by_quest_code_is_read_for_the_npc_it_is_set_on() -> None:
    cls = ast.parse(QUEST_CODE).body[0]
    assert isinstance(cls, ast.ClassDef)
    got = stock_in_code(cls, {"SEAL_ID": "obj_seal"})
    # the world merchant named by the enclosing test; the quest NPC created last before the call (not the guide)
    assert got == {"npc_vesin": {"obj_seal": 1}, "npc_quest_tide": {"obj_heart": 1, "obj_salt": 4}}


@pytest.fixture
def imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    games = tmp_path / "games"
    monkeypatch.setenv("ODYSSEY_GAMES_DIR", str(games))
    tree = fake_release.write_tree(tmp_path / "release", tmp_path / "payload-ran")
    import_release(open_release(tree), games, ("base",))
    return games / "base"


def test_every_npc_instance_holds_at_least_one_of_each_of_its_types_objects(imported: Path) -> None:
    """The reference's ``NPC.create_instance`` starts from its type's copy (one of each object) and overwrites
    a count only when its draw of 0 to 2 x level is above 0: no instance is empty-handed."""
    from odyssey_env.env import OdysseyEnv

    seen = 0
    for seed in range(12):
        env = OdysseyEnv(str(imported))
        env.reset(seed=seed)
        game, state = env.engine.game, env.engine.state
        for npc in state.npcs.values():
            t = game.npcs[npc.type]
            if not t.level_with_area:
                continue
            carried = t.stock if t.merchant else t.drops
            for obj in carried:
                seen += 1
                assert 1 <= npc.inventory.get(obj, 0) <= max(1, 2 * npc.level), (seed, npc.handle, obj)
    assert seen, "the fake world placed no NPC that carries objects"


def _assign(body: str) -> ast.Module:
    return ast.parse(f"class World:\n    def _assign_npcs_to_areas(world_definition, rng):\n        {body}\n")


def test_each_games_enemy_count_bounds_are_read_from_its_world_code() -> None:
    """The reference's ``_assign_npcs_to_areas`` draws an area's enemy count with bounds of its own in each game
    (Mark ``1`` to the level; Remnant half the level to the level / 1.5; the others half the level to the
    level): the import evaluates them per level from the syntax tree, never running the code."""
    from odyssey_eval.paper.world import enemies_per_level

    mark = _assign("enemy_count = rng.randint(1, home.level)")
    remnant = _assign("enemy_count = rng.randint(math.floor(home.level / 2), math.ceil(home.level / 1.5))")
    base = _assign("enemy_count = rng.randint(math.floor(home.level / 2), home.level)")
    assert enemies_per_level(mark, 3, "mark") == [[1, 1], [1, 2], [1, 3]]
    assert enemies_per_level(remnant, 5, "remnant") == [[0, 1], [1, 2], [1, 2], [2, 3], [2, 4]]
    assert enemies_per_level(base, 3, "base") == [[0, 1], [1, 2], [1, 3]]


@pytest.mark.parametrize(
    "body",
    [
        "enemy_count = rng.randint(1, open('x').level)",  # a call the bounds may not make
        "enemy_count = rng.randint(home.level, 1)",  # empty at level 2 and up
    ],
)
def test_enemy_count_bounds_that_are_not_a_formula_of_the_level_are_refused(body: str) -> None:
    from odyssey_eval.paper.world import ConvertError, enemies_per_level

    with pytest.raises(ConvertError):
        enemies_per_level(_assign(body), 3, "game")


def test_a_world_code_without_the_enemy_count_is_not_guessed() -> None:
    from odyssey_eval.paper.world import enemies_per_level

    assert enemies_per_level(_assign("count = rng.randint(1, home.level)"), 3, "game") is None


def _hostiles(folder: Path, seeds: int) -> int:
    from odyssey_env.env import OdysseyEnv

    n = 0
    for seed in range(seeds):
        env = OdysseyEnv(str(folder))
        env.reset(seed=seed)
        game, state = env.engine.game, env.engine.state
        n += sum(1 for npc in state.npcs.values() if npc.origin == "world" and game.npcs[npc.type].common_enemy)
    return n


def test_the_worlds_enemy_counts_follow_the_games_bounds(imported: Path) -> None:
    """``placement.enemies_per_level`` bounds what each area draws: none at ``[0, 0]``; at ``[1, 1]`` an area
    places its wolf whenever the type's roll lets it, so more wolves than with the bounds of no table
    (Remnant's: 0 or 1 at level 1)."""
    import json

    world = json.loads((imported / "world.json").read_text())
    levels = max(a.get("level", 1) for p in world["places"] for a in p["areas"])
    counts = {}
    for name, table in (("none", [[0, 0]] * levels), ("one", [[1, 1]] * levels), ("default", None)):
        folder = imported.parent / name
        folder.mkdir()
        for f in imported.iterdir():
            if f.is_file():
                (folder / f.name).write_bytes(f.read_bytes())
        if table is not None:
            world["placement"]["enemies_per_level"] = table
        else:
            world["placement"].pop("enemies_per_level", None)
        (folder / "world.json").write_text(json.dumps(world))
        counts[name] = _hostiles(folder, 20)
    assert counts["none"] == 0
    assert counts["one"] > counts["default"] > 0, counts
