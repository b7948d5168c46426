"""``jax.nn``'s functions as ``chainrule.nn.<name>``: JAX's names, signatures and defaults (gelu's tanh
approximation, softmax's last axis, one_hot's zeros outside the classes), values and derivatives to second order
against JAX."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

jax = pytest.importorskip("jax", reason="jax is not installed (the dev extra has it)")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
pytestmark = pytest.mark.oracle

X = np.array([[-2.5, -0.3, 0.0, 0.4, 3.0], [1.5, -1.0, 0.2, -0.0, 0.7]])

ELEMENTWISE = ["celu", "elu", "gelu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity",
               "leaky_relu", "log_sigmoid", "mish", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign",
               "softplus", "squareplus", "swish", "tanh"]


def _second_order(lib_grad, f, x):
    shape = np.shape(f(x))
    weights = np.cos(np.arange(int(np.prod(shape)))).reshape(shape)
    first = lib_grad(lambda v: (f(v) * weights).sum())
    return first(x), lib_grad(lambda v: (first(v) ** 2).sum())(x)


@pytest.mark.parametrize("name", ELEMENTWISE + ["softmax", "log_softmax", "standardize", "glu"])
def test_functions_agree_with_jax_to_second_order(name):
    ours, theirs = getattr(cr.nn, name), getattr(jax.nn, name)
    x = X[:, :4] if name == "glu" else X
    np.testing.assert_allclose(ours(x), theirs(jnp.asarray(x)), rtol=1e-12, atol=1e-14)
    for got, want in zip(_second_order(cr.grad, ours, x), _second_order(jax.grad, theirs, jnp.asarray(x))):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_keyword_forms_and_defaults_are_jaxs():
    np.testing.assert_allclose(cr.nn.softmax(X, axis=0), jax.nn.softmax(X, axis=0), rtol=1e-12)
    np.testing.assert_allclose(cr.nn.gelu(X, approximate=False), jax.nn.gelu(X, approximate=False), rtol=1e-12)
    np.testing.assert_allclose(cr.nn.leaky_relu(X, negative_slope=0.2), jax.nn.leaky_relu(X, 0.2), rtol=1e-12)
    where = X > -1
    np.testing.assert_allclose(cr.nn.softmax(X, where=where), jax.nn.softmax(X, where=where), rtol=1e-12)
    np.testing.assert_allclose(cr.nn.logsumexp(X, axis=1), jax.nn.logsumexp(X, axis=1), rtol=1e-12)
    b = np.abs(X) + 0.5
    np.testing.assert_allclose(cr.nn.logsumexp(X, axis=1, b=b, keepdims=True),
                               jax.nn.logsumexp(X, axis=1, b=b, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(cr.grad(lambda v: cr.nn.logsumexp(v, b=b))(X),
                               jax.grad(lambda v: jax.nn.logsumexp(v, b=b))(X), rtol=1e-12)


def test_one_hot_is_jaxs():
    labels = np.array([[0, 2], [3, -1]])
    np.testing.assert_array_equal(cr.nn.one_hot(labels, 3), jax.nn.one_hot(labels, 3))  # outside: zeros
    np.testing.assert_array_equal(cr.nn.one_hot(labels, 3, axis=0), jax.nn.one_hot(labels, 3, axis=0))
    assert cr.nn.one_hot(np.array([1]), 2, dtype=np.float32).dtype == np.float32
    batched = cr.vmap(lambda v: cr.nn.one_hot(v, 4))(np.array([[1, 2], [0, 3]]))
    np.testing.assert_array_equal(np.asarray(batched), jax.nn.one_hot(np.array([[1, 2], [0, 3]]), 4))


def test_a_small_jax_style_classifier_trains_with_chainrule_nn():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(32, 3)), rng.integers(0, 2, size=32)
    params = {"w": rng.normal(size=(3, 2)) * 0.1, "b": np.zeros(2)}

    def loss(p):
        logits = cr.nn.gelu(x @ p["w"] + p["b"])
        return -np.mean(np.sum(cr.nn.log_softmax(logits) * cr.nn.one_hot(y, 2), axis=-1))

    first = loss(params)
    for _ in range(50):
        grads = cr.grad(loss)(params)
        params = cr.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, grads)
    assert loss(params) < first
