"""SiLU, ``x * sigmoid(x)``, and its derivative on floating-point NumPy arrays, in cache-sized blocks.

The generic form (``x * sigmoid(x)`` with the stable two-branch sigmoid, and its derivative
recomputing the sigmoid) makes about 24 passes over an array and as many temporaries; SwiGLU's
MLP runs it on (batch * context, hidden) arrays every step. Here the forward pass is 5 passes
over a block that stays in the CPU cache, and keeps ``sigmoid(x)`` for the reverse rule, which is
5 more. ``sigmoid(x) = 1 / (1 + exp(-x))``: where ``exp(-x)`` overflows (x below about -88 in
float32) the sigmoid is 0, its limit, and relative accuracy is kept on both sides (a correctly
rounded exp, one addition, one reciprocal). Large arrays are split between threads
(``ops._parallel``); the blocks do not depend on the number of threads, and every element is
computed alone, so neither do the results.

Example:
    >>> import numpy as np
    >>> y, s = silu_forward(np.array([-1.0, 0.0, 2.0]))
    >>> np.round(y, 4), s[1]
    (array([-0.2689,  0.    ,  1.7616]), np.float64(0.5))
"""

from __future__ import annotations

import numpy as np

from ..core.device import contiguous
from ..runtime.threads import for_blocks, num_threads

_CHUNK = 65536  # elements per block: a block's float32 arrays (256 KiB each) stay in L2


def _chunk(n: int) -> int:
    """Elements per block (twice as many when threads share the work: see ops.special_functions.gauss)."""
    return n if n <= _CHUNK else _CHUNK if num_threads() == 1 else 2 * _CHUNK


def _flat(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1) if x.flags.c_contiguous else contiguous(x).reshape(-1)


def silu_forward(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x * sigmoid(x), sigmoid(x)) for a real floating-point array, both in x's shape and dtype."""
    flat = _flat(x)
    n = flat.size
    y, s = np.empty(n, x.dtype), np.empty(n, x.dtype)
    one = x.dtype.type(1)

    def work(lo: int, hi: int) -> None:
        sb = s[lo:hi]
        np.negative(flat[lo:hi], out=sb)
        with np.errstate(over="ignore", under="ignore"):  # exp(-x) = inf: sigmoid 0 (each thread its own state)
            np.exp(sb, out=sb)
        sb += one
        np.reciprocal(sb, out=sb)
        np.multiply(flat[lo:hi], sb, out=y[lo:hi])

    for_blocks(work, n, _chunk(n))
    return y.reshape(x.shape), s.reshape(x.shape)


def silu_backward(g: np.ndarray, x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """g * silu'(x) = g * s * (1 + x * (1 - s)), with s = sigmoid(x); arrays of one shape and dtype."""
    fg, fx, fs = _flat(g), _flat(x), _flat(s)
    out = np.empty(fx.size, x.dtype)
    one = x.dtype.type(1)

    def work(lo: int, hi: int) -> None:
        ob, sb = out[lo:hi], fs[lo:hi]
        np.subtract(one, sb, out=ob)
        ob *= fx[lo:hi]
        ob += one
        ob *= sb
        ob *= fg[lo:hi]

    for_blocks(work, fx.size, _chunk(fx.size))
    return out.reshape(x.shape)
