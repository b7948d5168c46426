"""The modern (Llama-style) GPT block, read top to bottom:

``x + attn(norm_1(x))``, then ``x + mlp(norm_2(x))``, where

- the norms are RMSNorm (``norm="rms"``) or LayerNorm (``"layer"``);
- attention makes queries for ``n_heads`` heads but keys and values for only ``n_kv_heads``
  (grouped-query attention: each key/value head serves ``n_heads / n_kv_heads`` consecutive
  query heads), and with ``position="rope"`` rotates the queries and keys by their positions
  (rotary position embeddings) instead of adding a position embedding to the tokens;
- the MLP is SwiGLU, ``w2(silu(w1(x)) * w3(x))`` (``mlp="swiglu"``), or GPT-2's GELU MLP.

Everything is made of ops with both differentiation rules: ``rms_norm``, ``silu``, fused attention,
and the rotation by position (``ops.rotary.rotate``, one linear op).

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> c = nn.GPTConfig.from_recipe("modern", vocab_size=16, context_length=8, d_model=16, n_heads=4, n_kv_heads=2)
    >>> block = ModernBlock(c, rng=0)
    >>> block(np.ones((2, 5, 16), dtype=np.float32), positions=np.arange(5)).shape
    (2, 5, 16)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...ops.rotary import rotate
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..activations import GELU
from ..containers import Sequential
from ..layers import Dropout, LayerNorm, Linear, RMSNorm
from ..module import Module
from ..transformer import KVCache

RMS_EPS = 1e-5  # Llama's


def swiglu_hidden(d_model: int, mlp_ratio: int) -> int:
    """SwiGLU's default width: 2/3 of GPT-2's ``mlp_ratio * d_model`` (so the three matrices hold about
    as many numbers as GPT-2's two), rounded up to a multiple of 8.

    Example:
        >>> swiglu_hidden(128, 4)
        344
    """
    return 8 * math.ceil(2 * mlp_ratio * d_model / 3 / 8)


_TABLES: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] = {}


def rope_tables(positions: np.ndarray, head_dim: int, theta: float, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """``cos`` and ``sin`` of the rotary angles, (T, head_dim / 2): position p turns feature pair i by
    ``p * theta ** (-2 i / head_dim)`` (computed in float64, then cast to ``dtype``; made once per
    positions, size and dtype, read-only: every step of a training run and of sampling reuses them)."""
    positions = np.asarray(positions, dtype=np.float64)
    key = (positions.tobytes(), int(head_dim), float(theta), np.dtype(dtype))
    tables = _TABLES.get(key)
    if tables is None:
        inv_freq = float(theta) ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
        angles = positions[:, None] * inv_freq[None, :]
        tables = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
        for table in tables:
            table.flags.writeable = False
        if len(_TABLES) > 512:
            _TABLES.clear()
        _TABLES[key] = tables
    return tables


def apply_rope(x: Any, cos: np.ndarray, sin: np.ndarray) -> Any:
    """Rotate (..., T, head_dim) features by position: the pair (x[i], x[i + head_dim/2]) turns by
    angle (t, i) (the "rotate half" layout of GPT-NeoX and Hugging Face's Llama). Works on Tensors
    (differentiably: one linear op, :func:`chainrule.ops.rotary.rotate`) and on arrays."""
    return rotate(x, cos, sin)


def _array(x: Any) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else np.asarray(x)


class GroupedQueryAttention(Module):
    """Causal self-attention with ``n_kv_heads`` key/value heads and, optionally, rotary positions.

    ``c_attn`` makes the queries (n_heads heads), keys and values (n_kv_heads heads each) side by
    side; ``c_proj`` mixes the heads. ``forward(x, positions, cache=None)``: ``positions`` (T,) are
    the tokens' positions; a :class:`KVCache` (n_kv_heads heads) stores the keys already rotated.
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int, rope: bool, rope_theta: float,
                 dropout: float = 0.0, bias: bool = False, dtype: Any = None, rng: Any = None) -> None:
        super().__init__()
        gen = init.generator(rng)
        self.d_model, self.n_heads, self.n_kv_heads = int(d_model), int(n_heads), int(n_kv_heads)
        self.head_dim = self.d_model // self.n_heads
        self.rope, self.rope_theta = bool(rope), float(rope_theta)
        self.c_attn = Linear(d_model, (n_heads + 2 * n_kv_heads) * self.head_dim, bias=bias, dtype=dtype, rng=gen)
        self.c_proj = Linear(d_model, d_model, bias=bias, dtype=dtype, rng=gen)
        self.dropout = float(dropout)
        self.resid_drop = Dropout(dropout, rng=gen)

    def forward(self, x: Any, positions: np.ndarray, cache: KVCache | None = None) -> Any:
        b, t, d = np.shape(_array(x))
        h, kv, hd = self.n_heads, self.n_kv_heads, self.head_dim
        q, k, v = _split_heads(self.c_attn(x).reshape(b, t, h + 2 * kv, hd), h, kv, positions,
                               self.rope_theta if self.rope else None)  # (B, heads, T, hd) each
        gqa = kv != h
        if cache is None:
            p = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p, enable_gqa=gqa,
                                               rng=self.resid_drop.rng)
        else:
            start = cache.length
            keys, values = cache.append(_array(k), _array(v))
            mask = None
            if t > 1:  # new query i sits at position start + i: it sees keys 0 .. start + i
                mask = np.arange(start + t)[None, :] <= (start + np.arange(t))[:, None]
            y = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, enable_gqa=gqa)
        return self.resid_drop(self.c_proj(y.transpose(0, 2, 1, 3).reshape(b, t, d)))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, n_kv_heads={self.n_kv_heads}, rope={self.rope}"


def _split_heads(qkv: Any, h: int, kv: int, positions: np.ndarray, theta: float | None) -> tuple[Any, Any, Any]:
    """Queries, keys and values (B, heads, T, hd) from one projection's (B, T, heads, hd); with ``theta``, the
    queries and keys turned by position first, in one rotation while they are still side by side."""
    qk, v = qkv[:, :, :h + kv], qkv[:, :, h + kv:]
    if theta is not None:
        cos, sin = rope_tables(positions, qkv.shape[-1], theta, _array(qkv).dtype)
        qk = apply_rope(qk, cos[:, None], sin[:, None])  # (T, 1, hd/2): the same angles for every head
    return qk[:, :, :h].transpose(0, 2, 1, 3), qk[:, :, h:].transpose(0, 2, 1, 3), v.transpose(0, 2, 1, 3)


class SwiGLU(Module):
    """``w2(silu(w1(x)) * w3(x))``, then dropout (Llama's MLP)."""

    def __init__(self, d_model: int, hidden: int, dropout: float = 0.0, bias: bool = False, dtype: Any = None,
                 rng: Any = None) -> None:
        super().__init__()
        gen = init.generator(rng)
        self.w1 = Linear(d_model, hidden, bias=bias, dtype=dtype, rng=gen)
        self.w3 = Linear(d_model, hidden, bias=bias, dtype=dtype, rng=gen)
        self.w2 = Linear(hidden, d_model, bias=bias, dtype=dtype, rng=gen)
        self.drop = Dropout(dropout, rng=gen)

    def forward(self, x: Any) -> Any:
        return self.drop(self.w2(F.silu(self.w1(x)) * self.w3(x)))


def make_norm(config: Any, dtype: Any) -> Module:
    """The norm a config names: RMSNorm (eps 1e-5, no bias) or LayerNorm (bias as configured)."""
    if config.norm == "rms":
        return RMSNorm(config.d_model, eps=RMS_EPS, dtype=dtype)
    return LayerNorm(config.d_model, bias=config.bias, dtype=dtype)


class ModernBlock(Module):
    """Pre-norm block of any recipe a :class:`GPTConfig` describes: ``x + attn(ln_1(x))``, ``x + mlp(ln_2(x))``.

    Children: ``ln_1``, ``attn`` (:class:`GroupedQueryAttention`), ``ln_2``, ``mlp`` (:class:`SwiGLU`, or
    GPT-2's Linear, GELU, Linear, Dropout).
    """

    def __init__(self, config: Any, dtype: Any = None, rng: Any = None) -> None:
        super().__init__()
        c = config
        gen = init.generator(rng)
        self.ln_1 = make_norm(c, dtype)
        self.attn = GroupedQueryAttention(c.d_model, c.n_heads, c.kv_heads, c.position == "rope", c.rope_theta,
                                          c.dropout, c.bias, dtype, gen)
        self.ln_2 = make_norm(c, dtype)
        if c.mlp == "swiglu":
            self.mlp: Module = SwiGLU(c.d_model, c.hidden, c.dropout, c.bias, dtype, gen)
        else:
            self.mlp = Sequential(
                Linear(c.d_model, c.hidden, bias=c.bias, dtype=dtype, rng=gen), GELU(),
                Linear(c.hidden, c.d_model, bias=c.bias, dtype=dtype, rng=gen), Dropout(c.dropout, rng=gen),
            )

    def forward(self, x: Any, positions: np.ndarray, cache: KVCache | None = None) -> Any:
        x = x + self.attn(self.ln_1(x), positions, cache)
        return x + self.mlp(self.ln_2(x))


# -- sampling on the parameters' arrays (as nn.language_model.decode does for GPT-2's blocks) ------------------------
def _w(p: Any) -> Any:
    return None if p is None else p._data


def _linear(layer: Linear, x: np.ndarray) -> np.ndarray:
    return F.linear(x, layer.weight._data, _w(layer.bias))


def _norm(ln: Module, x: np.ndarray) -> np.ndarray:
    if type(ln) is RMSNorm:
        return F.rms_norm(x, ln.normalized_shape, _w(ln.weight), ln.eps)
    return F.layer_norm(x, ln.normalized_shape, _w(ln.weight), _w(ln.bias), ln.eps)


def _attention_arrays(attn: GroupedQueryAttention, x: np.ndarray, positions: np.ndarray,
                      cache: KVCache | None) -> np.ndarray:
    b, t, d = x.shape
    h, kv, hd = attn.n_heads, attn.n_kv_heads, attn.head_dim
    q, k, v = _split_heads(_linear(attn.c_attn, x).reshape(b, t, h + 2 * kv, hd), h, kv, positions,
                           attn.rope_theta if attn.rope else None)
    gqa = kv != h
    if cache is None:
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
    else:
        start = cache.length
        keys, values = cache.append(k, v)
        mask = None if t == 1 else np.arange(start + t)[None, :] <= (start + np.arange(t))[:, None]
        y = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, enable_gqa=gqa)
    return _linear(attn.c_proj, y.transpose(0, 2, 1, 3).reshape(b, t, d))


def modern_layout(model: Any) -> bool:
    """True when ``model`` (an ``nn.GPT`` in eval mode) runs :class:`ModernBlock` s built the standard way."""
    if model.training or not model.blocks or not all(type(b) is ModernBlock for b in model.blocks):
        return False
    return all(type(b.attn) is GroupedQueryAttention and type(b.mlp) in (SwiGLU, Sequential) for b in model.blocks)


def forward_arrays(model: Any, idx: np.ndarray, caches: list[KVCache] | None = None) -> np.ndarray:
    """``model(idx, caches)``'s logits as an array, on the parameters' arrays (no Tensor per op)."""
    b, t = model._check_tokens(idx, ids=False)
    start = caches[0].length if caches else 0
    positions = np.arange(start, start + t)
    try:
        x = F.embedding(idx, model.wte.weight._data)  # (its range check of the ids is the model's)
    except IndexError as e:
        raise model._ids_error(idx) from e
    if model.wpe is not None:
        x = x + F.embedding(positions, model.wpe.weight._data)
    for i, block in enumerate(model.blocks):
        x = x + _attention_arrays(block.attn, _norm(block.ln_1, x), positions, caches[i] if caches else None)
        h = _norm(block.ln_2, x)
        if type(block.mlp) is SwiGLU:
            m = block.mlp
            x = x + _linear(m.w2, F.silu(_linear(m.w1, h)) * _linear(m.w3, h))
        else:
            fc, act, proj, _ = block.mlp
            x = x + _linear(proj, F.gelu(_linear(fc, h), act.approximate))
    x = _norm(model.ln_f, x)
    return F.linear(x, model.wte.weight._data) if model.lm_head is None else _linear(model.lm_head, x)
