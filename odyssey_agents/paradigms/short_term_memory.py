"""ShortTermMemory: a sliding window of the last N observation–reasoning–action tuples (paper §4)."""

from __future__ import annotations

from typing import Any

from odyssey_agents.llm import LLM
from odyssey_agents.paradigms.react_agent import AgentConfigError, ReActAgent

__all__ = ["ShortTermMemoryAgent"]


class ShortTermMemoryAgent(ReActAgent):
    """Keeps the last ``memory_size`` steps (default 5, as in the paper's setup); the prompt is bounded."""

    name = "short_term_memory"

    def __init__(self, llm: LLM, *, memory_size: int = 5, **kwargs: Any):
        if int(memory_size) < 1:
            raise AgentConfigError(f"memory_size must be at least 1, got {memory_size}")
        self.window = int(memory_size)
        super().__init__(llm, **kwargs)

    def _own_description(self) -> dict[str, Any]:
        return {"memory_size": self.window}
