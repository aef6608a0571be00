"""A vector index under stable integer ids: faiss HNSW (logarithmic search), deletions, exact resume.

Memories grow by one or a few vectors a step for thousands of steps, so a search must not scan them
all: the graph index (``IndexHNSWFlat``, inner product = cosine on unit vectors) finds neighbours in
about logarithmic time, and an insertion costs about as much as a search. HNSW cannot delete, so a
removed or replaced vector becomes a tombstone that searches skip (they ask for as many extra
neighbours as there are tombstones, up to a bound); once tombstones outnumber live vectors the graph
is rebuilt from the live ones, which costs O(n log n) after at least n/2 deletions: amortised
O(log n) per deletion.

Checkpoints hold the faiss graph itself (``faiss.write_index``), not just the vectors: rebuilding it
would draw other levels and link other neighbours than the run that is being resumed. faiss does not
save the generator that draws each new vector's level, so :meth:`load` advances a fresh one by the
number of vectors the graph holds; a resumed index then grows exactly as the uninterrupted one does
(tested byte for byte).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

logging.getLogger("faiss.loader").setLevel(logging.WARNING)  # not "Loading faiss." in every run's log
import faiss  # noqa: E402  (the rag extra; odyssey_agents.registry names it when missing)

# faiss ships its own stubs (faiss/__init__.pyi), wrong in four places this module meets, each ignored
# where it is met: ``reconstruct`` without an output array returns a numpy row (the stubs' first overload
# says a torch tensor); ``SearchParametersHNSW`` and ``HNSW.random_level`` exist but are not declared;
# ``read_index`` returns the concrete index class it read (declared as the base ``Index``).

__all__ = ["VectorIndex"]

_MAX_EXTRA = 256  # tombstones a search looks past before compaction is due anyway
_COMPACT_MIN = 64


class VectorIndex:
    """Unit vectors of dimension ``dim`` under caller-chosen integer ids."""

    def __init__(self, dim: int, *, m: int = 32, ef_construction: int = 64, ef_search: int = 64):
        self.dim, self.m = int(dim), int(m)
        self.ef_construction, self.ef_search = int(ef_construction), int(ef_search)
        self._fresh()
        self.compactions = 0

    def _fresh(self) -> None:
        self._index = faiss.IndexHNSWFlat(self.dim, self.m, faiss.METRIC_INNER_PRODUCT)
        self._index.hnsw.efConstruction = self.ef_construction
        self._index.hnsw.efSearch = self.ef_search
        self._ids: list[int] = []  # graph position -> id (-1: tombstone)
        self._pos: dict[int, int] = {}  # id -> graph position
        self._dead = 0

    def __len__(self) -> int:
        return len(self._pos)

    def __contains__(self, key: int) -> bool:
        return key in self._pos

    def keys(self) -> set[int]:
        return set(self._pos)

    @property
    def tombstones(self) -> int:
        return self._dead

    # ------------------------------------------------------------------ writing
    def add(self, key: int, vector: np.ndarray) -> None:
        """Store ``vector`` under ``key`` (replacing what ``key`` held)."""
        if key in self._pos:
            self.remove(key)
        vec = np.ascontiguousarray(vector, dtype=np.float32).reshape(1, self.dim)
        self._pos[key] = len(self._ids)
        self._ids.append(key)
        self._index.add(vec)  # one at a time: a batch add is multi-threaded and may link differently

    def remove(self, key: int) -> None:
        pos = self._pos.pop(key)
        self._ids[pos] = -1
        self._dead += 1
        if self._dead >= _COMPACT_MIN and self._dead > len(self._pos):
            self._compact()

    def _compact(self) -> None:
        live = [(key, self._index.reconstruct(pos)) for pos, key in enumerate(self._ids) if key != -1]
        self._fresh()
        for key, vec in live:
            self.add(key, vec)  # type: ignore[arg-type]  # a numpy row (faiss stubs, above)
        self.compactions += 1

    def vector(self, key: int) -> np.ndarray:
        return self._index.reconstruct(self._pos[key])  # type: ignore[return-value]  # a numpy row (faiss stubs)

    # ------------------------------------------------------------------ reading
    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` ids nearest ``query``, most similar first, with their cosine similarities."""
        if not self._pos or k < 1:
            return []
        fetch = min(len(self._ids), k + min(self._dead, _MAX_EXTRA))
        params = faiss.SearchParametersHNSW(efSearch=max(self.ef_search, fetch))  # type: ignore[attr-defined]
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self.dim)
        scores, positions = self._index.search(q, fetch, params=params)
        out: list[tuple[int, float]] = []
        for score, pos in zip(scores[0].tolist(), positions[0].tolist(), strict=True):
            if pos >= 0 and self._ids[pos] != -1:
                out.append((self._ids[pos], float(score)))
                if len(out) == k:
                    break
        return out

    # ------------------------------------------------------------------ checkpoints
    def save(self, directory: Path, name: str) -> None:
        directory = Path(directory)
        faiss.write_index(self._index, str(directory / f"{name}.faiss"))
        meta = {
            "dim": self.dim,
            "m": self.m,
            "ef_construction": self.ef_construction,
            "ef_search": self.ef_search,
            "ids": self._ids,
            "compactions": self.compactions,
        }
        (directory / f"{name}.ids.json").write_text(json.dumps(meta), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path, name: str) -> VectorIndex:
        directory = Path(directory)
        meta: dict[str, Any] = json.loads((directory / f"{name}.ids.json").read_text(encoding="utf-8"))
        out = cls(meta["dim"], m=meta["m"], ef_construction=meta["ef_construction"], ef_search=meta["ef_search"])
        out._index = faiss.read_index(str(directory / f"{name}.faiss"))  # type: ignore[assignment]  # an HNSW one
        if out._index.ntotal != len(meta["ids"]):
            raise ValueError(
                f"{directory / name}.faiss holds {out._index.ntotal} vectors, its id list "
                f"{len(meta['ids'])}: the checkpoint is damaged"
            )
        for _ in range(out._index.ntotal):  # the level generator where the saved graph left it
            out._index.hnsw.random_level()  # type: ignore[attr-defined]  # undeclared (faiss stubs, above)
        out._ids = [int(k) for k in meta["ids"]]
        out._pos = {k: p for p, k in enumerate(out._ids) if k != -1}
        out._dead = len(out._ids) - len(out._pos)
        out.compactions = int(meta["compactions"])
        return out

    def serialized(self) -> bytes:
        """The graph's bytes (tests compare a resumed index with an uninterrupted one)."""
        return faiss.serialize_index(self._index).tobytes()
