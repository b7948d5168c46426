"""``scipy.special`` with derivatives: gammaln, digamma, polygamma, erfc, erfinv, expit, logit, xlogy...

Needs SciPy (``pip install chainrule[scipy]``). Importing this module registers the SciPy
ufuncs, so ``scipy.special.gammaln(tensor)`` is traced; chainrule does this by itself the
first time a SciPy ufunc meets a Tensor. SciPy functions that are not ufuncs
(``logsumexp``, ``softmax``, ``log_softmax``, ``polygamma``, ``multigammaln``) convert their
input to an array and would drop the gradient: call the functions here instead
(``chainrule.special.logsumexp``).

Conventions: ``xlogy(0, y) = 0`` with derivative 0 in ``y`` (also at ``y = 0``) and ``log(y)``
in ``x``, except 0 where ``x == 0`` and ``y <= 0`` (PyTorch's choice: ``xlogy(0, y)`` is 0 for every
``y``, so a zero probability times the log of a zero probability sends back no ``-inf``; ``xlog1py``
likewise at ``y <= -1``), and ``entr(0) = 0`` (its derivative there is infinite).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

try:
    import scipy.special as _sc
except ImportError as e:  # pragma: no cover - exercised without SciPy
    raise ImportError("chainrule.special needs SciPy: pip install chainrule[scipy]") from e

from ...autodiff.primitive import Primitive
from ...core.device import as_array, is_off_host, xp_of
from .. import elementwise, reductions
from .. import shape as shape_ops
from .._define import raw
from ..declare import elementwise_op, implements
from .device import SPECIAL as _dsc

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)

# The error function lives in elementwise (it works without SciPy too).
erf = implements(_sc.erf)(elementwise.erf)


def _polygamma_fn(x: Any, n: int) -> Any:
    if n == 0:
        return _dsc.digamma(x)
    if is_off_host(x):  # CuPy's polygamma selects with where(n == 0, ...): a Python n gives it a bool, not an array
        return _dsc.polygamma(xp_of(x).asarray(n), x)
    out = _dsc.polygamma(n, x)  # (SciPy's is float64 for float32 x: the integer n promotes it; PyTorch keeps x's)
    return out.astype(x.dtype) if getattr(x, "dtype", None) in (np.float32, np.float16) else out


_polygamma = Primitive("polygamma", _polygamma_fn)
_polygamma.defvjp(lambda g, ans, x, n: g * _polygamma(x, n=n + 1))
_polygamma.defjvp(lambda t, ans, x, n: t * _polygamma(x, n=n + 1))
_polygamma.no_complex("SciPy's polygamma takes real arguments only")

# Elementwise functions of one argument: one declaration each (ops/declare.py), public in chainrule.special.
gammaln = elementwise_op(
    "gammaln", _dsc.gammaln, lambda ans, x: _polygamma(x, n=0), numpy=_sc.gammaln, namespaces=("special",),
    domain="(0,4)", torch="torch.lgamma", doc="""log|Gamma(x)|; derivative digamma(x).

    Example:
        >>> import chainrule as cr
        >>> from chainrule import special
        >>> round(cr.grad(special.gammaln)(1.0), 6)  # -Euler's gamma
        -0.577216
    """)
gamma = elementwise_op("gamma", _dsc.gamma, lambda ans, x: ans * _polygamma(x, n=0), numpy=_sc.gamma,
                       namespaces=("special",), domain="(0,3)",
                       doc="The Gamma function; derivative gamma(x) * digamma(x).")
erfc = elementwise_op("erfc", _dsc.erfc, lambda ans, x: (-2 / _SQRT_PI) * np.exp(-(x * x)), numpy=_sc.erfc,
                      namespaces=("special",), domain="real", torch="torch.erfc",
                      doc="1 - erf(x), accurate for large x.")
erfinv = elementwise_op("erfinv", _dsc.erfinv, lambda ans, x: (_SQRT_PI / 2) * np.exp(ans * ans), numpy=_sc.erfinv,
                        namespaces=("special",), domain="(-1,1)", torch="torch.erfinv",
                        doc="Inverse of erf on (-1, 1).")
erfcinv = elementwise_op("erfcinv", _dsc.erfcinv, lambda ans, x: (-_SQRT_PI / 2) * np.exp(ans * ans),
                         numpy=_sc.erfcinv, namespaces=("special",), domain="(0,2)", doc="Inverse of erfc on (0, 2).")
logit = elementwise_op("logit", _dsc.logit, lambda ans, x: 1 / (x * (1 - x)), numpy=_sc.logit, namespaces=("special",),
                       domain="(0,1)", torch="torch.logit", doc="log(x / (1 - x)), the inverse of expit.")
ndtr = elementwise_op("ndtr", _dsc.ndtr, lambda ans, x: np.exp(-(x * x) / 2) / _SQRT_2PI, numpy=_sc.ndtr,
                      namespaces=("special",), domain="(-3,3)", torch="torch.special.ndtr",
                      doc="The standard normal CDF.")
log_ndtr = elementwise_op("log_ndtr", _dsc.log_ndtr, lambda ans, x: np.exp(-(x * x) / 2 - ans) / _SQRT_2PI,
                          numpy=_sc.log_ndtr, namespaces=("special",), domain="(-5,3)", torch="torch.special.log_ndtr",
                          doc="log of the standard normal CDF, accurate far in the left tail.")
ndtri = elementwise_op("ndtri", _dsc.ndtri, lambda ans, x: _SQRT_2PI * np.exp(ans * ans / 2), numpy=_sc.ndtri,
                       namespaces=("special",), domain="(0,1)", torch="torch.special.ndtri",
                       doc="Inverse of the standard normal CDF.")

# More of SciPy's functions whose derivatives are closed forms (JAX's special-function tests differentiate them)
erfcx = elementwise_op("erfcx", _dsc.erfcx, lambda ans, x: 2 * x * ans - 2 / _SQRT_PI, numpy=_sc.erfcx,
                       namespaces=("special",), domain="(-2,4)", torch="torch.special.erfcx",
                       doc="exp(x**2) * erfc(x), the scaled complementary error function; derivative 2 x erfcx(x) - "
                           "2 / sqrt(pi).")
dawsn = elementwise_op("dawsn", _dsc.dawsn, lambda ans, x: 1 - 2 * x * ans, numpy=_sc.dawsn, namespaces=("special",),
                       domain="real",
                       doc="Dawson's integral exp(-x**2) * int_0^x exp(t**2) dt; derivative 1 - 2 x D(x).")
expi = elementwise_op("expi", _dsc.expi, lambda ans, x: np.exp(x) / x, numpy=_sc.expi, namespaces=("special",),
                      domain="(0.2,3)", doc="The exponential integral Ei(x); derivative exp(x) / x.")
exp1 = elementwise_op("exp1", _dsc.exp1, lambda ans, x: -np.exp(-x) / x, numpy=_sc.exp1, namespaces=("special",),
                      domain="(0.2,3)", doc="The exponential integral E1(x) (x > 0); derivative -exp(-x) / x.")
rel_entr = elementwise_op("rel_entr", _dsc.rel_entr, lambda ans, x, y: np.log(x / y) + 1, lambda ans, x, y: -x / y,
                          numpy=_sc.rel_entr, namespaces=("special",), domain=("positive", "positive"),
                          doc="x log(x / y) for x, y > 0 (0 at x = 0, inf elsewhere); derivatives log(x / y) + 1 "
                              "in x and -x / y in y.")
kl_div = elementwise_op("kl_div", _dsc.kl_div, lambda ans, x, y: np.log(x / y), lambda ans, x, y: 1 - x / y,
                        numpy=_sc.kl_div, namespaces=("special",), domain=("positive", "positive"),
                        doc="x log(x / y) - x + y for x, y > 0; derivatives log(x / y) in x and 1 - x / y in y.")
poch = elementwise_op("poch", _dsc.poch, lambda ans, z, m: ans * (_polygamma(z + m, n=0) - _polygamma(z, n=0)),
                      lambda ans, z, m: ans * _polygamma(z + m, n=0), numpy=_sc.poch, params=("z", "m"),
                      namespaces=("special",), domain=("(0.5,3)", "(0.5,3)"),
                      doc="The rising factorial Gamma(z + m) / Gamma(z); derivatives poch * (psi(z + m) - psi(z)) "
                          "in z and poch * psi(z + m) in m.")
boxcox = elementwise_op("boxcox", _dsc.boxcox, lambda ans, x, lmbda: x ** (lmbda - 1), None, numpy=_sc.boxcox,
                        params=("x", "lmbda"), namespaces=("special",),
                        doc="The Box-Cox transform (x**lmbda - 1) / lmbda (log x at lmbda = 0); derivative "
                            "x**(lmbda - 1) in x (``lmbda`` is a constant).")
boxcox1p = elementwise_op("boxcox1p", _dsc.boxcox1p, lambda ans, x, lmbda: (1 + x) ** (lmbda - 1), None,
                          numpy=_sc.boxcox1p, params=("x", "lmbda"), namespaces=("special",),
                          doc="The Box-Cox transform of 1 + x; derivative (1 + x)**(lmbda - 1) in x (``lmbda`` is a "
                              "constant).")


@implements(_sc.digamma, namespaces=("special",))
def digamma(x: Any) -> Any:
    """d/dx log Gamma(x); derivative polygamma(1, x)."""
    return _polygamma(x, n=0)


psi = digamma


def polygamma(n: int, x: Any) -> Any:
    """The ``n``-th derivative of digamma (``n`` a non-negative integer constant)."""
    n = int(raw(n))
    if n < 0:
        raise ValueError(f"polygamma: n must be >= 0, got {n}")
    return _polygamma(x, n=n)


@implements(_sc.expit, namespaces=("special",))
def expit(x: Any) -> Any:
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return elementwise.sigmoid(x)


def _both_zero(x: Any, y: Any, pole: float) -> np.ndarray:
    """Where x == 0 and y sits at the log's pole: only there is x / (y - pole) 0/0. Elsewhere at x == 0
    the ratio is 0 by itself and its derivative in x (1 / (y - pole)) must stay: masking every x == 0
    would drop that cross term of the Hessian."""
    return (as_array(raw(x)) == 0) & (as_array(raw(y)) == pole)


def _where_x(x: Any, y: Any, value: Any, pole: float) -> Any:
    """``value``, but 0 where x == 0 and y is at the pole (and no NaN leaks from the other branch)."""
    zero = _both_zero(x, y, pole)
    return np.where(zero, 0.0, value) if zero.any() else value


def _safe_y(x: Any, y: Any, at: float, pole: float) -> Any:
    zero = _both_zero(x, y, pole)
    return np.where(zero, at, y) if zero.any() else y


def _log_in_x(g: Any, x: Any, y: Any, log: Any, pole: float) -> Any:
    """``g * log(y)`` (through the derivative of ``x * log(y)`` in x), 0 where x == 0 and y is at or past the
    pole, as PyTorch: there ``x * log(y)`` is 0 for every y. Selected, not multiplied (an infinite ``g`` there
    gives 0, as PyTorch's masked_fill), and ``y`` made safe first, so the rule's own derivative is 0 there."""
    x_data, y_data = as_array(raw(x)), as_array(raw(y))
    masked = (x_data == 0) & (y_data <= pole)
    if not masked.any():
        return g * log(y)
    return np.where(masked, 0.0, g * log(np.where(masked, pole + 1.0, y)))


def _in_their_precision(fn: Any) -> Any:
    """SciPy's two-argument ``fn``, its float64 result brought back to float32 (or float16) when the operands
    are (SciPy has float64 loops only for some: xlogy of float32 arrays is float64)."""

    def call(x: Any, y: Any) -> Any:
        out = fn(x, y)
        dtype = np.result_type(x, y)
        return out.astype(dtype) if dtype in (np.float32, np.float16) and out.dtype != dtype else out

    return call


_xlogy = Primitive("xlogy", _in_their_precision(_dsc.xlogy))
_xlogy.defvjp(lambda g, ans, x, y: _log_in_x(g, x, y, np.log, 0.0),
              lambda g, ans, x, y: g * _where_x(x, y, x / _safe_y(x, y, 1.0, 0.0), 0.0))
_xlogy.defjvp(lambda t, ans, x, y: _log_in_x(t, x, y, np.log, 0.0),
              lambda t, ans, x, y: t * _where_x(x, y, x / _safe_y(x, y, 1.0, 0.0), 0.0))
_xlog1py = Primitive("xlog1py", _in_their_precision(_dsc.xlog1py))
for _prim in (_xlogy, _xlog1py):  # PyTorch's promotion of Tensor operands (ops/promoting.py): int ones give float32
    _prim.promotes, _prim.floating = (0, 1), True
_xlog1py.defvjp(
    lambda g, ans, x, y: _log_in_x(g, x, y, np.log1p, -1.0),
    lambda g, ans, x, y: g * _where_x(x, y, x / (1 + _safe_y(x, y, 0.0, -1.0)), -1.0),
)
_xlog1py.defjvp(
    lambda t, ans, x, y: _log_in_x(t, x, y, np.log1p, -1.0),
    lambda t, ans, x, y: t * _where_x(x, y, x / (1 + _safe_y(x, y, 0.0, -1.0)), -1.0),
)


@implements(_sc.xlogy, namespaces=("special",))
def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), 0 where x == 0; derivatives log(y) in x (0 where x == 0 and y <= 0, as PyTorch) and x / y
    in y (0 where x == 0)."""
    return _xlogy(x, y)


@implements(_sc.xlog1py, namespaces=("special",))
def xlog1py(x: Any, y: Any) -> Any:
    """x * log1p(y), 0 where x == 0; derivatives log1p(y) in x and x / (1 + y) in y (0 where x == 0)."""
    return _xlog1py(x, y)


@implements(_sc.entr, namespaces=("special",))
def entr(x: Any) -> Any:
    """-x log x for x > 0, 0 at 0, -inf for x < 0."""
    d = as_array(raw(x))
    out = elementwise.negative(xlogy(x, elementwise.where(d > 0, x, 1.0)))
    return elementwise.where(d < 0, -np.inf, out) if (d < 0).any() else out


@implements(_sc.betaln, namespaces=("special",))
def betaln(a: Any, b: Any) -> Any:
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    return elementwise.subtract(elementwise.add(gammaln(a), gammaln(b)), gammaln(elementwise.add(a, b)))


@implements(_sc.beta, namespaces=("special",))
def beta(a: Any, b: Any) -> Any:
    """The Beta function (positive arguments)."""
    return elementwise.exp(betaln(a, b))


def multigammaln(a: Any, d: int) -> Any:
    """log of the multivariate Gamma function of dimension ``d``."""
    d = int(d)
    total = d * (d - 1) / 4 * math.log(math.pi)
    for j in range(1, d + 1):
        total = elementwise.add(total, gammaln(elementwise.add(a, (1 - j) / 2)))
    return total


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False) -> Any:
    """log|sum(b * exp(a))| over ``axis``, stably, as SciPy's: ``b`` scales the terms; with ``return_sign=True``
    the result is ``(log|sum|, sign(sum))``, and without it a negative sum gives NaN."""
    if b is not None and np.any(as_array(raw(b)) < 0):
        return _signed_logsumexp(a, b, axis, keepdims, return_sign)
    if b is not None:
        a = elementwise.add(a, elementwise.log(b))
    out = reductions.logsumexp(a, axis=axis, keepdims=keepdims)
    return (out, np.ones(np.shape(raw(out)))) if return_sign else out


def _signed_logsumexp(a: Any, b: Any, axis: Any, keepdims: bool, return_sign: bool) -> Any:
    """Weights of both signs: log|S| with S = sum(b exp(a - m)) + m, m the (constant) largest entry, so that
    d log|S| = dS / S carries the sign; the sign itself is locally constant."""
    shift = np.max(as_array(raw(a)) + np.zeros(np.shape(raw(b))), axis=axis, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    total = reductions.sum(elementwise.multiply(b, elementwise.exp(elementwise.subtract(a, shift))), axis=axis,
                           keepdims=True)
    sign = np.sign(as_array(raw(total)))
    out = elementwise.add(elementwise.log(elementwise.abs(total)), shift)
    if not keepdims:
        kept = tuple(range(np.ndim(raw(out)))) if axis is None else axis
        out, sign = shape_ops.squeeze(out, axis=kept), np.squeeze(sign, axis=kept)
    if return_sign:
        return out, sign
    return elementwise.where(sign < 0, np.nan, out) if np.any(sign < 0) else out


def softmax(x: Any, axis: Any = None) -> Any:
    """exp(x) / sum(exp(x)) over ``axis`` (all entries when None), stably."""
    if axis is None:
        return shape_ops.reshape(reductions.softmax(shape_ops.ravel(x), axis=0), np.shape(raw(x)))
    return reductions.softmax(x, axis=axis)


def log_softmax(x: Any, axis: Any = None) -> Any:
    """x - logsumexp(x) over ``axis`` (all entries when None), stably."""
    if axis is None:
        return shape_ops.reshape(reductions.log_softmax(shape_ops.ravel(x), axis=0), np.shape(raw(x)))
    return reductions.log_softmax(x, axis=axis)


