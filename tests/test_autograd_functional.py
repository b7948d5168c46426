"""``chainrule.autograd.functional`` against ``torch.autograd.functional``: shapes, nesting, values, and
results that are differentiable again with ``create_graph=True``."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch", reason="torch is not installed")
pytestmark = pytest.mark.oracle
OURS, THEIRS = cr.autograd.functional, torch.autograd.functional
RNG = np.random.default_rng(0)
A, B = RNG.normal(size=3), RNG.normal(size=(2, 3))


def pair(y, x):
    return ((y @ x).tanh(), (x**2).sum())


def scalar(x, y):
    return ((y @ x).tanh() ** 2).sum() + (x**3).sum()


def flat(result):
    items = result if isinstance(result, tuple) else (result,)
    return [leaf for item in items for leaf in (flat(item) if isinstance(item, tuple) else [item])]


@pytest.mark.parametrize("call", [
    lambda m, T: m.jacobian(lambda x: x.sin() * x[0], T(A)),
    lambda m, T: m.jacobian(pair, (T(B), T(A))),
    lambda m, T: m.hessian(lambda x: (x.sin() * x.prod()).sum(), T(A)),
    lambda m, T: m.hessian(scalar, (T(A), T(B))),
    lambda m, T: m.vjp(pair, (T(B), T(A)), (T(np.ones(2)), T(np.array(2.0)))),
    lambda m, T: m.vjp(scalar, (T(A), T(B))),
    lambda m, T: m.jvp(pair, (T(B), T(A)), (T(np.ones((2, 3))), T(np.ones(3)))),
    lambda m, T: m.hvp(scalar, (T(A), T(B)), (T(np.ones(3)), T(np.ones((2, 3))))),
    lambda m, T: m.vhp(lambda x: (x**4).sum(), T(A), T(np.arange(3.0))),
], ids=["jacobian", "jacobian_tuples", "hessian", "hessian_tuples", "vjp", "vjp_scalar", "jvp", "hvp", "vhp"])
def test_values_shapes_and_nesting_are_pytorchs(call):
    ours, theirs = flat(call(OURS, cr.Tensor)), flat(call(THEIRS, torch.tensor))
    assert [tuple(t.shape) for t in ours] == [tuple(t.shape) for t in theirs]
    for mine, torchs in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine.data, torchs.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_create_graph_results_are_differentiable_again():
    for fn in (lambda m, x: (m.jacobian(lambda v: v.sin() * v[0], x, create_graph=True) ** 2).sum(),
               lambda m, x: m.hessian(lambda v: (v.sin() * v.prod()).sum(), x, create_graph=True).trace()):
        x, t = cr.Tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
        fn(OURS, x).backward()
        fn(THEIRS, t).backward()
        np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match=r"vjp: v can be None only when the function returns one entry"):
        OURS.vjp(lambda v: v * 2, cr.Tensor(A))
