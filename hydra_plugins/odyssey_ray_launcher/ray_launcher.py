"""The launcher class Hydra instantiates; the work is in :mod:`._core`, imported only to launch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hydra.core.utils import JobReturn
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig

from odyssey_eval.configs import plain_dict


class RayLauncher(Launcher):
    """Each job of a sweep becomes one Ray task; results come back in the sweep's order."""

    def __init__(
        self,
        address: str = "local",
        num_cpus: float = 1,
        num_gpus: float = 0,
        memory: int | None = None,
        max_retries: int = 0,
        init: Any = None,
        remote: Any = None,
    ) -> None:
        self.address = str(address) if address is not None else "local"
        self.options: dict[str, Any] = {"num_cpus": num_cpus, "num_gpus": num_gpus, "max_retries": max_retries}
        if memory is not None:
            self.options["memory"] = memory
        self.options.update(_plain(remote))
        self.init = _plain(init)
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


def _plain(node: Any) -> dict[str, Any]:
    if node is None:
        return {}
    return plain_dict(node)
