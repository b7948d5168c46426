"""Every worked example and number of the three seed tutorials, in chainrule's API.

Seed 000 (scalar derivatives as paths through the graph), seed 001 (the same, with
back functions) and seed 002 (micrograd-style Scalar, backward, tanh, minimisation).
Each example runs on ``Scalar`` and, where it is about numbers, on ``Tensor`` too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from chainrule import Scalar, Tensor


def leaf(kind, value):
    return Scalar(value) if kind == "scalar" else Tensor(float(value), requires_grad=True)


def grad_of(x):
    return x.grad if isinstance(x, Scalar) else x.grad.item()


def data_of(x):
    return x.data if isinstance(x, Scalar) else x.item()


KINDS = ["scalar", "tensor"]


# -- seed 000 / 001: add, sub, mul and their local derivatives -------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_add_sub_mul_of_3_and_4(kind):
    a, b = leaf(kind, 3), leaf(kind, 4)
    assert data_of(a + b) == 7 and data_of(a - b) == -1 and data_of(a * b) == 12
    assert data_of((a * b) + a) == 15


def test_mul_records_its_arguments_and_local_derivatives():
    a, b = Scalar(3), Scalar(4)
    output = a * b
    assert output.parents == (a, b)
    assert output.local_derivatives == (4, 3)  # (b, a)
    output.backward()
    assert a.grad == b.data == 4
    assert b.grad == a.data == 3


@pytest.mark.parametrize("kind", KINDS)
def test_nested_operations_z_equals_a_plus_a_times_b(kind):
    a, b = leaf(kind, 3), leaf(kind, 4)
    z = a + (a * b)
    z.backward()
    assert grad_of(b) == 3  # dz/db = a
    assert grad_of(a) == 5  # dz/da = 1 + b


@pytest.mark.parametrize("kind", KINDS)
def test_z_equals_m_x_plus_c(kind):
    m, x, c = leaf(kind, 2), leaf(kind, 3), leaf(kind, 4)
    z = m * x + c
    z.backward()
    assert (grad_of(x), grad_of(c), grad_of(m)) == (2, 1, 3)  # m, 1, x


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("x0, c0", [(3.0, 4.0), (-1.5, 0.25)])
def test_z_equals_x_plus_c_times_x(kind, x0, c0):
    x, c = leaf(kind, x0), leaf(kind, c0)
    z = (x + c) * x
    z.backward()
    assert grad_of(x) == 2 * x0 + c0  # red path (x + c) + green path x
    assert grad_of(c) == x0


# -- seed 000: L = (y - (m x + c))^2 at y=1, m=2, x=3, c=4: dL/dx = 36 -------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("form", ["diff*diff", "two copies", "**2"])
def test_squared_error_derivative_is_36(kind, form):
    y, m, x, c = leaf(kind, 1), leaf(kind, 2), leaf(kind, 3), leaf(kind, 4)
    if form == "diff*diff":
        diff = y - ((m * x) + c)
        L = diff * diff
    elif form == "two copies":
        left = y - ((m * x) + c)
        right = y - ((m * x) + c)
        L = left * right
    else:
        L = (y - (m * x + c)) ** 2
    L.backward()
    assert data_of(L) == 81
    assert grad_of(x) == 36  # 2 m (c + m x - y)
    assert grad_of(m) == 54 and grad_of(c) == 18 and grad_of(y) == -18


def paths_to(root, target):
    """Every path from ``root`` to ``target`` as the chain of local derivatives on its edges."""
    chains = []
    stack = [(root, [])]
    while stack:
        node, chain = stack.pop()
        if node is target:
            chains.append(chain)
            continue
        for parent, local in zip(node.parents, node.local_derivatives, strict=True):
            stack.append((parent, chain + [local]))
    return chains


def test_the_two_paths_from_L_to_x_and_their_chains():
    y, m, x, c = Scalar(1), Scalar(2), Scalar(3), Scalar(4)
    diff = y - ((m * x) + c)
    L = diff * diff
    chains = paths_to(L, x)
    assert len(chains) == 2
    assert chains == [[-9, -1, 1, 2], [-9, -1, 1, 2]]
    assert sum(math.prod(chain) for chain in chains) == 36


def test_the_paths_of_z_equals_x_plus_c_times_x():
    x, c = Scalar(3.0), Scalar(4.0)
    z = (x + c) * x
    chains = sorted(paths_to(z, x))
    assert chains == sorted([[3.0 + 4.0], [3.0, 1.0]])  # red: x + c; green: x * 1
    assert sum(math.prod(ch) for ch in chains) == 2 * 3.0 + 4.0


# -- seed 000: the long polynomial, derivative 578 at x = 2 ------------------------------------------
def polynomial(x, const):
    return (
        (const(2) * x * x * x + const(4) * x * x - const(5) * x) * (const(3) * x * x - const(2) * x + const(7))
        - (const(6) * x * x * x * x + const(2) * x * x * x - const(8) * x * x)
        + (const(5) * x * x - const(3) * x)
    )


@pytest.mark.parametrize(
    "kind, const",
    [("scalar", Scalar), ("scalar", float), ("tensor", lambda v: Tensor(float(v))), ("tensor", float)],
    ids=["scalar-consts", "scalar-numbers", "tensor-consts", "tensor-numbers"],
)
def test_polynomial_derivative_is_578(kind, const):
    x = leaf(kind, 2)
    y = polynomial(x, const)
    y.backward()
    assert data_of(y) == 264
    assert grad_of(x) == 578
    # Wolfram Alpha's closed form -38 + 102 x - 33 x^2 + 8 x^3 + 30 x^4, at other points too
    for x0 in (-1.5, 0.5, 3.0):
        x = leaf(kind, x0)
        polynomial(x, const).backward()
        assert grad_of(x) == pytest.approx(-38 + 102 * x0 - 33 * x0**2 + 8 * x0**3 + 30 * x0**4, rel=1e-12)


# -- seed 002: f = b * ((a + b) * (a - b)) at a=1, b=2 ------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_forward_values_and_gradients_4_and_minus_11(kind):
    a, b = leaf(kind, 1.0), leaf(kind, 2.0)
    c = a + b
    d = a - b
    e = c * d
    f = e * b
    assert [data_of(v) for v in (c, d, e, f)] == [3.0, -1.0, -3.0, -6.0]
    f.backward()
    assert grad_of(a) == 4.0  # 2 a b
    assert grad_of(b) == -11.0  # a^2 - 3 b^2


def test_intermediate_gradients_of_the_manual_backward_pass():
    a, b = Scalar(1.0, label="a"), Scalar(2.0, label="b")
    c = a + b
    d = a - b
    e = c * d
    f = e * b
    f.label = "L"
    f.backward()
    assert f.grad == 1.0
    assert e.grad == b.data  # dL/de = b
    assert c.grad == d.data * b.data  # dL/dc = d b
    assert d.grad == c.data * b.data  # dL/dd = c b
    assert (a.grad, b.grad) == (2 * a.data * b.data, a.data**2 - 3 * b.data**2)
    assert f.label == "L" and a.label == "a"


@pytest.mark.parametrize("kind", KINDS)
def test_subtraction_as_adding_a_negation(kind):
    a, b = leaf(kind, 1.0), leaf(kind, 2.0)
    c = -b
    d = a + b
    e = a + c
    f = d * e
    L = f * b
    L.backward()
    assert data_of(L) == -6.0
    assert (grad_of(a), grad_of(b)) == (4.0, -11.0)


@pytest.mark.parametrize("kind", KINDS)
def test_tanh_at_1(kind):
    t = leaf(kind, 1.0)
    y = t.tanh()
    assert data_of(y) == pytest.approx(0.7615941559557649, rel=1e-15)
    y.backward()
    assert grad_of(t) == pytest.approx(1 - 0.7615941559557649**2, rel=1e-14)
    assert grad_of(t) == pytest.approx(0.41997434161402614, rel=1e-14)


def test_tanh_from_its_exponential_definition():
    t = Scalar(1.0)
    e2 = (2 * t).exp()
    y = (e2 - 1) / (e2 + 1)
    y.backward()
    assert y.data == pytest.approx(math.tanh(1.0), rel=1e-15)
    assert t.grad == pytest.approx(1 - math.tanh(1.0) ** 2, rel=1e-14)


# -- seed 002, "Exercise: check scalar implementation" ------------------------------------------------
def exercise_1(a, b):
    return (a**3 - b**2) * a - a * b


def exercise_1_grads(a, b):
    return 4 * a**3 - b**2 - b, -2 * a * b - a


def exercise_2(a, b, c):
    return (a + b + c) * (-a + b + c) * (a - b + c) * (a + b - c)


def exercise_2_grads(a, b, c):
    P, Q, R, S = a + b + c, -a + b + c, a - b + c, a + b - c
    return (
        Q * R * S - P * R * S + P * Q * S + P * Q * R,
        Q * R * S + P * R * S - P * Q * S + P * Q * R,
        Q * R * S + P * R * S + P * Q * S - P * Q * R,
    )


@pytest.mark.parametrize("kind", KINDS)
def test_exercise_L_equals_a3_minus_b2_times_a_minus_ab(kind):
    a, b = leaf(kind, 1.0), leaf(kind, 2.0)
    L = exercise_1(a, b)
    L.backward()
    assert data_of(L) == -5.0
    assert (grad_of(a), grad_of(b)) == (-2.0, -5.0)
    for a0, b0 in [(-1.5, 0.5), (2.0, -3.0), (0.3, 0.7)]:
        a, b = leaf(kind, a0), leaf(kind, b0)
        exercise_1(a, b).backward()
        assert (grad_of(a), grad_of(b)) == pytest.approx(exercise_1_grads(a0, b0), rel=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_exercise_product_of_four_sums(kind):
    a, b, c = leaf(kind, 1.0), leaf(kind, 2.0), leaf(kind, 3.0)
    L = exercise_2(a, b, c)
    L.backward()
    assert data_of(L) == 0.0
    assert (grad_of(a), grad_of(b), grad_of(c)) == (48.0, 48.0, -48.0)
    for p in [(0.5, -1.0, 2.0), (1.5, 2.5, 0.25), (-2.0, 1.0, 1.0)]:
        xs = [leaf(kind, v) for v in p]
        exercise_2(*xs).backward()
        assert tuple(grad_of(v) for v in xs) == pytest.approx(exercise_2_grads(*p), rel=1e-12)


# -- seed 002: one step of minimisation, alpha = 0.01 ------------------------------------------------
def seed_L(a, b):
    c = -b
    d = a + b
    e = a + c
    f = d * e
    return f * b


def test_one_minimisation_step_gives_the_seeds_numbers():
    a, b = Scalar(1.0), Scalar(2.0)
    L = seed_L(a, b)
    L.backward()
    assert L.data == -6.0
    agrad, bgrad = a.grad, b.grad
    assert (agrad, bgrad) == (4.0, -11.0)
    alpha = 0.01
    a = a - alpha * a.grad
    La = seed_L(a, Scalar(2.0))
    assert La.data == pytest.approx(-6.1568, rel=1e-12)
    b = b - alpha * bgrad
    Lb = seed_L(Scalar(1.0), b)
    assert Lb.data == pytest.approx(-7.283931, rel=1e-12)


def test_minimize_loop_updates_data_in_place_and_resets_grads():
    def minimize(a_init, b_init, alpha=0.01, steps=10):
        a, b = Scalar(a_init, label="a"), Scalar(b_init, label="b")
        trajectory = [(a.data, b.data)]
        for _ in range(steps):
            L = seed_L(a, b)
            L.backward()
            a.data -= alpha * a.grad
            b.data -= alpha * b.grad
            trajectory.append((a.data, b.data))
            a.grad = 0.0
            b.grad = 0.0
        return trajectory

    trajectory = minimize(1.0, 2.0, alpha=1e-3, steps=25)
    a0, b0 = 1.0, 2.0
    for a1, b1 in trajectory[1:]:  # the same steps with the hand-derived gradient (2ab, a^2 - 3b^2)
        a0, b0 = a0 - 1e-3 * (2 * a0 * b0), b0 - 1e-3 * (a0**2 - 3 * b0**2)
        assert (a1, b1) == pytest.approx((a0, b0), rel=1e-12)
    values = [a * a * b - b**3 for a, b in trajectory]
    assert all(later < earlier for earlier, later in zip(values, values[1:], strict=False))


@pytest.mark.parametrize("shape", [(3,), (2, 2)])
def test_the_seed_gradients_hold_elementwise_on_tensors(shape):
    rng = np.random.default_rng(0)
    a0, b0 = rng.uniform(-2, 2, size=shape), rng.uniform(-2, 2, size=shape)
    a, b = Tensor(a0, requires_grad=True), Tensor(b0, requires_grad=True)
    seed_L(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.data, 2 * a0 * b0, rtol=1e-12)
    np.testing.assert_allclose(b.grad.data, a0**2 - 3 * b0**2, rtol=1e-12)
