"""The error function and the normal CDF, vectorised in NumPy (no SciPy, no per-element Python).

``erfc(z)`` for z >= 0 is written ``t * exp(c(s) - z**2)`` with ``t = 1 / (1 + z/2)`` and ``c`` a
Chebyshev series in ``s``, the affine image of t in [1/4, 1] onto [-1, 1] (z in [0, 6]); the
coefficients (degree 18, summed with Clenshaw's recurrence) were fitted to ``log(erfcx(z) / t)``
and give erfc to ~5e-15 relative (erf to ~1e-15 absolute). Near 0, ``erf`` uses its Taylor
series so it stays accurate relative to its value. float32 inputs are computed in float64 and
rounded once (this is not a hot path: float32 GELU uses the rational form below). ``ndtr`` (the normal
CDF) takes the erfc branch on the negative side, so small probabilities keep their relative
accuracy (down to Phi(-8.4) ~ 2e-17; below, only their size is right).

For float32 GELU, ``gelu_f32`` writes Phi(-|x|) as exp(-x^2/2) times a rational function of |x|
(degrees 3 and 4), in float32, block by block so the intermediate arrays stay in the CPU cache;
large arrays are split between a few threads (``runtime.threads``, ``CHAINRULE_NUM_THREADS``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...core.device import as_array, contiguous
from ...runtime.threads import for_blocks, num_threads

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
    x = as_array(x)
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
        >>> from chainrule.ops.special_functions.gauss import erf
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
        >>> from chainrule.ops.special_functions.gauss import ndtr
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
# h = Phi(-|x|) = exp(-x^2/2) M(a), a = |x|, with M the Mills-type ratio Phi(-a) / exp(-a^2/2) written
# as a rational function P(a) / Q(a), P of degree 3, Q monic of degree 4, all coefficients positive (so
# Horner's steps add positive terms and stay well conditioned in float32). It is a weighted minimax fit
# (Loeb-Lawson iterations in float64 on [0, 12]) with P(0) = Q(0) / 2 (so Phi(0) is exactly 1/2): its
# error in Phi is at most 0.4 x min(6e-8, 2e-6 Phi(-a)), i.e. below float32 rounding near the centre
# and 2e-6 relative in the left tail. Evaluated in float32, Phi is within 1.4e-7 of exact (rounding
# dominates) and relative to its size in the left tail (2e-6 down to -8, 5e-6 down to -12). The same
# exp(-x^2/2) gives the derivative Phi(x) + x phi(x), so the forward pass with ``slope`` costs 27
# passes over a block, all of them cheap ufuncs (no np.sign, no np.where); a block's arrays stay in
# the CPU cache, and blocks are split between threads.
_GELU_P = (np.float32(np.float32(27.08902683827426) * np.float32(0.5)), np.float32(9.351588346126636),
           np.float32(2.9747943294181725), np.float32(0.39883745358084016))  # P(0) = Q(0) / 2 exactly
_GELU_Q = (np.float32(27.08902683827426), np.float32(40.317032377855014), np.float32(24.57423205353569),
           np.float32(7.44752171478982))  # Q(a) = a^4 + ... (monic)
_GELU_CLAMP = np.float32(16.0)  # beyond, exp(-x^2/2) is 0 in float32; clipping keeps P and Q finite
_CHUNK = 65536  # elements per block: a block's float32 arrays (256 KiB each) stay in L2


def _chunk() -> int:
    """Elements per block: twice as many when threads share the work. Each NumPy call hands the GIL
    over between the threads; on 2 cores 64K-element blocks gained nothing from the second thread
    (7.4 vs 7.3 ms for GELU on (4096, 512)), 128K-element blocks 1.3x. Every step is elementwise,
    so the block size never changes a bit of the result."""
    return _CHUNK if num_threads() == 1 else 2 * _CHUNK
_F = np.float32
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_K = _F(_INV_SQRT_2PI)


def _flat(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1) if x.flags.c_contiguous else contiguous(x).reshape(-1)


def _gaussian(xc: np.ndarray, out: np.ndarray) -> np.ndarray:
    """exp(-x^2 / 2) into ``out`` for x clipped to [-16, 16] (the same operations in the forward pass and
    in gelu_grad_f32, so both give the same bits)."""
    np.square(xc, out=out)
    out *= _F(-0.5)
    return np.exp(out, out=out)


def gelu_f32(x: np.ndarray, slope: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(x * Phi(x), Phi(x)) for float32 ``x``; Phi to ~1.4e-7 absolute, relative in the left tail.

    With ``slope``, the second array is GELU's derivative Phi(x) + x phi(x) instead (3 more passes
    in cache here, sharing exp(-x^2/2) with Phi, so that the reverse rule is one product
    ``g * slope``, with the same bits as :func:`gelu_grad_f32`'s).

    Example:
        >>> import numpy as np
        >>> y, cdf = gelu_f32(np.array([-1.0, 0.0, 2.0], dtype=np.float32))
        >>> np.round(y, 4), cdf[1]
        (array([-0.1587,  0.    ,  1.9545], dtype=float32), np.float32(0.5))
    """
    flat = _flat(x)
    n = flat.size
    y, second = np.empty(n, _F), np.empty(n, _F)
    p0, p1, p2, p3 = _GELU_P
    q0, q1, q2, q3 = _GELU_Q

    def work(lo: int, hi: int) -> None:
        xc = flat[lo:hi]
        a, p, q, e = (np.empty(hi - lo, _F) for _ in range(4))
        np.clip(xc, -_GELU_CLAMP, _GELU_CLAMP, out=e)  # x clipped (kept for the slope)
        np.abs(e, out=a)
        np.multiply(a, p3, out=p)  # P(a), Horner
        p += p2
        p *= a
        p += p1
        p *= a
        p += p0
        np.add(a, q3, out=q)  # Q(a), Horner (monic)
        q *= a
        q += q2
        q *= a
        q += q1
        q *= a
        q += q0
        p /= q
        p *= _gaussian(e, a)  # h = Phi(-|x|), accurate relative to its size
        np.greater(xc, 0, out=q)  # 1 where Phi(x) = 1 - h, 0 where Phi(x) = h (x = 0 included: h = 1/2)
        np.subtract(p, q, out=q)
        cdf = p if slope else second[lo:hi]
        np.abs(q, out=cdf)  # Phi(x) = |h - step(x)|
        np.multiply(xc, cdf, out=y[lo:hi])
        if slope:  # + x phi(x), as gelu_grad_f32 computes it (x clipped: 0, not NaN, at x = +-inf)
            np.multiply(e, a, out=q)
            q *= _K
            np.add(cdf, q, out=second[lo:hi])

    for_blocks(work, n, _chunk() if n > _CHUNK else n)  # (one block either way: no thread count to read)
    return y.reshape(x.shape), second.reshape(x.shape)


def times_f32(g: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """g * slope for float32 arrays of one shape, in blocks split between threads."""
    fg, fs = _flat(g), _flat(slope)
    out = np.empty(fg.size, _F)
    for_blocks(lambda lo, hi: np.multiply(fg[lo:hi], fs[lo:hi], out=out[lo:hi]), fg.size, _chunk())
    return out.reshape(slope.shape)


def gelu_grad_f32(x: np.ndarray, cdf: np.ndarray, g: np.ndarray) -> np.ndarray:
    """g * gelu'(x) = g * (Phi(x) + x phi(x)) for float32 arrays, in cache-sized blocks."""
    fx, fc, fg = _flat(x), _flat(cdf), _flat(g)
    out = np.empty(fx.size, _F)

    def work(lo: int, hi: int) -> None:
        xc, oc, cc = fx[lo:hi], out[lo:hi], np.empty(hi - lo, _F)
        np.clip(xc, -_GELU_CLAMP, _GELU_CLAMP, out=cc)
        _gaussian(cc, oc)
        np.multiply(cc, oc, out=oc)
        oc *= _K
        np.add(fc[lo:hi], oc, out=oc)
        oc *= fg[lo:hi]

    for_blocks(work, fx.size, _chunk())
    return out.reshape(x.shape)
