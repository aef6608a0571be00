"""Several agents in one world: the engine's rules, quests, tutorial, death and views, agent by agent."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pettingzoo", reason='the PettingZoo face needs the "multiagent" extra')

from odyssey_agents.base import Task
from odyssey_agents.oracle import OracleAgent
from odyssey_env.engine import Engine
from odyssey_env.game import load_game
from odyssey_env.multiagent import OdysseyParallelEnv, parallel_env
from odyssey_env.parsing import parse
from odyssey_env.turn import Turn
from odyssey_env.world import add
from odyssey_env.worldgen import spawn_npc

A, B, C = "player_0", "player_1", "player_2"


def _nearby(observation: str) -> list[str]:
    line = next(x for x in observation.splitlines() if x.startswith("I see ") and x.endswith(" nearby."))
    return line[len("I see ") : -len(" nearby.")].split(", ")


def _engine(game: str = "mossfall", n: int = 2, **options) -> Engine:
    return Engine(
        load_game(game),
        0,
        agents=tuple(f"player_{i}" for i in range(n)),
        options={"tutorial": False, "expansion": True, **options},
    )


def _oracles(par: OdysseyParallelEnv, game: str) -> dict[str, OracleAgent]:
    agents = {a: OracleAgent(agent_id=a) for a in par.possible_agents}
    for agent in agents.values():
        agent.reset(Task(game, game, tuple(par.verbs()), 0, None))
    return agents


def _play_oracles(par: OdysseyParallelEnv, game: str, seed: int, limit: int) -> dict[str, tuple]:
    """Oracles for every agent until the episode ends; ``{agent: (step, terminated, info)}`` at its end."""
    obs, infos = par.reset(seed=seed)
    oracles = _oracles(par, game)
    ended = {}
    for _ in range(limit):
        if not par.agents:
            break
        actions = {a: oracles[a].act(obs[a], {**infos[a], "engine": par.engine}).action for a in par.agents}
        obs, _, term, trunc, infos = par.step(actions)
        for a in term:
            if term[a] or trunc[a]:
                ended[a] = (par.engine.state.step, term[a], infos[a])
    return ended


# ---------------------------------------------------------------------- a step
def test_commands_apply_in_agent_order_and_later_agents_see_earlier_effects():
    engine = _engine()
    spawn = engine.state.areas[engine.state.spawn]
    spawn.objects.clear()
    add(spawn.objects, "apple", 1)
    out = engine.step({A: "pick up apple", B: "pick up apple"})
    assert engine.state.agents[A].hands == {"apple": 1}
    assert not out[A].failed and out[B].failed  # B acted after A, on the world A left
    assert any("apple" in m for m in engine.state.feedback[B])


def test_step_rules_run_once_per_step_not_once_per_agent():
    engine = _engine(n=3)
    minute = engine.state.minute
    engine.step({A: "wait", B: "wait", C: "wait"})
    assert engine.state.step == 1 and engine.state.minute - minute == engine.game.spec.game.minutes_per_step


def test_agents_in_the_same_area_see_each_other_and_others_do_not():
    par = parallel_env("mossfall", agents=["ada", "bo", "cy"])
    obs, _ = par.reset(seed=0)
    assert "ada" not in _nearby(obs["ada"]) and {"bo", "cy"} <= set(_nearby(obs["ada"]))
    exit_ = next(iter(par.engine.state.areas[par.engine.state.spawn].exits))
    par.engine.state.areas[par.engine.state.spawn].exits[exit_].locked = False
    obs, *_ = par.step({"ada": f"enter {exit_}", "bo": "wait", "cy": "wait"})
    assert not {"bo", "cy"} & set(_nearby(obs["ada"]))
    assert "ada" not in _nearby(obs["bo"]) and "cy" in _nearby(obs["bo"])


def test_attack_is_updated_for_every_agent_even_after_one_with_no_attack():
    # the reference's attack update returned inside its per-agent loop: an agent with attack <= 0
    # stopped the update of the agents after it
    engine = _engine(n=3)
    state = engine.state
    state.agents[A].base_attack = 0
    state.agents[B].base_attack = -5
    add(state.agents[C].hands, "wooden_club", 1)
    engine.step({A: "wait", B: "wait", C: "wait"})
    club = engine.game.objects["wooden_club"].attack
    assert club > 0
    assert state.agents[C].attack == state.agents[C].base_attack + club
    assert state.agents[A].attack == 0 and state.agents[B].attack == -5


def test_rewards_events_feedback_and_progress_are_per_agent():
    engine = _engine()
    state = engine.state
    target = next(n for n, e in state.areas[state.spawn].exits.items() if not e.locked)
    out = engine.step({A: f"enter {target}", B: "jump around"})
    assert out[A].reward.exploration == 1 and out[B].reward.exploration == 0
    assert out[B].invalid and not out[A].invalid
    assert {e.kind for e in out[A].events} >= {"area_entered"}
    assert not any(e.kind == "area_entered" for e in out[B].events)
    assert any(e.kind == "invalid_action" for e in out[B].events)
    assert not any(e.kind == "invalid_action" for e in out[A].events)
    assert any(target in m for m in state.feedback[A]) and not any(target in m for m in state.feedback[B])
    assert state.agents[A].visited.keys() != state.agents[B].visited.keys()


def test_valid_actions_are_per_agent_and_sound_for_each_agent_in_a_shared_random_walk():
    """Every listed command of every agent applies without failing on the state it was listed for."""
    game = load_game("quiet_bell")
    par = parallel_env(game, agents=3, tutorial=True, supplies="per_agent")
    par.reset(seed=5)
    pick = random.Random(5)
    probe = Engine(game, 0, agents=tuple(par.possible_agents))
    for _ in range(120):
        listed = {a: par.valid_actions(a) for a in par.agents}
        saved = par.engine.save_state()
        for a, va in listed.items():
            commands = [c for cs in va.values() for c in cs]
            for command in pick.sample(commands, min(3, len(commands))):
                probe.load_state(saved)
                rule, args = parse(probe.rules, command)
                turn = Turn(probe, probe.state.agents[a])
                rule.apply(turn, *args)
                assert turn.ok, (a, command, probe.state.feedback[a])
        par.step({a: pick.choice(va[pick.choice(sorted(va))]) for a, va in listed.items()})


# ---------------------------------------------------------------------- death
def test_one_agents_death_drops_its_things_and_leaves_the_other_alone():
    engine = _engine()
    state = engine.state
    add(state.agents[B].hands, "wooden_club", 1)
    where = state.agents[B].area = next(iter(state.areas[state.spawn].exits))
    state.agents[B].home = state.spawn
    state.agents[B].hp = 0
    hp_a = state.agents[A].hp
    engine.step({A: "wait", B: "wait"})
    assert state.agents[B].area == state.spawn and state.agents[B].hp == state.agents[B].max_hp
    assert state.agents[B].deaths == 1 and state.agents[A].deaths == 0 and state.agents[A].hp == hp_a
    assert state.areas[where].objects.get("wooden_club") == 1 and not state.agents[B].hands


# ---------------------------------------------------------------------- quests
def test_a_stage_opened_by_another_agent_first_is_still_announced():
    engine = _engine()
    state = engine.state
    guide = next(h for h, n in state.npcs.items() if n.type == "old_wick")
    state.agents[A].area = state.agents[B].area = state.npcs[guide].area
    engine.step({A: f"talk to {guide}", B: "wait"})
    assert any("New objective" in m for m in state.feedback[A])
    engine.step({A: "wait", B: f"talk to {guide}"})
    told = [m for m in state.feedback[B] if "New objective" in m]
    assert told and "iron" in told[0].lower()


def test_a_boss_defeated_by_another_agent_comes_back_for_the_agent_whose_stage_needs_it():
    engine = _engine()
    state = engine.state
    quest = state.rule_data["main_quest"]["agents"]
    order = [s.id for ch in engine.game.quest.main.chapters for s in ch.stages]
    quest[A]["done"], quest[A]["open"] = order[:6], ["slay_warden"]  # A must slay the warden
    warden = spawn_npc(engine.game, state, engine.game.npcs["ash_warden"], "ember_vault", origin="quest")
    warden.hp = 1
    state.agents[B].area = "ember_vault"
    state.agents[B].base_attack = 500
    out = engine.step({A: "wait", B: f"attack {warden.handle}"})
    assert any(e.kind == "npc_defeated" for e in out[B].events)
    assert out[A].reward.quest == 0  # B's kill is not A's stage
    back = [n for n in state.npcs.values() if n.type == "ash_warden"]
    assert len(back) == 1 and back[0].hp == back[0].max_hp and back[0].area == "ember_vault"
    # A defeating it itself completes the stage and nothing comes back
    state.agents[A].area = "ember_vault"
    state.agents[A].base_attack = 500
    back[0].hp = 1
    out = engine.step({A: f"attack {back[0].handle}", B: "wait"})
    assert out[A].reward.quest == 1
    assert not [n for n in state.npcs.values() if n.type == "ash_warden"]


@pytest.mark.parametrize("game", ["mossfall", "tallowmere", "quiet_bell"])
def test_every_agent_can_complete_the_tutorial_and_its_own_quest(game):
    par = parallel_env(game, agents=3, episode_end="each", tutorial=True, supplies="per_agent")
    ended = _play_oracles(par, game, seed=1, limit=900)
    assert set(ended) == {A, B, C}
    for _, terminated, info in ended.values():
        assert terminated and info["quest"]["done"] and info["quest"]["completed"] == info["quest"]["total"]
    # each agent left the world when it finished
    assert par.engine.state.agents == {}
    tutorial = par.engine.state.rule_data["tutorial"]["agents"]
    assert all(t["finished"] for t in tutorial.values())


def test_every_agent_completes_the_tutorial_itself():
    """Each agent gets its own things to practise with: none is left waiting for the tutorial to time out."""
    par = parallel_env("mossfall", agents=3, tutorial=True)
    obs, infos = par.reset(seed=2)
    oracles = _oracles(par, "mossfall")
    done = {}
    for _ in range(120):
        actions = {a: oracles[a].act(obs[a], {**infos[a], "engine": par.engine}).action for a in par.agents}
        obs, _, _, _, infos = par.step(actions)
        for a, info in infos.items():
            for e in info["events"]:
                if e["kind"] == "tutorial_completed":
                    done[a] = e["completed"]
        if len(done) == 3:
            break
    assert done == {A: True, B: True, C: True}


def test_episode_ends_for_everyone_when_one_agent_completes_the_main_quest():
    par = parallel_env("mossfall", agents=3)
    ended = _play_oracles(par, "mossfall", seed=1, limit=600)
    steps = {s for s, _, _ in ended.values()}
    assert set(ended) == {A, B, C} and len(steps) == 1 and all(t for _, t, _ in ended.values())
    assert any(info["quest"]["done"] for _, _, info in ended.values())
    assert not all(info["quest"]["done"] for _, _, info in ended.values())  # the others were cut short
    assert par.agents == []


def test_shared_supplies_can_leave_an_agent_unable_to_finish_and_per_agent_supplies_do_not():
    shared = _engine("mossfall", n=2)
    per_agent = _engine("mossfall", n=2, supplies="per_agent")
    single = Engine(load_game("mossfall"), 0, options={"tutorial": False})

    def ore(engine):
        return sum(a.objects.get("iron_ore", 0) for a in engine.state.areas.values())

    def stock(engine):
        return sum(sum(n.inventory.values()) for n in engine.state.npcs.values() if engine.game.npcs[n.type].merchant)

    assert ore(shared) == ore(single) == 3 and ore(per_agent) == 6
    assert stock(per_agent) == 2 * stock(single) > 0
    assert shared.state.areas.keys() == per_agent.state.areas.keys()  # same world, more supplies


def test_retire_takes_an_agent_out_and_leaves_its_belongings():
    par = parallel_env("mossfall", agents=2)
    par.reset(seed=0)
    state = par.engine.state
    add(state.agents[B].hands, "wooden_club", 1)
    area = state.agents[B].area
    before = state.areas[area].objects.get("wooden_club", 0)
    par.retire(B)
    assert par.agents == [A] and B not in state.agents
    assert state.areas[area].objects.get("wooden_club", 0) == before + 1
    obs, *_ = par.step({A: "wait"})
    assert B not in _nearby(obs[A])
    with pytest.raises(ValueError, match="not playing"):
        par.retire(B)
