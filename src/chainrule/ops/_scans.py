"""Running products and first-order linear recurrences along the last axis, without division.

The rules of ``prod`` and ``cumprod`` are built from these. Written with NumPy functions and
operators only (multiply, add, concatenate, slicing), so on Tensors every step is recorded and
the rules are exact to any order, at exact zeros and at values near underflow alike (no
``ans / x``). On plain arrays they run as NumPy; the scans take ceil(log2 n) steps.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.device import xp_of
from ..tensor import Tensor


def _pad_front(x: Any, k: int, value: float) -> Any:
    """``x`` shifted right by ``k`` along the last axis, ``value`` filling the first ``k`` slots."""
    n = np.shape(x)[-1]
    data = x._data if isinstance(x, Tensor) else x
    fill = xp_of(data).full(np.shape(x)[:-1] + (min(k, n),), value, dtype=np.result_type(data))  # where x is
    return np.concatenate([fill, x[..., : n - k]], axis=-1) if k < n else fill


def prefix_products(x: Any) -> Any:
    """Inclusive running products along the last axis: out[..., k] = x[..., 0] * ... * x[..., k]."""
    if not isinstance(x, Tensor):
        return np.cumprod(x, axis=-1)
    y, k, n = x, 1, np.shape(x)[-1]
    while k < n:  # Hillis-Steele doubling: after the step with shift k, y[i] is the product of x[i-2k+1 .. i]
        y = y * _pad_front(y, k, 1.0)
        k *= 2
    return y


def exclusive_products(x: Any) -> tuple[Any, Any]:
    """(products of the entries before, products of the entries after) each position, along the last axis."""
    if np.shape(x)[-1] == 0:
        return x, x
    before = _pad_front(prefix_products(x), 1, 1.0)  # inclusive products shifted one place: exclusive
    after = _pad_front(prefix_products(x[..., ::-1]), 1, 1.0)[..., ::-1]
    return before, after


def linear_recurrence(a: Any, h: Any) -> Any:
    """r with r[..., k] = a[..., k] * r[..., k-1] + h[..., k] and r[..., -1] = 0, along the last axis.

    An associative scan over the affine maps r -> a r + h (composition: (a2, h2) after (a1, h1) is
    (a2 a1, a2 h1 + h2)), by doubling: only products and sums, so it is exact to any order.
    """
    n = np.shape(h)[-1]
    a = a * np.ones_like(h._data if isinstance(h, Tensor) else h,  # a's shape is h's (where h is: host or device)
                         dtype=np.result_type(a._data if isinstance(a, Tensor) else a))
    k = 1
    while k < n:
        a, h = a * _pad_front(a, k, 1.0), h + a * _pad_front(h, k, 0.0)
        k *= 2
    return h
