"""The Scalar object: Python floats, every operator and function, local derivatives on
each edge, backward / zero_grad / accumulation, and micrograd programs run unchanged."""

from __future__ import annotations

import math
import random

import pytest

import chainrule
from chainrule import Scalar


def numeric_derivative(f, xs, i, eps=1e-6):
    """Central difference of the float function ``f`` in its ``i``-th argument."""
    up, down = list(xs), list(xs)
    up[i] += eps
    down[i] -= eps
    return (f(*up) - f(*down)) / (2 * eps)


def value(x):
    return x.data if isinstance(x, Scalar) else x


# -- construction and inspection ----------------------------------------------------------------
def test_construction_label_and_float_fields():
    a = Scalar(1.0, label="a")
    assert a.data == 1.0 and a.grad == 0.0 and a.label == "a"
    assert isinstance(a.data, float) and isinstance(a.grad, float)
    assert Scalar(3).data == 3.0 and isinstance(Scalar(3).data, float)
    assert Scalar(Scalar(2.5)).data == 2.5
    assert a.op == "" and a.parents == () and a.local_derivatives == ()
    assert chainrule.Value is Scalar


def test_repr_shows_data_and_grad():
    a = Scalar(1.5, label="a")
    text = repr(a)
    assert "1.5" in text and "grad" in text and "0.0" in text
    a.grad = 2.25
    assert "2.25" in repr(a)


def test_op_parents_and_local_derivatives_are_inspectable():
    a, b = Scalar(3.0), Scalar(4.0)
    out = a * b
    assert out.op == "*"
    assert out.parents == (a, b)
    assert out.local_derivatives == (4.0, 3.0)
    s = a - b
    assert s.op == "-" and s.parents == (a, b) and s.local_derivatives == (1.0, -1.0)
    t = a.tanh()
    assert t.op == "tanh" and t.parents == (a,)
    assert t.local_derivatives[0] == pytest.approx(1 - math.tanh(3.0) ** 2)
    assert all(isinstance(d, float) for d in (*out.local_derivatives, *t.local_derivatives))


# -- every operator, with Scalars and numbers on either side -------------------------------------
BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "**": lambda a, b: a**b,
}


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("kind", ["scalar-scalar", "scalar-number", "number-scalar", "int"])
def test_binary_operators_values_and_gradients(name, kind):
    f = BINARY[name]
    x, y = 1.7, 0.6
    if kind == "int":
        x, y = 3, 2
    expected = f(float(x), float(y))
    if kind == "scalar-scalar":
        a, b = Scalar(x), Scalar(y)
        out = f(a, b)
        out.backward()
        assert a.grad == pytest.approx(numeric_derivative(f, [x, y], 0), rel=1e-7)
        assert b.grad == pytest.approx(numeric_derivative(f, [x, y], 1), rel=1e-7)
    elif kind in ("scalar-number", "int"):
        a = Scalar(x)
        out = f(a, y)
        out.backward()
        assert a.grad == pytest.approx(numeric_derivative(f, [float(x), float(y)], 0), rel=1e-7)
    else:
        b = Scalar(y)
        out = f(x, b)
        out.backward()
        assert b.grad == pytest.approx(numeric_derivative(f, [x, y], 1), rel=1e-7)
    assert isinstance(out, Scalar)
    assert out.data == pytest.approx(expected, rel=1e-15)
    assert len(out.local_derivatives) == len(out.parents)


def test_power_with_a_scalar_exponent_is_differentiated_in_both():
    a, b = Scalar(2.0), Scalar(3.0)
    out = a**b
    out.backward()
    assert out.data == 8.0
    assert a.grad == pytest.approx(3 * 2.0**2)
    assert b.grad == pytest.approx(8.0 * math.log(2.0))
    c = Scalar(0.5)
    out = 3.0**c
    out.backward()
    assert c.grad == pytest.approx(3.0**0.5 * math.log(3.0))


def test_unary_minus_plus_and_abs():
    a = Scalar(-2.0)
    n = -a
    assert n.data == 2.0 and n.local_derivatives == (-1.0,)
    assert (+a) is a or (+a).data == -2.0
    for x, d in [(-2.0, -1.0), (3.0, 1.0), (0.0, 0.0)]:
        s = Scalar(x)
        out = abs(s)
        out.backward()
        assert out.data == abs(x) and s.grad == d


def test_augmented_assignment_makes_new_nodes():
    a = Scalar(1.0)
    b = a
    b += 2.0
    assert b is not a and a.data == 1.0 and b.data == 3.0 and b.parents == (a,)
    c = a
    c -= 2.0
    d = a
    d *= 2.0
    e = a
    e /= 2.0
    f = a
    f **= 2.0
    for node in (c, d, e, f):
        assert node is not a and node.parents == (a,)
    assert (a.data, c.data, d.data, e.data, f.data) == (1.0, -1.0, 2.0, 0.5, 1.0)


FUNCTIONS = {
    "exp": (math.exp, [-1.3, 0.0, 2.0]),
    "log": (math.log, [0.3, 1.0, 5.0]),
    "sqrt": (math.sqrt, [0.3, 1.0, 5.0]),
    "sin": (math.sin, [-1.3, 0.0, 2.0]),
    "cos": (math.cos, [-1.3, 0.0, 2.0]),
    "tan": (math.tan, [-1.0, 0.0, 1.2]),
    "tanh": (math.tanh, [-1.3, 0.0, 2.0]),
    "sigmoid": (lambda x: 1 / (1 + math.exp(-x)), [-3.0, 0.0, 2.0]),
    "relu": (lambda x: max(x, 0.0), [-1.3, 2.0]),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_functions_values_and_local_derivatives(name):
    f, points = FUNCTIONS[name]
    for x in points:
        a = Scalar(x)
        out = getattr(a, name)()
        assert out.op == name and out.parents == (a,)
        assert out.data == pytest.approx(f(x), rel=1e-14, abs=1e-300)
        out.backward()
        assert a.grad == pytest.approx(numeric_derivative(f, [x], 0), rel=1e-7, abs=1e-9)
        assert out.local_derivatives == (a.grad,)


def test_relu_at_zero_has_derivative_zero_and_sigmoid_is_stable():
    a = Scalar(0.0)
    a.relu().backward()
    assert a.grad == 0.0
    assert Scalar(-1000.0).sigmoid().data == 0.0
    assert Scalar(1000.0).sigmoid().data == 1.0


def test_comparisons_with_numbers_return_plain_bools():
    a = Scalar(2.0)
    results = [a < 3, a <= 2, a > 1.5, a >= 2.0, a == 2, a != 3, 3 > a, 1 < a, a < Scalar(5.0)]
    assert all(type(r) is bool for r in results)
    assert results == [True, True, True, True, True, True, True, True, True]
    assert (a > 3) is False


def test_scalars_are_hashable_by_identity():
    a, b = Scalar(1.0), Scalar(1.0)
    assert len({a, b}) == 2 and len({a, a}) == 1


# -- backward --------------------------------------------------------------------------------------
def test_backward_with_a_shared_subexpression():
    x, c = Scalar(3.0), Scalar(4.0)
    z = (x + c) * x
    z.backward()
    assert (x.grad, c.grad) == (2 * 3.0 + 4.0, 3.0)


def test_backward_of_the_squared_error_graph():
    y, m, x, c = Scalar(1.0), Scalar(2.0), Scalar(3.0), Scalar(4.0)
    L = (y - (m * x + c)) ** 2
    L.backward()
    assert L.data == 81.0
    assert (x.grad, m.grad, c.grad, y.grad) == (36.0, 54.0, 18.0, -18.0)


def test_second_backward_accumulates_and_zero_grad_resets():
    a, b = Scalar(1.0), Scalar(2.0)
    L = b * ((a + b) * (a - b))
    L.backward()
    L.backward()
    assert (a.grad, b.grad) == (8.0, -22.0)
    assert L.grad == 1.0  # the output's own gradient is the seed of the latest pass
    L.zero_grad()
    assert (a.grad, b.grad, L.grad) == (0.0, 0.0, 0.0)
    L.backward()
    assert (a.grad, b.grad) == (4.0, -11.0)
    doc = (Scalar.__doc__ or "") + (Scalar.backward.__doc__ or "")
    assert "accumulat" in doc.lower() and "pytorch" in doc.lower()


def test_backward_from_a_different_output_only_adds_to_leaves():
    x = Scalar(2.0)
    y = x * x
    (y + 1.0).backward()
    (y * 3.0).backward()
    assert x.grad == 4.0 + 12.0


def test_backward_with_an_explicit_seed():
    x = Scalar(2.0)
    (x * x).backward(0.5)
    assert x.grad == 2.0


def test_intermediate_nodes_hold_their_gradient():
    a, b = Scalar(1.0), Scalar(2.0)
    c = a + b
    d = a - b
    e = c * d
    f = e * b
    f.backward()
    assert (f.grad, e.grad, c.grad, d.grad) == (1.0, 2.0, -2.0, 6.0)


def test_division_by_zero_and_domain_errors_are_clear():
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        Scalar(1.0) / 0
    with pytest.raises(ZeroDivisionError):
        1.0 / Scalar(0.0)
    with pytest.raises(ValueError, match="log"):
        Scalar(-1.0).log()
    with pytest.raises(ValueError, match="sqrt"):
        Scalar(-1.0).sqrt()
    with pytest.raises(ValueError, match="negative base"):
        Scalar(-2.0) ** 0.5


# -- micrograd programs, unchanged, with `from chainrule import Scalar as Value` ---------------------
def readme_program(Value):
    """micrograd's README example, verbatim."""
    a = Value(-4.0)
    b = Value(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    g.backward()
    return g.data, a.grad, b.grad


def sanity_program(Value):
    """micrograd's test_sanity_check program."""
    x = Value(-4.0)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    return y.data, x.grad


@pytest.mark.parametrize("program", [readme_program, sanity_program])
def test_micrograd_programs_give_micrograds_numbers(program):
    from micrograd.engine import Value as MicrogradValue

    from chainrule import Scalar as Value

    ours = program(Value)
    theirs = program(MicrogradValue)
    assert ours == pytest.approx(theirs, rel=1e-12)
    if program is readme_program:
        assert [round(v, 4) for v in ours] == [24.7041, 138.8338, 645.5773]


def test_micrograd_names_exist():
    from chainrule import Scalar as Value

    v = Value(0.5)
    for name in ("data", "grad", "backward", "relu", "tanh", "exp", "__pow__", "_prev", "_op"):
        assert hasattr(v, name), name
    out = v.tanh().exp() ** 2
    out.backward()
    assert v.grad == pytest.approx(2 * math.exp(2 * math.tanh(0.5)) * (1 - math.tanh(0.5) ** 2))


def _train(module, steps=5, seed=1337):
    """micrograd's demo: an MLP fitted with plain SGD; returns losses and final parameters."""
    random.seed(seed)
    model = module.MLP(3, [4, 4, 1])
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    losses = []
    for _ in range(steps):
        preds = [model(x) for x in xs]
        loss = sum((p - y) ** 2 for p, y in zip(preds, ys, strict=True))
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data += -0.05 * p.grad
        losses.append(loss.data)
    return losses, [p.data for p in model.parameters()], type(loss)


def test_micrograd_mlp_runs_on_chainrule_values_with_the_same_numbers(monkeypatch):
    import micrograd.nn as mnn

    theirs, their_params, their_type = _train(mnn)
    monkeypatch.setattr(mnn, "Value", Scalar)  # micrograd.nn now builds chainrule Scalars
    ours, our_params, our_type = _train(mnn)
    assert our_type is Scalar and their_type is not Scalar
    assert ours == pytest.approx(theirs, rel=1e-12)
    assert our_params == pytest.approx(their_params, rel=1e-12)
    assert ours[-1] < ours[0]


def test_numpy_numbers_and_one_element_arrays_are_accepted_as_constants():
    import numpy as np

    from chainrule import Tensor

    a = Scalar(2.0)
    assert (a ** np.float64(3.0)).data == 8.0 and (a ** np.float64(3.0)).op == "**3"
    assert (a ** np.array(0.5)).op == "**0.5"
    assert (a ** Tensor(2.0)).data == 4.0  # a constant Tensor: its value
    assert (a + np.array([1.0])).data == 3.0
    assert (np.float64(1.0) - a).data == -1.0


def test_a_tensor_that_requires_grad_is_refused_rather_than_dropped():
    from chainrule import Tensor

    t = Tensor(1.0, requires_grad=True)
    for call in (lambda: Scalar(2.0) + t, lambda: Scalar(2.0) ** t, lambda: Scalar(t), lambda: Scalar(2.0) * t):
        with pytest.raises(TypeError, match=r"Scalar: argument '\w+' is a Tensor that requires grad"):
            call()


# -- Python's number spellings and overflow (as float and a PyTorch 0-d tensor) ------------------
def test_bool_int_round_format_item_follow_the_value():
    assert not Scalar(0.0) and Scalar(-2.0) and bool(Scalar(0.5)) is True
    assert int(Scalar(2.7)) == 2 and int(Scalar(-2.7)) == -2
    assert round(Scalar(2.7)) == 3 and round(Scalar(2.345), 2) == 2.35
    assert f"{Scalar(3.14159):.2f}" == "3.14" and f"{Scalar(1.0)}" == str(Scalar(1.0))
    assert Scalar(2.5).item() == 2.5 and isinstance(Scalar(2).item(), float)


def test_zero_valued_scalar_gradient_keeps_its_graph_in_create_graph():
    # d/dx of x**2 at 0 is a Scalar of value 0 that still depends on x: a second create_graph
    # pass adds into it and the second derivative is 2 + 2, not the 2 of a dropped first pass
    x = Scalar(0.0)
    y = x**2
    y.backward(create_graph=True)
    y.backward(create_graph=True)
    g = x.grad
    assert isinstance(g, Scalar) and g.data == 0.0
    x.grad = 0.0
    g.backward()
    assert x.grad == 4.0


def test_bool_argument_error_says_what_to_pass():
    with pytest.raises(TypeError, match=r"argument 'other' must be a real number, got bool \(True\); pass float"):
        Scalar(1.0) + True


def test_deepcopy_of_a_graph_keeps_values_and_derivatives():
    import copy

    x = Scalar(2.0)
    y = copy.deepcopy((x * x * 3).tanh())
    y.backward()
    assert y.op == "tanh" and y.data == math.tanh(12.0)
    (leaf,) = {id(n): n for n in (y.parents[0].parents[0].parents)}.values()
    assert leaf is not x and leaf.grad == pytest.approx(12.0 * (1 - math.tanh(12.0) ** 2))


@pytest.mark.oracle
def test_overflow_gives_signed_inf_as_torch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    cases = [(1000.0, lambda v: v.exp()), (10.0, lambda v: v**400), (-10.0, lambda v: v**401),
             (-10.0, lambda v: v**400.0), (400.0, lambda v: 10.0**v)]
    for start, f in cases:
        x = Scalar(start)
        y = f(x)
        y.backward()
        t = torch.tensor(start, dtype=torch.float64, requires_grad=True)
        ty = f(t)
        ty.backward()
        assert (y.data, x.grad) == (ty.item(), t.grad.item()), start


def test_manual_backward_steps_as_in_the_micrograd_lecture():
    x1, w1, x2, w2, b = (Scalar(v) for v in (2.0, -3.0, 0.0, 1.0, 6.8813735870195432))
    n = x1 * w1 + x2 * w2 + b
    o = n.tanh()
    o.grad = 1.0
    o._backward()
    n._backward()
    n.parents[0]._backward()  # x1*w1 + x2*w2
    for product in n.parents[0].parents:
        product._backward()
    by_hand = [v.grad for v in (x1, w1, x2, w2, b)]
    for v in (x1, w1, x2, w2, b):
        v.grad = 0.0
    o.backward()
    assert by_hand == [v.grad for v in (x1, w1, x2, w2, b)]
    assert x1.grad == pytest.approx(-1.5) and w2.grad == 0.0


def test_deepcopy_of_a_deep_graph_needs_no_recursion():
    import copy

    x = Scalar(0.5)
    y = x
    for _ in range(20_000):
        y = y * 1.0 + x * 0.0
    twin = copy.deepcopy(y)
    twin.backward()
    assert x.grad == 0.0 and twin.data == 0.5 and twin._stamp > y._stamp
    leaves = [n for n in chainrule.graph.collect(twin).nodes if not n.parents]
    assert len(leaves) == 1 and leaves[0] is not x and leaves[0].grad == 1.0


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_at_infinity_is_nan_as_torch(name):
    # math.sin(inf) raises a ValueError that names no op; PyTorch and NumPy give nan (value and derivatives)
    torch = pytest.importorskip("torch", reason="torch is not installed")
    for v in (math.inf, -math.inf):
        x = Scalar(v)
        y = getattr(x, name)()
        y.backward()
        t = torch.tensor(v, dtype=torch.float64, requires_grad=True)
        ty = getattr(torch, name)(t)
        ty.backward()
        assert math.isnan(y.data) and math.isnan(x.grad) and math.isnan(ty.item()) and math.isnan(t.grad.item())


def test_math_functions_of_a_scalar_raise():
    """``a * math.exp(a)`` gave a.grad 2.718 (true 5.437): math.exp reads float(a), a number without a gradient.
    math's functions of a Scalar raise, naming the Scalar's method; float(s), s.data, s.item(), formatting, and
    the math functions with no derivative to lose (isnan, floor, ...) still read the value."""
    import math
    from math import exp

    a = Scalar(1.0)
    with pytest.raises(TypeError, match=r"math\.exp\(\) of a Scalar .* s\.exp\(\).*math\.exp\(s\.data\)"):
        a * math.exp(a)
    with pytest.raises(TypeError, match=r"math\.exp\(\) of a Scalar"):
        exp(a)  # imported by name
    with pytest.raises(TypeError, match=r"math\.hypot\(\) of a Scalar .* Scalar operations"):
        math.hypot(a, 1.0)
    y = a * a.exp()
    y.backward()
    assert a.grad == pytest.approx(2 * math.e)
    assert float(a) == 1.0 and a.item() == 1.0 and f"{a:.1f}" == "1.0" and math.exp(a.data) == math.e
    assert not math.isnan(a) and math.floor(Scalar(1.5)) == 1


def test_pickle_keeps_value_grad_and_label_and_loads_a_computed_scalar_as_a_leaf():
    import pickle

    a = Scalar(2.0, label="a")
    b = a * a + a.exp()
    b.backward()
    loaded = pickle.loads(pickle.dumps(b))  # (the rules are functions: pickling the graph raised PicklingError)
    assert (loaded.data, loaded.grad, loaded.op, loaded.parents) == (b.data, 1.0, "", ())
    leaf = pickle.loads(pickle.dumps(a))
    assert (leaf.data, leaf.grad, leaf.label) == (2.0, a.grad, "a")
    deep = a
    for _ in range(20_000):
        deep = deep + 1.0
    assert pickle.loads(pickle.dumps(deep)).data == 20_002.0  # no recursion through the graph


def test_a_shallow_copy_shares_the_graph():
    import copy

    a = Scalar(3.0)
    twin = copy.copy(a * a)
    twin.backward()
    assert twin.op == "*" and a.grad == 6.0
