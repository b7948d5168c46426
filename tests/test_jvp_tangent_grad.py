"""Differentiating a jvp with respect to its TANGENT (the primal a constant): J^T u by reverse mode over
forward mode. The tangent rules ran on raw arrays when only the tangent was traced, so the result was a
silent 0; JAX's values are the reference (written out here: J = diag(f'(x)) for elementwise f)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

X = np.array([0.3, 1.2, -0.8])
D = np.cos(X) * X + np.sin(X)  # f(a) = sin(a) * a, f'(a) = cos(a) a + sin(a)


def _tangent_out(t):
    return cr.jvp(lambda a: cr.sin(a) * a, (X,), (t,))[1]


@pytest.mark.parametrize("transform", [cr.jacrev, cr.jacfwd])
def test_the_jacobian_with_respect_to_the_tangent_is_the_jacobian_of_f(transform):
    np.testing.assert_allclose(transform(_tangent_out)(X), np.diag(D))


def test_grad_and_hessian_with_respect_to_the_tangent():
    np.testing.assert_allclose(cr.grad(lambda t: cr.sum(_tangent_out(t)))(X), D)
    np.testing.assert_allclose(cr.hessian(lambda t: cr.sum(_tangent_out(t) ** 2))(X), np.diag(2 * D**2))
    np.testing.assert_allclose(cr.grad(lambda t: cr.linearize(lambda a: cr.sum(cr.sin(a) * a), X)[1](t))(X), D)


def test_under_vmap():
    tb = np.stack([X, 2 * X])
    np.testing.assert_allclose(cr.vmap(cr.grad(lambda t: cr.sum(_tangent_out(t) ** 2)))(tb), 2 * D**2 * tb)
