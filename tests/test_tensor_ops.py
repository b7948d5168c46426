"""Every Tensor op: reverse-mode gradients against central finite differences, plus the
conventions (ties, kinks), indexing, joins and numerical stability that need exact cases."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainrule as cr
from chainrule import Tensor
from conftest import check_grads
from op_specs import SPECS, call, draw_inputs

EXAMPLES = int(os.environ.get("CHAINRULE_TEST_EXAMPLES", "15"))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_gradient_matches_finite_differences(spec, data):
    arrays, params = draw_inputs(spec, data)
    check_grads(call(spec, params), *arrays)


def grads_of(fn, *arrays, gradient=None):
    """Gradients of sum(fn(...)) (or of fn(...) with ``gradient``) for each input."""
    xs = [Tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    out = fn(*xs)
    if gradient is None:
        out = out.sum()
    out.backward(gradient)
    return [x.grad.data for x in xs]


# -- ties and kinks: one convention (PyTorch's), documented in the ops' docstrings ------------
@pytest.mark.parametrize("op", [cr.maximum, cr.minimum])
def test_maximum_of_x_with_itself_has_gradient_one(op):
    (g,) = grads_of(lambda x: op(x, x), [-1.5, 0.0, 2.0])
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0])


@pytest.mark.parametrize("op", [cr.maximum, cr.minimum])
def test_maximum_ties_share_the_gradient_equally(op):
    gx, gy = grads_of(op, [1.0, 2.0, 3.0], [1.0, 5.0, -3.0])
    if op is cr.maximum:
        np.testing.assert_array_equal(gx, [0.5, 0.0, 1.0])
        np.testing.assert_array_equal(gy, [0.5, 1.0, 0.0])
    else:
        np.testing.assert_array_equal(gx, [0.5, 1.0, 0.0])
        np.testing.assert_array_equal(gy, [0.5, 0.0, 1.0])


def test_maximum_tie_with_a_broadcast_number():
    (g,) = grads_of(lambda x: cr.maximum(x, 0.0), [-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.5, 1.0])


@pytest.mark.parametrize("name, expected", [("max", [0.0, 0.5, 0.5, 0.0]), ("min", [0.5, 0.0, 0.0, 0.5])])
def test_reduction_ties_share_the_gradient_equally(name, expected):
    (g,) = grads_of(lambda x: getattr(x, name)(), [1.0, 3.0, 3.0, 1.0])
    np.testing.assert_array_equal(g, expected)
    (g,) = grads_of(lambda x: getattr(cr, name)(x), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(g, [1 / 3] * 3)


def test_max_over_an_axis_shares_ties_per_row_and_keeps_dims():
    x = [[1.0, 4.0, 4.0], [2.0, 2.0, 2.0], [5.0, 0.0, 1.0]]
    out = Tensor(x).max(axis=1, keepdims=True)
    assert out.shape == (3, 1)
    (g,) = grads_of(lambda t: t.max(axis=1, keepdims=True), x, gradient=np.array([[1.0], [3.0], [2.0]]))
    np.testing.assert_allclose(g, [[0, 0.5, 0.5], [1.0, 1.0, 1.0], [2.0, 0, 0]])


def test_abs_relu_and_sign_have_zero_derivative_at_zero():
    x = [-2.0, 0.0, 3.0]
    np.testing.assert_array_equal(grads_of(cr.abs, x)[0], [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(grads_of(lambda t: abs(t), x)[0], [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(grads_of(cr.relu, x)[0], [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(grads_of(lambda t: t.relu(), x)[0], [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(grads_of(cr.sign, x)[0], [0.0, 0.0, 0.0])


def test_clip_passes_the_gradient_inside_and_at_its_bounds():
    x = [-3.0, -1.0, 0.0, 1.0, 3.0]
    np.testing.assert_array_equal(grads_of(lambda t: cr.clip(t, -1.0, 1.0), x)[0], [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(grads_of(lambda t: t.clip(-1.0, None), x)[0], [0, 1, 1, 1, 1])
    np.testing.assert_array_equal(grads_of(lambda t: t.clip(None, 1.0), x)[0], [1, 1, 1, 1, 0])


def test_clip_gives_tensor_bounds_their_gradient():
    gx, glo, ghi = grads_of(cr.clip, [-3.0, -1.0, 0.0, 1.0, 3.0], [-1.0] * 5, [1.0] * 5)
    np.testing.assert_array_equal(gx, [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(glo, [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(ghi, [0, 0, 0, 0, 1])
    gx, ghi = grads_of(lambda x, hi: x.clip(None, hi), [0.5, 2.0], 1.0)
    np.testing.assert_array_equal(gx, [1, 0])
    assert ghi.shape == () and ghi == 1.0


def test_conventions_are_documented():
    import chainrule.ops.elementwise as E
    import chainrule.ops.reductions as R

    doc = E.__doc__.lower()
    assert "maximum(x, x)" in doc and "relu" in doc and "abs" in doc and "clip" in doc
    assert "equally" in R.__doc__.lower()


# -- indexing -----------------------------------------------------------------------------------
X = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize(
    "index",
    [
        1,
        -1,
        (1, 2),
        (-1, -2),
        slice(1, None),
        slice(None, None, 2),
        slice(None, None, -1),
        slice(-1, 0, -2),
        (slice(None), slice(None, None, -2)),
        (Ellipsis, 0),
        (None, 1),
        (slice(0, 2), None, -1),
    ],
    ids=repr,
)
def test_basic_indexing_values_and_gradients(index):
    out = Tensor(X)[index]
    np.testing.assert_array_equal(out.data, X[index])
    w = np.random.default_rng(1).normal(size=np.shape(X[index]))
    (g,) = grads_of(lambda t: t[index], X, gradient=w)
    expected = np.zeros_like(X)
    expected[index] = w
    np.testing.assert_array_equal(g, expected)


def test_repeated_integer_indices_add_up():
    for index in ([0, 0, 2, 0, -1], np.array([0, 0, 2, 0, -1]), Tensor(np.array([0, 0, 2, 0, -1]))):
        (g,) = grads_of(lambda t: t[index], [10.0, 20.0, 30.0])
        np.testing.assert_array_equal(g, [3.0, 0.0, 2.0])


def test_repeated_rows_and_2d_index_arrays_add_up():
    idx = np.array([[2, 2], [0, 2]])
    out = Tensor(X)[idx]
    assert out.shape == (2, 2, 4)
    (g,) = grads_of(lambda t: t[idx], X)
    np.testing.assert_array_equal(g, [[1.0] * 4, [0.0] * 4, [3.0] * 4])
    (g,) = grads_of(lambda t: t[np.array([1, 1]), np.array([3, 3])], X)
    assert g[1, 3] == 2.0 and g.sum() == 2.0


@pytest.mark.parametrize("as_tensor", [False, True])
def test_boolean_mask_indexing(as_tensor):
    mask = X % 3 == 0
    index = Tensor(mask) if as_tensor else mask
    out = Tensor(X)[index]
    np.testing.assert_array_equal(out.data, X[mask])
    (g,) = grads_of(lambda t: t[index] * 2.0, X)
    np.testing.assert_array_equal(g, 2.0 * mask)
    row_mask = np.array([True, False, True])
    (g,) = grads_of(lambda t: t[row_mask], X)
    np.testing.assert_array_equal(g, np.repeat(row_mask[:, None], 4, axis=1).astype(float))


def test_mask_from_a_comparison_of_a_tensor():
    x = Tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
    (x[x > 0] ** 2).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [0.0, 4.0, 0.0, 8.0])


def test_iterating_over_a_tensor_yields_differentiable_rows():
    x = Tensor(X, requires_grad=True)
    total = None
    for k, row in enumerate(x):
        total = row.sum() * k if total is None else total + row.sum() * k
    total.backward()
    np.testing.assert_array_equal(x.grad.data, np.repeat([[0.0], [1.0], [2.0]], 4, axis=1))


# -- joining and splitting --------------------------------------------------------------------
def test_concatenate_stack_split_gradients_route_to_their_pieces():
    a, b = np.ones((2, 3)), np.full((2, 2), 2.0)
    out = cr.concatenate([Tensor(a), Tensor(b)], axis=1)
    assert out.shape == (2, 5)
    w = np.arange(10.0).reshape(2, 5)
    ga, gb = grads_of(lambda x, y: cr.concatenate([x, y], axis=-1), a, b, gradient=w)
    np.testing.assert_array_equal(ga, w[:, :3])
    np.testing.assert_array_equal(gb, w[:, 3:])
    w = np.arange(12.0).reshape(2, 2, 3)
    g1, g2 = grads_of(lambda x, y: cr.stack([x, y], axis=1), a, a, gradient=w)
    np.testing.assert_array_equal(g1, w[:, 0])
    np.testing.assert_array_equal(g2, w[:, 1])


def test_split_pieces_and_gradient():
    x = Tensor(np.arange(10.0).reshape(2, 5), requires_grad=True)
    parts = cr.split(x, [1, 3], axis=1)
    assert [p.shape for p in parts] == [(2, 1), (2, 2), (2, 2)]
    (parts[0] * 1.0 + parts[2][:, :1] * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [[1, 0, 0, 3, 0], [1, 0, 0, 3, 0]])
    equal = cr.split(Tensor(np.arange(6.0)), 3)
    assert [p.data.tolist() for p in equal] == [[0, 1], [2, 3], [4, 5]]


@pytest.mark.parametrize("sections", [1, 2, 3, 7, [1, 4], [0, 0, 5]])
def test_numpy_array_split_on_tensors_follows_numpy(sections):
    x = Tensor(np.arange(5.0), requires_grad=True)
    parts = np.array_split(x, sections)
    expected = np.array_split(np.arange(5.0), sections)
    assert [p.data.tolist() for p in parts] == [e.tolist() for e in expected]
    sum((p * float(k + 1)).sum() for k, p in enumerate(parts)).backward()
    np.testing.assert_array_equal(
        x.grad.data, np.concatenate([np.full(len(e), k + 1.0) for k, e in enumerate(expected)])
    )


def test_casting_to_an_integer_dtype_leaves_the_graph():
    x = Tensor([1.7, -2.2], requires_grad=True)
    i = x.astype(np.int64)
    assert i.dtype == np.int64 and not i.requires_grad
    np.testing.assert_array_equal(i.data, [1, -2])
    assert not cr.astype(x, bool).requires_grad
    f = x.astype(np.float32)
    assert f.requires_grad and f.dtype == np.float32
    (f * 2.0 + i).sum().backward()  # the integer copy is a constant
    assert x.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad.data, [2.0, 2.0])


def test_unused_split_pieces_get_zero_gradient():
    (g,) = grads_of(lambda t: cr.split(t, 2)[1], [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0, 1.0])


# -- reductions: shapes with axis / keepdims ----------------------------------------------------
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "var", "std", "logsumexp"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (-1, 0)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_shapes_and_values_follow_numpy(name, axis, keepdims):
    x = np.random.default_rng(3).uniform(0.5, 1.5, size=(2, 3, 4))
    out = getattr(cr, name)(Tensor(x), axis=axis, keepdims=keepdims)
    if name == "logsumexp":
        expected = np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))
    else:
        expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.data, expected, rtol=1e-12)


def test_var_and_std_with_ddof():
    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 9.0]])
    np.testing.assert_allclose(cr.var(Tensor(x), axis=1, ddof=1).data, np.var(x, axis=1, ddof=1))
    np.testing.assert_allclose(cr.std(Tensor(x), ddof=1).data, np.std(x, ddof=1))
    check_grads(lambda t: cr.std(t, axis=0, ddof=1), x)


def test_prod_gradient_with_zero_entries():
    (g,) = grads_of(lambda t: t.prod(), [0.0, 2.0, 3.0])
    np.testing.assert_array_equal(g, [6.0, 0.0, 0.0])
    (g,) = grads_of(lambda t: t.prod(), [0.0, 0.0, 3.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])
    (g,) = grads_of(lambda t: t.prod(axis=1), [[0.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(g, [[2.0, 0.0], [4.0, 3.0]])


# -- softmax family: stable for inputs of +-1e4 --------------------------------------------------
BIG = np.array([[1e4, -1e4, 0.0, 1e4], [-1e4, -1e4, -1e4, -1e4 + 1.0]])


def test_softmax_is_stable_for_huge_inputs():
    p = cr.softmax(Tensor(BIG), axis=-1).data
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p[0], [0.5, 0.0, 0.0, 0.5])
    e = np.exp(1.0)
    np.testing.assert_allclose(p[1], [1 / (3 + e)] * 3 + [e / (3 + e)])
    np.testing.assert_allclose(p.sum(axis=-1), 1.0)


def test_log_softmax_and_logsumexp_are_stable_for_huge_inputs():
    lse = cr.logsumexp(Tensor(BIG), axis=1).data
    np.testing.assert_allclose(lse, [1e4 + np.log(2.0), -1e4 + 1.0 + np.log(3 * np.exp(-1.0) + 1.0)])
    ls = cr.log_softmax(Tensor(BIG), axis=1).data
    np.testing.assert_allclose(ls, BIG - lse[:, None])
    assert np.all(np.isfinite(ls))
    np.testing.assert_allclose(cr.logsumexp(Tensor([1e4, 1e4])).item(), 1e4 + np.log(2.0))
    np.testing.assert_allclose(cr.logsumexp(Tensor([-1e4, -1e4])).item(), -1e4 + np.log(2.0))


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "logsumexp"])
def test_softmax_family_gradients_are_finite_and_right_at_1e4(op):
    w = np.arange(8.0).reshape(2, 4)
    fn = (lambda t: cr.logsumexp(t, axis=1, keepdims=True)) if op == "logsumexp" else getattr(cr, op)
    gw = w[:, :1] if op == "logsumexp" else w
    (g,) = grads_of(fn, BIG, gradient=gw)
    assert np.all(np.isfinite(g))
    p = np.exp(BIG - np.max(BIG, axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    if op == "softmax":
        expected = p * (gw - (gw * p).sum(axis=1, keepdims=True))
    elif op == "log_softmax":
        expected = gw - p * gw.sum(axis=1, keepdims=True)
    else:
        expected = gw * p
    np.testing.assert_allclose(g, expected, atol=1e-12)


def test_sigmoid_is_stable_for_huge_inputs():
    x = Tensor([-1e4, 0.0, 1e4], requires_grad=True)
    y = cr.sigmoid(x)
    np.testing.assert_array_equal(y.data, [0.0, 0.5, 1.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [0.0, 0.25, 0.0])


# -- contractions -------------------------------------------------------------------------------
def test_batched_matmul_broadcasts_batch_dimensions():
    a = np.random.default_rng(0).normal(size=(2, 1, 3, 4))
    b = np.random.default_rng(1).normal(size=(5, 4, 2))
    out = Tensor(a) @ Tensor(b)
    assert out.shape == (2, 5, 3, 2)
    np.testing.assert_allclose(out.data, a @ b)
    check_grads(lambda x, y: x @ y, a, b)


def test_einsum_dot_outer_tensordot_values():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    np.testing.assert_allclose(cr.einsum("ij,jk->ik", Tensor(a), Tensor(b)).data, a @ b)
    np.testing.assert_allclose(cr.dot(Tensor(a), Tensor(b)).data, np.dot(a, b))
    np.testing.assert_allclose(cr.outer(Tensor(a[0]), Tensor(b[0])).data, np.outer(a[0], b[0]))
    np.testing.assert_allclose(cr.tensordot(Tensor(a), Tensor(b), axes=1).data, np.tensordot(a, b, axes=1))
    np.testing.assert_allclose(np.einsum("ij,jk->ik", Tensor(a), Tensor(b)).data, a @ b)


def test_einsum_with_a_repeated_subscript_trace_and_diagonal():
    a = np.arange(9.0).reshape(3, 3)
    assert cr.einsum("ii->", Tensor(a)).item() == np.trace(a)
    np.testing.assert_array_equal(cr.einsum("ii->i", Tensor(a)).data, np.diag(a))
    (g,) = grads_of(lambda t: cr.einsum("ii->", t), a)
    np.testing.assert_array_equal(g, np.eye(3))
    (g,) = grads_of(lambda t: cr.einsum("ii->i", t), a, gradient=np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g, np.diag([1.0, 2.0, 3.0]))
    check_grads(lambda x, y: cr.einsum("iij,jk->ik", x, y), np.ones((2, 2, 3)) * 0.5, np.arange(12.0).reshape(3, 4))


# -- NumPy functions dispatch to chainrule ------------------------------------------------------
def test_numpy_functions_on_tensors_are_differentiable():
    x = Tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = np.sum(np.exp(x) * np.maximum(x, 1.0))
    assert isinstance(y, Tensor)
    y.backward()
    xs, e = x.data, np.exp(x.data)
    np.testing.assert_allclose(x.grad.data, e * np.maximum(xs, 1.0) + e * (xs > 1) + 0.5 * e * (xs == 1))
