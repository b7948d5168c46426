"""The derivatives of the Bessel functions of orders 0 and 1 are written with orders 0 and 1 only (a GPU's
special functions have no jv, iv of other orders): ``j1' = j0 - j1/x``, ``i1' = i0 - i1/x``. The quotient loses
digits near 0, where a Taylor polynomial takes over: checked here against the exact formula of the k-th
derivative, ``J_n^(k) = 2^-k sum_m (-1)^m C(k, m) J_(n-k+2m)`` (``I_n^(k)``: without the signs), to third
order, at 0, near 0, at the switch (|x| = 0.1) and away from it."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
import scipy.special as sc

import chainrule as cr
from chainrule import special

POINTS = [0.0, 1e-8, -1e-3, 0.05, 0.0999999, 0.1, -0.1, 0.3, 2.5, -1.7]


def _exact(kind: str, n: int, k: int, x: float) -> float:
    sign, fn = (-1, sc.jv) if kind == "j" else (1, sc.iv)
    return sum(sign**m * comb(k, m) * fn(n - k + 2 * m, x) for m in range(k + 1)) / 2**k


def _nth(f, k):
    for _ in range(k):
        f = cr.grad(f)
    return f


@pytest.mark.parametrize("kind", ["j", "i"])
@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_derivatives_of_orders_0_and_1_are_exact_near_zero_too(kind, order, k):
    f = getattr(special, f"{kind}{order}")
    for x in POINTS:
        got = float(_nth(f, k)(x))
        np.testing.assert_allclose(got, _exact(kind, order, k, x), rtol=1e-12, atol=1e-15, err_msg=f"{kind}{order} "
                                   f"derivative {k} at {x}")


def test_the_scaled_i1e_near_zero():
    """i1e = exp(-|x|) i1: its derivative i0e - i1e/x - sign(x) i1e, 1/2 at 0; away from 0 its second order."""
    for x in POINTS:
        want = np.exp(-abs(x)) * (_exact("i", 1, 1, x) - np.sign(x) * sc.i1(x))
        np.testing.assert_allclose(float(cr.grad(special.i1e)(x)), want, rtol=1e-12, atol=1e-15, err_msg=str(x))
        if x != 0:
            i1, d1, d2 = sc.i1(x), _exact("i", 1, 1, x), _exact("i", 1, 2, x)
            s = np.sign(x)
            want2 = np.exp(-abs(x)) * (d2 - 2 * s * d1 + i1)
            np.testing.assert_allclose(float(_nth(special.i1e, 2)(x)), want2, rtol=1e-11, atol=1e-14, err_msg=str(x))


def test_y1_derivative_is_y0_minus_y1_over_x():
    for x in (0.5, 1.0, 7.5):
        np.testing.assert_allclose(float(cr.grad(special.y1)(x)), (sc.y0(x) - sc.yv(2, x)) / 2, rtol=1e-13)
        np.testing.assert_allclose(float(_nth(special.y1, 2)(x)), (sc.yv(-1, x) - 2 * sc.y1(x) + sc.yv(3, x)) / 4,
                                   rtol=1e-12)
