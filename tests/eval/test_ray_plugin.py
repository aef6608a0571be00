"""The Ray launcher's plugin as Hydra sees it, without Ray: these run in the main suite (the sweeps on a
real cluster are in test_ray_launcher.py, which needs the ``ray`` extra)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("hydra")

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
        "from odyssey_eval.run import CONFIG_DIR\n"
        "names = [f'{p.__module__}.{p.__name__}' for p in Plugins.instance().discover(Launcher)]\n"
        "assert 'hydra_plugins.odyssey_ray_launcher.ray_launcher.RayLauncher' in names, names\n"
        "with initialize_config_dir(version_base='1.3', config_dir=str(CONFIG_DIR)):\n"
        "    cfg = compose('run', overrides=['launcher=ray'], return_hydra_config=True)\n"
        "launcher = cfg.hydra.launcher\n"
        "assert launcher._target_ == 'hydra_plugins.odyssey_ray_launcher.ray_launcher.RayLauncher', launcher\n"
        "assert (launcher.address, launcher.num_cpus, launcher.max_retries) == ('local', 1, 0), launcher\n"
        "assert 'ray' not in sys.modules\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT / "tests", capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


@pytest.mark.parametrize(("address", "loopback"), [
    ("local", True), ("127.0.0.1:6379", True), ("127.3.2.1:6379", True), ("localhost:6379", True),
    ("[::1]:6379", True), ("ray://127.0.0.1:10001", True), ("10.0.0.5:6379", False),
    ("ray://head.cluster:10001", False), ("192.0.2.2:6379", False), ("garbage", False),
])
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
