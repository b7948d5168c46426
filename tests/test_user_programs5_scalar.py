"""New users' programs, fifth round: the Scalar engine, pictures, `explain`, gradient checks and descent.

Each test is a program a newcomer writes from the README, docs/engine.md, docs/graphs.md and docs/descent.md,
or from micrograd's lecture and the tutorial seeds; every one asserts numbers against a closed form, finite
differences or PyTorch.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import chainrule as cr
from chainrule import Scalar


def test_micrograd_lecture_topological_sort_and_node_by_node_backward():
    # micrograd's lecture: build topo order from _prev, set o.grad = 1, then call _backward node by node
    from chainrule import Scalar as Value

    x1, x2 = Value(2.0, label="x1"), Value(0.0, label="x2")
    w1, w2 = Value(-3.0, label="w1"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    n = x1 * w1 + x2 * w2 + b
    e = (2 * n).exp()
    o = (e - 1) / (e + 1)
    topo, visited = [], set()

    def build(v):
        if v not in visited:
            visited.add(v)
            for child in v._prev:
                build(child)
            topo.append(v)

    build(o)
    o.grad = 1.0
    for node in reversed(topo):
        node._backward()
    manual = (x1.grad, w1.grad, x2.grad, w2.grad)
    assert abs(o.data - math.tanh(n.data)) < 1e-12
    assert np.allclose(manual, (-1.5, 1.0, 0.5, 0.0), atol=1e-6)
    for v in (x1, x2, w1, w2, b):
        v.grad = 0.0
    o.zero_grad()
    o.backward()  # the automated walk gives the same numbers
    assert np.allclose((x1.grad, w1.grad, x2.grad, w2.grad), manual, atol=1e-12)


def test_hand_written_scalar_mlp_trains_with_micrograd_updates_and_matches_finite_differences():
    random.seed(1)

    class Neuron:
        def __init__(self, nin):
            self.w = [Scalar(random.uniform(-1, 1)) for _ in range(nin)]
            self.b = Scalar(0.0)

        def __call__(self, x):
            return sum((wi * xi for wi, xi in zip(self.w, x)), self.b).tanh()

        def parameters(self):
            return self.w + [self.b]

    class MLP:
        def __init__(self, nin, nouts):
            sizes = [nin] + nouts
            self.layers = [[Neuron(sizes[i]) for _ in range(sizes[i + 1])] for i in range(len(nouts))]

        def __call__(self, x):
            for layer in self.layers:
                x = [n(x) for n in layer]
            return x[0]

        def parameters(self):
            return [p for layer in self.layers for n in layer for p in n.parameters()]

    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    net = MLP(3, [4, 4, 1])

    def loss_value():
        return sum(((net(x) - y) ** 2 for x, y in zip(xs, ys)), Scalar(0.0))

    loss = loss_value()
    for p in net.parameters():
        p.grad = 0.0
    loss.backward()
    p = net.parameters()[5]
    old, h = p.data, 1e-6
    p.data = old + h
    up = loss_value().data
    p.data = old - h
    down = loss_value().data
    p.data = old
    assert abs(p.grad - (up - down) / (2 * h)) < 1e-6
    first = loss.data
    for _ in range(60):
        loss = loss_value()
        for q in net.parameters():
            q.grad = 0.0
        loss.backward()
        for q in net.parameters():
            q.data += -0.05 * q.grad
    assert loss.data < 0.1 * first
    assert all((net(x).data > 0) == (y > 0) for x, y in zip(xs, ys))


def test_scalar_operators_with_numbers_on_either_side_and_power_of_a_scalar():
    a, b = Scalar(1.5), Scalar(0.5)
    out = (2 - a) / (1 + b) + a**b + 3**b - 1 / a + (-a).relu() + abs(b - 2)
    out.backward()
    # closed forms
    da = -1 / (1 + 0.5) + 0.5 * 1.5**-0.5 + 1 / 1.5**2
    db = -(2 - 1.5) / 1.5**2 + 1.5**0.5 * math.log(1.5) + 3**0.5 * math.log(3) - 1
    assert math.isclose(a.grad, da, rel_tol=1e-12)
    assert math.isclose(b.grad, db, rel_tol=1e-12)
    assert out.parents and len(out.local_derivatives) == len(out.parents)


def test_explain_sums_the_paths_of_a_shared_subexpression_and_matches_the_closed_form():
    from chainrule.graph import explain

    x = Scalar(0.7, label="x")
    s = x.sin()
    out = s * s + s * x
    out.label = "out"
    e = explain(out, x)
    expected = 2 * math.sin(0.7) * math.cos(0.7) + math.cos(0.7) * 0.7 + math.sin(0.7)
    assert e.ok and math.isclose(e.total, expected, rel_tol=1e-12)
    assert e.n_paths == 4 and len(e.products) == 4
    assert math.isclose(sum(e.products), expected, rel_tol=1e-12)
    assert x.grad == 0.0  # explain leaves the grads alone
    assert "4 paths" in str(e)


def test_graph_pictures_with_the_pip_only_matplotlib_fallback_and_dot_source(tmp_path):
    pytest.importorskip("matplotlib")
    from chainrule.graph import render, to_dot

    a, b = Scalar(1.0, label="a"), Scalar(2.0, label="b")
    f = b * ((a + b) * (a - b))
    f.label = "f"
    f.backward()
    path = tmp_path / "f.png"
    render(f, str(path), engine="matplotlib")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    src = to_dot(f)
    assert "data -6.0000" in src and "grad -11.0000" in src and src.lstrip().startswith("digraph")
    svg = tmp_path / "f.svg"
    render(f, str(svg), engine="matplotlib")
    assert "<svg" in svg.read_text()


def test_gradcheck_catches_a_wrong_hand_written_rule_and_passes_the_right_one():
    from chainrule.custom import primitive

    @primitive
    def cube(x):
        return x**3

    cube.defvjp(lambda g, ans, x: g * 3 * x**2)
    cube.defjvp(lambda t, ans, x: t * 3 * x**2)
    x = np.array([0.5, -1.0, 2.0])
    assert cr.gradcheck(cube, x, order=2)

    @primitive
    def cube_wrong(x):
        return x**3

    cube_wrong.defvjp(lambda g, ans, x: g * 3 * x)
    cube_wrong.defjvp(lambda t, ans, x: t * 3 * x**2)
    with pytest.raises(cr.GradcheckError, match="rev"):
        cr.gradcheck(cube_wrong, x, order=1)


def test_gradient_descent_by_hand_with_a_trajectory_then_minimize_agrees():
    # seed 002's habit: a loop of x -= lr * grad(x), the path recorded for a plot
    f = lambda x: (x[0] - 3.0) ** 2 + 10 * (x[1] + 1.0) ** 2
    x = np.array([0.0, 0.0])
    path = [x.copy()]
    for _ in range(200):
        x = x - 0.04 * cr.grad(f)(x)
        path.append(x.copy())
    path = np.array(path)
    assert np.allclose(path[-1], [3.0, -1.0], atol=1e-6)
    # the first step has a closed form
    assert np.allclose(path[1], [0.04 * 6.0, -0.04 * 20.0])
    from chainrule.optimize import minimize

    r = minimize(f, np.zeros(2), method="gd", lr=0.04, steps=200, tol=None)
    assert np.allclose(r.trajectory.positions, path, atol=1e-12)


def test_plots_of_the_descent_story_write_files_with_agg(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from chainrule import plot
    from chainrule.optimize import minimize

    f = lambda x: x[1] * (x[0] + x[1]) * (x[0] - x[1])
    starts = np.random.default_rng(0).uniform(-2, 2, size=(5, 2))
    result = minimize(f, starts, method="momentum", lr=1e-3, steps=20, tol=None)
    assert result.trajectory.positions.shape == (21, 5, 2)
    # every step went downhill or nearly so for a small lr
    assert (result.trajectory.values[-1] <= result.trajectory.values[0] + 1e-12).all()
    for name, draw in [
        ("traj", lambda: plot.trajectories(result, f)),
        ("tangent", lambda: plot.tangent(lambda x: x**3 - 10 * x**2 + 5 * x - 2, 6.0)),
        ("loss", lambda: plot.loss_curve([3.0, 2.0, 1.5, 1.2])),
    ]:
        out = draw()
        fig = getattr(out, "figure", None) or (out[0] if isinstance(out, tuple) else plt.gcf())
        fig = getattr(fig, "figure", fig)
        fig.savefig(tmp_path / f"{name}.png")
        plt.close("all")
        assert (tmp_path / f"{name}.png").stat().st_size > 1000


def test_scalar_mlp_from_nn_scalar_matches_a_tensor_mlp_with_the_same_weights():
    net = cr.nn.scalar.MLP(2, [3, 1], rng=0)
    params = net.parameters()
    x = [0.3, -0.8]
    out = net(x)
    out.backward()
    # same network with Tensors: read the weights layer by layer (micrograd's layout: neurons of weights + bias)
    layers = net.layers
    h = np.array(x)
    acts = []
    for layer in layers:
        W = np.array([[w.data for w in n.w] for n in layer.neurons])
        bvec = np.array([n.b.data for n in layer.neurons])
        acts.append((W, bvec))
    W1 = cr.Tensor(acts[0][0], requires_grad=True)
    W2 = cr.Tensor(acts[1][0], requires_grad=True)
    z = W1 @ cr.Tensor(h) + cr.Tensor(acts[0][1])
    nonlin = getattr(layers[0].neurons[0], "nonlin", True)
    z = z.relu() if nonlin else z
    y = (W2 @ z + cr.Tensor(acts[1][1])).sum()
    assert math.isclose(out.data, y.item(), rel_tol=1e-12)
    y.backward()
    assert np.allclose([w.grad for w in layers[0].neurons[1].w], W1.grad.numpy()[1])
    assert len(params) == 3 * 3 + 4


def test_deriv_of_a_scalar_function_to_third_order_and_grad_on_scalars():
    f = lambda x: x.tanh() * x if isinstance(x, Scalar) else np.tanh(x) * x
    t = math.tanh(0.4)
    d1 = t + 0.4 * (1 - t**2)
    assert math.isclose(cr.deriv(f)(0.4), d1, rel_tol=1e-12)
    assert math.isclose(cr.grad(f)(Scalar(0.4)), d1, rel_tol=1e-12)
    d3 = cr.deriv(f, order=3)(0.4)
    h = 1e-3
    fd = (cr.deriv(f, order=2)(0.4 + h) - cr.deriv(f, order=2)(0.4 - h)) / (2 * h)
    assert math.isclose(d3, fd, rel_tol=1e-5)


@pytest.mark.parametrize("engine", ["matplotlib", "graphviz"])
def test_a_graph_picture_as_pdf_for_a_report(tmp_path, engine):
    # graphviz users write Digraph(format='pdf'); render refused a .pdf file name
    pytest.importorskip("matplotlib")
    from chainrule.graph import render
    from chainrule.pictures.graph.render import graphviz_available

    if engine == "graphviz" and not graphviz_available():
        pytest.skip("the Graphviz dot program is not installed")
    a, b = Scalar(1.0, label="a"), Scalar(2.0, label="b")
    L = (a * b).tanh()
    L.backward()
    path = render(L, tmp_path / "graph.pdf", engine=engine)
    assert path.read_bytes()[:5] == b"%PDF-"
    with pytest.raises(ValueError, match=".pdf"):
        render(L, tmp_path / "graph.jpeg", engine=engine)
