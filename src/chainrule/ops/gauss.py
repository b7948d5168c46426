"""The error function and the normal CDF, vectorised in NumPy (no SciPy, no per-element Python).

``erfc(z)`` for z >= 0 is written ``t * exp(c(s) - z**2)`` with ``t = 1 / (1 + z/2)`` and ``c`` a
Chebyshev series in ``s``, the affine image of t in [1/4, 1] onto [-1, 1] (z in [0, 6]); the
coefficients (degree 18, summed with Clenshaw's recurrence) were fitted to ``log(erfcx(z) / t)``
and give erfc to ~5e-15 relative (erf to ~1e-15 absolute). Near 0, ``erf`` uses its Taylor
series so it stays accurate relative to its value. float32 inputs are computed in float64 and
rounded once (this is not a hot path: float32 GELU uses the table below). ``ndtr`` (the normal
CDF) takes the erfc branch on the negative side, so small probabilities keep their relative
accuracy (down to Phi(-8.4) ~ 2e-17; below, only their size is right).

For float32 GELU, ``ndtr_table`` interpolates a table of the CDF linearly (step 1/1024 on
[-8, 8], error below 3e-8): a dozen cheap NumPy passes instead of a polynomial of degree 9.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_P = 0.5  # t = 1 / (1 + _P z)
_S_SCALE, _S_SHIFT = 2.0 / 0.75, 1.0 + 2.0 * 0.25 / 0.75  # s = t * _S_SCALE - _S_SHIFT maps [1/4, 1] to [-1, 1]

_CHEB64 = (
    -0.4985502230126518, 0.5003364655513497, 0.002907954374873034, -0.00480743380446045, 1.4741810740890585e-05,
    0.00010698213450344353, -6.275656652459237e-06, -2.6555862047593345e-06, 4.146163641349358e-07,
    4.7388984022087446e-08, -1.8774034537471946e-08, 4.5312072012935955e-10, 5.993488327963821e-10,
    -8.983778950944971e-11, -9.48863042005804e-12, 4.4069531443562845e-12, -2.726135877832449e-13,
    -1.1337160380405164e-13, 2.543225329564983e-14,
)
# erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1)), for |x| < 1/2
_TAYLOR = tuple((-1) ** n / (math.factorial(n) * (2 * n + 1)) * 2 / math.sqrt(math.pi) for n in range(14))
_SQRT_HALF = 1.0 / math.sqrt(2.0)


def _float64(x: Any) -> tuple[np.ndarray, np.dtype]:
    """x in float64, and the dtype to give the result (float32 stays float32, integers become float64)."""
    x = np.asarray(x)
    out = x.dtype if x.dtype.kind == "f" and x.dtype.itemsize >= 4 else np.dtype(np.float64)
    return x.astype(np.float64, copy=False).reshape(-1), out  # 1-d, so every step can work in place


def erfc_nonneg(z: np.ndarray) -> np.ndarray:
    """erfc(z) for z >= 0 (a float64 ndarray), accurate relative to its value for z <= 6."""
    t = np.reciprocal(z * _P + 1.0)
    s = np.maximum(t * _S_SCALE - _S_SHIFT, -1.0)  # beyond z = 6: erfc < 3e-17, only its size matters
    b1 = np.zeros_like(s)  # Clenshaw's recurrence: b_k = c_k + 2 s b_{k+1} - b_{k+2}
    b2 = np.zeros_like(s)
    s2 = 2.0 * s
    for c in _CHEB64[:0:-1]:
        b1, b2 = s2 * b1 - b2 + c, b1
    acc = s * b1 - b2 + _CHEB64[0]
    acc -= z * z
    np.exp(acc, out=acc)
    acc *= t
    return acc


def erf(x: Any) -> np.ndarray:
    """The error function, elementwise (float32 stays float32; integers become float64).

    Example:
        >>> import numpy as np
        >>> from chainrule.ops.gauss import erf
        >>> bool(abs(erf(np.array([0.5]))[0] - 0.5204998778130465) < 1e-15)
        True
    """
    x_in = x
    x, dtype = _float64(x)
    a = np.abs(x)
    out = np.copysign(1.0 - erfc_nonneg(a), x)
    small = a < 0.5
    if small.any():
        xs = x[small]
        x2 = xs * xs
        acc = np.full_like(xs, _TAYLOR[-1])
        for c in _TAYLOR[-2::-1]:
            acc *= x2
            acc += c
        out[small] = acc * xs
    return out.astype(dtype, copy=False).reshape(np.shape(x_in))


def ndtr(x: Any) -> np.ndarray:
    """The standard normal CDF Phi(x) = (1 + erf(x / sqrt 2)) / 2, accurate relative to its value for x < 0.

    Example:
        >>> import numpy as np
        >>> from chainrule.ops.gauss import ndtr
        >>> float(ndtr(np.array([0.0]))[0]), bool(abs(ndtr(np.array([-8.0]))[0] / 6.22096057427178e-16 - 1) < 1e-13)
        (0.5, True)
    """
    shape = np.shape(x)
    x, dtype = _float64(x)
    z = np.abs(x) * _SQRT_HALF
    h = erfc_nonneg(z)
    h *= 0.5
    out = np.where(x < 0, h, 1.0 - h)
    small = z < 0.5
    if small.any():  # near 0, from erf's series: exactly 1/2 at 0
        out[small] = 0.5 + 0.5 * erf(x[small] * _SQRT_HALF)
    return out.astype(dtype, copy=False).reshape(shape)


# -- the float32 table ---------------------------------------------------------------------------
_STEPS = 1024  # per unit of x
_HALF = 8 * _STEPS  # the table covers [-8, 8]
_GRID = np.arange(-_HALF, _HALF + 2) / _STEPS
_CDF64 = ndtr(_GRID)
_TABLE = _CDF64[:-1].astype(np.float32)  # Phi at the grid points
_SLOPE = np.diff(_CDF64).astype(np.float32)  # Phi(next) - Phi(here)


def ndtr_table(x: np.ndarray) -> np.ndarray:
    """Phi(x) for float32 ``x`` by linear interpolation in a table (absolute error < 3e-8)."""
    u = x * np.float32(_STEPS)  # exact: a power of two
    np.clip(u, np.float32(-_HALF), np.float32(_HALF - 1), out=u)
    cell = np.floor(u)
    u -= cell  # the fraction of a step, exactly
    i = cell.astype(np.intp)
    i += _HALF
    out = _TABLE.take(i)
    slope = _SLOPE.take(i)
    slope *= u
    out += slope
    return out
