"""NumPy spellings and functions that used to fail on Tensors: each gives NumPy's value and a gradient
(the registry cases in op_cases.NUMPY_GAPS check their derivatives by finite differences, both modes,
second order; here: values against NumPy, the errors, and the oracles)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp

RNG = np.random.default_rng(11)
A = RNG.normal(size=(2, 3))
B = RNG.normal(size=(3, 4))
V = RNG.normal(size=3)


def T(x, rg=False):
    return cr.Tensor(x, requires_grad=rg)


def test_concatenate_vstack_and_row_stack_take_numpy_arguments():
    np.testing.assert_array_equal(np.concatenate((T(A), T(A)), 1).data, np.concatenate((A, A), 1))
    np.testing.assert_array_equal(np.concatenate((T(A), A), 0, dtype=np.float32).data,
                                  np.concatenate((A, A), 0, dtype=np.float32))
    assert np.concatenate((T(A), A), 0, dtype=np.float32).dtype == np.float32
    np.testing.assert_array_equal(np.vstack((T(V), V), dtype=None).data, np.vstack((V, V)))
    if hasattr(np, "row_stack"):  # NumPy 2 keeps it (deprecated), passing dtype=None on to vstack
        with pytest.warns(DeprecationWarning):
            np.testing.assert_array_equal(np.row_stack((T(V), V)).data, np.vstack((V, V)))
    with pytest.raises(TypeError, match="concatenate: the 'out' argument is not supported"):
        np.concatenate((T(A), A), 0, np.empty((4, 3)))


def test_einsum_sublist_form():
    np.testing.assert_allclose(np.einsum(T(A), [0, 1], [1, 0]).data, A.T)
    np.testing.assert_allclose(np.einsum(T(A), [0, 1], B, [1, 2], [0, 2]).data, A @ B)
    np.testing.assert_allclose(np.einsum(T(A), [Ellipsis, 1], B, [1, 2]).data, np.einsum(A, [Ellipsis, 1], B, [1, 2]))
    g = cr.grad(lambda a: np.sum(np.einsum(a, [0, 1], B, [1, 2], [0, 2]) ** 2))(A)
    np.testing.assert_allclose(g, 2 * (A @ B) @ B.T)
    with pytest.raises(ValueError, match="einsum: a sublist holds integers"):
        np.einsum(T(A), [0, "x"])


def test_cnp_reads_lists_of_traced_values():
    x, y = T(V, True), T(2 * V, True)
    m = cnp.mean([x, y])
    assert isinstance(m, cr.Tensor) and m.requires_grad
    np.testing.assert_allclose(m.data, np.mean([V, 2 * V]))
    np.testing.assert_allclose(cnp.append([x, y], x).data, np.append([V, 2 * V], V))
    g = cr.grad(lambda v: cnp.sum([v[0] * v[1], cnp.max([v[2], 0.0])]))(np.array([2.0, 3.0, 4.0]))
    np.testing.assert_allclose(g, [3.0, 2.0, 1.0])
    # functions that take a sequence of arrays keep doing so (shapes need not match)
    np.testing.assert_allclose(cnp.concatenate([x, T(A[0, :2])]).data, np.concatenate([V, A[0, :2]]))


def test_r_and_c_join_tensors_as_numpy_does():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([[1.0, 2.0], [3.0, 4.0]])  # noqa: F841  (used in the eval strings)
    for expr in ["r_[X, 0:3, 5.0, X]", "c_[X, X]", "c_[Y, Y]", "r_['1,2,0', X, X]", "r_['0,2', X, X]",
                 "r_['-1', Y, Y]", "c_[X, 0:3]"]:
        want = eval("np." + expr.replace("X", "a").replace("Y", "b"))
        got = eval("cnp." + expr.replace("X", "T(a)").replace("Y", "T(b)"))
        np.testing.assert_array_equal(got.data, want, err_msg=expr)
    np.testing.assert_array_equal(cnp.r_[1:4, 7], np.r_[1:4, 7])  # no Tensor: NumPy's own
    g = cr.grad(lambda v: np.sum(cnp.c_[v, v ** 2] * np.array([1.0, 10.0])))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [21.0, 41.0])
    with pytest.raises(NotImplementedError, match="cnp.r_: only the 'axis"):
        cnp.r_["r", T(a)]


@pytest.mark.parametrize("num, endpoint, axis", [(5, True, 0), (4, False, -1), (1, True, 0), (0, True, 0)])
def test_linspace_values_and_endpoint_derivatives(num, endpoint, axis):
    lo, hi = np.array([0.5, -1.0]), np.array([[2.0], [3.0], [4.0]])
    got, step = np.linspace(T(lo), T(hi), num, endpoint=endpoint, axis=axis, retstep=True)
    want, wstep = np.linspace(lo, hi, num, endpoint=endpoint, axis=axis, retstep=True)
    np.testing.assert_array_equal(got.data, want)
    np.testing.assert_array_equal(step.data, wstep)
    if num > 1:
        t = np.arange(num) / (num - 1 if endpoint else num)
        gl, gh = cr.grad(lambda a, b: np.sum(np.linspace(a, b, num, endpoint=endpoint)), argnums=(0, 1))(0.5, 2.0)
        assert gl == pytest.approx(np.sum(1 - t)) and gh == pytest.approx(np.sum(t))


def test_gradient_matches_numpy():
    f = RNG.normal(size=(4, 5))
    x = np.array([0.0, 0.3, 1.0, 1.2, 2.0])
    for args, kw in [((), {}), ((0.5,), {"edge_order": 2}), ((x,), {"axis": 1}), ((x,), {"axis": -1, "edge_order": 2}),
                     ((1.0, x), {}), ((), {"axis": (1, 0)})]:
        got, want = np.gradient(T(f), *args, **kw), np.gradient(f, *args, **kw)
        for g, w in zip(got if isinstance(got, tuple) else [got], want if isinstance(want, tuple) else [want]):
            np.testing.assert_allclose(g.data, w, rtol=1e-12, atol=1e-12, err_msg=str((args, kw)))
    with pytest.raises(ValueError, match="too short for edge_order=2"):
        np.gradient(T(np.ones(2)), edge_order=2)


def test_partition_matches_numpy_and_routes_gradients():
    x = RNG.permutation(np.arange(7.0))
    np.testing.assert_array_equal(np.partition(T(x), 3).data, np.partition(x, 3))
    np.testing.assert_array_equal(np.partition(T(x), (1, 5)).data, np.partition(x, (1, 5)))
    g = cr.grad(lambda v: np.partition(v, 3)[3])(x)  # the median entry gets the gradient
    assert g[np.argsort(x)[3]] == 1.0 and g.sum() == 1.0


def test_piecewise_evaluates_each_function_only_where_it_applies():
    x = np.array([-2.0, -0.5, 0.5, 3.0])
    f = lambda v: np.piecewise(v, [v < 0, v > 1], [lambda u: u ** 2, np.sqrt, 7.0])  # noqa: E731
    np.testing.assert_array_equal(f(T(x)).data, np.piecewise(x, [x < 0, x > 1], [lambda u: u ** 2, np.sqrt, 7.0]))
    g = cr.grad(lambda v: np.sum(np.piecewise(v, [np.asarray(v) < 0 if not isinstance(v, cr.Tensor) else v.data < 0],
                                              [lambda u: np.sqrt(-u), lambda u: u])))(x)
    assert np.all(np.isfinite(g))  # sqrt(-u) is never evaluated (nor differentiated) at u > 0
    np.testing.assert_allclose(g, [-0.5 / np.sqrt(2.0), -0.5 / np.sqrt(0.5), 1.0, 1.0])


def test_apply_along_axis_matches_numpy():
    x = RNG.normal(size=(2, 3, 4))
    for axis, fn in [(0, np.sum), (1, lambda v: v[::-1] * v[0]), (-1, lambda v: np.outer(v, v[:2]))]:
        np.testing.assert_allclose(np.apply_along_axis(fn, axis, T(x)).data, np.apply_along_axis(fn, axis, x))


def test_add_at():
    x = np.zeros(4)
    np.testing.assert_array_equal(cr.add_at(x, [0, 0, 3], np.array([1.0, 2.0, 3.0])).data, [3.0, 0.0, 0.0, 3.0])
    t = T(np.zeros(3))
    np.add.at(t, [0, 0, 2], 1.0)  # an untraced Tensor changes in place, as an ndarray would
    np.testing.assert_array_equal(t.data, [2.0, 0.0, 1.0])
    with pytest.raises(TypeError, match=r"numpy.add.at changes its first argument in place.*chainrule.add_at"):
        cr.grad(lambda v: np.add.at(np.zeros(3), [0], v))(np.array([1.0]))
    g = cr.grad(lambda x, v: np.sum(cr.add_at(x, [0, 0, 2], v) ** 2), argnums=(0, 1))(np.ones(3), np.ones(3))
    np.testing.assert_allclose(g[0], [6.0, 2.0, 4.0])
    np.testing.assert_allclose(g[1], [6.0, 6.0, 4.0])


def test_eig_values_and_vectors_match_numpy():
    a = np.array([[0.3, -1.5, 0.2], [1.2, 0.1, 0.0], [0.0, 0.4, 2.5]])
    w, v = np.linalg.eig(T(a))
    ww, wv = np.linalg.eig(a)
    np.testing.assert_allclose(w.data, ww)
    np.testing.assert_allclose(v.data, wv)
    np.testing.assert_allclose(np.linalg.eigvals(T(a)).data, ww)
    assert cr.gradcheck(lambda a: np.linalg.eig(a)[1], a + 0.3j * RNG.normal(size=(3, 3)), order=1)


@pytest.mark.oracle
def test_eig_against_jax():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'jax[cpu]')")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    a = np.array([[0.3, -1.5, 0.2], [1.2, 0.1, 0.0], [0.0, 0.4, 2.5]])
    u = RNG.normal(size=3) + 1j * RNG.normal(size=3)

    def jax_eig(a):  # JAX differentiates eigenvectors only when asked to
        return jax.lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)

    def loss(m, eig):
        return lambda a: m.real(m.sum(u * eig(a)[0])) + m.sum(m.abs(eig(a)[1]) ** 2 * a)

    np.testing.assert_allclose(cr.grad(loss(np, np.linalg.eig))(a), jax.grad(loss(jnp, jax_eig))(a), rtol=1e-9,
                               atol=1e-11)


@pytest.mark.oracle
def test_linspace_gradient_against_torch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    f = RNG.normal(size=(3, 5))
    t = torch.tensor(f, requires_grad=True)
    w = RNG.normal(size=(3, 5))
    (torch.gradient(t, spacing=0.5, dim=1, edge_order=2)[0] * torch.tensor(w)).sum().backward()
    ours = cr.grad(lambda f: np.sum(np.gradient(f, 0.5, axis=1, edge_order=2) * w))(f)
    np.testing.assert_allclose(ours, t.grad.numpy(), rtol=1e-12)


def test_jvp_raises_on_an_assignment_into_its_input_as_grad_does():
    def f(x):
        x[0] = 5.0
        return x * 2.0

    x = np.array([1.0, 2.0])
    with pytest.raises(RuntimeError, match="__setitem__: in-place change of a Tensor being differentiated"):
        cr.grad(lambda x: np.sum(f(x)))(x)
    with pytest.raises(RuntimeError, match="__setitem__: in-place change of a tensor carrying a forward-mode tangent"):
        cr.jvp(f, (x,), (np.ones(2),))
    with pytest.raises(RuntimeError, match="add_: in-place change"):
        cr.jvp(lambda x: x.add_(1.0), (x,), (np.ones(2),))
    # an untraced copy can still be changed
    out = cr.jvp(lambda x: (lambda c: (c.__setitem__(0, 5.0), c)[1])(np.array([1.0, 2.0])) * x, (x,), (np.ones(2),))
    np.testing.assert_array_equal(out[1], [5.0, 2.0])


def test_nan_quantiles_of_an_all_nan_row_are_nan_with_numpys_warning():
    d = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    for fn in (lambda a: np.nanmedian(a, axis=1), lambda a: np.nanquantile(a, [0.25, 0.5], axis=1),
               lambda a: np.nanpercentile(a[1], 50), lambda a: np.nanmedian(a[1])):
        with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
            want = fn(d)
        with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
            got = fn(T(d))
        np.testing.assert_allclose(got.data, want)  # (it raised "cannot take a quantile of an empty axis")
