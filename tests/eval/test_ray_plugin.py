"""The Ray launcher's plugin as Hydra sees it, without Ray: these run in the main suite (the sweeps on a
real cluster are in test_ray_launcher.py, which needs the ``ray`` extra)."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

pytest.importorskip("hydra")

from hydra_plugins.odyssey_ray_launcher import _core
from hydra_plugins.odyssey_ray_launcher._core import is_loopback

ROOT = Path(__file__).resolve().parents[2]


def test_hydra_finds_the_plugin_without_importing_ray():
    """Hydra imports every module of the ``hydra_plugins`` namespace when it starts: ours must be there
    (a namespace package: no ``hydra_plugins/__init__.py``), register its config, and not import Ray."""
    assert not (ROOT / "hydra_plugins" / "__init__.py").exists()
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "from hydra.core.plugins import Plugins\n"
        "from hydra.plugins.launcher import Launcher\n"
        "from hydra import compose, initialize_config_dir\n"
        "from odyssey_eval.configs import CONFIG_DIR\n"
        "names = [f'{p.__module__}.{p.__name__}' for p in Plugins.instance().discover(Launcher)]\n"
        "assert 'hydra_plugins.odyssey_ray_launcher.ray_launcher.RayLauncher' in names, names\n"
        "with initialize_config_dir(version_base='1.3', config_dir=str(CONFIG_DIR)):\n"
        "    cfg = compose('run', overrides=['launcher=ray'], return_hydra_config=True)\n"
        "launcher = cfg.hydra.launcher\n"
        "assert launcher._target_ == 'hydra_plugins.odyssey_ray_launcher.ray_launcher.RayLauncher', launcher\n"
        "assert (launcher.address, launcher.num_cpus, launcher.max_retries) == ('local', 1, 0), launcher\n"
        "assert 'ray' not in sys.modules\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT / "tests", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("local", True),
        ("127.0.0.1:6379", True),
        ("127.3.2.1:6379", True),
        ("localhost:6379", True),
        ("[::1]:6379", True),
        ("ray://127.0.0.1:10001", True),
        ("10.0.0.5:6379", False),
        ("ray://head.cluster:10001", False),
        ("192.0.2.2:6379", False),
        ("garbage", False),
    ],
)
def test_which_addresses_are_loopback(address, loopback):
    assert is_loopback(address) is loopback


def test_auto_is_loopback_when_the_cluster_it_finds_is(tmp_path, monkeypatch):
    """``auto`` reads what Ray would: ``RAY_ADDRESS``, else the address ``ray start`` recorded."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    assert not is_loopback("auto")  # no cluster recorded
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text("127.0.0.1:6380\n")
    assert is_loopback("auto")
    (tmp_path / "ray" / "ray_current_cluster").write_text("10.1.2.3:6379\n")
    assert not is_loopback("auto")
    monkeypatch.setenv("RAY_ADDRESS", "localhost:6379")
    assert is_loopback("auto")


class FlakyRay(types.ModuleType):
    """Stands in for ``ray`` where a Ray Client server fails to start the first ``failures`` sessions."""

    def __init__(self, failures: int):
        super().__init__("ray")
        self.failures, self.calls = failures, []

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs) -> None:
        self.calls.append(kwargs)
        if len(self.calls) <= self.failures:
            raise ConnectionAbortedError(
                "Initialization failure from server:\nTraceback (most recent call last):\n"
                "  ...\nRuntimeError: Starting Ray client server failed.\n"
            )


@pytest.fixture
def flaky_ray(monkeypatch):
    def install(failures: int) -> FlakyRay:
        fake = FlakyRay(failures)
        monkeypatch.setitem(sys.modules, "ray", fake)
        monkeypatch.setattr(_core.time, "sleep", lambda s: None)
        for name in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_DEDUP_LOGS"):
            monkeypatch.delenv(name, raising=False)
        return fake

    return install


def test_a_ray_client_session_that_fails_to_start_is_tried_again(flaky_ray, caplog):
    fake = flaky_ray(failures=2)
    assert _core.connect("ray://127.0.0.1:10001", {"namespace": "n"}) is fake
    assert len(fake.calls) == 3 and all(c["namespace"] == "n" for c in fake.calls)
    retries = [r.getMessage() for r in caplog.records if "trying again" in r.getMessage()]
    assert len(retries) == 2 and "RuntimeError: Starting Ray client server failed." in retries[0]


def test_a_ray_client_session_that_never_starts_is_one_line(flaky_ray):
    from odyssey_agents.errors import ConfigError

    fake = flaky_ray(failures=3)
    with pytest.raises(ConfigError) as info:
        _core.connect("ray://127.0.0.1:10001", {})
    assert len(fake.calls) == 3
    assert str(info.value) == (
        "launcher=ray: cannot connect to Ray at hydra.launcher.address=ray://127.0.0.1:10001 (Initialization "
        "failure from server: RuntimeError: Starting Ray client server failed.); start a cluster with `ray start "
        "--head` or set hydra.launcher.address"
    )
