"""Elementwise ops: arithmetic, powers and the usual functions.

Each op is one line: its NumPy function and its local derivative(s) ``d(ans, *args)``;
both the reverse and the forward rule follow from that (see ``_define.elementwise``).

Ties and kinks follow PyTorch: ``relu`` and ``abs`` have derivative 0 at 0; ``maximum``
and ``minimum`` share the gradient equally between equal arguments (so the derivative of
``maximum(x, x)`` is 1); ``clip`` passes the gradient at its bounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff.primitive import Primitive, apply  # public functions call apply directly: one frame less
from ._define import elementwise, implements, is_complex, raw, wrap_like
from .gauss import erf as _gauss_erf


def _ones(ans: Any, *args: Any) -> Any:
    return 1.0


# -- arithmetic (linear parts written out so no multiplication by 1 is done) ----------------
_add = Primitive("add", np.add)
_add.defvjp(lambda g, ans, x, y: g, lambda g, ans, x, y: g)
_add.defjvp(lambda t, ans, x, y: t, lambda t, ans, x, y: t)

_sub = Primitive("subtract", np.subtract)
_sub.defvjp(lambda g, ans, x, y: g, lambda g, ans, x, y: -g)
_sub.defjvp(lambda t, ans, x, y: t, lambda t, ans, x, y: -t)

_mul = Primitive("multiply", np.multiply)
_mul.defvjp(lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)
_mul.defjvp(lambda t, ans, x, y: t * y, lambda t, ans, x, y: x * t)

_div = Primitive("divide", np.true_divide)
_div.defvjp(lambda g, ans, x, y: g / y, lambda g, ans, x, y: -g * ans / y)
_div.defjvp(lambda t, ans, x, y: t / y, lambda t, ans, x, y: -t * ans / y)

_neg = Primitive("negative", np.negative)
_neg.defvjp(lambda g, ans, x: -g)
_neg.defjvp(lambda t, ans, x: -t)


def _pow_dx(ans: Any, x: Any, y: Any) -> Any:
    if isinstance(y, (int, float)) and y == 0:
        return 0.0
    return y * x ** (y - 1)


def _pow_dy(ans: Any, x: Any, y: Any) -> Any:
    # d/dy x**y = x**y log x; taken as 0 where x == 0 (the limit along y > 0)
    return ans * np.log(np.where(x == 0, 1.0, x))


_pow = elementwise("power", np.power, _pow_dx, _pow_dy)

# What the reverse rules read (the graph keeps only that; see Primitive.declare_reads)
_add.declare_reads(())
_sub.declare_reads(())
_neg.declare_reads(())
_mul.declare_reads((0, 1))
_div.declare_reads((1, "ans"))


@implements(np.add)
def add(x: Any, y: Any) -> Any:
    """x + y, broadcasting."""
    return apply(_add, (x, y), None)


@implements(np.subtract)
def subtract(x: Any, y: Any) -> Any:
    """x - y, broadcasting."""
    return apply(_sub, (x, y), None)


@implements(np.multiply)
def multiply(x: Any, y: Any) -> Any:
    """x * y, broadcasting."""
    return apply(_mul, (x, y), None)


@implements(np.true_divide, np.divide)
def divide(x: Any, y: Any) -> Any:
    """x / y, broadcasting."""
    return apply(_div, (x, y), None)


@implements(np.negative)
def negative(x: Any) -> Any:
    """-x."""
    return apply(_neg, (x,), None)


@implements(np.positive)
def positive(x: Any) -> Any:
    """+x (the same tensor)."""
    return x


@implements(np.power)
def power(x: Any, y: Any) -> Any:
    """x ** y; differentiable in both x and y."""
    return apply(_pow, (x, y), None)


# -- functions of one argument --------------------------------------------------------------
_exp = elementwise("exp", np.exp, lambda ans, x: ans)
_expm1 = elementwise("expm1", np.expm1, lambda ans, x: ans + 1)
_exp2 = elementwise("exp2", np.exp2, lambda ans, x: ans * np.log(2.0))
_log = elementwise("log", np.log, lambda ans, x: 1 / x)
_log1p = elementwise("log1p", np.log1p, lambda ans, x: 1 / (1 + x))
_log2 = elementwise("log2", np.log2, lambda ans, x: 1 / (x * np.log(2.0)))
_log10 = elementwise("log10", np.log10, lambda ans, x: 1 / (x * np.log(10.0)))
_sqrt = elementwise("sqrt", np.sqrt, lambda ans, x: 0.5 / ans)
_cbrt = elementwise("cbrt", np.cbrt, lambda ans, x: 1 / (3 * ans**2))
_square = elementwise("square", np.square, lambda ans, x: 2 * x)
_reciprocal = elementwise("reciprocal", np.reciprocal, lambda ans, x: -(ans**2))
_sin = elementwise("sin", np.sin, lambda ans, x: np.cos(x))
_cos = elementwise("cos", np.cos, lambda ans, x: -np.sin(x))
_tan = elementwise("tan", np.tan, lambda ans, x: 1 + ans**2)
_arcsin = elementwise("arcsin", np.arcsin, lambda ans, x: 1 / np.sqrt(1 - x**2))
_arccos = elementwise("arccos", np.arccos, lambda ans, x: -1 / np.sqrt(1 - x**2))
_arctan = elementwise("arctan", np.arctan, lambda ans, x: 1 / (1 + x**2))
_sinh = elementwise("sinh", np.sinh, lambda ans, x: np.cosh(x))
_cosh = elementwise("cosh", np.cosh, lambda ans, x: np.sinh(x))
_tanh = elementwise("tanh", np.tanh, lambda ans, x: 1 - ans**2)
_arcsinh = elementwise("arcsinh", np.arcsinh, lambda ans, x: 1 / np.sqrt(x**2 + 1))
_arccosh = elementwise("arccosh", np.arccosh, lambda ans, x: 1 / np.sqrt(x**2 - 1))
_arctanh = elementwise("arctanh", np.arctanh, lambda ans, x: 1 / (1 - x**2))


def _modulus_d(ans: Any, x: Any) -> Any:
    """conj(x) / |x| (0 at 0): |x| is not holomorphic, so the rules below use it differently per mode."""
    return np.conjugate(x) / np.where(raw(ans) == 0, 1.0, ans)


def _abs_vjp(g: Any, ans: Any, x: Any) -> Any:
    return g * (_modulus_d(ans, x) if is_complex(x) else np.sign(x))


def _abs_jvp(t: Any, ans: Any, x: Any) -> Any:
    return np.real(t * _modulus_d(ans, x)) if is_complex(x) else t * np.sign(x)


_abs = Primitive("abs", np.abs)
_abs.defvjp(_abs_vjp)
_abs.defjvp(_abs_jvp)


def _sigmoid_fn(x: Any) -> Any:
    # stable for large |x|: exp of a non-positive number only (complex x: the plain formula)
    if np.iscomplexobj(x):
        return 1 / (1 + np.exp(-x))
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


_sigmoid = elementwise("sigmoid", _sigmoid_fn, lambda ans, x: ans * (1 - ans))
_relu = elementwise("relu", lambda x: np.maximum(x, 0), lambda ans, x: ans > 0)  # ans > 0 exactly where x > 0
for _reads_ans in (_exp, _expm1, _tanh, _sigmoid, _relu):
    _reads_ans.declare_reads(("ans",))


@implements(np.exp)
def exp(x: Any) -> Any:
    """e ** x."""
    return apply(_exp, (x,), None)


@implements(np.expm1)
def expm1(x: Any) -> Any:
    """e ** x - 1, accurate near 0."""
    return apply(_expm1, (x,), None)


@implements(np.exp2)
def exp2(x: Any) -> Any:
    """2 ** x."""
    return apply(_exp2, (x,), None)


@implements(np.log)
def log(x: Any) -> Any:
    """Natural logarithm."""
    return apply(_log, (x,), None)


@implements(np.log1p)
def log1p(x: Any) -> Any:
    """log(1 + x), accurate near 0."""
    return apply(_log1p, (x,), None)


@implements(np.log2)
def log2(x: Any) -> Any:
    """Base-2 logarithm."""
    return apply(_log2, (x,), None)


@implements(np.log10)
def log10(x: Any) -> Any:
    """Base-10 logarithm."""
    return apply(_log10, (x,), None)


@implements(np.sqrt)
def sqrt(x: Any) -> Any:
    """Square root."""
    return apply(_sqrt, (x,), None)


@implements(np.cbrt)
def cbrt(x: Any) -> Any:
    """Cube root."""
    return apply(_cbrt, (x,), None)


@implements(np.square)
def square(x: Any) -> Any:
    """x ** 2."""
    return apply(_square, (x,), None)


@implements(np.reciprocal)
def reciprocal(x: Any) -> Any:
    """1 / x."""
    return apply(_reciprocal, (x,), None)


@implements(np.sin)
def sin(x: Any) -> Any:
    """Sine."""
    return apply(_sin, (x,), None)


@implements(np.cos)
def cos(x: Any) -> Any:
    """Cosine."""
    return apply(_cos, (x,), None)


@implements(np.tan)
def tan(x: Any) -> Any:
    """Tangent."""
    return apply(_tan, (x,), None)


@implements(np.arcsin)
def arcsin(x: Any) -> Any:
    """Inverse sine."""
    return apply(_arcsin, (x,), None)


@implements(np.arccos)
def arccos(x: Any) -> Any:
    """Inverse cosine."""
    return apply(_arccos, (x,), None)


@implements(np.arctan)
def arctan(x: Any) -> Any:
    """Inverse tangent."""
    return apply(_arctan, (x,), None)


@implements(np.sinh)
def sinh(x: Any) -> Any:
    """Hyperbolic sine."""
    return apply(_sinh, (x,), None)


@implements(np.cosh)
def cosh(x: Any) -> Any:
    """Hyperbolic cosine."""
    return apply(_cosh, (x,), None)


@implements(np.tanh)
def tanh(x: Any) -> Any:
    """Hyperbolic tangent."""
    return apply(_tanh, (x,), None)


@implements(np.arcsinh)
def arcsinh(x: Any) -> Any:
    """Inverse hyperbolic sine."""
    return apply(_arcsinh, (x,), None)


@implements(np.arccosh)
def arccosh(x: Any) -> Any:
    """Inverse hyperbolic cosine."""
    return apply(_arccosh, (x,), None)


@implements(np.arctanh)
def arctanh(x: Any) -> Any:
    """Inverse hyperbolic tangent."""
    return apply(_arctanh, (x,), None)


@implements(np.abs, np.absolute)
def abs(x: Any) -> Any:  # noqa: A001
    """|x|; derivative sign(x), 0 at 0."""
    return apply(_abs, (x,), None)


def sigmoid(x: Any) -> Any:
    """1 / (1 + e ** -x), computed stably."""
    return apply(_sigmoid, (x,), None)


def relu(x: Any) -> Any:
    """max(x, 0); derivative 0 at 0."""
    return apply(_relu, (x,), None)


# -- functions of two arguments -------------------------------------------------------------
def _pick(first: bool) -> Any:
    def d(ans: Any, x: Any, y: Any) -> Any:
        win = (x > y) if first else (y > x)
        return win + 0.5 * (x == y)

    return d


def _pick_min(first: bool) -> Any:
    def d(ans: Any, x: Any, y: Any) -> Any:
        win = (x < y) if first else (y < x)
        return win + 0.5 * (x == y)

    return d


_maximum = elementwise("maximum", np.maximum, _pick(True), _pick(False))
_minimum = elementwise("minimum", np.minimum, _pick_min(True), _pick_min(False))
_arctan2 = elementwise(
    "arctan2", np.arctan2, lambda ans, y, x: x / (x**2 + y**2), lambda ans, y, x: -y / (x**2 + y**2)
)
_hypot = elementwise("hypot", np.hypot, lambda ans, x, y: x / ans, lambda ans, x, y: y / ans)
_logaddexp = elementwise(
    "logaddexp",
    np.logaddexp,
    lambda ans, x, y: np.exp(x - ans),
    lambda ans, x, y: np.exp(y - ans),
)


@implements(np.maximum)
def maximum(x: Any, y: Any) -> Any:
    """Elementwise max; ties share the gradient equally."""
    return apply(_maximum, (x, y), None)


@implements(np.minimum)
def minimum(x: Any, y: Any) -> Any:
    """Elementwise min; ties share the gradient equally."""
    return apply(_minimum, (x, y), None)


@implements(np.arctan2)
def arctan2(y: Any, x: Any) -> Any:
    """Angle of the point (x, y)."""
    return apply(_arctan2, (y, x), None)


@implements(np.hypot)
def hypot(x: Any, y: Any) -> Any:
    """sqrt(x**2 + y**2)."""
    return apply(_hypot, (x, y), None)


@implements(np.logaddexp)
def logaddexp(x: Any, y: Any) -> Any:
    """log(exp(x) + exp(y)), stably."""
    return apply(_logaddexp, (x, y), None)


# -- selection ------------------------------------------------------------------------------
_where = Primitive("where", np.where)
_where.defvjp(
    None,
    lambda g, ans, c, x, y: np.where(c, g, 0.0),
    lambda g, ans, c, x, y: np.where(c, 0.0, g),
)
_where.defjvp(
    None,
    lambda t, ans, c, x, y: np.where(c, t, 0.0),
    lambda t, ans, c, x, y: np.where(c, 0.0, t),
)


@implements(np.where)
def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``x`` where ``condition`` holds, else ``y`` (broadcasting); the gradient goes to the chosen one."""
    if x is None and y is None:
        return np.nonzero(raw(condition))
    if x is None or y is None:
        raise TypeError("where: arguments 'x' and 'y' must both be given (numbers or arrays), or neither")
    return _where(raw(condition), x, y)


def _clip_fn(x: Any, lo: Any, hi: Any) -> Any:
    return np.clip(x, lo, hi)


def _clip_d(ans: Any, x: Any, lo: Any, hi: Any) -> Any:
    inside = np.ones(np.shape(x), dtype=bool)
    if lo is not None:
        inside = inside & (x >= lo)
    if hi is not None:
        inside = inside & (x <= hi)
    return inside


def _clip_dlo(x: Any, lo: Any, hi: Any) -> Any:
    below = x < lo  # the value is the lower bound there (unless the bounds cross: then it is hi)
    return below if hi is None else below & (lo <= hi)


def _clip_dhi(x: Any, lo: Any, hi: Any) -> Any:
    return (x if lo is None else np.maximum(x, lo)) > hi  # NumPy: minimum(maximum(x, lo), hi)


# x gets the gradient inside and at the bounds; a Tensor bound gets it where it is the value.
_clip = Primitive("clip", _clip_fn)
_clip.defvjp(
    lambda g, ans, x, lo, hi: g * _clip_d(ans, raw(x), raw(lo), raw(hi)),
    lambda g, ans, x, lo, hi: g * _clip_dlo(raw(x), raw(lo), raw(hi)),
    lambda g, ans, x, lo, hi: g * _clip_dhi(raw(x), raw(lo), raw(hi)),
)
_clip.defjvp(
    lambda t, ans, x, lo, hi: t * _clip_d(ans, raw(x), raw(lo), raw(hi)),
    lambda t, ans, x, lo, hi: t * _clip_dlo(raw(x), raw(lo), raw(hi)),
    lambda t, ans, x, lo, hi: t * _clip_dhi(raw(x), raw(lo), raw(hi)),
)


@implements(np.clip)
def clip(x: Any, a_min: Any = None, a_max: Any = None) -> Any:
    """Limit values to [a_min, a_max]; the gradient passes inside and at the bounds."""
    return _clip(x, a_min, a_max)


# -- piecewise constant: zero derivative ----------------------------------------------------
def _constant(name: str, fn: Any) -> Primitive:
    prim = Primitive(name, fn)
    prim.defvjp(lambda g, ans, x: np.zeros_like(raw(x)))
    prim.defjvp(lambda t, ans, x: np.zeros_like(raw(ans)))
    return prim


_sign = _constant("sign", np.sign)
_floor = _constant("floor", np.floor)
_ceil = _constant("ceil", np.ceil)
_round = _constant("round", np.round)
_trunc = _constant("trunc", np.trunc)


@implements(np.sign)
def sign(x: Any) -> Any:
    """-1, 0 or 1; zero gradient. For complex ``x``, x / |x| (0 at 0), which is not constant.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.jvp(np.sign, (1j,), (1.0,))  # moving right from i turns the direction clockwise
        (1j, (1+0j))
    """
    if is_complex(x):
        zero = raw(x) == 0
        return where(zero, 0.0, divide(x, abs(where(zero, 1.0, x))))
    return apply(_sign, (x,), None)


@implements(np.floor)
def floor(x: Any) -> Any:
    """Round down; zero gradient."""
    return apply(_floor, (x,), None)


@implements(np.ceil)
def ceil(x: Any) -> Any:
    """Round up; zero gradient."""
    return apply(_ceil, (x,), None)


@implements(np.round, np.around, np.rint)
def round(x: Any, decimals: int = 0) -> Any:  # noqa: A001
    """Round to nearest; zero gradient."""
    return _round(x) if decimals == 0 else _constant_op(np.round, x, decimals)


def _constant_op(fn: Any, x: Any, *args: Any) -> Any:
    return wrap_like(fn(raw(x), *args), x)


@implements(np.trunc, np.fix)
def trunc(x: Any) -> Any:
    """Round toward zero; zero gradient."""
    return apply(_trunc, (x,), None)


# -- comparisons and predicates: not differentiable, return boolean arrays ------------------
def _boolean(np_fn: Any) -> Any:
    def fn(*args: Any) -> Any:
        return wrap_like(np_fn(*[raw(a) for a in args]), *args)

    fn.__name__ = np_fn.__name__
    fn.__doc__ = f"numpy.{np_fn.__name__} on the values (not differentiable)."
    return implements(np_fn, differentiable=False)(fn)


equal = _boolean(np.equal)
not_equal = _boolean(np.not_equal)
less = _boolean(np.less)
less_equal = _boolean(np.less_equal)
greater = _boolean(np.greater)
greater_equal = _boolean(np.greater_equal)
isfinite = _boolean(np.isfinite)
isnan = _boolean(np.isnan)
isinf = _boolean(np.isinf)
logical_and = _boolean(np.logical_and)
logical_or = _boolean(np.logical_or)
logical_not = _boolean(np.logical_not)
logical_xor = _boolean(np.logical_xor)
signbit = _boolean(np.signbit)


# -- the error function: vectorised NumPy (ops/gauss.py), no SciPy, no per-entry Python ----------
def _erf_fn(x: Any) -> Any:
    if not np.iscomplexobj(x):
        return _gauss_erf(x)
    try:  # the series above is for real numbers; SciPy's erf takes complex ones
        from scipy.special import erf as scipy_erf
    except ImportError:  # pragma: no cover - exercised without SciPy
        raise TypeError("erf: complex inputs need SciPy (pip install scipy)") from None
    return scipy_erf(x)


_erf = elementwise("erf", _erf_fn, lambda ans, x: (2 / np.sqrt(np.pi)) * np.exp(-(x**2)))


def erf(x: Any) -> Any:
    """The error function 2/sqrt(pi) * integral_0^x exp(-t**2) dt."""
    return apply(_erf, (x,), None)
