"""The LU factorisation, triangular and Cholesky solves, cholesky_ex / inv_ex and PyTorch's older svd / qr /
cholesky / lu spellings: values, pivots and gradients to second order against PyTorch 2.13, finite differences
in both modes, and the refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor

RNG = np.random.default_rng(5)
A = RNG.normal(size=(2, 4, 4))
B = RNG.normal(size=(2, 4, 3))
TRI = RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)  # well conditioned in both triangles
RHS = RNG.normal(size=(2, 3, 2))
SPD = A @ np.swapaxes(A, -1, -2) + np.eye(4)
CHOL = np.linalg.cholesky(SPD)


def _folded(upper):
    """A gradient of a function that reads one triangle of a symmetric matrix, with the other triangle folded
    onto it: the same for PyTorch's symmetrised gradient and for the one-triangle gradient."""
    if upper:
        return lambda g: np.triu(g) + np.swapaxes(np.tril(g, -1), -1, -2)
    return lambda g: np.tril(g) + np.swapaxes(np.triu(g, 1), -1, -2)


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is the oracle for these tests")


def _v(x):
    return x.numpy() if isinstance(x, Tensor) else x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _oracle(fn, arrays, second=True, rtol=1e-9, project=None):
    """fn(lib, *tensors) -> tensor (lib: chainrule or torch), compared: values, the gradient of a weighted sum of
    squares and (second) the gradient of the squared gradient. ``project[i]``: compare argument i's gradients
    after that map (the entries PyTorch's convention gives a gradient the function does not read)."""
    torch = _torch()
    ours = [Tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's deprecation notes on its older spellings
        out, tout = fn(cr, *ours), fn(torch, *theirs)
    np.testing.assert_allclose(_v(out), _v(tout), rtol=rtol, atol=1e-11)
    w = RNG.uniform(0.5, 1.5, out.shape)
    grads = cr.autograd.grad((out * out * w).sum(), ours, create_graph=second)
    tgrads = torch.autograd.grad((tout * tout * torch.tensor(w)).sum(), theirs, create_graph=second)
    keep = project or {}
    for i, (g, tg) in enumerate(zip(grads, tgrads, strict=True)):
        f = keep.get(i, lambda x: x)
        np.testing.assert_allclose(f(_v(g)), f(_v(tg)), rtol=rtol, atol=1e-10)
    if second:
        v = [RNG.uniform(0.5, 1.5, a.shape) for a in arrays]
        again = cr.autograd.grad(sum((g * g * vi).sum() for g, vi in zip(grads, v, strict=True)), ours)
        tagain = torch.autograd.grad(sum((g * g * torch.tensor(vi)).sum() for g, vi in zip(tgrads, v, strict=True)),
                                     theirs)
        for i, (g, tg) in enumerate(zip(again, tagain, strict=True)):
            f = keep.get(i, lambda x: x)
            np.testing.assert_allclose(f(_v(g)), f(_v(tg)), rtol=1e-7, atol=1e-9)


# -- LU --------------------------------------------------------------------------------------------------
@pytest.mark.oracle
def test_lu_factor_values_and_pivots_are_pytorchs():
    torch = _torch()
    for a in (A, RNG.integers(-3, 4, size=(3, 5, 5)).astype(float)):  # integer-valued: ties in the pivot column
        lu, piv = cr.linalg.lu_factor(Tensor(a))
        tlu, tpiv = torch.linalg.lu_factor(torch.tensor(a))
        np.testing.assert_allclose(lu.numpy(), tlu.numpy(), rtol=1e-12, atol=1e-12)
        assert piv.dtype == np.int32 and piv.tolist() == tpiv.tolist()
        p, low, up = cr.lu_unpack(lu, piv)
        np.testing.assert_allclose((p @ low @ up).numpy(), a, atol=1e-12)


@pytest.mark.oracle
def test_lu_gradients_match_pytorch():
    _oracle(lambda lib, a: lib.linalg.lu_factor(a)[0], [A])
    _oracle(lambda lib, a: lib.linalg.lu(a)[1] * 2 + lib.linalg.lu(a)[2], [A])
    assert cr.gradcheck(lambda a: cr.linalg.lu_factor(a, pivot=False).LU, A + 4 * np.eye(4))  # (torch: GPU only)


@pytest.mark.oracle
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_matches_pytorch(left, adjoint):
    b = B if left else np.swapaxes(B, -1, -2).copy()
    _oracle(lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, left=left, adjoint=adjoint), [A, b])


def test_lu_gradcheck_both_modes_second_order():
    assert cr.gradcheck(lambda a: cr.linalg.lu_factor(a).LU, A)
    assert cr.gradcheck(lambda a, b: cr.linalg.lu_solve(*cr.linalg.lu_factor(a), b, adjoint=True), A, B)
    z = A[0] + 1j * RNG.normal(size=(4, 4))
    assert cr.gradcheck(lambda a: cr.linalg.lu_factor(a).LU, z)  # complex: holomorphic without the pivots


@pytest.mark.oracle
def test_inv_ex_and_cholesky_ex_report_failures_as_pytorch():
    torch = _torch()
    singular = A.copy()
    singular[1, :, 2] = singular[1, :, 0]
    singular[1, :, 1] = 0.0
    inverse, info = cr.linalg.inv_ex(Tensor(singular))
    tinverse, tinfo = torch.linalg.inv_ex(torch.tensor(singular))
    assert info.tolist() == tinfo.tolist() == [0, 2]
    np.testing.assert_allclose(inverse.numpy()[0], tinverse.numpy()[0], rtol=1e-10)
    assert np.isnan(inverse.numpy()[1]).all()
    with pytest.raises(np.linalg.LinAlgError, match="inv_ex: the matrix is singular"):
        cr.linalg.inv_ex(singular, check_errors=True)
    bad = np.stack([SPD[0], -SPD[1], np.diag([1.0, 1.0, -1.0, 1.0])])
    factor, info = cr.linalg.cholesky_ex(Tensor(bad))
    tfactor, tinfo = torch.linalg.cholesky_ex(torch.tensor(bad))
    assert info.tolist() == tinfo.tolist() == [0, 1, 3]
    np.testing.assert_allclose(factor.numpy()[0], tfactor.numpy()[0], rtol=1e-12)
    with pytest.raises(np.linalg.LinAlgError, match="cholesky_ex: .* leading minor of order 3"):
        cr.linalg.cholesky_ex(bad[2], check_errors=True)
    _oracle(lambda lib, a: lib.linalg.inv_ex(a)[0], [A])
    _oracle(lambda lib, a: lib.linalg.cholesky_ex(a, upper=True)[0], [SPD], second=False,
            project={0: _folded(True)})  # (PyTorch symmetrises its gradient)


# -- triangular and Cholesky solves ---------------------------------------------------------------------------
@pytest.mark.oracle
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular_matches_pytorch(upper, left, unitriangular):
    b = RHS if left else np.swapaxes(RHS, -1, -2).copy()
    _oracle(lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unitriangular),
            [TRI, b])


@pytest.mark.oracle
@pytest.mark.parametrize("upper, transpose", [(True, False), (False, True), (True, True)])
def test_triangular_solve_matches_pytorch(upper, transpose):
    _oracle(lambda lib, b, a: lib.triangular_solve(b, a, upper, transpose)[0], [RHS, TRI])
    x, coefficient = Tensor(RHS).triangular_solve(Tensor(TRI), upper=upper, transpose=transpose)
    np.testing.assert_array_equal(coefficient.numpy(), TRI)


@pytest.mark.oracle
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_match_pytorch_on_the_triangle_read(upper):
    factor = np.swapaxes(CHOL, -1, -2).copy() if upper else CHOL
    triangle = np.triu if upper else np.tril
    # (second order: PyTorch's first-order gradient has entries off the triangle, so its second differs; ours is
    # checked against finite differences below)
    _oracle(lambda lib, b, f: lib.cholesky_solve(b, f, upper), [B, factor], project={1: triangle}, second=False)
    _oracle(lambda lib, f: lib.cholesky_inverse(f, upper), [factor[0]], project={0: triangle}, second=False)


def test_triangular_gradcheck_and_the_triangle_not_read_gets_zero():
    assert cr.gradcheck(lambda a, b: cr.linalg.solve_triangular(a, b, upper=False, unitriangular=True), TRI, RHS)
    assert cr.gradcheck(lambda b, f: cr.cholesky_solve(b, f), B, CHOL)
    assert cr.gradcheck(lambda f: cr.cholesky_inverse(f, upper=True), np.swapaxes(CHOL[0], -1, -2).copy())
    g = cr.grad(lambda f: cr.cholesky_inverse(f).sum())(CHOL[0])
    assert np.all(np.triu(g, 1) == 0)


def test_refusals_name_the_function():
    with pytest.raises(np.linalg.LinAlgError, match=r"solve_triangular: needs square matrices .* got shape \(3, 2\)"):
        cr.linalg.solve_triangular(np.ones((3, 2)), np.ones((3, 1)), upper=True)
    with pytest.raises(np.linalg.LinAlgError, match=r"lu_factor: needs square matrices"):
        cr.linalg.lu_factor(np.ones((2, 3)))
    with pytest.raises(Exception, match="vmap: a batched value was converted to a NumPy array"):
        cr.vmap(lambda a: cr.linalg.lu_factor(a).LU)(A)


# -- PyTorch's older spellings --------------------------------------------------------------------------------
@pytest.mark.oracle
def test_older_svd_qr_cholesky_lu_match_pytorch():
    torch = _torch()
    tall = RNG.normal(size=(2, 4, 3))
    # singular vectors up to sign: compare sign-free products
    _oracle(lambda lib, a: (lambda r: r[0] @ lib.diag_embed(r[1]) @ r[2].mT)(lib.svd(a)) if lib is torch else
            (lambda r: r[0] @ (r[1][..., None] * r[2].mT))(a.svd()), [tall])
    _oracle(lambda lib, a: (lambda r: r[2] * r[2])(a.svd()), [tall])
    _oracle(lambda lib, a: a.svd()[1], [tall])
    u, s, v = cr.svd(Tensor(tall), some=False)
    tu, ts, tv = torch.svd(torch.tensor(tall), some=False)
    assert u.shape == tuple(tu.shape) and v.shape == tuple(tv.shape)
    u, s, v = Tensor(tall).svd(compute_uv=False)
    assert not u.numpy().any() and u.shape == (2, 4, 4) and v.shape == (2, 3, 3)
    _oracle(lambda lib, a: a.qr()[1], [tall])
    _oracle(lambda lib, a: lib.qr(a)[0], [tall])
    _oracle(lambda lib, a: a.cholesky(upper=True), [SPD], second=False, project={0: _folded(True)})
    _oracle(lambda lib, a: lib.cholesky(a), [SPD], second=False, project={0: _folded(False)})
    _oracle(lambda lib, a: a.lu()[0], [A])
    _oracle(lambda lib, b, a: b.lu_solve(*a.lu()), [B, A])
    lu, piv, info = Tensor(A).lu(get_infos=True)
    assert info.tolist() == [0, 0]
