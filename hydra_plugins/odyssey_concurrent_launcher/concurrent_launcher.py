"""The launcher class Hydra instantiates; the work is in :mod:`._core`, imported only to launch."""

from __future__ import annotations

from collections.abc import Sequence

from hydra.core.utils import JobReturn
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig


class ConcurrentLauncher(Launcher):
    """The jobs of a sweep play in threads of this process, at most ``max_concurrency`` at once."""

    def __init__(self, max_concurrency: int = 64, progress: str = "auto", progress_interval: float = 10.0) -> None:
        self.max_concurrency = max_concurrency
        self.progress = str(progress).lower()
        self.progress_interval = float(progress_interval)
        self.config: DictConfig | None = None
        self.hydra_context: HydraContext | None = None
        self.task_function: TaskFunction | None = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        self.config = config
        self.hydra_context = hydra_context
        self.task_function = task_function

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        from ._core import launch

        return launch(self, job_overrides, initial_job_idx)
