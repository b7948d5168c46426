"""JAX programs' first lines and helpers: jax.config, flatten_util.ravel_pytree, debug.print, jax.Array,
jax.nn.initializers (checked against JAX's statistics) and jax.random's further samplers."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import random
from chainrule.flatten_util import ravel_pytree
from chainrule.nn import initializers

KEY = random.PRNGKey(0)


def test_config_update_flags_and_x64_default_dtype():
    cr.config.update("jax_enable_x64", True)
    try:
        assert cr.config.jax_enable_x64 and cr.config.read("jax_enable_x64")
        assert random.normal(KEY, (2,)).dtype == np.float64
    finally:
        cr.config.update("jax_enable_x64", False)
    assert random.normal(KEY, (2,)).dtype == np.float32
    with pytest.raises(AttributeError, match="unrecognized config option 'jax_enable_x32'"):
        cr.config.update("jax_enable_x32", True)
    f = cr.jit(lambda x: x * 2.0)
    cr.config.update("jax_disable_jit", True)
    try:
        f(np.ones(2))
        assert f.traces == 0
    finally:
        cr.config.update("jax_disable_jit", False)
    f(np.ones(2))
    assert f.traces == 1


def test_ravel_pytree_round_trips_and_differentiates():
    tree = {"w": np.arange(4.0).reshape(2, 2), "b": [np.float32(1.5), np.ones(3, np.float32)]}
    flat, unravel = ravel_pytree(tree)
    assert flat.shape == (8,) and flat.dtype == np.float64
    back = unravel(flat)
    assert back["b"][1].dtype == np.float32 and back["w"].shape == (2, 2)
    np.testing.assert_array_equal(ravel_pytree(back)[0], flat)
    g = cr.grad(lambda v: cr.numpy.sum(unravel(v)["w"] ** 2))(flat)
    np.testing.assert_allclose(g, [0, 0, 0, 0, 0, 2, 4, 6])  # leaves in sorted-key order: b's, then w's
    with pytest.raises(ValueError, match="expected a vector of 8 entries"):
        unravel(np.zeros(3))


def test_debug_print_and_array(capsys):
    cr.debug.print("{a} and {}", cr.tensor([1.0, 2.0]), a=np.int64(3))
    assert capsys.readouterr().out == "3 and [1. 2.]\n"
    assert isinstance(cr.grad(lambda x: cr.numpy.sum(x * x))(np.ones(2)), cr.Array)


@pytest.mark.parametrize("name, scale, fan", [("glorot_normal", 1, "avg"), ("glorot_uniform", 1, "avg"),
                                              ("lecun_normal", 1, "in"), ("lecun_uniform", 1, "in"),
                                              ("he_normal", 2, "in"), ("he_uniform", 2, "in")])
@pytest.mark.parametrize("shape", [(300, 200), (3, 3, 32, 64)])
def test_variance_scaling_initializers_have_jaxs_variance_and_bounds(name, scale, fan, shape):
    w = getattr(initializers, name)()(KEY, shape)
    receptive = int(np.prod(shape[:-2]))
    fan_in, fan_out = shape[-2] * receptive, shape[-1] * receptive
    variance = scale / {"in": fan_in, "avg": (fan_in + fan_out) / 2}[fan]
    assert w.shape == shape and w.dtype == np.float32
    assert abs(w.var() / variance - 1) < 0.05
    bound = np.sqrt(3 * variance) if name.endswith("uniform") else 2 * np.sqrt(variance) / 0.87962566103423978
    assert np.abs(w).max() <= bound * (1 + 1e-6)


def test_other_initializers():
    q = initializers.orthogonal()(KEY, (6, 4))
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-5)
    q = initializers.orthogonal(scale=2.0)(KEY, (4, 6))
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(4), atol=1e-5)
    assert initializers.zeros(KEY, (2, 3)).sum() == 0 and initializers.ones(KEY, (2,), np.float64).dtype == np.float64
    assert initializers.constant(0.5)(KEY, (2,)).tolist() == [0.5, 0.5]
    assert abs(initializers.normal(0.5)(KEY, (20000,)).std() - 0.5) < 0.01
    d = initializers.delta_orthogonal()(KEY, (3, 3, 4, 4))
    np.testing.assert_allclose(d[1, 1].T @ d[1, 1], np.eye(4), atol=1e-5)
    assert np.abs(d).sum() == np.abs(d[1, 1]).sum()
    with pytest.raises(ValueError, match="mode must be"):
        initializers.variance_scaling(1.0, "fan_sum", "normal")


def test_random_samplers_have_their_distributions_means():
    n = 20000
    assert abs(random.laplace(KEY, (n,)).var() - 2.0) < 0.1
    assert abs(random.gamma(KEY, 3.0, (n,)).mean() - 3.0) < 0.05
    assert abs(random.beta(KEY, 2.0, 5.0, (n,)).mean() - 2 / 7) < 0.01
    counts = random.poisson(KEY, 4.0, (n,))
    assert counts.dtype == np.int32 and abs(counts.mean() - 4.0) < 0.05
    x = random.dirichlet(KEY, np.array([1.0, 2.0, 3.0]), (n,))
    np.testing.assert_allclose(x.sum(axis=-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(x.mean(axis=0), [1 / 6, 1 / 3, 1 / 2], atol=0.01)
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    for method in ("cholesky", "eigh"):
        y = random.multivariate_normal(KEY, np.array([1.0, -1.0]), cov, (n,), method=method)
        np.testing.assert_allclose(np.cov(np.asarray(y).T), cov, atol=0.06)
    g = cr.grad(lambda m: cr.numpy.sum(random.multivariate_normal(KEY, m, cov, (3,))))(np.zeros(2))
    np.testing.assert_allclose(g, [3.0, 3.0])
    assert (random.logistic(KEY, (2,)) == random.logistic(KEY, (2,))).all()
    assert random.cauchy(KEY, (4,)).shape == (4,) and random.t(KEY, 5.0, (3,)).shape == (3,)
    assert random.t(KEY, np.array([3.0, 5.0])).shape == (2,) and random.t(KEY, 5.0).shape == ()
    with pytest.raises(TypeError, match="not differentiable in its parameters here"):
        cr.grad(lambda a: cr.numpy.sum(random.gamma(KEY, a, (3,))))(2.0)
