"""The provenance tracker: a planted craft chain gives the right edges; tracking never changes play."""

from __future__ import annotations

import json
import random

import pytest

from odyssey_env.engine import Engine
from odyssey_env.env import OdysseyEnv
from odyssey_env.game import load_game
from odyssey_env.provenance import edges_by_pair
from odyssey_env.world import add, make_objects
from odyssey_env.worldgen import spawn_npc

P = "player"


def _engine(agents: tuple[str, ...] = (P,), plant: tuple[str, ...] = ()) -> Engine:
    """An engine whose spawn area holds a workbench and ``plant``, tracked from then on."""
    engine = Engine(load_game("mossfall"), 0, agents=agents, options={"tutorial": False})
    spawn = engine.state.areas[engine.state.spawn]
    spawn.objects = {"workbench": 1}
    for thing in plant:
        add(spawn.objects, thing)
    engine.track_provenance()  # what lies there now is the world
    return engine


def _step(engine: Engine, command: str, agent: str = P, **others: str):
    out = engine.step({agent: command, **others})[agent]
    assert not out.invalid and not out.failed, (command, engine.state.feedback[agent])
    return out


def _node(graph, name: str, step: int) -> dict:
    (node,) = [n for n in graph["nodes"] if n["name"] == name and n["step"] == step]
    return node


def _edges(graph, src: dict, dst: dict) -> list[tuple[str, str, int]]:
    return sorted(
        (e["object"], e["how"], e["units"]) for e in graph["edges"] if e["src"] == src["id"] and e["dst"] == dst["id"]
    )


def test_planted_craft_chain_pick_up_craft_equip_attack():
    engine = _engine(plant=("wood_log", "stick", "leather", "thread"))
    state = engine.state

    _step(engine, "pick up wood_log")  # step 1
    _step(engine, "pick up stick")  # 2
    _step(engine, "craft 1 wooden_club")  # 3: consumes both, uses the workbench, lays the club down
    _step(engine, "pick up leather")  # 4
    _step(engine, "pick up thread")  # 5
    _step(engine, "craft 1 leather_cap")  # 6
    _step(engine, "equip leather_cap")  # 7
    _step(engine, "pick up wooden_club")  # 8
    rat = spawn_npc(engine.game, state, engine.game.npcs["thorn_wolf"], state.spawn)
    rat.hp = rat.max_hp = 10_000  # it must live to hit back
    hit_at = None
    for step in range(9, 20):
        out = _step(engine, f"attack {rat.handle}")
        if any(e.kind == "agent_hit" for e in out.events):
            hit_at = step
            break
    assert hit_at is not None, "the wolf never hit back"

    g = engine.provenance.graph()
    pick_wood, pick_stick = _node(g, "pick up", 1), _node(g, "pick up", 2)
    craft_club, craft_cap = _node(g, "craft", 3), _node(g, "craft", 6)
    pick_leather, pick_thread = _node(g, "pick up", 4), _node(g, "pick up", 5)
    equip, pick_club = _node(g, "equip", 7), _node(g, "pick up", 8)
    attack = _node(g, "attack", 9)
    world = g["nodes"][0]
    assert world["kind"] == "world" and world["id"] == 0
    assert pick_wood["agent"] == P and pick_wood["command"] == "pick up wood_log"

    assert _edges(g, world, pick_wood) == [("wood_log", "move", 1)]
    assert _edges(g, pick_wood, craft_club) == [("wood_log", "consume", 1)]
    assert _edges(g, pick_stick, craft_club) == [("stick", "consume", 1)]
    assert _edges(g, world, craft_club) == [("workbench", "use", 1)]
    assert _edges(g, craft_club, pick_club) == [("wooden_club", "move", 1)]
    assert _edges(g, pick_club, attack) == [("wooden_club", "use", 1)]
    assert _edges(g, pick_leather, craft_cap) == [("leather", "consume", 1)]
    assert _edges(g, pick_thread, craft_cap) == [("thread", "consume", 1)]
    assert _edges(g, craft_cap, equip) == [("leather_cap", "move", 1)]
    blows = [n for n in g["nodes"] if n["name"] == "combat_rhythm" and n["step"] == hit_at]
    assert len(blows) == 1 and blows[0]["agent"] == P
    assert _edges(g, equip, blows[0]) == [("leather_cap", "use", 1)]
    # nothing else points at the chain's nodes, and steps that touched nothing made no node
    assert {(e["src"], e["dst"]) for e in g["edges"] if e["dst"] == craft_club["id"]} == {
        (pick_wood["id"], craft_club["id"]),
        (pick_stick["id"], craft_club["id"]),
        (0, craft_club["id"]),
    }
    pairs = edges_by_pair(g)
    assert pairs["pick up -> craft"] == [[1, 3], [2, 3], [4, 6], [5, 6]]
    assert pairs["craft -> equip"] == [[6, 7]] and pairs["craft -> pick up"] == [[3, 8]]
    assert pairs["pick up -> attack"] == [[8, 9]]
    assert pairs["equip -> combat_rhythm"] == [[7, hit_at]]


def test_drop_then_another_agent_picks_up_links_the_two_agents():
    engine = _engine(agents=("ada", "bo"), plant=("wood_log",))
    _step(engine, "pick up wood_log", "ada", bo="wait")
    _step(engine, "drop wood_log", "ada", bo="wait")
    _step(engine, "pick up wood_log", "bo", ada="wait")
    _step(engine, "craft 1 plank", "bo", ada="wait")
    g = engine.provenance.graph(include_world=False)
    assert [(n["name"], n["agent"], n["step"]) for n in g["nodes"]] == [
        ("pick up", "ada", 1),
        ("drop", "ada", 2),
        ("pick up", "bo", 3),
        ("craft", "bo", 4),
    ]
    assert [(e["how"], e["object"]) for e in g["edges"]] == [
        ("move", "wood_log"),
        ("move", "wood_log"),
        ("consume", "wood_log"),
    ]


def test_writing_modifies_the_writable_and_uses_the_tool():
    engine = Engine(load_game("mossfall"), 0, options={"tutorial": False})
    spawn = engine.state.areas[engine.state.spawn]
    spawn.objects = {"charcoal_stick": 1}
    ((paper, _),) = make_objects(engine.game, engine.state, "parchment", 1)
    add(spawn.objects, paper)
    engine.track_provenance()
    _step(engine, "pick up charcoal_stick")
    _step(engine, f"pick up {paper}")
    _step(engine, f'write "relight the ember" {paper}')
    _step(engine, f"drop {paper}")
    g = engine.provenance.graph(include_world=False)
    pairs = edges_by_pair(g)
    assert pairs["pick up -> write"] == [[1, 3], [2, 3]]  # the tool used, the writable modified
    assert pairs["write -> drop"] == [[3, 4]]  # the drop depends on the writing, not on the pick-up
    hows = {(e["object"], e["how"]) for e in g["edges"]}
    assert ("charcoal_stick", "use") in hows and ("parchment", "modify") in hows


@pytest.mark.parametrize("game", ["mossfall", "quiet_bell"])
def test_tracking_never_changes_play_and_survives_save_load(game):
    def walk(env, pick, steps, info):
        trace = []
        for _ in range(steps):
            va = info["valid_actions"]
            action = pick.choice(va[pick.choice(sorted(va))])
            obs, reward, term, _, info = env.step(action)
            trace.append((action, obs, reward, term, json.dumps(info, sort_keys=True)))
        return trace, info

    plain, tracked = OdysseyEnv(game, valid_actions=True), OdysseyEnv(game, valid_actions=True, provenance=True)
    _, info_p = plain.reset(seed=3)
    _, info_t = tracked.reset(seed=3)
    a, _ = walk(plain, random.Random(1), 400, info_p)
    b, info_t = walk(tracked, random.Random(1), 400, info_t)
    assert a == b
    saved = json.loads(json.dumps(tracked.save_state()))
    assert "provenance" in saved and "provenance" not in plain.save_state()
    rest, _ = walk(tracked, random.Random(2), 200, info_t)
    resumed = OdysseyEnv(game, valid_actions=True, provenance=True)
    resumed.load_state(saved)
    rest2, _ = walk(resumed, random.Random(2), 200, {"valid_actions": resumed.valid_actions()})
    assert rest == rest2
    assert resumed.dependency_graph() == tracked.dependency_graph()
    g = tracked.dependency_graph(include_world=False)
    assert g["edges"] and all(e["src"] < e["dst"] for e in g["edges"])  # edges point forward in time
    steps = {n["id"]: n["step"] for n in g["nodes"]}
    assert all(steps[e["src"]] <= steps[e["dst"]] for e in g["edges"])


def test_off_by_default_and_free_when_off():
    env = OdysseyEnv("mossfall")
    env.reset(seed=0)
    assert env.engine.provenance is None
    assert env.engine.rules is env.game.rules  # the game's own rule objects: no wrapper in the step loop
    with pytest.raises(ValueError, match="provenance=True"):
        env.dependency_graph()
    tracked = OdysseyEnv("mossfall", provenance=True)
    tracked.reset(seed=0)
    assert tracked.engine.rules is not tracked.game.rules
    assert tracked.game.rules.actions["wait"] is env.game.rules.actions["wait"]  # the game is left alone


def test_tutorial_nodes_are_marked_and_left_out_by_default():
    env = OdysseyEnv("mossfall", tutorial=True, provenance=True)
    env.reset(seed=0)
    pouch = next(h for h in env.engine.state.areas["drill_barn"].objects if h.startswith("small_pouch"))
    env.step(f"pick up {pouch}")
    env.step(f"equip {pouch}")
    full = env.dependency_graph(include_tutorial=True)
    assert any(n.get("tutorial") for n in full["nodes"])
    assert not any(n.get("tutorial") for n in env.dependency_graph()["nodes"])
