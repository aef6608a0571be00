"""``odyssey paper import`` on a small fake release made here (offline): conversion, safety, determinism, play."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

from odyssey_eval.paper.importer import import_game, import_release
from odyssey_eval.paper.release import ReleaseError, open_release
from odyssey_eval.paper.world import ConvertError
from tests.paper import fake_release


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "payload-ran"


@pytest.fixture
def tree(tmp_path: Path, marker: Path) -> Path:
    return fake_release.write_tree(tmp_path / "release", marker)


def _import(source: Path, out: Path) -> Path:
    import_release(open_release(source), out, ("base",))
    return out / "base"


def test_the_release_code_never_runs(tmp_path, tree, marker):
    # Every .py file of the fake release would create the marker if it ran or were imported, and the
    # quest class has a payload in its body and in _bootstrap; converting reads them through ast only.
    folder = _import(tree, tmp_path / "games")
    assert (folder / "world.json").is_file()
    assert not marker.exists()
    wheel = fake_release.write_wheel(tmp_path / "agentodyssey-0.1.0-py3-none-any.whl", marker, tmp_path)
    _import(wheel, tmp_path / "games-wheel")
    assert not marker.exists()


def test_wheel_sdist_and_folder_give_the_same_game_and_the_same_bytes_twice(tmp_path, tree, marker):
    wheel = fake_release.write_wheel(tmp_path / "agentodyssey-0.1.0-py3-none-any.whl", marker, tmp_path)
    sdist = fake_release.write_sdist(tmp_path / "agentodyssey-0.1.0.tar.gz", marker, tmp_path)
    first = _import(wheel, tmp_path / "a")
    second = _import(wheel, tmp_path / "b")
    for name in ("world.json", "quest.json", "paper.json"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    from_sdist = _import(sdist, tmp_path / "c")
    from_tree = _import(tree, tmp_path / "d")
    for name in ("world.json", "quest.json"):
        assert (first / name).read_bytes() == (from_sdist / name).read_bytes(), name
    # a checkout says no version; everything else is the same
    assert (first / "quest.json").read_bytes() == (from_tree / "quest.json").read_bytes()
    ours, theirs = (json.loads((f / "world.json").read_text()) for f in (first, from_tree))
    assert "agentodyssey unknown" in theirs["game"].pop("description")
    ours["game"].pop("description")
    assert ours == theirs
    record = json.loads((first / "paper.json").read_text())
    assert record["imported_from"]["kind"] == "wheel"
    assert record["imported_from"]["version"] == "0.1.0"
    assert len(record["imported_from"]["sha256"]) == 64
    assert json.loads((from_sdist / "paper.json").read_text())["imported_from"]["version"] == "0.1.0"


def test_content_is_converted(tmp_path, tree):
    game = import_game(open_release(tree), "base")
    world, quest, record = game.world, game.quest, game.provenance
    assert world["spawn"] == "green"
    objects = {o["name"]: o for o in world["objects"]}
    assert objects["paper"]["category"] == "writable" and objects["paper"]["max_text"] == 100
    assert objects["key"]["uses"] == ["unlock"]
    # a fractional amount is kept: odyssey crafts with it as the reference does
    assert objects["club"]["recipe"] == {"ingredients": {"stick": 2, "cloth": 0.5}, "stations": ["workbench"]}
    assert objects["coin"]["description"] == "A coin - round."  # printable ASCII
    assert objects["moon_token"]["quest"] and objects["moon_token"]["spawn_weight"] == 0
    assert objects["stick"]["areas"] == ["green", "glade"]
    npcs = {n["name"]: n for n in world["npcs"]}
    assert npcs["wolf"]["hp"] == 12 and npcs["wolf"]["hp_per_level"] == 4 and npcs["wolf"]["level_with_area"]
    assert npcs["wolf"]["pattern"] == ["attack", "wait"]
    assert npcs["nell_ash"]["role"] == "merchant" and npcs["nell_ash"]["stock"] == {"cloth": 1, "stick": 1}
    assert npcs["ada_lark"]["role"] == "guide"  # the guide is named from the pool, as the reference does
    assert npcs["alpha_wolf"]["role"] == "boss" and npcs["alpha_wolf"]["hp"] == 30
    areas = {a["name"]: a for p in world["places"] for a in p["areas"]}
    assert areas["glade"].get("dark") is True and not areas["den"].get("dark")
    assert "elder_rue" in areas["forge"]["npcs"]  # a quest NPC the reference creates at the start
    assert world["graph"]["mode"] == "fixed" and len(world["graph"]["connections"]) == 3
    assert world["game"]["intro"].startswith("I wake in a small test world.")
    assert world["game"]["verbs"] == ["eat"]
    # the reference's food respawn is the quiet-food style of odyssey's one respawn rule; with no enemy
    # respawn in the release, enemies never come back
    assert "step_rules" not in world["game"] and world["game"]["params"]["respawn"] == {
        "food_period": 30,
        "food_chance": 0.5,
        "food_unwatched": True,
        "enemy_chance": 0.0,
    }
    assert world["game"]["disable"] == ["day_night", "night_spawn"]  # the reference has neither
    main = quest["main"]
    ch1, ch2 = main["chapters"]
    assert [s["id"] for s in ch1["stages"]] == ["ch1_meet", "ch1_arm", "ch1_write", "ch1_boss"]
    assert ch1["stages"][0]["done"] == {"type": "in_area", "area": "forge"}
    assert ch1["stages"][0]["on_complete"] == "The word is moonrise."
    assert ch1["stages"][2]["done"] == {
        "type": "all_of",
        "conditions": [
            {"type": "in_area", "area": "den"},
            {"type": "text_equals_in", "text": "moonrise", "area": "den"},
        ],
    }
    assert ch1["stages"][3]["spawn"] == [{"npc": "alpha_wolf", "area": "den"}]
    root, vest, token = ch2["stages"]
    assert root["requires"] == ["ch2_vest", "ch2_token"]
    assert vest["requires"] == ["ch1_boss"] and token["requires"] == ["ch1_boss"]  # roots wait for chapter 1
    assert vest["place"] == [{"object": "moon_token", "area": "den", "amount": 1}]  # the reward given in code
    assert main["guide"] == {"npc": "ada_lark", "area": "green", "follows": True, "reminder": 0}
    assert quest["side_quests"]["reward"] == [1, 6]
    steps = quest["tutorial"]["steps"]
    assert [s["id"] for s in steps] == ["pick_bag", "buy_stick", "craft_key", "leave"]
    # the bag is the tutorial's first container, whatever its id (Mark's is a small_pouch)
    assert steps[0]["place"] == {"small_pouch": 1} and "small_pouch_<number>" in steps[0]["say"]
    # the merchant sells what the reference stocks it with, and a placeholder names the object
    tutor = next(n for n in world["npcs"] if n["name"] == "selma_tutor")
    assert tutor["stock"] == {"stick": 1}
    assert steps[1]["npcs"] == ["selma_tutor"] and "`buy 1 stick selma_tutor`" in steps[1]["say"]
    assert record["env_id"] == "AgentOdyssey/Base-v0"
    assert record["sizes"] == {"areas": 4, "object_types": 11, "npc_types": 2, "stages": 7}
    differences = " ".join(d["difference"] for d in record["differences"])
    assert "StrangeWeatherStepRule" in differences and "JuggleRule" in differences  # nothing dropped silently
    assert "0.5 cloth" not in differences  # fractional recipe amounts are no longer a difference


def test_the_imported_game_is_found_by_name_and_plays(tmp_path, tree, monkeypatch):
    games = tmp_path / "user-games"
    monkeypatch.setenv("ODYSSEY_GAMES_DIR", str(games))
    _import(tree, games)
    from odyssey_env.game import load_game
    from odyssey_env.registration import register_envs

    game = load_game("base", cache=False)
    summary = game.summary()
    assert (summary["areas"], summary["object_types"], summary["npc_types"], summary["stages"]) == (4, 11, 2, 7)
    assert summary["quest_object_types"] == 1
    register_envs()
    env = gym.make("AgentOdyssey/Base-v0")
    obs, _ = env.reset(seed=3)
    assert "I wake in a small test world." in obs
    from gymnasium.utils.env_checker import check_env

    check_env(env.unwrapped, skip_render_check=True)
    env.close()
    gym.registry.pop("AgentOdyssey/Base-v0", None)


def test_the_oracle_solves_the_imported_fake_game(tmp_path, tree, monkeypatch):
    games = tmp_path / "user-games"
    monkeypatch.setenv("ODYSSEY_GAMES_DIR", str(games))
    _import(tree, games)
    from odyssey_agents.oracle.solve import solve

    for seed in (0, 1):
        s = solve(str(games / "base"), seed, budget=300)
        assert s.solved and s.tutorial_completed, s


def test_bad_releases_are_one_line_errors(tmp_path, marker):
    with pytest.raises(ReleaseError, match="no such file"):
        open_release(tmp_path / "missing.whl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReleaseError, match="is this an agentodyssey checkout"):
        open_release(tmp_path / "empty")
    tree = fake_release.write_tree(tmp_path / "release", marker)
    quest = tree / "games/base/rules/step_rules/main_quest.py"
    quest.write_text(quest.read_text().replace('"area_key": "ch1_far_area"', '"area_key": "ch1_nowhere"'))
    with pytest.raises(ConvertError, match=r"ch1_write.*ch1_nowhere"):
        import_game(open_release(tree), "base")
    assert not marker.exists()


def test_an_import_by_an_older_importer_is_refused_with_the_command_that_renews_it(tmp_path, tree, monkeypatch, capsys):
    games = tmp_path / "user-games"
    monkeypatch.setenv("ODYSSEY_GAMES_DIR", str(games))
    folder = _import(tree, games)
    from odyssey_env.game import GameError, load_game
    from odyssey_env.userdir import PAPER_FORMAT
    from odyssey_eval.paper.cli import main

    record = json.loads((folder / "paper.json").read_text())
    assert record["format"] == PAPER_FORMAT  # the stamp, beside the release's version and digest
    assert record["imported_from"]["kind"] == "folder"  # a checkout: no version, its files' digest
    assert len(record["imported_from"]["sha256"]) == 64
    load_game("base", cache=False)  # current: loads
    record["format"] = PAPER_FORMAT - 1
    (folder / "paper.json").write_text(json.dumps(record))
    with pytest.raises(GameError) as err:
        load_game("base", cache=False)
    message = str(err.value)
    assert "\n" not in message
    assert f"format {PAPER_FORMAT - 1}" in message and "older" in message
    assert "run `odyssey paper import` again" in message
    main(["status"])
    assert "run `odyssey paper import` again" in capsys.readouterr().out
    _import(tree, games)  # importing again renews it
    load_game("base", cache=False)


def test_the_guide_comes_to_each_new_stage_and_reminds(tmp_path, tree, monkeypatch):
    games = tmp_path / "user-games"
    monkeypatch.setenv("ODYSSEY_GAMES_DIR", str(games))
    folder = _import(tree, games)
    quest = json.loads((folder / "quest.json").read_text())
    assert quest["main"]["guide"]["follows"] is True and quest["main"]["guide"]["reminder"] == 0
    quest["main"]["guide"]["reminder"] = 4  # (only Mark's reference quest reminds: every 30 steps)
    (folder / "quest.json").write_text(json.dumps(quest))
    from odyssey_agents.base import Task
    from odyssey_agents.oracle.agent import OracleAgent
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(str(folder), tutorial=False)
    obs, info = env.reset(seed=0)
    guide = env.engine.state.npcs[quest["main"]["guide"]["npc"]]
    agent = OracleAgent(env)
    agent.reset(Task(game="base", title="t", verbs=tuple(env.verbs()), seed=0, max_steps=300))
    joined = completed = 0
    for _ in range(300):
        done_before = info["quest"]["completed"]
        obs, _, terminated, _, info = env.step(agent.act(obs, {**info, "engine": env.engine}).action)
        player = env.engine.state.agents["player"]
        if info["quest"]["completed"] > done_before and not terminated:
            completed += 1
            assert guide.area == player.area  # a new stage opened: the guide stands where I do
            joined += f"{guide.handle} joins me here." in obs
        if terminated:
            break
    assert terminated and completed >= 3 and joined >= 1
    env.reset(seed=0)
    obs = ""
    for _ in range(5):
        obs, *_ = env.step("wait")
    assert "Talk to me when you want your task again." in obs  # 4 steps without a new stage
