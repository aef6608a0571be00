"""VanillaRAG (paper §4, Lewis et al. 2020): every step embedded, the most similar past steps retrieved.

Each step's record (observation, reasoning, action, and the reflection written about it when that
add-on is on) is embedded and added to a vector index; the act prompt carries the ``top_k`` past
steps most similar to the current observation, oldest first, without duplicates (two steps with the
same observation, reasoning and action count once) and without the steps the short-term window
already shows. One embedding call per step embeds the previous record and the current observation
together. The prompt is bounded (k records); the index search is about logarithmic in the steps.
"""

from __future__ import annotations

import hashlib
from typing import Any

from odyssey_agents.base import Usage
from odyssey_agents.memory import StepRecord
from odyssey_agents.retrieval.base import RetrievalAgent, TextMemory, record_key

__all__ = ["VanillaRAGAgent"]

_SLACK = 8  # extra neighbours fetched so that de-duplication still leaves k


class VanillaRAGAgent(RetrievalAgent):
    name = "vanilla_rag"
    stores = ("episodes",)
    episodes: TextMemory  # made from ``stores`` by RetrievalAgent.__init__

    def _step_memory(self, pending: StepRecord | None, observation: str, usage: Usage) -> list[str]:
        if pending is None:
            query = self._embed([observation], usage)[0]
        else:
            vectors = self._embed([record_key(pending), observation], usage)
            self.episodes.add(pending.render(), vectors[0], step=pending.step, key=_dedup_key(pending))
            query = vectors[1]
        return self._pick(query)

    def _recall(self, query: str, usage: Usage) -> list[str]:
        return self._pick(self._embed([query], usage)[0])

    def _pick(self, query) -> list[str]:
        if not len(self.episodes):
            return []
        skip = self._in_window()
        seen: set[str] = set()
        chosen: list[dict[str, Any]] = []
        for key, _score in self.episodes.search(query, self.top_k + len(skip) + _SLACK):
            item = self.episodes.items[key]
            if item["step"] in skip or item["key"] in seen:
                continue
            seen.add(item["key"])
            chosen.append(item)
            if len(chosen) == self.top_k:
                break
        return [item["text"] for item in sorted(chosen, key=lambda i: i["step"])]


def _dedup_key(record: StepRecord) -> str:
    """Steps that read the same apart from their number and clock are one memory."""
    lines = [ln for ln in record.observation.splitlines() if not ln.startswith("Current Time:")]
    text = "\n".join([*lines, record.reasoning, record.action, record.reflection])
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
