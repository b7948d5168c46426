"""``to_networkx(out)``: the graph as a networkx MultiDiGraph, for your own analysis."""

from __future__ import annotations

from typing import Any

from . import _node
from .collect import collect


def to_networkx(out: Any, max_nodes: int | None = None) -> Any:
    """The graph behind ``out`` as a ``networkx.MultiDiGraph``, edges from inputs to results.

    Nodes are integers (0 is ``out``) with attributes ``obj`` (the Scalar or Tensor),
    ``label``, ``op`` ('' for a leaf), ``level`` (edges from the output) and, for Scalars,
    ``data`` and ``grad`` (floats), for Tensors ``shape`` and ``dtype``. Edges carry ``slot``
    (the parent's position in the child's parents) and, for Scalars, ``local`` (the local
    derivative), for Tensors ``argnum``. It is a multigraph because ``x * x`` uses ``x``
    twice; ``networkx.DiGraph(g)`` merges such edges.

    Example:
        >>> from chainrule import Scalar
        >>> from chainrule.graph import to_networkx
        >>> x = Scalar(3.0, label="x")
        >>> g = to_networkx(x * x)
        >>> g.number_of_nodes(), g.number_of_edges(), sorted(d["local"] for _, _, d in g.edges(data=True))
        (2, 2, [3.0, 3.0])
    """
    try:
        import networkx as nx
    except ImportError:
        raise ImportError(
            "to_networkx needs networkx; install it with `pip install chainrule[viz]` (or `pip install networkx`)"
        ) from None
    g = collect(out, max_nodes=max_nodes)
    G = nx.MultiDiGraph(kind=g.kind, n_total=g.n_total)
    scalar = g.kind == _node.SCALAR
    for i, node in enumerate(g.nodes):
        attrs: dict[str, Any] = {"obj": node, "label": _node.label_of(node), "op": _node.op_name(node),
                                 "level": g.level[i]}
        if scalar:
            attrs.update(data=node.data, grad=node.grad)
        else:
            attrs.update(shape=node.shape, dtype=str(node.dtype))
        G.add_node(i, **attrs)
    for p, c, slot in g.edges:
        child = g.nodes[c]
        if scalar:
            G.add_edge(p, c, slot=slot, local=child._local[slot])
        else:
            G.add_edge(p, c, slot=slot, argnum=child._parents[slot][0])
    return G
