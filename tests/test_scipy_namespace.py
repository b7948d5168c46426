"""chainrule.scipy: JAX's jax.scipy spellings (special, stats.norm, SciPy's linear-algebra signatures), checked
against SciPy itself and by finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

scipy_linalg = pytest.importorskip("scipy.linalg")
scipy_stats = pytest.importorskip("scipy.stats")
from chainrule.scipy import linalg, stats  # noqa: E402  (needs SciPy, as chainrule.special does)

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 3))
SPD = A @ A.T + 3 * np.eye(3)
LOWER = np.tril(SPD)
b, B = RNG.standard_normal(3), RNG.standard_normal((3, 2))


def test_special_is_chainrule_special():
    from chainrule.scipy.special import logsumexp

    assert logsumexp is cr.special.logsumexp


@pytest.mark.parametrize("name", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"])
def test_norm_matches_scipy_and_differentiates(name):
    x = np.linspace(-2, 2, 5)
    f = getattr(stats.norm, name)
    np.testing.assert_allclose(np.asarray(f(x, 0.3, 1.7)), getattr(scipy_stats.norm, name)(x, 0.3, 1.7), rtol=1e-10)
    for argnum in (0, 1, 2):
        args = [0.4, 0.3, 1.7]

        def g(v, argnum=argnum, args=args):
            return f(*args[:argnum], v, *args[argnum + 1:])

        h = 1e-6
        fd = (float(g(args[argnum] + h)) - float(g(args[argnum] - h))) / (2 * h)
        np.testing.assert_allclose(float(cr.grad(g)(args[argnum])), fd, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(stats.norm.ppf(np.array([0.1, 0.9]), 1, 2)),
                               scipy_stats.norm.ppf([0.1, 0.9], 1, 2))


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("rhs", [b, B], ids=["vector", "matrix"])
def test_solve_triangular_matches_scipy(lower, trans, rhs):
    t = LOWER if lower else LOWER.T
    for unit in (False, True):
        np.testing.assert_allclose(
            np.asarray(linalg.solve_triangular(t, rhs, trans=trans, lower=lower, unit_diagonal=unit)),
            scipy_linalg.solve_triangular(t, rhs, trans=trans, lower=lower, unit_diagonal=unit), rtol=1e-10)


def test_factorisations_follow_scipys_signatures():
    np.testing.assert_allclose(np.asarray(linalg.cholesky(SPD)), scipy_linalg.cholesky(SPD))  # upper by default
    np.testing.assert_allclose(np.asarray(linalg.cholesky(SPD, lower=True)), scipy_linalg.cholesky(SPD, lower=True))
    for lower in (True, False):
        for rhs in (b, B):
            np.testing.assert_allclose(np.asarray(linalg.cho_solve(linalg.cho_factor(SPD, lower=lower), rhs)),
                                       scipy_linalg.cho_solve(scipy_linalg.cho_factor(SPD, lower=lower), rhs))
    np.testing.assert_allclose(np.asarray(linalg.expm(SPD * 0.1)), scipy_linalg.expm(SPD * 0.1), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(linalg.eigh(SPD, eigvals_only=True)), scipy_linalg.eigvalsh(SPD))
    np.testing.assert_allclose(np.asarray(linalg.solve(SPD, b)), scipy_linalg.solve(SPD, b))
    assert [np.shape(m) for m in linalg.qr(np.ones((4, 2)))] == [(4, 4), (4, 2)]
    assert [np.shape(m) for m in linalg.qr(np.ones((4, 2)), mode="economic")] == [(4, 2), (2, 2)]
    with pytest.raises(ValueError, match="trans must be"):
        linalg.solve_triangular(LOWER, b, trans=3)


def test_solve_triangular_is_differentiable():
    def f(a):
        return cr.numpy.sum(linalg.solve_triangular(a, b, lower=True, trans="T") ** 2)

    g = np.asarray(cr.grad(f)(LOWER))
    h, fd = 1e-6, np.zeros_like(LOWER)
    for i, j in zip(*np.tril_indices(3)):
        e = np.zeros_like(LOWER)
        e[i, j] = h
        fd[i, j] = (float(f(LOWER + e)) - float(f(LOWER - e))) / (2 * h)
    np.testing.assert_allclose(np.tril(g), fd, rtol=1e-5, atol=1e-8)
