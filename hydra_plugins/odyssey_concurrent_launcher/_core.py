"""Launching a sweep's cells in threads of one process.

What each cell gets is what ``launcher=basic`` gives it: the config Hydra composes for its job, resolved
in the launcher's thread (Hydra's own state, which its resolvers read, is one per process), then played
by :func:`odyssey_eval.run.task` in a thread of its own: its run directory, lock, checkpoints, resume and
results are the runner's, untouched. What the launcher adds:

* **Composed once per choice of config groups.** Hydra composes a job's config from its files in about a
  tenth of a second; for a sweep of 64 seeds that is most of a short sweep's time. The jobs that choose
  the same groups (``game=...``, ``agent=...``) share one composition, and each applies its plain values
  (``seed=3``) to a copy, as Hydra itself applies them after composing; ``hydra.overrides.task`` and
  ``hydra.job.override_dirname`` are set as Hydra sets them. (A Hydra without the step it uses composes
  every job whole.)
* **At most ``max_concurrency`` cells at once**; the others wait, not yet built (a cell's game and agent
  are built when it starts).
* **One line per failed cell** when it fails, naming it, while the others go on; Hydra's sweeper re-raises
  the first failure once every cell has run, as with the other launchers.
* **Imports first, in one thread.** Modules are imported when first used, and two threads importing
  modules that import each other deadlock (Python detects it and fails one of them). Before any cell
  starts, the launcher loads each game of the sweep and builds (and drops) one agent of each kind
  (agent and llm group) in its own thread, so the cells' threads find what they use imported.
* **One board** for the sweep (:mod:`odyssey_eval.board`) instead of a bar per cell.
* **Ctrl-C** stops every cell at its next step, checkpointed there, so the rerun plays nothing twice (a
  cell waiting on a model call stops when the call returns); cells not started yet are not started. A
  second Ctrl-C exits at once: every run directory stays resumable, as after a kill. Running the same
  command again resumes the sweep.

Cells share the process: its working directory (``hydra.job.chdir=true`` is refused), its environment
(``hydra.job.env_set`` is refused), its interpreter (agents that compute on this machine, hf or embedded
models, gain nothing from threads: use ``launcher=joblib``) and its server gates (the llm group's limits).
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hydra.core.hydra_config import HydraConfig
from hydra.core.utils import JobReturn, JobRuntime, JobStatus, configure_log, filter_overrides, setup_globals
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from odyssey_eval.configs import override_line, plain_dict

if TYPE_CHECKING:
    from .concurrent_launcher import ConcurrentLauncher

log = logging.getLogger(__name__)


@dataclass
class Job:
    """One cell of the sweep, composed and resolved, not yet played."""

    index: int
    overrides: list[str]
    sweep_config: DictConfig
    task_config: DictConfig | None  # None when the config could not be resolved (``error`` says why)
    plain: dict[str, Any] | None
    error: Exception | None = None

    @property
    def label(self) -> str:
        return " ".join(filter_overrides(self.overrides)) or "(defaults)"

    @property
    def max_steps(self) -> int:
        try:
            return int((self.plain or {}).get("max_steps") or 0)
        except (TypeError, ValueError):
            return 0


def launch(
    launcher: ConcurrentLauncher, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
) -> list[JobReturn]:
    from odyssey_agents.errors import ConfigError
    from odyssey_eval.board import SweepBoard

    setup_globals()
    assert launcher.config is not None and launcher.hydra_context is not None and launcher.task_function is not None
    config = launcher.config
    configure_log(config.hydra.hydra_logging, config.hydra.verbose)
    if isinstance(launcher.max_concurrency, bool) or not isinstance(launcher.max_concurrency, int):
        raise ConfigError(f"hydra.launcher.max_concurrency must be a whole number, got {launcher.max_concurrency!r}")
    if launcher.max_concurrency < 1:
        raise ConfigError(f"hydra.launcher.max_concurrency must be at least 1, got {launcher.max_concurrency}")
    if launcher.progress not in ("auto", "table", "lines", "false"):
        raise ConfigError(f"hydra.launcher.progress must be auto, table, lines or false, got {launcher.progress!r}")
    if config.hydra.job.chdir:
        raise ConfigError(
            "launcher=concurrent plays every cell in this one process, whose working directory is one: "
            "hydra.job.chdir=true cannot give each its own (use launcher=joblib)"
        )
    if config.hydra.job.env_set:
        raise ConfigError(
            "launcher=concurrent plays every cell in this one process, whose environment is one: "
            "hydra.job.env_set cannot give each its own (set the variables before the command)"
        )
    Path(str(config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
    composer = Composer(launcher)
    jobs = [composer.job(initial_job_idx + i, list(o)) for i, o in enumerate(job_overrides)]
    _warm_up(jobs)
    if jobs:  # the jobs' logging (as each job would set it up: resolved with its Hydra state), once
        HydraConfig.instance().set_config(jobs[0].sweep_config)
        configure_log(jobs[0].sweep_config.hydra.job_logging, config.hydra.verbose)
    composer.restore()
    workers = min(launcher.max_concurrency, max(1, len(jobs)))
    log.info(f"Concurrent launcher: {len(jobs)} cells, {workers} at once in this process")
    board = SweepBoard(
        [(job.label, job.max_steps) for job in jobs], mode=launcher.progress, interval=launcher.progress_interval
    )
    callbacks = launcher.hydra_context.callbacks
    for job in jobs:
        callbacks.on_job_start(config=job.sweep_config, task_function=launcher.task_function)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="odyssey-cell")
    futures: list[Future[JobReturn]] = [pool.submit(_play, job, i, board) for i, job in enumerate(jobs)]
    try:
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            board.tick()
    except KeyboardInterrupt:
        _interrupted(pool, futures, board)
    pool.shutdown()
    board.close()
    returns = [f.result() for f in futures]
    for job, ret in zip(jobs, returns, strict=True):
        callbacks.on_job_end(config=job.sweep_config, job_return=ret)
    _sweep_cost(jobs, returns)
    return returns


def _warm_up(jobs: list[Job]) -> None:
    """Import what the cells will use, in this thread (see the module docstring). A game or agent that
    cannot be built is left for its cell to report, in its own line."""
    import odyssey_eval.run
    import odyssey_eval.runner  # imported for what it imports
    from odyssey_env.game import load_game
    from odyssey_eval.factory import build_agent

    if any((job.plain or {}).get("agents") for job in jobs):
        with contextlib.suppress(ImportError):  # the cells say which extra is missing
            import odyssey_eval.cell
    games: set[tuple[str, bool]] = set()
    kinds: set[str] = set()
    for job in jobs:
        plain = job.plain or {}
        game = plain.get("game") or {}
        where = (str(game.get("path") or game.get("name")), bool(game.get("trust")))
        if where not in games:
            games.add(where)
            try:
                load_game(where[0], trust=where[1])
            except Exception:  # the cell reports it
                continue
        _, cell = odyssey_eval.run.cell_config(plain)
        agents = cell.get("agents") or [cell.get("agent")]
        for agent in agents:
            agent_cfg = agent if isinstance(agent, dict) else {"name": agent}
            kind = repr((agent_cfg, plain.get("llm")))
            if kind in kinds:
                continue
            kinds.add(kind)
            try:
                build_agent(agent_cfg, plain.get("llm"), seed=int(plain.get("seed") or 0))
            except Exception:  # the cell reports it
                continue


def _interrupted(pool: ThreadPoolExecutor, futures: list[Future[JobReturn]], board: Any) -> None:
    """Ctrl-C: stop the cells at their next step, start no other, and leave (see the module docstring)."""
    board.stop()
    for f in futures:
        f.cancel()  # the cells not started
    running = sum(1 for f in futures if not f.done())
    print(
        f"odyssey run: interrupted; stopping the {running} running cells at their next step "
        "(Ctrl-C again to leave now: every run directory stays resumable)",
        file=sys.stderr,
        flush=True,
    )
    try:
        pool.shutdown(wait=True, cancel_futures=True)
    except KeyboardInterrupt:
        print("odyssey run: left at once; run the same command again to resume", file=sys.stderr, flush=True)
        os._exit(130)
    board.close()
    print(
        "odyssey run: interrupted; the cells that were running stopped at their last checkpoint: run the same "
        "command again to resume them (finished cells are skipped)",
        file=sys.stderr,
        flush=True,
    )
    raise SystemExit(130)


def _play(job: Job, index: int, board: Any) -> JobReturn:
    """One cell, in its thread: the task on its resolved config; a failure is its one line."""
    from odyssey_agents.errors import is_user_error
    from odyssey_eval.progress import reporting_to
    from odyssey_eval.run import CellError, task
    from odyssey_eval.rundir import RunDir
    from odyssey_eval.runner import RunInterrupted

    ret = JobReturn(overrides=job.overrides, cfg=job.task_config, hydra_cfg=job.sweep_config)
    ret.working_dir = os.getcwd()
    ret.task_name = JobRuntime.instance().get("name")
    if job.error is not None:
        _report(job, str(job.error))
        board.ended(index, "failed")
        return _failed(ret, CellError(str(job.error)))
    assert job.task_config is not None
    try:
        with reporting_to(board.reporter(index)):
            value = task(job.task_config)
    except RunInterrupted as exc:
        board.ended(index, "interrupted")
        return _failed(ret, CellError(str(exc)))
    except Exception as exc:
        board.ended(index, "failed")
        if is_user_error(exc):
            _report(job, str(exc))
            return _failed(ret, CellError(str(exc)))
        _report(job, f"{type(exc).__name__}: {exc} (its traceback follows when the sweep ends)")
        return _failed(ret, exc)
    try:
        results = RunDir(Path(value["path"])).results()
    except Exception:  # the board only: a cell whose results cannot be read says so where they are read
        results = None
    board.ended(index, value["status"], results)
    ret.return_value = value
    ret.status = JobStatus.COMPLETED
    return ret


def _failed(ret: JobReturn, error: BaseException) -> JobReturn:
    ret.return_value = error
    ret.status = JobStatus.FAILED
    return ret


def _report(job: Job, reason: str) -> None:
    print(f"odyssey run: cell {job.label}: {reason}", file=sys.stderr, flush=True)


def _sweep_cost(jobs: list[Job], returns: list[JobReturn]) -> None:
    """The sweep's cost, when its cells were given a price table (``eval.prices``)."""
    from odyssey_eval.cost import PriceError, cell_cost, load_prices, sweep_cost
    from odyssey_eval.rundir import RunDir

    costs = []
    for job, ret in zip(jobs, returns, strict=True):
        setting = ((job.plain or {}).get("eval") or {}).get("prices")
        if setting is None or ret.status != JobStatus.COMPLETED:
            continue
        try:
            results = RunDir(Path(ret.return_value["path"])).results()
            cost = results.get("cost")
            if not cost:  # priced now, from the table (an empty setting like "null" prices nothing)
                prices = load_prices(setting)
                cost = cell_cost(results, prices) if prices is not None else None
            costs.append(cost)
        except (PriceError, OSError, ValueError) as exc:
            log.warning(f"cell {job.label}: no cost ({exc})")
    try:
        total = sweep_cost(costs)
    except PriceError as exc:
        log.warning(f"sweep cost: {exc}")
        return
    if total is not None:
        log.info(
            f"sweep cost: {total['total']:.4f} {total['currency']} for {total['cells']} cells "
            f"({total['total_if_prefix_cached']:.4f} if every cacheable prefix were billed cached)"
        )


class Composer:
    """The jobs' configs, composed once per choice of config groups (see the module docstring)."""

    def __init__(self, launcher: Any):
        """``launcher``: anything with the sweep's ``config`` and ``hydra_context`` (the launcher, the sweeper)."""
        from hydra.core.override_parser.overrides_parser import OverridesParser

        assert launcher.config is not None and launcher.hydra_context is not None
        self.config = launcher.config
        self.loader = launcher.hydra_context.config_loader
        self.parser = OverridesParser.create(config_loader=self.loader)
        self.apply = getattr(type(self.loader), "_apply_overrides_to_config", None)
        self.dirname: Callable[..., str] | None = None  # None: a Hydra without it; each job is composed whole
        try:
            from hydra._internal.config_loader_impl import get_overrides_dirname

            self.dirname = get_overrides_dirname
        except ImportError:
            pass
        self._groups: dict[str, bool] = {}
        self._composed: dict[tuple[str, ...], DictConfig] = {}
        # Hydra annotates HydraConfig.cfg as a HydraConf, but set_config stores a DictConfig (a masked copy
        # of the job's config) there, and that is what set_config takes back in restore()
        before = HydraConfig.instance().cfg
        self._hydra_before = before if isinstance(before, DictConfig) else None

    def _structural(self, o: Any) -> bool:
        """Whether an override changes which files are composed (then the config is composed again)."""
        name = o.key_or_group
        if name not in self._groups:
            self._groups[name] = bool(
                o.package is not None
                or name.startswith("hydra")
                or self.loader.get_group_options(
                    name,
                    config_name=self.config.hydra.job.config_name,
                    overrides=list(self.config.hydra.overrides.hydra),
                )
            )
        return self._groups[name] or o.is_delete()

    def compose(self, overrides: list[str]) -> DictConfig:
        """What ``load_sweep_config(config, overrides)`` returns."""
        if self.apply is None or self.dirname is None:
            return self.loader.load_sweep_config(self.config, overrides)
        parsed = self.parser.parse_overrides(overrides)
        base = tuple(override_line(o) for o in parsed if self._structural(o))
        if base not in self._composed:
            self._composed[base] = self.loader.load_sweep_config(self.config, list(base))
        cfg = copy.deepcopy(self._composed[base])
        self.apply([o for o in parsed if not self._structural(o)], cfg)
        task = [o for o in parsed if not o.is_hydra_override()]
        job = cfg.hydra.job
        with read_write(cfg.hydra), open_dict(cfg.hydra):
            cfg.hydra.overrides.task = [override_line(o) for o in task]
            job.override_dirname = self.dirname(
                overrides=task,
                kv_sep=job.config.override_dirname.kv_sep,
                item_sep=job.config.override_dirname.item_sep,
                exclude_keys=job.config.override_dirname.exclude_keys,
            )
        return cfg

    def job(self, index: int, overrides: list[str]) -> Job:
        """Job ``index``: its config composed, numbered as Hydra numbers it, and resolved (in this thread:
        Hydra's resolvers read the process's one HydraConfig)."""
        from omegaconf.errors import MissingMandatoryValue, OmegaConfBaseException

        from odyssey_agents.errors import ConfigError

        sweep_config = self.compose(overrides)
        with open_dict(sweep_config):
            sweep_config.hydra.job.id = f"concurrent_{index}"
            sweep_config.hydra.job.num = index
        HydraConfig.instance().set_config(sweep_config)
        output_dir = Path(str(OmegaConf.select(sweep_config, "hydra.sweep.dir")))
        output_dir = output_dir / str(OmegaConf.select(sweep_config, "hydra.sweep.subdir"))
        with read_write(sweep_config.hydra.runtime), open_dict(sweep_config.hydra.runtime):
            sweep_config.hydra.runtime.output_dir = os.path.abspath(output_dir)
        HydraConfig.instance().set_config(sweep_config)
        output_dir.mkdir(parents=True, exist_ok=True)
        task_config = OmegaConf.masked_copy(sweep_config, [str(k) for k in sweep_config if k != "hydra"])
        try:
            plain = plain_dict(task_config, throw_on_missing=True)
        except MissingMandatoryValue as exc:
            return Job(index, overrides, sweep_config, None, None, ConfigError(f"{exc.full_key} must be set"))
        except OmegaConfBaseException as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return Job(index, overrides, sweep_config, None, None, ConfigError(first))
        # resolved now, with this job's Hydra state; the thread that plays it resolves nothing
        return Job(index, overrides, sweep_config, OmegaConf.create(plain), plain)

    def restore(self) -> None:
        if self._hydra_before is not None:
            HydraConfig.instance().set_config(self._hydra_before)
