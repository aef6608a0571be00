"""Playing cells: a config -> a finished run directory, for one agent (``agent=``) or several sharing one
world (``agents=[...]``).

    odyssey run agent=oracle game=mossfall seed=0
    odyssey run agents=[oracle,random,long_context] game=mossfall seed=0 llm=scripted

:func:`run_cell` and :func:`run_multi_cell` play (or resume, or skip) a cell to its end;
:func:`open_cell` opens one for an outer loop to play step by step (:class:`odyssey_eval.cell.Cell`,
where the loop and its guarantees are described). This module knows nothing of Hydra: cells take the
resolved config as a plain dict, which keeps them usable from Python, tests and benchmarks.

A cell of several agents: each entry of ``agents`` names an agent preset
(``odyssey_eval/conf/agent/<name>.yaml``) or is an agent config (``{name: random, seed: 3}``); agents
that use a language model share the cell's ``llm`` group. The agents get the ids ``player_0``,
``player_1``, ... in list order, which is also the order their commands apply within a step (see
``odyssey_env.multiagent``). ``multiagent.episode_end`` and ``multiagent.supplies`` choose when the
episode ends and what the world holds. Its run directory (the cell-level files are those of a
single-agent run; each agent's files have the single-agent formats, so its metrics, QA and curves come
out of the same code)::

    cell.json  config.yaml  qa_questions.json  results.json  [dependency_graph.json]
    checkpoints/step_<N>/{env.json, runner.json, agent/<agent id>/}
    agents/<agent id>/{trajectory.jsonl, qa.jsonl, results.json}
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from odyssey_eval import lifecycle
from odyssey_eval.cell import AGENT_SEED_STRIDE, AGENTS_DIR, Cell
from odyssey_eval.configs import CONFIG_DIR, plain_dict
from odyssey_eval.factory import ConfigError
from odyssey_eval.lifecycle import (
    _DEFAULT_EVAL,  # noqa: F401 - tests compare it with conf/eval/default.yaml
    KILL_AFTER_ENV,
    RESULTS_FORMAT,
    CellOutcome,
    RunError,
    RunInterrupted,
)
from odyssey_eval.rundir import RunDir, cell_key, run_path, slug
from odyssey_eval.stopping import StopSignals

__all__ = [
    "AGENTS_DIR",
    "AGENT_SEED_STRIDE",
    "KILL_AFTER_ENV",
    "MULTIAGENT_DEFAULTS",
    "RESULTS_FORMAT",
    "CellOutcome",
    "RunError",
    "RunInterrupted",
    "cell_path",
    "multi_cell_key",
    "multi_run_path",
    "open_cell",
    "resolve_agents",
    "run_cell",
    "run_multi_cell",
]

#: ``multiagent`` settings of a cell when the config leaves them out (as ``conf/run.yaml`` has them).
MULTIAGENT_DEFAULTS: dict[str, Any] = {"episode_end": "first", "supplies": "shared"}


def open_cell(
    cfg: Mapping[str, Any],
    *,
    config_yaml: str | None = None,
    log: Callable[[str], None] = print,
    opened: Callable[[Cell], None] | None = None,
) -> Cell:
    """The cell ``cfg`` describes, open: checked, its lock taken, started or resumed, or skipped (its
    ``outcome`` set) if it finished before. A config with ``agents`` is a cell of several agents;
    otherwise ``agent`` plays it alone. Drive it with ``step()`` and ``finish()``; ``opened`` sees the
    cell before it starts (see :meth:`Cell.open`)."""
    team = bool(cfg.get("agents"))
    if team:
        cfg = lifecycle.checked(cfg, "agents")
        key, rd = multi_cell_key(cfg), RunDir(_multi_path(cfg))
    else:
        cfg = lifecycle.checked({k: v for k, v in cfg.items() if k not in ("agents", "multiagent")})
        key, rd = cell_key(cfg), RunDir(run_path(cfg))
    return Cell.open(cfg, key, rd, team=team, config_yaml=config_yaml, log=log, opened=opened)


def _play(cfg: Mapping[str, Any], config_yaml: str | None, log: Callable[[str], None]) -> CellOutcome:
    """Open the cell and play it to its end, stopping at a step boundary on SIGINT or SIGTERM.

    The first signal asks to stop (:class:`odyssey_eval.stopping.StopSignals`): the step in progress is
    finished, checkpointed, and :class:`RunInterrupted` names it as the step the same command resumes
    from, so nothing played is played again. While the cell waits on a model (or a person) the signal
    stops it at once instead (a call can take half a minute), losing only that step: such cells are
    checkpointed after every step that called the model and after every QA round. A second signal
    always stops at once."""
    watched: list[Cell] = []
    with StopSignals(lambda: any(cell.urgent for cell in watched)) as stop:
        try:
            with open_cell(cfg, config_yaml=config_yaml, log=log, opened=watched.append) as cell:
                while stop.requested is None and cell.step():
                    pass
                if stop.requested is not None and cell.outcome is None:
                    cell.interrupt()
                return cell.finish()
        except RunInterrupted as exc:
            exc.signum = stop.received or signal.SIGINT
            raise


def run_cell(
    cfg: Mapping[str, Any], *, config_yaml: str | None = None, log: Callable[[str], None] = print
) -> CellOutcome:
    """Play (or resume, or skip) the cell of one agent ``cfg`` describes and return its results.

    ``cfg`` needs ``game`` (``name``, optional ``path``), ``agent`` (``name`` + parameters), ``llm``,
    ``seed``, ``max_steps``, ``tutorial`` and ``eval`` (see ``odyssey_eval/conf/eval/default.yaml``).
    """
    return _play({k: v for k, v in cfg.items() if k != "agents"}, config_yaml, log)


def run_multi_cell(
    cfg: Mapping[str, Any], *, config_yaml: str | None = None, log: Callable[[str], None] = print
) -> CellOutcome:
    """Play (or resume, or skip) the multi-agent cell ``cfg`` describes and return its results.

    ``cfg`` is a single-agent cell's config (see :func:`run_cell`) with ``agents`` in place of ``agent``,
    and optionally ``multiagent`` (:data:`MULTIAGENT_DEFAULTS`).
    """
    if not cfg.get("agents"):
        lifecycle.checked(cfg, "agents")  # the one-line error for a config without agents
        resolve_agents(cfg.get("agents"))
    return _play(cfg, config_yaml, log)


def cell_path(cfg: Mapping[str, Any]) -> Path:
    """The run directory ``run_cell(cfg)`` would use (raises for a config it would refuse)."""
    return run_path(lifecycle.checked(cfg))


# ---------------------------------------------------------------------- cells of several agents
def resolve_agents(entries: Any) -> list[dict[str, Any]]:
    """The agent configs a cell's ``agents`` list names: presets by name, or configs as given."""
    if isinstance(entries, str | bytes) or not isinstance(entries, list | tuple) or not entries:
        raise ConfigError(f"agents must be a non-empty list, e.g. agents=[oracle,random], got {entries!r}")
    out = []
    for entry in entries:
        if isinstance(entry, str):
            preset = CONFIG_DIR / "agent" / f"{entry}.yaml"
            if preset.is_file():
                from omegaconf import OmegaConf

                out.append(plain_dict(OmegaConf.load(preset)))
            else:
                out.append({"name": entry})  # an agent registered by a plugin, with no preset
        elif isinstance(entry, Mapping) and entry.get("name"):
            out.append(dict(entry))
        else:
            raise ConfigError(f"each entry of agents must be an agent name or a config with a name, got {entry!r}")
    return out


def _settings(cfg: Mapping[str, Any]) -> dict[str, Any]:
    ma = {**MULTIAGENT_DEFAULTS, **dict(cfg.get("multiagent") or {})}
    unknown = sorted(set(ma) - set(MULTIAGENT_DEFAULTS))
    if unknown:
        raise ConfigError(f"unknown multiagent setting(s) {unknown}; known: {', '.join(MULTIAGENT_DEFAULTS)}")
    return ma


def multi_cell_key(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """What makes a multi-agent cell what it is: the single-agent key, with the agents in place of the agent."""
    key = cell_key({**cfg, "agent": {"name": "multi"}})
    del key["agent"]
    return {
        "agents": [{k: v for k, v in a.items() if v is not None} for a in resolve_agents(cfg["agents"])],
        **key,
        "multiagent": _settings(cfg),
    }


def multi_run_path(cfg: Mapping[str, Any]) -> Path:
    """``<output_dir>/<game>/multi/<agent>--<agent>--.../<llm[-model]>/seed_<seed>[...]`` (raises for a
    config :func:`run_multi_cell` would refuse)."""
    return _multi_path(lifecycle.checked(cfg, "agents"))


def _multi_path(cfg: Mapping[str, Any]) -> Path:
    single = run_path({**cfg, "agent": {"name": "multi"}})
    names = []
    for a in resolve_agents(cfg["agents"]):
        names.append("+".join([slug(a["name"]), *(slug(x) for x in sorted(a.get("addons") or []))]))
    return single.parents[1] / "--".join(names) / single.parent.name / single.name
