"""Ops that compute an integer index inside (sort) or take one (take, take_along_axis) under vmap: the
index stays batched instead of being turned into one NumPy array (which raised ConcreteValueError)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

XB = np.array([[0.3, -1.2, 2.0, 0.5], [1.1, 0.4, -0.7, -2.0]])
IB = np.array([[3, 0], [1, 1]])


def _loop(f, *batches):
    return np.stack([np.asarray(f(*(b[k] for b in batches))) for k in range(len(batches[0]))])


@pytest.mark.parametrize("f", [
    lambda x: cr.sort(x),
    lambda x: cr.sort(cr.reshape(x, (2, 2)), axis=0),
    lambda x: cr.median(x),
    lambda x: cr.sum(cr.sort(x) * np.arange(4.0) * cr.sort(x)),
])
def test_sort_under_vmap_and_its_derivatives_equal_the_loop(f):
    np.testing.assert_allclose(cr.vmap(f)(XB), _loop(f, XB))
    s = lambda x: cr.sum(cr.sin(f(x)))  # noqa: E731
    np.testing.assert_allclose(cr.vmap(cr.grad(s))(XB), _loop(cr.grad(s), XB))
    np.testing.assert_allclose(cr.vmap(cr.hessian(s))(XB), _loop(cr.hessian(s), XB))


@pytest.mark.parametrize("f", [
    lambda x, i: cr.take(x, i),
    lambda x, i: cr.take(x, i, axis=0),
    lambda x, i: cr.take_along_axis(x, i, 0),
])
def test_take_with_a_batched_index_equals_the_loop(f):
    np.testing.assert_allclose(cr.vmap(f)(XB, IB), _loop(f, XB, IB))
    s = lambda x, i: cr.sum(f(x, i) ** 2)  # noqa: E731
    np.testing.assert_allclose(cr.vmap(cr.grad(s))(XB, IB), _loop(cr.grad(s), XB, IB))
