"""Graphs far deeper than Python's recursion limit: nothing may recurse over the graph.

A chain of 1,000,000 Scalar ops, a sum of 1,000,000 Scalar leaves, a chain of 100,000
Tensor ops; every gradient value is checked.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from chainrule import Scalar, Tensor

pytestmark = pytest.mark.slow

N_SCALAR = 1_000_000
N_TENSOR = 100_000


def test_the_graphs_are_deeper_than_the_recursion_limit():
    assert N_TENSOR > 10 * sys.getrecursionlimit()


def test_chain_of_a_million_scalar_ops():
    x = Scalar(0.5)
    y = x
    for i in range(N_SCALAR // 2):
        y = y * 1.000001 if i % 2 else y * 0.9999995
        y = y + 1e-7
    y.backward()
    expected = 1.000001 ** (N_SCALAR // 4) * 0.9999995 ** (N_SCALAR // 4)
    assert x.grad == pytest.approx(expected, rel=1e-9)
    y.zero_grad()
    assert x.grad == 0.0 and y.grad == 0.0


def test_chain_of_a_million_mixed_scalar_ops_with_shared_nodes():
    x = Scalar(0.3)
    y = x
    for _ in range(N_SCALAR // 5):
        y = (y + y) * 0.5  # two paths to the previous node, derivative 1
        y = y.tanh() * 0.0 + y - 0.0  # tanh branch contributes nothing
    y.backward()
    assert y.data == pytest.approx(0.3, rel=1e-12)
    assert x.grad == pytest.approx(1.0, rel=1e-9)


def test_sum_of_a_million_scalar_leaves():
    leaves = [Scalar(float(i % 7)) for i in range(N_SCALAR)]
    total = sum(leaves)
    assert total.data == sum(i % 7 for i in range(N_SCALAR))
    total.backward()
    assert all(leaf.grad == 1.0 for leaf in leaves)


def test_chain_of_100k_tensor_ops():
    x = Tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    y = x
    for i in range(N_TENSOR // 2):
        y = y * 1.00001 if i % 2 else y * 0.999995
        y = y + 0.001
    y.sum().backward()
    expected = 1.00001 ** (N_TENSOR // 4) * 0.999995 ** (N_TENSOR // 4)
    np.testing.assert_allclose(x.grad.data, np.full(3, expected), rtol=1e-9)


def test_chain_of_100k_mixed_tensor_ops_with_broadcasting():
    x = Tensor(np.array([[0.2], [0.4]]), requires_grad=True)
    b = Tensor(np.zeros(3), requires_grad=True)
    y = x
    for _ in range(N_TENSOR // 4):
        y = (y + b) * 1.0  # broadcasts to (2, 3) on the first step
        y = cr_tanh_identity(y)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, np.full((2, 1), 3.0), rtol=1e-9)
    np.testing.assert_allclose(b.grad.data, np.full(3, 2.0 * (N_TENSOR // 4)), rtol=1e-9)


def cr_tanh_identity(y):
    """y + 0 * tanh(y): two more ops, derivative exactly 1."""
    return y + y.tanh() * 0.0


def test_sum_of_100k_tensor_leaves():
    leaves = [Tensor(np.array([1.0, 2.0]), requires_grad=True) for _ in range(N_TENSOR)]
    total = sum(leaves)
    np.testing.assert_array_equal(total.data, [N_TENSOR, 2.0 * N_TENSOR])
    total.sum().backward()
    assert all(leaf.grad.data.tolist() == [1.0, 1.0] for leaf in leaves)
