"""The graph package reads nodes through one node-view protocol (chainrule/graph/views.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from chainrule import Scalar, Tensor
from chainrule.graph import explain
from chainrule.pictures.graph.views import ScalarView, TensorView, view_of

GRAPH = Path(__file__).resolve().parent.parent / "src" / "chainrule" / "pictures" / "graph"


def test_only_the_views_module_knows_the_node_types():
    offenders = []
    for path in sorted(GRAPH.glob("*.py")):
        if path.name == "views.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in ("scalar", "tensor") and node.level == 3:
                offenders.append(f"{path.name} imports ...{node.module}")
            if isinstance(node, ast.Name) and node.id in ("Scalar", "Tensor") and isinstance(node.ctx, ast.Load):
                offenders.append(f"{path.name} uses {node.id}")
    assert offenders == []


def test_view_of_picks_the_kind_and_names_what_it_got():
    assert isinstance(view_of(Scalar(1.0), "x"), ScalarView)
    assert isinstance(view_of(Tensor([1.0]), "x"), TensorView)
    with pytest.raises(TypeError, match="explain: expected a chainrule Scalar or Tensor .* got float"):
        explain(1.0, 2.0)


def test_one_explainer_for_both_kinds_gives_the_same_derivative():
    xs, cs = Scalar(3.0, label="x"), Scalar(4.0, label="c")
    xt, ct = (Tensor(v, requires_grad=True, label=n) for v, n in [(3.0, "x"), (4.0, "c")])
    es, et = explain((xs + cs) * xs, xs), explain((xt + ct) * xt, xt)
    assert (es.kind, et.kind) == ("scalar", "tensor")
    assert es.n_paths == et.n_paths == 2 and es.ok and et.ok
    assert es.total == 10.0 and float(np.asarray(et.total)) == 10.0
    assert [float(np.asarray(p)) for p in et.products] == es.products == [3.0, 7.0]
    assert es.path_texts() == ["* -> + -> x", "* -> x"] and et.path_texts() == ["multiply -> add -> x", "multiply -> x"]
