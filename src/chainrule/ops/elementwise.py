"""Elementwise ops: arithmetic, powers and the usual functions.

Each op is one declaration (``ops/declare.py``): its NumPy function, its local derivative(s)
``d(ans, *args)`` (both the reverse and the forward rule follow from that), the NumPy
callables it answers to, its Tensor methods, the domain its tests draw from and its PyTorch twin.

Ties and kinks follow PyTorch: ``relu`` and ``abs`` have derivative 0 at 0; ``maximum``
and ``minimum`` share the gradient equally between equal arguments (so the derivative of
``maximum(x, x)`` is 1); ``clip`` passes the gradient at its bounds. At a NaN input PyTorch's rules
zero a gradient only where a comparison holds, which it never does with NaN: ``relu``'s derivative
is 1 there and ``maximum``/``minimum`` give the whole gradient to both sides, while ``clip`` (which
keeps it where the input is within the bounds) gives 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff.batch_levels import is_value
from ..autodiff.inlined import Inlined
from ..autodiff.primitive import REGISTRY, Primitive, apply
from ..core.device import OFF_HOST
from ..core.sweep import passthrough
from ..scalar import rules as scalar_rules
from ._define import is_complex, raw, wrap_like
from .declare import declare_function, elementwise_op, linear_op, primitive_op
from .selection_rules import selected, selects
from .special_functions.device import SPECIAL
from .special_functions.gauss import erf as _gauss_erf

# -- arithmetic (linear parts written out, so no multiplication by 1 is done; ``passthrough``: the sweep skips the call)
add = primitive_op(
    "add", np.add, (passthrough, passthrough), (lambda t, ans, x, y: t, lambda t, ans, x, y: t),
    reads=(), keep_constants=False, doc="x + y, broadcasting.", numpy=np.add, method=("__add__", "__radd__"),
    domain="real",
    torch="torch.add",
)
subtract = primitive_op(
    "subtract", np.subtract, (passthrough, lambda g, ans, x, y: -g),
    (lambda t, ans, x, y: t, lambda t, ans, x, y: -t),
    reads=(), keep_constants=False, doc="x - y, broadcasting.", numpy=np.subtract, method=("__sub__", "__rsub__"),
    domain="real",
    torch="torch.subtract",
)
multiply = primitive_op(
    "multiply", np.multiply, (lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x),
    (lambda t, ans, x, y: t * y, lambda t, ans, x, y: x * t),
    reads=(0, 1), doc="x * y, broadcasting.", numpy=np.multiply, method=("__mul__", "__rmul__"), domain="real",
    torch="torch.multiply",
)
divide = primitive_op(
    "divide", np.true_divide, (lambda g, ans, x, y: g / y, lambda g, ans, x, y: -g * ans / y),
    (lambda t, ans, x, y: t / y, lambda t, ans, x, y: -t * ans / y),
    reads=(1, "ans"),
    doc="x / y, broadcasting.", numpy=(np.true_divide, np.divide), method=("__truediv__", "__rtruediv__"),
    domain=("real", "nonzero"), torch="torch.divide",
)
negative = linear_op("negative", np.negative, "same", doc="-x.", numpy=np.negative, method="__neg__", domain="real",
                     torch="torch.negative", scalar=scalar_rules.NEG)


def positive(x: Any) -> Any:
    """+x (the same tensor)."""
    return x


declare_function(positive, numpy=np.positive, method="__pos__", cases="none")


def _pow_dx(ans: Any, x: Any, y: Any) -> Any:
    if isinstance(y, (int, float)) and y == 0:
        return 0.0
    if isinstance(y, (int, float)) and y == 1:  # 1, not 1 * x ** 0: that has a derivative 0 * x ** -1, so an
        return 1.0  # infinite cotangent (x ** -2 + x ** 1 at x = 0) made a NaN where PyTorch has -inf
    if isinstance(y, (int, float)):
        return y * x ** (y - 1)
    # where y == 0 the derivative is 0 (as PyTorch and JAX), not 0 * 0 ** -1 = nan at x == 0; the base is
    # replaced only there (elsewhere d/dy of this is x ** -1), not the result masked, so higher orders stay finite
    return y * np.where((y == 0) & (x == 0), 1.0, x) ** (y - 1)


def _pow_dy(ans: Any, x: Any, y: Any) -> Any:
    # d/dy x**y = x**y log x; taken as 0 where x == 0 and y >= 0 (the limit along y > 0), and -inf where x == 0 and
    # y < 0 (inf * log 0, PyTorch's value), not inf * 0 = nan
    return ans * np.log(np.where((x == 0) & (y >= 0), 1.0, x))


power = elementwise_op("power", np.power, _pow_dx, _pow_dy, doc="x ** y; differentiable in both x and y.",
                       numpy=np.power, method=("__pow__", "__rpow__", "pow"), domain=("positive", "real"),
                       torch="torch.pow")

# -- functions of one argument --------------------------------------------------------------
_LN2, _LN10 = float(np.log(2.0)), float(np.log(10.0))
exp = elementwise_op("exp", np.exp, lambda ans, x: ans, reads=("ans",),
                     doc="e ** x.", numpy=np.exp, method=True, domain="real",
                     torch="torch.exp", scalar=scalar_rules.EXP)
expm1 = elementwise_op("expm1", np.expm1, lambda ans, x: ans + 1, reads=("ans",), doc="e ** x - 1, accurate near 0.",
                       numpy=np.expm1, method=True, domain="real", torch="torch.expm1")
exp2 = elementwise_op("exp2", np.exp2, lambda ans, x: ans * _LN2, doc="2 ** x.", numpy=np.exp2, domain="real",
                      torch="torch.exp2")
log = elementwise_op("log", np.log, lambda ans, x: 1 / x, doc="Natural logarithm.", numpy=np.log, method=True,
                     domain="positive", torch="torch.log", scalar=scalar_rules.LOG)
log1p = elementwise_op("log1p", np.log1p, lambda ans, x: 1 / (1 + x), doc="log(1 + x), accurate near 0.",
                       numpy=np.log1p, method=True, domain="(-1,3)", torch="torch.log1p")
log2 = elementwise_op("log2", np.log2, lambda ans, x: 1 / (x * _LN2), doc="Base-2 logarithm.", numpy=np.log2,
                      domain="positive", torch="torch.log2")
log10 = elementwise_op("log10", np.log10, lambda ans, x: 1 / (x * _LN10), doc="Base-10 logarithm.", numpy=np.log10,
                       domain="positive", torch="torch.log10")
sqrt = elementwise_op("sqrt", np.sqrt, lambda ans, x: 0.5 / ans, doc="Square root.", numpy=np.sqrt, method=True,
                      domain="positive", torch="torch.sqrt", scalar=scalar_rules.SQRT)
cbrt = elementwise_op("cbrt", np.cbrt, lambda ans, x: 1 / (3 * ans**2), doc="Cube root.", numpy=np.cbrt,
                      domain="nonzero")
def _square_fn(x: Any) -> Any:
    if x.__class__ is np.ndarray and x.dtype == np.bool_:
        return x.astype(np.int64)  # PyTorch's square of bools counts in int64 (NumPy's: int8)
    return np.square(x)


square = elementwise_op("square", _square_fn, lambda ans, x: 2 * x, doc="x ** 2.", numpy=np.square, method=True,
                        domain="real", torch="torch.square")
reciprocal = elementwise_op("reciprocal", np.reciprocal, lambda ans, x: -(ans**2), doc="1 / x.",
                            numpy=np.reciprocal, domain="nonzero", torch="torch.reciprocal")
sin = elementwise_op("sin", np.sin, lambda ans, x: np.cos(x), doc="Sine.", numpy=np.sin, method=True,
                     domain="real", torch="torch.sin", scalar=scalar_rules.SIN)
cos = elementwise_op("cos", np.cos, lambda ans, x: -np.sin(x), doc="Cosine.", numpy=np.cos, method=True,
                     domain="real", torch="torch.cos", scalar=scalar_rules.COS)
tan = elementwise_op("tan", np.tan, lambda ans, x: 1 + ans**2, doc="Tangent.", numpy=np.tan, method=True,
                     domain="(-1.5,1.5)", torch="torch.tan", scalar=scalar_rules.TAN)
arcsin = elementwise_op("arcsin", np.arcsin, lambda ans, x: 1 / np.sqrt(1 - x**2), doc="Inverse sine.",
                        numpy=np.arcsin, domain="(-1,1)", torch="torch.arcsin")
arccos = elementwise_op("arccos", np.arccos, lambda ans, x: -1 / np.sqrt(1 - x**2), doc="Inverse cosine.",
                        numpy=np.arccos, domain="(-1,1)", torch="torch.arccos")
arctan = elementwise_op("arctan", np.arctan, lambda ans, x: 1 / (1 + x**2), doc="Inverse tangent.",
                        numpy=np.arctan, domain="real", torch="torch.arctan")
sinh = elementwise_op("sinh", np.sinh, lambda ans, x: np.cosh(x), doc="Hyperbolic sine.", numpy=np.sinh,
                      domain="real", torch="torch.sinh")
cosh = elementwise_op("cosh", np.cosh, lambda ans, x: np.sinh(x), doc="Hyperbolic cosine.", numpy=np.cosh,
                      domain="real", torch="torch.cosh")
class _Ones(dict):
    """0-d ones by dtype: ``one - a`` costs NumPy ~0.1 us less than ``1.0 - a`` on a small array (no Python
    float to convert) and gives the same bits and dtype (1 is exact in every inexact dtype)."""

    def __missing__(self, dtype: Any) -> np.ndarray:
        one = self[dtype] = np.ones((), dtype)
        return one


_ONE = _Ones()


def _tanh_vjp(g: Any, ans: Any, x: Any) -> Any:
    """tanh's reverse rule, ``g * d(ans, x)`` in one call (a 0-d one of ans's dtype for a first-order pass)."""
    return g * ((_ONE[ans.dtype] if ans.__class__ is np.ndarray else 1.0) - ans**2)


def _sigmoid_vjp(g: Any, ans: Any, x: Any) -> Any:
    """sigmoid's reverse rule, ``g * d(ans, x)`` in one call (as tanh's)."""
    return g * (ans * ((_ONE[ans.dtype] if ans.__class__ is np.ndarray else 1.0) - ans))


tanh = elementwise_op("tanh", np.tanh, lambda ans, x: 1.0 - ans**2, reads=("ans",),  # 1.0: NumPy converts it faster
                      vjp=_tanh_vjp, doc="Hyperbolic tangent.", numpy=np.tanh,
                      method=True, namespaces=("ops", "nn.functional"), domain="real", torch="torch.tanh",
                      scalar=scalar_rules.TANH)
arcsinh = elementwise_op("arcsinh", np.arcsinh, lambda ans, x: 1 / np.sqrt(x**2 + 1),
                         doc="Inverse hyperbolic sine.", numpy=np.arcsinh, domain="real", torch="torch.arcsinh")
arccosh = elementwise_op("arccosh", np.arccosh, lambda ans, x: 1 / np.sqrt(x**2 - 1),
                         doc="Inverse hyperbolic cosine.", numpy=np.arccosh, domain="(1,3)", torch="torch.arccosh")
arctanh = elementwise_op("arctanh", np.arctanh, lambda ans, x: 1 / (1 - x**2), doc="Inverse hyperbolic tangent.",
                         numpy=np.arctanh, domain="(-1,1)", torch="torch.arctanh")


def _modulus_d(ans: Any, x: Any) -> Any:
    """conj(x) / |x| (0 at 0): |x| is not holomorphic, so the rules below use it differently per mode. At 0 it is
    0 with derivative 0, as PyTorch's sgn (the derivative of conj(x) / 1 there was not: a second derivative of
    |z| at z = 0 came out nonzero); the divisor 1 there keeps the masked branch finite."""
    zero = raw(ans) == 0
    return np.where(zero, 0.0, np.conjugate(x) / np.where(zero, 1.0, ans))


def _sign0(x: Any) -> Any:
    # sign(x) with 0 at NaN (PyTorch's sgn): a NaN entry of |x| passes no NaN back to the others
    s = np.sign(x)
    bad = np.isnan(raw(x))
    return np.where(bad, 0.0, s) if bad.any() else s


abs = primitive_op(  # noqa: A001
    "abs", np.abs, (lambda g, ans, x: g * (_modulus_d(ans, x) if is_complex(x) else _sign0(x)),),
    (lambda t, ans, x: np.real(t * _modulus_d(ans, x)) if is_complex(x) else t * _sign0(x),),
    doc="|x|; derivative sign(x), 0 at 0 and at NaN.", numpy=(np.abs, np.absolute), method=("__abs__", "abs"),
    domain="nonzero", torch="torch.abs", scalar=scalar_rules.ABS,
)


def _sigmoid_fn(x: Any) -> Any:
    # stable for large |x|: exp of a non-positive number only (complex x: the plain formula)
    if np.iscomplexobj(x):
        return 1 / (1 + np.exp(-x))
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


sigmoid = elementwise_op("sigmoid", _sigmoid_fn, lambda ans, x: ans * (1.0 - ans), vjp=_sigmoid_vjp,
                         reads=("ans",),
                         doc="1 / (1 + e ** -x), computed stably.", method=True, namespaces=("ops", "nn.functional"),
                         domain="real", torch="torch.sigmoid", scalar=scalar_rules.SIGMOID)
# ans <= 0 exactly where x <= 0; selected (not multiplied): x <= 0 gets 0 even from an infinite gradient. A NaN
# input passes its gradient (PyTorch's rule: the gradient is zeroed where ans <= 0, which NaN is not)
relu = elementwise_op("relu", lambda x: np.maximum(x, 0), selects(lambda ans, x: ~(ans <= 0)),
                      reads=("ans",), vjp=lambda g, ans, x: selected(g, ~(ans <= 0)),
                      doc="max(x, 0); derivative 0 at 0, and 1 at NaN (as PyTorch).",
                      method=True, namespaces=("ops", "nn.functional"), domain="nonzero", torch="torch.relu",
                      scalar=scalar_rules.RELU)


def _relu_inline(ans: Any, args: list, kw: dict) -> Inlined | None:
    """For a jit replay: relu's function and reverse rule on a float array (see ``autodiff.inlined``)."""
    x = args[0]
    if kw or type(x) is not np.ndarray or type(ans) is not np.ndarray or x.ndim == 0 or x.dtype.kind != "f":
        return None
    # what selected() does: the product for a finite gradient, else where()
    backward = ["t = {g} * ~({out} <= 0) if np.isfinite({g}).all() else np.where({out} <= 0, 0.0, {g})"]
    return Inlined(forward=["{out} = np.maximum({a0}, 0)"], backward={0: backward})


REGISTRY["relu"].inline = _relu_inline
# softplus, with relu's parity (function, method, nn.functional, Scalar, docs, tests): this one statement
softplus = elementwise_op("softplus", lambda x: np.logaddexp(x, 0.0), lambda ans, x: sigmoid(x),
                          doc="log(1 + e ** x), computed stably.", method=True, namespaces=("ops", "nn.functional"),
                          domain="real", torch="torch.nn.functional.softplus",
                          scalar=lambda x, y, m: m.sigmoid(x))  # not 1 / (1 + e**-x): nan at x << 0 in 2nd order


# -- functions of two arguments -------------------------------------------------------------
def _pick(first: bool, larger: bool) -> Any:
    @selects  # as PyTorch: the loser gets exactly 0, even from an infinite gradient
    def d(ans: Any, x: Any, y: Any) -> Any:
        # PyTorch zeroes the gradient of the side that loses a comparison, which a NaN never does: with a NaN
        # (the result is NaN) both sides get the whole gradient
        lose = ((x < y) if first else (y < x)) if larger else ((x > y) if first else (y > x))
        return 1.0 - lose - 0.5 * (x == y)

    return d


maximum = elementwise_op("maximum", np.maximum, _pick(True, True), _pick(False, True),
                         doc="Elementwise max; ties share the gradient equally; with a NaN both get it (as PyTorch).",
                         numpy=np.maximum, method=True, domain="distinct", torch="torch.maximum")
minimum = elementwise_op("minimum", np.minimum, _pick(True, False), _pick(False, False),
                         doc="Elementwise min; ties share the gradient equally; with a NaN both get it (as PyTorch).",
                         numpy=np.minimum, method=True,
                         domain="distinct", torch="torch.minimum")


def _radius2(y: Any, x: Any) -> Any:
    # x**2 + y**2, with 1 at the origin: there both numerators are 0, so the gradient is 0 as in PyTorch, not 0/0
    r2 = x**2 + y**2
    return np.where(r2 == 0, 1.0, r2)


arctan2 = elementwise_op("arctan2", np.arctan2, lambda ans, y, x: x / _radius2(y, x),
                         lambda ans, y, x: -y / _radius2(y, x), params=("y", "x"), doc="Angle of the point (x, y).",
                         numpy=np.arctan2, domain="nonzero", torch="torch.atan2")
hypot = elementwise_op("hypot", np.hypot, lambda ans, x, y: x / ans, lambda ans, x, y: y / ans,
                       doc="sqrt(x**2 + y**2).", numpy=np.hypot, domain="nonzero", torch="torch.hypot")
# sigmoid(x - y), not exp(x - ans): with x = +inf and y finite that is exp(inf - inf) = NaN, PyTorch's is 1
logaddexp = elementwise_op("logaddexp", np.logaddexp, lambda ans, x, y: sigmoid(x - y),
                           lambda ans, x, y: sigmoid(y - x), doc="log(exp(x) + exp(y)), stably.",
                           numpy=np.logaddexp, domain="real", torch="torch.logaddexp")

# -- selection ------------------------------------------------------------------------------
_where = Primitive("where", np.where)
_where.defvjp(None, lambda g, ans, c, x, y: np.where(c, g, 0.0), lambda g, ans, c, x, y: np.where(c, 0.0, g))
_where.defjvp(None, lambda t, ans, c, x, y: np.where(c, t, 0.0), lambda t, ans, c, x, y: np.where(c, 0.0, t))


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``x`` where ``condition`` holds, else ``y`` (broadcasting); the gradient goes to the chosen one."""
    if x is None and y is None:
        return np.nonzero(raw(condition))
    if x is None or y is None:
        raise TypeError("where: arguments 'x' and 'y' must both be given (numbers or arrays), or neither")
    out = _where(raw(condition), x, y)
    return out if is_value(out) else wrap_like(out, condition)  # a Tensor condition gives a Tensor, as PyTorch's


declare_function(where, primitive=_where, numpy=np.where, cases="none")


def _clip_d(ans: Any, x: Any, lo: Any, hi: Any) -> Any:
    inside = np.ones_like(raw(x), dtype=bool)  # (where x is: the host or a device)
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
_clip = Primitive("clip", lambda x, lo, hi: np.clip(x, lo, hi))
# Selected, not multiplied (as PyTorch): the clipped-off part gets exactly 0, even from an infinite gradient.
_clip.defvjp(
    lambda g, ans, x, lo, hi: selected(g, _clip_d(ans, raw(x), raw(lo), raw(hi))),
    lambda g, ans, x, lo, hi: selected(g, _clip_dlo(raw(x), raw(lo), raw(hi))),
    lambda g, ans, x, lo, hi: selected(g, _clip_dhi(raw(x), raw(lo), raw(hi))),
)
_clip.defjvp(
    lambda t, ans, x, lo, hi: selected(t, _clip_d(ans, raw(x), raw(lo), raw(hi))),
    lambda t, ans, x, lo, hi: selected(t, _clip_dlo(raw(x), raw(lo), raw(hi))),
    lambda t, ans, x, lo, hi: selected(t, _clip_dhi(raw(x), raw(lo), raw(hi))),
)


def clip(x: Any, a_min: Any = None, a_max: Any = None) -> Any:
    """Limit values to [a_min, a_max]; the gradient passes inside and at the bounds."""
    return _clip(x, a_min, a_max)


declare_function(clip, primitive=_clip, numpy=np.clip, method=True, cases="none")


# -- piecewise constant: zero derivative ----------------------------------------------------
def _constant(name: str, fn: Any) -> Primitive:
    prim = Primitive(name, fn)
    prim.defvjp(lambda g, ans, x: np.zeros_like(raw(x)))
    prim.defjvp(lambda t, ans, x: np.zeros_like(raw(ans)))
    return prim


_sign = _constant("sign", lambda x: x.copy() if x.__class__ is np.ndarray and x.dtype == np.bool_ else np.sign(x))
_round = _constant("round", np.round)


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


declare_function(sign, primitive=_sign, numpy=np.sign, method=True, domain="nonzero", torch="torch.sign")
floor = primitive_op("floor", np.floor, (lambda g, ans, x: np.zeros_like(raw(x)),),
                     (lambda t, ans, x: np.zeros_like(raw(ans)),), doc="Round down; zero gradient.", numpy=np.floor,
                     domain="off_integers", torch="torch.floor")
ceil = primitive_op("ceil", np.ceil, (lambda g, ans, x: np.zeros_like(raw(x)),),
                    (lambda t, ans, x: np.zeros_like(raw(ans)),), doc="Round up; zero gradient.", numpy=np.ceil,
                    domain="off_integers", torch="torch.ceil")
trunc = primitive_op("trunc", np.trunc, (lambda g, ans, x: np.zeros_like(raw(x)),),
                     (lambda t, ans, x: np.zeros_like(raw(ans)),), doc="Round toward zero; zero gradient.",
                     numpy=(np.trunc, np.fix), domain="off_integers", torch="torch.trunc")


def round(x: Any, decimals: int = 0) -> Any:  # noqa: A001
    """Round to nearest; zero gradient."""
    return _round(x) if decimals == 0 else wrap_like(np.round(raw(x), decimals), x)


declare_function(
    round, primitive=_round, numpy=(np.round, np.around, np.rint), domain="off_integers", torch="torch.round",
    method={"round": lambda self, decimals=0, out=None: round(self, decimals),
            "__round__": lambda self, ndigits=None: round(self, ndigits or 0)},
)


# -- comparisons and predicates: not differentiable, return boolean arrays ------------------
def _boolean(np_fn: Any, method: Any = False) -> Any:
    def fn(*args: Any) -> Any:
        return wrap_like(np_fn(*[raw(a) for a in args]), *args)

    fn.__name__ = fn.__qualname__ = np_fn.__name__
    fn.__doc__ = f"numpy.{np_fn.__name__} on the values (not differentiable)."
    return declare_function(fn, numpy=np_fn, method=method, differentiable=False, cases="none")


equal = _boolean(np.equal, "__eq__")
not_equal = _boolean(np.not_equal, "__ne__")
less = _boolean(np.less, "__lt__")
less_equal = _boolean(np.less_equal, "__le__")
greater = _boolean(np.greater, "__gt__")
greater_equal = _boolean(np.greater_equal, "__ge__")
isfinite = _boolean(np.isfinite)
isnan = _boolean(np.isnan)
isinf = _boolean(np.isinf)
logical_and = _boolean(np.logical_and)
logical_or = _boolean(np.logical_or)
logical_not = _boolean(np.logical_not)
logical_xor = _boolean(np.logical_xor)
signbit = _boolean(np.signbit)


# -- the error function: vectorised NumPy (ops/special_functions/gauss.py), no SciPy, no per-entry Python ----------
def _erf_fn(x: Any) -> Any:
    if x.__class__ in OFF_HOST:  # a device's array: the device's own erf (cupyx.scipy.special.erf on a GPU)
        return SPECIAL.erf(x)
    if not np.iscomplexobj(x):
        return _gauss_erf(x)
    try:  # the series above is for real numbers; SciPy's erf takes complex ones
        from scipy.special import erf as scipy_erf
    except ImportError:  # pragma: no cover - exercised without SciPy
        raise TypeError("erf: complex inputs need SciPy (pip install scipy)") from None
    return scipy_erf(x)


erf = elementwise_op("erf", _erf_fn, lambda ans, x: (2 / np.sqrt(np.pi)) * np.exp(-(x**2)),
                     doc="The error function 2/sqrt(pi) * integral_0^x exp(-t**2) dt.", domain="real",
                     torch="torch.erf")
