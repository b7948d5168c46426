"""``chainrule.lax`` against ``jax.lax`` on the spellings JAX programs use beyond the basics of test_lax.py:
start indices that vary per example under vmap, and lax's ``*_in_dim``, ``sort``, ``top_k``, ``cummax``,
``cumlogsumexp``, ``rem``, ``batch_matmul`` and generic ``reduce``. Each program is written once and run with
(chainrule.lax, chainrule.numpy) and with (jax.lax, jax.numpy); values, gradients, Hessians and vmapped
gradients must agree."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule import lax

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)
pytestmark = pytest.mark.oracle

OURS, THEIRS = (lax, cnp), (jax.lax, jnp)
X = np.array([0.7, -0.3, 0.4, 1.2])
BATCH = np.array([[0.7, -0.3, 0.4, 1.2], [-0.2, 0.9, 0.8, -1.0], [0.6, 0.1, -0.4, 0.55], [-0.5, -0.6, -0.7, 0.3]])


def dynamic_slice_counted_start(L, N):
    """The start is the number of positive entries: each row of BATCH starts elsewhere (one is clamped)."""
    return lambda x: N.sum(L.dynamic_slice(x, (N.sum(x > 0),), (2,)) ** 2 * N.array([1.0, 3.0]))


def dynamic_update_slice_counted_start(L, N):
    return lambda x: N.sum(L.dynamic_update_slice(x, N.sin(x[:2]) * 5, (N.sum(x > 0) - 1,)) ** 2 * N.arange(4.0))


def dynamic_slice_2d_counted_start(L, N):
    def f(x):
        m = N.reshape(N.concatenate([x, x ** 2, N.sin(x)]), (3, 4))
        block = L.dynamic_slice(m, (N.sum(x > 0) - 2, 3 - N.sum(x > 0)), (2, 2))
        return N.sum(block * N.array([[1.0, 2.0], [3.0, 4.0]]))
    return f


def dynamic_update_slice_2d_counted_start(L, N):
    def f(x):
        m = N.reshape(N.concatenate([x, x ** 2, N.sin(x)]), (3, 4))
        out = L.dynamic_update_slice(m, N.reshape(x, (2, 2)) ** 3, (N.sum(x > 0) - 2, 1))
        return N.sum(out ** 2 * N.arange(12.0).reshape(3, 4))
    return f


BATCHED_STARTS = {f.__name__: f for f in [dynamic_slice_counted_start, dynamic_update_slice_counted_start,
                                          dynamic_slice_2d_counted_start, dynamic_update_slice_2d_counted_start]}


@pytest.mark.parametrize("name", list(BATCHED_STARTS))
def test_a_start_index_that_differs_per_example_under_vmap_as_jax(name):
    """vmap (and jit) over a program whose start index is computed from the input: each example (each replay)
    slices its own block (int() of a batched value raised ConcreteValueError; jit raised JitError)."""
    ours, theirs = BATCHED_STARTS[name](*OURS), BATCHED_STARTS[name](*THEIRS)
    np.testing.assert_allclose(cr.vmap(ours)(BATCH), jax.vmap(theirs)(BATCH), rtol=1e-12)
    np.testing.assert_allclose(cr.vmap(cr.grad(ours))(BATCH), jax.vmap(jax.grad(theirs))(BATCH), rtol=1e-10,
                               atol=1e-14)
    jitted = cr.jit(ours)  # a replay given another input slices at that input's start
    for x in BATCH:
        np.testing.assert_allclose(np.asarray(jitted(x)), theirs(x), rtol=1e-12)
    x = BATCH[1]  # one example on its own, to second order
    np.testing.assert_allclose(cr.hessian(ours)(x), jax.hessian(theirs)(x), rtol=1e-9, atol=1e-12)


NAMES = {
    "dynamic_slice_in_dim": lambda L, N: lambda x: N.sum(L.dynamic_slice_in_dim(N.reshape(x, (2, 2)), 1, 1, 1) ** 3),
    "dynamic_index_in_dim": lambda L, N: lambda x: N.sum(L.dynamic_index_in_dim(x, 2, keepdims=False) * x),
    "dynamic_update_slice_in_dim": lambda L, N: lambda x: N.sum(
        L.dynamic_update_slice_in_dim(x, x[:2] ** 2, 1, 0) ** 2 * N.arange(4.0)),
    "dynamic_update_index_in_dim": lambda L, N: lambda x: N.sum(
        L.dynamic_update_index_in_dim(x, x[0] ** 2, 2, 0) ** 2 * N.arange(4.0)),
    "index_in_dim": lambda L, N: lambda x: N.sum(L.index_in_dim(N.reshape(x, (2, 2)), -1, axis=1) * x[:2]),
    "slice_in_dim": lambda L, N: lambda x: N.sum(L.slice_in_dim(x, 1, 4, stride=2) ** 3),
    "sort": lambda L, N: lambda x: N.sum(L.sort(x) * N.arange(4.0)),
    "sort_by_key": lambda L, N: lambda x: N.sum(L.sort((x, N.sin(x)), num_keys=1)[1] * N.arange(4.0)),
    "top_k": lambda L, N: lambda x: N.sum(L.top_k(x, 2)[0] ** 2 * N.array([1.0, 3.0])),
    "cummax": lambda L, N: lambda x: N.sum(L.cummax(x) * N.arange(4.0)),
    "cummin_reverse": lambda L, N: lambda x: N.sum(L.cummin(x, reverse=True) * N.arange(4.0)),
    "cumlogsumexp_axis1_reverse": lambda L, N: lambda x: N.sum(
        L.cumlogsumexp(N.reshape(x * 4, (2, 2)), axis=1, reverse=True) * N.arange(4.0).reshape(2, 2)),
    "rem": lambda L, N: lambda x: N.sum(L.rem(x * 3, 1.3) * x),
    "batch_matmul": lambda L, N: lambda x: N.sum(L.batch_matmul(N.reshape(x, (1, 2, 2)), N.reshape(x ** 2, (1, 2, 2)))),
    "reduce_add": lambda L, N: lambda x: L.reduce(x ** 2, 0.0, L.add, (0,)),
    "reduce_max_2d": lambda L, N: lambda x: N.sum(L.reduce(N.reshape(x, (2, 2)), -np.inf, L.max, (1,)) * x[:2]),
    "reduce_lambda": lambda L, N: lambda x: N.sum(L.reduce(N.reshape(x, (2, 2)), 1.0, lambda a, b: a * b, (0,))),
}


@pytest.mark.parametrize("name", list(NAMES))
def test_lax_names_as_jax(name):
    """JAX's names for slicing, sorting and running reductions (each was missing: AttributeError)."""
    ours, theirs = NAMES[name](*OURS), NAMES[name](*THEIRS)
    np.testing.assert_allclose(ours(X), theirs(X), rtol=1e-12)
    np.testing.assert_allclose(cr.hessian(ours)(X), jax.hessian(theirs)(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cr.vmap(cr.grad(ours))(BATCH), jax.vmap(jax.grad(theirs))(BATCH), rtol=1e-10,
                               atol=1e-14)


def test_lax_reduce_of_several_operands_says_to_reduce_each():
    with pytest.raises(NotImplementedError, match=r"lax\.reduce: several operands.*reduce each operand"):
        lax.reduce((X, X), (0.0, 0.0), lambda a, b: a, (0,))


def test_dynamic_update_slice_with_a_batched_start_keeps_the_operand_exactly_outside_the_block():
    """The update is selected in, not added as a difference: inf and tiny values outside the block survive."""
    x = np.array([1e-20, np.inf, 3.0, 0.1])
    ours = cr.vmap(lambda i: lax.dynamic_update_slice(x, np.array([1.0, 2.0]), (i,)))(np.array([0, 1, 5, -1]))
    theirs = jax.vmap(lambda i: jax.lax.dynamic_update_slice(x, jnp.array([1.0, 2.0]), (i,)))(np.array([0, 1, 5, -1]))
    np.testing.assert_array_equal(ours, theirs)
