"""chainrule.graph.to_dot: DOT that parses, with the seeds' record nodes, op circles and edge labels."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from chainrule import Scalar
from chainrule.graph import explain, to_dot
from graph_examples import chain, seed000_loss, seed002, tensor_mlp

pydot = pytest.importorskip("pydot")


def parse(src: str):
    graphs = pydot.graph_from_dot_data(src)
    assert graphs and len(graphs) == 1, "DOT did not parse"
    g = graphs[0]
    nodes = {n.get_name(): {k: v.strip('"') for k, v in n.get_attributes().items()} for n in g.get_nodes()
             if n.get_name() not in ("graph", "node", "edge")}
    edges = [(e.get_source(), e.get_destination(), {k: v.strip('"') for k, v in e.get_attributes().items()})
             for e in g.get_edges()]
    return nodes, edges


def records(nodes):
    """label field -> (node name, [fields])."""
    out = {}
    for name, attrs in nodes.items():
        if attrs.get("shape") == "record":
            fields = [f.strip() for f in attrs["label"].strip("{} ").split("|")]
            out[fields[0]] = (name, fields)
    return out


def test_seed002_dot_records_ops_and_local_derivatives():
    nodes, edges = parse(to_dot(seed002()["f"]))
    rec = records(nodes)
    assert set(rec) == {"a", "b", "c", "d", "e", "f"}
    assert rec["f"][1] == ["f", "data -6.0000", "grad 1.0000"]
    assert rec["a"][1] == ["a", "data 1.0000", "grad 4.0000"]
    assert rec["b"][1] == ["b", "data 2.0000", "grad -11.0000"]
    ops = {name: attrs["label"] for name, attrs in nodes.items() if name.endswith("_op")}
    assert sorted(ops.values()) == ["*", "*", "+", "-"]
    assert all(nodes[name]["shape"] == "circle" for name in ops)
    # each op node feeds its value; each input feeds the op node, labelled d(child)/d(parent)
    by_name = {v[0]: k for k, v in rec.items()}
    labelled = sorted(
        (by_name[s], by_name[d[:-3]], a.get("label")) for s, d, a in edges if d.endswith("_op")
    )
    assert labelled == [
        ("a", "c", "1"), ("a", "d", "1"), ("b", "c", "1"), ("b", "d", "-1"),
        ("b", "f", "-3"), ("c", "e", "-1"), ("d", "e", "3"), ("e", "f", "2"),
    ]
    assert sorted((s, d) for s, d, _ in edges if s.endswith("_op")) == sorted((k, k[:-3]) for k in ops)


def test_dot_output_node_is_marked():
    nodes, _ = parse(to_dot(seed002()["f"]))
    assert nodes["n0"]["fillcolor"] == "lightblue" and nodes["n1"]["fillcolor"] == "white"


def test_dot_escapes_record_characters_in_labels():
    x = Scalar(1.0, label='a|b {c} <d> "q"')
    nodes, _ = parse(to_dot(x * 2.0))
    label = nodes["n1"]["label"]
    assert r"a\|b \{c\} \<d\> \"q\"" in label
    assert label.count("|") - label.count(r"\|") == 2  # still three fields


def test_dot_for_tensors_shows_shape_dtype_op_and_args():
    x, W, loss = tensor_mlp()
    loss.backward()
    nodes, edges = parse(to_dot(loss))
    rec = records(nodes)
    assert rec["x"][1] == ["x", "(2, 3) float64", "grad (2, 3)"]
    assert rec["W"][1] == ["W", "(3, 4) float64", "grad (3, 4)"]
    assert rec["loss"][1][1].startswith("() float64 = ")
    assert sorted(a["label"] for n, a in nodes.items() if n.endswith("_op")) == [
        "add", "matmul", "multiply", "sum", "sum", "tanh"]
    assert nodes[rec["W"][0]]  # present
    w_edge = [a for s, d, a in edges if s == rec["W"][0]]
    assert w_edge == [{"label": "arg 1"}]


def test_dot_cap_says_how_many_nodes_are_hidden():
    _, y = chain(50)
    src = to_dot(y, max_nodes=10)
    nodes, edges = parse(src)
    assert sum(a.get("shape") == "record" for a in nodes.values()) == 10
    assert "showing 10 of 51 nodes (max_nodes=10): 41 nodes hidden" in src
    hidden = [a for n, a in nodes.items() if n.startswith("h")]
    assert len(hidden) == 1 and "input" in hidden[0]["label"] and "hidden" in hidden[0]["label"]
    src = to_dot(y, max_depth=3, max_nodes=None)
    assert "(max_depth=3)" in src


def test_dot_highlight_colours_paths():
    v = seed000_loss()
    e = explain(v["L"], v["x"])
    nodes, edges = parse(to_dot(v["L"], highlight=e.highlight()))
    coloured = [a["color"] for _, d, a in edges if d.endswith("_op") and "color" in a]
    assert sorted(coloured) == ["forestgreen"] * 4 + ["red"] * 4
    rec = records(nodes)
    assert nodes[rec["x"][0]]["color"] == "red" and "color" not in nodes[rec["m"][0]]


def test_dot_rejects_bad_rankdir():
    with pytest.raises(ValueError, match="to_dot: rankdir must be one of"):
        to_dot(Scalar(1.0), rankdir="up")


@pytest.mark.skipif(shutil.which("dot") is None, reason="the Graphviz 'dot' program is not installed")
def test_graphviz_program_accepts_the_dot():
    src = to_dot(seed002()["f"])
    done = subprocess.run(["dot", "-Tplain"], input=src.encode(), capture_output=True, check=True)
    plain = done.stdout.decode()
    assert plain.startswith("graph ") and plain.count("\nnode ") == 10 and plain.count("\nedge ") == 12
