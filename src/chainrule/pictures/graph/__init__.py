"""Graph pictures, text and explanations, served as :mod:`chainrule.graph` (see its docstring)."""

from __future__ import annotations

from .collect import Graph, collect, count_nodes
from .dot import to_dot
from .draw import Drawing, draw
from .explain import Explanation, VJPStep, explain
from .export import to_networkx
from .render import graphviz_available, render
from .scene import Highlight
from .text import print_graph, tree

__all__ = [
    "Drawing",
    "Explanation",
    "Graph",
    "Highlight",
    "VJPStep",
    "collect",
    "count_nodes",
    "draw",
    "explain",
    "graphviz_available",
    "print_graph",
    "render",
    "to_dot",
    "to_networkx",
    "tree",
]
