"""Each Scalar derivative is written once (chainrule.scalar.rules) and serves both orders."""

from __future__ import annotations

import math

import pytest

from chainrule import Scalar, nn
from chainrule.scalar import rules as rules
from chainrule.scalar.rules import FLOATS, SCALARS, ScalarOp

UNARY = ["NEG", "ABS", "RELU", "EXP", "LOG", "SQRT", "SIN", "COS", "TAN", "TANH", "SIGMOID"]
BINARY = ["ADD", "SUB", "MUL", "DIV", "POW"]


@pytest.mark.parametrize("name", UNARY)
def test_a_unary_rule_gives_the_same_number_on_floats_and_on_scalars(name):
    op = getattr(rules, name)
    x = 0.7
    node = getattr(Scalar(x), {"NEG": "__neg__", "ABS": "__abs__"}.get(name, name.lower()))()
    assert node._op is op
    on_floats = op.derivative(x, node.data, None, FLOATS)
    on_scalars = op.derivative(Scalar(x), node, None, SCALARS)
    assert node.local_derivatives == (on_floats,)
    assert rules.plain(on_scalars) == pytest.approx(on_floats, rel=1e-15)


@pytest.mark.parametrize("name", BINARY)
def test_a_binary_rule_gives_the_same_numbers_on_floats_and_on_scalars(name):
    op = getattr(rules, name)
    a, b = Scalar(1.3), Scalar(0.6)
    node = {"ADD": a + b, "SUB": a - b, "MUL": a * b, "DIV": a / b, "POW": a**b}[name]
    assert node._op is op and op.arity == 2
    on_floats = op.derivative(a.data, b.data, node.data, FLOATS)
    on_scalars = op.derivative(a, b, node, SCALARS)
    assert node.local_derivatives == tuple(on_floats)
    assert [rules.plain(d) for d in on_scalars] == pytest.approx(list(on_floats), rel=1e-15)


def test_an_op_with_a_number_keeps_the_number_not_a_label_to_parse():
    x = Scalar(1.5)
    y = x**2.5
    assert y.op == "**2.5" and isinstance(y._op, ScalarOp) and y._op.constant == 2.5
    y.label = "renamed"  # the label plays no part in the rule
    y.backward(create_graph=True)
    g = x.grad
    x.grad = 0.0
    g.backward()
    assert x.grad == pytest.approx(2.5 * 1.5 * 1.5**0.5, rel=1e-12)
    z = 2.0**x
    assert z.op == "2**" and z._op.constant == 2.0


def test_many_distinct_exponents_stay_correct_past_the_remembered_ops():
    for k in range(rules._KEEP + 5):
        c = 1.0 + k / 7.0
        x = Scalar(1.1)
        (x**c).backward(create_graph=True)
        g = x.grad
        x.grad = 0.0
        g.backward()
        if k % 257 == 0 or k > rules._KEEP:
            assert x.grad == pytest.approx(c * (c - 1) * 1.1 ** (c - 2), rel=1e-12)
    assert len(rules._ops_with_a_number) <= rules._KEEP


def test_ops_are_strings_as_micrograd_keeps_them():
    x = Scalar(3.0)
    for node, text in [(x + 1, "+"), (x * x, "*"), (x**2, "**2"), (x.tanh(), "tanh"), (-x, "neg")]:
        assert node._op == text and isinstance(node._op, str) and type(node.op) is str
    assert math.isinf(Scalar(0.0).sqrt().local_derivatives[0])


def _neuron_second_derivative(neuron, v, which):
    x = Scalar(v)
    target = x if which == "x" else neuron.w[0]
    out = neuron([x, 2.0, Scalar(-0.5)])
    out.backward(create_graph=True)
    g = target.grad
    for p in [x, *neuron.parameters()]:
        p.grad = 0.0
    g.backward()
    return target.grad


def _neuron_first_derivative(neuron, v):
    x = Scalar(v)
    neuron([x, 2.0, Scalar(-0.5)]).backward()
    for p in neuron.parameters():
        p.grad = 0.0
    return x.grad


def test_a_neurons_weighted_sum_is_one_node_with_a_rule_for_higher_orders():
    neuron = nn.scalar.Neuron(3, activation="tanh", rng=0)
    out = neuron([Scalar(0.3), 2.0, Scalar(-0.5)])
    dot_node = out.parents[0]
    assert dot_node.op == "dot" and len(dot_node.parents) == 1 + 2 * 2 + 1
    h = 1e-5
    numeric = (_neuron_first_derivative(neuron, 0.3 + h) - _neuron_first_derivative(neuron, 0.3 - h)) / (2 * h)
    assert _neuron_second_derivative(neuron, 0.3, "x") == pytest.approx(numeric, rel=1e-6)
    # d2/dw0^2 of tanh(w0 x + ...) is x^2 tanh''
    w0 = neuron.w[0].data
    z = neuron.b.data + w0 * 0.3 + neuron.w[1].data * 2.0 + neuron.w[2].data * -0.5
    t = math.tanh(z)
    assert _neuron_second_derivative(neuron, 0.3, "w") == pytest.approx(0.3**2 * -2 * t * (1 - t * t), rel=1e-12)


def test_an_op_without_a_rule_on_scalars_names_itself_under_create_graph():
    x = Scalar(1.0)
    y = x * 2.0
    y._op = ScalarOp("mystery", 1, None)
    with pytest.raises(NotImplementedError, match="the op 'mystery' has no rule for higher derivatives"):
        y.backward(create_graph=True)
