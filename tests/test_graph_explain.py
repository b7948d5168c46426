"""chainrule.graph.explain: seed 000's paths and chains, path counting, Tensor VJP chains."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import Scalar
from chainrule.graph import explain
from graph_examples import diamonds, seed000_loss, seed000_z, tensor_mlp


def test_seed000_two_paths_with_the_seeds_chains():
    v = seed000_loss()
    e = explain(v["L"], v["x"])
    assert e.n_paths == 2 and e.n_unlisted == 0
    # the two paths pass through the same ops: they are told apart by the factor of L's * they take
    assert e.path_texts() == ["L -> *(1st) -> - -> + -> * -> x", "L -> *(2nd) -> - -> + -> * -> x"]
    assert e.chains == [[-9, -1, 1, 2], [-9, -1, 1, 2]]
    assert e.products == [18, 18]
    assert e.total == 36 and e.gradient == 36 and e.ok
    text = str(e)
    assert "chain [-9, -1, 1, 2]: (-9) × (-1) × 1 × 2 = 18" in text
    assert "sum: 18 + 18 = 36" in text
    assert "backward() gives dL/dx = 36: matches" in text


def test_seed000_other_inputs():
    v = seed000_loss()
    for name, expected in [("y", -18), ("m", 54), ("c", 18)]:
        e = explain(v["L"], v[name])
        assert e.n_paths == 2 and e.total == expected and e.gradient == expected and e.ok, name


def test_seed000_z_red_and_green_paths():
    v = seed000_z()
    e = explain(v["z"], v["x"])
    assert e.path_texts() == ["z -> * -> + -> x", "z -> * -> x"]
    assert e.chains == [[3, 1], [7]]  # x * 1 along one path, (x + c) along the other
    assert e.total == 2 * 3 + 4 and e.ok
    assert explain(v["z"], v["c"]).chains == [[3, 1]]


def test_explain_leaves_grads_untouched():
    v = seed000_loss()
    v["x"].grad = 5.0
    explain(v["L"], v["x"])
    assert v["x"].grad == 5.0 and v["L"].grad == 0.0


def test_explain_counts_2_to_the_30_paths_without_enumerating():
    x, out = diamonds(30)
    e = explain(out, x, max_paths=5)
    assert e.n_paths == 2**30
    assert len(e.paths) == 5 and e.n_unlisted == 2**30 - 5
    assert all(len(p) == 61 for p in e.paths)  # 60 edges deep
    assert e.chains[0] == [1, 2] * 30 and e.products[0] == 2.0**30
    assert e.total == pytest.approx(5.0**30, rel=1e-12) and e.ok
    text = str(e)
    assert "1,073,741,824 paths (counted by dynamic programming, not enumerated)" in text
    assert "1,073,741,819 not listed" in text


def test_explain_intermediate_node_and_no_path():
    v = seed000_z()
    inner = v["z"].parents[0]  # x + c
    e = explain(v["z"], inner)
    assert e.n_paths == 1 and e.chains == [[3]] and e.ok
    e = explain(v["z"], Scalar(1.0, label="w"))
    assert e.n_paths == 0 and e.total == 0 and e.ok
    assert "no path leads from z to w" in str(e)
    e = explain(v["x"], v["x"])
    assert e.n_paths == 1 and e.chains == [[]] and e.total == 1 and e.ok


def test_explain_x_times_x_counts_both_edges():
    x = Scalar(3.0, label="x")
    e = explain(x * x, x)
    assert e.n_paths == 2 and e.chains == [[3], [3]] and e.total == 6 and e.ok


def test_explain_max_paths_zero_still_sums():
    v = seed000_loss()
    e = explain(v["L"], v["x"], max_paths=0)
    assert e.paths == [] and e.n_paths == 2 and e.total == 36 and e.ok


def test_explain_tensor_vjp_chains():
    x, W, loss = tensor_mlp()
    e = explain(loss, x)
    assert e.n_paths == 3 and e.ok
    assert e.path_texts() == [
        "loss -> sum -> add -> multiply -> tanh -> h -> matmul -> x",  # h is labelled
        "loss -> sum -> add -> multiply -> h -> matmul -> x",
        "loss -> sum -> add -> sum -> x",
    ]
    first = e.chains[0]
    assert [s.op for s in first] == ["sum", "add", "multiply", "tanh", "matmul"]
    assert str(first[0]) == "sum (arg 0): vjp () -> (2, 4)"
    assert str(first[-1]) == "matmul (arg 0): vjp (2, 4) -> (2, 3)"
    assert all(p.shape == (2, 3) for p in e.products)
    np.testing.assert_allclose(e.products[2], np.ones((2, 3)) * 8)  # d/dx of 8 copies of sum(x)
    np.testing.assert_allclose(sum(e.products), e.total)
    (g,) = cr.autodiff.backprop.grad(loss, x, retain_graph=True)  # kept: explain(loss, W) walks it again
    np.testing.assert_allclose(e.gradient, g.data)
    text = str(e)
    assert "vector-Jacobian product" in text and "matmul (arg 0): vjp (2, 4) -> (2, 3)" in text
    assert "matches" in text
    ew = explain(loss, W)
    assert ew.n_paths == 2 and ew.ok and ew.total.shape == (3, 4)


def test_explain_tensor_non_scalar_output_needs_gradient():
    v = cr.Tensor([1.0, 2.0, 3.0], requires_grad=True, label="v")
    out = v * v
    with pytest.raises(ValueError, match=r"explain: the output has shape \(3,\).*pass gradient="):
        explain(out, v)
    e = explain(out, v, gradient=np.array([1.0, 0.0, 2.0]))
    assert e.n_paths == 2 and e.ok
    np.testing.assert_allclose(e.total, [2.0, 0.0, 12.0])
    with pytest.raises(ValueError, match=r"explain: gradient has shape \(2,\) but the output has shape \(3,\)"):
        explain(out, v, gradient=np.ones(2))


def test_explain_tensor_deep_diamonds_counts_paths():
    t = cr.Tensor(np.array([1.0, 2.0]), requires_grad=True, label="t")
    a = t
    for _ in range(20):
        a = a * 2.0 + a * 3.0
    out = a.sum()
    e = explain(out, t, max_paths=3)
    assert e.n_paths == 2**20 and len(e.paths) == 3 and e.ok
    np.testing.assert_allclose(e.total, [5.0**20] * 2)


def test_explain_bad_input():
    v = seed000_loss()
    with pytest.raises(TypeError, match="explain: out is a Scalar but wrt is a Tensor"):
        explain(v["L"], cr.Tensor(1.0))
    with pytest.raises(TypeError, match="explain: expected a chainrule Scalar or Tensor"):
        explain(2.0, v["x"])
    with pytest.raises(ValueError, match="explain: max_paths must be an int >= 0"):
        explain(v["L"], v["x"], max_paths=-1)
    with pytest.raises(TypeError, match=r"explain: wrt must be one Scalar or Tensor, got a list; call explain\(out, w"):
        explain(v["L"], [v["x"], v["x"]])


def test_explaining_a_tensor_graph_after_backward_says_how_in_explains_terms():
    x = cr.Tensor(np.array([1.0, 2.0]), requires_grad=True)
    loss = (cr.tanh(x) ** 2).sum()
    before = explain(loss, x)  # first: explain runs its own backward and frees nothing
    loss.backward()
    assert before.ok and np.allclose(x.grad.numpy(), before.total)
    with pytest.raises(RuntimeError, match=r"explain: the values .* freed by an earlier backward\(\); explain before"):
        explain(loss, x)
    kept = (cr.tanh(x) ** 2).sum()
    kept.backward(retain_graph=True)
    assert explain(kept, x).ok
