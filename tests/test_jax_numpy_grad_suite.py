"""JAX's gradient tests of its NumPy namespace, run on chainrule through NumPy dispatch.

How the differences were found: the op records of JAX's tests/lax_numpy_operators_test.py, lax_numpy_test.py
(GRAD_TEST_RECORDS, GRAD_SPECIAL_VALUE_TEST_RECORDS and the gradient tests after them),
lax_numpy_reducers_test.py (every axis, negative ones and None, keepdims, initial=, where=, empty arrays),
linalg_test.py and lax_scipy_special_functions_test.py (jax v0.10.2) were replayed by a script on ``np.<name>(tensor)``
and on ``jax.numpy.<name>`` (x64), comparing the value (NumPy's is the reference), ``vjp``, ``jvp`` and the four
second-order compositions (vjp of vjp, jvp of vjp, jvp of jvp), as ``check_grads(f, args, order=2,
modes=["fwd", "rev"])`` does. Each test below pins one difference found, with the expected values written out;
the ``oracle`` tests compare with JAX where it is installed.

Left as they are, on purpose (chainrule follows NumPy's function or PyTorch's convention where JAX differs):
``np.linalg.cholesky``/``eigh``/``eigvalsh`` differentiate the triangle NumPy reads (JAX symmetrizes its input, as
``chainrule.linalg``'s spelling does), ties of
``fmax``/``fmin``/``clip`` go to the first argument/the input (PyTorch's), ``abs`` and ``std`` have gradient 0 at
their kinks, ``xlogy(0, y)`` has gradient 0 in ``x`` (PyTorch's), entries that ``where=`` leaves out get gradient 0
(JAX: NaN where no entry of the slice is taken). Where JAX itself is off, chainrule keeps the exact value: ``i0'(0)`` is
0 and ``i1''(0)`` is 0 (JAX's differ), ``d logaddexp(inf, y) / dy`` is 0, ``log_ndtr``'s second derivative far in the
left tail matches mpmath to 1e-11 (JAX's to 1e-7).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule as cr


def _jax():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'jax[cpu]'; the dev extra has it)")
    jax.config.update("jax_enable_x64", True)
    return jax


def _second_order(f, x, t):
    """vjp, jvp, and the second-order compositions of ``f`` at ``x`` along ``t`` (the cotangent: ones)."""
    out = f(x)
    w = np.ones(np.shape(out))
    g = lambda y: cr.vjp(f, y)[1](w)[0]  # noqa: E731
    return {"rev": g(x), "fwd": cr.jvp(f, (x,), (t,))[1], "rev_rev": cr.vjp(g, x)[1](t)[0],
            "fwd_rev": cr.jvp(g, (x,), (t,))[1],
            "fwd_fwd": cr.jvp(lambda y: cr.jvp(f, (y,), (t,))[1], (x,), (t,))[1]}


# -- take_along_axis: the index broadcasts against the array (NumpyGradTests.testTakeAlongAxisIssue1521) ----------
def test_take_along_axis_broadcasts_the_index_as_numpy():
    idx = np.repeat(np.arange(3), 10).reshape((30, 1))

    def f(x):
        return np.take_along_axis(x * np.arange(3.0).reshape((1, 3)), idx, -1).sum()

    assert cr.grad(f)(1.0) == 30.0  # was an IndexError from getitem
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(np.take_along_axis(cr.Tensor(x), np.array([[0, 2]]), 1)),
                                  np.take_along_axis(x, np.array([[0, 2]]), 1))
    g = cr.grad(lambda x: np.take_along_axis(x, np.array([[1], [0], [1]]), 1).sum())(np.ones((1, 2)))
    assert g.tolist() == [[1.0, 2.0]]
    # axis=None: of the flattened array (was a TypeError)
    assert np.asarray(np.take_along_axis(cr.Tensor(x), np.array([0, 11, 11]), None)).tolist() == [0.0, 11.0, 11.0]
    with pytest.raises(ValueError, match=r"take_along_axis: indices of shape \(2,\) for a tensor of shape \(3, 4\)"):
        np.take_along_axis(cr.Tensor(x), np.array([0, 1]), 1)


# -- reductions over an empty axis (JAX_REDUCER_RECORDS, JAX_REDUCER_INITIAL_RECORDS on shapes (0, 4), (3, 0)) -----
@pytest.mark.parametrize("name", ["prod", "nanprod"])
def test_prod_over_an_empty_axis_has_empty_gradients(name):
    f = lambda x: np.sum(getattr(np, name)(x, axis=1) * 2.0)  # noqa: E731
    assert np.asarray(getattr(np, name)(cr.Tensor(np.ones((0, 4))), axis=1)).shape == (0,)
    for x in (np.ones((0, 4)), np.ones((3, 0))):  # was a reshape ValueError in every derivative
        d = _second_order(lambda y: getattr(np, name)(y, axis=1), x, np.ones_like(x))
        assert d["rev"].shape == x.shape and d["rev_rev"].shape == x.shape
        assert d["fwd"].shape == d["fwd_fwd"].shape == (x.shape[0],)
    assert cr.grad(f)(np.ones((3, 0))).shape == (3, 0)


@pytest.mark.parametrize("name", ["max", "min", "nanmax", "nanmin"])
def test_max_with_initial_over_an_empty_axis_keeps_numpy_shape(name):
    x = np.ones((0, 4))
    for axis, keepdims in [(0, False), (-1, False), (0, True), (None, False)]:
        ours = getattr(np, name)(cr.Tensor(x), axis=axis, keepdims=keepdims, initial=0.5)
        expected = getattr(np, name)(x, axis=axis, keepdims=keepdims, initial=0.5)
        assert np.shape(ours) == expected.shape  # was () for every axis
        np.testing.assert_array_equal(np.asarray(ours), expected)
    g = cr.grad(lambda i: np.sum(np.max(cr.Tensor(np.ones((0, 4))), axis=0, initial=i)))(0.5)
    assert g == 4.0


# -- nanmax / nanmin of an all-NaN slice: NaN, as NumPy (JAX_REDUCER_NO_DTYPE_RECORDS, rand_some_nan) -------------
@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
def test_nan_extremes_of_an_all_nan_slice_are_nan(name):
    x = np.array([[np.nan, np.nan], [1.0, np.nan], [2.0, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = getattr(np, name)(x, axis=1)
        with pytest.warns(RuntimeWarning, match="All-NaN slice"):
            ours = np.asarray(getattr(np, name)(cr.Tensor(x), axis=1))
        np.testing.assert_array_equal(ours, expected)  # was -inf / inf in the first row
        g = cr.grad(lambda y: np.nansum(getattr(np, name)(y, axis=1)))(x)
    assert g.tolist() == [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0] if name == "nanmax" else [1.0, 0.0]]


# -- where= and initial= of the reductions (JAX_REDUCER_INITIAL_RECORDS, JAX_REDUCER_WHERE_NO_INITIAL_RECORDS) -----
WHERE = np.array([[True, False, True, True], [False, True, True, True], [True, True, False, True]])
X = np.array([[1.0, np.nan, 3.0, -2.0], [0.5, 2.0, np.nan, 4.0], [-1.0, 1.5, 2.5, np.nan]])


@pytest.mark.parametrize("name, kw", [
    ("nansum", {"initial": 1.5}), ("nanprod", {"initial": 1.5}), ("nanmax", {"initial": 0.5}),
    ("nanmin", {"initial": 0.5}), ("nansum", {"where": WHERE}), ("nanprod", {"where": WHERE}),
    ("nanmean", {"where": WHERE}), ("nanvar", {"where": WHERE}), ("nanstd", {"where": WHERE}),
    ("nanmax", {"where": WHERE, "initial": -9.0}), ("var", {"where": WHERE}), ("std", {"where": WHERE}),
    ("var", {"where": WHERE, "ddof": 1}),
])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_reduction_keywords_follow_numpy(name, kw, axis):
    x = X if name.startswith("nan") else np.nan_to_num(X, nan=0.25)
    ours = getattr(np, name)(cr.Tensor(x), axis=axis, **kw)  # was a TypeError naming the keyword
    np.testing.assert_allclose(np.asarray(ours), getattr(np, name)(x, axis=axis, **kw), rtol=1e-12)
    # the gradient against central differences of NumPy's own function (NaN entries get none)
    f = lambda y: np.sum(getattr(np, name)(y, axis=axis, **kw) * np.arange(1.0, 1.0 + np.size(ours)).reshape(  # noqa
        np.shape(ours)))
    g = cr.grad(f)(x)
    fd = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        if np.isnan(x[i]):
            continue
        e = np.zeros_like(x)
        e[i] = 1e-6
        fd[i] = (f(x + e) - f(x - e)) / 2e-6
    np.testing.assert_allclose(np.nan_to_num(g), fd, atol=1e-6)


@pytest.mark.oracle
@pytest.mark.parametrize("name, kw", [("var", {"where": WHERE}), ("std", {"where": WHERE}),
                                      ("nanmean", {"where": WHERE}), ("nanvar", {"where": WHERE}),
                                      ("nanmax", {"initial": 0.5})])
def test_reduction_keywords_match_jax(name, kw):
    jax = _jax()
    x = np.nan_to_num(X, nan=0.25)
    d = _second_order(lambda y: getattr(np, name)(y, axis=1, **kw), x, np.cos(x))
    f = lambda y: getattr(jax.numpy, name)(y, axis=1, **kw)  # noqa: E731
    w = np.ones(3)
    g = lambda y: jax.vjp(f, y)[1](w)[0]  # noqa: E731
    np.testing.assert_allclose(d["rev"], g(x), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(d["fwd"], jax.jvp(f, (x,), (np.cos(x),))[1], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(d["fwd_rev"], jax.jvp(g, (x,), (np.cos(x),))[1], rtol=1e-8, atol=1e-12)


# -- pad by statistics and by linear ramps (LaxBackedNumpyTests.testPad, testPadStatValues) ------------------------
@pytest.mark.parametrize("kw", [
    {"mode": "maximum"}, {"mode": "minimum"}, {"mode": "mean"}, {"mode": "median"}, {"mode": "linear_ramp"},
    {"mode": "linear_ramp", "end_values": ((1.0, 2.0), (3.0, -1.0))}, {"mode": "mean", "stat_length": 2},
    {"mode": "maximum", "stat_length": ((1, 2), (3, 1))}, {"mode": "median", "stat_length": 9},
])
@pytest.mark.parametrize("pad_width", [((1, 2), (2, 0)), 2, ((0, 0), (3, 1))])
def test_pad_stat_and_ramp_modes_follow_numpy(kw, pad_width):
    rng = np.random.default_rng(0)
    x, t = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    ours = np.pad(cr.Tensor(x), pad_width, **kw)  # was a NotImplementedError naming the mode
    np.testing.assert_allclose(np.asarray(ours), np.pad(x, pad_width, **kw), rtol=1e-13)
    fd = (np.pad(x + 1e-6 * t, pad_width, **kw) - np.pad(x - 1e-6 * t, pad_width, **kw)) / 2e-6
    np.testing.assert_allclose(cr.jvp(lambda y: np.pad(y, pad_width, **kw), (x,), (t,))[1], fd, atol=1e-6)
    w = rng.normal(size=np.shape(ours))
    assert np.isclose(np.sum(cr.vjp(lambda y: np.pad(y, pad_width, **kw), x)[1](w)[0] * t), np.sum(w * fd))


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["maximum", "minimum", "mean", "median", "linear_ramp"])
def test_pad_modes_match_jax(mode):
    jax = _jax()
    x = np.random.default_rng(1).normal(size=(3, 4))
    f = lambda m: (lambda y: m.pad(y, ((1, 2), (0, 3)), mode=mode))  # noqa: E731
    d = _second_order(f(np), x, np.sin(x))
    w = np.ones((6, 7))
    g = lambda y: jax.vjp(f(jax.numpy), y)[1](w)[0]  # noqa: E731
    np.testing.assert_allclose(d["rev"], g(x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(d["fwd"], jax.jvp(f(jax.numpy), (x,), (np.sin(x),))[1], rtol=1e-12, atol=1e-14)


def test_pad_empty_mode_is_refused_by_name():
    with pytest.raises(NotImplementedError, match=r"pad: mode 'empty' has no derivative rule"):
        np.pad(cr.Tensor(np.ones(3), requires_grad=True), 1, mode="empty")


# -- the error for a function without a rule names where it comes from (lax_scipy_special_functions_test) ----------
def test_missing_rule_names_scipy_special_functions():
    special = pytest.importorskip("scipy.special")
    with pytest.raises(TypeError, match=r"no derivative rule for scipy\.special\.spence;"):  # said numpy.spence
        cr.grad(lambda x: np.sum(special.spence(x)))(np.ones(2))
    with pytest.raises(TypeError, match=r"no derivative rule for numpy\.spacing;"):
        cr.grad(lambda x: np.sum(np.spacing(x)))(np.ones(2))


# -- functions JAX differentiates that had no rule: frexp, unwrap (NumpyGradTests.testGradFrexp; the unwrap record)
def test_frexp_mantissa_and_unwrap_are_differentiable():
    x = np.array([-3.5, -0.3, 0.7, 1.0, 6.25, 100.0])
    mantissa, exponent = np.frexp(cr.Tensor(x))  # was "no derivative rule for numpy.frexp"
    np.testing.assert_array_equal(np.asarray(mantissa), np.frexp(x)[0])
    np.testing.assert_array_equal(exponent, np.frexp(x)[1])
    np.testing.assert_array_equal(cr.grad(lambda y: np.sum(np.frexp(y)[0]))(x), 2.0 ** -np.frexp(x)[1])
    phase = np.array([0.0, 3.0, 6.5, -0.5, 2.0])
    np.testing.assert_allclose(np.asarray(np.unwrap(cr.Tensor(phase))), np.unwrap(phase), rtol=1e-15)
    np.testing.assert_array_equal(cr.grad(lambda p: np.sum(np.unwrap(p) * np.arange(5.0)))(phase), np.arange(5.0))
    np.testing.assert_allclose(np.asarray(np.unwrap(cr.Tensor(phase), period=4.0, axis=0)),
                               np.unwrap(phase, period=4.0, axis=0), rtol=1e-15)


@pytest.mark.oracle
@pytest.mark.parametrize("name, args, argnums", [
    ("erfcx", [np.array([-1.5, 0.2, 3.0])], (0,)), ("dawsn", [np.array([-2.0, 0.3, 1.7])], (0,)),
    ("expi", [np.array([0.3, 1.2, 2.5])], (0,)), ("rel_entr", [np.array([0.4, 1.5]), np.array([2.0, 0.7])], (0, 1)),
    ("kl_div", [np.array([0.4, 1.5]), np.array([2.0, 0.7])], (0, 1)),
    ("poch", [np.array([0.7, 2.2]), np.array([1.3, 0.6])], (0, 1)),
    ("boxcox", [np.array([0.7, 2.2]), np.array([0.5, 0.0])], (0,)),
    ("boxcox1p", [np.array([-0.3, 2.2]), np.array([0.5, -1.0])], (0,)),
])
def test_scipy_special_functions_jax_differentiates(name, args, argnums):
    # JAX_SPECIAL_FUNCTION_RECORDS with test_grad=True: these had no rule ("no derivative rule for numpy.erfcx")
    jax = _jax()
    special = pytest.importorskip("scipy.special")
    jsp = pytest.importorskip("jax.scipy.special")
    f = lambda *a: np.sum(getattr(special, name)(*a) * np.array([1.0, -2.0, 0.5][: len(args[0])]))  # noqa: E731
    jf = lambda *a: jax.numpy.sum(getattr(jsp, name)(*a) * np.array([1.0, -2.0, 0.5][: len(args[0])]))  # noqa: E731
    np.testing.assert_allclose(np.asarray(getattr(special, name)(*map(cr.Tensor, args))), getattr(special, name)(*args))
    for ours, theirs in zip(cr.grad(f, argnums=argnums)(*args), jax.grad(jf, argnums=argnums)(*args)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    h = cr.hessian(f, argnums=argnums)(*args)
    jh = jax.hessian(jf, argnums=argnums)(*args)
    np.testing.assert_allclose(np.asarray(h, dtype=float), np.asarray(jh, dtype=float), rtol=1e-7, atol=1e-12)


# -- interp with a period, cov with weights (LaxBackedNumpyTests.testInterp period=0.59; testCov fweights, aweights)
def test_interp_with_a_period_follows_numpy():
    rng = np.random.default_rng(0)
    x, xp, fp = rng.normal(size=7) * 2, rng.uniform(-1, 1, size=5), rng.normal(size=5)
    ours = np.interp(cr.Tensor(x), xp, cr.Tensor(fp), period=0.59)  # was a NotImplementedError
    np.testing.assert_allclose(np.asarray(ours), np.interp(x, xp, fp, period=0.59), rtol=1e-13)
    # in x the derivative is the slope of the segment, in fp the interpolation weights (central differences)
    f = lambda a, c: np.sum(np.interp(a, xp, c, period=0.59) * np.arange(7.0))  # noqa: E731
    gx, gf = cr.grad(f, argnums=(0, 1))(x, fp)
    e = 1e-7
    np.testing.assert_allclose(gx, [(f(x + e * np.eye(7)[i], fp) - f(x - e * np.eye(7)[i], fp)) / (2 * e)
                                    for i in range(7)], atol=1e-5)
    np.testing.assert_allclose(gf, [(f(x, fp + e * np.eye(5)[i]) - f(x, fp - e * np.eye(5)[i])) / (2 * e)
                                    for i in range(5)], atol=1e-5)
    with pytest.raises(ValueError, match="period must be a non-zero value"):
        np.interp(cr.Tensor(x), xp, fp, period=0)


@pytest.mark.parametrize("kw", [{"fweights": "f"}, {"aweights": "a"}, {"fweights": "f", "aweights": "a"},
                                {"fweights": "f", "aweights": "a", "ddof": 0}, {"aweights": "a", "bias": True},
                                {"fweights": "f", "ddof": 3}, {"aweights": "a", "rowvar": False}])
def test_cov_with_weights_follows_numpy(kw):
    rng = np.random.default_rng(0)
    weights = {"f": np.array([1, 2, 1, 3, 1, 2]), "a": rng.uniform(0.2, 2, size=6)}
    kw = {k: weights.get(v, v) if isinstance(v, str) else v for k, v in kw.items()}
    x = rng.normal(size=(3, 6)) if kw.get("rowvar", True) else rng.normal(size=(6, 3))
    ours = np.cov(cr.Tensor(x), **kw)  # was a NotImplementedError
    np.testing.assert_allclose(np.asarray(ours), np.cov(x, **kw), rtol=1e-12)
    f = lambda a: np.sum(np.cov(a, **kw) * np.arange(9.0).reshape(3, 3))  # noqa: E731
    g, e = cr.grad(f)(x), 1e-6
    fd = np.array([(f(x + e * d) - f(x - e * d)) / (2 * e) for d in np.eye(x.size).reshape((-1,) + x.shape)])
    np.testing.assert_allclose(g.ravel(), fd, atol=1e-6)


@pytest.mark.oracle
def test_cov_weights_and_interp_period_match_jax():
    jax = _jax()
    jnp = jax.numpy
    rng = np.random.default_rng(1)
    x, fw, aw = rng.normal(size=(3, 6)), np.array([1, 2, 1, 3, 1, 2]), rng.uniform(0.2, 2, size=6)
    f = lambda m: (lambda a, w: m.sum(m.cov(a, fweights=fw, aweights=w, ddof=2) * np.arange(9.0).reshape(3, 3)))  # noqa
    for ours, theirs in zip(cr.grad(f(np), argnums=(0, 1))(x, aw), jax.grad(f(jnp), argnums=(0, 1))(x, aw)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    xs, xp, fp = rng.normal(size=7) * 2, rng.uniform(-1, 1, size=5), rng.normal(size=5)
    h = lambda m: (lambda a, b, c: m.sum(m.interp(a, b, c, period=0.59) * np.arange(7.0)))  # noqa: E731
    for ours, theirs in zip(cr.grad(h(np), argnums=(0, 1, 2))(xs, xp, fp),
                            jax.grad(h(jnp), argnums=(0, 1, 2))(xs, xp, fp)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)


# -- pinv of a rank-deficient matrix: NumPy's value, differentiated at constant rank (testPinvGradIssue2792) -------
def test_pinv_of_a_rank_deficient_matrix_has_the_constant_rank_derivative():
    def f(p):  # rank 1 for every p; was a LinAlgError ("needs full rank")
        return np.linalg.pinv(cr.stack([cr.stack([0.0 * p, 0.0 * p]), cr.stack([-p, 1.0 + 0.0 * p])]) / (1 + p**2))

    np.testing.assert_allclose(cr.jacobian(f)(2.0), [[0.0, -1.0], [0.0, 0.0]], atol=1e-15)
    np.testing.assert_allclose(cr.jacobian(np.linalg.pinv)(np.eye(2)),
                               -np.einsum("ik,lj->ijkl", np.eye(2), np.eye(2)), atol=1e-15)
    rng = np.random.default_rng(0)
    u, v, du, dv = rng.normal(size=(3, 1)), rng.normal(size=(1, 2)), rng.normal(size=(3, 1)), rng.normal(size=(1, 2))
    np.testing.assert_array_equal(np.asarray(np.linalg.pinv(cr.Tensor(u @ v))), np.linalg.pinv(u @ v))
    path = lambda e: np.linalg.pinv((u + e * du) @ (v + e * dv))  # noqa: E731  (the rank stays 1 along it)
    np.testing.assert_allclose(cr.jvp(np.linalg.pinv, (u @ v,), (du @ v + u @ dv,))[1],
                               (path(1e-6) - path(-1e-6)) / 2e-6, atol=1e-6)


@pytest.mark.oracle
@pytest.mark.parametrize("shape, rank", [((3, 2), 1), ((2, 4), 1), ((4, 4), 2), ((2, 3, 3), 2)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_pinv_rank_deficient_matches_jax_to_second_order(shape, rank, dtype):
    jax = _jax()
    rng = np.random.default_rng(0)
    draw = lambda s: rng.normal(size=s) + (1j * rng.normal(size=s) if dtype == np.complex128 else 0)  # noqa: E731
    u, v = draw(shape[:-1] + (rank,)), draw(shape[:-2] + (rank, shape[-1]))
    a, w = u @ v, draw(shape[:-2] + (shape[-1], shape[-2]))
    t = u @ draw(v.shape) + draw(u.shape) @ v
    f = lambda m: (lambda x: m.real(m.sum(m.linalg.pinv(x) * w)))  # noqa: E731
    d = _second_order(f(np), a, t)
    jg = lambda x: jax.grad(f(jax.numpy))(x)  # noqa: E731
    np.testing.assert_allclose(d["rev"], jg(a), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(d["fwd"], jax.jvp(f(jax.numpy), (a,), (t,))[1], rtol=1e-8)
    np.testing.assert_allclose(d["fwd_rev"], jax.jvp(jg, (a,), (t,))[1], rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(d["rev_rev"], jax.vjp(jg, a)[1](t)[0], rtol=1e-7, atol=1e-10)


# -- reshape and ravel in Fortran order (LaxBackedNumpyTests.testReshape, testRavel with order='F') ---------------
@pytest.mark.parametrize("order", ["C", "F", "A"])
def test_reshape_and_ravel_read_the_order(order):
    x = np.arange(24.0).reshape(2, 3, 4)
    for value in (x, np.asfortranarray(x)):
        ours = np.reshape(cr.Tensor(value), (4, -1), order=order)  # "F" was read as "C": silently other entries
        np.testing.assert_array_equal(np.asarray(ours), np.reshape(value, (4, -1), order=order))
        np.testing.assert_array_equal(np.asarray(np.ravel(cr.Tensor(value), order=order)), np.ravel(value, order=order))
    w = np.arange(24.0)
    g = cr.grad(lambda y: np.sum(np.ravel(y, order=order) * w))(x)
    np.testing.assert_array_equal(g, w.reshape(x.shape, order="F" if order == "F" else "C"))
    t = np.cos(x)
    np.testing.assert_array_equal(cr.jvp(lambda y: np.reshape(y, (4, 6), order=order), (x,), (t,))[1],
                                  np.reshape(t, (4, 6), order=order))
    with pytest.raises(ValueError, match="order 'K' is not permitted"):
        np.reshape(cr.Tensor(x), (4, -1), order="K")
    with pytest.raises(ValueError, match="order must be one of"):
        np.ravel(cr.Tensor(x), order="Z")


# -- var/std take NumPy 2's correction= (JAX's reducer tests pass it as ddof's array-API name) --------------------
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_take_correction(name):
    x = np.random.default_rng(0).normal(size=(3, 4))
    ours = getattr(np, name)(cr.Tensor(x), axis=1, correction=1)  # was a TypeError naming 'correction'
    np.testing.assert_allclose(np.asarray(ours), getattr(np, name)(x, axis=1, correction=1), rtol=1e-14)
    np.testing.assert_allclose(cr.grad(lambda y: np.sum(getattr(np, name)(y, axis=1, correction=1)))(x),
                               cr.grad(lambda y: np.sum(getattr(np, name)(y, axis=1, ddof=1)))(x), rtol=1e-14)
    with pytest.raises(ValueError, match="ddof and correction can't be provided simultaneously"):
        getattr(np, name)(cr.Tensor(x), ddof=1, correction=1)
