"""``odyssey view``: what the page embeds, that it is self-contained and inert, and the command's errors.

The page's behaviour in a browser is tested in ``test_viewer_browser.py``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from odyssey_eval.cli import main as odyssey
from odyssey_eval.trajectory import read_trajectory
from odyssey_eval.viewer import build_page, view_data, write_view
from odyssey_eval.viewer.data import FLAGS, ViewError
from odyssey_eval.viewer.observation import parse_exits, parse_observation
from odyssey_eval.viewer.page import embed_json
from odyssey_eval.viewer.serve import make_server
from odyssey_eval.viewer.worldmap import layout

from .viewer_runs import EVIL, lines, play, poison, write_lines


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    return play(tmp_path_factory.mktemp("viewer"))


def data_block(page: str) -> dict:
    text = re.search(r'<script type="application/json" id="odyssey-data">(.*?)</script>', page, re.S).group(1)
    return json.loads(text)


# ---------------------------------------------------------------------------- observations
OBS = """Current Time: 0001-01-01 08:10:00
Current Location: Old Castle, hall

I picked up 1 torch.
goblin_2 strikes me for 3 damage.

I am holding 1 torch, 10 coin.
I have equipped 1 small_bag_0.
I see no objects near me.
I see goblin_2, player_1 nearby.

My level is 2.
My attack is at 15.
My defense is at 0.
My health is at 97.
My experience is at 120.

Neighboring areas: armory, library (locked)."""


def test_an_observation_is_read_back_into_its_parts():
    o = parse_observation(OBS)
    assert (o.time, o.place, o.area) == ("0001-01-01 08:10:00", "Old Castle", "hall")
    assert o.feedback == "I picked up 1 torch.\ngoblin_2 strikes me for 3 damage."
    assert (o.holding, o.equipped) == ("1 torch, 10 coin", "1 small_bag_0")
    assert (o.ground, o.beings) == ("", "goblin_2, player_1")
    assert o.stats == (2, 15, 0, 97, 120)
    assert o.exits == (("armory", False), ("library", True))


def test_observations_without_feedback_or_exits_and_foreign_text():
    quiet = OBS.replace("I picked up 1 torch.\ngoblin_2 strikes me for 3 damage.\n\n", "")
    assert parse_observation(quiet).feedback == ""
    assert parse_exits("Neighboring areas: none.") == ()
    assert parse_observation(OBS.replace("Neighboring areas", "Exits")) is None
    assert parse_observation(OBS.replace("My health is at 97.", "My health is at lots.")).stats[3] is None
    assert parse_observation("a model's hand-written observation") is None
    assert parse_observation(None) is None


# ---------------------------------------------------------------------------- the data
def test_the_embedded_data_follows_the_trajectory(run):
    traj = read_trajectory(run / "trajectory.jsonl")
    data = view_data(run)
    (agent,) = data["agents"]
    st = agent["steps"]
    records = [traj.reset, *traj.steps]
    assert len(st["a"]) == len(records) == len(st["ob"]) == len(st["fl"]) == len(st["health"])
    areas = [a["n"] for a in data["map"]["areas"]]
    for i, r in enumerate(records):
        assert st["ob"][i] == r["observation"]
        assert areas[st["ar"][i]] == r["area"]
        assert st["a"][i] == (r["action"] if i else "")
        assert bool(st["fl"][i] & FLAGS["invalid"]) == bool(r.get("invalid"))
        assert bool(st["fl"][i] & FLAGS["tutorial"]) == bool(i and r.get("tutorial"))
        died = any(e.get("kind") == "agent_died" for e in r.get("events", ()))
        assert bool(st["fl"][i] & FLAGS["died"]) == died
        parsed = parse_observation(r["observation"])
        assert data["strings"][st["hd"][i]] == parsed.holding
        assert st["health"][i] == parsed.stats[3]
        assert st["rw"].get(i) == r.get("reward")
    assert any(f & FLAGS["died"] for f in st["fl"]), "the fixture run should contain a death"
    assert any(f & FLAGS["quest"] for f in st["fl"]), "the fixture run should complete a quest stage"
    assert sum(bool(f & FLAGS["qa"]) for f in st["fl"]) == 2  # QA every 100 play steps, before the last
    stored = json.loads((run / "results.json").read_text())
    assert agent["summary"]["main_reward"] == stored["main_reward"]
    assert agent["summary"]["failed_action_rate"] == stored["metrics"]["failed_action_rate"]  # beside invalid
    assert [r["phase"] for r in agent["qa"]][:1] == ["before"] and agent["qa"][-1]["phase"] == "after"
    assert data["questions"] and all(q["text"] for q in data["questions"].values())
    assert data["run"]["finished"] and data["run"]["title"] == "Embers of Mossfall"


def test_the_map_holds_what_was_seen_and_the_unexplored_rest_of_a_shipped_game(run):
    data = view_data(run)
    m = data["map"]
    seen = {a["n"] for a in m["areas"] if a["s"] == "seen"}
    visited = {r["area"] for r in lines(run / "trajectory.jsonl")}
    assert visited <= seen
    from odyssey_env.game import load_game
    from odyssey_eval.qa.world_knowledge import initial_world

    world = initial_world(load_game("mossfall"), 0, True)
    assert {a["n"] for a in m["areas"]} == set(world.areas) | seen
    assert data["run"]["map_source"] == "game"
    for a in m["areas"]:
        assert 0 <= a["x"] <= 1 and 0 <= a["y"] <= 1
        assert m["places"][a["p"]] == world.areas[a["n"]].place
    pairs = {frozenset((m["areas"][a]["n"], m["areas"][b]["n"])) for a, b, _, _ in m["edges"]}
    assert pairs == {frozenset((a, b)) for a, area in world.areas.items() for b in area.exits}
    gate = next(
        e for e in m["edges"] if {m["areas"][e[0]]["n"], m["areas"][e[1]]["n"]} == {"smithy_yard", "scorched_gate"}
    )
    assert gate[2] is None or gate[2] > 0  # locked at the start: drawn locked until seen open


def test_a_run_of_a_changed_game_maps_only_what_it_saw(run, tmp_path):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    record = json.loads((copy / "cell.json").read_text())
    record["content"]["world.json"] = "0" * 64  # the game's files are not those the run played
    (copy / "cell.json").write_text(json.dumps(record))
    data = view_data(copy)
    assert data["run"]["map_source"] == "observed"
    assert {a["s"] for a in data["map"]["areas"]} == {"seen"}


def test_the_layout_is_deterministic_and_keeps_places_together():
    areas = ["a1", "a2", "a3", "b1", "b2", "c1", "t1", "t2"]
    places = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B", "c1": "C", "t1": "T", "t2": "T"}
    edges = [("a1", "a2"), ("a2", "a3"), ("a1", "a3"), ("a3", "b1"), ("b1", "b2"), ("b2", "c1"), ("t1", "t2")]
    pos = layout(areas, places, edges)
    assert pos == layout(areas, places, edges)
    assert all(0 <= x <= 1 and 0 <= y <= 1 for x, y in pos.values())

    def dist(a, b):
        return ((pos[a][0] - pos[b][0]) ** 2 + (pos[a][1] - pos[b][1]) ** 2) ** 0.5

    assert max(dist("a1", "a2"), dist("a2", "a3"), dist("b1", "b2")) < min(
        dist("a1", "b2"), dist("a1", "c1"), dist("b1", "t1")
    )
    assert layout([], {}, []) == {} and layout(["x"], {"x": "X"}, []) == {"x": (0.5, 0.5)}


def test_the_page_is_the_same_in_any_process(run, tmp_path):
    page = build_page(run)
    assert page == build_page(run)
    script = "import sys; from odyssey_eval.viewer import build_page; sys.stdout.write(build_page(sys.argv[1]))"
    for seed in ("0", "4242"):
        out = subprocess.run(
            [sys.executable, "-c", script, str(run)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        assert out == page


# ---------------------------------------------------------------------------- self-contained and inert
def test_the_page_fetches_nothing_and_allows_only_its_own_scripts(run):
    page = build_page(run)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page), "the page names a remote resource"
    assert "@import" not in page and "url(" not in page
    policy = html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1))
    assert "default-src 'none'" in policy
    allowed = set(re.search(r"script-src ([^;]*)", policy).group(1).split())
    for body in re.findall(r"<script>(.*?)</script>", page, re.S):
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in allowed
    handlers = re.findall(r'onchange="([^"]*)"', page)  # the dependency graph's legend
    assert handlers and "'unsafe-hashes'" in allowed
    for h in set(handlers):
        assert f"'sha256-{base64.b64encode(hashlib.sha256(h.encode()).digest()).decode()}'" in allowed


def test_markup_from_models_and_games_stays_text(run, tmp_path):
    evil, step = poison(run, tmp_path / "evil")
    page = build_page(evil)
    # three scripts (the dependency graph's toggle, the data block, the viewer), and no markup from the run
    assert page.count("<script") == 3 and page.count("</script>") == 3
    assert "<img" not in page and "<svg onload" not in page and "<!--" not in page
    assert embed_json(EVIL) in page
    data = data_block(page)
    assert data == json.loads(json.dumps(view_data(evil)))  # the block parses back to exactly the data
    st = data["agents"][0]["steps"]
    assert st["a"][step] == EVIL and st["rs"][str(step)] == EVIL and st["raw"][str(step)] == EVIL
    assert data["strings"][st["nb"][step]] == EVIL and data["strings"][st["fb"][step]].startswith(EVIL)
    assert data["agents"][0]["label"] == EVIL and data["run"]["tag"] == EVIL and data["run"]["title"] == EVIL
    block = page.split('id="odyssey-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in block and ">" not in block and "&" not in block
    assert html.escape(EVIL) in page  # the title element, escaped


def test_numbers_json_has_not_become_null_rather_than_breaking_the_page():
    assert json.loads(embed_json({"a": [1.5, float("nan")], "b": {"c": float("inf")}})) == {
        "a": [1.5, None],
        "b": {"c": None},
    }


def test_reading_a_run_loads_no_game_folder(run, tmp_path):
    """A run directory naming a game folder whose rules.py leaves a mark when imported: viewing it runs
    nothing, and the map is what the run saw."""
    import shutil

    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "rules.py").write_text(f"open({str(folder / 'RAN')!r}, 'w').write('ran')\n")
    (folder / "world.json").write_text("{}")
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    record = json.loads((copy / "cell.json").read_text())
    record["game"] = {"name": "mossfall", "path": str(folder)}
    del record["facts"]
    (copy / "cell.json").write_text(json.dumps(record))
    data = view_data(copy)
    assert not (folder / "RAN").exists()
    assert data["run"]["map_source"] == "observed" and data["agents"][0]["steps"]["verbs"] == []


# ---------------------------------------------------------------------------- the command
def test_view_writes_the_page_into_the_run_directory_or_where_asked(run, tmp_path, capsys):
    assert odyssey(["view", str(run)]) == 0
    assert (run / "view.html").is_file() and str(run / "view.html") in capsys.readouterr().out
    out = tmp_path / "deep" / "page.html"
    assert write_view(run, out) == out and out.read_text().startswith("<!doctype html>")


def test_an_unfinished_run_is_viewed_as_far_as_it_went(run, tmp_path):
    import shutil

    copy = tmp_path / "unfinished"
    shutil.copytree(run, copy)
    (copy / "results.json").unlink()
    data = (copy / "trajectory.jsonl").read_bytes()
    (copy / "trajectory.jsonl").write_bytes(data[: data.index(b"\n", len(data) // 2) + 40])  # a line cut short
    view = view_data(copy)
    assert not view["run"]["finished"] and not view["agents"][0]["finished"]
    assert len(view["agents"][0]["steps"]["a"]) == len(read_trajectory(copy / "trajectory.jsonl").steps) + 1


@pytest.mark.parametrize("case", ["missing", "file", "empty", "runs", "damaged", "not started", "bad agent"])
def test_wrong_paths_and_damaged_runs_are_one_line(run, tmp_path, capsys, case):
    import shutil

    target = tmp_path / "x"
    expect = {
        "missing": "does not exist",
        "file": "is not a run directory",
        "empty": "is not a run directory",
        "runs": "holds 1 of them; view one",
        "damaged": "not a JSON line",
        "not started": "has not started playing",
        "bad agent": "has no agent 'player_9'",
    }[case]
    if case == "file":
        target.write_text("hello")
    elif case == "empty":
        target.mkdir()
    elif case == "runs":
        shutil.copytree(run, target / "mossfall" / "seed_0")
    elif case in ("damaged", "not started"):
        shutil.copytree(run, target)
        if case == "damaged":
            traj = (target / "trajectory.jsonl").read_text().splitlines()
            traj[5] = "{not json"
            (target / "trajectory.jsonl").write_text("\n".join(traj) + "\n")
        else:
            (target / "trajectory.jsonl").unlink()
    elif case == "bad agent":
        shutil.copytree(run, target)
        target = target / "agents" / "player_9"
        target.mkdir(parents=True)
    assert odyssey(["view", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("odyssey view: ") and expect in err and "\n" not in err, err
    with pytest.raises(ViewError):
        view_data(target)


def test_serve_answers_on_loopback_only_with_the_one_page(run):
    server = make_server(lambda: build_page(run))
    host, port = server.server_address[:2]
    assert host == "127.0.0.1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as reply:
            assert reply.status == 200 and reply.headers["Content-Type"].startswith("text/html")
            assert data_block(reply.read().decode())["run"]["path"] == str(run)
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/cell.json", timeout=30)
        assert err.value.code == 404
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------------------- multi-agent cells and reports
def test_a_multi_agent_cell_has_every_agent_on_one_map(tmp_path):
    pytest.importorskip("pettingzoo", reason='multi-agent cells need the "multiagent" extra')
    from odyssey_eval.runner import run_multi_cell

    from .conftest import cell, quiet

    cfg = cell(tmp_path, max_steps=30, tutorial=False, qa={"enabled": False})
    del cfg["agent"]
    cfg["agents"] = ["oracle", "random"]
    path = run_multi_cell(cfg, log=quiet).path
    data = view_data(path)
    assert [a["id"] for a in data["agents"]] == ["player_0", "player_1"]
    assert [a["name"] for a in data["agents"]] == ["oracle", "random"]
    names = [a["n"] for a in data["map"]["areas"]]
    for agent in data["agents"]:
        traj = lines(path / "agents" / agent["id"] / "trajectory.jsonl")
        assert [names[i] for i in agent["steps"]["ar"]] == [r["area"] for r in traj]
    assert data["run"]["multi"] and data["selected"] is None
    assert view_data(path / "agents" / "player_1")["selected"] == "player_1"


def test_the_report_links_each_run_to_its_viewer(run, tmp_path):
    from odyssey_eval.report import main as report

    out = tmp_path / "r" / "report.html"
    assert report([str(run), "--html", str(out)]) == 0
    (href,) = re.findall(r'<a href="([^"]+)">view</a>', out.read_text())
    page = out.parent / href
    assert page.is_file() and data_block(page.read_text())["run"]["path"] == str(run)
    out2 = tmp_path / "r2" / "report.html"
    assert report([str(run), "--html", str(out2), "--no-views"]) == 0
    assert ">view</a>" not in out2.read_text() and not (out2.parent / "report_views").exists()


def test_a_trajectory_with_unknown_layouts_is_still_shown(run, tmp_path):
    import shutil

    copy = tmp_path / "odd"
    shutil.copytree(run, copy)
    traj = lines(copy / "trajectory.jsonl")
    traj[3]["observation"] = "a hand-written observation"
    write_lines(copy / "trajectory.jsonl", traj)
    st = view_data(copy)["agents"][0]["steps"]
    assert st["ob"][3] == "a hand-written observation" and st["fb"][3] == -1 and st["health"][3] is None
