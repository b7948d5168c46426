"""minimize through vmap: f written for one point in any way; one start behaves as inside a batch."""

from __future__ import annotations

import numpy as np
import pytest

from chainrule.optimize import minimize

MINIMA = np.array([[3.0, 2.0], [-2.805118, 3.131312], [-3.779310, -3.283186], [3.584428, -1.848126]])
GRID = np.array([[a, b] for a in (-4.0, -1.0, 1.0, 4.0) for b in (-4.0, -1.0, 1.0, 4.0)])
A = np.array([[1.0, 0.0], [0.0, 1.0]])


def himmelblau_ellipsis(p):
    return (p[..., 0] ** 2 + p[..., 1] - 11) ** 2 + (p[..., 0] + p[..., 1] ** 2 - 7) ** 2


def himmelblau_algebra(x):
    # x @ A @ x = x0^2 + x1^2; norm(x)^2 = x0^2 + x1^2: the same function, written with a matrix and a norm
    u = np.array([1.0, 0.0]) @ x
    v = np.array([0.0, 1.0]) @ x
    sq = x @ A @ x
    return (sq - v**2 + v - 11) ** 2 + (u + np.linalg.norm(x) ** 2 - u**2 - 7) ** 2


@pytest.mark.parametrize("f", [himmelblau_ellipsis, himmelblau_algebra], ids=["p[...,0]", "x@A@x,norm"])
def test_himmelblau_four_minima_from_a_grid(f):
    r = minimize(f, GRID, method="adam", lr=0.1, steps=3000, tol=1e-8)
    assert r.converged.all()
    dist = np.linalg.norm(r.x[:, None, :] - MINIMA[None], axis=2)
    assert dist.min(axis=1).max() < 1e-5
    assert set(dist.argmin(axis=1).tolist()) == {0, 1, 2, 3}
    np.testing.assert_allclose(r.fun, [f(x) for x in r.x], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("f", [himmelblau_ellipsis, himmelblau_algebra], ids=["p[...,0]", "x@A@x,norm"])
@pytest.mark.parametrize("method", ["gd", "adam"])
def test_one_start_is_exactly_the_same_start_inside_a_batch(f, method):
    kw = dict(method=method, lr=0.01, steps=60, tol=None)
    together = minimize(f, GRID[:6], **kw)
    for i in (0, 3, 5):
        alone = minimize(f, GRID[i], **kw)
        np.testing.assert_array_equal(alone.trajectory.positions, together.path(i).positions)
        np.testing.assert_array_equal(alone.trajectory.values, together.path(i).values)
        np.testing.assert_array_equal(alone.trajectory.grads, together.path(i).grads)


def test_one_vector_start_with_a_vector_constant_converges_to_it():
    # issue 9 #9: a single 1-D start and f = sum((x - t)**2) used to converge elsewhere and report a wrong fun
    t = np.array([1.0, -2.0, 0.5])
    f = lambda x: np.sum((x - t) ** 2)  # noqa: E731
    r = minimize(f, np.zeros(3), lr=0.1, steps=500, tol=1e-10)
    np.testing.assert_allclose(r.x, t, atol=1e-9)
    assert r.fun == f(r.x)
    many = minimize(f, np.zeros((4, 3)), lr=0.1, steps=500, tol=1e-10)
    np.testing.assert_array_equal(many.x[0], r.x)
    # a one-number function with a vector of starts given as (n, 1)
    r1 = minimize(lambda x: (x - 3.0) ** 2, 0.0, lr=0.1, steps=500, tol=1e-10)
    assert abs(r1.x - 3.0) < 1e-9 and isinstance(r1.x, float)
