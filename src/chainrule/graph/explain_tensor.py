"""Chains of vector-Jacobian products along Tensor paths, their sum, and the check against backward."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff import engine
from ..autodiff.sparse import densify
from ..tensor import Tensor
from .collect import Graph
from .paths import Edge


def _seed(out: Tensor, gradient: Any) -> np.ndarray:
    if gradient is None:
        if out.data.size != 1:
            raise ValueError(
                f"explain: the output has shape {out.shape}, not one element; pass gradient= an array of shape "
                f"{out.shape} (d final / d out), or explain a scalar such as out.sum()"
            )
        return np.ones_like(out.data)
    raw = np.asarray(gradient.data if isinstance(gradient, Tensor) else gradient, dtype=out.data.dtype)
    if raw.shape != out.shape:
        raise ValueError(f"explain: gradient has shape {raw.shape} but the output has shape {out.shape}")
    return raw


def _vjp(node: Tensor, slot: int, g: Any) -> Any:
    node._check_versions()
    return densify(node._prim.vjp(node._parents[slot][0], g, node, False))


def _sum_over_paths(g: Graph, target: int, counts: list[int], order: list[int], seed: np.ndarray) -> np.ndarray:
    """Sum over all paths of the VJP chains, sharing the work of common path prefixes."""
    adj: dict[int, Any] = {0: seed}
    nodes, parent, slots, start = g.nodes, g.edge_parent, g.edge_slot, g.edge_start
    for i in order:
        if not counts[i] or i == target or i not in adj:
            continue
        a = adj.pop(i)
        for k in range(start[i], start[i + 1]):
            p, slot = parent[k], slots[k]
            if counts[p]:
                v = _vjp(nodes[i], slot, a)
                adj[p] = adj[p] + v if p in adj else v
    return np.asarray(adj[target])


def tolerance(dtype: np.dtype) -> float:
    return 1e-7 if np.dtype(dtype).itemsize >= 8 else 1e-3


def agree(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal up to the rounding of their dtype (NaN agrees with NaN)."""
    rtol = tolerance(np.result_type(a, b))
    scale = float(np.max(np.abs(b), initial=0.0)) if np.all(np.isfinite(b)) else 1.0
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=rtol * max(scale, 1.0), equal_nan=True))


def tensor_chains(
    g: Graph,
    wrt: Tensor,
    target: int | None,
    counts: list[int],
    order: list[int],
    listed: list[list[Edge]],
    gradient: Any,
) -> tuple[list[list[Any]], list[np.ndarray], np.ndarray, np.ndarray, bool]:
    """(VJP steps per path, contribution per path, sum over all paths, the gradient from backward, agreement)."""
    from ..autodiff.backprop import grad
    from .explain import VJPStep

    out = g.nodes[0]
    seed = _seed(out, gradient)
    chains: list[list[Any]] = []
    products: list[np.ndarray] = []
    previous = engine.set_grad_enabled(False)
    try:
        for path in listed:
            steps = []
            v: Any = seed
            for p, c, slot in path:
                child = g.nodes[c]
                v = _vjp(child, slot, v)
                steps.append(VJPStep(child.op, child._parents[slot][0], child.shape, g.nodes[p].shape, np.asarray(v)))
            chains.append(steps)
            products.append(np.asarray(v))
        if target is None:
            zeros = np.zeros_like(wrt.data)
            return chains, products, zeros, zeros.copy(), True
        total = _sum_over_paths(g, target, counts, order, seed)
    finally:
        engine.set_grad_enabled(previous)
    (backward_grad,) = grad(out, g.nodes[target], grad_outputs=seed)
    gradient_value = np.asarray(backward_grad.data)
    ok = agree(total, gradient_value) and total.shape == wrt.shape
    if len(listed) == counts[0] and products:
        ok = ok and agree(np.sum(products, axis=0), total)
    return chains, products, total, gradient_value, ok

