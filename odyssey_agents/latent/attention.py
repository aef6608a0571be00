"""Reading and writing a latent pool through a model's own attention, for any HF causal LM.

transformers routes every decoder layer's attention through a registry of attention functions chosen
by ``config._attn_implementation``. :func:`attach` registers one more, ``odyssey_latent``, and switches
the model to it: it is PyTorch's scaled-dot-product attention with the pool's keys and values put in
front of the layer's own (every query may read all of them; the layer's own keys stay causal). The
model's KV cache, generation, sampling and the backend's prompt handling are untouched, so everything
the ``hf`` backend does — guided JSON, constrained starts, QA answers — reads the memory.

Writing uses the same function: while :meth:`LatentReader.recording` is active, each layer's keys and
values of the text being read are captured (rotated at the text's own positions ``0 .. L-1``).

Rotary position embeddings are handled by turning stored keys to their read positions with the model's
own rotary module and rotation function (a rotation by the difference of positions: RoPE rotations
compose). Models without rotary embeddings keep position in the hidden states, and their keys need no
turning. A model whose attention does not go through the registry cannot carry the pool: :func:`attach`
checks that every layer called the function during a probe and refuses the model otherwise.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["NAME", "DecoderParts", "LatentAttachError", "LatentReader", "attach", "hidden_kv"]

NAME = "odyssey_latent"
_ATTR = "_odyssey_latent"


class LatentAttachError(ValueError):
    """A model that cannot carry a latent pool (its attention bypasses transformers' registry)."""


class LatentReader:
    """What the attention function reads: the memory of each layer (or None), and a write recorder.

    ``memory`` is a list with one ``(keys, values)`` entry per layer (batch dimension first), or None
    for no memory; an agent may change a layer's entry between calls (M+ retrieves per layer)."""

    def __init__(self) -> None:
        self.memory: list[tuple[Any, Any]] | None = None
        self.record: dict[int, tuple[Any, Any]] | None = None
        self.capture = False  # record keys and values only: the attention output is not computed
        self.seen: set[int] = set()
        self.reads = 0  # layer calls that read the pool (a model call reads it once per layer)

    @contextlib.contextmanager
    def recording(self) -> Iterator[dict[int, tuple[Any, Any]]]:
        self.record = {}
        try:
            yield self.record
        finally:
            self.record = None

    @contextlib.contextmanager
    def capturing(self) -> Iterator[dict[int, tuple[Any, Any]]]:
        """Record the keys and values a call produces without computing attention (a zero output): for
        turning hidden states into the keys and values a layer reads them as."""
        self.capture, self.record = True, {}
        try:
            yield self.record
        finally:
            self.capture, self.record = False, None


def _latent_attention(module: Any, query: Any, key: Any, value: Any, attention_mask: Any, **kwargs: Any) -> Any:
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    reader: LatentReader | None = getattr(module, _ATTR, None)
    if reader is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    layer = int(module.layer_idx)
    reader.seen.add(layer)
    if reader.record is not None:
        reader.record[layer] = (key[0], value[0])
        if reader.capture:  # [batch, heads, q, dim] -> the [batch, q, heads, dim] output shape, unused
            return query.new_zeros((query.shape[0], query.shape[2], query.shape[1], query.shape[3])), None
    if reader.memory is None or reader.memory[layer] is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    mem_k, mem_v = reader.memory[layer]
    reader.reads += 1
    batch, q_len, kv_len, m = query.shape[0], query.shape[2], key.shape[2], mem_k.shape[2]
    mem_k = mem_k.to(key.dtype).expand(key.shape[0], -1, -1, -1)
    mem_v = mem_v.to(value.dtype).expand(value.shape[0], -1, -1, -1)
    if attention_mask is None and q_len == 1:
        mask = None  # one new token reads everything
    else:
        if attention_mask is None:  # the causal pattern sdpa would have applied, made explicit
            own = torch.ones((q_len, kv_len), dtype=torch.bool, device=query.device).tril(kv_len - q_len)
            attention_mask = own[None, None].expand(batch, 1, q_len, kv_len)
        if attention_mask.dtype == torch.bool:
            head = torch.ones((*attention_mask.shape[:-1], m), dtype=torch.bool, device=attention_mask.device)
        else:
            head = torch.zeros(
                (*attention_mask.shape[:-1], m), dtype=attention_mask.dtype, device=attention_mask.device
            )
        mask = torch.cat([head, attention_mask[..., -kv_len:]], dim=-1)
    kwargs.pop("is_causal", None)
    return sdpa_attention_forward(
        module, query, torch.cat([mem_k, key], dim=2), torch.cat([mem_v, value], dim=2), mask, is_causal=False, **kwargs
    )


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(NAME, _latent_attention)
    AttentionMaskInterface.register(NAME, sdpa_mask)


def _rotary(model: Any) -> Any:
    """The model's rotary embedding module, if it has one at the decoder level."""
    for name, module in model.named_modules():
        if name.endswith("rotary_emb") and name.count(".") <= 1:
            return module
    return None


def _rotation(model: Any, attention_module: Any) -> Any:
    """``rotate(keys, delta)``: keys ``[heads, M, dim]`` turned by ``delta`` (``[M]``) positions."""
    rotary = _rotary(model)
    if rotary is None:
        return lambda keys, delta: keys
    apply = getattr(sys.modules.get(type(attention_module).__module__), "apply_rotary_pos_emb", None)
    if apply is None:
        raise LatentAttachError(
            f"{type(model).__name__} has rotary embeddings but no apply_rotary_pos_emb: the "
            "latent pool cannot turn its keys"
        )
    scaling = float(getattr(rotary, "attention_scaling", 1.0) or 1.0)

    def rotate(keys: Any, delta: Any) -> Any:
        import torch

        probe = keys.new_zeros((1, 1, keys.shape[-1]), dtype=torch.float32)
        cos, sin = rotary(probe, delta[None, :])
        cos, sin = cos.float() / scaling, sin.float() / scaling
        _, turned = apply(keys.float()[None], keys.float()[None], cos, sin)
        return turned[0].to(keys.dtype)

    return rotate


def attention_modules(model: Any) -> list[Any]:
    """The self-attention modules of the decoder layers (those with a ``layer_idx``), in layer order."""
    found = [
        m
        for m in model.modules()
        if hasattr(m, "layer_idx") and hasattr(m, "config") and type(m).__name__.endswith("Attention")
    ]
    return sorted(found, key=lambda m: int(m.layer_idx))


def attach(model: Any) -> tuple[LatentReader, Any, int]:
    """Switch ``model`` to the latent attention; returns the reader, the key rotation and the layer count.

    Idempotent for one model. Raises :class:`LatentAttachError` if a probe shows layers that never
    call the attention registry."""
    import torch

    modules = attention_modules(model)
    if not modules:
        raise LatentAttachError(f"found no attention layers in {type(model).__name__}")
    existing = getattr(modules[0], _ATTR, None)
    if existing is not None:
        return existing, _rotation(model, modules[0]), len(modules)
    _register()
    model.set_attn_implementation(NAME)
    reader = LatentReader()
    for m in modules:
        setattr(m, _ATTR, reader)
    device = next(model.parameters()).device
    with torch.no_grad():
        model(input_ids=torch.zeros((1, 2), dtype=torch.long, device=device), use_cache=False)
    if reader.seen != {int(m.layer_idx) for m in modules}:
        for m in modules:
            delattr(m, _ATTR)
        raise LatentAttachError(
            f"the attention of {type(model).__name__} does not go through transformers' "
            "attention registry, so a latent pool cannot be attached to it"
        )
    return reader, _rotation(model, modules[0]), len(modules)


class DecoderParts:
    """The pieces of a Llama-family decoder an agent drives layer by layer: the token embedding, the
    decoder layers (each with ``self_attn`` and ``input_layernorm``) and the rotary embedding."""

    def __init__(self, model: Any):
        decoder = model.get_decoder() if hasattr(model, "get_decoder") else None
        layers = getattr(decoder, "layers", None)
        rotary = getattr(decoder, "rotary_emb", None)
        if (
            layers is None
            or rotary is None
            or not all(hasattr(layer, "self_attn") and hasattr(layer, "input_layernorm") for layer in layers)
        ):
            raise LatentAttachError(
                f"{type(model).__name__} is not a decoder of Llama-family layers (self_attn, input_layernorm, a "
                "rotary embedding), which memory tokens are written and read through"
            )
        self.rotary = rotary
        self.model = model
        self.layers = list(layers)
        self.embed = model.get_input_embeddings()

    def positions(self, hidden: Any, positions: Any) -> tuple[Any, Any]:
        """The rotary ``(cos, sin)`` of ``positions`` (``[T]``, negative allowed: only differences matter)."""
        return self.rotary(hidden, positions[None])


def hidden_kv(parts: DecoderParts, reader: LatentReader, layer: int, hidden: Any, positions: Any) -> tuple[Any, Any]:
    """The keys and values layer ``layer`` reads the hidden states ``hidden`` (``[M, d]``, the layer's
    *input* space) as, rotated at ``positions`` (``[M]``): ``([kv_heads, M, dim], [kv_heads, M, dim])``.

    The layer's own normalisation and attention projections compute them (query and key norms, rotary
    embedding and all), so this holds for every Llama-family architecture; the attention itself is
    skipped (:meth:`LatentReader.capturing`)."""
    block = parts.layers[layer]
    x = hidden[None]
    with reader.capturing() as captured:
        block.self_attn(
            hidden_states=block.input_layernorm(x),
            position_embeddings=parts.positions(x, positions),
            attention_mask=None,
        )
    if layer not in captured:
        raise LatentAttachError(f"layer {layer}'s attention did not go through transformers' attention registry")
    return captured[layer]
