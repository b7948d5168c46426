"""Scaled dot-product attention (placeholder composite; replaced by a fused primitive)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ops.contraction import matmul
from ..ops.reductions import softmax
from ..ops.shape import swapaxes
from ._define import raw


def scaled_dot_product_attention(q: Any, k: Any, v: Any, attn_mask: Any = None, is_causal: bool = False,
                                 dropout_p: float = 0.0, scale: float | None = None) -> Any:
    e = np.shape(raw(q))[-1]
    s = 1.0 / math.sqrt(e) if scale is None else scale
    scores = matmul(q, swapaxes(k, -1, -2)) * s
    L, S = np.shape(raw(q))[-2], np.shape(raw(k))[-2]
    if is_causal:
        attn_mask = np.tril(np.ones((L, S), dtype=bool))
    if attn_mask is not None:
        m = np.asarray(raw(attn_mask))
        if m.dtype == bool:
            scores = scores + np.where(m, 0.0, -np.inf).astype(raw(q).dtype)
        else:
            scores = scores + m
    return matmul(softmax(scores, axis=-1), v)
