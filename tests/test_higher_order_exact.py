"""No rule is exact at first order only: Hessians (and third derivatives) at exact zeros, ties and
values near underflow, against torch.func and closed forms; std/var over one entry; the registry mark
``first_order_only`` is set on no library primitive and makes a second derivative raise."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule.autodiff.primitive import Primitive

torch = pytest.importorskip("torch")
try:  # SciPy is an optional extra: without it the xlogy cases are left out
    import scipy.special as scipy_special

    import chainrule.special  # noqa: F401  (registers scipy.special's functions)
except ImportError:  # pragma: no cover
    scipy_special = None
tfunc = torch.func


def t64(x):
    return torch.tensor(np.asarray(x, dtype=float))


# (name, chainrule scalar function, torch twin, input) -- inputs with exact zeros and ties
WEIGHTS = np.array([1.0, -2.0, 0.5, 3.0, -1.5, 2.5])
CASES = [
    ("prod_two_zeros", np.prod, torch.prod, np.zeros(2)),
    ("prod_one_zero", np.prod, torch.prod, np.array([0.0, 2.0, -3.0])),
    ("prod_three_zeros", np.prod, torch.prod, np.zeros(3)),
    ("prod_ties", np.prod, torch.prod, np.array([2.0, 2.0, 2.0])),
    ("prod_axis", lambda x: np.sum(np.prod(x, axis=0) * WEIGHTS[:3]),
     lambda x: (torch.prod(x, 0) * t64(WEIGHTS[:3])).sum(), np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 0.0]])),
    ("prod_axis_tuple_keepdims", lambda x: np.sum(np.prod(x, axis=(0, 2), keepdims=True) ** 2),
     lambda x: (x.prod(2, keepdim=True).prod(0, keepdim=True) ** 2).sum(), np.array([[[0.0, 1.0], [2.0, 3.0]]])),
    ("cumprod_zero_first", lambda x: np.sum(np.cumprod(x) * WEIGHTS[:4]),
     lambda x: (torch.cumprod(x, 0) * t64(WEIGHTS[:4])).sum(), np.array([0.0, 2.0, 3.0, -1.0])),
    ("cumprod_zeros_inside", lambda x: np.sum(np.cumprod(x) * WEIGHTS[:5]),
     lambda x: (torch.cumprod(x, 0) * t64(WEIGHTS[:5])).sum(), np.array([1.5, 0.0, 2.0, 0.0, -1.0])),
    ("cumprod_all_zero", lambda x: np.sum(np.cumprod(x) * WEIGHTS[:3]),
     lambda x: (torch.cumprod(x, 0) * t64(WEIGHTS[:3])).sum(), np.zeros(3)),
    ("cumprod_axis0", lambda x: np.sum(np.cumprod(x, axis=0) ** 2),
     lambda x: (torch.cumprod(x, 0) ** 2).sum(), np.array([[0.0, 1.0], [2.0, 0.0], [1.0, 3.0]])),
    ("nanprod", lambda x: np.nanprod(x), lambda x: torch.prod(torch.nan_to_num(x, nan=1.0)),
     np.array([0.0, np.nan, 0.0, 2.0])),
    ("cumulative_prod", lambda x: np.sum(np.cumulative_prod(x, include_initial=True) * WEIGHTS[:4]),
     lambda x: (torch.cumprod(x, 0) * t64(WEIGHTS[1:4])).sum(), np.array([0.0, 0.0, 2.0])),
    ("max_ties", lambda x: np.max(x) * np.sum(x), lambda x: torch.amax(x) * x.sum(), np.array([1.0, 3.0, 3.0])),
    ("prod_times_sum", lambda x: np.prod(x) * np.sum(x**2), lambda x: torch.prod(x) * (x**2).sum(),
     np.array([0.0, 1.0, -2.0])),
    ("norm_zero_rows", lambda x: np.sum(np.linalg.norm(x, axis=-1) * WEIGHTS[:3]),
     lambda x: (torch.linalg.vector_norm(x, dim=-1) * t64(WEIGHTS[:3])).sum(),
     np.array([[0.0, 0.0], [1.0, -2.0], [0.0, 0.0]])),
    ("xlogy_x_zero", lambda v: np.sum(scipy_special.xlogy(v[:2], v[2:]) * WEIGHTS[:2]),
     lambda v: (torch.xlogy(v[:2], v[2:]) * t64(WEIGHTS[:2])).sum(), np.array([0.0, 1.5, 2.0, 0.5])),
    ("xlog1py_x_zero", lambda v: np.sum(scipy_special.xlog1py(v[:2], v[2:]) * WEIGHTS[:2]),
     lambda v: (torch.special.xlog1py(v[:2], v[2:]) * t64(WEIGHTS[:2])).sum(), np.array([0.0, 1.5, 2.0, 0.5])),
    ("det_rank1_2x2", lambda a: np.linalg.det(a), torch.linalg.det, np.array([[1.0, 2.0], [2.0, 4.0]])),
    # torch.linalg.det's Hessian is NaN at rank n-2: its twin here is the Leibniz formula
    ("det_zero_2x2", lambda a: np.linalg.det(a), lambda a: a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0], np.zeros((2, 2))),
]

if not hasattr(np, "cumulative_prod"):  # pragma: no cover (NumPy < 2.1)
    CASES = [c for c in CASES if c[0] != "cumulative_prod"]
if scipy_special is None:  # pragma: no cover
    CASES = [c for c in CASES if not c[0].startswith("xlog")]


@pytest.mark.oracle
@pytest.mark.parametrize("name,f,tf,x", CASES, ids=[c[0] for c in CASES])
def test_gradient_and_hessian_match_torch_at_zeros_and_ties(name, f, tf, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_allclose(cr.grad(f)(x), tfunc.grad(tf)(t64(x)).numpy(), rtol=1e-10, atol=1e-12)
        expected = tfunc.hessian(tf)(t64(x)).numpy()
        np.testing.assert_allclose(cr.hessian(f)(x), expected, rtol=1e-10, atol=1e-12, err_msg="reverse over reverse")
        np.testing.assert_allclose(cr.jacfwd(cr.grad(f))(x), expected, rtol=1e-10, atol=1e-12, err_msg="fwd over rev")
        np.testing.assert_allclose(cr.jacfwd(cr.jacfwd(f))(x), expected, rtol=1e-10, atol=1e-12, err_msg="fwd over fwd")


def test_the_issue_examples():
    np.testing.assert_array_equal(cr.hessian(np.prod)(np.zeros(2)), [[0.0, 1.0], [1.0, 0.0]])
    h = cr.hessian(lambda x: np.cumprod(x)[-1])(np.array([0.0, 2.0, 3.0]))
    np.testing.assert_array_equal(h, [[0.0, 3.0, 2.0], [3.0, 0.0, 0.0], [2.0, 0.0, 0.0]])


def test_third_derivatives_of_products_at_zero():
    # prod(x0, x1, x2): d3 / dx0 dx1 dx2 = 1 everywhere
    assert cr.jacobian(cr.hessian(np.prod))(np.zeros(3))[0, 1, 2] == 1.0
    assert cr.jacfwd(cr.jacfwd(cr.jacfwd(lambda x: np.cumprod(x)[-1])))(np.zeros(3))[2, 1, 0] == 1.0


def test_products_near_underflow_have_exact_partials():
    x = np.array([1e-300, 1e-20, 5.0])  # prod = 5e-320 is subnormal: prod / x would lose every digit
    expected = [5e-20, 5e-300, 1e-320]
    np.testing.assert_allclose(cr.grad(np.prod)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(cr.grad(lambda x: np.cumprod(x)[-1])(x), expected, rtol=1e-12)
    y = np.array([1e-300, 1e-300, 2.0])  # the product underflows to 0, two partials do not
    np.testing.assert_allclose(cr.grad(np.prod)(y), [2e-300, 2e-300, 0.0], rtol=1e-12)
    t = cr.Tensor(x, requires_grad=True)
    np.prod(t).backward()
    np.testing.assert_allclose(t.grad, expected, rtol=1e-12)


# -- std / var over one entry, and with no degrees of freedom left -----------------------------------
@pytest.mark.parametrize("fn", [np.std, np.var, np.nanstd, np.nanvar])
def test_spread_of_one_entry_is_constant_to_every_order(fn):
    x = np.array([3.0])
    assert cr.grad(fn)(x).tolist() == [0.0]
    assert cr.hessian(fn)(x).tolist() == [[0.0]]
    assert cr.jvp(fn, (x,), (np.array([1.0]),)) == (0.0, 0.0)
    rows = np.array([[1.0], [2.0]])
    assert cr.grad(lambda r: np.sum(fn(r, axis=1)))(rows).tolist() == [[0.0], [0.0]]
    assert cr.grad(lambda r: np.sum(fn(r, axis=(0, 1), keepdims=True)))(np.ones((1, 1))).tolist() == [[0.0]]
    t = cr.Tensor(x, requires_grad=True)
    fn(t).backward()
    assert t.grad.tolist() == [0.0]


def test_nanstd_with_one_entry_left_in_a_row():
    x = np.array([[3.0, np.nan], [2.0, 1.0]])
    np.testing.assert_allclose(cr.grad(lambda x: np.sum(np.nanstd(x, axis=1)))(x), [[0.0, 0.0], [0.5, -0.5]])


def test_spread_with_no_degrees_of_freedom_is_nan_not_zero():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isnan(np.std(cr.Tensor([3.0]), ddof=1).item())
        assert np.isnan(cr.grad(lambda x: np.std(x, ddof=1))(np.array([3.0]))).all()
        assert np.isnan(cr.grad(lambda x: np.var(x, ddof=2))(np.array([3.0, 1.0]))).all()
    # several equal entries: std has a kink there (as |x| at 0); PyTorch's gradient is 0 there, and so is ours
    assert cr.grad(np.std)(np.array([3.0, 3.0])).tolist() == [0.0, 0.0]


@pytest.mark.oracle
@pytest.mark.parametrize("axis", [None, 0, (0, 2), (-1, 0)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_var_std_with_axis_tuples_and_keepdims_match_torch(axis, keepdims):
    rng = np.random.default_rng(3)
    x, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))
    for ddof in (0, 1):
        for fn, tfn in ((np.var, torch.var), (np.std, torch.std)):
            w = rng.normal(size=np.shape(fn(x, axis=axis, keepdims=keepdims)))

            def f(x, fn=fn, ddof=ddof, w=w):
                return np.sum(fn(x, axis=axis, keepdims=keepdims, ddof=ddof) * w)

            def tf(t, tfn=tfn, ddof=ddof, w=w):
                return (tfn(t, dim=axis, keepdim=keepdims, correction=ddof) * t64(w)).sum()

            np.testing.assert_allclose(cr.grad(f)(x), tfunc.grad(tf)(t64(x)).numpy(), rtol=1e-10)
            th = tfunc.jvp(tfunc.grad(tf), (t64(x),), (t64(v),))[1].numpy()
            np.testing.assert_allclose(cr.hvp(f, (x,), (v,)), th, rtol=1e-9, atol=1e-12)
    w = rng.normal(size=np.shape(np.mean(x, axis=axis, keepdims=keepdims)))
    g = cr.grad(lambda x: np.sum(np.mean(x, axis=axis, keepdims=keepdims) * w))(x)
    tg = tfunc.grad(lambda t: (torch.mean(t, dim=axis, keepdim=keepdims) * t64(w)).sum())(t64(x))
    np.testing.assert_allclose(g, tg.numpy(), rtol=1e-12)


# -- the registry mark ---------------------------------------------------------------------------------
def test_no_library_primitive_is_first_order_only():
    script = (
        "import importlib, pkgutil, chainrule\n"
        "for m in pkgutil.walk_packages(chainrule.__path__, 'chainrule.'):\n"
        "    if not m.name.endswith('__main__'):\n"
        "        try:\n"
        "            importlib.import_module(m.name)\n"
        "        except ImportError:\n"
        "            pass\n"
        "from chainrule.autodiff.primitive import REGISTRY\n"
        "print(len(REGISTRY), sorted(n for n, p in REGISTRY.items() if p.first_order_only))\n"
    )
    out = subprocess.run([sys.executable, "-Werror", "-c", script], capture_output=True, text=True, check=True)
    count, marked = out.stdout.strip().splitlines()[-1].split(" ", 1)
    assert int(count) >= 80
    assert marked == "[]", f"primitives exact at first order only: {marked}"


def test_a_first_order_only_primitive_raises_at_second_order():
    cube = Primitive("cube_first_order_test_only", lambda x: x**3, register=False)
    cube.defvjp(lambda g, ans, x: g * 3 * np.asarray(getattr(x, "data", x)) ** 2)  # reads x as a constant
    cube.defjvp(lambda t, ans, x: t * 3 * np.asarray(getattr(x, "data", x)) ** 2)
    cube.first_order_only = True
    assert cr.grad(cube)(2.0) == 12.0
    assert cr.jvp(cube, (2.0,), (1.0,)) == (8.0, 12.0)
    for second in (cr.grad(cr.grad(cube)), cr.jacfwd(cr.grad(cube)), cr.jacfwd(cr.jacfwd(cube))):
        with pytest.raises(NotImplementedError, match="cube_first_order_test_only: its derivative rules are exact"):
            second(2.0)


# -- det at singular matrices: the cofactor matrix, differentiable again -------------------------------
def _low_rank(rng, n, r, batch=()):
    return rng.normal(size=batch + (n, r)) @ rng.normal(size=batch + (r, n))


def _leibniz_det(a):
    """det of a 3x3 torch matrix by the Leibniz formula (exact derivatives of every order at any rank)."""
    return (a[0, 0] * (a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1]) - a[0, 1] * (a[1, 0] * a[2, 2] - a[1, 2] * a[2, 0])
            + a[0, 2] * (a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0]))


@pytest.mark.oracle
@pytest.mark.parametrize("n,rank", [(2, 1), (3, 2), (4, 3), (4, 2), (5, 3), (3, 3), (1, 0)])
def test_det_gradient_and_hessian_at_singular_matrices_match_torch(n, rank):
    a = _low_rank(np.random.default_rng(n * 10 + rank), n, rank)
    np.testing.assert_allclose(cr.grad(np.linalg.det)(a), tfunc.grad(torch.linalg.det)(t64(a)).numpy(), atol=1e-10)
    t = cr.Tensor(a, requires_grad=True)
    np.linalg.det(t).backward()  # the object API: no LinAlgError inside backward
    np.testing.assert_allclose(t.grad, tfunc.grad(torch.linalg.det)(t64(a)).numpy(), atol=1e-10)
    twin = _leibniz_det if n == 3 else torch.linalg.det
    expected = tfunc.hessian(twin)(t64(a)).numpy()
    if rank <= n - 2 and n != 3:  # torch's Hessian of det is NaN there: central differences of the gradient
        eps, grad = 1e-6, cr.grad(np.linalg.det)
        expected = np.zeros((n, n, n, n))
        for i in range(n):
            for j in range(n):
                step = np.zeros((n, n))
                step[i, j] = eps
                expected[:, :, i, j] = (grad(a + step) - grad(a - step)) / (2 * eps)
        np.testing.assert_allclose(cr.hessian(np.linalg.det)(a), expected, atol=1e-6)
        return
    np.testing.assert_allclose(cr.hessian(np.linalg.det)(a), expected, atol=1e-9)
    np.testing.assert_allclose(cr.jacfwd(cr.grad(np.linalg.det))(a), expected, atol=1e-9)


@pytest.mark.parametrize("rank", [0, 1, 2])
def test_det_derivatives_at_rank_deficient_3x3_match_leibniz(rank):
    a = _low_rank(np.random.default_rng(rank), 3, rank)
    expected = tfunc.hessian(_leibniz_det)(t64(a)).numpy()
    np.testing.assert_allclose(cr.hessian(np.linalg.det)(a), expected, atol=1e-9)
    np.testing.assert_allclose(cr.jacfwd(cr.jacfwd(np.linalg.det))(a), expected, atol=1e-9)
    third = tfunc.jacrev(tfunc.hessian(_leibniz_det))(t64(a)).numpy()
    np.testing.assert_allclose(cr.jacobian(cr.hessian(np.linalg.det))(a), third, atol=1e-9)


def test_det_of_a_stack_with_singular_members():
    rng = np.random.default_rng(7)
    a = np.stack([_low_rank(rng, 3, 1), rng.normal(size=(3, 3)), np.zeros((3, 3))])
    g = cr.grad(lambda a: np.sum(np.linalg.det(a)))(a)
    expected = np.stack([tfunc.grad(_leibniz_det)(t64(m)).numpy() for m in a])
    np.testing.assert_allclose(g, expected, atol=1e-10)


SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


@pytest.mark.parametrize("name,call,message", [
    ("inv", lambda a: np.linalg.inv(a).sum(), r"inv: the 2x2 matrix is singular, so it has no inverse"),
    ("solve", lambda a: np.linalg.solve(a, np.ones(2)).sum(), r"solve: the 2x2 matrix is singular, so a @ x = b"),
    ("slogdet", lambda a: np.linalg.slogdet(a)[1], r"slogdet: the 2x2 matrix is singular, so log\|det\| is -inf"),
    ("matrix_power", lambda a: np.linalg.matrix_power(a, -2).sum(), r"inv: the 2x2 matrix is singular"),
    ("tensorsolve", lambda a: np.linalg.tensorsolve(a, np.ones(2)).sum(), r"solve: the 2x2 matrix is singular"),
    ("cholesky", lambda a: np.linalg.cholesky(-np.eye(2) + 0 * a).sum(),
     r"cholesky: the 2x2 matrix is not positive definite"),
])
def test_where_no_derivative_exists_the_error_names_the_op_and_the_matrix(name, call, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(np.linalg.LinAlgError, match=message):
            cr.grad(call)(SINGULAR)
        t = cr.Tensor(SINGULAR, requires_grad=True)
        with pytest.raises(np.linalg.LinAlgError, match=message):
            call(t).backward()


def test_singular_member_of_a_stack_is_described():
    with pytest.raises(np.linalg.LinAlgError, match=r"inv: a 2x2 matrix of the stack \(2,\) is singular"):
        np.linalg.inv(cr.Tensor(np.stack([SINGULAR, np.eye(2)]), requires_grad=True))


def test_power_cross_derivative_at_exponent_zero():
    # d2 (x**y) / dx dy = x**(y-1) (1 + y log x): 1/x at y = 0 (torch's Hessian drops it there)
    h = cr.hessian(lambda x, y: x**y, argnums=(0, 1))(2.0, 0.0)
    assert h[0][1] == h[1][0] == 0.5
    np.testing.assert_allclose(h[1][1], np.log(2.0) ** 2)
    assert cr.jacfwd(cr.grad(lambda x, y: x**y, argnums=0), argnums=1)(2.0, 0.0) == 0.5
