"""Checks on a whole sweep before any of its cells starts (a Hydra callback, see ``conf/run.yaml``).

* **One cell, once.** ``seed=0,0`` or ``eval.progress=true,false`` name the same cell twice: the two
  jobs would write one run directory. The lock of :meth:`odyssey_eval.rundir.RunDir.lock` keeps them
  from corrupting it, but a sweep that silently runs fewer cells than it lists is a mistake too, so it
  is refused, naming the cell and both jobs, before anything runs.
* **Some cells.** A ``glob(...)`` that matches no config (Hydra's glob sees only the packaged groups,
  not the repository's ``conf/``) would launch nothing and end as if it had worked: refused.
* **No keys.** Hydra writes the sweep's config (``multirun.yaml``) before the first job; a key in an
  ``llm`` group of a config file would land there. Refused with the same line as everywhere else.

The jobs are expanded as Hydra's basic sweeper does and each one's config is built the way Hydra
builds it, so what is compared is exactly the run directory each cell would use. Composing a config
costs a few hundred milliseconds, so it is done once per choice of config groups (``game=...``,
``agent=...``); the plain values of a job (``seed=3``) are then applied to a copy, as Hydra applies
them after composing.
"""

from __future__ import annotations

import copy
from typing import Any

from hydra.experimental.callback import Callback

from odyssey_agents.errors import ConfigError
from odyssey_eval.configs import override_line, plain_dict
from odyssey_eval.run import Carried, cell_directory

__all__ = ["SweepCheck"]

#: Hydra's basic sweeper, and launcher=concurrent's (the same jobs, checked as that launcher composes them)
_BASIC = (
    "hydra._internal.core_plugins.basic_sweeper.BasicSweeper",
    "hydra_plugins.odyssey_concurrent_launcher.sweeper.ConcurrentSweeper",
)


class SweepCheck(Callback):
    def on_multirun_start(self, config: Any, **kwargs: Any) -> None:
        try:
            self._check(config)
        except ConfigError as exc:  # Hydra would turn an Exception raised by a callback into a warning
            raise Carried(exc) from None

    def _check(self, config: Any) -> None:
        from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
        from hydra.core.global_hydra import GlobalHydra
        from hydra.core.override_parser.overrides_parser import OverridesParser
        from omegaconf import OmegaConf

        from odyssey_agents.llm.factory import refuse_secrets

        if config.hydra.sweeper.get("_target_") not in _BASIC:
            return  # another sweeper draws its own jobs; each cell is still locked while it runs
        loader = GlobalHydra.instance().config_loader()
        parser = OverridesParser.create(config_loader=loader)
        params = [f"{k}={v}" for k, v in (config.hydra.sweeper.get("params") or {}).items()]
        overrides = parser.parse_overrides(params + list(config.hydra.overrides.task))
        apply = getattr(type(loader), "_apply_overrides_to_config", None)  # Hydra 1.3's own step
        groups: dict[str, bool] = {}
        # Groups are looked up on the sweep's own search path: the repository's conf/ (``+exp2=...``,
        # ``+table2=...``) is added by a hydra.searchpath override, which the loader's bare repository lacks.
        searched = (config.hydra.job.config_name, list(config.hydra.overrides.hydra))

        def structural(o: Any) -> bool:  # changes which files are composed (or deletes): compose again
            name = o.key_or_group
            if name not in groups:
                groups[name] = bool(
                    o.package is not None
                    or name.startswith("hydra")
                    or loader.get_group_options(name, config_name=searched[0], overrides=searched[1])
                )
            return groups[name] or o.is_delete()

        composed: dict[tuple[str, ...], Any] = {}
        seen: dict[str, list[str]] = {}
        batches = BasicSweeper.split_arguments(overrides, None)
        if not any(batches):
            globs = " ".join(override_line(o) for o in overrides if "glob(" in override_line(o))
            raise ConfigError(
                f"the sweep lists no cells{f' ({globs} matched no config)' if globs else ''}: "
                "Hydra's glob(...) sees only the packaged config groups, not the repository's "
                "conf/; list the values instead"
            )
        for batch in batches:
            for job in batch:
                parsed = parser.parse_overrides(list(job))
                base = tuple(override_line(o) for o in parsed if apply is None or structural(o))
                if base not in composed:
                    whole = loader.load_sweep_config(config, list(base))
                    composed[base] = OmegaConf.masked_copy(whole, [str(k) for k in whole if k != "hydra"])
                cfg = copy.deepcopy(composed[base])
                if apply is not None:
                    apply([o for o in parsed if not structural(o)], cfg)
                refuse_secrets(plain_dict(cfg.get("llm") or {}, resolve=False))
                try:
                    path = str(cell_directory(plain_dict(cfg, throw_on_missing=True)))
                except Exception:  # a job whose config is wrong says so itself when it runs
                    continue
                if path in seen:
                    raise ConfigError(
                        f"the sweep names the cell {path} twice ({' '.join(seen[path]) or 'defaults'} "
                        f"and {' '.join(job) or 'defaults'}): both jobs would write one run "
                        "directory. Drop the repeated values (settings outside the cell, like "
                        "eval.progress, do not make another cell); nothing was run"
                    )
                seen[path] = list(job)
