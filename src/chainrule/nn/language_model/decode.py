"""A GPT's forward pass on its parameters' NumPy arrays, for sampling.

Generating a token with the key/value cache runs ~80 small ops; on Tensors each one pays for
a Tensor wrapper and module dispatch, more than the arithmetic of one token. Here the forward
functions of the same primitives (``nn.linear``, ``nn.layer_norm``, ``nn.gelu``, attention) run
directly on the parameters' arrays: no wrappers, and none of the public functions' argument
checks, which a standard model's shapes pass by construction. The arithmetic, and so every
logit, is the same as ``model(idx, caches)``'s. Only models built the standard way (the layer
classes of ``nn.GPT``, in eval mode) take this path; :func:`standard_layout` says which.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...autodiff.primitive import REGISTRY
from ...core.device import xp_of
from ...ops._saved import Saved
from .. import functional as F
from ..activations import GELU
from ..containers import Sequential
from ..layers import Dropout, Embedding, LayerNorm, Linear
from ..transformer import CausalSelfAttention, KVCache, TransformerBlock


def _is(obj: Any, cls: type) -> bool:
    return type(obj) is cls


def standard_layout(model: Any) -> bool:
    """True when every part of ``model`` is the stock layer ``nn.GPT`` builds, and it is in eval mode."""
    if model.training or not (_is(model.wte, Embedding) and _is(model.wpe, Embedding) and _is(model.ln_f, LayerNorm)):
        return False
    if model.lm_head is not None and not _is(model.lm_head, Linear):
        return False
    for block in model.blocks:
        mlp = block.mlp
        if not (_is(block, TransformerBlock) and _is(block.attn, CausalSelfAttention) and _is(block.ln_1, LayerNorm)
                and _is(block.ln_2, LayerNorm) and _is(mlp, Sequential) and len(mlp) == 4
                and [type(m) for m in mlp] == [Linear, GELU, Linear, Dropout]):
            return False
    return True


def _data(p: Any) -> Any:
    return None if p is None else p._data


_NOTHING_SAVED = Saved()  # no argument requires grad: the forward functions keep nothing in it


class _Kernels:
    """The forward functions of the primitives a step runs (what apply runs on arrays), looked up once
    per step: a profiler may have wrapped them (bench/bench_gpt.py --profile)."""

    __slots__ = ("linear", "norm", "gelu", "sdpa")

    def __init__(self) -> None:
        self.linear, self.norm = REGISTRY["nn.linear"].fn, REGISTRY["nn.layer_norm"].fn
        self.gelu, self.sdpa = REGISTRY["nn.gelu"].fn, REGISTRY["nn.scaled_dot_product_attention"].fn


def _linear(k: _Kernels, layer: Linear, x: np.ndarray) -> np.ndarray:
    b = layer.bias
    return k.linear(x, layer.weight._data, None if b is None else b._data)


def _norm(k: _Kernels, ln: LayerNorm, x: np.ndarray) -> np.ndarray:
    axes = (x.ndim - 1,) if len(ln.normalized_shape) == 1 else tuple(range(x.ndim - len(ln.normalized_shape), x.ndim))
    return k.norm(x, _data(ln.weight), _data(ln.bias), axes=axes, eps=float(ln.eps), saved=_NOTHING_SAVED)


def _gelu(k: _Kernels, x: np.ndarray, approximate: str) -> np.ndarray:
    return k.gelu(x, saved=_NOTHING_SAVED) if approximate == "none" else F.gelu(x, approximate)


def _attention(k: _Kernels, attn: CausalSelfAttention, x: np.ndarray, cache: KVCache | None) -> np.ndarray:
    b, t, d = x.shape
    h = attn.n_heads
    qkv = _linear(k, attn.c_attn, x).reshape(b, t, 3, h, d // h)
    if cache is None:
        y = F.qkv_attention(qkv, is_causal=True)
    else:  # as CausalSelfAttention.forward
        qkv = qkv.transpose(2, 0, 3, 1, 4)  # (3, B, H, T, hd): q, k and v as views
        start = cache.length
        keys, values = cache.append(qkv[1], qkv[2])
        if t > 1:
            xp = xp_of(keys)
            mask = xp.arange(start + t)[None, :] <= (start + xp.arange(t))[:, None]
            y = F.scaled_dot_product_attention(qkv[0], keys, values, attn_mask=mask)
        else:  # one new token sees every cached key: no mask
            y = k.sdpa(qkv[0], keys, values, scale=1.0 / math.sqrt(d // h), drop=None, saved=_NOTHING_SAVED)
        y = y.transpose(0, 2, 1, 3)
    return _linear(k, attn.c_proj, y.reshape(b, t, d))


def forward_arrays(model: Any, idx: np.ndarray, caches: list[KVCache] | None = None) -> np.ndarray:
    """``model(idx, caches)``'s logits as an array (the model must pass :func:`standard_layout`)."""
    b, t = model._check_tokens(idx)
    k = _Kernels()
    start = caches[0].length if caches else 0
    positions = xp_of(idx).arange(start, start + t)
    wte = model.wte.weight._data
    x = wte[idx] + model.wpe.weight._data[positions]  # the rows F.embedding picks (idx checked above)
    for i, block in enumerate(model.blocks):
        x = x + _attention(k, block.attn, _norm(k, block.ln_1, x), caches[i] if caches else None)
        fc, act, proj, _ = block.mlp
        x = x + _linear(k, proj, _gelu(k, _linear(k, fc, _norm(k, block.ln_2, x)), act.approximate))
    x = _norm(k, model.ln_f, x)
    return k.linear(x, wte) if model.lm_head is None else _linear(k, model.lm_head, x)
