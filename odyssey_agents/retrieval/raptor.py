"""RAPTOR (paper §4, Sarthi et al. 2024): a tree of summaries over the steps, built incrementally.

Leaves are step records; a parent is the model's summary (purpose ``summarise``) of a cluster of
similar nodes one layer down; retrieval is RAPTOR's *collapsed tree*: one search over every node of
every layer, so a question about one moment finds a leaf and a question about a stretch of play finds
a summary. The ``top_k`` nodes shown exclude the steps the short-term window already shows.

Why ``summary_k``: in a game the query is the current observation, and every leaf holds an observation
of the same form (time, location, hands, stats, exits), so leaves outscore any summary by the form alone
(cosine 0.84-0.95 against under 0.8 with MiniLM): with pure similarity not one of 30 act prompts of a
30-step run held a summary, and a fact that only a summary holds (how often a place was visited, what
a stretch of play amounted to) never reached the model. So ``summary_k`` of the ``top_k`` slots
(default 2; 0 is RAPTOR's pure collapsed tree) go to the summaries most similar to the query, searched
in an index of their own; the other slots are the collapsed tree's best nodes of any layer.

The reference rebuilt the whole tree from all memory at every step (quadratic in the episode).
Here a new node joins a layer's *open clusters* instead:

* it joins the open cluster whose centroid is most similar, if that similarity reaches
  ``cluster_threshold``, else it opens a cluster of its own;
* a cluster that reaches ``max_children`` members is sealed; so is the least recently extended one
  when a layer has more than ``max_open`` open clusters;
* sealing a cluster of two or more nodes writes their parent (one summary call, one embedding) and
  inserts it one layer up, the same way; a sealed single node stays a root (no summary of one node);
* the top layer (``max_layers``) clusters nothing: its nodes are roots.

A step therefore compares its leaf with at most ``max_open`` centroids of at most ``max_children``
nodes per layer it reaches, and every parent summarises at least two nodes, so summaries are fewer
than steps: at most one summary call per step amortised, and a bounded number of nodes touched per
step amortised (``nodes_touched`` in the stats; tested).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from odyssey_agents.base import Usage
from odyssey_agents.llm import LLM
from odyssey_agents.memory import StepRecord
from odyssey_agents.paradigms.react_agent import AgentConfigError
from odyssey_agents.retrieval.base import RetrievalAgent, TextMemory, record_key

__all__ = ["RaptorAgent"]

_SLACK = 8


class RaptorAgent(RetrievalAgent):
    name = "raptor"
    stores = ("nodes", "summary_nodes")  # summary_nodes: the summaries again (items name their node), searched apart
    nodes: TextMemory  # made from ``stores`` by RetrievalAgent.__init__
    summary_nodes: TextMemory

    def __init__(
        self,
        llm: LLM,
        *,
        max_children: int = 6,
        max_open: int = 4,
        cluster_threshold: float = 0.5,
        max_layers: int = 5,
        node_words: int = 100,
        summary_k: int = 2,
        **kwargs: Any,
    ):
        if int(max_children) < 2 or int(max_open) < 1 or int(max_layers) < 2 or int(node_words) < 10:
            raise AgentConfigError(
                "raptor needs max_children >= 2, max_open >= 1, max_layers >= 2 and "
                f"node_words >= 10; got {max_children}, {max_open}, {max_layers}, {node_words}"
            )
        if not -1.0 <= float(cluster_threshold) <= 1.0:
            raise AgentConfigError(f"cluster_threshold is a cosine similarity in [-1, 1], got {cluster_threshold}")
        self.max_children, self.max_open, self.max_layers = int(max_children), int(max_open), int(max_layers)
        self.cluster_threshold, self.node_words = float(cluster_threshold), int(node_words)
        super().__init__(llm, **kwargs)
        self.summary_k = int(summary_k)
        if not 0 <= self.summary_k <= self.top_k:
            raise AgentConfigError(f"summary_k must be between 0 and top_k ({self.top_k}), got {summary_k}")

    def _clear(self) -> None:
        super()._clear()
        # per layer below the top: open clusters, each {"members": [node ids], "tick": last extension}
        self.open: list[list[dict[str, Any]]] = [[] for _ in range(self.max_layers - 1)]
        self.tick = 0
        self.touched_last_step = 0
        self.counters.update(
            raptor_summaries=0,
            raptor_summary_failures=0,
            nodes_touched=0,
            max_nodes_touched=0,
            layers=1,
            summaries_shown=0,  # summary nodes put into prompts (act and answer), over the run
        )

    # ------------------------------------------------------------------ one step
    def _step_memory(self, pending: StepRecord | None, observation: str, usage: Usage) -> list[str]:
        self.touched_last_step = 0
        if pending is None:
            return self._pick(self._embed([observation], usage)[0])
        vectors = self._embed([record_key(pending), observation], usage)
        leaf = self.nodes.add(
            pending.render(), vectors[0], layer=0, first=pending.step, last=pending.step, children=[], parent=None
        )
        self._insert(leaf, 0, vectors[0], usage)
        self.counters["nodes_touched"] += self.touched_last_step
        self.counters["max_nodes_touched"] = max(self.counters["max_nodes_touched"], self.touched_last_step)
        return self._pick(vectors[1])

    def _recall(self, query: str, usage: Usage) -> list[str]:
        return self._pick(self._embed([query], usage)[0])

    def _pick(self, query: np.ndarray) -> list[str]:
        if not len(self.nodes):
            return []
        skip = self._in_window()
        picked: dict[int, None] = {}
        for key, _ in self.summary_nodes.search(query, self.summary_k) if self.summary_k else ():
            picked[self.summary_nodes.items[key]["node"]] = None  # the summary slots (module docstring)
        for key, _ in self.nodes.search(query, self.top_k + len(skip) + _SLACK):
            if len(picked) >= self.top_k:
                break
            node = self.nodes.items[key]
            if key in picked or (node["layer"] == 0 and node["first"] in skip):
                continue
            picked[key] = None
        chosen = [self.nodes.items[k] for k in picked]
        self.counters["summaries_shown"] += sum(1 for n in chosen if n["layer"] > 0)
        chosen.sort(key=lambda n: (n["first"], -n["layer"]))
        return [
            n["text"] if n["layer"] == 0 else f"[Summary of steps {n['first']}-{n['last']}]\n{n['text']}"
            for n in chosen
        ]

    # ------------------------------------------------------------------ the tree
    def _insert(self, node: int, layer: int, vector: np.ndarray, usage: Usage) -> None:
        self.touched_last_step += 1
        if layer >= self.max_layers - 1:
            return  # the top layer: a root
        clusters = self.open[layer]
        self.tick += 1
        best, best_sim = None, -2.0
        for cluster in clusters:
            members = [self.nodes.index.vector(m) for m in cluster["members"]]
            self.touched_last_step += len(members)
            centroid = np.mean(members, axis=0)
            sim = float(vector @ centroid) / max(float(np.linalg.norm(centroid)), 1e-12)
            if sim > best_sim:
                best, best_sim = cluster, sim
        if best is not None and best_sim >= self.cluster_threshold:
            best["members"].append(node)
            best["tick"] = self.tick
            if len(best["members"]) >= self.max_children:
                self._seal(best, layer, usage)
            return
        clusters.append({"members": [node], "tick": self.tick})
        if len(clusters) > self.max_open:
            self._seal(min(clusters, key=lambda c: c["tick"]), layer, usage)

    def _seal(self, cluster: dict[str, Any], layer: int, usage: Usage) -> None:
        self.open[layer].remove(cluster)
        members = cluster["members"]
        if len(members) < 2:
            return  # a node alone stays a root: a summary of one node would say nothing new
        self.touched_last_step += len(members)
        items = [self.nodes.items[m] for m in members]
        texts = "\n\n".join(i["text"] for i in sorted(items, key=lambda i: i["first"]))
        messages = self.prompts.summarise("", texts, self.node_words)
        text = self._ask(messages, "summarise", "summary", usage)
        if not text:
            self.counters["raptor_summary_failures"] += 1
            return  # the members stay roots; retrieval still finds them
        self.counters["raptor_summaries"] += 1
        vector = self._embed([text], usage)[0]
        parent = self.nodes.add(
            text,
            vector,
            layer=layer + 1,
            first=min(i["first"] for i in items),
            last=max(i["last"] for i in items),
            children=list(members),
            parent=None,
        )
        for item in items:
            item["parent"] = parent
        self.summary_nodes.add("", vector, node=parent)
        self.counters["layers"] = max(self.counters["layers"], layer + 2)
        self._insert(parent, layer + 1, vector, usage)

    # ------------------------------------------------------------------ checkpoints
    def _memory_state(self) -> dict[str, Any]:
        return {"open": self.open, "tick": self.tick}

    def _set_memory_state(self, state: dict[str, Any]) -> None:
        self.open = [
            [{"members": [int(m) for m in c["members"]], "tick": int(c["tick"])} for c in layer]
            for layer in state["open"]
        ]
        self.tick = int(state["tick"])

    def _retrieval_description(self) -> dict[str, Any]:
        return {
            "max_children": self.max_children,
            "max_open": self.max_open,
            "cluster_threshold": self.cluster_threshold,
            "max_layers": self.max_layers,
            "node_words": self.node_words,
            "summary_k": self.summary_k,
        }
