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


ORDINALS = ("1st", "2nd", "3rd")


def ordinal(slot: int) -> str:
    """``(1st)`` for argument 0, ``(2nd)`` for argument 1, ...: which input of an op a path enters by."""
    return f"({ORDINALS[slot]})" if slot < len(ORDINALS) else f"({slot + 1}th)"


def path_text(nodes: list[Any], entered: dict[int, int] | None = None) -> str:
    """``L -> * -> - -> + -> * -> x``: each node's label (where given) then the op that made it.

    The last node (the input) is named by its label, or 'wrt'. ``entered`` maps a position
    on the path to the argument the path takes there, shown after that op as ``*(2nd)``.
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
            items.append(op + ordinal(entered[k]) if entered and k in entered else op)
    return " -> ".join(items)


def distinct_texts(paths: list[list[Any]], edges: list[list[Edge]]) -> list[str]:
    """Each path's text; paths that would read alike name the argument they take where they part.

    ``(y - (m*x + c)) * (y - (m*x + c))`` has two paths to ``x`` through the same ops, one through
    each factor of the ``*``: they read ``L -> *(1st) -> ...`` and ``L -> *(2nd) -> ...``.
    """
    texts = [path_text(p) for p in paths]
    alike: dict[str, list[int]] = {}
    for k, text in enumerate(texts):
        alike.setdefault(text, []).append(k)
    for group in alike.values():
        if len(group) < 2:
            continue
        slots = [[slot for _, _, slot in edges[k]] for k in group]
        parting = {j for j in range(min(map(len, slots))) if len({s[j] for s in slots}) > 1}
        for k, s in zip(group, slots):
            texts[k] = path_text(paths[k], {j: s[j] for j in parting})
    return texts
