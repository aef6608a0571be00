"""Building the agent of a cell from its ``agent`` and ``llm`` config groups.

This is the one place where configs become agents, so the runner, the QA tools and tests all build
agents the same way.

The contract, for whoever adds a paradigm:

* ``agent_cfg`` is the ``agent`` group: ``name`` (a key of :data:`odyssey_agents.registry.AGENTS`),
  optionally ``addons`` (a list of add-on names, e.g. ``[reflection, short_term_memory]``), and the
  paradigm's own parameters.
* ``llm_cfg`` is the ``llm`` group: ``name`` (``none`` for agents without a model, or a backend such as
  ``embedded``, ``openai``, ``vllm``, ``hf``, ``scripted``) and the backend's settings (``model``, ...).
* If the agent class defines ``from_config(agent_params, llm_cfg, seed)`` (a classmethod), it is
  called with the parameters (everything but ``name``), the llm group as a plain dict, and the cell
  seed; it builds its backend and add-ons itself. LLM paradigms use this.
* Otherwise the class is called with the parameters as keyword arguments (the episode seed reaches
  it through ``Task`` in ``reset``); such agents take no model, so an ``llm`` other than ``none`` is
  refused instead of being silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from odyssey_agents.base import Agent
from odyssey_agents.errors import ConfigError
from odyssey_agents.options import keyword_options
from odyssey_agents.registry import AgentUnavailable, agent_class

__all__ = ["AgentUnavailable", "ConfigError", "build_agent"]


def build_agent(agent_cfg: Mapping[str, Any], llm_cfg: Mapping[str, Any] | None = None, *, seed: int = 0) -> Agent:
    """Build the agent a cell asks for (see the module docstring for the contract)."""
    params = dict(agent_cfg)
    name = params.pop("name", None)
    if not name:
        raise ConfigError("the agent config needs a name (agent=random, agent=oracle, ...)")
    llm = dict(llm_cfg or {"name": "none"})
    cls = agent_class(name)  # raises AgentUnavailable with the extra to install
    from_config = getattr(cls, "from_config", None)
    if from_config is not None:
        return from_config(params, llm, seed)
    if llm.get("name", "none") != "none":
        raise ConfigError(f"agent {name!r} uses no language model; drop llm={llm.get('name')} (or use llm=none)")
    if params.get("addons"):
        raise ConfigError(f"agent {name!r} takes no add-ons, got {list(params['addons'])}")
    params.pop("addons", None)
    accepted = keyword_options(cls)
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise ConfigError(
            f"agent {name!r} has no parameter(s) {', '.join(unknown)}; "
            f"it takes: {', '.join(sorted(accepted)) or 'nothing'}"
        )
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"cannot build agent {name!r}: {exc}") from exc
