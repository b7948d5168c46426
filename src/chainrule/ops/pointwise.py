"""More elementwise NumPy functions: sinc, fmax/fmin, logaddexp2, angle units, mod, copysign...

Most are composites of the ops in :mod:`elementwise` (so they need no rules of their own);
``sinc`` and ``ldexp`` are primitives. Conventions at points where a function has no
derivative:

- ``fmax``/``fmin``: as ``maximum``/``minimum`` (ties share the gradient), NaN entries lose
  to numbers and get no gradient;
- ``mod``/``remainder``/``fmod``: derivative 1 in ``x`` and ``-floor(x / y)`` (``-trunc`` for
  ``fmod``) in ``y``, the one-sided value at the jumps;
- ``copysign(x, y)``: derivative ``sign(x) * sign(y)`` in ``x`` (0 at ``x == 0``), 0 in ``y``;
- ``floor_divide``, ``heaviside``: piecewise constant, zero gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff.primitive import Primitive
from ..tensor import Tensor
from . import elementwise as E
from ._define import elementwise, implements, is_complex, raw, wrap_like

_PI = float(np.pi)


def _sinc_fn(x: Any) -> Any:
    return np.sinc(x)


def _sinc_d(ans: Any, x: Any) -> Any:
    # (cos(pi x) - sinc(x)) / x, and its Taylor series near 0, so every order is right at 0
    near = np.abs(raw(x)) < 1e-3
    safe = np.where(near, 1.0, x)
    exact = (np.cos(_PI * safe) - ans) / safe
    series = x * (-(_PI**2) / 3 + x * x * (_PI**4 / 30))
    return np.where(near, series, exact)


_sinc = elementwise("sinc", _sinc_fn, _sinc_d)


@implements(np.sinc)
def sinc(x: Any) -> Any:
    """sin(pi x) / (pi x), 1 at 0; derivatives of every order are exact at 0 too.

    Example:
        >>> import chainrule as cr
        >>> cr.grad(cr.sinc)(0.0) == 0.0, round(cr.deriv(cr.sinc, 2)(0.0), 6)  # -pi**2 / 3
        (True, -3.289868)
    """
    return _sinc(x)


_ldexp = Primitive("ldexp", np.ldexp)
_ldexp.defvjp(lambda g, ans, x, n: g * np.exp2(raw(n)).astype(np.result_type(raw(x))), None)
_ldexp.defjvp(lambda t, ans, x, n: t * np.exp2(raw(n)).astype(np.result_type(raw(x))), None)


@implements(np.ldexp)
def ldexp(x: Any, n: Any) -> Any:
    """x * 2**n for integer ``n`` (differentiable in ``x``)."""
    return _ldexp(x, raw(n))


def _nan_mask(x: Any) -> np.ndarray:
    return np.isnan(raw(x))


@implements(np.fmax)
def fmax(x: Any, y: Any) -> Any:
    """Elementwise max ignoring NaNs (a NaN loses to a number and gets no gradient)."""
    nx, ny = _nan_mask(x), _nan_mask(y)
    if not (nx.any() or ny.any()):
        return E.maximum(x, y)
    return E.where(nx & ~ny, y, E.where(ny, x, E.maximum(E.where(nx, 0.0, x), y)))


@implements(np.fmin)
def fmin(x: Any, y: Any) -> Any:
    """Elementwise min ignoring NaNs (a NaN loses to a number and gets no gradient)."""
    nx, ny = _nan_mask(x), _nan_mask(y)
    if not (nx.any() or ny.any()):
        return E.minimum(x, y)
    return E.where(nx & ~ny, y, E.where(ny, x, E.minimum(E.where(nx, 0.0, x), y)))


_LN2 = float(np.log(2.0))


@implements(np.logaddexp2)
def logaddexp2(x: Any, y: Any) -> Any:
    """log2(2**x + 2**y), stably."""
    return E.logaddexp(E.multiply(x, _LN2), E.multiply(y, _LN2)) / _LN2


@implements(np.deg2rad, np.radians)
def deg2rad(x: Any) -> Any:
    """Degrees to radians (x * pi / 180)."""
    return E.multiply(x, _PI / 180)


radians = deg2rad


@implements(np.rad2deg, np.degrees)
def rad2deg(x: Any) -> Any:
    """Radians to degrees (x * 180 / pi)."""
    return E.multiply(x, 180 / _PI)


degrees = rad2deg


@implements(np.float_power)
def float_power(x: Any, y: Any) -> Any:
    """x ** y computed in float64 (at least)."""
    return E.power(_to_float64(x), _to_float64(y))


def _to_float64(x: Any) -> Any:
    from .shape import astype

    dtype = np.result_type(raw(x), np.float64)
    if hasattr(x, "_requires_grad"):
        return x if x.data.dtype == dtype else astype(x, dtype)
    return np.asarray(x, dtype=dtype)


@implements(np.fabs)
def fabs(x: Any) -> Any:
    """|x| for real numbers; derivative sign(x), 0 at 0."""
    return E.abs(x)


@implements(np.copysign)
def copysign(x: Any, y: Any) -> Any:
    """|x| with the sign of ``y``; differentiable in ``x`` only (the sign of y is a constant)."""
    s = np.where(np.signbit(raw(y)), -1.0, 1.0)
    return E.multiply(E.abs(x), s.astype(np.result_type(raw(x), np.float32)) if np.ndim(s) else float(s))


@implements(np.remainder, np.mod)
def mod(x: Any, y: Any) -> Any:
    """x - floor(x / y) * y, the sign of ``y`` (Python's %); derivatives 1 and -floor(x / y)."""
    return E.subtract(x, E.multiply(_const(np.floor_divide, x, y), y))


remainder = mod


@implements(np.fmod)
def fmod(x: Any, y: Any) -> Any:
    """x - trunc(x / y) * y, the sign of ``x`` (C's fmod); derivatives 1 and -trunc(x / y)."""
    return E.subtract(x, E.multiply(_const(lambda a, b: np.trunc(a / b), x, y), y))


def _const(fn: Any, *args: Any) -> Any:
    return fn(*[raw(a) for a in args])


@implements(np.floor_divide)
def floor_divide(x: Any, y: Any) -> Any:
    """floor(x / y); piecewise constant, zero gradient."""
    return E.floor(E.divide(x, y)) if _any_float(x, y) else wrap_like(np.floor_divide(raw(x), raw(y)), x, y)


def _any_float(*xs: Any) -> bool:
    return any(np.result_type(raw(x)).kind in "fc" for x in xs)


@implements(np.heaviside)
def heaviside(x: Any, h0: Any) -> Any:
    """0 for x < 0, ``h0`` at 0, 1 for x > 0; zero gradient in x, and a Tensor ``h0`` gets its own."""
    steps = E.multiply(E.sign(x), 0.0) + np.heaviside(raw(x), raw(h0))
    if not isinstance(h0, Tensor):
        return steps
    at_zero = raw(x) == 0
    return E.where(at_zero, E.add(h0, E.multiply(steps, 0.0)), steps)  # h0 where x == 0, traced


# -- complex parts: linear over the reals, not holomorphic ------------------------------------
# Reverse rules are transposes for the pairing real(g * t) (JAX's convention): real's is
# g itself, imag's is -1j * g, conj's is conj(g).
def _is_complex(x: Any) -> bool:
    return is_complex(x)


_real = Primitive("real", np.real)
_real.defvjp(lambda g, ans, x: g)
_real.defjvp(lambda t, ans, x: np.real(t))
_imag = Primitive("imag", np.imag)
_imag.defvjp(lambda g, ans, x: -1j * g)
_imag.defjvp(lambda t, ans, x: np.imag(t))
_conj = Primitive("conjugate", np.conjugate)
_conj.defvjp(lambda g, ans, x: np.conjugate(g))
_conj.defjvp(lambda t, ans, x: np.conjugate(t))


@implements(np.conjugate)
def conjugate(x: Any) -> Any:
    """The complex conjugate (the identity on real tensors).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(lambda z: np.real(np.conj(z) * 1j))(1.0 + 2.0j)  # real(i conj z) = y
        -1j
    """
    return _conj(x) if _is_complex(x) else x


conj = conjugate


@implements(np.real)
def real(x: Any) -> Any:
    """The real part (the identity on real tensors)."""
    return _real(x) if _is_complex(x) else x


@implements(np.imag)
def imag(x: Any) -> Any:
    """The imaginary part: zeros, with zero gradient, on real tensors."""
    return _imag(x) if _is_complex(x) else E.multiply(x, 0.0)


@implements(np.angle)
def angle(z: Any, deg: bool = False) -> Any:
    """The argument of a complex number, arctan2(imag, real) (0 or pi on real numbers, zero gradient).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(lambda z: np.angle(z))(1.0 + 1.0j)  # d/dx - i d/dy of atan2(y, x)
        (-0.5-0.5j)
    """
    if _is_complex(z):
        out = E.arctan2(imag(z), real(z))
    else:
        out = E.add(E.multiply(z, 0.0), np.angle(raw(z)))
    return rad2deg(out) if deg else out


@implements(np.real_if_close)
def real_if_close(a: Any, tol: float = 100) -> Any:
    """The real part when every imaginary part is within ``tol`` machine epsilons of 0, else ``a``."""
    kept = np.real_if_close(raw(a), tol=tol)
    return real(a) if _is_complex(a) and not np.iscomplexobj(kept) else a
