"""``agent=memoryllm`` and ``agent=mplus``: the paper's latent-memory agents (§4; MemoryLLM, Wang et al.
2024; M+, Wang et al. 2025), on any Llama-family transformers model or on a released checkpoint.

**The memory.** Every decoder layer ``l`` owns a pool ``θ_l`` of memory tokens: vectors in that layer's
input space (:mod:`~odyssey_agents.latent.memory_pool`). The text prompt holds only the current
observation (plus what the add-ons put there); every model call — acting, reflecting, summarising,
answering QA questions — reads the pools through the model's own attention: in layer ``l`` the
prompt's tokens attend to ``θ_l``'s tokens as to a context that came before them (keys and values from
the layer's own normalisation and projections, placed at the positions just before the prompt).

**The update (MemoryLLM's self-update).** After every step the agent injects the step's text
(observation, reasoning, action): layer by layer, the layer reads the last ``K`` tokens of its pool
followed by the text's hidden states (``[e_l ; h_l]``), and the outputs at the last ``K`` positions
become ``K`` new memory tokens of that layer; the text's outputs are the next layer's input. The new
tokens join the end of the pool and, once the pool is full, ``K`` old tokens of each layer are dropped
at random (forgetting at rate ``K/N`` per update). With a released checkpoint the layers also read its
trained first memory token (``bos_embedding``) and its learned embedding marks the new-memory positions,
and its LoRA adapters are switched as its authors do (one to write, one to read).

**M+ (``agent=mplus``).** Dropped tokens go to a long-term memory instead of being lost. At each model
call, in each layer, a retriever scores the long-term tokens against the prompt's hidden states at that
layer and the ``retrieve_tokens`` best are read together with the short-term pool, oldest first
(``[long-term ; short-term ; prompt]``). The retriever of a released M+ checkpoint is its trained
pair of projectors (``sigmoid(f_q(h) · f_k(m))`` averaged over the prompt's tokens); on a model without
one it is the same score with identity projectors, as cosine similarity in the layer's normalised
hidden space (retrieval is then by resemblance, not learned relevance).

**Any model.** Memory tokens are written and read through the layers' own modules, so the agent runs on
any decoder of Llama-family layers whose attention goes through transformers' registry (Llama, SmolLM,
Qwen2/3, Mistral...: tiny test models and the embedded model on CPU, Qwen3-4B or Llama on GPU). It
checks at start that its layer-by-layer pass reproduces the model's own forward pass and refuses the
model otherwise. Such a model was never trained to write or read memory tokens: its pools start empty
and hold what the untrained update makes of each step (at best a trace of the text). A released
checkpoint (``llm=hf llm.model=<folder of YuWangX/memoryllm-8b-chat or mplus-8b>``, read as data by
:mod:`~odyssey_agents.latent.checkpoint`) brings trained memory, update and retriever.

Checkpoints of a run hold the pools (``memory_pool.safetensors``); a resumed run continues with the
same memory, bit for bit on CPU. Each update is work of purpose ``memorise`` (the tokens it read), in
``memory_write_tokens``, not in the model cost.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from odyssey_agents.base import Call, Decision, Task
from odyssey_agents.llm.protocol import LLM
from odyssey_agents.memory import StepRecord
from odyssey_agents.training.agent import local_model

from .base import LatentAgent, LatentConfigError

__all__ = ["LatentConfigError", "MPlusAgent", "MemoryLLMAgent"]

#: Defaults on a model without released memory (a released checkpoint brings its own sizes).
POOL_SIZE = 1024
UPDATE_TOKENS = 256
LONG_TERM_SIZE = 2048
RETRIEVE_TOKENS = 256


class MemoryLLMAgent(LatentAgent):
    """ReAct with MemoryLLM's self-updating memory pool in every layer (see the module docstring).

    ``pool_size``: memory tokens per layer (N); ``update_tokens``: tokens one update writes (K). Both
    default to the released checkpoint's when the model is one (setting other values is an error), else
    to 1024 and 256.
    """

    name = "memoryllm"
    #: Whether dropped tokens go to a long-term memory that is retrieved per call (M+).
    long_term: ClassVar[bool] = False

    def __init__(
        self,
        llm: LLM,
        *,
        pool_size: int | None = None,
        update_tokens: int | None = None,
        **kwargs: Any,
    ):
        self.model_llm = local_model(llm, self.name)
        from odyssey_agents.latent.checkpoint import load_released, released_config, released_source

        source = released_source(self.model_llm.model_name)  # a folder, or a hub id's cached snapshot
        config = released_config(source)
        self.released: Any = None
        self._checkpoint = config is not None
        if config is not None:
            kind = next(k for a, k in (("MemoryLLM", "memoryllm"), ("MPlus", "mplus")) if a in config["architectures"])
            if kind != self.name:
                raise LatentConfigError(
                    f"{self.model_llm.model_name} is a released {kind} checkpoint: use agent={kind} with it"
                )
            held = int(config["num_blocks"]) - int(config.get("num_ltm_blocks") or 0 if self.long_term else 0)
            sizes = {"pool_size": held * int(config["num_tokens"]), "update_tokens": int(config["num_tokens"])}
            for key, value in (("pool_size", pool_size), ("update_tokens", update_tokens)):
                if value is not None and int(value) != sizes[key]:
                    raise LatentConfigError(
                        f"{key}={value} does not fit the released checkpoint {self.model_llm.model_name}, "
                        f"which was trained with {sizes[key]}; leave {key} unset (null)"
                    )
            pool_size, update_tokens = sizes["pool_size"], sizes["update_tokens"]

            def loader(path: str, dtype: Any, device: str) -> Any:
                model, self.released = load_released(source, dtype=dtype, device=device)
                return model

            self.model_llm.model_loader = loader
            self.model_llm.strip_bos = True  # the checkpoint's memory brings its own first token
        self.pool_size = int(POOL_SIZE if pool_size is None else pool_size)
        self.update_tokens = int(UPDATE_TOKENS if update_tokens is None else update_tokens)
        if self.pool_size < 1 or self.update_tokens < 1:
            raise LatentConfigError(
                f"pool_size and update_tokens must be at least 1, got {self.pool_size} and {self.update_tokens}"
            )
        if self.update_tokens > self.pool_size:
            raise LatentConfigError(
                f"update_tokens ({self.update_tokens}) cannot exceed pool_size ({self.pool_size}): an update "
                "would push out more than the pool holds"
            )
        self._setup_long_term(kwargs)
        from odyssey_agents.latent.memory_pool import MemoryPool

        self.pool = MemoryPool(self.pool_size, long_term_size=self._long_term_size, seed=self.model_llm.seed)
        self._parts: Any = None
        self._reader: Any = None
        self._stm_kv: list[Any] = []  # per layer (keys, values) of bos + short-term pool at their read positions
        self.write_seconds = 0.0
        self.write_tokens = 0
        self.retrievals = 0
        super().__init__(llm, **kwargs)

    def _setup_long_term(self, kwargs: dict[str, Any]) -> None:
        self._long_term_size = 0
        self.retrieve_tokens = 0

    # ------------------------------------------------------------------ set-up
    def _attach(self) -> None:
        if self._reader is not None:
            return
        from odyssey_agents.latent.attention import DecoderParts, LatentAttachError, attach

        model = self.model_llm.model  # loads it (through the checkpoint loader, for a released one)
        try:
            self._reader, _, layers = attach(model)
            self._parts = DecoderParts(model)
            self._check_layers()
        except LatentAttachError as exc:
            raise LatentConfigError(f"agent {self.name} cannot use {self.model_llm.model_name}: {exc}") from None
        if len(self._parts.layers) != layers:
            raise LatentConfigError(f"agent {self.name}: the model has {layers} attention layers in its decoder's list")
        if self.released is not None:
            self.released.use(model, self.released.read_adapter)
        self._attached()
        self._publish()

    def _attached(self) -> None:
        """Paradigm set-up once the model is attached (M+'s retrieval hooks)."""

    def _check_layers(self) -> None:
        """The layer-by-layer pass must reproduce the model's own: otherwise memory written or read here
        would not be what this model computes."""
        import torch

        from odyssey_agents.latent.attention import LatentAttachError

        model, parts = self.model_llm.model, self._parts
        ids = torch.tensor([[1, 2, 3, 4]], dtype=torch.long, device=next(model.parameters()).device)
        self._reader.memory = None
        with torch.no_grad():
            want = model(input_ids=ids, output_hidden_states=True, use_cache=False).hidden_states
            h = parts.embed(ids)
            positions = torch.arange(ids.shape[1], device=ids.device)
            pe = parts.positions(h, positions)
            for layer, block in enumerate(parts.layers[:-1]):
                h = _hidden(block(h, attention_mask=None, position_ids=positions[None], position_embeddings=pe))
                if not torch.allclose(h.float(), want[layer + 1].float(), atol=1e-3, rtol=1e-3):
                    raise LatentAttachError(
                        f"running its layers one by one does not reproduce its forward pass (layer {layer})"
                    )

    def reset(self, task: Task) -> None:
        super().reset(task)
        self._attach()
        initial = None
        if self.released is not None:
            initial = list(self.released.memory.unbind(0))
        self.pool.clear(initial)
        self.write_seconds, self.write_tokens, self.retrievals = 0.0, 0, 0
        self._publish()

    # ------------------------------------------------------------------ reading
    def _prefix(self, layer: int) -> Any:
        """The hidden states layer ``layer`` reads before the prompt: the checkpoint's first memory token,
        then the short-term pool."""
        import torch

        stm = self.pool.stm[layer] if self.pool.layers else None
        bos = self.released.bos[layer] if self.released is not None and self.released.bos is not None else None
        parts = [t for t in (bos, stm) if t is not None and t.shape[0]]
        return torch.cat(parts) if parts else None

    def _publish(self) -> None:
        """Turn the pools into the keys and values every layer reads (after each update, reset or load)."""
        import torch

        from odyssey_agents.latent.attention import hidden_kv

        self._stm_kv = []
        memory: list[Any] = []
        with torch.no_grad():
            for layer in range(len(self._parts.layers)):
                prefix = self._prefix(layer)
                if prefix is None:
                    self._stm_kv.append(None)
                    memory.append(None)
                    continue
                n = prefix.shape[0]
                positions = torch.arange(-n, 0, dtype=torch.long, device=prefix.device)
                k, v = hidden_kv(self._parts, self._reader, layer, prefix, positions)
                self._stm_kv.append((k, v))
                memory.append((k[None], v[None]))
        self._reader.memory = memory if any(m is not None for m in memory) else None
        self.model_llm.invalidate_caches()

    # ------------------------------------------------------------------ acting and writing
    def act(self, observation: str, info: dict[str, Any]) -> Decision:
        self._attach()
        decision = super().act(observation, info)
        if self.previous is not None:
            written, dropped = self.pool.written, self.pool.dropped
            call = self._write(self.previous)
            decision.usage.add(call)
            decision.memory = self._update_record(
                self.previous.step, call.input_tokens, self.pool.written - written, self.pool.dropped - dropped
            )
        return decision

    def _update_record(self, step: int, read: int, written: int, dropped: int) -> dict[str, Any]:
        """The trajectory's account of one update: which step it wrote, the tokens it read, the tokens
        it added and dropped per layer, and the pool's size after it (bounded by ``pool_size``)."""
        pool = self.pool
        out: dict[str, Any] = {
            "update": pool.updates,
            "step": step,
            "read": read,
            "written": written,
            "dropped": dropped,
            "tokens": len(pool),
            "pool_size": pool.size,
        }
        if self.long_term:
            out.update(long_term_tokens=pool.long_term(0), forgotten=pool.forgotten)
        return out

    def _write(self, record: StepRecord) -> Call:
        """MemoryLLM's self-update with the step's text (see the module docstring)."""
        import torch

        start = time.perf_counter()
        llm, parts, pool, K = self.model_llm, self._parts, self.pool, self.update_tokens
        ids = llm._encode(record.render() + "\n\n")
        model = llm.model
        device = next(model.parameters()).device
        released = self.released
        memory, self._reader.memory = self._reader.memory, None  # the update reads its own slice only
        if released is not None:
            released.use(model, released.write_adapter)
        try:
            with torch.no_grad():
                h = parts.embed(torch.tensor([ids], dtype=torch.long, device=device))
                tails = [pool.tail(layer, K) if pool.layers else None for layer in range(len(parts.layers))]
                bos = released.bos if released is not None and released.bos is not None else None
                held = 0 if tails[0] is None else int(tails[0].shape[0])
                prefix_len = held + (1 if bos is not None else 0)
                total = prefix_len + len(ids)
                fresh = min(K, total - (1 if bos is not None else 0))
                positions = torch.arange(total, dtype=torch.long, device=device)
                pe = parts.positions(h, positions)
                new = []
                for layer, block in enumerate(parts.layers):
                    pieces = [t for t in (None if bos is None else bos[layer], tails[layer]) if t is not None]
                    x = torch.cat([*pieces, h[0]])[None] if pieces else h
                    if released is not None and released.position is not None:
                        x = x.clone()
                        x[:, -fresh:] += released.position[0]
                    out = _hidden(block(x, attention_mask=None, position_ids=positions[None], position_embeddings=pe))
                    new.append(out[0, -fresh:].clone())
                    h = out[:, prefix_len:]
        finally:
            self._reader.memory = memory
            if released is not None:
                released.use(model, released.read_adapter)
        pool.add(new)
        self._publish()
        seconds = time.perf_counter() - start
        self.write_seconds += seconds
        self.write_tokens += total
        return Call("memorise", total, 0, round(seconds, 6))

    # ------------------------------------------------------------------ checkpoints
    def _layer_count(self) -> int:
        return len(self._parts.layers)

    def _state(self) -> dict[str, Any]:
        return {"write_seconds": self.write_seconds, "write_tokens": self.write_tokens, "retrievals": self.retrievals}

    def _set_state(self, state: dict[str, Any]) -> None:
        self.write_seconds = float(state["write_seconds"])
        self.write_tokens = int(state["write_tokens"])
        self.retrievals = int(state.get("retrievals", 0))

    # ------------------------------------------------------------------ reporting
    def _own_description(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "pool_size": self.pool_size,
            "update_tokens": self.update_tokens,
            "memory": "released checkpoint" if self._checkpoint else "untrained (the model's own layers)",
        }
        if self.released is not None:
            out["released"] = self.released.describe()
        return out

    def stats(self) -> dict[str, Any]:
        return {
            **super().stats(),
            "latent": {
                **self.pool.stats(),
                "write_tokens": self.write_tokens,
                "seconds": round(self.write_seconds, 3),
                **({"retrievals": self.retrievals} if self.long_term else {}),
            },
        }


class MPlusAgent(MemoryLLMAgent):
    """M+: MemoryLLM whose dropped tokens go to a long-term memory retrieved per layer at every call.

    ``long_term_size``: long-term tokens per layer (oldest dropped beyond it; default 2048);
    ``retrieve_tokens``: long-term tokens each layer reads per call (the checkpoint's, else 256).
    """

    name = "mplus"
    long_term = True

    def __init__(
        self, llm: LLM, *, long_term_size: int | None = None, retrieve_tokens: int | None = None, **kwargs: Any
    ):
        self._long_term_request = (long_term_size, retrieve_tokens)  # read by _setup_long_term
        super().__init__(llm, **kwargs)

    def _setup_long_term(self, kwargs: dict[str, Any]) -> None:
        long_term_size, retrieve_tokens = self._long_term_request
        from odyssey_agents.latent.checkpoint import released_config

        config = released_config(self.model_llm.model_name)
        if config is not None:
            trained = int(config.get("num_ltm_blocks") or 0) * int(config["num_tokens"])
            if retrieve_tokens is not None and int(retrieve_tokens) != trained:
                raise LatentConfigError(
                    f"retrieve_tokens={retrieve_tokens} does not fit the released checkpoint, which retrieves "
                    f"{trained}; leave it unset (null)"
                )
            retrieve_tokens = trained
        self._long_term_size = int(LONG_TERM_SIZE if long_term_size is None else long_term_size)
        self.retrieve_tokens = int(RETRIEVE_TOKENS if retrieve_tokens is None else retrieve_tokens)
        if self._long_term_size < 1 or self.retrieve_tokens < 1:
            raise LatentConfigError(
                f"long_term_size and retrieve_tokens must be at least 1, got {self._long_term_size} and "
                f"{self.retrieve_tokens}"
            )
        self._pending: list[bool] = []
        # Retrieval depends on each prompt, so no keys and values computed for one prompt may serve
        # another: the backend's cross-call prefix cache is turned off (outputs then never depend on what
        # was cached, and a resumed run reads exactly what an uninterrupted one did).
        self.model_llm.prefix_cache = False
        self.model_llm.invalidate_caches()

    def _attached(self) -> None:
        self._pending = [False] * len(self._parts.layers)
        for layer, block in enumerate(self._parts.layers):
            block.register_forward_pre_hook(self._retriever_hook(layer), with_kwargs=True)
        self.model_llm.call_hooks.append(self._new_call)

    def _new_call(self) -> None:
        """A model call starts: every layer retrieves anew on its first forward pass of the call."""
        ready = self.pool.long_term(0) > 0
        self._pending = [ready] * len(self._pending)
        self.retrievals += ready

    def _retriever_hook(self, layer: int) -> Any:
        def hook(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            if self._pending and self._pending[layer] and self._reader.memory is not None:
                hidden = args[0] if args else kwargs["hidden_states"]
                self._retrieve(layer, hidden[0])
                self._pending[layer] = False

        return hook

    def _scores(self, layer: int, queries: Any, memory: Any) -> Any:
        """How relevant each long-term token is to the prompt at this layer (module docstring)."""
        import torch

        norm = self._parts.layers[layer].input_layernorm
        q, m = norm(queries[None])[0].float(), norm(memory[None])[0].float()
        released = self.released
        if released is not None and released.query_proj:
            qp = released.query_proj[layer](q.to(queries.dtype)).float()
            kp = released.key_proj[layer](m.to(memory.dtype)).float()
            return torch.sigmoid(qp @ kp.T).mean(0)
        q = torch.nn.functional.normalize(q, dim=-1).mean(0)
        return torch.nn.functional.normalize(m, dim=-1) @ q

    def _retrieve(self, layer: int, queries: Any) -> None:
        """Read the best long-term tokens of this layer, oldest first, before the short-term pool."""
        import torch

        from odyssey_agents.latent.attention import hidden_kv

        ltm, ages = self.pool.ltm[layer], self.pool.ltm_ages[layer]
        with torch.no_grad():
            if ltm.shape[0] > self.retrieve_tokens:
                chosen = torch.topk(self._scores(layer, queries, ltm), self.retrieve_tokens).indices.cpu()
            else:
                chosen = torch.arange(ltm.shape[0])
            order = chosen[torch.sort(ages[chosen], stable=True).indices]  # oldest first (M+ orders by age)
            tokens = ltm[order.to(ltm.device)]
            stm = self.pool.stm[layer]
            bos = self.released.bos[layer] if self.released is not None and self.released.bos is not None else None
            n = stm.shape[0]
            front = tokens if bos is None else torch.cat([bos, tokens])
            positions = torch.arange(-(n + front.shape[0]), -n, dtype=torch.long, device=ltm.device)
            k, v = hidden_kv(self._parts, self._reader, layer, front, positions)
            stm_k, stm_v = self._stm_kv[layer]
            if bos is not None:  # the short-term keys were made with bos in front: without it here
                stm_k, stm_v = stm_k[:, 1:], stm_v[:, 1:]
            self._reader.memory[layer] = (torch.cat([k, stm_k], dim=1)[None], torch.cat([v, stm_v], dim=1)[None])

    def _publish(self) -> None:
        super()._publish()
        if self._pending:
            self._pending = [False] * len(self._pending)

    def _own_description(self) -> dict[str, Any]:
        return {
            **super()._own_description(),
            "long_term_size": self._long_term_size,
            "retrieve_tokens": self.retrieve_tokens,
            "retriever": "released projectors"
            if self.released is not None and self.released.query_proj
            else "cosine in the layer's normalised hidden space",
        }


def _hidden(out: Any) -> Any:
    """A decoder layer's output hidden states (transformers 5 returns the tensor, 4 a tuple)."""
    return out[0] if isinstance(out, tuple) else out
