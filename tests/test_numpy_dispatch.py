"""Plain NumPy code on Tensors: NumPy hands its functions to chainrule, values match NumPy's,
150+ NumPy functions are traced, a function without a rule raises a TypeError naming it, and
the conventions at points without a derivative hold."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainrule as cr
import chainrule.numpy as cnp
from chainrule import Tensor
from chainrule.ops import NONDIFFERENTIABLE, NUMPY_FUNCTIONS, NUMPY_UFUNCS, numpy_names
from op_cases import CASES, draw_inputs


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def run_case_on_tensors(case, data):
    """Values on Tensors (traced) against NumPy's on plain arrays; then a backward pass."""
    arrays, params = draw_inputs(case, data)
    xs = [Tensor(a, requires_grad=True) for a in arrays]
    outs = as_list(case.fn(*xs, **params))
    try:
        expected = as_list(case.fn(*[a.copy() for a in arrays], **params))
    except (AttributeError, TypeError):  # a Tensor method (x.exp()) with no NumPy twin on ndarrays
        expected = None
    if expected is not None:
        assert len(outs) == len(expected)
        for o, e in zip(outs, expected, strict=True):
            got = o.data if isinstance(o, Tensor) else np.asarray(o)
            assert got.shape == np.shape(e), f"{case.name}: shape {got.shape}, NumPy {np.shape(e)}"
            np.testing.assert_allclose(got, e, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=case.name)
    traced = [o for o in outs if isinstance(o, Tensor) and o.requires_grad]
    if traced:
        sum(np.real((o * 1.5).sum()) for o in traced).backward()
        assert any(x.grad is not None for x in xs), f"{case.name}: no gradient reached the inputs"


def once(case):
    @settings(max_examples=1, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        run_case_on_tensors(case, data)

    return run


@pytest.fixture(scope="module")
def dispatched():
    """Every NumPy callable that NumPy handed to chainrule while all the cases ran on Tensors."""
    seen = set()
    original_f, original_u = Tensor.__array_function__, Tensor.__array_ufunc__

    def record_f(self, func, types, args, kwargs):
        seen.add(func)
        return original_f(self, func, types, args, kwargs)

    def record_u(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__":
            seen.add(ufunc)
        return original_u(self, ufunc, method, *inputs, **kwargs)

    Tensor.__array_function__, Tensor.__array_ufunc__ = record_f, record_u
    try:
        for case in CASES:
            once(case)()
    finally:
        Tensor.__array_function__, Tensor.__array_ufunc__ = original_f, original_u
    return seen


@pytest.mark.parametrize("case", CASES, ids=str)
@settings(max_examples=2, deadline=None, derandomize=not os.environ.get("CHAINRULE_TEST_RANDOM"), database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_values_match_numpy_and_gradients_flow(case, data):
    run_case_on_tensors(case, data)


def test_at_least_150_numpy_functions_are_traced(dispatched):
    names = set()
    for np_fn in dispatched:
        fn = NUMPY_UFUNCS.get(np_fn) or NUMPY_FUNCTIONS.get(np_fn)
        if fn is not None and fn not in NONDIFFERENTIABLE:
            names.update(n for n in numpy_names(fn) if n.startswith("numpy.") and getattr_path(n) is np_fn)
    print(f"{len(names)} NumPy names traced by the cases")
    assert len(names) >= 150, sorted(names)
    for required in ["cumsum", "cumprod", "diff", "diag", "diagonal", "trace", "tril", "triu", "kron", "flip", "roll",
                     "tile", "repeat", "pad", "sort", "take", "take_along_axis", "where", "select", "nan_to_num",
                     "hypot", "arctan2", "logaddexp", "expm1", "sinc", "floor", "ceil", "round", "sign",
                     "linalg.inv", "linalg.det", "linalg.slogdet", "linalg.solve", "linalg.cholesky",
                     "linalg.eigh", "linalg.svd", "linalg.norm", "linalg.qr", "sum", "dot", "sin"]:
        assert f"numpy.{required}" in names, required


def getattr_path(dotted):
    obj = __import__(dotted.split(".")[0])
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def test_registry_counts_over_150_differentiable_numpy_names():
    differentiable = [n for n, f in cnp.FUNCTIONS.items() if f not in NONDIFFERENTIABLE]
    linalg = [r for r in cr.ops.table() if r.kind != "constant" for n in r.numpy if n.startswith("numpy.linalg.")]
    assert len(differentiable) + len(linalg) >= 200
    assert {"cumsum", "sinc", "pad", "kron", "median", "convolve"} <= set(differentiable)


def test_scipy_special_functions_are_traced(dispatched):
    sc = pytest.importorskip("scipy.special")

    for f in (sc.erf, sc.gammaln, sc.digamma, sc.expit, sc.xlogy, sc.erfc):
        assert f in dispatched, f.__name__


# -- no rule: a clear error, never a silently dropped gradient -------------------------------------
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda x: np.unique(x), "numpy.unique"),
        (lambda x: np.trim_zeros(x), "numpy.trim_zeros"),  # (unwrap has a rule now: test_jax_numpy_grad_suite.py)
        (lambda x: np.roots(x), "numpy.roots"),
        (lambda x: np.add.reduceat(x, [0, 2]), "numpy.add.reduceat"),  # (reduce, accumulate have rules: below)
        (lambda x: np.sin(x, out=np.empty(4)), "numpy.sin"),
        (lambda x: np.polydiv(x, x), "numpy.polydiv"),  # (polyfit has a rule now: tests/test_polyfit_gradient.py)
        (lambda x: np.histogram(x), "numpy.histogram"),
        (lambda x: np.sort_complex(x), "numpy.sort_complex"),
    ],
)
def test_numpy_function_without_a_rule_raises_naming_it(call, name):
    x = Tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    with pytest.raises(TypeError, match=name.replace(".", r"\.")) as info:
        call(x)
    assert "no derivative rule" in str(info.value) and "custom_vjp" in str(info.value)
    with pytest.raises(TypeError, match="no derivative rule"):  # forward mode too
        cr.jvp(call, (np.array([1.0, 2.0, 3.0, 4.0]),), (np.ones(4),))


def test_numpy_function_without_a_rule_runs_on_untraced_tensors():
    out = np.unique(Tensor([3.0, 1.0, 3.0]))
    assert isinstance(out, np.ndarray) and out.tolist() == [1.0, 3.0]
    with cr.no_grad():
        assert np.unique(Tensor([2.0, 2.0], requires_grad=True)).tolist() == [2.0]


def test_chainrule_numpy_names_the_missing_function():
    with pytest.raises(AttributeError, match=r"numpy\.unique has no derivative rule"):
        cnp.unique  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'not_a_numpy_name'"):
        cnp.not_a_numpy_name  # noqa: B018


# -- piecewise constant functions: zero gradient in both modes ------------------------------------
@pytest.mark.parametrize(
    "fn",
    [np.floor, np.ceil, np.round, np.rint, np.trunc, np.fix, np.sign, lambda x: np.around(x, 1),
     lambda x: np.floor_divide(x, 0.3), lambda x: np.heaviside(x, 0.5), lambda x: x // 0.7],
)
def test_piecewise_constant_functions_have_zero_gradient(fn):
    x = np.array([-1.37, -0.2, 0.45, 2.6])
    np.testing.assert_array_equal(cr.grad(lambda v: np.sum(fn(v)))(x), np.zeros(4))
    np.testing.assert_array_equal(cr.jvp(fn, (x,), (np.ones(4),))[1], np.zeros(4))
    np.testing.assert_array_equal(cr.jvp(fn, (x,), (np.ones(4),))[0], fn(x))


# -- the documented values at points without a derivative ------------------------------------------
def test_kinks_follow_the_documented_conventions():
    assert cr.grad(lambda x: np.abs(x))(0.0) == 0.0
    assert cr.grad(lambda x: cr.relu(x))(0.0) == 0.0
    assert cr.grad(lambda x: np.maximum(x, 0.0))(0.0) == 0.5
    np.testing.assert_array_equal(cr.grad(np.linalg.norm)(np.zeros(3)), np.zeros(3))
    np.testing.assert_array_equal(cr.grad(lambda x: np.max(x))(np.array([1.0, 3.0, 3.0])), [0.0, 0.5, 0.5])
    # a sorted tie sends each position's gradient to one entry (stable order)
    np.testing.assert_array_equal(cr.grad(lambda x: np.sort(x)[0])(np.array([2.0, 1.0, 1.0])), [0.0, 1.0, 0.0])
    # interp: the right-hand slope at a knot, 0 outside the knots
    assert cr.grad(lambda x: np.interp(x, [0.0, 1.0, 2.0], [0.0, 1.0, 3.0]))(1.0) == 2.0
    assert cr.grad(lambda x: np.interp(x, [0.0, 1.0], [0.0, 1.0]))(5.0) == 0.0
    # nan_to_num: replaced entries get no gradient
    np.testing.assert_array_equal(cr.grad(lambda x: np.sum(np.nan_to_num(x * 3.0)))(np.array([np.nan, 2.0])),
                                  [0.0, 3.0])
    # ... and the default replacements are NumPy's
    inf = np.array([np.nan, np.inf, -np.inf])
    np.testing.assert_array_equal(np.nan_to_num(cr.Tensor(inf))._data, np.nan_to_num(inf))


def test_sinc_derivatives_are_exact_at_zero():
    assert cr.grad(np.sinc)(0.0) == 0.0
    assert math.isclose(cr.deriv(np.sinc, 2)(0.0), -(math.pi**2) / 3, rel_tol=1e-9)
    assert abs(cr.deriv(np.sinc, 3)(0.0)) < 1e-9
    assert math.isclose(cr.deriv(np.sinc, 2)(0.5), (lambda x: ((2 - (math.pi * x) ** 2) * math.sin(math.pi * x)
                        - 2 * math.pi * x * math.cos(math.pi * x)) / (math.pi * x**3))(0.5), rel_tol=1e-9)


def test_cumprod_gradient_is_exact_at_a_zero():
    x = np.array([2.0, 0.0, 3.0, 4.0])
    # d/dx of sum(cumprod(x)) = for each i: sum_{k >= i} prod_{j <= k, j != i} x_j
    expected = [1.0, 2.0 + 6.0 + 24.0, 0.0, 0.0]
    np.testing.assert_allclose(cr.grad(lambda v: np.sum(np.cumprod(v)))(x), expected)


def test_xlogy_at_zero():
    sc = pytest.importorskip("scipy.special")
    gx, gy = cr.grad(lambda x, y: sc.xlogy(x, y), argnums=(0, 1))(0.0, 0.0)
    assert gy == 0.0 and gx == 0.0  # PyTorch's convention: xlogy(0, y) is 0 for every y, so no -inf in x
    gx, gy = cr.grad(lambda x, y: sc.xlogy(x, y), argnums=(0, 1))(0.0, 2.0)
    assert gy == 0.0 and gx == math.log(2.0)
    assert cr.grad(lambda y: sc.xlogy(0.0, y))(2.0) == 0.0


def test_svd_extra_columns_have_no_derivative():
    a = np.arange(6.0).reshape(3, 2) + np.eye(3, 2)
    grad_u2 = cr.grad(lambda m: np.sum(np.linalg.svd(m)[0][:, :2] ** 2))(a)
    assert grad_u2.shape == (3, 2)
    with pytest.raises(ValueError, match="not unique.*full_matrices=False"):
        cr.grad(lambda m: np.sum(np.linalg.svd(m)[0]))(a)
    with pytest.raises(ValueError, match="not unique.*mode='reduced'"):
        cr.grad(lambda m: np.sum(np.linalg.qr(m, mode="complete")[0]))(a)


def test_eigh_gradient_is_that_of_the_lower_triangle_read():
    a = np.array([[2.0, 1.0], [0.3, 5.0]])
    g = cr.grad(lambda m: np.linalg.eigh(m)[0][1])(a)
    # NumPy reads the lower triangle: the entry above the diagonal has no effect, the one below counts twice
    s = np.tril(a) + np.tril(a, -1).T
    w, v = np.linalg.eigh(s)
    p = np.outer(v[:, 1], v[:, 1])
    np.testing.assert_allclose(g, [[p[0, 0], 0.0], [2 * p[1, 0], p[1, 1]]])


# -- Tensor methods that ndarray has ----------------------------------------------------------------
def test_tensor_methods_like_ndarray():
    a = np.arange(1.0, 7.0).reshape(2, 3)
    t = Tensor(a)
    for name, args in [("cumsum", (1,)), ("cumprod", ()), ("diagonal", ()), ("trace", ()), ("repeat", (2,)),
                       ("round", ()), ("conj", ()), ("take", ([0, 4],)), ("argsort", ()),
                       ("flatten", ()), ("clip", (2, 4)), ("max", ())]:
        got = getattr(t, name)(*args)
        want = getattr(a, name)(*args)
        got = [g.data if isinstance(g, Tensor) else g for g in got] if isinstance(got, tuple) else got
        np.testing.assert_array_equal(got.data if isinstance(got, Tensor) else got, want, err_msg=name)
    np.testing.assert_array_equal(t.max(axis=0).data, a.max(0))  # (t.max(0) is PyTorch's (values, indices))
    # t.nonzero() is PyTorch's (n, ndim) rows; ndarray's tuple is as_tuple=True (and np.nonzero(t))
    np.testing.assert_array_equal(t.nonzero().data, np.argwhere(a))
    for got, want in zip(t.nonzero(as_tuple=True), a.nonzero(), strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(t.std(axis=1).data, a.std(axis=1), rtol=1e-15)  # axis=: NumPy's ddof=0
    np.testing.assert_allclose(t.std().data, a.std(ddof=1), rtol=1e-15)  # no arguments: PyTorch's unbiased
    np.testing.assert_array_equal(t.real.data, a)
    np.testing.assert_array_equal(t.imag.data, np.zeros_like(a))
    np.testing.assert_array_equal((t // 2).data, a // 2)
    np.testing.assert_array_equal((t % 2.5).data, a % 2.5)
    np.testing.assert_array_equal(divmod(t, 4)[1].data, a % 4)
    np.testing.assert_array_equal((~(t > 2)).data, ~(a > 2))
    np.testing.assert_array_equal(((t > 2) & (t < 5)).data, (a > 2) & (a < 5))
    assert round(Tensor(2.6)).item() == 3.0


def test_sort_method_is_pytorchs_and_sorts_in_place_only_with_ndarrays_kind():
    t = Tensor([3.0, 1.0, 2.0])
    values, indices = t.sort()
    assert values.tolist() == [1.0, 2.0, 3.0] and indices.tolist() == [1, 2, 0] and t.tolist() == [3.0, 1.0, 2.0]
    assert t.sort(kind="stable") is None
    assert t.tolist() == [1.0, 2.0, 3.0]
    u = Tensor([[2.0, 1.0], [0.0, 3.0]])
    assert u.sort(axis=0) is None and u.tolist() == [[0.0, 1.0], [2.0, 3.0]]  # NumPy's keyword: NumPy's sort
    assert u.sort(-1, "stable") is None  # NumPy's positional kind
    # a Tensor in the graph cannot be sorted in place: x.sort() is PyTorch's, a sorted copy and the indices
    x = Tensor([3.0, 1.0], requires_grad=True)
    values, indices = x.sort()
    assert x.tolist() == [3.0, 1.0] and values.tolist() == [1.0, 3.0] and indices.tolist() == [1, 0]
    values[0].backward()
    assert x.grad.tolist() == [0.0, 1.0]
    assert Tensor([1.0, 3.0, 2.0]).sort(0, True)[0].tolist() == [3.0, 2.0, 1.0]  # PyTorch's positional descending
    np.testing.assert_array_equal(cr.grad(lambda v: np.sort(v)[0] * 2)(np.array([3.0, 1.0])), [0.0, 2.0])


def test_ufunc_keyword_arguments_that_chainrule_knows():
    a, b = Tensor(np.ones((3, 2)), requires_grad=True), np.arange(3.0)[:, None]
    out = np.vecdot(a, b, axis=0)
    np.testing.assert_array_equal(out.data, np.vecdot(np.ones((3, 2)), b, axis=0))
    out.sum().backward()
    np.testing.assert_array_equal(a.grad.data, np.broadcast_to(b, (3, 2)))


def test_float32_stays_float32():
    x = Tensor(np.array([0.5, 1.5, 2.5], dtype=np.float32), requires_grad=True)
    y = np.sum(np.cumsum(np.sinc(x)) * np.linalg.norm(x))
    assert y.dtype == np.float32
    y.backward()
    assert x.grad.dtype == np.float32


# -- chainrule.numpy --------------------------------------------------------------------------------
def test_chainrule_numpy_module():
    # cnp's read lists, around the ops (cr.cumsum also takes PyTorch's dim=, around the same op)
    assert cnp.cumsum.__wrapped__ is cr.ops.cumsum is cr.cumsum.__wrapped__
    assert cnp.linalg.inv.__wrapped__ is cr.linalg.inv
    assert cnp.pi == np.pi and cnp.float32 is np.float32 and cnp.newaxis is None
    assert isinstance(cnp.zeros(3), np.ndarray) and isinstance(cnp.array([1.0, 2.0]), np.ndarray)
    assert len(cnp.__all__) > 250

    def f(x):
        m = cnp.array([[x[0], 1.0], [x[1] * x[0], cnp.sin(x[1])]])
        return cnp.linalg.det(m) + cnp.sum(cnp.asarray([x[0] ** 2, 3.0]))

    x = np.array([0.7, -0.4])
    a, b = x
    expected = [np.sin(b) - b + 2 * a, a * np.cos(b) - a]
    np.testing.assert_allclose(cr.grad(f)(x), expected)
    assert cr.gradcheck(f, x)


def test_scipy_ufuncs_register_themselves_without_importing_chainrule_special():
    pytest.importorskip("scipy.special")
    code = (
        "import numpy as np, scipy.special as sc, chainrule as cr, sys\n"
        "assert 'chainrule.ops.special_functions.scipy_special' not in sys.modules\n"
        "print(cr.grad(lambda x: sc.gammaln(x))(1.0))\n"
    )
    out = subprocess.run([sys.executable, "-Werror", "-c", code], capture_output=True, text=True, check=True)
    assert math.isclose(float(out.stdout), -0.5772156649015329, rel_tol=1e-12)


@pytest.mark.oracle
def test_scipy_bessel_and_incomplete_gamma_ufuncs_are_traced_without_importing_chainrule_special():
    # i0e, i1e, gammainc (declared in ops/special_functions/bessel.py) had no rule unless chainrule.special was
    # imported first
    pytest.importorskip("scipy.special")
    code = (
        "import scipy.special as sc, chainrule as cr\n"
        "print(cr.grad(lambda x: sc.i0e(x))(1.0), cr.grad(lambda x: sc.i1e(x))(1.0),"
        " cr.grad(lambda x: sc.gammainc(2.0, x))(1.0))\n"
    )
    out = subprocess.run([sys.executable, "-Werror", "-c", code], capture_output=True, text=True, check=True)
    i0e, i1e, gammainc = (float(v) for v in out.stdout.split())
    torch = pytest.importorskip("torch")
    x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    for ours, fn in [(i0e, torch.special.i0e), (i1e, torch.special.i1e)]:
        (theirs,) = torch.autograd.grad(fn(x), x)
        assert math.isclose(ours, float(theirs), rel_tol=1e-12)
    assert math.isclose(gammainc, np.exp(-1.0), rel_tol=1e-12)  # d/dx P(2, x) = x e^-x / Gamma(2)


def test_constant_results_of_tensor_inputs_are_tensors():
    # vander of one point (a column of ones) and piecewise with constants only: no graph, yet a Tensor for a
    # Tensor (they were NumPy arrays), as PyTorch returns a tensor that does not require grad
    x = cr.Tensor(np.array([2.0]), requires_grad=True)
    for out in (np.vander(x, increasing=True), np.vander(x), np.vander(x, 0),
                np.piecewise(x, [np.array([False])], [lambda v: np.sqrt(v - 1), 0.5])):
        assert isinstance(out, cr.Tensor) and not out.requires_grad
    np.testing.assert_array_equal(np.piecewise(x, [np.array([False])], [lambda v: v, 0.5]).numpy(), [0.5])
    assert isinstance(np.vander(np.array([2.0])), np.ndarray)  # NumPy's own for NumPy's arrays


_REDUCING_CASES = {  # plain NumPy code written with ufunc methods (NumPy's default axis is 0)
    "add.reduce": lambda x: (np.add.reduce(x) ** 2).sum(),
    "add.reduce, all axes": lambda x: np.add.reduce(x, axis=None) ** 2,
    "multiply.reduce, keepdims": lambda x: (np.multiply.reduce(x, axis=1, keepdims=True) ** 2).sum(),
    "maximum.reduce, two axes": lambda x: np.maximum.reduce(x, axis=(0, 1)),
    "minimum.reduce": lambda x: (np.minimum.reduce(x) * np.arange(4)).sum(),
    "logaddexp.reduce": lambda x: np.logaddexp.reduce(x, axis=1).sum(),
    "add.accumulate": lambda x: (np.add.accumulate(x) ** 2).sum(),
    "multiply.accumulate": lambda x: (np.multiply.accumulate(x, axis=1) ** 2).sum(),
    "maximum.accumulate": lambda x: (np.maximum.accumulate(x, axis=1) * np.arange(4)).sum(),
    "minimum.accumulate": lambda x: (np.minimum.accumulate(x) ** 2).sum(),
    "logaddexp.accumulate": lambda x: (np.logaddexp.accumulate(x, axis=1) ** 2).sum(),
}


@pytest.mark.parametrize("case", _REDUCING_CASES)
def test_ufunc_reduce_and_accumulate_are_differentiable(case):
    """np.add.reduce, np.maximum.accumulate, ... raised "no derivative rule": each is a reduction or a scan that
    chainrule has (sum, prod, max, min, logsumexp, cumsum, cumprod, cummax, cummin, logcumsumexp)."""
    f = _REDUCING_CASES[case]
    x = np.random.default_rng(1).normal(size=(3, 4))
    got = cr.grad(f)(x)
    want = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += 1e-6
        down[i] -= 1e-6
        want[i] = (f(up) - f(down)) / 2e-6
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    value = f(cr.Tensor(x))
    assert isinstance(value, cr.Tensor)
    np.testing.assert_allclose(value._data, f(x), rtol=1e-12)


def test_ufunc_reduce_batches_under_vmap_and_keeps_numpy_dtypes():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(cr.vmap(lambda r: np.add.reduce(r))(x), [3.0, 12.0])
    np.testing.assert_allclose(cr.vmap(cr.grad(lambda r: np.logaddexp.reduce(r)))(x),
                               np.exp(x - np.logaddexp.reduce(x, axis=1, keepdims=True)))
    ints = cr.Tensor(np.array([1, 2], dtype=np.int8))
    assert np.add.reduce(ints).dtype == np.add.reduce(np.array([1, 2], dtype=np.int8)).dtype
    with pytest.raises(NotImplementedError, match="maximum.accumulate has no batching rule"):
        cr.vmap(lambda r: np.maximum.accumulate(r))(x)
