"""Launching a sweep on Ray: connect, submit one task per job, gather the results in the sweep's order.

What this adds to ``ray.remote`` (and why Hydra's own Ray plugin was not used; docs/evaluation.md):

* **Failures are per cell.** A job that raises comes back as a failed ``JobReturn`` like with the other
  launchers (Hydra's sweeper raises the first one once every job has finished). A task that Ray itself
  could not finish (its worker was killed or ran out of memory, its node was lost) is reported in one
  line naming the cell when it happens, and the other cells still run; the cell resumes from its last
  checkpoint when the command is run again (or at once, with ``max_retries``).
* **The user's directory.** A worker starts in the directory of whoever started Ray, not of the user:
  each task moves to the directory the sweep was started from, so relative paths (``eval.output_dir``,
  a game folder) mean what they mean on the command line. A node that cannot see that directory (no
  shared filesystem) fails the cell with one line saying so.
* **Loopback stays loopback.** Ray replaces ``127.0.0.1`` by the machine's network address unless told
  not to; for a Ray it starts itself (``local``) and for a cluster reached on a loopback address this
  launcher tells it (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, read when Ray is imported), so nothing
  listens on or connects to another interface.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, configure_log, filter_overrides, setup_globals
from omegaconf import DictConfig, open_dict

if TYPE_CHECKING:
    from .ray_launcher import RayLauncher

#: Ray reads these when it is imported. Loopback: see the module docstring. Log deduplication would fold
#: the lines of different cells that differ only in numbers ("seed_1") into "[repeated 2x]".
_LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
_DEDUP_ENV = "RAY_DEDUP_LOGS"

log = logging.getLogger(__name__)


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a Ray worker, chained as the ``__cause__`` of the
    exception the driver re-raises (pickling an exception loses its traceback)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f'\n"""\n{self.text}"""'


def launch(launcher: RayLauncher, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> list[JobReturn]:
    setup_globals()
    assert launcher.config is not None and launcher.hydra_context is not None and launcher.task_function is not None
    config = launcher.config
    configure_log(config.hydra.hydra_logging, config.hydra.verbose)
    Path(str(config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)

    ray = connect(launcher.address, launcher.init)
    log.info(f"Ray launcher: {len(job_overrides)} cells on {_where(ray, launcher.address)}")
    cell = ray.remote(odyssey_cell).options(retry_exceptions=False, **launcher.options)
    shared = ray.put((launcher.hydra_context, launcher.task_function, Singleton.get_state()))
    cwd = os.getcwd()
    jobs: list[tuple[list[str], DictConfig]] = []
    refs = []
    for offset, overrides in enumerate(job_overrides):
        idx = initial_job_idx + offset
        sweep_config = launcher.hydra_context.config_loader.load_sweep_config(config, list(overrides))
        with open_dict(sweep_config):
            sweep_config.hydra.job.id = f"ray_{idx}"
            sweep_config.hydra.job.num = idx
        jobs.append((list(overrides), sweep_config))
        refs.append(cell.remote(shared, sweep_config, cwd))

    results: list[JobReturn | None] = [None] * len(refs)
    pending = {ref: i for i, ref in enumerate(refs)}
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                i = pending.pop(ref)
                results[i] = _collect(ray, ref, *jobs[i])
    except KeyboardInterrupt:
        for ref in pending:  # a KeyboardInterrupt in each running cell: it stops like a Ctrl-C'd run
            ray.cancel(ref)
        ray.wait(list(pending), num_returns=len(pending), timeout=30)
        print(
            "odyssey run: interrupted; the cells that were running stopped at their last checkpoint: run the "
            "same command again to resume them (finished cells are skipped)",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(130) from None
    return [r for r in results if r is not None]


def connect(address: str, init: dict[str, Any]) -> Any:
    """Import Ray (set up for a loopback address first) and connect to the cluster ``address`` names."""
    if is_loopback(address):
        os.environ.setdefault(_LOOPBACK_ENV, "0")
    os.environ.setdefault(_DEDUP_ENV, "0")
    import ray

    if ray.is_initialized():
        return ray
    kwargs: dict[str, Any] = {"address": address, "log_to_driver": True, **init}
    if address == "local":
        kwargs.setdefault("include_dashboard", False)
    for attempt in range(1, _CLIENT_ATTEMPTS + 1):
        try:
            ray.init(**kwargs)
            return ray
        except ConnectionAbortedError as exc:
            # Ray Client: the server reached, but the per-driver server it forks for this session died
            # while starting (seen on a loaded machine, with nothing in its logs). Starting one again works.
            if attempt == _CLIENT_ATTEMPTS:
                _cannot_connect(address, exc)
            log.warning(
                f"Ray launcher: the Ray Client server at {address} could not start a session "
                f"({_one_line(exc)}); trying again ({attempt + 1}/{_CLIENT_ATTEMPTS})"
            )
            time.sleep(2 * attempt)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            _cannot_connect(address, exc)
    raise AssertionError("unreachable")


#: Connections tried when a Ray Client server fails to start the session (see :func:`connect`).
_CLIENT_ATTEMPTS = 3


def _cannot_connect(address: str, exc: BaseException) -> NoReturn:
    from odyssey_agents.errors import ConfigError

    raise ConfigError(
        f"launcher=ray: cannot connect to Ray at hydra.launcher.address={address} ({_one_line(exc)}); "
        "start a cluster with `ray start --head` or set hydra.launcher.address"
    ) from None


def _one_line(exc: BaseException) -> str:
    """An exception's message in one line: its first line, and its last where the first only introduces
    it ("Initialization failure from server:" followed by the server's own error)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    if len(lines) > 1 and lines[0].endswith(":"):
        return f"{lines[0]} {lines[-1]}"
    return lines[0]


def _where(ray: Any, address: str) -> str:
    cpus = ray.cluster_resources().get("CPU", 0)
    where = "a Ray started for this sweep" if address == "local" else f"the Ray cluster at {address}"
    return f"{where} ({cpus:g} CPUs)"


def is_loopback(address: str) -> bool:
    """Whether ``address`` means a Ray on this machine's loopback interface: one this launcher starts
    (``local``), a loopback host, or (``auto``) the cluster ``ray start`` last recorded, if on loopback."""
    if address == "local":
        return True
    if address == "auto":
        address = os.environ.get("RAY_ADDRESS") or _recorded_cluster() or ""
    host = address.removeprefix("ray://").rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _recorded_cluster() -> str | None:
    """The address ``ray start`` writes for ``auto`` (read without importing Ray, which must not be
    imported before the loopback setting is made)."""
    tmp = os.environ.get("RAY_TMPDIR") or (os.environ.get("TMPDIR") if sys.platform.startswith("linux") else None)
    try:
        return (Path(tmp or "/tmp") / "ray" / "ray_current_cluster").read_text().strip() or None
    except OSError:
        return None


def _collect(ray: Any, ref: Any, overrides: list[str], sweep_config: DictConfig) -> JobReturn:
    """The job's ``JobReturn``; a task Ray could not finish becomes a failed one, reported now."""
    from ray.exceptions import RayError, RayTaskError

    try:
        ret, remote_traceback = ray.get(ref)
    except RayTaskError as exc:  # the task's own code failed outside the job: a bug, keep its traceback
        return _failed(overrides, sweep_config, exc.as_instanceof_cause())
    except RayError as exc:
        from odyssey_eval.run import CellError

        reason = _ray_failure(exc)
        _report(overrides, reason)
        return _failed(overrides, sweep_config, CellError(reason))
    if ret.status == JobStatus.FAILED:
        from odyssey_eval.run import CellError

        error = ret._return_value
        if isinstance(error, CellError):  # a user error: its line (the worker printed nothing)
            _report(overrides, str(error))
        elif remote_traceback:
            error.__cause__ = RemoteTraceback(remote_traceback)
    return ret


def _report(overrides: Sequence[str], reason: str) -> None:
    print(f"odyssey run: cell {' '.join(filter_overrides(overrides))}: {reason}", file=sys.stderr, flush=True)


def _ray_failure(exc: BaseException) -> str:
    from ray.exceptions import NodeDiedError, TaskCancelledError, WorkerCrashedError

    if isinstance(exc, WorkerCrashedError):
        what = "the Ray worker running it died (killed, or out of memory)"
    elif isinstance(exc, NodeDiedError):
        what = "the Ray node running it was lost"
    elif isinstance(exc, TaskCancelledError):
        what = "its Ray task was cancelled"
    else:
        said = _one_line(exc)
        what = f"Ray could not finish it ({type(exc).__name__}{'' if said == type(exc).__name__ else ': ' + said})"
    return f"{what}; run the same command again to resume it from its last checkpoint"


def _failed(overrides: list[str], sweep_config: DictConfig, error: BaseException) -> JobReturn:
    ret = JobReturn(overrides=overrides, cfg=sweep_config, hydra_cfg=sweep_config, status=JobStatus.FAILED)
    ret._return_value = error
    return ret


def odyssey_cell(shared: tuple[Any, Any, Any], sweep_config: DictConfig, cwd: str) -> tuple[JobReturn, str | None]:
    """One job, in a Ray worker: Hydra's ``run_job`` in the sweep's directory, with the driver's Hydra
    state. Returns the ``JobReturn`` and, for a failed job, its traceback as text."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.core.utils import run_job

    hydra_context, task_function, singleton_state = shared
    if not os.path.isdir(cwd):
        from odyssey_eval.run import CellError

        reason = (
            f"the Ray node that ran it cannot see {cwd}, the directory the sweep was started from: run "
            "sweeps on a cluster from a directory its nodes share"
        )
        return _failed(list(sweep_config.hydra.overrides.task), sweep_config, CellError(reason)), None
    os.chdir(cwd)
    import odyssey_eval.run

    odyssey_eval.run.print_cell_errors = False  # the driver prints the line: see _collect
    setup_globals()
    Singleton.set_state(singleton_state)
    HydraConfig.instance().set_config(sweep_config)
    try:
        ret = run_job(
            hydra_context=hydra_context,
            task_function=task_function,
            config=sweep_config,
            job_dir_key="hydra.sweep.dir",
            job_subdir_key="hydra.sweep.subdir",
        )
    except SystemExit as exc:  # a cell stopped by Ctrl-C (ray.cancel) said so itself; the worker lives on
        from odyssey_eval.run import CellError

        return _failed(
            list(sweep_config.hydra.overrides.task), sweep_config, CellError(f"interrupted (exit code {exc.code})")
        ), None
    remote_traceback = None
    if ret.status == JobStatus.FAILED:
        error = ret._return_value
        remote_traceback = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return ret, remote_traceback
