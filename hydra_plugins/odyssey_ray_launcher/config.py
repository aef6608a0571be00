"""The launcher's settings (``hydra.launcher.*``), registered as ``hydra/launcher=odyssey_ray``."""

# No `from __future__ import annotations`: Hydra executes plugin modules before registering them in
# sys.modules, and dataclasses then cannot resolve string annotations.
from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore


@dataclass
class RayLauncherConf:
    _target_: str = "hydra_plugins.odyssey_ray_launcher.ray_launcher.RayLauncher"
    #: ``local``: start Ray on this machine for this sweep, on 127.0.0.1 only, and stop it at the end.
    #: ``auto``: the cluster ``ray start`` started on this machine (or ``RAY_ADDRESS``).
    #: ``HOST:PORT``: a cluster's head node (its GCS port). ``ray://HOST:10001``: through Ray Client.
    address: str = "local"
    #: CPUs, GPUs and memory (bytes) Ray reserves for each cell: how many cells share a node.
    num_cpus: float = 1
    num_gpus: float = 0
    memory: int | None = None
    #: Times Ray reruns a cell whose worker died (killed, out of memory, node lost); a rerun resumes from
    #: the cell's last checkpoint. 0: report it and let the user rerun the command.
    max_retries: int = 0
    #: More keyword arguments for ``ray.init`` (``runtime_env``, ``namespace``, ``num_cpus`` of a local Ray...):
    #: ``+hydra.launcher.init.KEY=VALUE``.
    init: dict[str, Any] = field(default_factory=dict)
    #: More options for each task (``resources``, ``scheduling_strategy``, ``runtime_env``...).
    remote: dict[str, Any] = field(default_factory=dict)


ConfigStore.instance().store(
    group="hydra/launcher", name="odyssey_ray", node=RayLauncherConf, provider="odyssey_ray_launcher"
)
