"""``odyssey run``: the Hydra application that plays cells and sweeps of cells.

    odyssey run game=mossfall agent=random seed=0
    odyssey run -m agent=random,oracle game=mossfall,quiet_bell,tallowmere seed=0,1,2 launcher=joblib
    odyssey run agents=[oracle,random,long_context] llm=scripted game=mossfall   # one shared world

Config groups live in ``odyssey_eval/conf/`` (game, agent, llm, eval, launcher). Every cell writes its own run
directory (see :mod:`odyssey_eval.rundir`); rerunning a command skips finished cells and resumes
unfinished ones, so a sweep that was interrupted is completed by running it again.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from odyssey_agents.errors import ConfigError, OdysseyError
from odyssey_env.extras import install_command
from odyssey_eval.configs import CONFIG_DIR, REPO_CONFIG_DIR, plain_dict

__all__ = ["LAUNCHER_PLUGINS", "Carried", "cell_config", "cell_directory", "main"]


#: launcher preset -> (module the Hydra plugin installs, extra that brings it)
LAUNCHER_PLUGINS: dict[str, tuple[str, str]] = {
    "joblib": ("hydra_plugins.hydra_joblib_launcher", "eval"),
    "submitit_local": ("hydra_plugins.hydra_submitit_launcher", "slurm"),
    "submitit": ("hydra_plugins.hydra_submitit_launcher", "slurm"),
    "ray": ("ray", "ray"),  # the plugin is ours (hydra_plugins.odyssey_ray_launcher); Ray is not
}


def _require(module: str, extra: str, what: str) -> None:
    """Stop with the install line when ``module`` is missing (found without importing it: Hydra's
    plugins are heavy)."""
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package (hydra_plugins) is missing
        found = False
    if not found:
        raise SystemExit(f"odyssey run: {what} needs the {extra!r} extra: {install_command(extra)}")


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

    multi, plain = cell_config(plain_dict(cfg, throw_on_missing=True))
    from odyssey_eval.runner import run_cell, run_multi_cell

    play = run_multi_cell if multi else run_cell  # several agents in one world, or one
    outcome = play(plain, config_yaml=OmegaConf.to_yaml(cfg, resolve=True))
    return {
        "path": str(outcome.path),
        "status": outcome.status,
        "main_reward": outcome.results.get("main_reward"),
        "supplementary_reward": outcome.results.get("supplementary_reward"),
    }


def cell_config(composed: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    """(several agents?, the cell's config) of a composed ``run.yaml`` config: with ``agents`` set the
    cell is multi-agent and ``agent`` is dropped; otherwise ``agents`` and ``multiagent`` are."""
    plain = {k: v for k, v in composed.items() if k != "hydra"}
    multi = bool(plain.get("agents"))
    for unused in ("agent",) if multi else ("agents", "multiagent"):
        plain.pop(unused, None)
    return multi, plain


def cell_directory(composed: dict[str, Any]) -> Path:
    """The run directory of the cell a composed ``run.yaml`` config names (raises for one it would refuse)."""
    multi, plain = cell_config(composed)
    from odyssey_eval.runner import cell_path, multi_run_path

    return multi_run_path(plain) if multi else cell_path(plain)


def _user_games(argv: list[str]) -> list[str]:
    """``game=whales`` for a game in the user games directory (made by ``odyssey generate`` or ``odyssey paper
    import``) that has no config of its own becomes ``game.name=whales``: the default game config with its name."""
    from odyssey_env.userdir import find

    out = []
    for arg in argv:
        key, eq, value = arg.partition("=")
        names = value.split(",") if eq else []
        if (
            key == "game"
            and names
            and all(not (CONFIG_DIR / "game" / f"{n}.yaml").is_file() and find(n) is not None for n in names)
        ):
            arg = f"game.name={value}"
        out.append(arg)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run Hydra with its error printing off: a mistake comes back here as an exception and leaves as
    one line (:func:`odyssey_eval.cli.main` prints every :class:`OdysseyError` the same way)."""
    argv = _user_games(list(sys.argv[1:] if argv is None else argv))
    _require("hydra", "eval", "odyssey run")
    if not (CONFIG_DIR / "run.yaml").is_file():
        raise SystemExit(
            f"odyssey run: no configs at {CONFIG_DIR} (the installed package is incomplete: reinstall odyssey-gym)"
        )
    _check_launcher(argv)
    _refuse_secret_overrides(argv)
    import hydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from odyssey_eval.rundir import cannot_write

    app = hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="run")(_hydra_task)
    saved, saved_env = sys.argv, os.environ.get(_FULL_ERROR)
    sys.argv = ["odyssey run", *_with_repo_presets(argv)]
    os.environ[_FULL_ERROR] = "1"  # Hydra re-raises instead of printing a trimmed traceback
    try:
        app()
    except Carried as exc:
        raise exc.error from None
    except CellError:
        raise SweepError(
            "the sweep did not complete: each failed cell is named above, the others ran; fix "
            "the cause and run the same command again (finished cells are skipped)"
        ) from None
    except (HydraException, OmegaConfBaseException) as exc:  # the command line itself: composing the config
        raise ConfigError(_hydra_message(exc)) from None
    except OSError as exc:  # Hydra making its folders under eval.output_dir
        raise (cannot_write(exc) or exc) from None
    finally:
        sys.argv = saved
        if saved_env is None:
            os.environ.pop(_FULL_ERROR, None)
        else:
            os.environ[_FULL_ERROR] = saved_env
    return 0


_FULL_ERROR = "HYDRA_FULL_ERROR"


def _with_repo_presets(argv: Sequence[str]) -> list[str]:
    """``argv`` with the repository's ``conf/`` on Hydra's search path, when there is one and the command
    line does not set the search path itself (``+experiment=experiment2`` then finds
    ``conf/experiment/experiment2.yaml``)."""
    argv = list(argv)
    if not REPO_CONFIG_DIR.is_dir() or any(a.lstrip("+~").startswith("hydra.searchpath") for a in argv):
        return argv
    path = REPO_CONFIG_DIR.as_posix().replace("\\", "\\\\").replace("'", "\\'")
    # Hydra's parser takes the overrides as one run of positional arguments: join the user's run.
    at = next((i for i, a in enumerate(argv) if "=" in a and not a.startswith("-")), len(argv))
    return [*argv[:at], f"hydra.searchpath=['file://{path}']", *argv[at:]]


def _refuse_secret_overrides(argv: Sequence[str]) -> None:
    """A key on the command line would reach Hydra's logs and the sweep's ``multirun.yaml``: refused
    before Hydra sees it, naming the setting and never its value."""
    from odyssey_agents.llm.factory import refuse_secrets

    for arg in argv:
        name, eq, value = arg.partition("=")
        if eq and not arg.startswith("-"):
            nested: Any = value
            for part in reversed(name.lstrip("+~").split(".")):
                nested = {part: nested}
            refuse_secrets(nested, "")


def _hydra_message(exc: BaseException) -> str:
    """One line for a config that cannot be composed, with the closest name when one was misspelt."""
    from hydra.errors import MissingConfigException
    from omegaconf import DictConfig
    from omegaconf.errors import OmegaConfBaseException

    cause = exc.__cause__
    if (
        isinstance(cause, OmegaConfBaseException)
        and isinstance(cause.parent_node, DictConfig)
        and cause.key is not None
        and cause.full_key
    ):  # a key that is not in the config
        full_key, key = str(cause.full_key), str(cause.key)
        prefix = full_key[: len(full_key) - len(key)]
        close = difflib.get_close_matches(key, [str(k) for k in cause.parent_node], n=1)
        hint = f" (did you mean {prefix}{close[0]}?)" if close else ""
        return f"there is no setting {full_key}{hint}; to add a new one, write +{full_key}=..."
    if isinstance(exc, MissingConfigException) and exc.options and exc.missing_cfg_file:
        group, _, name = str(exc.missing_cfg_file).rpartition("/")
        close = difflib.get_close_matches(name, exc.options, n=1)
        hint = f" (did you mean {group}={close[0]}?)" if close else ""
        return f"there is no {group} config {name!r}{hint}; the {group} configs are: {', '.join(exc.options)}"
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return re.sub(r"\s+", " ", first)


def _hydra_task(cfg: Any) -> dict[str, Any]:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf.errors import MissingMandatoryValue

    from odyssey_agents.errors import is_user_error
    from odyssey_eval.runner import RunInterrupted

    try:
        return task(cfg)
    except RunInterrupted as exc:
        print(f"odyssey run: {exc}", file=sys.stderr)
        raise SystemExit(128 + exc.signum) from None  # 130 for Ctrl-C, 143 for SIGTERM, as shells expect
    except Exception as exc:
        if isinstance(exc, MissingMandatoryValue):
            exc = ConfigError(f"{exc.full_key} must be set (e.g. {exc.full_key}=...)")
        if not is_user_error(exc):
            raise
        if HydraConfig.get().mode != RunMode.MULTIRUN:
            raise Carried(exc) from None
        # One line now, naming the cell; an ordinary exception for Hydra, which records the cell as failed
        # while the sweep's other cells still run (and which pickles across launcher processes).
        if print_cell_errors:
            overrides = " ".join(HydraConfig.get().overrides.task)
            print(f"odyssey run: cell {overrides}: {exc}", file=sys.stderr, flush=True)
        raise CellError(str(exc)) from None


#: Whether a failed cell of a sweep prints its line where it ran. The Ray launcher turns this off in its
#: workers and prints the line from the driver: a worker's output reaches the driver late, after the
#: sweep's last line when the sweep ends then.
print_cell_errors = True


class Carried(BaseException):
    """Carries a user error through Hydra untouched: Hydra records an ``Exception`` from a job (and
    prints "Error executing job" above it) and only warns about one from a callback, but lets other
    exceptions pass. :func:`main` unwraps it."""

    def __init__(self, error: Exception):
        super().__init__(str(error))
        self.error = error


class CellError(OdysseyError, RuntimeError):
    """A cell of a sweep that could not run (its line was printed when it failed). Hydra's sweeper
    re-raises the first one after every cell has run."""


class SweepError(OdysseyError):
    """A sweep whose cells did not all run."""
