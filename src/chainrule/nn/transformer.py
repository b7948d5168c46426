"""Transformer layers: ``MultiheadAttention`` (PyTorch's), ``CausalSelfAttention`` with a key/value
cache, and a pre-norm ``TransformerBlock`` (LayerNorm, attention, residual, LayerNorm, MLP, residual).

Attention itself is one fused primitive, ``nn.functional.scaled_dot_product_attention``.

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

from ..core.device import as_array, check_cpu, xp_of
from ..ops.reductions import softmax
from ..ops.shape import broadcast_to, concatenate, getitem
from ..tensor import Tensor
from . import functional as F
from . import init
from .activations import GELU
from .containers import Sequential
from .layers import Dropout, LayerNorm, Linear
from .module import Module
from .module_placement import place
from .parameter import Parameter, resolve_dtype


class KVCache:
    """Keys and values of the tokens seen so far, for one attention layer (preallocated buffers).

    ``k`` and ``v`` have shape (batch, heads, capacity, head_dim); ``length`` positions are filled.
    For generation (under ``no_grad``): the cached keys and values are constants, not part of a graph.
    """

    __slots__ = ("k", "v", "length")

    def __init__(self, batch: int, heads: int, capacity: int, head_dim: int, dtype: Any, xp: Any = np) -> None:
        self.k = xp.empty((batch, heads, capacity, head_dim), dtype=dtype)  # (xp: the device's array module)
        self.v = xp.empty((batch, heads, capacity, head_dim), dtype=dtype)
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


def _array(x: Any) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else as_array(x)


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
        self, d_model: int, n_heads: int, dropout: float = 0.0, bias: bool = True, dtype: Any = None, rng: Any = None,
        *, device: Any = None,
    ) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"CausalSelfAttention: d_model={d_model} must be divisible by n_heads={n_heads}")
        check_cpu("CausalSelfAttention", device)
        gen = init.generator(rng)
        self.d_model, self.n_heads = int(d_model), int(n_heads)
        self.c_attn = Linear(d_model, 3 * d_model, bias=bias, dtype=dtype, rng=gen)
        self.c_proj = Linear(d_model, d_model, bias=bias, dtype=dtype, rng=gen)
        self.dropout = float(dropout)
        self.resid_drop = Dropout(dropout, rng=gen)
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def forward(self, x: Any, cache: KVCache | None = None) -> Any:
        b, t, d = np.shape(_array(x))
        h = self.n_heads
        qkv = self.c_attn(x).reshape(b, t, 3, h, d // h)  # queries, keys, values of every head
        if cache is None:
            p = self.dropout if self.training else 0.0
            # attention dropout draws from the block's seeded generator (saved with a checkpoint)
            y = F.qkv_attention(qkv, is_causal=True, dropout_p=p, rng=self.resid_drop.rng)  # (B, T, H, hd)
        else:
            q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))  # (B, H, T, hd)
            start = cache.length
            keys, values = cache.append(_array(k), _array(v))
            mask = None
            if t > 1:  # new query i sits at position start + i: it sees keys 0 .. start + i
                mask = np.arange(start + t)[None, :] <= (start + np.arange(t))[:, None]
            y = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask).transpose(0, 2, 1, 3)
        return self.resid_drop(self.c_proj(y.reshape(b, t, d)))  # heads side by side again

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
        dtype: Any = None, rng: Any = None, *, device: Any = None,
    ) -> None:
        super().__init__()
        check_cpu("TransformerBlock", device)
        gen = init.generator(rng)
        hidden = int(mlp_ratio * d_model)
        self.ln_1 = LayerNorm(d_model, bias=bias, dtype=dtype)
        self.attn = CausalSelfAttention(d_model, n_heads, dropout, bias, dtype, gen)
        self.ln_2 = LayerNorm(d_model, bias=bias, dtype=dtype)
        self.mlp = Sequential(
            Linear(d_model, hidden, bias=bias, dtype=dtype, rng=gen), GELU(),
            Linear(hidden, d_model, bias=bias, dtype=dtype, rng=gen), Dropout(dropout, rng=gen),
        )
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def forward(self, x: Any, cache: KVCache | None = None) -> Any:
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))


def _additive(mask: Any, dtype: np.dtype, where: str) -> Any:
    """A PyTorch ``nn.MultiheadAttention`` mask as an additive one: bool True means *not allowed*."""
    if mask is None:
        return None
    if isinstance(mask, Tensor):
        return mask if mask._data.dtype != bool else _additive(mask._data, dtype, where)
    m = as_array(mask)
    if m.dtype == bool:
        return np.where(m, dtype.type(-np.inf), dtype.type(0))
    if m.dtype.kind != "f":
        raise TypeError(f"MultiheadAttention: {where} must be boolean or floating point, got {m.dtype}")
    return m.astype(dtype, copy=False)


class MultiheadAttention(Module):
    """Multi-head attention with PyTorch's arguments, parameter names and results.

    Parameters: ``in_proj_weight`` (3E, E), ``in_proj_bias`` (3E), ``out_proj.weight`` (E, E),
    ``out_proj.bias`` (E), so ``load_state_dict`` takes a ``torch.nn.MultiheadAttention``'s
    state dict (as NumPy arrays). ``forward(query, key, value, key_padding_mask=None,
    need_weights=True, attn_mask=None, average_attn_weights=True, is_causal=False)`` returns
    ``(output, weights)``; inputs are (L, N, E), or (N, L, E) with ``batch_first=True``, or (L, E)
    unbatched. With ``kdim`` / ``vdim`` (key and value sizes other than ``embed_dim``) the input projection is
    three matrices ``q_proj_weight`` (E, E), ``k_proj_weight`` (E, kdim), ``v_proj_weight`` (E, vdim), as
    PyTorch's; ``add_bias_kv`` appends the learned ``bias_k``/``bias_v`` (1, 1, E) to the keys and values, and
    ``add_zero_attn`` a zero key and value, after the projection, as PyTorch's. Boolean masks mean True = *not
    allowed* (PyTorch's convention here); float masks are
    added to the scores. ``weights`` (averaged over heads unless ``average_attn_weights=False``)
    is None with ``need_weights=False``, which takes the fused attention path.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> mha = nn.MultiheadAttention(8, 2, batch_first=True, rng=0)
        >>> x = np.ones((3, 5, 8), dtype=np.float32)
        >>> out, w = mha(x, x, x)
        >>> out.shape, w.shape
        ((3, 5, 8), (3, 5, 5))
    """

    def __init__(
        self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True, add_bias_kv: bool = False,
        add_zero_attn: bool = False, kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
        device: Any = None, dtype: Any = None, *, rng: Any = None,
    ) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(
                f"MultiheadAttention: embed_dim={embed_dim} must be a positive multiple of num_heads={num_heads}"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"MultiheadAttention: dropout must be in [0, 1), got {dropout}")
        dt = resolve_dtype(dtype, "MultiheadAttention", device)
        gen = init.generator(rng)
        self.embed_dim, self.num_heads, self.head_dim = int(embed_dim), int(num_heads), embed_dim // num_heads
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        self.kdim = embed_dim if kdim is None else int(kdim)
        self.vdim = embed_dim if vdim is None else int(vdim)
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if self._qkv_same_embed_dim:  # one (3E, E) matrix, as PyTorch
            self.in_proj_weight = init.xavier_uniform_(Parameter(np.zeros((3 * embed_dim, embed_dim)), dtype=dt),
                                                       rng=gen)
        else:  # keys or values of other sizes: three matrices, PyTorch's q_proj_weight, k_proj_weight, v_proj_weight
            self.register_parameter("in_proj_weight", None)
            for name, dim in (("q", embed_dim), ("k", self.kdim), ("v", self.vdim)):
                setattr(self, f"{name}_proj_weight",
                        init.xavier_uniform_(Parameter(np.zeros((embed_dim, dim)), dtype=dt), rng=gen))
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim), dtype=dt) if bias else None
        if add_bias_kv:  # PyTorch's learned key and value appended to every sequence's keys and values
            self.bias_k, self.bias_v = (init.xavier_normal_(Parameter(np.zeros((1, 1, embed_dim)), dtype=dt), rng=gen)
                                        for _ in range(2))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = bool(add_zero_attn)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dt, rng=gen)
        if bias:
            self.out_proj.bias._data[...] = 0.0
        self._rng = gen
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def forward(
        self, query: Any, key: Any, value: Any, key_padding_mask: Any = None, need_weights: bool = True,
        attn_mask: Any = None, average_attn_weights: bool = True, is_causal: bool = False,
    ) -> tuple[Any, Any]:
        dt = self.out_proj.weight._data.dtype
        q_in, k_in, v_in = (x if isinstance(x, Tensor) else as_array(x, dtype=dt) for x in (query, key, value))
        unbatched = np.ndim(_array(q_in)) == 2
        if unbatched:
            q_in, k_in, v_in = (x[:, None] if isinstance(x, Tensor) else x[:, None] for x in (q_in, k_in, v_in))
            if key_padding_mask is not None:
                key_padding_mask = as_array(_array(key_padding_mask))[None]
        if not self.batch_first or unbatched:  # (L, N, E) -> (N, L, E)
            q_in, k_in, v_in = (x.swapaxes(0, 1) if isinstance(x, Tensor) else x.swapaxes(0, 1)
                                for x in (q_in, k_in, v_in))
        n, L, e = np.shape(_array(q_in))
        s = np.shape(_array(k_in))[1]
        if (e != self.embed_dim or np.shape(_array(k_in))[2] != self.kdim
                or np.shape(_array(v_in)) != (n, s, self.vdim)):
            raise ValueError(
                f"MultiheadAttention: query, key and value must be (L, N, {self.embed_dim}), (S, N, {self.kdim}) "
                f"and (S, N, {self.vdim}) (batch first when batch_first=True); got {np.shape(_array(query))}, "
                f"{np.shape(_array(key))}, {np.shape(_array(value))}"
            )
        h, hd = self.num_heads, self.head_dim
        w, b = self.in_proj_weight, self.in_proj_bias
        if w is None:  # separate projections (kdim, vdim)
            q, k, v = (F.linear(x, pw, None if b is None else getitem(b, slice(i * e, (i + 1) * e))).reshape(
                n, -1, h, hd) for i, (x, pw) in enumerate(
                    ((q_in, self.q_proj_weight), (k_in, self.k_proj_weight), (v_in, self.v_proj_weight))))
        elif q_in is k_in and k_in is v_in:  # self-attention: one matrix product, then split
            q, k, v = (getitem(F.linear(q_in, w, b).reshape(n, L, 3, h, hd), (slice(None), slice(None), i))
                       for i in range(3))
        else:
            q, k, v = (F.linear(x, getitem(w, slice(i * e, (i + 1) * e)),
                                None if b is None else getitem(b, slice(i * e, (i + 1) * e))).reshape(n, -1, h, hd)
                       for i, x in enumerate((q_in, k_in, v_in)))
        k, v, extra = self._extra_keys(k, v, n)
        q, k, v = (t.transpose(0, 2, 1, 3) for t in (q, k, v))  # (N, H, L or S, hd)
        bias = self._bias(attn_mask, key_padding_mask, is_causal, n, L, s, dt)
        if extra and bias is not None:  # the appended keys are allowed everywhere (PyTorch pads its masks with 0)
            bias = concatenate([bias, xp_of(_array(bias)).zeros((*np.shape(_array(bias))[:-1], extra), dt)], axis=-1)
        p = self.dropout if self.training else 0.0
        if need_weights:  # the probabilities are wanted: scores, softmax, product, as PyTorch does here
            scores = (q * dt.type(1.0 / np.sqrt(hd))) @ k.swapaxes(-1, -2)
            probs = softmax(scores if bias is None else scores + bias, axis=-1)
            weights = probs
            if p:
                probs = F.dropout(probs, p, True, rng=self._rng)
            y = probs @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=p, rng=self._rng)
            weights = None
        y = self.out_proj(y.transpose(0, 2, 1, 3).reshape(n, L, e))
        if not self.batch_first or unbatched:
            y = y.swapaxes(0, 1)
        if unbatched:
            y = y[:, 0]
        if weights is not None:
            if average_attn_weights:
                weights = weights.mean(axis=1)
            if unbatched:
                weights = weights[0]
        return y, weights

    def _extra_keys(self, k: Any, v: Any, n: int) -> tuple[Any, Any, int]:
        """Keys and values (N, S, H, hd) with PyTorch's ``bias_k``/``bias_v`` position, then a zero one
        (``add_zero_attn``), appended; and how many were."""
        extra = 0
        shape = (n, 1, self.num_heads, self.head_dim)
        if self.bias_k is not None:
            k, v = (concatenate([t, broadcast_to(b.reshape(1, 1, self.num_heads, self.head_dim), shape)], axis=1)
                    for t, b in ((k, self.bias_k), (v, self.bias_v)))
            extra += 1
        if self.add_zero_attn:
            zero = xp_of(_array(k)).zeros(shape, self.out_proj.weight._data.dtype)  # (where the keys are)
            k, v = concatenate([k, zero], axis=1), concatenate([v, zero], axis=1)
            extra += 1
        return k, v, extra

    def _bias(self, attn_mask: Any, key_padding_mask: Any, is_causal: bool, n: int, L: int, s: int,
              dt: np.dtype) -> Any:
        """attn_mask and key_padding_mask as one additive mask broadcasting to (N, H, L, S)."""
        if is_causal and attn_mask is None:
            attn_mask = ~np.tril(np.ones((L, s), dtype=bool))
        bias = _additive(attn_mask, dt, "attn_mask")
        if bias is not None:
            shape = np.shape(_array(bias))
            if shape == (n * self.num_heads, L, s):
                bias = bias.reshape(n, self.num_heads, L, s)
            elif shape != (L, s):
                raise ValueError(
                    f"MultiheadAttention: attn_mask must have shape ({L}, {s}) or ({n * self.num_heads}, {L}, {s}), "
                    f"got {shape}"
                )
        pad = _additive(key_padding_mask, dt, "key_padding_mask")
        if pad is not None:
            if np.shape(_array(pad)) != (n, s):
                raise ValueError(f"MultiheadAttention: key_padding_mask must have shape ({n}, {s}), got "
                                 f"{np.shape(_array(pad))}")
            pad = pad.reshape(n, 1, 1, s)
            bias = pad if bias is None else bias + pad
        return bias

    def extra_repr(self) -> str:
        dims = "" if self._qkv_same_embed_dim else f", kdim={self.kdim}, vdim={self.vdim}"
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}{dims}"
