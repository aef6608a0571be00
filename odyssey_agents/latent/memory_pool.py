"""MemoryLLM's memory pool and M+'s long-term memory: per-layer memory tokens in the model's hidden space.

A memory token is a hidden-state vector of the model (``d`` numbers) that belongs to one layer: layer
``l`` reads its tokens as extra context, through its own normalisation and key/value projections. The
*short-term* pool (MemoryLLM's θ) holds at most ``size`` tokens per layer. An update appends the new
tokens the model wrote and, when the pool would overflow, drops old tokens uniformly at random —
MemoryLLM's forgetting rule, under which a token survives ``n`` updates of ``k`` tokens with probability
``(1 - k/size)^n``. Each layer drops its own random share (MemoryLLM draws per layer too); survivors keep
their order and new tokens go to the end, so the end of the pool is the newest memory.

With a *long-term* memory (M+'s Θ, ``long_term_size > 0``) a dropped token is not lost: it moves to the
layer's long-term memory with its age (the update that wrote it), where a retriever can find it again.
The long-term memory is bounded too: past ``long_term_size`` tokens per layer the oldest go (M+ decays
tokens that are seldom recalled; see ``docs/fidelity.md``).

Drops are drawn from generators seeded by the pool's seed, the update's number and the layer, so a
resumed run forgets exactly what an uninterrupted one does. The pool is plain tensors, saved with
safetensors (loading runs nothing).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from odyssey_agents.latent.base import MemoryFileError

__all__ = ["MEMORY_FILE", "MemoryCheckpointError", "MemoryPool"]

MEMORY_FILE = "memory_pool.safetensors"


class MemoryCheckpointError(MemoryFileError):
    """A checkpoint whose memory is missing or was written for another model or pool size."""


class MemoryPool:
    """Per layer: ``stm[l]`` ``[n, d]`` and ``ages[l]`` ``[n]``; with a long-term memory also ``ltm[l]`` and
    ``ltm_ages[l]``."""

    def __init__(self, size: int, *, long_term_size: int = 0, seed: int = 0):
        if int(size) < 1:
            raise ValueError(f"pool_size must be at least 1, got {size}")
        if int(long_term_size) < 0:
            raise ValueError(f"long_term_size must not be negative, got {long_term_size}")
        self.size = int(size)
        self.long_term_size = int(long_term_size)
        self.seed = int(seed)
        self.clear()

    def clear(self, initial: list[Any] | None = None) -> None:
        """Empty the pool, or start it from ``initial`` (per layer ``[n, d]``: a released checkpoint's
        trained memory, age 0)."""
        import torch

        self.stm: list[Any] = [t.detach().clone() for t in initial] if initial else []
        self.ages: list[Any] = [torch.zeros(t.shape[0], dtype=torch.long) for t in self.stm]
        self.ltm: list[Any] = []
        self.ltm_ages: list[Any] = []
        self.updates = 0
        self.dropped = 0  # tokens that left the short-term pool
        self.forgotten = 0  # tokens that left the memory altogether
        self.written = 0  # new tokens written

    @property
    def layers(self) -> int:
        return len(self.stm)

    def __len__(self) -> int:
        """Tokens per layer in the short-term pool (every layer holds as many)."""
        return int(self.stm[0].shape[0]) if self.stm else 0

    def long_term(self, layer: int) -> int:
        return int(self.ltm[layer].shape[0]) if self.ltm else 0

    def tail(self, layer: int, k: int) -> Any:
        """The last ``k`` tokens of layer ``layer`` (fewer while the pool is smaller): what an update reads."""
        return self.stm[layer][max(0, len(self) - k) :]

    def add(self, new: list[Any]) -> None:
        """One update: per layer ``[k, d]`` new tokens; old ones dropped at random to stay within ``size``."""
        import torch

        self.updates += 1
        k = int(new[0].shape[0])
        if k > self.size:  # an update larger than the pool keeps its end
            new = [t[k - self.size :] for t in new]
            k = self.size
        if not self.stm:
            self.stm = [t.new_zeros((0, t.shape[-1])) for t in new]
            self.ages = [torch.zeros(0, dtype=torch.long) for _ in new]
        old = len(self)
        excess = old + k - self.size
        stamp = torch.full((k,), self.updates, dtype=torch.long)
        for layer, tokens in enumerate(new):
            if excess > 0:
                rng = random.Random(self.seed * 1_000_003 + self.updates * 1_009 + layer)
                keep = sorted(rng.sample(range(old), old - excess))
                gone = sorted(set(range(old)) - set(keep))
                keep_t, gone_t = torch.tensor(keep, dtype=torch.long), torch.tensor(gone, dtype=torch.long)
                if self.long_term_size:
                    self._to_long_term(
                        layer, self.stm[layer][gone_t.to(self.stm[layer].device)], self.ages[layer][gone_t]
                    )
                self.stm[layer] = self.stm[layer][keep_t.to(self.stm[layer].device)]
                self.ages[layer] = self.ages[layer][keep_t]
            self.stm[layer] = torch.cat([self.stm[layer], tokens.detach().to(self.stm[layer].dtype)])
            self.ages[layer] = torch.cat([self.ages[layer], stamp])
        if excess > 0:
            self.dropped += excess
            if not self.long_term_size:
                self.forgotten += excess
        self.written += k

    def _to_long_term(self, layer: int, tokens: Any, ages: Any) -> None:
        import torch

        while len(self.ltm) <= layer:
            self.ltm.append(tokens.new_zeros((0, tokens.shape[-1])))
            self.ltm_ages.append(torch.zeros(0, dtype=torch.long))
        self.ltm[layer] = torch.cat([self.ltm[layer], tokens])
        self.ltm_ages[layer] = torch.cat([self.ltm_ages[layer], ages])
        over = int(self.ltm[layer].shape[0]) - self.long_term_size
        if over > 0:  # the oldest go first; among equals the earlier in the memory (a stable sort)
            order = torch.sort(self.ltm_ages[layer], stable=True).indices
            keep = torch.sort(order[over:]).values
            self.ltm[layer] = self.ltm[layer][keep.to(self.ltm[layer].device)]
            self.ltm_ages[layer] = self.ltm_ages[layer][keep]
            if layer == 0:
                self.forgotten += over

    def stats(self) -> dict[str, Any]:
        ages = sorted({int(a) for a in self.ages[0].tolist()}) if self.stm else []
        out: dict[str, Any] = {
            "tokens": len(self),
            "pool_size": self.size,
            "updates": self.updates,
            "written": self.written,
            "dropped": self.dropped,
            "updates_present": len([a for a in ages if a > 0]),
            "oldest_update": ages[0] if ages else None,
        }
        if self.long_term_size:
            out.update(long_term_tokens=self.long_term(0), long_term_size=self.long_term_size)
        out["forgotten"] = self.forgotten
        return out

    # ------------------------------------------------------------------ checkpoints
    def save(self, directory: Path) -> None:
        from safetensors.torch import save_file

        tensors: dict[str, Any] = {}
        for i in range(self.layers):
            tensors[f"stm.{i}"] = self.stm[i].contiguous()
            tensors[f"ages.{i}"] = self.ages[i].contiguous()
        for i in range(len(self.ltm)):
            tensors[f"ltm.{i}"] = self.ltm[i].contiguous()
            tensors[f"ltm_ages.{i}"] = self.ltm_ages[i].contiguous()
        meta = {
            "size": self.size,
            "long_term_size": self.long_term_size,
            "layers": self.layers,
            "ltm_layers": len(self.ltm),
            "updates": self.updates,
            "dropped": self.dropped,
            "forgotten": self.forgotten,
            "written": self.written,
        }
        save_file(tensors, str(Path(directory) / MEMORY_FILE), metadata={"odyssey": json.dumps(meta)})

    def load(self, directory: Path, device: Any, layers: int) -> None:
        from safetensors import safe_open

        path = Path(directory) / MEMORY_FILE
        if not path.is_file():
            raise MemoryCheckpointError(f"{path} is missing: the checkpoint holds no memory pool")
        with safe_open(str(path), framework="pt", device="cpu") as f:
            meta = json.loads((f.metadata() or {}).get("odyssey", "{}"))
            tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 - safe_open has no __iter__
        stored = meta.get("layers")
        if (meta.get("size"), meta.get("long_term_size")) != (self.size, self.long_term_size) or stored not in (
            0,
            layers,
        ):
            raise MemoryCheckpointError(
                f"{path} was written for another memory ({meta.get('size')} short-term and "
                f"{meta.get('long_term_size')} long-term tokens, {stored} layers); rerun with eval.overwrite=true"
            )
        self.clear()
        self.stm = [tensors[f"stm.{i}"].to(device) for i in range(int(stored))]
        self.ages = [tensors[f"ages.{i}"] for i in range(int(stored))]
        self.ltm = [tensors[f"ltm.{i}"].to(device) for i in range(int(meta["ltm_layers"]))]
        self.ltm_ages = [tensors[f"ltm_ages.{i}"] for i in range(int(meta["ltm_layers"]))]
        self.updates, self.dropped = int(meta["updates"]), int(meta["dropped"])
        self.forgotten, self.written = int(meta["forgotten"]), int(meta["written"])
