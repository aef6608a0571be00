"""``odyssey run``: the Hydra application that plays cells and sweeps of cells.

    odyssey run game=base agent=random seed=0
    odyssey run -m agent=random,oracle game=base,remnant,mark seed=0,1,2 launcher=joblib
    odyssey run agents=[oracle,random,long_context] llm=scripted game=base   # one shared world

Config groups live in ``odyssey_eval/conf/`` (game, agent, llm, eval, launcher). Every cell writes its own run
directory (see :mod:`odyssey_eval.rundir`); rerunning a command skips finished cells and resumes
unfinished ones, so a sweep that was interrupted is completed by running it again.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["CONFIG_DIR", "LAUNCHER_PLUGINS", "main"]

CONFIG_DIR = Path(__file__).resolve().parent / "conf"

#: launcher preset -> (module the Hydra plugin installs, extra that brings it)
LAUNCHER_PLUGINS: dict[str, tuple[str, str]] = {
    "joblib": ("hydra_plugins.hydra_joblib_launcher", "eval"),
    "submitit_local": ("hydra_plugins.hydra_submitit_launcher", "slurm"),
    "submitit": ("hydra_plugins.hydra_submitit_launcher", "slurm"),
    "ray": ("hydra_plugins.hydra_ray_launcher", "ray"),
}


def _require(module: str, extra: str, what: str) -> None:
    """Stop with the install line when ``module`` is missing (found without importing it: Hydra's
    plugins are heavy)."""
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package (hydra_plugins) is missing
        found = False
    if not found:
        raise SystemExit(f"odyssey run: {what} needs the {extra!r} extra: pip install \"odyssey-gym[{extra}]\"")


def _check_launcher(argv: Sequence[str]) -> None:
    for arg in argv:
        name, _, value = arg.partition("=")
        if name.lstrip("+~") == "agents" and value not in ("", "null"):
            _require("pettingzoo", "multiagent", "agents=[...] (several agents in one world)")
        if name.lstrip("+~") in ("launcher", "hydra/launcher") and value in LAUNCHER_PLUGINS:
            module, extra = LAUNCHER_PLUGINS[value]
            _require(module, extra, f"launcher={value}")


def task(cfg: Any) -> dict[str, Any]:
    """Hydra's task function: one cell. Module-level so launchers can pickle it."""
    from omegaconf import OmegaConf

    from odyssey_eval.runner import run_cell

    plain = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    plain.pop("hydra", None)
    if plain.get("agents"):  # several agents in one world
        from odyssey_eval.multirunner import run_multi_cell

        plain.pop("agent", None)
        outcome = run_multi_cell(plain, config_yaml=OmegaConf.to_yaml(cfg, resolve=True))
    else:
        plain.pop("agents", None)
        plain.pop("multiagent", None)
        outcome = run_cell(plain, config_yaml=OmegaConf.to_yaml(cfg, resolve=True))
    return {"path": str(outcome.path), "status": outcome.status,
            "main_reward": outcome.results.get("main_reward"),
            "supplementary_reward": outcome.results.get("supplementary_reward")}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _require("hydra", "eval", "odyssey run")
    if not (CONFIG_DIR / "run.yaml").is_file():
        raise SystemExit(f"odyssey run: no configs at {CONFIG_DIR} (the installed package is incomplete: "
                         "reinstall odyssey-gym)")
    _check_launcher(argv)
    import hydra

    app = hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="run")(_hydra_task)
    saved = sys.argv
    sys.argv = ["odyssey run", *argv]
    try:
        app()
    finally:
        sys.argv = saved
    return 0


def _hydra_task(cfg: Any) -> dict[str, Any]:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf.errors import MissingMandatoryValue

    from odyssey_agents.registry import AgentUnavailable
    from odyssey_env.game import GameError
    from odyssey_eval.factory import ConfigError
    from odyssey_eval.rundir import RunDirError
    from odyssey_eval.runner import RunError, RunInterrupted

    try:
        return task(cfg)
    except RunInterrupted as exc:
        print(f"odyssey run: {exc}", file=sys.stderr)
        raise SystemExit(130) from None
    except (MissingMandatoryValue, AgentUnavailable, ConfigError, GameError, RunDirError, RunError) as exc:
        message = f"{exc.full_key} must be set (e.g. {exc.full_key}=...)" if isinstance(
            exc, MissingMandatoryValue) else str(exc)
        if HydraConfig.get().mode == RunMode.MULTIRUN:
            # an ordinary exception: Hydra records this cell as failed and the sweep's other cells still run
            raise CellError(message) from None
        raise SystemExit(f"odyssey run: {message}") from None  # a user error: one line, no traceback


class CellError(RuntimeError):
    """A cell of a sweep that could not run (the message says why)."""
