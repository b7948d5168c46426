"""Gradients of slices stay sparse until they meet (no full-size zeros per slice), with the same
values as dense ones, and never alias a user's arrays."""

from __future__ import annotations

import tracemalloc

import numpy as np

import chainrule as cr
from chainrule.autodiff.backprop import grad
from chainrule.core.sparse import SliceGrad


def qkv_loss(x):
    q, k, v = x[:, :4], x[:, 4:8], x[:, 8:]
    return (q * 2.0 + k * k + cr.tanh(v)).sum()


def test_slice_gradients_equal_the_dense_formula():
    x0 = np.random.default_rng(0).standard_normal((3, 12))
    x = cr.Tensor(x0, requires_grad=True)
    qkv_loss(x).backward()
    want = np.concatenate([np.full((3, 4), 2.0), 2 * x0[:, 4:8], 1 - np.tanh(x0[:, 8:]) ** 2], axis=1)
    assert np.array_equal(x.grad.data, want)


def test_overlapping_and_repeated_slices_add_up():
    x = cr.Tensor(np.arange(6.0), requires_grad=True)
    (x[1:4].sum() + (x[2:5] * 3.0).sum() + x[2] + x[...].sum()).backward()
    assert x.grad.data.tolist() == [1.0, 2.0, 6.0, 5.0, 4.0, 1.0]


def test_a_slice_gradient_meets_a_dense_one_in_either_order():
    x0 = np.array([1.0, 2.0, 3.0])
    for f in (lambda x: (x * x).sum() + x[1:].sum(), lambda x: x[1:].sum() + (x * x).sum()):
        x = cr.Tensor(x0, requires_grad=True)
        f(x).backward()
        assert x.grad.data.tolist() == [2.0, 5.0, 7.0]


def test_the_leaf_gradient_is_its_own_array():
    """Neither the caller's output gradient nor a buffer of the engine shows through .grad."""
    x = cr.Tensor(np.zeros(4), requires_grad=True)
    seed = np.ones(2)
    x[1:3].backward(gradient=seed)
    assert x.grad.data.tolist() == [0.0, 1.0, 1.0, 0.0]
    assert x.grad._data.flags.writeable and not np.shares_memory(x.grad._data, seed)
    seed[:] = 5.0
    assert x.grad.data.tolist() == [0.0, 1.0, 1.0, 0.0]
    x.grad.data[:] = 7.0
    assert seed.tolist() == [5.0, 5.0]
    x[1:3].backward(gradient=np.ones(2))  # a second backward accumulates into .grad, not into an old buffer
    assert x.grad.data.tolist() == [7.0, 8.0, 8.0, 7.0]


def test_gradients_returned_by_grad_are_fresh_arrays():
    x = cr.Tensor(np.ones(3), requires_grad=True)
    (g,) = grad(x[:2].sum() + x[1:].sum(), x)
    assert g.data.tolist() == [1.0, 2.0, 1.0] and g._data.flags.writeable


def test_second_order_through_slices():
    x = cr.Tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    y = (x[:2] ** 3).sum() + (x[1:] ** 2).sum()
    (g,) = grad(y, x, create_graph=True)
    (h,) = grad(g.sum(), x)
    assert h.data.tolist() == [6 * 0.5, 6 * -1.0 + 2.0, 2.0]


def test_slices_do_not_allocate_a_full_array_each():
    x = cr.Tensor(np.random.default_rng(0).standard_normal((100, 3000)), requires_grad=True)
    loss = qkv_loss_wide(x)
    tracemalloc.start()
    try:
        loss.backward()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    full = x._data.nbytes
    assert peak < 2.2 * full, f"backward peaked at {peak / full:.1f} full-size arrays"  # dense: about 3.7


def qkv_loss_wide(x):
    q, k, v = x[:, :1000], x[:, 1000:2000], x[:, 2000:]
    return (q * 2.0 + k * 3.0 + v).sum()


def test_slice_grad_adds_like_dense_arrays():
    a = SliceGrad((4,), np.dtype(float), [(slice(0, 2), np.array([1.0, 2.0]))])
    b = SliceGrad((4,), np.dtype(float), [(slice(1, 3), np.array([10.0, 20.0]))])
    dense = np.array([100.0, 200.0, 300.0, 400.0])
    assert (a + b).dense().tolist() == [1.0, 12.0, 20.0, 0.0]
    assert (dense + a).tolist() == [101.0, 202.0, 300.0, 400.0]
    assert (a + dense).tolist() == [101.0, 202.0, 300.0, 400.0]
    assert dense.tolist() == [100.0, 200.0, 300.0, 400.0]  # never written into
