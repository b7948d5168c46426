"""Gradients at a NaN input follow PyTorch's rule for the piecewise ops.

PyTorch's rules zero a gradient where a comparison holds (``relu``: where the output is <= 0;
``maximum``: on the side that is smaller); a comparison with NaN never holds, so a NaN input gets
the gradient (``relu`` 1, ``maximum`` 1 on both sides), and the value stays NaN. ``clamp``'s rule
keeps the gradient where the input is within the bounds, which NaN is not: 0 there. chainrule used
to give 0 for relu and maximum (and 0 as the *value* of elu and hardtanh at NaN).
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F

NAN = float("nan")


def _ops(lib, functional):
    return {
        "relu": (lambda x: lib.relu(x), (NAN,)),
        "relu6": (lambda x: functional.relu6(x), (NAN,)),
        "leaky_relu": (lambda x: functional.leaky_relu(x, 0.1), (NAN,)),
        "elu": (lambda x: functional.elu(x), (NAN,)),
        "selu": (lambda x: functional.selu(x), (NAN,)),
        "celu": (lambda x: functional.celu(x), (NAN,)),
        "hardtanh": (lambda x: functional.hardtanh(x), (NAN,)),
        "hardswish": (lambda x: functional.hardswish(x), (NAN,)),
        "hardsigmoid": (lambda x: functional.hardsigmoid(x), (NAN,)),
        "maximum nan, 1": (lambda x, y: lib.maximum(x, y), (NAN, 1.0)),
        "maximum 1, nan": (lambda x, y: lib.maximum(x, y), (1.0, NAN)),
        "maximum nan, nan": (lambda x, y: lib.maximum(x, y), (NAN, NAN)),
        "minimum nan, 1": (lambda x, y: lib.minimum(x, y), (NAN, 1.0)),
        "minimum 1, nan": (lambda x, y: lib.minimum(x, y), (1.0, NAN)),
        "clamp": (lambda x: lib.clamp(x, 0.0, 1.0), (NAN,)),
        "clamp with tensor bounds": (lambda x, lo, hi: lib.clamp(x, lo, hi), (NAN, 0.0, 1.0)),
    }


# PyTorch 2.13's gradients (each input's), for the test to run without torch
EXPECTED = {
    "relu": [1.0], "relu6": [1.0], "leaky_relu": [0.1], "elu": [1.0], "selu": [1.0507009873554805], "celu": [1.0],
    "hardtanh": [1.0], "hardswish": [1.0], "hardsigmoid": [0.0], "maximum nan, 1": [1.0, 1.0],
    "maximum 1, nan": [1.0, 1.0], "maximum nan, nan": [1.0, 1.0], "minimum nan, 1": [1.0, 1.0],
    "minimum 1, nan": [1.0, 1.0], "clamp": [0.0], "clamp with tensor bounds": [0.0, 0.0, 0.0],
}
OPS = list(EXPECTED)


def _chainrule(name):
    fn, values = _ops(cr, F)[name]
    xs = [cr.Tensor([v], requires_grad=True) for v in values]
    out = fn(*xs)
    out.sum().backward()
    return out.data, [float(x.grad.data[0]) for x in xs]


@pytest.mark.parametrize("name", OPS)
def test_gradient_at_nan(name):
    value, grads = _chainrule(name)
    assert np.isnan(value).all(), "the value at NaN is NaN"
    np.testing.assert_allclose(grads, EXPECTED[name], rtol=1e-15)


@pytest.mark.parametrize("name", ["relu", "maximum nan, 1", "minimum 1, nan", "hardtanh", "elu"])
def test_forward_mode_at_nan(name):
    fn, values = _ops(cr, F)[name]
    primals = tuple(np.array([v]) for v in values)
    tangents = tuple(np.array([1.0 if k == 0 else 0.0]) for k in range(len(values)))
    _, tangent = cr.jvp(fn, primals, tangents)
    np.testing.assert_allclose(np.asarray(tangent), [EXPECTED[name][0]], rtol=1e-15)


def test_scalar_relu_at_nan():
    s = cr.Scalar(NAN)
    r = s.relu()
    r.backward()
    assert np.isnan(r.data) and s.grad == 1.0


@pytest.mark.oracle
@pytest.mark.parametrize("name", OPS)
def test_gradient_at_nan_is_pytorchs(name):
    torch = pytest.importorskip("torch")
    fn, values = _ops(torch, torch.nn.functional)[name]
    xs = [torch.tensor([v], dtype=torch.float64, requires_grad=True) for v in values]
    fn(*xs).sum().backward()
    assert [float(x.grad[0]) for x in xs] == pytest.approx(EXPECTED[name], rel=1e-15)
    np.testing.assert_allclose(_chainrule(name)[1], [float(x.grad[0]) for x in xs], rtol=1e-15)
