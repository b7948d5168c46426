"""In-place update kernel for the optimisers: ``y += a * x`` without a full-size temporary.

``y += a * x`` in NumPy writes ``a * x`` to a temporary as large as ``y`` and reads it back,
which for big weight matrices costs as much memory traffic as the update itself. Here the
product goes through a small buffer that stays in cache, one block at a time, so memory is
read and written once, as in PyTorch's ``add_(x, alpha=a)``. The arithmetic is the same two
NumPy operations per element, so results are bit-identical to ``y += a * x``. Pure NumPy: no
second BLAS library, no thread pools.
"""

from __future__ import annotations

import numpy as np

BLOCK = 65536  # elements per block: 256 KiB in float32, 512 KiB in float64 (fits L2)
_BLOCKED_FROM = 2 * BLOCK  # smaller arrays: one NumPy expression (the blocks would only add calls)


def axpy(a: float, x: np.ndarray, y: np.ndarray) -> None:
    """``y += a * x``, in place on ``y`` (same shape and dtype for the blocked path)."""
    n = y.size
    if (n < _BLOCKED_FROM or x.dtype != y.dtype or y.__class__ is not np.ndarray
            or not (y.flags.c_contiguous and x.flags.c_contiguous)):  # (a device's array: its own kernel)
        y += a * x
        return
    xf, yf = x.reshape(-1), y.reshape(-1)
    buf = np.empty(BLOCK, dtype=y.dtype)
    for start in range(0, n, BLOCK):
        stop = min(start + BLOCK, n)
        b = buf[: stop - start]
        np.multiply(xf[start:stop], a, out=b)
        np.add(yf[start:stop], b, out=yf[start:stop])
