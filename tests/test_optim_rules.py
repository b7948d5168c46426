"""One set of update rules (``chainrule.optim.rules``): the optimisers of ``optim`` and the steppers of
``optimize.minimize`` take bit-identical steps, and the rules never write to the gradient."""

from __future__ import annotations

import numpy as np
import pytest

from chainrule import Tensor, optim


@pytest.mark.parametrize("method,make", [
    ("gd", lambda p: optim.SGD([p], lr=0.05)),
    ("momentum", lambda p: optim.SGD([p], lr=0.05, momentum=0.8)),
    ("nesterov", lambda p: optim.SGD([p], lr=0.05, momentum=0.8, nesterov=True)),
    ("adam", lambda p: optim.Adam([p], lr=0.05, betas=(0.8, 0.95), eps=1e-6)),
])
def test_minimize_steps_are_the_optimisers_steps_bit_for_bit(method, make):
    from chainrule.optimize import minimize

    def f(x):
        return (x[0] - 1.0) ** 4 + 3.0 * x[1] ** 2 + x[0] * x[1]

    def df(x):
        return np.array([4.0 * (x[0] - 1.0) ** 3 + x[1], 6.0 * x[1] + x[0]])

    options = {"momentum": {"momentum": 0.8}, "nesterov": {"momentum": 0.8},
               "adam": {"betas": (0.8, 0.95), "eps": 1e-6}}.get(method, {})
    x0 = np.array([-0.5, 2.0])
    run = minimize(f, x0, method=method, lr=0.05, steps=12, tol=None, **options)
    p = Tensor(x0.copy(), requires_grad=True)
    opt = make(p)
    for k in range(12):
        p.grad = Tensor(df(p.data))
        opt.step()
        np.testing.assert_array_equal(p.data, run.trajectory.positions[k + 1], err_msg=f"step {k + 1}")


def test_rules_leave_the_gradient_alone_and_update_state_in_place():
    from chainrule.optim import rules

    p, g = np.array([1.0, -2.0, 3.0]), np.array([0.5, -0.25, 0.0])
    g_before = g.copy()
    buf = rules.sgd(p, g, None, lr=0.1, momentum=0.9, weight_decay=0.1)
    assert buf is not g and np.array_equal(g, g_before)
    again = rules.sgd(p, g, buf, lr=0.1, momentum=0.9, dampening=0.5)
    assert again is buf  # the buffer is updated in place
    m, v, vmax = np.zeros(3), np.zeros(3), np.zeros(3)
    rules.adam(p, g, m, v, step=1, lr=0.1, weight_decay=0.1, decoupled=True, max_exp_avg_sq=vmax)
    assert np.array_equal(g, g_before) and np.array_equal(m, (1 - 0.9) * g) and np.array_equal(vmax, v)
