"""What the four retrieval paradigms share: an embedder, a text memory over a vector index, retrieval
into the prompt and into QA answers, and checkpoints of all of it.

The order of one step (``ReActAgent.act``): reflection on the previous step (if on), summarisation
(if due), then :meth:`RetrievalAgent._prepare`: the paradigm stores the previous step, with its
reflection, in its long-term memory and retrieves for the current observation; then the act call.
The step just taken is stored at the next step, once its reflection exists, so the record that is
embedded is the whole observation-reasoning-action(-reflection) tuple.

Records are embedded from a *key text* that puts the short parts first (action, reasoning,
reflection, then the observation): sentence encoders read a bounded number of word pieces
(all-MiniLM-L6-v2: 256) and a game observation alone can fill them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from odyssey_agents.base import Answer, Usage
from odyssey_agents.llm import LLM
from odyssey_agents.llm.protocol import MissingExtra
from odyssey_agents.memory import StepRecord
from odyssey_agents.paradigms.react_agent import AgentConfigError, ReActAgent
from odyssey_agents.prompting.prompt import Section
from odyssey_agents.prompting.reply import parse_reply
from odyssey_agents.registry import AgentUnavailable
from odyssey_agents.retrieval.embedder import (
    Embedder,
    EmbedderConfigError,
    EmbedLedger,
    HashingEmbedder,
    build_embedder,
)
from odyssey_agents.retrieval.index import VectorIndex

__all__ = ["RetrievalAgent", "TextMemory", "record_key"]


def record_key(record: StepRecord) -> str:
    """The text a step is embedded from: the short, telling parts first (see module docstring)."""
    parts = [f"Action: {record.action}", f"Reasoning: {record.reasoning}"]
    if record.reflection:
        parts.append(f"Reflection: {record.reflection}")
    parts.append(f"Observation: {record.observation}")
    return "\n".join(parts)


class TextMemory:
    """Texts (with a small metadata dict each) under integer ids, searchable by their embeddings."""

    def __init__(self, dim: int):
        self.items: dict[int, dict[str, Any]] = {}
        self.index = VectorIndex(dim)
        self.next_id = 0

    def __len__(self) -> int:
        return len(self.items)

    def add(self, text: str, vector: np.ndarray, **meta: Any) -> int:
        key = self.next_id
        self.next_id += 1
        self.items[key] = {"text": text, **meta}
        self.index.add(key, vector)
        return key

    def update(self, key: int, text: str, vector: np.ndarray, **meta: Any) -> None:
        self.items[key].update(text=text, **meta)
        self.index.add(key, vector)

    def delete(self, key: int) -> None:
        del self.items[key]
        self.index.remove(key)

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        return self.index.search(vector, k)

    def save(self, directory: Path, name: str) -> None:
        data = {"next_id": self.next_id, "items": [[k, v] for k, v in self.items.items()]}
        (Path(directory) / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        self.index.save(directory, name)

    def load(self, directory: Path, name: str) -> None:
        data = json.loads((Path(directory) / f"{name}.json").read_text(encoding="utf-8"))
        self.next_id = int(data["next_id"])
        self.items = {int(k): v for k, v in data["items"]}
        self.index = VectorIndex.load(directory, name)
        if set(self.items) != self.index.keys():
            raise ValueError(f"{Path(directory) / name}: texts and index disagree; the checkpoint is damaged")


class RetrievalAgent(ReActAgent):
    """A ReAct agent with a long-term memory it retrieves from. Subclasses fill :meth:`_store` and
    :meth:`_recall`; this class embeds, counts, shows and checkpoints."""

    window = 0
    #: Title of the prompt section that holds what was retrieved.
    retrieved_title = "My relevant memories"
    #: Memory files this paradigm writes next to ``memory.json`` (names of :class:`TextMemory` objects).
    stores: tuple[str, ...] = ()

    def __init__(
        self,
        llm: LLM,
        *,
        embedder: Mapping[str, Any] | Embedder | HashingEmbedder | None = None,
        top_k: int = 5,
        **kwargs: Any,
    ):
        if int(top_k) < 1:
            raise AgentConfigError(f"top_k must be at least 1, got {top_k}")
        self.top_k = int(top_k)
        try:
            self.embedder = build_embedder(embedder)
        except EmbedderConfigError as exc:
            raise AgentConfigError(str(exc)) from exc
        super().__init__(llm, **kwargs)

    @classmethod
    def from_config(cls, params: Mapping[str, Any], llm_cfg: Mapping[str, Any], seed: int) -> ReActAgent:
        """As :meth:`ReActAgent.from_config`; a missing package is one line naming the extra to install
        (the embedder loads sentence-transformers only here, when the agent is built)."""
        try:
            return super().from_config(params, llm_cfg, seed)
        except MissingExtra as exc:
            raise AgentUnavailable(f"agent {cls.name!r}: {exc}") from None

    # ------------------------------------------------------------------ memory
    def _clear(self) -> None:
        super()._clear()
        self.ledger = EmbedLedger()
        self.retrieved: list[str] = []  # texts shown under retrieved_title in the next prompt
        self.stored_step = -1  # the last step committed to long-term memory
        for name in self.stores:
            setattr(self, name, TextMemory(self.embedder.dim))

    def _embed(self, texts: Sequence[str], usage: Usage) -> np.ndarray:
        vectors, call = self.embedder.embed(texts)
        if texts:
            usage.add(call)
            self.ledger.record(len(texts), call)
        return vectors

    def _prepare(self, observation: str, usage: Usage) -> None:
        pending = self.previous if self.previous is not None and self.previous.step > self.stored_step else None
        self.retrieved = self._step_memory(pending, observation, usage)
        if pending is not None:
            self.stored_step = pending.step

    def _step_memory(self, pending: StepRecord | None, observation: str, usage: Usage) -> list[str]:
        """Store ``pending`` (the previous step, or None) and return the texts to show for ``observation``."""
        raise NotImplementedError

    def _recall(self, query: str, usage: Usage) -> list[str]:
        """The texts to show for a free-text ``query`` (a QA question), memory unchanged."""
        raise NotImplementedError

    def _own_sections(self) -> list[Section]:
        return [(self.retrieved_title, "\n\n".join(self.retrieved))] if self.retrieved else []

    def _in_window(self) -> set[int]:
        return {r.step for r in self.records}

    # ------------------------------------------------------------------ add-on style calls
    def _ask_json(
        self,
        messages: list[dict[str, str]],
        purpose: str,
        keys: Sequence[str],
        usage: Usage,
        max_tokens: int | None = None,
    ) -> dict[str, Any] | None:
        """One model call whose reply is a JSON object with ``keys``; None when it is unusable."""
        completion, call = self._complete(messages, purpose=purpose, max_tokens=max_tokens, json_keys=tuple(keys))
        usage.add(call)
        reply = parse_reply(completion.text, tuple(keys), required=tuple(keys))
        return reply.fields if reply.ok else None

    # ------------------------------------------------------------------ QA
    def answer(self, question: str, choices: list[str]) -> Answer:
        """Retrieve for the question (and its choices) from long-term memory, then answer as usual."""
        usage = Usage()
        shown = self.retrieved
        self.retrieved = self._recall(question + "\n" + "\n".join(choices), usage)
        try:
            out = super().answer(question, choices)
        finally:
            self.retrieved = shown
        out.usage.calls[:0] = usage.calls
        return out

    # ------------------------------------------------------------------ checkpoints
    def save(self, directory: Path) -> None:
        for name in self.stores:
            getattr(self, name).save(directory, name)
        super().save(directory)  # memory.json last: it names a complete memory

    def load(self, directory: Path) -> None:
        super().load(directory)
        for name in self.stores:
            getattr(self, name).load(directory, name)

    def _state(self) -> dict[str, Any]:
        return {
            "ledger": self.ledger.to_dict(),
            "retrieved": self.retrieved,
            "stored_step": self.stored_step,
            **self._memory_state(),
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        self.ledger = EmbedLedger.from_dict(state["ledger"])
        self.retrieved = list(state["retrieved"])
        self.stored_step = int(state["stored_step"])
        self._set_memory_state(state)

    def _memory_state(self) -> dict[str, Any]:
        return {}

    def _set_memory_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`_memory_state`."""

    def _own_description(self) -> dict[str, Any]:
        return {"top_k": self.top_k, "embedder": self.embedder.describe(), **self._retrieval_description()}

    def _retrieval_description(self) -> dict[str, Any]:
        return {}

    def stats(self) -> dict[str, Any]:
        sizes = {f"{name}_size": len(getattr(self, name)) for name in self.stores}
        return {**super().stats(), "embedding": self.ledger.to_dict(), **sizes}
