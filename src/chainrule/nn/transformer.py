"""Transformer layers: ``MultiheadAttention`` (PyTorch's), ``CausalSelfAttention`` with a key/value
cache, and a pre-norm ``TransformerBlock`` (LayerNorm, attention, residual, LayerNorm, MLP, residual).

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> block = nn.TransformerBlock(d_model=16, n_heads=2, rng=0)
    >>> block(np.zeros((2, 5, 16), dtype=np.float32)).shape
    (2, 5, 16)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from . import functional as F
from . import init
from .activations import GELU
from .containers import Sequential
from .layers import Dropout, LayerNorm, Linear
from .module import Module


class KVCache:
    """Keys and values of the tokens seen so far, for one attention layer (preallocated buffers).

    ``k`` and ``v`` have shape (batch, heads, capacity, head_dim); ``length`` positions are filled.
    """

    __slots__ = ("k", "v", "length")

    def __init__(self, batch: int, heads: int, capacity: int, head_dim: int, dtype: Any) -> None:
        self.k = np.empty((batch, heads, capacity, head_dim), dtype=dtype)
        self.v = np.empty((batch, heads, capacity, head_dim), dtype=dtype)
        self.length = 0

    def append(self, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Store new keys and values (batch, heads, t, head_dim); return every key and value so far."""
        t = k.shape[2]
        end = self.length + t
        if end > self.k.shape[2]:
            raise ValueError(
                f"KVCache: {end} positions do not fit a cache of capacity {self.k.shape[2]}; "
                "start a new cache (the model's context_length bounds it)"
            )
        self.k[:, :, self.length:end] = k
        self.v[:, :, self.length:end] = v
        self.length = end
        return self.k[:, :, :end], self.v[:, :, :end]


def _raw(x: Any) -> np.ndarray:
    return x.data if isinstance(x, Tensor) else np.asarray(x)


class CausalSelfAttention(Module):
    """Multi-head self-attention where each position sees itself and the positions before it.

    One Linear makes queries, keys and values (``c_attn``), another mixes the heads (``c_proj``).
    ``forward(x, cache=None)``: with a :class:`KVCache` the new positions' keys and values are
    appended and the queries attend to every cached position (generation one token at a time).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> attn = nn.CausalSelfAttention(d_model=8, n_heads=2, rng=0)
        >>> attn(np.ones((1, 3, 8), dtype=np.float32)).shape
        (1, 3, 8)
    """

    def __init__(
        self, d_model: int, n_heads: int, dropout: float = 0.0, bias: bool = True, dtype: Any = None, rng: Any = None
    ) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"CausalSelfAttention: d_model={d_model} must be divisible by n_heads={n_heads}")
        gen = init.generator(rng)
        self.d_model, self.n_heads = int(d_model), int(n_heads)
        self.c_attn = Linear(d_model, 3 * d_model, bias=bias, dtype=dtype, rng=gen)
        self.c_proj = Linear(d_model, d_model, bias=bias, dtype=dtype, rng=gen)
        self.dropout = float(dropout)
        self.resid_drop = Dropout(dropout, rng=gen)

    def forward(self, x: Any, cache: KVCache | None = None) -> Any:
        b, t, d = np.shape(_raw(x))
        h = self.n_heads
        qkv = self.c_attn(x).reshape(b, t, 3, h, d // h).transpose(2, 0, 3, 1, 4)  # (3, B, H, T, hd)
        q, k, v = qkv[0], qkv[1], qkv[2]
        if cache is None:
            p = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p, rng=self.resid_drop.rng)  # seeded
        else:
            start = cache.length
            keys, values = cache.append(_raw(k), _raw(v))
            mask = None
            if t > 1:  # new query i sits at position start + i: it sees keys 0 .. start + i
                mask = np.arange(start + t)[None, :] <= (start + np.arange(t))[:, None]
            y = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        y = y.transpose(0, 2, 1, 3).reshape(b, t, d)  # heads side by side again
        return self.resid_drop(self.c_proj(y))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}"


class TransformerBlock(Module):
    """Pre-norm transformer block: ``x + attn(ln_1(x))``, then ``x + mlp(ln_2(x))``.

    The MLP is Linear(d, mlp_ratio * d), GELU (exact), Linear(mlp_ratio * d, d), dropout.

    Example:
        >>> from chainrule import nn
        >>> [name for name, _ in nn.TransformerBlock(8, 2, rng=0).named_children()]
        ['ln_1', 'attn', 'ln_2', 'mlp']
    """

    def __init__(
        self, d_model: int, n_heads: int, mlp_ratio: int = 4, dropout: float = 0.0, bias: bool = True,
        dtype: Any = None, rng: Any = None,
    ) -> None:
        super().__init__()
        gen = init.generator(rng)
        hidden = int(mlp_ratio * d_model)
        self.ln_1 = LayerNorm(d_model, bias=bias, dtype=dtype)
        self.attn = CausalSelfAttention(d_model, n_heads, dropout, bias, dtype, gen)
        self.ln_2 = LayerNorm(d_model, bias=bias, dtype=dtype)
        self.mlp = Sequential(
            Linear(d_model, hidden, bias=bias, dtype=dtype, rng=gen), GELU(),
            Linear(hidden, d_model, bias=bias, dtype=dtype, rng=gen), Dropout(dropout, rng=gen),
        )

    def forward(self, x: Any, cache: KVCache | None = None) -> Any:
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))
