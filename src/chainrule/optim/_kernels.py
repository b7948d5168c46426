"""In-place update kernels for the optimisers: ``y += a * x`` in one pass.

NumPy has no fused multiply-add, so ``y += a * x`` reads and writes memory twice and
allocates a temporary. For large contiguous float arrays the BLAS ``axpy`` of SciPy (an
optional extra, imported lazily) does it in one pass, as PyTorch's ``add_(x, alpha=a)``;
without SciPy, or for small arrays, plain NumPy is used. Results agree to rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_MIN_SIZE = 4096  # below this the call overhead of BLAS outweighs the saved pass
_blas: dict[Any, Any] | None = None


def _load() -> dict[Any, Any]:
    global _blas
    if _blas is None:
        try:
            from scipy.linalg.blas import daxpy, saxpy
        except ImportError:  # pragma: no cover - exercised without SciPy
            _blas = {}
        else:
            _blas = {np.dtype(np.float32): saxpy, np.dtype(np.float64): daxpy}
    return _blas


def axpy(a: float, x: np.ndarray, y: np.ndarray) -> None:
    """``y += a * x``, in place on ``y`` (same shape)."""
    if y.size >= _MIN_SIZE and x.dtype == y.dtype and y.flags.c_contiguous and x.flags.c_contiguous:
        fn = _load().get(y.dtype)
        if fn is not None:
            flat = y.reshape(-1)
            out = fn(x.reshape(-1), flat, a=a)
            if out is not flat and not np.may_share_memory(out, y):  # pragma: no cover - BLAS made a copy
                flat[...] = out
            return
    y += a * x
