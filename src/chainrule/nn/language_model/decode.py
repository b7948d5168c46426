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


def _kernel(name: str) -> Any:
    """The forward function of the primitive ``name`` (what apply runs on arrays), looked up per call."""
    return REGISTRY[name].fn


def _linear(layer: Linear, x: np.ndarray) -> np.ndarray:
    return _kernel("nn.linear")(x, layer.weight._data, _data(layer.bias))


def _norm(ln: LayerNorm, x: np.ndarray) -> np.ndarray:
    axes = tuple(range(x.ndim - len(ln.normalized_shape), x.ndim))
    return _kernel("nn.layer_norm")(x, _data(ln.weight), _data(ln.bias), axes=axes, eps=float(ln.eps),
                                    saved=_NOTHING_SAVED)


def _gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    return _kernel("nn.gelu")(x, saved=_NOTHING_SAVED) if approximate == "none" else F.gelu(x, approximate)


def _attention(attn: CausalSelfAttention, x: np.ndarray, cache: KVCache | None) -> np.ndarray:
    b, t, d = x.shape
    h = attn.n_heads
    qkv = _linear(attn.c_attn, x).reshape(b, t, 3, h, d // h)
    if cache is None:
        y = F.qkv_attention(qkv, is_causal=True)
    else:  # as CausalSelfAttention.forward
        q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
        start = cache.length
        keys, values = cache.append(k, v)
        if t > 1:
            xp = xp_of(keys)
            mask = xp.arange(start + t)[None, :] <= (start + xp.arange(t))[:, None]
            y = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        else:  # one new token sees every cached key: no mask
            y = _kernel("nn.scaled_dot_product_attention")(q, keys, values, scale=1.0 / math.sqrt(d // h),
                                                          drop=None, saved=_NOTHING_SAVED)
        y = y.transpose(0, 2, 1, 3)
    return _linear(attn.c_proj, y.reshape(b, t, d))


def forward_arrays(model: Any, idx: np.ndarray, caches: list[KVCache] | None = None) -> np.ndarray:
    """``model(idx, caches)``'s logits as an array (the model must pass :func:`standard_layout`)."""
    b, t = model._check_tokens(idx)
    start = caches[0].length if caches else 0
    positions = xp_of(idx).arange(start, start + t)
    x = F.embedding(idx, model.wte.weight._data) + F.embedding(positions, model.wpe.weight._data)
    for i, block in enumerate(model.blocks):
        x = x + _attention(block.attn, _norm(block.ln_1, x), caches[i] if caches else None)
        fc, act, proj, _ = block.mlp
        x = x + _linear(proj, _gelu(_linear(fc, _norm(block.ln_2, x)), act.approximate))
    x = _norm(model.ln_f, x)
    return F.linear(x, model.wte.weight._data) if model.lm_head is None else _linear(model.lm_head, x)
