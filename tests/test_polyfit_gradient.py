"""``np.polyfit`` on traced values and Tensors: NumPy's values, derivatives in ``x``, ``y`` and ``w`` checked with
finite differences (first and second order, both modes) and against ``jax.numpy.polyfit``."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

RNG = np.random.default_rng(0)
X = np.sort(RNG.uniform(-1, 2, 9))
Y = np.sin(2 * X) + 0.1 * RNG.standard_normal(9)
W = RNG.uniform(0.5, 2.0, 9)
Y2 = np.stack([Y, np.cos(X)], axis=1)


@pytest.mark.parametrize("kw", [dict(), dict(w=W), dict(full=True), dict(cov=True), dict(cov="unscaled", w=W)])
@pytest.mark.parametrize("y", [Y, Y2], ids=["1d", "2d"])
def test_values_match_numpy(y, kw):
    got, want = np.polyfit(X, cr.tensor(y), 3, **kw), np.polyfit(X, y, 3, **kw)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g.data if isinstance(g, cr.Tensor) else g), v, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("deg", [0, 1, 3])
def test_derivatives_by_finite_differences(deg):
    assert cr.gradcheck(lambda y: np.polyfit(X, y, deg), Y)
    assert cr.gradcheck(lambda x: np.polyfit(x, Y, deg), X)
    assert cr.gradcheck(lambda x, y, w: np.polyfit(x, y, deg, w=w), X, Y2, W)
    assert cr.gradcheck(lambda x, y: np.polyfit(x, y, deg, cov=True)[1], X, Y)
    assert cr.gradcheck(lambda x, y: np.polyval(np.polyfit(x, y, deg), 0.3), X, Y)


@pytest.mark.oracle
@pytest.mark.parametrize("kw", [dict(), dict(w=W)])
def test_gradients_match_jax(kw):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    weights = np.array([1.0, -2.0, 0.5, 3.0])

    def loss(lib):
        return lambda x, y: lib.sum(weights * lib.polyfit(x, y, 3, **kw))

    got = cr.grad(loss(np), argnums=(0, 1))(X, Y)
    want = jax.grad(loss(jnp), argnums=(0, 1))(jnp.array(X), jnp.array(Y))
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-8, atol=1e-10)


def test_tensor_backward_as_pytorch_users_write_it():
    y = cr.tensor(Y, requires_grad=True)
    slope = np.polyfit(X, y, 1)[0]
    slope.backward()
    xc = X - X.mean()
    np.testing.assert_allclose(y.grad.data, xc / np.sum(xc**2), rtol=1e-10)  # the slope is linear in y


def test_refuses_what_numpy_refuses_and_a_rank_deficient_fit():
    t = cr.tensor(Y)
    for args, kind in [((X, t, -1), ValueError), ((X[:, None], t, 1), TypeError), ((X[:3], t, 1), TypeError)]:
        with pytest.raises(kind):
            np.polyfit(*[a.data if isinstance(a, cr.Tensor) else a for a in args])
        with pytest.raises(kind, match="polyfit"):
            np.polyfit(*args)
    with pytest.raises(np.linalg.LinAlgError, match="rank"):
        np.polyfit(np.ones(9), t, 2)  # NumPy only warns (RankWarning) and returns one of many fits
