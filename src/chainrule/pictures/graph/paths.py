"""Paths from an output to one of its inputs: counted by dynamic programming, listed up to a cap."""

from __future__ import annotations

from typing import Any

from .collect import Graph
from .format import label_of

Edge = tuple[int, int, int]  # (parent, child, slot) indices, as in Graph.edges


def count_paths(g: Graph, target: int | None) -> tuple[list[int], list[int]]:
    """Per node, how many paths lead from it to ``target`` (Python ints: no overflow).

    Returns ``(counts, order)`` with ``order`` the node indices children first. A path
    that uses both edges of ``x * x`` counts twice, as the chain rule does.
    """
    order = g.children_first()
    counts = [0] * len(g.nodes)
    if target is None:
        return counts, order
    parent, start = g.edge_parent, g.edge_start
    for i in reversed(order):  # parents before children
        if i == target:
            counts[i] = 1
            continue
        total = 0
        for k in range(start[i], start[i + 1]):
            total += counts[parent[k]]
        counts[i] = total
    return counts, order


def list_paths(g: Graph, target: int, counts: list[int], limit: int) -> list[list[Edge]]:
    """The first ``limit`` paths from the output to ``target`` (depth first, parents in order).

    Only edges into nodes that reach ``target`` are followed, so every branch ends in a
    path and the work is proportional to ``limit`` times the path length.
    """
    found: list[list[Edge]] = []
    if limit <= 0 or not counts or counts[0] == 0:
        return found
    parent, slot, start = g.edge_parent, g.edge_slot, g.edge_start
    stack: list[tuple[int, Any]] = [(0, None)]  # (node, linked list of the edges taken so far)
    while stack and len(found) < limit:
        i, link = stack.pop()
        if i == target:
            path = []
            while link is not None:
                link, edge = link
                path.append(edge)
            path.reverse()
            found.append(path)
            continue
        for k in range(start[i + 1] - 1, start[i] - 1, -1):
            p = parent[k]
            if counts[p]:
                stack.append((p, (link, (p, i, slot[k]))))
    return found


def path_nodes(g: Graph, path: list[Edge]) -> list[Any]:
    """The node objects along ``path``, from the output to the input."""
    return [g.nodes[0]] + [g.nodes[p] for p, _, _ in path]


def path_text(nodes: list[Any]) -> str:
    """``L -> * -> - -> + -> * -> x``: each node's label (where given) then the op that made it.

    The last node (the input) is named by its label, or 'wrt'.
    """
    items: list[str] = []
    for k, node in enumerate(nodes):
        label = label_of(node)
        if k == len(nodes) - 1:
            items.append(label or "wrt")
            break
        if label:
            items.append(label)
        op = node.op
        if op:
            items.append(op)
    return " -> ".join(items)
