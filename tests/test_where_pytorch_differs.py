"""Second derivatives where chainrule keeps the true value and PyTorch 2.13 gives another.

chainrule follows PyTorch's conventions, at kinks and ties included; the exceptions are the points below, where
the function is smooth and PyTorch's backward formulas lose the derivative (a ``where`` that masks one path of
a product, 0 * inf inside a formula, a log-space trick that cannot take an exact zero). A fuzzer against
PyTorch found each; each is checked here against central finite differences of chainrule's first-order
gradients (themselves checked against PyTorch elsewhere), and the docstring says what PyTorch answers.
"""

from __future__ import annotations

import numpy as np

import chainrule as cr


def gradients(program, inputs, create_graph=False):
    xs = [cr.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in inputs]
    return xs, cr.autograd.grad(program(*xs), xs, create_graph=create_graph)


def second_order_and_finite_differences(program, inputs, weights, eps=1e-6):
    """The gradient of s = sum_k <weights_k, d program / d input_k>, by chainrule's double backward and by central
    differences of s (first-order gradients only)."""
    inputs = [np.asarray(a, dtype=np.float64) for a in inputs]

    def s(values):
        return sum(float((g.numpy() * w).sum()) for g, w in zip(gradients(program, values)[1], weights))

    xs, gs = gradients(program, inputs, create_graph=True)
    ours = [h.numpy() for h in cr.autograd.grad(sum((g * cr.tensor(w)).sum() for g, w in zip(gs, weights)), xs)]
    numeric = []
    for k, a in enumerate(inputs):
        d = np.zeros(a.shape)
        for i in np.ndindex(a.shape):
            step = np.zeros(a.shape)
            step[i] = eps
            hi = [v + step if j == k else v for j, v in enumerate(inputs)]
            lo = [v - step if j == k else v for j, v in enumerate(inputs)]
            d[i] = (s(hi) - s(lo)) / (2 * eps)
        numeric.append(d)
    return ours, numeric


def test_power_mixed_derivative_at_exponent_zero():
    """d/dy d/db b ** y = b ** (y - 1) (1 + y log b) is 1 / b at y = 0. PyTorch gives 0: its d/db is
    where(y == 0, 0, y * b ** (y - 1)), and the where drops the exponent's path too (seen in
    smooth_l1_loss(h, y) ** y programs at a target of exactly 0)."""
    b, y = np.array([0.3, 2.0, 1.5]), np.array([0.0, -0.0, 0.7])
    ours, numeric = second_order_and_finite_differences(lambda b, y: (b**y).sum(), [b, y], [np.ones(3), np.zeros(3)])
    np.testing.assert_allclose(ours[1], numeric[1], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours[1][:2], 1 / b[:2])


def test_logcumsumexp_second_derivative_with_a_zero_cotangent():
    """logcumsumexp is smooth; PyTorch's backward works with log |g|, so an exact 0 in the output's cotangent
    (here the factor y = 0) gives it a wrong second derivative (0.39 where the true value is 4.72) or NaN."""
    y = np.array([2.0, -1.0, 0.0])
    ours, numeric = second_order_and_finite_differences(
        lambda x: ((cr.logcumsumexp(x, -1) * cr.tensor(y)) ** 2).sum(), [np.zeros(3)], [np.cos([1.0, 2.0, 3.0])])
    np.testing.assert_allclose(ours[0], numeric[0], rtol=1e-6, atol=1e-8)
    assert abs(ours[0][0] - 4.716) < 1e-3


def test_sinc_second_derivative_at_zero():
    """sinc''(0) = -pi ** 2 / 3. PyTorch gives NaN at 0 (the 0/0 of its formula, masked at first order only) and 0
    at 1e-9 (its formula's cancellation)."""
    x = np.array([0.0, -0.0, 1e-9, 0.3])
    ours, numeric = second_order_and_finite_differences(lambda x: cr.sinc(x).sum(), [x], [np.ones(4)], eps=1e-4)
    np.testing.assert_allclose(ours[0], numeric[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ours[0][:3], -np.pi**2 / 3, rtol=1e-8)


def test_cosine_similarity_second_derivative_inside_the_eps_ball():
    """Where ||y|| < eps, cosine_similarity(x, y) = <x / ||x||, y / eps>: linear in y, smooth. PyTorch's second
    derivative there is NaN (its norm's backward at 0); chainrule's is the function's (steps smaller than eps)."""
    x, y = np.array([[0.3, -0.4]]), np.zeros((1, 2))

    def program(x, y):
        c = cr.nn.functional.cosine_similarity(x, y, dim=-1)
        return (3 * c**2 + c).sum()

    ours, numeric = second_order_and_finite_differences(program, [x, y], [np.zeros((1, 2)), np.array([[1.0, 2.0]])],
                                                        eps=1e-11)
    np.testing.assert_allclose(ours[1], numeric[1], rtol=5e-3)  # (differences of numbers near 1e16)
    np.testing.assert_allclose(ours[1], [[-3.6e16, 4.8e16]], rtol=1e-9)


def test_a_write_through_repeated_indices_sends_one_gradient():
    """h[[0, 0, 1]] += v writes row 0 twice with the same value h[0] + v (PyTorch's index_put_ without accumulate),
    so row 0 of the result is x[0] + v, once. PyTorch's gradient counts the repeated write twice (2.8 where
    d/dx (x + v) ** 2 = 1.4 for x = 0.5, v = 0.2), its second derivative four times; chainrule's are the function's."""

    def program(x, y):
        h = x * 1.0
        h[[0, 0, 1]] += y[0]
        return (h**2).sum()

    x, y = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]]), np.array([0.2, -0.4, 1.1])
    _, (gx, gy) = gradients(program, [x, y])
    np.testing.assert_allclose(gx.numpy(), 2 * (x + y[0]))
    np.testing.assert_allclose(gy.numpy(), [2 * (x + y[0]).sum(), 0.0, 0.0])
    weights = [np.cos(np.arange(6.0)).reshape(2, 3), np.ones(3)]
    ours, numeric = second_order_and_finite_differences(program, [x, y], weights)
    for a, b in zip(ours, numeric):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_scatter_reduce_amax_without_self_splits_a_tie_among_the_sources_only():
    """r = max(s0, s1) scattered into a slot whose own value (excluded: include_self=False) equals the maximum.
    The tie is s0 == s1, so each gets half of d(r ** 3)/dr = 0.75, and the even split's second derivative
    (that of ((s0 + s1) / 2) ** 3) is 0.75. PyTorch counts the excluded slot as a third tie: 0.25 each, a third
    of the gradient lost, and 1/3 for the second derivative."""

    def program(s):
        base = cr.tensor([0.5, 0.1], dtype=cr.float64)
        r = base.scatter_reduce(0, cr.tensor([0, 0, 1]), s * 1.0, reduce="amax", include_self=False)
        return (r**3).sum()

    _, (g,) = gradients(program, [np.array([0.5, 0.5, 0.2])])
    np.testing.assert_allclose(g.numpy(), [0.375, 0.375, 0.12])
    xs, (g,) = gradients(program, [np.array([0.5, 0.5, 0.2])], create_graph=True)
    h = cr.autograd.grad(g[0], xs)[0]
    np.testing.assert_allclose(h.numpy(), [0.75, 0.75, 0.0])
