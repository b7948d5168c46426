"""The error function and the normal CDF, vectorised in NumPy (no SciPy, no per-element Python).

``erfc(z)`` for z >= 0 is written ``t * exp(c(s) - z**2)`` with ``t = 1 / (1 + z/2)`` and ``c`` a
Chebyshev series in ``s``, the affine image of t in [1/4, 1] onto [-1, 1] (z in [0, 6]); the
coefficients (degree 18, summed with Clenshaw's recurrence) were fitted to ``log(erfcx(z) / t)``
and give erfc to ~5e-15 relative (erf to ~1e-15 absolute). Near 0, ``erf`` uses its Taylor
series so it stays accurate relative to its value. float32 inputs are computed in float64 and
rounded once (this is not a hot path: float32 GELU uses the table below). ``ndtr`` (the normal
CDF) takes the erfc branch on the negative side, so small probabilities keep their relative
accuracy (down to Phi(-8.4) ~ 2e-17; below, only their size is right).

For float32 GELU, ``gelu_f32`` evaluates the same erfc form with a degree-8 polynomial in
float32, block by block so the intermediate arrays stay in the CPU cache; large arrays are
split between a few threads (``ops._parallel``, ``CHAINRULE_NUM_THREADS``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._parallel import for_blocks

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


# -- float32 GELU, in cache-sized blocks ----------------------------------------------------------
# The same erfc form, h = Phi(-|x|) = t exp(c(u) - x^2/2) with t = 1 / (1 + _P |x| / sqrt 2), and c a
# degree-8 polynomial (float32 Horner) in u = t - 5/8, the centred t on [1/4, 1]. Its coefficients are
# those of the Chebyshev interpolant of log(erfcx(z) / t) in s = 8 u / 3 (200 nodes, fitted in float64),
# times (8/3)^k, with ln(1/2) folded into the constant; Phi is then within 1.7e-7 of exact (float32
# rounding dominates). Every step of a block runs on arrays that stay in the CPU cache, so the ~33
# NumPy passes cost about what a few passes over main memory would; blocks are split between threads.
_POLY32 = tuple(np.float32(c * (8.0 / 3.0) ** k + (math.log(0.5) if k == 0 else 0.0)) for k, c in enumerate((
    -0.5014367453037668, 0.5153122667406828, 0.005571744720420733, -0.021518090735373845, 0.00048550462351845604,
    0.0020091398069701197, -0.0003069628021206505, -0.0001699575170899772, 5.307089462254237e-05,
)))
_CHUNK = 65536  # elements per block: the 5 float32 arrays of a block (256 KiB each) stay in L2
_F = np.float32


def _flat(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1) if x.flags.c_contiguous else np.ascontiguousarray(x).reshape(-1)


def gelu_f32(x: np.ndarray, slope: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(x * Phi(x), Phi(x)) for float32 ``x``; Phi to ~2e-7 absolute, relative in the left tail.

    With ``slope``, the second array is GELU's derivative Phi(x) + x phi(x) instead (5 more
    passes in cache here, so that the reverse rule is one product ``g * slope``, with the same
    bits as :func:`gelu_grad_f32`'s).

    Example:
        >>> import numpy as np
        >>> y, cdf = gelu_f32(np.array([-1.0, 0.0, 2.0], dtype=np.float32))
        >>> np.round(y, 4), cdf[1]
        (array([-0.1587,  0.    ,  1.9545], dtype=float32), np.float32(0.5))
    """
    flat = _flat(x)
    n = flat.size
    y, cdf = np.empty(n, _F), np.empty(n, _F)
    scale = _F(_P * _SQRT_HALF)

    def work(lo: int, hi: int) -> None:
        xc, out = flat[lo:hi], cdf[lo:hi]
        zc, tc, uc, ac = (np.empty(hi - lo, _F) for _ in range(4))
        np.abs(xc, out=zc)
        np.multiply(zc, scale, out=tc)
        tc += _F(1.0)
        np.reciprocal(tc, out=tc)  # t
        np.subtract(tc, _F(0.625), out=uc)
        np.maximum(uc, _F(-0.375), out=uc)  # u; beyond |x| = 6 sqrt 2, Phi(-|x|) < 1e-17: only its size matters
        np.multiply(uc, _POLY32[-1], out=ac)
        ac += _POLY32[-2]
        for c in _POLY32[-3::-1]:
            ac *= uc
            ac += c
        np.multiply(xc, xc, out=zc)
        zc *= _F(0.5)
        ac -= zc
        np.exp(ac, out=ac)
        ac *= tc  # h = Phi(-|x|), accurate relative to its size
        np.sign(xc, out=uc)  # Phi(x) = step(x) - sign(x) h: h for x < 0, 1 - h for x > 0, 1/2 at 0
        np.multiply(uc, _F(0.5), out=out)
        out += _F(0.5)
        uc *= ac
        out -= uc
        np.multiply(xc, out, out=y[lo:hi])
        if slope:  # + x phi(x), as gelu_grad_f32 computes it (zc holds x^2 / 2)
            np.negative(zc, out=zc)
            np.exp(zc, out=zc)
            zc *= xc
            zc *= _F(_INV_SQRT_2PI)
            out += zc

    for_blocks(work, n, _CHUNK)
    return y.reshape(x.shape), cdf.reshape(x.shape)


def times_f32(g: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """g * slope for float32 arrays of one shape, in blocks split between threads."""
    fg, fs = _flat(g), _flat(slope)
    out = np.empty(fg.size, _F)
    for_blocks(lambda lo, hi: np.multiply(fg[lo:hi], fs[lo:hi], out=out[lo:hi]), fg.size, _CHUNK)
    return out.reshape(slope.shape)


def gelu_grad_f32(x: np.ndarray, cdf: np.ndarray, g: np.ndarray) -> np.ndarray:
    """g * gelu'(x) = g * (Phi(x) + x phi(x)) for float32 arrays, in cache-sized blocks."""
    fx, fc, fg = _flat(x), _flat(cdf), _flat(g)
    out = np.empty(fx.size, _F)

    def work(lo: int, hi: int) -> None:
        xc, oc = fx[lo:hi], out[lo:hi]
        np.multiply(xc, xc, out=oc)
        oc *= _F(-0.5)
        np.exp(oc, out=oc)
        oc *= xc
        oc *= _F(_INV_SQRT_2PI)
        oc += fc[lo:hi]
        oc *= fg[lo:hi]

    for_blocks(work, fx.size, _CHUNK)
    return out.reshape(x.shape)


_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
