"""Inside grad/jvp/..., turning a traced Tensor into a NumPy array is an error, not a lost gradient."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp


def test_np_array_of_traced_values_inside_grad_raises():
    with pytest.raises(TypeError, match=r"converted to a NumPy array.*gradient would be lost.*cnp\.array"):
        cr.grad(lambda x: np.sum(np.array([x[0] * 2, x[1]])))(np.array([1.0, 2.0]))


def test_np_asarray_inside_jvp_raises():
    with pytest.raises(TypeError, match="converted to a NumPy array"):
        cr.jvp(lambda x: np.asarray(x) * 2, (np.array([1.0]),), (np.array([1.0]),))


def test_the_traced_alternative_gives_the_gradient():
    g = cr.grad(lambda x: cnp.sum(cnp.array([x[0] * 2, x[1]])))(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(g, [2.0, 1.0])


def test_outside_transforms_np_asarray_reads_the_values():
    x = cr.Tensor([1.0, 2.0], requires_grad=True)
    np.testing.assert_array_equal(np.asarray(x * 2), [2.0, 4.0])
    np.testing.assert_allclose(x * 2, [2.0, 4.0])


def test_detached_values_convert_inside_transforms():
    def f(x):
        scale = float(np.max(np.asarray(x.detach())))  # a constant, on purpose
        return np.sum(x) * scale

    assert cr.grad(f)(np.array([1.0, 3.0])).tolist() == [3.0, 3.0]
