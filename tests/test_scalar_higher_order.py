"""Scalar.backward(create_graph=True): second and third derivatives against finite differences."""

from __future__ import annotations

import math

import pytest

from chainrule import Scalar

FUNCTIONS = {
    "cube": lambda x: x**3,
    "tanh": lambda x: x.tanh(),
    "reciprocal": lambda x: 2.0 / x,
    "rpow": lambda x: 3.0**x,
    "self_power": lambda x: x**x,
    "sqrt_exp": lambda x: (x * x + 1).sqrt() / x.exp(),
    "trig_log_sigmoid": lambda x: x.sigmoid() * x.sin() + x.log() - x.cos() * x.tan(),
    "rational": lambda x: (x - 1) * (x + 2) / (x * 3),
    "cube_root": lambda x: x ** (1 / 3),
    "relu_abs": lambda x: (x * 2 - 0.1).relu() * abs(x - 3.0),
}


def first_derivative(f, v: float) -> float:
    x = Scalar(v)
    f(x).backward()
    return x.grad


def second_derivative(f, v: float) -> float:
    x = Scalar(v)
    f(x).backward(create_graph=True)
    g = x.grad
    assert isinstance(g, Scalar)
    x.grad = 0.0
    g.backward()
    return x.grad


@pytest.mark.parametrize("name", FUNCTIONS)
def test_second_derivative_matches_finite_differences(name):
    f, v, h = FUNCTIONS[name], 0.7, 1e-5
    expected = (first_derivative(f, v + h) - first_derivative(f, v - h)) / (2 * h)
    assert second_derivative(f, v) == pytest.approx(expected, rel=1e-6, abs=1e-8)


def test_third_derivative_of_sin():
    x = Scalar(0.4)
    x.sin().backward(create_graph=True)
    g1 = x.grad
    x.grad = 0.0
    g1.backward(create_graph=True)
    g2 = x.grad
    x.grad = 0.0
    g2.backward()
    assert x.grad == pytest.approx(-math.cos(0.4), rel=1e-12)


def test_seed_002_second_derivatives_with_scalars():
    for which, expected in (("a", 4.0), ("b", -12.0)):
        a, b = Scalar(1.0), Scalar(2.0)
        (b * ((a + b) * (a - b))).backward(create_graph=True)
        x = a if which == "a" else b
        g = x.grad
        a.grad = b.grad = 0.0
        g.backward()
        assert x.grad == expected


@pytest.mark.parametrize("f", [lambda a: a.sqrt(), lambda a: a**0.5, lambda a: a**0.25])
def test_second_derivative_at_the_infinite_slope_of_a_root_is_minus_inf(f):
    """At 0 the first derivative is +inf; the second is the one-sided limit -inf (as the Tensor engine
    and PyTorch give), not the 0 of a constant local derivative."""
    import chainrule as cr

    a = Scalar(0.0)
    f(a).backward(create_graph=True)
    g = a.grad
    assert g.data == math.inf
    a.grad = 0.0
    g.backward()
    assert a.grad == -math.inf
    assert cr.grad(cr.grad(lambda x: x**0.5))(0.0) == -math.inf


def _three_derivatives(f, v: float) -> list[float]:
    x = Scalar(v)
    y = f(x)
    out = [y.data]
    for _ in range(3):
        y.backward(create_graph=True) if len(out) < 3 else y.backward()
        g = x.grad
        out.append(g.data if isinstance(g, Scalar) else g)
        x.grad = 0.0
        y = g
    return out


@pytest.mark.oracle
@pytest.mark.parametrize("v", [-800.0, -30.0, 0.0, 2.0, 800.0])
def test_softplus_and_sigmoid_derivatives_far_out_match_torch(v):
    # softplus' derivative was 1 / (1 + e**-x): inf / inf = nan in the 2nd derivative at x << 0
    torch = pytest.importorskip("torch", reason="torch is not installed")
    for f, tf in [(lambda x: x.softplus(), torch.nn.functional.softplus), (lambda x: x.sigmoid(), torch.sigmoid)]:
        t = torch.tensor(v, dtype=torch.float64, requires_grad=True)
        y = tf(t)
        expected = [y.item()]
        for k in range(3):
            (y,) = torch.autograd.grad(y, t, create_graph=k < 2)
            expected.append(y.item())
        assert _three_derivatives(f, v) == pytest.approx(expected, rel=1e-12, abs=1e-28)
