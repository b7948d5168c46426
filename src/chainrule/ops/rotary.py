"""Rotary position embeddings (RoPE) as one linear op: each feature pair turned by its position's angle.

``rotate(x, cos, sin)`` turns the pair (x[i], x[i + E/2]) of the last axis of ``x`` (..., T, E) by the
angle whose cosine and sine are ``cos[t, i]``, ``sin[t, i]`` (tables (T, E/2); the "rotate half"
layout of GPT-NeoX and Llama). It is linear in ``x``, and its transpose is the rotation by the
opposite angle (``sin`` negated), which gives both differentiation rules (ops/declare.py's
``linear_primitive``). Written with slices, products and a concatenation instead, a step's graph
holds nine nodes per call, and the slices' reverse rules each make a zero array of ``x``'s size.

Example:
    >>> import numpy as np
    >>> cos, sin = np.array([[0.0]]), np.array([[1.0]])  # a quarter turn
    >>> rotate(np.array([[1.0, 2.0]]), cos, sin)
    array([[-2.,  1.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff.primitive import apply
from ..core.device import is_off_host, move, of
from ._define import raw
from .declare import linear_primitive

_SMALL = 16384  # elements: below, the rotation runs on the two halves (fewer NumPy calls, shorter rows)


def _rotate_fn(x: Any, *, cos: Any, sin: Any) -> Any:
    half = cos.shape[-1]
    x1, x2 = x[..., :half], x[..., half:]
    if type(x) is not np.ndarray:  # a device array: the same arithmetic, without out=
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    if x.size <= _SMALL:  # (a token at a time when sampling: fewer calls)
        out = np.empty(x.shape, np.result_type(x, cos, sin))
        o1, o2 = out[..., :half], out[..., half:]
        np.multiply(x1, cos, out=o1)
        o1 -= x2 * sin
        np.multiply(x2, cos, out=o2)
        o2 += x1 * sin
        return out
    # on whole rows (long inner loops; the halves' inner loops are E/2 long): x * [cos, cos] + swap(x) * [-sin, sin],
    # the same products and sums as above, so the same bits (a + (-b) is a - b)
    wide_cos = np.concatenate([cos, cos], axis=-1)
    wide_sin = np.concatenate([-sin, sin], axis=-1)
    out = x * wide_cos
    swapped = x.reshape(*x.shape[:-1], 2, half)[..., ::-1, :].reshape(x.shape)  # (x2, x1): a copy
    swapped *= wide_sin
    out += swapped
    return out


_rotate = linear_primitive(
    "nn.rope", _rotate_fn,
    lambda g, ans, x, *, cos, sin: apply(_rotate, (g,), {"cos": cos, "sin": -sin}),  # the opposite turn
)


def rotate(x: Any, cos: Any, sin: Any) -> Any:
    """``x`` (..., T, E) with each feature pair (i, i + E/2) at position t turned by the angle whose cosine
    and sine are ``cos[t, i]`` and ``sin[t, i]`` (arrays (T, E/2), constants: no gradient flows to them).
    Differentiable in ``x`` in both modes, to any order."""
    c, s = raw(cos), raw(sin)
    sx = np.shape(raw(x))
    if np.shape(c) != np.shape(s) or len(sx) < 1 or np.ndim(c) < 1 or sx[-1] != 2 * np.shape(c)[-1]:
        raise ValueError(
            f"rotate: x (..., T, E) needs cos and sin of one shape (T, E/2); got x {sx}, cos {np.shape(c)}, "
            f"sin {np.shape(s)}"
        )
    half = (*sx[:-1], sx[-1] // 2)
    if np.broadcast_shapes(half, np.shape(c)) != half:
        raise ValueError(f"rotate: cos and sin of shape {np.shape(c)} do not broadcast to x's half {half}")
    where = raw(x)
    if is_off_host(where):  # tables made on the host, x on a device: the tables go where x is
        c, s = move(c, of(where)), move(s, of(where))
    return _rotate(x, cos=c, sin=s)
