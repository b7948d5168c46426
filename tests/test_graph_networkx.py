"""chainrule.graph.to_networkx: the graph for your own analysis."""

from __future__ import annotations

import pytest

from chainrule import Scalar
from chainrule.graph import to_networkx
from graph_examples import diamonds, seed002, tensor_mlp

nx = pytest.importorskip("networkx")


def test_seed002_as_networkx():
    v = seed002()
    G = to_networkx(v["f"])
    assert isinstance(G, nx.MultiDiGraph)
    assert G.number_of_nodes() == 6 and G.number_of_edges() == 8
    by_label = {d["label"]: n for n, d in G.nodes(data=True)}
    assert G.nodes[by_label["f"]]["obj"] is v["f"] and by_label["f"] == 0
    assert G.nodes[by_label["c"]]["op"] == "+" and G.nodes[by_label["a"]]["op"] == ""
    assert G.nodes[by_label["b"]]["grad"] == -11.0 and G.nodes[by_label["e"]]["data"] == -3.0
    locals_into_f = sorted(d["local"] for _, _, d in G.in_edges(by_label["f"], data=True))
    assert locals_into_f == [-3.0, 2.0]
    assert nx.is_directed_acyclic_graph(G)
    assert [n for n in G if G.out_degree(n) == 0] == [0]


def test_networkx_counts_paths_like_explain():
    x, out = diamonds(6)
    G = to_networkx(out)
    src = next(n for n, d in G.nodes(data=True) if d["obj"] is x)
    assert sum(1 for _ in nx.all_simple_paths(G, src, 0)) == 2**6


def test_networkx_multigraph_keeps_x_times_x():
    x = Scalar(3.0, label="x")
    G = to_networkx(x * x)
    assert G.number_of_edges() == 2
    assert sorted(d["slot"] for _, _, d in G.edges(data=True)) == [0, 1]
    assert nx.DiGraph(G).number_of_edges() == 1


def test_networkx_tensor_attributes():
    x, W, loss = tensor_mlp()
    G = to_networkx(loss)
    attrs = {d["label"]: d for _, d in G.nodes(data=True) if d["label"]}
    assert attrs["x"]["shape"] == (2, 3) and attrs["W"]["dtype"] == "float64"
    matmul = next(n for n, d in G.nodes(data=True) if d["op"] == "matmul")
    assert sorted(d["argnum"] for _, _, d in G.in_edges(matmul, data=True)) == [0, 1]
    assert G.graph["kind"] == "tensor" and G.graph["n_total"] == 8
