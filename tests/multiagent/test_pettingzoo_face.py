"""The PettingZoo face: PettingZoo's own API and seed tests on every game, determinism, saving, pickling."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import random
import subprocess
import sys
import textwrap
import warnings

import pytest

pytest.importorskip("pettingzoo", reason='the PettingZoo face needs the "multiagent" extra')

from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

import odyssey_env
from odyssey_env.multiagent import OdysseyParallelEnv, TextObservation, env, parallel_env

GAMES = odyssey_env.available_games()


@pytest.fixture(autouse=True)
def _quiet():
    # PettingZoo's tests warn that Text spaces are not Box/Discrete and observations not arrays: by design here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_api_and_seed_tests_pass(game):
    parallel_api_test(parallel_env(game, agents=3), num_cycles=200)
    api_test(env(game, agents=3), num_cycles=200)
    seed_test(lambda: env(game, agents=3), num_cycles=50)
    parallel_seed_test(lambda: parallel_env(game, agents=3), num_cycles=50)


@pytest.mark.parametrize("game", GAMES)
def test_api_tests_with_truncation_each_mode_valid_actions_and_tutorial(game):
    parallel_api_test(
        parallel_env(
            game,
            agents=["ada", "bo"],
            episode_end="each",
            max_cycles=30,
            valid_actions=True,
            tutorial=True,
            supplies="per_agent",
        ),
        num_cycles=60,
    )
    api_test(env(game, agents=2, max_cycles=25, valid_actions=True), num_cycles=40)


def test_faces_are_pettingzoo_classes_with_text_spaces():
    par = parallel_env("mossfall", agents=2)
    aec = env("mossfall", agents=2)
    assert isinstance(par, ParallelEnv) and isinstance(aec, AECEnv)
    assert par.possible_agents == ["player_0", "player_1"]
    assert par.observation_space("player_0") is not par.observation_space("player_1")  # seeded one by one
    assert par.action_space("player_0").contains("pick up apple")
    obs, infos = par.reset(seed=0)
    assert set(obs) == set(infos) == {"player_0", "player_1"}
    assert isinstance(obs["player_0"], str) and isinstance(obs["player_0"], TextObservation)
    assert par.observation_space("player_0").contains(obs["player_0"])
    assert json.loads(json.dumps(obs["player_0"])) == obs["player_0"]
    assert {"step", "time", "area", "reward_breakdown", "events", "quest", "invalid_action"} <= set(infos["player_0"])


def test_the_package_names_both_pettingzoo_constructors_and_the_gymnasium_module_is_a_module():
    import gymnasium as gym

    import odyssey_env.env as face

    assert odyssey_env.env is face and face.OdysseyEnv is odyssey_env.OdysseyEnv
    assert not callable(odyssey_env.env)  # a plain module: the AEC constructor is aec_env
    aec = odyssey_env.aec_env("mossfall", agents=2)
    assert isinstance(aec, AECEnv) and odyssey_env.aec_env is env
    gym.make("Odyssey/Mossfall-v0").reset(seed=0)
    assert odyssey_env.parallel_env is parallel_env


def test_import_stays_light_and_missing_pettingzoo_is_one_clear_line():
    code = textwrap.dedent("""
        import sys
        import odyssey_env
        assert "pettingzoo" not in sys.modules, "import odyssey_env imported pettingzoo"
        sys.modules["pettingzoo"] = None  # as if the extra were not installed
        try:
            odyssey_env.parallel_env
        except ModuleNotFoundError as exc:
            print(exc)
        else:
            raise SystemExit("no error")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    from odyssey_env.extras import install_command

    assert done.stdout.strip() == f'the PettingZoo face needs the "multiagent" extra: {install_command("multiagent")}'


# ---------------------------------------------------------------------- arguments
def test_agent_names_are_checked():
    assert parallel_env("mossfall", agents=["ada", "bo_2"]).possible_agents == ["ada", "bo_2"]
    for bad, match in [
        (0, "at least 1"),
        ([], "at least one"),
        (["ada", "ada"], "twice"),
        (["x y"], "letter"),
        (["apple"], "mistaken"),
        (["thorn_wolf_3"], "mistaken"),
        ("ada", "number of agents or a list"),
        (True, "number of agents or a list"),
    ]:
        with pytest.raises((ValueError, TypeError), match=match):
            parallel_env("mossfall", agents=bad)
    with pytest.raises(ValueError, match="episode_end"):
        parallel_env("mossfall", episode_end="never")
    with pytest.raises(ValueError, match="supplies"):
        parallel_env("mossfall", supplies="lots")
    with pytest.raises(ValueError, match="max_cycles"):
        parallel_env("mossfall", max_cycles=0)


def test_step_needs_exactly_one_command_per_live_agent():
    par = parallel_env("mossfall", agents=2)
    with pytest.raises(RuntimeError, match="reset"):
        par.step({"player_0": "wait", "player_1": "wait"})
    par.reset(seed=0)
    with pytest.raises(ValueError, match="missing: player_1"):
        par.step({"player_0": "wait"})
    with pytest.raises(ValueError, match="not playing: player_9"):
        par.step({"player_0": "wait", "player_1": "wait", "player_9": "wait"})
    known = "known: tutorial, valid_actions, state"
    with pytest.raises(ValueError, match=rf"unknown reset option\(s\) \['colour'\]; {known}"):
        par.reset(seed=0, options={"colour": "red"})


def test_max_cycles_truncates_everyone_and_then_the_episode_is_over():
    par = parallel_env("mossfall", agents=2, max_cycles=3)
    par.reset(seed=0)
    for _ in range(2):
        *_, trunc, _ = par.step({a: "wait" for a in par.agents})
        assert not any(trunc.values())
    *_, term, trunc, _ = par.step({a: "wait" for a in par.agents})
    assert trunc == {"player_0": True, "player_1": True} and not any(term.values())
    assert par.agents == []
    with pytest.raises(RuntimeError, match="every agent is done"):
        par.step({})


def test_render_ansi_shows_every_agent():
    par = parallel_env("mossfall", agents=["ada", "bo"], render_mode="ansi")
    par.reset(seed=0)
    text = par.render()
    assert "=== ada ===" in text and "=== bo ===" in text and "Current Location" in text


# ---------------------------------------------------------------------- determinism, saving, pickling
def _commands(par: OdysseyParallelEnv, pick: random.Random) -> dict[str, str]:
    out = {}
    for a in par.agents:
        va = par.valid_actions(a)
        out[a] = pick.choice(va[pick.choice(sorted(va))])
    return out


def _play(par: OdysseyParallelEnv, pick: random.Random, steps: int) -> list:
    trace = []
    for _ in range(steps):
        if not par.agents:
            break
        actions = _commands(par, pick)
        result = par.step(actions)
        trace.append(json.dumps([actions, *result], sort_keys=True))
    return trace


ROLLOUT = textwrap.dedent("""
    import hashlib, json, random, sys
    from odyssey_env.multiagent import parallel_env

    par = parallel_env(sys.argv[1], agents=3, tutorial=True)
    obs, infos = par.reset(seed=int(sys.argv[2]))
    pick = random.Random(5)
    digest = hashlib.sha256(json.dumps([obs, infos], sort_keys=True).encode())
    for _ in range(int(sys.argv[3])):
        actions = {}
        for a in par.agents:
            va = par.valid_actions(a)
            actions[a] = pick.choice(va[pick.choice(sorted(va))])
        digest.update(json.dumps([actions, *par.step(actions)], sort_keys=True).encode())
    print(digest.hexdigest())
""")


@pytest.mark.parametrize("game", ["quiet_bell"])
def test_rollout_is_identical_across_processes_and_hash_seeds(game):
    def run(hashseed: str, seed: int = 3, steps: int = 300) -> str:
        done = subprocess.run(
            [sys.executable, "-c", ROLLOUT, game, str(seed), str(steps)],
            env=dict(os.environ, PYTHONHASHSEED=hashseed),
            capture_output=True,
            text=True,
            timeout=180,
            check=True,
        )
        return done.stdout.strip()

    a = run("0")
    assert len(a) == 64 and a == run("98765")
    assert run("0", seed=4, steps=20) != a


@pytest.mark.parametrize("game", GAMES)
def test_save_load_through_json_continues_identically(game):
    par = parallel_env(game, agents=3, valid_actions=True, episode_end="each", supplies="per_agent")
    par.reset(seed=11)
    _play(par, random.Random(1), 60)
    saved = json.loads(json.dumps(par.save_state()))
    expected = _play(par, random.Random(2), 60)
    fresh = parallel_env(game, agents=3, valid_actions=True, episode_end="each", supplies="per_agent")
    obs = fresh.load_state(saved)
    assert set(obs) == set(saved["agents"])
    assert _play(fresh, random.Random(2), 60) == expected


def test_load_state_refuses_other_agents():
    par = parallel_env("mossfall", agents=2)
    par.reset(seed=0)
    with pytest.raises(ValueError, match="agents"):
        parallel_env("mossfall", agents=3).load_state(par.save_state())


def test_pickled_parallel_env_continues_identically():
    par = parallel_env("tallowmere", agents=["ada", "bo"], tutorial=True, max_cycles=200)
    par.reset(seed=2)
    _play(par, random.Random(0), 40)
    clone = pickle.loads(pickle.dumps(par))
    assert clone.render_mode == par.render_mode and clone.max_cycles == 200
    assert _play(clone, random.Random(9), 80) == _play(par, random.Random(9), 80)
    unreset = pickle.loads(pickle.dumps(parallel_env("mossfall", agents=2)))
    assert unreset.engine is None and unreset.possible_agents == ["player_0", "player_1"]


def _aec_trace(aec, pick: random.Random, turns: int) -> list:
    trace = []
    for agent in aec.agent_iter(turns):
        obs, reward, term, trunc, info = aec.last()
        action = None if term or trunc else pick.choice(sorted(v for c in aec.valid_actions().values() for v in c))
        trace.append(
            hashlib.sha256(
                json.dumps([agent, obs, reward, term, trunc, info, action], sort_keys=True).encode()
            ).hexdigest()
        )
        aec.step(action)
    return trace


def test_aec_save_load_mid_cycle_and_pickle_continue_identically():
    aec = env("mossfall", agents=3, valid_actions=True)
    aec.reset(seed=4)
    _aec_trace(aec, random.Random(0), 3 * 20 + 1)  # stop after the first agent of a cycle has chosen
    assert aec.agent_selection == "player_1"
    saved = json.loads(json.dumps(aec.save_state()))
    clone = pickle.loads(pickle.dumps(aec))
    expected = _aec_trace(aec, random.Random(7), 60)
    fresh = env("mossfall", agents=3, valid_actions=True)
    fresh.load_state(saved)
    assert _aec_trace(fresh, random.Random(7), 60) == expected
    assert _aec_trace(clone, random.Random(7), 60) == expected


def test_one_agent_parallel_env_plays_like_the_gymnasium_env():
    gym_env = odyssey_env.OdysseyEnv("quiet_bell", valid_actions=True)
    par = parallel_env("quiet_bell", agents=["player"], valid_actions=True)
    obs, info = gym_env.reset(seed=6)
    pobs, pinfo = par.reset(seed=6)
    assert pobs["player"] == obs and pinfo["player"] == info
    pick = random.Random(3)
    for _ in range(150):
        va = info["valid_actions"]
        action = pick.choice(va[pick.choice(sorted(va))])
        obs, reward, term, _, info = gym_env.step(action)
        pobs, prew, pterm, _, pinfo = par.step({"player": action})
        assert (pobs["player"], prew["player"], pterm["player"], pinfo["player"]) == (obs, reward, term, info)


# ---------------------------------------------------------------------- one face: the same arguments and options
FACES = {
    "gymnasium": lambda **kw: odyssey_env.OdysseyEnv("mossfall", **kw),
    "pettingzoo": lambda **kw: parallel_env("mossfall", agents=2, **kw),
}


@pytest.mark.parametrize("face", list(FACES))
def test_both_faces_refuse_unknown_reset_options_and_arguments_alike(face):
    made = FACES[face]()
    with pytest.raises(
        ValueError, match=r"^unknown reset option\(s\) \['colour'\]; known: tutorial, valid_actions, state$"
    ):
        made.reset(seed=0, options={"colour": "red", "tutorial": True})
    made.reset(seed=0, options={"options": 1})  # PettingZoo's API-test probe: accepted, and no option
    saved = made.save_state()
    with pytest.raises(ValueError, match="pass neither seed= nor the tutorial option"):
        made.reset(seed=1, options={"state": saved})
    with pytest.raises(ValueError, match=r"unknown info key\(s\) \['colour'\]; known: step, time"):
        FACES[face](info_keys=["colour"])
    with pytest.raises(ValueError, match=r"render_mode must be one of \['ansi', 'human'\], got 'rgb'"):
        FACES[face](render_mode="rgb")
    with pytest.raises(ValueError, match="unknown reward component"):
        FACES[face](reward_weights={"gold": 1.0})
    with pytest.raises(RuntimeError, match="reset"):  # one error, both Gymnasium's ResetNeeded and a RuntimeError
        FACES[face]().valid_actions(*(["player_0"] if face == "pettingzoo" else []))


def test_the_parallel_env_reports_only_the_info_keys_asked_for_as_the_gymnasium_env_does():
    gym_env = odyssey_env.OdysseyEnv("mossfall", info_keys=["events", "step"], valid_actions=True)
    par = parallel_env("mossfall", agents=["player"], info_keys=["events", "step"], valid_actions=True)
    _, info = gym_env.reset(seed=3)
    _, infos = par.reset(seed=3)
    assert list(infos["player"]) == list(info) == ["step", "events", "valid_actions"]
    *_, info = gym_env.step("wait")
    *_, infos = par.step({"player": "wait"})
    assert infos["player"] == info and list(info) == ["step", "events", "valid_actions"]
    assert pickle.loads(pickle.dumps(par)).info_keys == ("step", "events")


def test_the_parallel_env_continues_a_saved_state_given_as_a_reset_option():
    par = parallel_env("tallowmere", agents=3, episode_end="each", valid_actions=True)
    par.reset(seed=5)
    _play(par, random.Random(0), 30)
    saved = json.loads(json.dumps(par.save_state()))
    expected_obs = {a: par._last_obs[a] for a in par.agents}
    expected = _play(par, random.Random(4), 40)
    fresh = parallel_env("tallowmere", agents=3, episode_end="each")
    obs, infos = fresh.reset(options={"state": saved, "valid_actions": True})
    assert obs == expected_obs and set(infos) == set(fresh.agents) == set(saved["agents"])
    assert all("valid_actions" in i for i in infos.values())
    assert _play(fresh, random.Random(4), 40) == expected


def test_the_aec_env_continues_a_state_mid_cycle_given_as_a_reset_option():
    aec = env("mossfall", agents=3, valid_actions=True)
    aec.reset(seed=4)
    _aec_trace(aec, random.Random(0), 3 * 10 + 2)  # two agents of a cycle have chosen
    saved = json.loads(json.dumps(aec.save_state()))
    expected = _aec_trace(aec, random.Random(7), 45)
    fresh = env("mossfall", agents=3, valid_actions=True)
    fresh.reset(options={"state": saved})
    assert fresh.agent_selection == "player_2"
    assert _aec_trace(fresh, random.Random(7), 45) == expected
