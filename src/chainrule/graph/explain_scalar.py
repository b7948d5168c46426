"""Chains of local derivatives along Scalar paths, their sum, and the check against ``backward()``."""

from __future__ import annotations

import math
from typing import Any

from .collect import Graph
from .paths import Edge


def close(a: float, b: float) -> bool:
    """Agreement up to rounding; NaN agrees with NaN (a NaN gradient is explained by a NaN sum)."""
    if math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _sum_over_paths(g: Graph, target: int, counts: list[int], order: list[int], seed: float) -> float:
    """Sum over all paths of the products of local derivatives, in one pass over the edges.

    Each node collects the summed chains from the output down to it, and passes them on,
    times the local derivative, only along edges that lead to ``target``.
    """
    adj = [0.0] * len(g.nodes)
    adj[0] = seed
    nodes, parent, slots, start = g.nodes, g.edge_parent, g.edge_slot, g.edge_start
    for i in order:
        if not counts[i] or i == target:
            continue
        a = adj[i]
        local = nodes[i]._local
        for k in range(start[i], start[i + 1]):
            p, slot = parent[k], slots[k]
            if counts[p]:
                adj[p] += a * local[slot]
    return adj[target]


def _backward_gradient(g: Graph, target: int, seed: float) -> float:
    """d out / d wrt from ``out.backward()``, leaving every ``.grad`` as it was."""
    nodes = g.nodes
    saved = [n.grad for n in nodes]
    try:
        for n in nodes:
            n.grad = 0.0
        nodes[0].backward(seed)
        return nodes[target].grad
    finally:
        for n, v in zip(nodes, saved, strict=True):
            n.grad = v


def scalar_chains(
    g: Graph, wrt: Any, target: int | None, counts: list[int], order: list[int], listed: list[list[Edge]], gradient: Any
) -> tuple[list[list[float]], list[float], float, float, bool]:
    """(chains, products, total over all paths, backward's gradient, whether they agree)."""
    seed = 1.0 if gradient is None else float(gradient)
    nodes = g.nodes
    chains = [[nodes[c]._local[slot] for _, c, slot in path] for path in listed]
    products = [seed * math.prod(chain) for chain in chains]
    if target is None:
        return chains, products, 0.0, 0.0, True
    total = _sum_over_paths(g, target, counts, order, seed)
    grad = _backward_gradient(g, target, seed)
    ok = close(total, grad)
    if len(listed) == counts[0]:
        ok = ok and close(math.fsum(products), total)
    return chains, products, total, grad, ok
