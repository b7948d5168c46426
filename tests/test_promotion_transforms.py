"""PyTorch's type promotion (ops/promoting.py) is the same in eager calls, jit traces and replays, vmap and forward
mode, gradients keep each leaf's dtype, and transforms called on NumPy values keep NumPy's rule."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule.scalar import Scalar


def _mixed(x, i, s):
    """float32 with int64, a 0-d float64, a NumPy float64 scalar, true division of ints and sqrt of ints."""
    return (x + i) * s / 2 + cr.sqrt(i) + x * np.float64(2.0) + i / 2 + cr.where(i > 0, x, s)


def _args():
    x = cr.tensor(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
    return x, cr.tensor(np.arange(3)), cr.tensor(np.float64(1.5))


def test_eager_gives_pytorchs_dtypes_and_values():
    torch = pytest.importorskip("torch")
    x, i, s = _args()
    tx, ti, ts = torch.tensor(x._data), torch.tensor(i._data), torch.tensor(s._data)
    want = (tx + ti) * ts / 2 + torch.sqrt(ti) + tx * 2.0 + ti / 2 + torch.where(ti > 0, tx, ts)
    got = _mixed(x, i, s)
    assert got.dtype == want.numpy().dtype == np.float32
    np.testing.assert_allclose(got._data, want.numpy(), rtol=1e-6)


def test_jit_trace_and_replay_give_the_eager_dtype():
    x, i, s = _args()
    eager = _mixed(x, i, s)
    f = cr.jit(_mixed)
    for _ in range(3):  # the trace, then replays
        out = f(x, i, s)
        assert out.dtype == eager.dtype == np.float32
        np.testing.assert_allclose(out._data, eager._data, rtol=1e-6)


def test_vmap_promotes_as_one_example_would():
    # one example's s is 0-d (the batch's is 1-d): PyTorch keeps float32 for a 0-d float64, so must the batch
    x = cr.tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    s = cr.tensor(np.linspace(1.0, 2.0, 4))
    i = cr.tensor(np.arange(3))
    out = cr.vmap(_mixed, in_axes=(0, None, 0))(x, i, s)
    rows = [_mixed(x[k], i, s[k]) for k in range(4)]
    assert out.dtype == rows[0].dtype == np.float32
    np.testing.assert_allclose(out._data, np.stack([r._data for r in rows]), rtol=1e-6)


def test_jvp_tangent_has_the_primal_dtype():
    x, i, s = _args()
    primal, tangent = cr.jvp(lambda x: _mixed(x, i, s), (x,), (cr.tensor(np.ones(3, np.float32)),))
    assert primal.dtype == tangent.dtype == _mixed(x, i, s).dtype == np.float32


def test_jit_of_vmap_and_grad_of_jit_agree_with_eager():
    x, i, s = _args()
    eager = cr.grad(lambda x: _mixed(x, i, s).sum())(x)
    jitted = cr.grad(lambda x: cr.jit(_mixed)(x, i, s).sum())(x)
    assert eager.dtype == jitted.dtype == np.float32
    np.testing.assert_allclose(np.asarray(eager), np.asarray(jitted), rtol=1e-6)
    xb = cr.tensor(np.ones((2, 3), np.float32))
    sb = cr.tensor(np.array([1.0, 2.0]))
    out = cr.jit(cr.vmap(_mixed, in_axes=(0, None, 0)))(xb, i, sb)
    assert out.dtype == np.float32


@pytest.mark.oracle
def test_a_leafs_gradient_has_its_dtype_as_in_pytorch():
    torch = pytest.importorskip("torch")
    x = cr.tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    y = cr.tensor(np.array([3.0, 4.0], np.float64), requires_grad=True)
    z = cr.tensor(np.float64(2.0), requires_grad=True)
    (x * y + x * z).sum().backward()
    tx = torch.tensor(x._data, requires_grad=True)
    ty = torch.tensor(y._data, requires_grad=True)
    tz = torch.tensor(z._data, requires_grad=True)
    (tx * ty + tx * tz).sum().backward()
    for ours, theirs in ((x, tx), (y, ty), (z, tz)):
        assert ours.grad.dtype == theirs.grad.numpy().dtype
        np.testing.assert_allclose(ours.grad._data, theirs.grad.numpy(), rtol=1e-6)


def test_complex_and_bool_follow_pytorch():
    b = cr.tensor(np.array([True, False]))
    f = cr.tensor(np.array([1.0, 2.0], np.float32))
    assert (b + b).dtype == np.bool_
    assert (b + 1).dtype == np.int64
    assert (b * 2.5).dtype == np.float32
    assert (f * 1j).dtype == np.complex64
    assert (f + cr.tensor(np.array([1j, 2j]))).dtype == np.complex128  # a dimensioned complex128 decides
    assert (cr.tensor(np.array([1j, 2j], np.complex64)) + np.float64(1.0)).dtype == np.complex64


def test_numpy_dispatch_with_a_tensor_promotes_as_pytorch():
    f = cr.tensor(np.ones(3, np.float32))
    assert np.add(f, np.arange(3)).dtype == np.float32
    assert np.multiply(np.arange(3), f).dtype == np.float32


def test_numpy_values_alone_keep_numpys_rule_in_plain_calls_and_transforms():
    def f(x):
        return (x * np.arange(3) + np.sqrt(np.arange(3))).sum()

    x = np.ones(3, np.float32)
    assert cr.multiply(x, np.arange(3)).dtype == np.float64  # NumPy 2's rule: no Tensor here
    value, grad = cr.value_and_grad(f)(x)
    assert value == f(x)  # computed as the plain NumPy call computes it (float64)
    assert cr.jit(lambda x: x * np.arange(3))(x).dtype == np.float64
    assert cr.vmap(lambda x: x * np.arange(3))(np.ones((2, 3), np.float32)).dtype == np.float64


def test_scalars_are_untouched():
    s = Scalar(2.0)
    assert (s * 3 + 1).data == 7.0


def test_same_dtypes_take_no_cast():
    x = cr.tensor(np.ones(3, np.float32), requires_grad=True)
    y = x * 2.0 + x
    assert y._node.prim.name == "add" and y._node.parents[0][1].prim.name == "multiply"


def test_jit_step_trains_as_the_eager_step_with_mixed_dtypes():
    def run(jit):
        model = cr.nn.Linear(3, 2, rng=0)
        opt = cr.optim.SGD(model.parameters(), lr=0.1)
        i, s = cr.tensor(np.array([1, 2])), cr.tensor(np.float64(0.5))

        def loss(x):
            return ((model(x) * i + s) / 2).sum() + (model(x) - i).pow(2).mean()

        step = cr.jit_step(loss, opt) if jit else None
        x = cr.tensor(np.ones((4, 3), np.float32))
        for _ in range(3):
            if jit:
                out = step(x)
            else:
                opt.zero_grad()
                out = loss(x)
                out.backward()
                opt.step()
        assert out.dtype == model.weight.dtype == np.float32
        return float(out), model.weight._data.copy()

    (eager_loss, eager_w), (jit_loss, jit_w) = run(False), run(True)
    assert eager_loss == pytest.approx(jit_loss, rel=1e-6)
    np.testing.assert_allclose(eager_w, jit_w, rtol=1e-6)


def test_jacfwd_and_vmap_of_grad_keep_float32():
    i = cr.tensor(np.arange(3))
    x = cr.tensor(np.ones(3, np.float32))
    assert cr.jacfwd(lambda x: x * i / 2)(x).dtype == np.float32
    xs = cr.tensor(np.ones((2, 3), np.float32))
    assert cr.vmap(cr.grad(lambda x: (x * i * cr.tensor(np.float64(2.0))).sum()))(xs).dtype == np.float32
