"""A bounded pool of memory vectors: per layer, the keys and values of remembered tokens.

Each write adds the keys and values a step's text produced in every layer of the model (computed with
the pool already in view, so new memories are read in the light of old ones, as MemoryLLM injects
text). The pool never holds more than ``size`` tokens: when a write would overflow it, tokens of the
*old* pool are dropped uniformly at random until the new ones fit — MemoryLLM's forgetting rule, under
which a memory survives ``n`` later writes of ``k`` tokens with probability about ``(1 - k/size)^n``.
Drops are drawn from a generator seeded by the cell seed and the write's number, so a resumed run
forgets exactly what an uninterrupted one does. Surviving tokens keep their order.

Keys are stored as the model rotated them (rotary position embeddings), with the position each was
rotated at; :meth:`LatentPool.rotated` turns them to contiguous positions just before the prompt
(``-M .. -1``), so the prompt reads the pool as text that came right before it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from odyssey_agents.latent.base import MemoryFileError

__all__ = ["POOL_FILE", "LatentPool", "PoolCheckpointError"]

POOL_FILE = "latent_pool.safetensors"


class PoolCheckpointError(MemoryFileError):
    """A checkpoint whose pool is missing or was written for another model or pool size."""


class LatentPool:
    """``size`` tokens at most; per layer ``keys[l]`` and ``values[l]`` are ``[kv_heads, M, head_dim]``."""

    def __init__(self, size: int, seed: int = 0):
        if int(size) < 1:
            raise ValueError(f"pool_size must be at least 1, got {size}")
        self.size = int(size)
        self.seed = int(seed)
        self.clear()

    def clear(self) -> None:
        self.keys: list[Any] = []
        self.values: list[Any] = []
        self.positions: Any = None  # [M] the position each key was rotated at
        self.steps: Any = None  # [M] the step each token was written at
        self.writes = 0
        self.dropped = 0
        self._rotated: list[Any] | None = None

    def __len__(self) -> int:
        return 0 if self.positions is None else int(self.positions.shape[0])

    def add(self, keys: list[Any], values: list[Any], positions: Any, step: int) -> None:
        """Write one chunk: per layer ``[kv_heads, L, head_dim]`` keys and values rotated at ``positions``
        (``[L]``). Drops old tokens at random when the pool would overflow (see the module docstring)."""
        import torch

        self.writes += 1
        n = int(positions.shape[0])
        if n > self.size:  # a chunk larger than the pool keeps its end
            keys = [k[:, n - self.size :] for k in keys]
            values = [v[:, n - self.size :] for v in values]
            positions = positions[n - self.size :]
            n = self.size
        old = len(self)
        excess = old + n - self.size
        if excess > 0:
            rng = random.Random(self.seed * 1_000_003 + self.writes)
            keep = sorted(rng.sample(range(old), old - excess))
            index = torch.tensor(keep, dtype=torch.long, device=positions.device)
            self.keys = [k.index_select(1, index.to(k.device)) for k in self.keys]
            self.values = [v.index_select(1, index.to(v.device)) for v in self.values]
            self.positions = self.positions.index_select(0, index)
            self.steps = self.steps.index_select(0, index)
            self.dropped += excess
        stamp = torch.full((n,), int(step), dtype=torch.long, device=positions.device)
        if old == 0 or not self.keys:
            self.keys, self.values = [k.detach().clone() for k in keys], [v.detach().clone() for v in values]
            self.positions, self.steps = positions.detach().clone(), stamp
        else:
            self.keys = [torch.cat([a, b.detach()], dim=1) for a, b in zip(self.keys, keys, strict=True)]
            self.values = [torch.cat([a, b.detach()], dim=1) for a, b in zip(self.values, values, strict=True)]
            self.positions = torch.cat([self.positions, positions.detach()])
            self.steps = torch.cat([self.steps, stamp])
        self._rotated = None

    def rotated(self, rotate: Any) -> list[tuple[Any, Any]] | None:
        """Per layer ``(keys, values)`` with batch dimension, keys turned by ``rotate(keys, delta)`` to the
        positions ``-M .. -1`` (cached until the next write); None when the pool is empty."""
        if not len(self):
            return None
        if self._rotated is None:
            import torch

            m = len(self)
            target = torch.arange(-m, 0, dtype=torch.long, device=self.positions.device)
            delta = target - self.positions
            self._rotated = [
                (rotate(k, delta).unsqueeze(0), v.unsqueeze(0)) for k, v in zip(self.keys, self.values, strict=True)
            ]
        return self._rotated

    def stats(self) -> dict[str, Any]:
        steps = sorted({int(s) for s in self.steps.tolist()}) if len(self) else []
        return {
            "tokens": len(self),
            "pool_size": self.size,
            "writes": self.writes,
            "dropped": self.dropped,
            "steps_present": len(steps),
            "oldest_step": steps[0] if steps else None,
        }

    # ------------------------------------------------------------------ checkpoints
    def save(self, directory: Path) -> None:
        from safetensors.torch import save_file

        tensors: dict[str, Any] = {}
        if len(self):
            for i, (k, v) in enumerate(zip(self.keys, self.values, strict=True)):
                tensors[f"keys.{i}"] = k.contiguous()
                tensors[f"values.{i}"] = v.contiguous()
            tensors["positions"] = self.positions.contiguous()
            tensors["steps"] = self.steps.contiguous()
        meta = {"size": self.size, "layers": len(self.keys), "writes": self.writes, "dropped": self.dropped}
        save_file(tensors, str(Path(directory) / POOL_FILE), metadata={"odyssey": json.dumps(meta)})

    def load(self, directory: Path, device: Any, layers: int) -> None:
        from safetensors import safe_open

        path = Path(directory) / POOL_FILE
        if not path.is_file():
            raise PoolCheckpointError(f"{path} is missing: the checkpoint holds no latent memory")
        with safe_open(str(path), framework="pt", device=str(device)) as f:
            meta = json.loads((f.metadata() or {}).get("odyssey", "{}"))
            tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 - safe_open has no __iter__
        if meta.get("size") != self.size or (tensors and meta.get("layers") != layers):
            raise PoolCheckpointError(
                f"{path} was written for another pool ({meta.get('size')} tokens, "
                f"{meta.get('layers')} layers); rerun with eval.overwrite=true"
            )
        self.clear()
        if tensors:
            self.keys = [tensors[f"keys.{i}"] for i in range(layers)]
            self.values = [tensors[f"values.{i}"] for i in range(layers)]
            self.positions, self.steps = tensors["positions"], tensors["steps"]
        self.writes, self.dropped = int(meta["writes"]), int(meta["dropped"])
