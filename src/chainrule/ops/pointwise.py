"""More elementwise NumPy functions: sinc, fmax/fmin, logaddexp2, angle units, mod, copysign...

Most are composites of the ops in :mod:`elementwise` (so they need no rules of their own);
``sinc`` and ``ldexp`` are primitives. Conventions at points where a function has no
derivative:

- ``fmax``/``fmin``: at a tie the first argument takes the whole gradient (PyTorch's rule; ``maximum``
  and ``minimum`` share it), NaN entries lose to numbers and get no gradient;
- ``mod``/``remainder``/``fmod``: derivative 1 in ``x`` and ``-floor(x / y)`` (``-trunc`` for
  ``fmod``) in ``y``, the one-sided value at the jumps;
- ``copysign(x, y)``: derivative ``sign(x) * sign(y)`` in ``x`` (0 at ``x == 0``), 0 in ``y``;
- ``floor_divide``, ``heaviside``: piecewise constant, zero gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff.primitive import Primitive
from ..core.device import OFF_HOST, as_array, check_later, kernel
from ..core.errors import IntegerDivisionByZero
from ..core.promotion import result_dtype
from ..tensor import Tensor
from . import elementwise
from ._define import is_complex, raw, wrap_like
from .declare import elementwise_op, implements, linear_primitive, op
from .pytorch.dim_args import numpy_methods
from .shape import astype

_PI = float(np.pi)


def _sinc_d(ans: Any, x: Any) -> Any:
    # (cos(pi x) - sinc(x)) / x, and its Taylor series near 0, so every order is right at 0
    near = np.abs(raw(x)) < 1e-3
    safe = np.where(near, 1.0, x)
    exact = (np.cos(_PI * safe) - ans) / safe
    series = x * (-(_PI**2) / 3 + x * x * (_PI**4 / 30))
    return np.where(near, series, exact)


sinc = elementwise_op("sinc", np.sinc, _sinc_d, numpy=np.sinc, domain="real", torch="torch.sinc", doc="""\
sin(pi x) / (pi x), 1 at 0; derivatives of every order are exact at 0 too.

    Example:
        >>> import chainrule as cr
        >>> cr.grad(cr.sinc)(0.0) == 0.0, round(cr.deriv(cr.sinc, 2)(0.0), 6)  # -pi**2 / 3
        (True, -3.289868)
    """)


_ldexp = Primitive("ldexp", np.ldexp)
_ldexp.defvjp(lambda g, ans, x, n: g * np.exp2(raw(n)).astype(np.result_type(raw(x))), None)
_ldexp.defjvp(lambda t, ans, x, n: t * np.exp2(raw(n)).astype(np.result_type(raw(x))), None)


@implements(np.ldexp)
def ldexp(x: Any, n: Any) -> Any:
    """x * 2**n for integer ``n`` (differentiable in ``x``); a floating ``n`` (PyTorch's ``ldexp`` takes one,
    NumPy's refuses it) gives ``x * exp2(n)``, differentiable in both."""
    exponent = raw(n)
    if isinstance(exponent, float):  # (a Python float keeps x's dtype)
        return elementwise.multiply(x, 2.0**exponent)
    if getattr(exponent, "dtype", np.dtype(int)).kind in "fc":
        return elementwise.multiply(x, elementwise.exp2(n))
    return _ldexp(x, exponent)


@implements(np.frexp)
def frexp(x: Any) -> Any:
    """``(mantissa, exponent)`` with x = mantissa * 2**exponent; the mantissa is x * 2**-exponent, with derivative
    2**-exponent (the exponent, an integer, is constant between powers of two)."""
    exponent = np.frexp(raw(x))[1]
    return _ldexp(x, -exponent), exponent


@implements(np.unwrap)
def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: float = 2 * _PI) -> Any:
    """``p`` with jumps larger than ``discont`` replaced by their complement modulo ``period``: ``p`` plus a
    piecewise-constant correction, so its derivative is the identity (as JAX's)."""
    values = raw(p)
    correction = np.unwrap(values, discont=discont, axis=axis, period=period) - values
    return elementwise.add(p, correction)


def _first_wins(x: Any, y: Any, larger: bool) -> Any:
    # PyTorch's fmax/fmin: x where it wins or ties (or y is NaN), else y; the gradient follows the pick
    xv, yv = raw(x), raw(y)
    with np.errstate(invalid="ignore"):  # (a NaN compares False, as meant; complex NaNs also warn)
        keep = ((xv >= yv) if larger else (xv <= yv)) | np.isnan(yv)
    return elementwise.where(keep, x, y)


@implements(np.fmax)
def fmax(x: Any, y: Any) -> Any:
    """Elementwise max ignoring NaNs (a NaN loses to a number and gets no gradient); at a tie ``x`` takes the
    gradient, as PyTorch's ``fmax``."""
    return _first_wins(x, y, True)


@implements(np.fmin)
def fmin(x: Any, y: Any) -> Any:
    """Elementwise min ignoring NaNs (a NaN loses to a number and gets no gradient); at a tie ``x`` takes the
    gradient, as PyTorch's ``fmin``."""
    return _first_wins(x, y, False)


_LN2 = float(np.log(2.0))


@implements(np.logaddexp2)
def logaddexp2(x: Any, y: Any) -> Any:
    """log2(2**x + 2**y), stably."""
    return elementwise.logaddexp(elementwise.multiply(x, _LN2), elementwise.multiply(y, _LN2)) / _LN2


@implements(np.deg2rad, np.radians)
def deg2rad(x: Any) -> Any:
    """Degrees to radians (x * pi / 180)."""
    return elementwise.multiply(x, _PI / 180)


radians = deg2rad


@implements(np.rad2deg, np.degrees)
def rad2deg(x: Any) -> Any:
    """Radians to degrees (x * 180 / pi)."""
    return elementwise.multiply(x, 180 / _PI)


degrees = rad2deg


@implements(np.float_power)
def float_power(x: Any, y: Any) -> Any:
    """x ** y computed in float64 (at least)."""
    return elementwise.power(_to_float64(x), _to_float64(y))


def _to_float64(x: Any) -> Any:
    dtype = np.result_type(raw(x), np.float64)
    if hasattr(x, "_requires_grad"):
        return x if x._data.dtype == dtype else astype(x, dtype)
    return as_array(x, dtype=dtype)


@implements(np.fabs)
def fabs(x: Any) -> Any:
    """|x| for real numbers; derivative sign(x), 0 at 0."""
    return elementwise.abs(x)


@implements(np.copysign)
def copysign(x: Any, y: Any) -> Any:
    """|x| with the sign of ``y``; differentiable in ``x`` only (the sign of y is a constant)."""
    s = np.where(np.signbit(raw(y)), -1.0, 1.0)
    # PyTorch's result dtype: that of x and y promoted (a 0-d y counts as a 0-d Tensor), float32 for integers
    of_x, of_y = np.result_type(raw(x)), raw(y).dtype if isinstance(y, (Tensor, np.ndarray)) else np.dtype(np.float32)
    floats = [d for d in (of_x, of_y) if d.kind in "fc"]
    target = np.result_type(*floats) if floats else np.dtype(np.float32)
    given = np.ndim(s) or isinstance(y, (Tensor, np.ndarray))
    if given and isinstance(x, Tensor) and isinstance(y, (Tensor, np.ndarray)) and not numpy_methods():
        target = result_dtype([raw(x), raw(y)])
        target = target if target.kind in "fc" else np.dtype(np.float32)
    sign_of_y = s.astype(target) if given else float(s)
    return elementwise.multiply(elementwise.abs(x), sign_of_y)


def _integer_divisor(name: str, x: Any, y: Any) -> None:
    """PyTorch's integer ``//``, ``%`` and ``fmod`` raise on a zero divisor, where NumPy's give 0 (silently wrong):
    so do a Tensor's (outside JAX-style use). On a device the check is answered with the next read."""
    yr = raw(y)
    if not (isinstance(x, Tensor) or isinstance(y, Tensor)) or numpy_methods() or _any_float(x, y):
        return

    def error() -> IntegerDivisionByZero:
        return IntegerDivisionByZero(
            f"{name}: integer division by zero (PyTorch raises ZeroDivisionError too); divide floats for inf or nan, "
            "or replace the zero divisors first (cr.where(y == 0, 1, y))")

    if yr.__class__ in OFF_HOST:
        check_later(kernel(yr, "count_zeros", lambda xp, special: lambda v: xp.sum(v == 0))(yr), error)
    elif (np.asarray(yr) == 0).any():
        raise error()


@op(numpy=(np.remainder, np.mod), cases="none", method={
    "__mod__": None, "__rmod__": None,
    "__divmod__": lambda self, other: (floor_divide(self, other), mod(self, other))})
def mod(x: Any, y: Any) -> Any:
    """x - floor(x / y) * y, the sign of ``y`` (Python's %); derivatives 1 and -floor(x / y)."""
    _integer_divisor("remainder", x, y)
    return _exact(elementwise.subtract(x, elementwise.multiply(_const(np.floor_divide, x, y), y)), np.remainder, x, y)


remainder = mod


@implements(np.fmod)
def fmod(x: Any, y: Any) -> Any:
    """x - trunc(x / y) * y, the sign of ``x`` (C's fmod); derivatives 1 and -trunc(x / y) (PyTorch's: the quotient
    as rounded)."""
    _integer_divisor("fmod", x, y)
    return _exact(elementwise.subtract(x, elementwise.multiply(_const(lambda a, b: np.trunc(a / b), x, y), y)),
                  np.fmod, x, y)


def _exact(formula: Any, fn: Any, x: Any, y: Any) -> Any:
    """``formula`` (whose derivatives are the op's) moved by a constant onto NumPy's exact ``fn(x, y)``, as
    PyTorch's values: with the rounded quotient, fmod(0.5, 0.1) came out 0 where it is 0.0999... (0.1 is a little
    more than a tenth, so 0.5 holds it 4 times)."""
    return elementwise.add(formula, _const(fn, x, y) - raw(formula))


def _const(fn: Any, *args: Any) -> Any:
    """``fn`` of the values, in PyTorch's result dtype when a Tensor is among them (``int_tensor % 2.5`` is
    float32, ops/promoting.py): NumPy's float64 quotient would otherwise decide the dtype of the result."""
    out = fn(*[raw(a) for a in args])
    if any(isinstance(a, Tensor) for a in args) and not numpy_methods():
        dtype = result_dtype(list(args))
        # (inside vmap the values are batched, and so is out: a value without NumPy's copy=)
        out = out.astype(dtype, copy=False) if isinstance(out, np.ndarray) else out.astype(dtype)
    return out


@op(numpy=np.floor_divide, method=("__floordiv__", "__rfloordiv__"), cases="none")
def floor_divide(x: Any, y: Any) -> Any:
    """floor(x / y); piecewise constant, zero gradient."""
    if _any_float(x, y):
        return elementwise.floor(elementwise.divide(x, y))
    _integer_divisor("floor_divide", x, y)
    return wrap_like(_const(np.floor_divide, x, y), x, y)  # (integers: in PyTorch's dtype, int8 // 0-d int64 is int8)


def _any_float(*xs: Any) -> bool:
    return any(np.result_type(raw(x)).kind in "fc" for x in xs)


@implements(np.heaviside)
def heaviside(x: Any, h0: Any) -> Any:
    """0 for x < 0, ``h0`` at 0, 1 for x > 0; zero gradient in x, and a Tensor ``h0`` gets its own."""
    steps = elementwise.multiply(elementwise.sign(x), 0.0) + np.heaviside(raw(x), raw(h0))
    if not isinstance(h0, Tensor):
        return steps
    at_zero = raw(x) == 0
    # h0 where x == 0, traced
    return elementwise.where(at_zero, elementwise.add(h0, elementwise.multiply(steps, 0.0)), steps)


# -- complex parts: linear over the reals, not holomorphic ------------------------------------
# Reverse rules are transposes for the pairing real(g * t) (JAX's convention): real's is
# g itself, imag's is -1j * g, conj's is conj(g).
def _is_complex(x: Any) -> bool:
    return is_complex(x)


# Each is linear over the reals: declared by its transpose, the forward rule is the op on the tangent.
_real = linear_primitive("real", np.real, lambda g, ans, x: g)
_imag = linear_primitive("imag", np.imag, lambda g, ans, x: -1j * g)
_conj = linear_primitive("conjugate", np.conjugate, "same")


@op(primitive=_conj, kind="linear", numpy=np.conjugate, method=("conj", "conjugate"), cases="none")
def conjugate(x: Any) -> Any:
    """The complex conjugate (the identity on real tensors).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(lambda z: np.real(np.conj(z) * 1j))(1.0 + 2.0j)  # real(i conj z) = y
        -1j
    """
    return _conj(x) if _is_complex(x) else x


conj = conjugate


@op(primitive=_real, kind="linear", numpy=np.real, cases="none")
def real(x: Any) -> Any:
    """The real part (the identity on real tensors)."""
    return _real(x) if _is_complex(x) else x


@op(primitive=_imag, kind="linear", numpy=np.imag, cases="none")
def imag(x: Any) -> Any:
    """The imaginary part: zeros, with zero gradient, on real tensors."""
    return _imag(x) if _is_complex(x) else elementwise.multiply(x, 0.0)


@implements(np.angle)
def angle(z: Any, deg: bool = False) -> Any:
    """The argument of a complex number, arctan2(imag, real) (0 or pi on real numbers, zero gradient).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(lambda z: np.angle(z))(1.0 + 1.0j)  # d/dx - i d/dy of atan2(y, x)
        (-0.5-0.5j)
    """
    if _is_complex(z):
        out = elementwise.arctan2(imag(z), real(z))
    else:
        out = elementwise.add(elementwise.multiply(z, 0.0), np.angle(raw(z)))
    return rad2deg(out) if deg else out


@implements(np.real_if_close)
def real_if_close(a: Any, tol: float = 100) -> Any:
    """The real part when every imaginary part is within ``tol`` machine epsilons of 0, else ``a``."""
    kept = np.real_if_close(raw(a), tol=tol)
    return real(a) if _is_complex(a) and not np.iscomplexobj(kept) else a
