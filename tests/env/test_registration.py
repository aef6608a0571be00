"""Registration as RL code meets it: ids found after pip install alone, episodes that end, clear refusals."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

import _odyssey_gym_hook
import odyssey_env
from odyssey_env.registration import DEFAULT_MAX_EPISODE_STEPS, ENTRY_POINT, register_envs

ROOT = Path(__file__).resolve().parents[2]
PTH = Path(sysconfig.get_paths()["purelib"]) / "odyssey-gym.pth"


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd="/", env={**os.environ, **env}, timeout=120
    )


def test_a_process_that_never_imports_odyssey_env_makes_every_id():
    assert PTH.is_file(), f"{PTH} is missing: reinstall the package (pip install -e .) so that setup.py writes it"
    out = _python(
        "import importlib.util, sys\n"
        "assert importlib.util.find_spec('gymnasium') is not None  # looking, as libraries do, imports nothing\n"
        "import gymnasium as gym\n"
        "ids = sorted(i for i in gym.registry if i.startswith('Odyssey/'))\n"
        "print(ids)\n"
        "loader = gym.__loader__\n"
        "print('odyssey_env.game' in sys.modules, gym.__spec__.loader is loader, type(loader).__name__)\n"
        "env = gym.make('Odyssey/Mossfall-v0', max_actions=128, observation='state')\n"
        "print(env.spec.max_episode_steps, env.action_space)\n"
    )
    assert out.returncode == 0, out.stderr
    ids, modules, episode = out.stdout.splitlines()
    assert ids == str(sorted(odyssey_env.env_id(n) for n in odyssey_env.available_games()))
    # registering loaded no engine code, and left Gymnasium's own loader in place
    assert modules == "False True SourceFileLoader"
    assert episode == "500 Discrete(128)"


def test_the_hook_can_be_switched_off():
    out = _python("import gymnasium as gym; gym.make('Odyssey/Mossfall-v0')", ODYSSEY_GYM_AUTOREGISTER="0")
    assert out.returncode != 0 and "NamespaceNotFound" in out.stderr


def test_a_failing_registration_warns_and_never_breaks_gymnasium(monkeypatch):
    def broken() -> None:
        raise OSError("games folder unreadable")

    monkeypatch.setattr("odyssey_env.registration.register_envs", broken)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _odyssey_gym_hook._register()
    assert [str(w.message) for w in caught] == [
        "odyssey-gym could not register its Gymnasium ids (OSError: games folder unreadable); "
        "import odyssey_env to see why"
    ]


def test_the_packaging_points_at_what_exists():
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["gymnasium.envs"]["__root__"] == (
        "odyssey_env.registration:register_envs"
    )
    assert project["tool"]["setuptools"]["py-modules"] == ["_odyssey_gym_hook"]
    setup = (ROOT / "setup.py").read_text()
    assert 'PTH_LINE = "import _odyssey_gym_hook; _odyssey_gym_hook.install()\\n"' in setup
    if PTH.is_file():
        assert PTH.read_text() == "import _odyssey_gym_hook; _odyssey_gym_hook.install()\n"
    register_envs()  # twice is harmless: registered ids are left alone
    assert gym.spec("Odyssey/Mossfall-v0").entry_point == ENTRY_POINT


def test_episodes_end_at_the_papers_budget_unless_told_otherwise():
    assert gym.spec("Odyssey/QuietBell-v0").max_episode_steps == DEFAULT_MAX_EPISODE_STEPS == 500
    env = gym.make("Odyssey/Mossfall-v0", max_episode_steps=3)
    env.reset(seed=0)
    ends = [env.step("wait")[3] for _ in range(3)]
    assert ends == [False, False, True]
    assert "TimeLimit" not in str(gym.make("Odyssey/Mossfall-v0", max_episode_steps=-1))
    envs = gym.make_vec("Odyssey/Mossfall-v0", num_envs=2, max_episode_steps=2)
    envs.reset(seed=0)
    assert [envs.step(["wait", "wait"])[3].tolist() for _ in range(2)] == [[False, False], [True, True]]
    envs.close()


def test_registered_games_get_the_budget_too(tmp_path):
    import shutil

    from odyssey_env.game import GAMES_DIR

    folder = tmp_path / "copse"
    shutil.copytree(GAMES_DIR / "mossfall", folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    ident = odyssey_env.register_game(folder, name="copse_for_registration")
    assert gym.spec(ident).max_episode_steps == 500 and gym.spec(ident).entry_point == ENTRY_POINT
    env = gym.make(ident, max_actions=16)
    assert env.action_space == gym.spaces.Discrete(16)


def test_render_modes_it_cannot_draw_are_refused_in_one_line():
    with pytest.raises(TypeError) as caught:
        gym.make("Odyssey/Mossfall-v0", render_mode="rgb_array")
    message = str(caught.value)
    assert "render_mode='rgb_array' is not supported" in message and "'ansi'" in message and "\n" not in message
    assert gym.make("Odyssey/Mossfall-v0", render_mode="ansi").render_mode == "ansi"
