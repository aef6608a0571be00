"""The launcher's settings (``hydra.launcher.*``), registered as ``hydra/launcher=odyssey_concurrent``."""

# No `from __future__ import annotations`: Hydra executes plugin modules before registering them in
# sys.modules, and dataclasses then cannot resolve string annotations.
from dataclasses import dataclass
from typing import Dict, Optional  # noqa: UP035 - Hydra's structured configs read these at run time

from hydra.core.config_store import ConfigStore


@dataclass
class ConcurrentLauncherConf:
    _target_: str = "hydra_plugins.odyssey_concurrent_launcher.concurrent_launcher.ConcurrentLauncher"
    #: Cells playing at once (threads); the others wait, unbuilt, for a free one.
    max_concurrency: int = 64
    #: ``auto`` (a live table on a terminal, summary lines otherwise), ``table``, ``lines`` or ``false``.
    progress: str = "auto"
    #: Seconds between summary lines (``lines``).
    progress_interval: float = 10.0


ConfigStore.instance().store(
    group="hydra/launcher",
    name="odyssey_concurrent",
    node=ConcurrentLauncherConf,
    provider="odyssey_concurrent_launcher",
)


@dataclass
class ConcurrentSweeperConf:
    _target_: str = "hydra_plugins.odyssey_concurrent_launcher.sweeper.ConcurrentSweeper"
    max_batch_size: Optional[int] = None  # noqa: UP045 - see the import
    params: Optional[Dict[str, str]] = None  # noqa: UP006, UP045 - see the import


ConfigStore.instance().store(
    group="hydra/sweeper", name="odyssey_concurrent", node=ConcurrentSweeperConf, provider="odyssey_concurrent_launcher"
)
