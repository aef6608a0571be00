"""The oracle proves the shipped games solvable, and the random baseline shows they are not trivial.

For every shipped game among mossfall, quiet_bell, tallowmere, gavelmoor, lazaret and rust_throne (a game is
skipped only while its folder does not exist; mirror_salt has its own in tests/games) and seeds 0-9, the
oracle must pass the tutorial and then complete every main-quest stage
within 500 steps, without ever sending an invalid or refused command. A seeded random agent must not
complete the quest in the same budget. Smaller tests pin down the parts: fight forecasts match the
engine, the planner knows every condition type of the quest vocabulary, decisions are deterministic.
"""

from __future__ import annotations

import pytest

from odyssey_agents.oracle import OracleAgent, combat, current_goals, is_valid
from odyssey_agents.oracle.planner import Planner
from odyssey_agents.oracle.solve import solve
from odyssey_agents.oracle.view import View
from odyssey_env.game import GAMES_DIR

GAMES = ("mossfall", "quiet_bell", "tallowmere", "gavelmoor", "lazaret", "rust_throne")
SEEDS = range(10)
BUDGET = 500


def _shipped(game: str) -> bool:
    return (GAMES_DIR / game / "world.json").is_file()


def _need(game: str) -> None:
    if not _shipped(game):
        pytest.skip(f"game {game!r} is not in odyssey_env/games yet")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("game", GAMES)
def test_oracle_completes_the_main_quest(game: str, seed: int, record_property) -> None:
    _need(game)
    s = solve(game, seed, budget=BUDGET)
    record_property("stages", f"{s.stages}/{s.total}")
    record_property("steps", s.steps)
    record_property("tutorial_steps", s.tutorial_steps)
    assert s.invalid == 0 and s.failed == 0, f"the oracle sent bad commands: {s}"
    if s.tutorial_completed is not None:
        assert s.tutorial_completed, f"the oracle did not pass the tutorial: {s}"
    assert s.stages == s.total and s.terminated, f"{game} seed {seed}: {s.stages}/{s.total} stages in {s.steps} steps"
    assert s.steps <= BUDGET


@pytest.mark.parametrize("game", GAMES)
def test_oracle_passes_the_tutorial(game: str) -> None:
    _need(game)
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game, tutorial=True)
    obs, info = env.reset(seed=0)
    if not info["in_tutorial"]:
        pytest.skip(f"{game} has no tutorial")
    agent = OracleAgent(env)
    total = info["tutorial"]["total"]
    for steps in range(1, 151):
        obs, _, _, _, info = env.step(agent.act(obs, info).action)
        done = [e for e in info["events"] if e["kind"] == "tutorial_completed"]
        if done:
            assert done[0]["completed"], "the tutorial ran out of time instead of being completed"
            assert not info["in_tutorial"] and info["area"] == env.engine.state.spawn
            assert steps >= total
            return
    pytest.fail(f"still in the tutorial after {steps} steps")


@pytest.mark.parametrize("game", GAMES)
def test_random_agent_does_not_complete_the_quest(game: str) -> None:
    _need(game)
    from odyssey_agents.base import Task
    from odyssey_agents.random_agent import RandomAgent
    from odyssey_env.env import OdysseyEnv

    for seed in (0, 1):
        env = OdysseyEnv(game, tutorial=True, valid_actions=True)
        obs, info = env.reset(seed=seed)
        agent = RandomAgent()
        agent.reset(Task(game=game, title=env.game.title, verbs=tuple(env.verbs()), seed=seed))
        played = 0
        terminated = False
        while played < BUDGET and not terminated:
            in_tutorial = info["in_tutorial"]
            obs, _, terminated, _, info = env.step(agent.act(obs, info).action)
            played += not in_tutorial
        assert not terminated and info["quest"]["completed"] < info["quest"]["total"]


# ----------------------------------------------------------------------------- the parts
def test_planner_knows_the_whole_condition_vocabulary() -> None:
    from odyssey_env.quests.conditions import VOCABULARY

    missing = [name for name in VOCABULARY if not hasattr(Planner, f"_c_{name}")]
    assert not missing, f"the oracle has no plan for condition type(s) {missing}"


def test_registry_builds_the_oracle() -> None:
    from odyssey_agents.registry import agent_class

    cls = agent_class("oracle")
    assert cls is OracleAgent and cls.privileged and cls.name == "oracle"


def test_oracle_reads_the_engine_from_info() -> None:
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv("mossfall")
    obs, info = env.reset(seed=4)
    agent = OracleAgent()
    with pytest.raises(RuntimeError, match="privileged"):
        agent.act(obs, info)
    decision = agent.act(obs, {**info, "engine": env.engine})
    assert is_valid(env.engine, "player", decision.action)


def test_decisions_are_deterministic() -> None:
    from odyssey_env.env import OdysseyEnv

    def actions(seed: int) -> list[str]:
        env = OdysseyEnv("mossfall")
        obs, info = env.reset(seed=seed)
        agent = OracleAgent(env)
        out = []
        for _ in range(40):
            d = agent.act(obs, info)
            out.append(d.action)
            obs, _, terminated, _, info = env.step(d.action)
            if terminated:
                break
        return out

    assert actions(3) == actions(3)


def test_goals_come_from_the_quest_rules() -> None:
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv("mossfall")
    env.reset(seed=0)
    goals = current_goals(env.engine, "player")
    assert [g.type for g in goals] == ["talked_to"]


def test_is_valid_accepts_amount_ranges_and_any_text() -> None:
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv("mossfall")
    env.reset(seed=0)
    engine = env.engine
    assert is_valid(engine, "player", "wait")
    assert not is_valid(engine, "player", "fly away")
    assert not is_valid(engine, "player", "enter ember_vault")  # not a neighbor
    area = engine.state.areas[engine.state.agents["player"].area]
    area.objects["iron_ore"] = 3
    pouch = next(h for h in area.objects if h.startswith("small_pouch"))
    env.step(f"equip {pouch}")
    assert is_valid(engine, "player", f"store 2 iron_ore {pouch}")  # between the listed 1 and max
    assert not is_valid(engine, "player", f"store 9 iron_ore {pouch}")


def _fight_setup(game: str, seed: int, npc_type: str):
    """An engine with a fresh enemy of ``npc_type`` beside the player, and no other enemy there."""
    from odyssey_env.env import OdysseyEnv
    from odyssey_env.worldgen import spawn_npc

    env = OdysseyEnv(game)
    env.reset(seed=seed)
    engine = env.engine
    state = engine.state
    area = state.areas[state.agents["player"].area]
    for other in list(area.npcs):
        if engine.game.npcs[state.npcs[other].type].hostile:
            area.npcs.remove(other)
            del state.npcs[other]
    npc = spawn_npc(engine.game, state, engine.game.npcs[npc_type], area.name)
    return env, npc


@pytest.mark.parametrize("policy", combat.POLICIES)
@pytest.mark.parametrize(("npc_type", "seed"), [("thorn_wolf", 0), ("cinder_imp", 1), ("ash_warden", 2)])
def test_fight_simulation_is_exact(npc_type: str, seed: int, policy: str) -> None:
    """Following a policy in the engine ends exactly as simulating it said (health and steps)."""
    env, npc = _fight_setup("mossfall", seed, npc_type)
    engine = env.engine
    agent = engine.state.agents["player"]
    agent.hp = agent.max_hp = 300  # long enough to see every fight to its end
    env.step(f"attack {npc.handle}")  # engage
    view = View(engine, "player")
    sim = combat.simulate(
        policy,
        agent.hp,
        agent.max_hp,
        agent.attack,
        agent.defense,
        agent.stamina,
        [combat.foe_of(view, npc)],
        combat.Clock(view),
    )
    assert sim.won
    steps = 0
    while npc.handle in engine.state.npcs:
        view = View(engine, "player")
        action, target = combat.choose(
            policy,
            agent.hp,
            agent.max_hp,
            agent.attack,
            agent.defense,
            agent.stamina,
            [combat.foe_of(view, npc)],
            combat.Clock(view).modifier(1),
        )
        env.step(f"attack {target.handle}" if action == "attack" else action)
        steps += 1
    assert (agent.hp, steps) == (sim.hp_left, sim.steps)


def test_oracle_wins_a_fight_as_forecast() -> None:
    env, npc = _fight_setup("mossfall", 0, "thorn_wolf")
    engine = env.engine
    view = View(engine, "player")
    expected = combat.forecast(view, [combat.foe_of(view, npc)])
    from odyssey_env.quests.spec import Condition

    goal = Condition(type="npc_defeated", npc="thorn_wolf")
    planner = Planner()
    steps = 0
    while npc.handle in engine.state.npcs:
        env.step(planner.decide(engine, [goal])[0])
        steps += 1
        assert steps <= expected.steps + 2
    assert engine.state.agents["player"].hp >= expected.hp_left - npc.attack


def test_safe_policy_never_strikes_a_guard() -> None:
    foe = combat.Foe("x", 50, 10, 0, ("defend", "attack", "wait"), 0)
    action, _ = combat.choose("safe", 100, 100, 20, 0, 1.0, [foe], 1.0)
    assert action == "wait"
    foe = combat.Foe("x", 50, 10, 0, ("attack",), 0)
    action, _ = combat.choose("safe", 100, 100, 20, 0, 1.0, [foe], 1.0)
    assert action == "defend"
    foe = combat.Foe("x", 15, 10, 0, ("attack",), 0)
    action, target = combat.choose("safe", 100, 100, 20, 0, 1.0, [foe], 1.0)
    assert action == "attack" and target is foe  # a killing blow is always taken


def test_oracle_prepares_when_a_fight_would_be_lost() -> None:
    """Facing an enemy it cannot beat safely yet, the oracle does not attack it; it gets stronger first."""
    from odyssey_env.quests.spec import Condition

    env, npc = _fight_setup("mossfall", 0, "cinder_imp")
    engine = env.engine
    engine.state.agents["player"].hp = 20
    planner = Planner()
    planner.view = View(engine, "player")
    assert not planner.fight_ok(combat.forecast(planner.view, [combat.foe_of(planner.view, npc)]))
    for goals in ([], [Condition(type="npc_defeated", npc="cinder_imp")]):
        command, _ = planner.decide(engine, goals)
        assert command != f"attack {npc.handle}"
        assert is_valid(engine, "player", command)


def test_clock_knows_the_danger_hours() -> None:
    """The forecast's enemy-attack modifier is the one the engine will apply, step by step."""
    _need("quiet_bell")
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv("quiet_bell")
    env.reset(seed=3)
    engine = env.engine
    predicted = [combat.Clock(View(engine, "player")).modifier(k) for k in range(1, 200)]
    actual = []
    for _ in range(199):
        env.step("wait")
        actual.append(engine.state.modifiers["enemy_attack"])
    assert predicted == pytest.approx(actual)


@pytest.mark.parametrize("game", ["mossfall", "quiet_bell"])
def test_resumed_oracle_decides_as_an_uninterrupted_one(game: str, tmp_path) -> None:
    """Checkpoint (env state + agent memory) mid-episode, resume in fresh objects: same commands."""
    _need(game)
    from odyssey_env.env import OdysseyEnv

    def play(env, agent, obs, info, n):
        out = []
        for _ in range(n):
            d = agent.act(obs, info)
            out.append(d.action)
            obs, _, terminated, _, info = env.step(d.action)
            if terminated:
                break
        return out, obs, info

    env = OdysseyEnv(game, tutorial=True)
    obs, info = env.reset(seed=5)
    agent = OracleAgent(env)
    _, obs, info = play(env, agent, obs, info, 90)
    saved = env.save_state()
    agent.save(tmp_path)
    straight, _, _ = play(env, agent, obs, info, 120)

    env2 = OdysseyEnv(game, tutorial=True)
    obs2 = env2.load_state(saved)
    agent2 = OracleAgent(env2)
    agent2.load(tmp_path)
    resumed, _, _ = play(env2, agent2, obs2, info, 120)
    assert resumed == straight


def test_a_new_episode_resets_the_oracle() -> None:
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv("mossfall")
    obs, info = env.reset(seed=1)
    agent = OracleAgent(env)
    for _ in range(30):
        obs, _, _, _, info = env.step(agent.act(obs, info).action)
    obs, info = env.reset(seed=1)
    fresh = OracleAgent(env)
    assert agent.act(obs, info).action == fresh.act(obs, info).action
    assert agent.stats()["steps"] == 1


def _locked_belfry(with_pick: str | None):
    """Quiet Bell with the player on the spiral stair and the belfry (a dead end) locked without a key."""
    from odyssey_env.env import OdysseyEnv
    from odyssey_env.world import add

    env = OdysseyEnv("quiet_bell")
    env.reset(seed=0)
    state = env.engine.state
    stair = state.areas["spiral_stair"]
    for h in list(stair.npcs):
        stair.npcs.remove(h)
        del state.npcs[h]
    state.agents["player"].area = "spiral_stair"
    stair.exits["belfry_crown"].locked = state.areas["belfry_crown"].exits["spiral_stair"].locked = True
    if with_pick == "hand":
        add(state.agents["player"].hands, "bent_lockpick")
    elif with_pick == "ground":
        add(stair.objects, "bent_lockpick")
    return env


@pytest.mark.parametrize(("pick", "expected"), [("hand", "lockpick belfry_crown"), ("ground", "pick up bent_lockpick")])
def test_locked_way_without_key_is_lockpicked(pick: str, expected: str) -> None:
    _need("quiet_bell")
    from odyssey_env.quests.spec import Condition

    env = _locked_belfry(pick)
    command, _ = Planner().decide(env.engine, [Condition(type="in_area", area="belfry_crown")])
    assert command == expected


def test_oracle_picks_its_way_in() -> None:
    _need("quiet_bell")
    from odyssey_env.quests.spec import Condition

    env = _locked_belfry("hand")
    engine = env.engine
    planner = Planner()
    goal = Condition(type="in_area", area="belfry_crown")
    for _ in range(60):
        command, _ = planner.decide(engine, [goal])
        assert is_valid(engine, "player", command)
        env.step(command)
        if engine.state.agents["player"].area == "belfry_crown":
            return
    pytest.fail("never got through the picked lock")


def test_text_that_does_not_fit_is_not_valid() -> None:
    from odyssey_env.env import OdysseyEnv
    from odyssey_env.world import add

    env = OdysseyEnv("mossfall")
    env.reset(seed=0)
    engine = env.engine
    agent = engine.state.agents["player"]
    add(agent.hands, "charcoal_stick")
    bark = engine.state.new_handle("birch_bark")
    from odyssey_env.state import Instance

    engine.state.instances[bark] = Instance(type="birch_bark")
    add(agent.hands, bark)
    limit = engine.game.objects["birch_bark"].max_text
    assert is_valid(engine, "player", f'write "{"a" * limit}" {bark}')
    assert not is_valid(engine, "player", f'write "{"a" * (limit + 1)}" {bark}')


# ----------------------------------------------------------------------------- a game of every condition
#: Stages that use the condition types (and quest shapes) the shipped games do not: a DAG with parallel
#: stages, levels, selling, eating, stage_completed inside all_of, drops in a given area, any-kind kills,
#: text left in an area, any_of, armor, visiting most areas, leaving and re-entering, counts, the 'did'
#: predicate, and several objects in one area. The world is base's, with the eat and lockpick verbs on.
DRILL_STAGES = [
    {"id": "grow", "requires": [], "done": {"type": "level_at_least", "count": 2}},
    {"id": "trade", "requires": [], "done": {"type": "object_sold", "object": "flax"}},
    {"id": "snack", "requires": ["trade"], "done": {"type": "object_eaten", "object": "apple"}},
    {
        "id": "home",
        "requires": ["grow", "snack"],
        "done": {
            "type": "all_of",
            "conditions": [{"type": "stage_completed", "stage": "grow"}, {"type": "in_area", "area": "hearth_square"}],
        },
    },
    {"id": "stone", "done": {"type": "object_dropped", "object": "stone", "area": "reed_marsh"}},
    {"id": "hunt", "done": {"type": "defeated_n", "count": 3}},
    {"id": "sign", "done": {"type": "text_equals_in", "text": "hello", "area": "smithy_yard"}},
    {
        "id": "either",
        "done": {
            "type": "any_of",
            "conditions": [
                {"type": "npc_defeated", "npc": "cinder_imp"},
                {"type": "object_bought", "object": "parchment"},
            ],
        },
    },
    {"id": "cap", "done": {"type": "equipped_any_of", "objects": ["leather_cap", "leather_vest"]}},
    {"id": "roam", "done": {"type": "visited_k_of", "count": 5}},
    {"id": "vault", "done": {"type": "in_area", "area": "ember_vault"}},
    {"id": "back", "done": {"type": "area_entered", "area": "ember_vault"}},
    {"id": "planks", "done": {"type": "has_item_count", "object": "plank", "count": 4}},
    {"id": "pack", "done": {"type": "predicate", "name": "did", "args": {"kind": "object_stored", "object": "stone"}}},
    {
        "id": "look",
        "done": {"type": "predicate", "name": "did", "args": {"kind": "object_inspected", "object": "anvil"}},
    },
    {"id": "pile", "done": {"type": "object_in_area", "object": "brick", "area": "hearth_square", "count": 2}},
]


@pytest.fixture(scope="module")
def drill_game(tmp_path_factory) -> str:
    import json

    folder = tmp_path_factory.mktemp("drill")
    world = json.loads((GAMES_DIR / "mossfall" / "world.json").read_text(encoding="utf-8"))
    world["game"].update(name="drill", verbs=["eat", "lockpick"])
    stages = [{"title": s["id"], "hint": "", **s} for s in DRILL_STAGES]
    quest = {
        "main": {"title": "Drill", "chapters": [{"id": "c1", "title": "Drill", "stages": stages}]},
        "side_quests": {"enabled": True},
    }
    (folder / "world.json").write_text(json.dumps(world), encoding="utf-8")
    (folder / "quest.json").write_text(json.dumps(quest), encoding="utf-8")
    return str(folder)


def test_drill_game_uses_the_rest_of_the_vocabulary(drill_game: str) -> None:
    from odyssey_env.game import load_game
    from odyssey_env.quests.conditions import VOCABULARY

    used = set()
    stack = [s.done for s in load_game(drill_game).quest.stages()]
    while stack:
        c = stack.pop()
        used.add(c.type)
        stack.extend(c.conditions)
    shipped = {"talked_to", "object_crafted", "holds_category", "text_written", "npc_defeated"}
    assert used | shipped >= set(VOCABULARY)


@pytest.mark.parametrize("seed", range(3))
def test_oracle_completes_the_drill_game(drill_game: str, seed: int) -> None:
    s = solve(drill_game, seed, budget=BUDGET)
    assert s.invalid == 0 and s.failed == 0
    assert s.solved, f"drill seed {seed}: {s.stages}/{s.total} stages in {s.steps} steps"


def test_oracle_gets_stronger_before_a_boss_it_would_lose_to() -> None:
    """A boss far too strong for a fresh agent: the oracle trains and arms itself, then wins."""
    from odyssey_env.env import OdysseyEnv
    from odyssey_env.quests.spec import Condition
    from odyssey_env.worldgen import spawn_npc

    env = OdysseyEnv("mossfall")
    env.reset(seed=0)
    engine = env.engine
    boss = spawn_npc(engine.game, engine.state, engine.game.npcs["ash_warden"], "reed_marsh")
    boss.attack, boss.hp, boss.max_hp = 60, 300, 300
    agent = engine.state.agents["player"]
    planner = Planner()
    goal = Condition(type="npc_defeated", npc="ash_warden")
    first_blow = None
    for _ in range(800):
        command, _ = planner.decide(engine, [goal])
        if command == f"attack {boss.handle}" and first_blow is None:
            first_blow = (agent.level, agent.attack)
        env.step(command)
        if boss.handle not in engine.state.npcs:
            break
    assert boss.handle not in engine.state.npcs, "the boss is still standing"
    assert first_blow is not None and first_blow[0] > 1 and first_blow[1] > engine.game.spec.agent.attack
