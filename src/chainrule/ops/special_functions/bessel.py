"""``scipy.special``'s Bessel functions, regularised incomplete gamma functions, ``rgamma`` and ``gammasgn``, with
derivatives (HIPS autograd's ``autograd.scipy.special`` has them).

Each derivative is written with these same functions, so derivatives of every order are exact. The order
``n`` / ``v`` of a Bessel function and the shape ``a`` of ``gammainc`` are constants: differentiating with
respect to them raises.

Example:
    >>> import chainrule as cr
    >>> from chainrule import special
    >>> round(cr.grad(special.j0)(1.0), 6) == round(-float(special.j1(1.0)), 6)
    True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.special as _sc

from ...core.device import as_array
from .. import elementwise
from .._define import raw
from ..declare import DECLARATIONS, elementwise_op
from .device import SPECIAL as _dsc

_SPECIAL = ("special",)


def _sign(x: Any) -> Any:
    """sign(x) as a constant: it is locally constant, so it adds nothing to the derivatives."""
    return np.sign(as_array(raw(x)))


def _over_x(f1: Any, x: Any, signs: int, scaled: bool = False) -> Any:
    """``f1(x) / x`` for ``f1`` = j1 (``signs`` -1) or i1 (``signs`` 1), or i1e (``scaled``): odd, with slope
    1/2 at 0. Where |x| < 0.1 (0 included) it is the Taylor polynomial ``sum_k signs**k (x^2/4)^k / (2 k! (k+1)!)``
    to x^8 (times exp(-|x|) when scaled), exact to rounding there, and so are its derivatives: the quotient's
    lose digits as x nears 0."""
    d = as_array(raw(x))
    small = abs(d) < 0.1
    if not small.any():
        return elementwise.divide(f1(x), x)
    near = elementwise.where(small, x, np.zeros_like(d))  # the polynomial only ever sees small x
    q = elementwise.multiply(elementwise.multiply(near, near), signs / 4.0)
    series: Any = 0.0
    for k in range(4, -1, -1):  # Horner, from the x^8 term
        series = elementwise.add(elementwise.multiply(series, q), 0.5 / (math.factorial(k) * math.factorial(k + 1)))
    if scaled:
        series = elementwise.multiply(series, elementwise.exp(elementwise.negative(elementwise.abs(near))))
    far = elementwise.where(small, np.ones_like(d), x)
    return elementwise.where(small, series, elementwise.divide(f1(far), far))


# -- Bessel functions of the first and second kind -----------------------------------------------------
# (no PyTorch twin: torch.special.bessel_j0 and its kin have no derivative). The derivatives of the orders 0
# and 1 use these orders only (j1' = j0 - j1/x, not (j0 - jv(2, x)) / 2): a GPU's special functions have them,
# not jv, yv, iv, ive of any order.
j0 = elementwise_op("j0", _dsc.j0, lambda ans, x: -j1(x), numpy=_sc.j0, namespaces=_SPECIAL, domain="(0.2,8)",
                    doc="Bessel function of the first kind of order 0; derivative -j1.")
j1 = elementwise_op("j1", _dsc.j1, lambda ans, x: j0(x) - _over_x(j1, x, -1), numpy=_sc.j1, namespaces=_SPECIAL,
                    domain="(0.2,8)",
                    doc="Bessel function of the first kind of order 1; derivative j0 - j1 / x (1/2 at 0).")
y0 = elementwise_op("y0", _dsc.y0, lambda ans, x: -y1(x), numpy=_sc.y0, namespaces=_SPECIAL, domain="(0.5,8)",
                    doc="Bessel function of the second kind of order 0 (x > 0); derivative -y1.")
y1 = elementwise_op("y1", _dsc.y1, lambda ans, x: y0(x) - y1(x) / x, numpy=_sc.y1, namespaces=_SPECIAL,
                    domain="(0.5,8)",
                    doc="Bessel function of the second kind of order 1 (x > 0); derivative y0 - y1 / x.")
jv = elementwise_op("jv", _dsc.jv, None, lambda ans, v, x: (jv(v - 1, x) - jv(v + 1, x)) / 2, numpy=_sc.jv,
                    params=("v", "x"), namespaces=_SPECIAL,
                    doc="Bessel function of the first kind of real order v (a constant); "
                        "derivative in x (jv(v-1, x) - jv(v+1, x)) / 2.")
jn = elementwise_op("jn", _dsc.jn, None, lambda ans, n, x: (jn(n - 1, x) - jn(n + 1, x)) / 2, numpy=_sc.jn,
                    params=("n", "x"), namespaces=_SPECIAL,
                    doc="Bessel function of the first kind of integer order n (a constant); "
                        "derivative in x (jn(n-1, x) - jn(n+1, x)) / 2.")
yv = elementwise_op("yv", _dsc.yv, None, lambda ans, v, x: (yv(v - 1, x) - yv(v + 1, x)) / 2, numpy=_sc.yv,
                    params=("v", "x"), namespaces=_SPECIAL,
                    doc="Bessel function of the second kind of real order v (a constant; x > 0); "
                        "derivative in x (yv(v-1, x) - yv(v+1, x)) / 2.")
yn = elementwise_op("yn", _dsc.yn, None, lambda ans, n, x: (yn(n - 1, x) - yn(n + 1, x)) / 2, numpy=_sc.yn,
                    params=("n", "x"), namespaces=_SPECIAL,
                    doc="Bessel function of the second kind of integer order n (a constant; x > 0); "
                        "derivative in x (yn(n-1, x) - yn(n+1, x)) / 2.")

# -- modified Bessel functions of the first kind (and their exponentially scaled forms) -----------------
i0 = elementwise_op("i0", _dsc.i0, lambda ans, x: i1(x), numpy=_sc.i0, namespaces=_SPECIAL, domain="(-4,4)",
                    torch="torch.special.i0",
                    doc="Modified Bessel function of the first kind of order 0; derivative i1.")
i1 = elementwise_op("i1", _dsc.i1, lambda ans, x: i0(x) - _over_x(i1, x, 1), numpy=_sc.i1, namespaces=_SPECIAL,
                    domain="(-4,4)", torch="torch.special.i1",
                    doc="Modified Bessel function of the first kind of order 1; derivative i0 - i1 / x (1/2 at 0).")
iv = elementwise_op("iv", _dsc.iv, None, lambda ans, v, x: (iv(v - 1, x) + iv(v + 1, x)) / 2, numpy=_sc.iv,
                    params=("v", "x"), namespaces=_SPECIAL,
                    doc="Modified Bessel function of the first kind of real order v (a constant); "
                        "derivative in x (iv(v-1, x) + iv(v+1, x)) / 2.")
ive = elementwise_op("ive", _dsc.ive, None,
                     lambda ans, v, x: (ive(v - 1, x) + ive(v + 1, x)) / 2 - _sign(x) * ans, numpy=_sc.ive,
                     params=("v", "x"), namespaces=_SPECIAL,
                     doc="iv(v, x) * exp(-|x|) (v a constant); derivative in x "
                         "(ive(v-1, x) + ive(v+1, x)) / 2 - sign(x) ive(v, x).")
i0e = elementwise_op("i0e", _dsc.i0e, lambda ans, x: i1e(x) - _sign(x) * ans, numpy=_sc.i0e, namespaces=_SPECIAL,
                     domain="(-4,4)", torch="torch.special.i0e",
                     doc="i0(x) * exp(-|x|); derivative i1e(x) - sign(x) i0e(x).")
i1e = elementwise_op("i1e", _dsc.i1e, lambda ans, x: i0e(x) - _over_x(i1e, x, 1, scaled=True) - _sign(x) * ans,
                     numpy=_sc.i1e, namespaces=_SPECIAL, domain="(-4,4)", torch="torch.special.i1e",
                     doc="i1(x) * exp(-|x|); derivative i0e - i1e / x - sign(x) i1e(x) (1/2 at 0).")


# -- regularised incomplete gamma functions, 1 / Gamma ---------------------------------------------------
def _gammainc_dx(ans: Any, a: Any, x: Any) -> Any:
    """d/dx P(a, x) = x**(a-1) exp(-x) / Gamma(a)."""
    from .scipy_special import gammaln

    return elementwise.exp(elementwise.subtract(elementwise.multiply(a - 1.0, elementwise.log(x)),
                                                elementwise.add(x, gammaln(a))))


gammainc = elementwise_op("gammainc", _dsc.gammainc, None, _gammainc_dx, numpy=_sc.gammainc, params=("a", "x"),
                          namespaces=_SPECIAL,
                          doc="The regularised lower incomplete gamma function P(a, x) (a > 0 a constant, x > 0); "
                              "derivative in x x**(a-1) exp(-x) / Gamma(a).")
gammaincc = elementwise_op("gammaincc", _dsc.gammaincc, None,
                           lambda ans, a, x: elementwise.negative(_gammainc_dx(ans, a, x)), numpy=_sc.gammaincc,
                           params=("a", "x"), namespaces=_SPECIAL,
                           doc="The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x); "
                               "derivative in x -x**(a-1) exp(-x) / Gamma(a).")


def _rgamma_d(ans: Any, x: Any) -> Any:
    from .scipy_special import digamma

    return elementwise.negative(elementwise.multiply(ans, digamma(x)))


gammasgn = elementwise_op("gammasgn", _dsc.gammasgn, lambda ans, x: np.zeros_like(raw(x)), numpy=_sc.gammasgn,
                          namespaces=_SPECIAL, domain="(0.3,4)", doc="The sign of Gamma(x), -1 or 1; zero gradient.")
rgamma = elementwise_op("rgamma", _dsc.rgamma, _rgamma_d, numpy=_sc.rgamma, namespaces=_SPECIAL, domain="(0.3,4)",
                        doc="1 / Gamma(x); derivative -rgamma(x) digamma(x).")


# exp(-|x|) is not holomorphic: the scaled functions' rules hold for real x only
for _scaled in ("ive", "i0e", "i1e"):
    DECLARATIONS[_scaled].primitive.no_complex("exp(-|x|) is not holomorphic; the rule is for real x")
