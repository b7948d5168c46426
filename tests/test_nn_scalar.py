"""nn.scalar: Neuron, Layer and MLP on the Scalar engine, against the plain Scalar formula,
micrograd, and the Tensor engine with the same weights."""

from __future__ import annotations

import numpy as np
import pytest

from chainrule import Scalar, Tensor, nn

X = [0.5, -1.5, 2.0]


def naive(neuron, xs):
    act = sum((w * x for w, x in zip(neuron.w, xs, strict=True)), neuron.b)
    return {"relu": act.relu, "tanh": act.tanh, "sigmoid": act.sigmoid}.get(neuron.activation, lambda: act)()


@pytest.mark.parametrize("activation", ["relu", "tanh", "sigmoid", None])
def test_neuron_matches_the_plain_scalar_formula(activation):
    n = nn.scalar.Neuron(3, activation=activation, rng=1)
    n.b.data = 0.3
    xs = [Scalar(v) for v in X]
    out = n(xs)
    out.backward()
    fast = [p.grad for p in n.parameters()] + [x.grad for x in xs]
    n.zero_grad()
    xs2 = [Scalar(v) for v in X]
    ref = naive(n, xs2)
    ref.backward()
    assert out.data == pytest.approx(ref.data, rel=1e-14)
    assert fast == pytest.approx([p.grad for p in n.parameters()] + [x.grad for x in xs2], rel=1e-14)
    assert len(out.parents) == 1 and out.parents[0].op == "dot" or activation is None


def test_mlp_matches_tensor_mlp_with_same_weights():
    s_mlp = nn.scalar.MLP(3, [4, 4, 2], rng=0)
    t_mlp = nn.MLP(3, [4, 4, 2], dtype=np.float64, rng=0)
    for li, layer in enumerate(s_mlp.layers):
        lin = t_mlp.layers[2 * li]
        lin.weight.data[...] = [[w.data for w in n.w] for n in layer.neurons]
        lin.bias.data[...] = [n.b.data for n in layer.neurons]
    outs = s_mlp(X)
    (outs[0] * 2 + outs[1]).backward()
    t_out = t_mlp(np.array([X]))
    (t_out * Tensor([[2.0, 1.0]])).sum().backward()
    np.testing.assert_allclose([o.data for o in outs], t_out.data[0], rtol=1e-13)
    for li, layer in enumerate(s_mlp.layers):
        lin = t_mlp.layers[2 * li]
        np.testing.assert_allclose([[w.grad for w in n.w] for n in layer.neurons], lin.weight.grad.data, rtol=1e-12)
        np.testing.assert_allclose([n.b.grad for n in layer.neurons], lin.bias.grad.data, rtol=1e-12)


def test_matches_micrograd():
    engine = pytest.importorskip("micrograd.engine")
    mg_nn = pytest.importorskip("micrograd.nn")
    ours = nn.scalar.MLP(2, [4, 1], rng=0)
    theirs = mg_nn.MLP(2, [4, 1])
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        q.data = p.data
    xs = [[0.3, -0.7], [1.2, 0.4]]
    loss = sum(((1 + -y * ours(x)).relu() for x, y in zip(xs, [1, -1], strict=True)), Scalar(0.0))
    mg_loss = sum(((1 + -y * theirs([engine.Value(v) for v in x])).relu() for x, y in zip(xs, [1, -1], strict=True)),
                  engine.Value(0.0))
    loss.backward()
    mg_loss.backward()
    assert loss.data == pytest.approx(mg_loss.data, rel=1e-14)
    assert [p.grad for p in ours.parameters()] == pytest.approx([q.grad for q in theirs.parameters()], rel=1e-12)


def test_api_shapes_and_errors():
    mlp = nn.scalar.MLP(2, [16, 16, 1], rng=0)
    assert len(mlp.parameters()) == 2 * 16 + 16 + 16 * 16 + 16 + 16 + 1
    assert isinstance(mlp(np.array([0.1, 0.2])), Scalar)
    assert isinstance(nn.scalar.Layer(2, 3, rng=0)([1.0, 2.0]), list)
    assert "ReluNeuron(2)" in repr(mlp) and "LinearNeuron(16)" in repr(mlp)
    assert list(mlp.state_dict())[:2] == ["layers.0.neurons.0.w.0", "layers.0.neurons.0.w.1"]
    assert nn.scalar.Neuron(2, nonlin=False).activation is None
    with pytest.raises(ValueError, match="expected 2 inputs, got 3"):
        mlp([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="activation must be one of"):
        nn.scalar.Neuron(2, activation="gelu")
    with pytest.raises(ValueError, match=r"missing key\(s\)"):
        mlp.load_state_dict({})
    a, b = nn.scalar.MLP(2, [3, 1], rng=4), nn.scalar.MLP(2, [3, 1], rng=4)
    assert [p.data for p in a.parameters()] == [p.data for p in b.parameters()]


def test_both_mlps_come_from_one_layer_description():
    from chainrule.nn.mlp_plan import mlp_plan

    plan = mlp_plan(3, [5, 4, 2], "MLP")
    s_mlp, t_mlp = nn.scalar.MLP(3, [5, 4, 2], rng=0), nn.MLP(3, [5, 4, 2], rng=0)
    linears = [m for m in t_mlp.layers if isinstance(m, nn.Linear)]
    assert [(d.fan_in, d.fan_out) for d in plan] == [(lin.in_features, lin.out_features) for lin in linears]
    assert [(len(layer.neurons[0].w), len(layer.neurons)) for layer in s_mlp.layers] == [(3, 5), (5, 4), (4, 2)]
    activated = [layer.neurons[0].activation is not None for layer in s_mlp.layers]
    assert activated == [d.activated for d in plan] == [True, True, False]
    assert [type(m).__name__ for m in t_mlp.layers] == ["Linear", "ReLU", "Linear", "ReLU", "Linear"]
    for make in (nn.MLP, nn.scalar.MLP):
        with pytest.raises(ValueError, match=r"MLP: nouts must list at least one layer size"):
            make(2, [])
        with pytest.raises(ValueError, match=r"MLP: layer sizes must be positive, got \[2, 0, 1\]"):
            make(2, [0, 1])


def test_nn_scalar_imports_as_a_module_path():
    # the documented name nn.scalar is also importable by path (micrograd's `from micrograd.nn import MLP` twin)
    from chainrule.nn.scalar import MLP, Layer, Neuron

    from chainrule import nn

    assert MLP is nn.scalar.MLP and Layer is nn.scalar.Layer and Neuron is nn.scalar.Neuron
