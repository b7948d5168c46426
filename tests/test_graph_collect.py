"""chainrule.graph.collect / tree / to_dot: nodes and edges, caps, and a graph of a million nodes."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule import Scalar
from chainrule.graph import collect, count_nodes, to_dot, tree
from graph_examples import chain, seed002, tensor_mlp


def test_collect_seed002_nodes_and_edges():
    v = seed002()
    g = collect(v["f"])
    assert g.nodes[0] is v["f"]
    assert sorted(n.label for n in g.nodes) == ["a", "b", "c", "d", "e", "f"]
    named = sorted((g.nodes[p].label, g.nodes[c].label) for p, c, _ in g.edges)
    assert named == [("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("b", "f"), ("c", "e"), ("d", "e"), ("e", "f")]
    assert g.n_total == 6 and g.n_hidden == 0 and g.hidden_inputs == {}
    levels = {n.label: g.level[i] for i, n in enumerate(g.nodes)}
    assert levels == {"f": 0, "e": 1, "b": 1, "c": 2, "d": 2, "a": 3}


def test_collect_keeps_both_edges_of_x_times_x():
    x = Scalar(3.0, label="x")
    g = collect(x * x)
    assert len(g.nodes) == 2
    assert list(g.edges) == [(1, 0, 0), (1, 0, 1)]
    assert list(g.edge_objects()) == [(x, g.nodes[0]), (x, g.nodes[0])]


def test_collect_inputs_and_children_first_order():
    v = seed002()
    g = collect(v["f"])
    order = g.children_first()
    pos = {i: k for k, i in enumerate(order)}
    for p, c, _ in g.edges:
        assert pos[c] < pos[p]
    f_inputs = [g.nodes[p].label for p, _, _ in g.inputs(0)]
    assert f_inputs == ["e", "b"]
    assert g.index(v["a"]) is not None and g.index(Scalar(1.0)) is None


def test_collect_tensor_graph():
    x, W, loss = tensor_mlp()
    g = collect(loss)
    assert g.kind == "tensor"
    ops = sorted(n.op for n in g.nodes)
    assert ops == ["", "", "add", "matmul", "multiply", "sum", "sum", "tanh"]
    assert g.index(x) is not None and g.index(W) is not None
    mul = next(i for i, n in enumerate(g.nodes) if n.op == "multiply")
    assert sorted(s for _, _, s in g.inputs(mul)) == [0, 1]


def test_collect_caps_count_what_they_hide():
    _, y = chain(20)
    g = collect(y, max_nodes=5)
    assert len(g.nodes) == 5 and g.n_total == 21 and g.n_hidden == 16
    assert list(g.hidden_inputs) == [4]
    g = collect(y, max_depth=2)
    assert [g.level[i] for i in range(len(g.nodes))] == [0, 1, 2, 2]  # x is two steps from the top
    assert g.n_hidden == 17


def test_collect_rejects_bad_input():
    with pytest.raises(TypeError, match="collect: expected a chainrule Scalar or Tensor.*got float"):
        collect(3.0)
    with pytest.raises(ValueError, match="collect: max_nodes must be at least 1"):
        collect(Scalar(1.0), max_nodes=0)
    with pytest.raises(ValueError, match="collect: max_depth must be 0 or more"):
        collect(Scalar(1.0), max_depth=-1)


def test_tree_seed002_lines():
    text = tree(seed002()["f"])
    lines = text.splitlines()
    assert lines[0] == "f (*)  data -6.0000  grad 1.0000"
    assert lines[1] == "├─ e (*)  data -3.0000  grad 2.0000  local 2"
    assert "│  ├─ c (+)  data 3.0000  grad -2.0000  local -1" in lines
    assert lines[-1] == "└─ b  data 2.0000  grad -11.0000  local -3"
    assert len(lines) == 9


def test_tree_prints_shared_subgraphs_once():
    a, b = Scalar(1.0, label="a"), Scalar(2.0, label="b")
    c = a + b
    c.label = "c"
    s = c * c + c
    lines = tree(s).splitlines()
    assert lines[2] == "│  ├─ c (+) #1  data 3.0000  grad 0.0000  local 3"
    assert lines[5] == "│  └─ c (+) #1 (shown above)  local 3"
    assert lines[6] == "└─ c (+) #1 (shown above)  local 1"
    assert sum("a  data" in line for line in lines) == 1


def test_tree_caps_and_ascii():
    _, y = chain(30)
    text = tree(y, max_lines=4, ascii=True)
    lines = text.splitlines()
    assert len(lines) == 5
    assert lines[1].startswith("`- ") or lines[1].startswith("|- ")
    assert lines[-1] == "... 27 more nodes not shown (max_lines=4); pass max_lines=None to print all"
    deep = tree(y, max_depth=1)
    assert "[2 inputs not shown]" in deep or "[1 input not shown]" in deep
    with pytest.raises(ValueError, match="tree: max_lines must be at least 1"):
        tree(y, max_lines=0)


def test_tree_tensor_shows_shapes_and_args():
    x, W, loss = tensor_mlp()
    loss.backward()
    text = tree(loss)
    assert text.splitlines()[0].startswith("loss (sum)  () float64 = ")
    assert "matmul" in text and "x  (2, 3) float64  grad (2, 3)" in text
    assert "W  (3, 4) float64  grad (3, 4)  arg 1" in text


def test_million_node_graph_collect_text_and_dot_without_recursion():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # any recursion over the graph would fail at once
    try:
        x, y = chain(1_000_000)
        g = collect(y)
        assert len(g.nodes) == 1_000_001 and len(g.edges) == 1_500_000 and g.n_hidden == 0
        assert g.level[g.index(x)] == 2 and max(g.level) == 999_999
        del g
        text = tree(y, max_lines=50)
        assert len(text.splitlines()) == 51
        assert "more nodes not shown" in text.splitlines()[-1]
        src = to_dot(y, max_nodes=100)
        assert "showing 100 of 1,000,001 nodes" in src and "999,901 nodes hidden" in src
        assert src.count("shape=record") == 100
        assert count_nodes(y) == 1_000_001
    finally:
        sys.setrecursionlimit(limit)


def test_collect_tensor_deep_graph():
    t = cr.Tensor(np.ones(3), requires_grad=True)
    y = t
    for _ in range(3000):
        y = y * 1.0
    g = collect(y, max_nodes=10)
    assert len(g.nodes) == 10 and g.n_total == 3001
