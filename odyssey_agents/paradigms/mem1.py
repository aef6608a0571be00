"""Mem1: a bounded internal state that the model rewrites at every step (paper §4, MEM1).

The reply carries the new state in the same strict JSON object as the action, so there is one
format, not two (the reference asked for ``<IS>...</IS>`` text while demanding JSON only). The state
is capped at ``max_memory_tokens`` (counted with the backend's tokenizer): a longer one is cut and
the cut counted. A malformed reply, or one without ``memory``, keeps the previous state.
"""

from __future__ import annotations

from typing import Any

from odyssey_agents.llm import LLM
from odyssey_agents.paradigms.react_agent import AgentConfigError, ReActAgent
from odyssey_agents.prompting.prompt import Section
from odyssey_agents.prompting.reply import Reply

__all__ = ["Mem1Agent"]


class Mem1Agent(ReActAgent):
    name = "mem1"
    window = 0
    keys = ("reasoning", "memory", "action")

    def __init__(self, llm: LLM, *, max_memory_tokens: int = 512, **kwargs: Any):
        if int(max_memory_tokens) < 16:
            raise AgentConfigError(f"max_memory_tokens must be at least 16, got {max_memory_tokens}")
        self.max_memory_tokens = int(max_memory_tokens)
        self.key_docs = {
            "memory": (
                f"Your updated internal state: everything from your previous state and this "
                f"observation that you will need later (goals, places, objects, recipes, "
                f"what failed). It replaces the previous state; at most "
                f"{self.max_memory_tokens} tokens."
            )
        }
        super().__init__(llm, **kwargs)

    def _clear(self) -> None:
        super()._clear()
        self.state_text = ""
        self.counters.update(memory_truncations=0, memory_missing=0)

    def _own_sections(self) -> list[Section]:
        return [("My internal state", self.state_text or "(empty: this is my first step)")]

    def _absorb(self, reply: Reply) -> None:
        if not reply.ok:
            return
        if "memory" not in reply.fields:
            self.counters["memory_missing"] += 1
            return
        self.state_text = self._bound(reply.text("memory"))

    def _bound(self, text: str) -> str:
        n = self.llm.count_text(text)
        if n <= self.max_memory_tokens:
            return text
        self.counters["memory_truncations"] += 1
        while text and n > self.max_memory_tokens:
            text = text[: int(len(text) * self.max_memory_tokens / n * 0.95)]
            n = self.llm.count_text(text)
        return text

    def _state(self) -> dict[str, Any]:
        return {"state": self.state_text}

    def _set_state(self, state: dict[str, Any]) -> None:
        self.state_text = state["state"]

    def _own_description(self) -> dict[str, Any]:
        return {"max_memory_tokens": self.max_memory_tokens}
