"""Mem0 (paper §4, Chhikara et al. 2025): a memory of facts the model extracts and keeps up to date.

The published two-phase algorithm, on this project's backends and embedder:

1. **Extraction** (purpose ``extract``): after each step the model reads that step (observation,
   reasoning, action, reflection), what came of it, and the running notes when summarisation is on,
   and writes at most ``max_facts`` salient facts.
2. **Update** (purpose ``update``): each candidate fact is embedded and compared with its
   ``compare_k`` nearest stored memories; the model sees those memories (under small integer ids, so
   it cannot invent real ones) and the new facts, and decides per fact ADD, UPDATE (id + merged
   text), DELETE (id) or NONE. When memory is still empty every fact is added without asking.

Retrieval returns the ``top_k`` facts nearest the current observation. Unusable replies are counted
(``extract_failures``, ``update_failures``, ``invalid_operations``); when the update reply is
unusable the facts are added as they are (so nothing extracted is lost) and the fallback is counted.

Why not the ``mem0ai`` library: version 2.2.1 (checked offline) no longer runs the published update
phase (its ``add`` only ever ADDs, in one extraction call), draws random UUIDs and wall-clock
timestamps (no reproducible runs), writes a SQLite history under ``~/.mem0`` at import, wants spaCy
for its keyword index and its own LLM provider classes, whose calls our ledger would not see. See
docs/agents.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from odyssey_agents.base import Usage
from odyssey_agents.llm import LLM
from odyssey_agents.memory import StepRecord
from odyssey_agents.paradigms.react_agent import AgentConfigError
from odyssey_agents.retrieval import prompts
from odyssey_agents.retrieval.base import RetrievalAgent, TextMemory

__all__ = ["Mem0Agent"]

EVENTS = ("ADD", "UPDATE", "DELETE", "NONE")
_MAX_FACT_CHARS = 400


class Mem0Agent(RetrievalAgent):
    name = "mem0"
    stores = ("facts",)
    facts: TextMemory  # made from ``stores`` by RetrievalAgent.__init__
    retrieved_title = "Facts I remember"

    def __init__(self, llm: LLM, *, max_facts: int = 5, compare_k: int = 5, **kwargs: Any):
        if int(max_facts) < 1 or int(compare_k) < 1:
            raise AgentConfigError(f"max_facts and compare_k must be at least 1, got {max_facts}, {compare_k}")
        self.max_facts, self.compare_k = int(max_facts), int(compare_k)
        super().__init__(llm, **kwargs)

    def _clear(self) -> None:
        super()._clear()
        self.counters.update(
            extract_failures=0, update_failures=0, invalid_operations=0, **{f"facts_{e.lower()}": 0 for e in EVENTS}
        )

    # ------------------------------------------------------------------ one step
    def _step_memory(self, pending: StepRecord | None, observation: str, usage: Usage) -> list[str]:
        facts = self._extract(pending, observation, usage) if pending is not None else []
        vectors = self._embed([*facts, observation], usage)
        if pending is not None and facts:
            self._update(facts, vectors[:-1], pending.step, usage)
        return self._pick(vectors[-1])

    def _recall(self, query: str, usage: Usage) -> list[str]:
        return self._pick(self._embed([query], usage)[0])

    def _pick(self, query: np.ndarray) -> list[str]:
        return [f"- {self.facts.items[k]['text']}" for k, _ in self.facts.search(query, self.top_k)]

    def _extract(self, step: StepRecord, outcome: str, usage: Usage) -> list[str]:
        messages = prompts.extract_facts(step.render(), outcome, self.summary, self.max_facts)
        fields = self._ask_json(messages, "extract", ("facts",), usage)
        raw = _as_list(fields.get("facts")) if fields else None
        if raw is None:
            self.counters["extract_failures"] += 1
            return []
        facts = list(dict.fromkeys(" ".join(str(f).split())[:_MAX_FACT_CHARS] for f in raw if str(f).strip()))
        return facts[: self.max_facts]

    def _update(self, facts: list[str], vectors: np.ndarray, step: int, usage: Usage) -> None:
        if not len(self.facts):
            for text, vec in zip(facts, vectors, strict=True):
                self.counters["facts_add"] += 1
                self._add(text, vec, step)
            return
        neighbours: dict[int, None] = {}  # stored ids, in order of first appearance
        for vec in vectors:
            for key, _ in self.facts.search(vec, self.compare_k):
                neighbours.setdefault(key)
        shown = list(neighbours)  # shown id i <-> stored id shown[i]
        messages = prompts.update_memories([(str(i), self.facts.items[k]["text"]) for i, k in enumerate(shown)], facts)
        fields = self._ask_json(messages, "update", ("operations",), usage)
        ops = _as_operations(fields.get("operations")) if fields else None
        if ops is None:
            self.counters["update_failures"] += 1
            for text, vec in zip(facts, vectors, strict=True):
                self._add(text, vec, step)
            return
        known = dict(zip(facts, vectors, strict=True))
        plan: list[tuple[str, int | None, str]] = []
        touched: set[int] = set()
        for op in ops:
            event = str(op.get("event", "")).upper() if isinstance(op, dict) else ""
            text = " ".join(str(op.get("text", "")).split())[:_MAX_FACT_CHARS] if isinstance(op, dict) else ""
            target = _shown_id(op.get("id") if isinstance(op, dict) else None, shown)
            valid = (event == "ADD" and text) or (
                event in ("UPDATE", "DELETE", "NONE")
                and target is not None
                and target not in touched
                and (event != "UPDATE" or text)
            )
            if not valid:
                self.counters["invalid_operations"] += 1
                continue
            if target is not None:
                touched.add(target)
            plan.append((event, target, text))
        fresh = list(dict.fromkeys(t for e, _, t in plan if e in ("ADD", "UPDATE") and t not in known))
        if fresh:
            known.update(zip(fresh, self._embed(fresh, usage), strict=True))
        for event, target, text in plan:
            self.counters[f"facts_{event.lower()}"] += 1
            if event == "ADD":
                self._add(text, known[text], step)
            elif event == "UPDATE":
                assert target is not None  # an UPDATE names a shown fact (valid, above)
                self.facts.update(target, text, known[text], updated=step)
            elif event == "DELETE":
                assert target is not None  # so does a DELETE
                self.facts.delete(target)

    def _add(self, text: str, vector: np.ndarray, step: int) -> None:
        self.facts.add(text, vector, created=step, updated=step)

    def _retrieval_description(self) -> dict[str, Any]:
        return {"max_facts": self.max_facts, "compare_k": self.compare_k}


_PIECES = re.compile(r"\n+|;\s*|(?<=[.!?])\s+")
_OPERATION = re.compile(r"^\W*(ADD|UPDATE|DELETE|NONE)\b[\s:]*(?:id\s*)?(?:\[?(\d+)\]?)?\s*[:\-]?\s*(.*)$", re.I)
_OP_SPLIT = re.compile(r"\n+|;\s*|(?<=[.!?])\s+(?=(?:ADD|UPDATE|DELETE|NONE)\b)", re.I)


def _as_list(value: Any) -> list[Any] | None:
    """Facts as a list; a backend that writes every value as a string (guided JSON) gives one text,
    split into its lines, semicolon parts or sentences (or a JSON list written inside the string)."""
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):
            return parsed
    return [p.strip(" -*") for p in _PIECES.split(text) if p.strip(" -*")]


def _as_operations(value: Any) -> list[Any] | None:
    """Operations as a list of objects; from a string, a JSON list inside it or one operation a line
    (``ADD: text``, ``UPDATE 2: text``, ``DELETE 1``, ``NONE 0``). None when nothing can be read."""
    if isinstance(value, list):
        return value
    items = _as_list(value) if isinstance(value, str) and value.strip().startswith("[") else None
    if items is not None and all(isinstance(i, dict) for i in items):
        return items
    if not isinstance(value, str):
        return None
    ops = []
    for line in _OP_SPLIT.split(value):
        m = _OPERATION.match(line.strip())
        if m:
            ops.append({"event": m.group(1).upper(), "id": m.group(2), "text": m.group(3)})
    return ops or None


def _shown_id(value: Any, shown: list[int]) -> int | None:
    try:
        i = int(str(value).strip().strip("[]"))
    except (TypeError, ValueError):
        return None
    return shown[i] if 0 <= i < len(shown) else None
