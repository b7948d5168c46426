"""``to_networkx(out)``: the graph as a networkx MultiDiGraph, for your own analysis."""

from __future__ import annotations

from typing import Any

from .collect import collect
from .format import label_of
from .views import view_of


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
    view = view_of(out, "to_networkx")
    g = collect(out, max_nodes=max_nodes)
    G = nx.MultiDiGraph(kind=g.kind, n_total=g.n_total)
    for i, node in enumerate(g.nodes):
        G.add_node(i, obj=node, label=label_of(node), op=node.op, level=g.level[i], **view.node_attrs(node))
    for p, c, slot in g.edges:
        G.add_edge(p, c, slot=slot, **view.edge_attrs(g.nodes[c], slot))
    return G
