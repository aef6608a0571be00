"""Agent names used in configs (``agent=random``) mapped to the classes that implement them.

Entries are import paths, imported only when an agent is built, so listing agents is free and a
paradigm's heavy dependencies are paid for only by the runs that use it. An entry may name the
optional extra its module needs; when that import fails the error says what to install.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from odyssey_agents.base import Agent
from odyssey_agents.errors import OdysseyError
from odyssey_env.extras import install_command

__all__ = ["AGENTS", "RENAMED", "AgentEntry", "AgentUnavailable", "agent_class", "available_agents", "register_agent"]


class AgentUnavailable(OdysseyError, ImportError):
    """An agent that cannot be built here: unknown name, missing module, or a missing extra."""


@dataclass(frozen=True)
class AgentEntry:
    target: str  # "package.module:ClassName"
    extra: str | None = None  # optional-dependency group its module needs (pip install "odyssey-gym[extra]")
    summary: str = ""


AGENTS: dict[str, AgentEntry] = {
    "random": AgentEntry(
        "odyssey_agents.random_agent:RandomAgent",
        None,
        "a uniformly random verb, then one of its valid commands (seeded)",
    ),
    "replay": AgentEntry(
        "odyssey_agents.replay:ReplayAgent",
        None,
        "replays the commands of a trajectory.jsonl or a text file, one per line",
    ),
    "human": AgentEntry("odyssey_agents.human:HumanAgent", None, "you, typing commands in the terminal"),
    "oracle": AgentEntry(
        "odyssey_agents.oracle:OracleAgent", None, "privileged planner that reads the true state (upper bound)"
    ),
    # LLM paradigms (paper §4); the backend comes from the llm group, add-ons from agent.addons
    "no_memory": AgentEntry(
        "odyssey_agents.paradigms.no_memory:NoMemoryAgent", "llm", "ReAct on the current observation only"
    ),
    "long_context": AgentEntry(
        "odyssey_agents.paradigms.long_context:LongContextAgent",
        "llm",
        "ReAct with every past step in the prompt (grows linearly)",
    ),
    "short_term_memory": AgentEntry(
        "odyssey_agents.paradigms.short_term_memory:ShortTermMemoryAgent",
        "llm",
        "ReAct with the last N observation-reasoning-action tuples",
    ),
    "mem1": AgentEntry(
        "odyssey_agents.paradigms.mem1:Mem1Agent",
        "llm",
        "ReAct with a bounded internal state the model rewrites each step",
    ),
    # retrieval paradigms (paper §4): sentence-transformers embeddings and a faiss index
    "vanilla_rag": AgentEntry(
        "odyssey_agents.retrieval.vanilla_rag:VanillaRAGAgent",
        "rag",
        "ReAct with the top-k most similar past steps retrieved into the prompt",
    ),
    "mem0": AgentEntry(
        "odyssey_agents.retrieval.mem0:Mem0Agent",
        "rag",
        "ReAct with facts the model extracts and keeps up to date (ADD/UPDATE/DELETE/NONE)",
    ),
    "raptor": AgentEntry(
        "odyssey_agents.retrieval.raptor:RaptorAgent",
        "rag",
        "ReAct with an incrementally built tree of summaries, searched as a collapsed tree",
    ),
    "voyager": AgentEntry(
        "odyssey_agents.retrieval.voyager:VoyagerAgent",
        "rag",
        "ReAct with an automatic curriculum, a critic and a retrieved skill library",
    ),
    # agents that learn in the model itself (paper §4, Experiment 2): local models only (llm=hf, llm=embedded)
    "lora_sft": AgentEntry(
        "odyssey_agents.training.lora_sft:LoRASFTAgent",
        "train",
        "ReAct that fine-tunes a LoRA adapter on its own recent steps as it plays",
    ),
    "rl_lora": AgentEntry(
        "odyssey_agents.training.rl_lora:RLLoRAAgent",
        "train",
        "ReAct that trains a LoRA adapter by policy gradient on the env's rewards as it plays",
    ),
    "kv_window": AgentEntry(
        "odyssey_agents.latent.kv_window:KVWindowAgent",
        "train",
        "ReAct with the raw keys and values of its recent steps in the model's attention (a windowed context)",
    ),
    "memoryllm": AgentEntry(
        "odyssey_agents.latent.memoryllm:MemoryLLMAgent",
        "train",
        "MemoryLLM: per-layer memory tokens the model updates itself each step, a random share forgotten",
    ),
    "mplus": AgentEntry(
        "odyssey_agents.latent.memoryllm:MPlusAgent",
        "train",
        "M+: MemoryLLM plus a long-term memory of forgotten tokens, retrieved per layer for each call",
    ),
}

#: Agent names that were given up, with the one line that says where their agent went.
RENAMED: dict[str, str] = {
    "latent_memory": (
        "agent latent_memory is now agent=kv_window (what it is: the raw keys and values of recent steps in "
        "attention, a windowed context); the paper's latent memory is agent=memoryllm or agent=mplus"
    ),
}


def register_agent(name: str, target: str, *, extra: str | None = None, summary: str = "") -> None:
    """Add (or replace) an agent name; plugins and the LLM paradigms call this."""
    if ":" not in target:
        raise ValueError(f"agent target must look like 'package.module:ClassName', got {target!r}")
    AGENTS[name] = AgentEntry(target, extra, summary)


def available_agents() -> list[str]:
    return sorted(AGENTS)


def agent_class(name: str) -> type[Agent]:
    """Import and return the class registered as ``name``, or raise :class:`AgentUnavailable`."""
    entry = AGENTS.get(name)
    if entry is None and name in RENAMED:
        raise AgentUnavailable(RENAMED[name])
    if entry is None:
        raise AgentUnavailable(f"unknown agent {name!r}; known agents: {', '.join(available_agents())}")
    module_name, _, class_name = entry.target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing == module_name or module_name.startswith(missing + "."):
            raise AgentUnavailable(
                f"agent {name!r} is not available in this installation (module {module_name} is missing)"
            ) from exc
        if entry.extra:
            raise AgentUnavailable(
                f"agent {name!r} needs the {entry.extra!r} extra (missing module "
                f"{missing!r}): {install_command(entry.extra)}"
            ) from exc
        raise
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Agent)):
        raise AgentUnavailable(f"{entry.target} is not an odyssey_agents.Agent subclass")
    return cls
