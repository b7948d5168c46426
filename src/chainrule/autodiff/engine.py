"""The reverse-mode engine: graph order, gradient accumulation, the backward sweep.

It knows no op. A node is any object with these attributes:

- ``_parents``: a tuple of ``(argnum, parent)`` pairs, empty for a leaf;
- ``_prim``: an object with ``vjp(argnum, g, node, create_graph)`` returning the
  gradient for that parent (already reduced to the parent's shape);
- ``_check_versions()``: raises if a tensor saved for backward was changed in place.

Nothing here recurses, so graphs of any depth are fine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

_grad_enabled = True


def is_grad_enabled() -> bool:
    """True when new operations record the graph needed by ``backward``."""
    return _grad_enabled


def set_grad_enabled(mode: bool) -> bool:
    """Switch graph recording on or off; returns the previous mode."""
    global _grad_enabled
    previous, _grad_enabled = _grad_enabled, bool(mode)
    return previous


def toposort(roots: Iterable[Any]) -> list[Any]:
    """Nodes reachable from ``roots``, each after all of its parents (iterative DFS)."""
    order: list[Any] = []
    visited: set[int] = set()
    stack: list[tuple[Any, bool]] = [(r, False) for r in roots]
    pop, push, seen, add = stack.pop, stack.append, visited.add, order.append
    while stack:
        node, expanded = pop()
        if expanded:
            add(node)
            continue
        key = id(node)
        if key in visited:
            continue
        seen(key)
        push((node, True))
        for _, parent in node._parents:
            if id(parent) not in visited:
                push((parent, False))
    return order


def backward_sweep(
    roots: list[Any],
    seeds: list[Any],
    create_graph: bool,
    sink: Callable[[Any, Any], None],
    add: Callable[[Any, Any], Any],
) -> None:
    """Propagate ``seeds`` (d root) from ``roots`` to every node they depend on.

    ``sink(node, g)`` receives the total gradient of each node, in reverse topological
    order; ``add`` sums two gradients of the same node.
    """
    grads: dict[int, Any] = {}
    for root, seed in zip(roots, seeds):
        key = id(root)
        grads[key] = add(grads[key], seed) if key in grads else seed
    order = toposort(roots)
    for node in reversed(order):
        g = grads.pop(id(node), None)
        if g is None:
            continue
        sink(node, g)
        parents = node._parents
        if not parents:
            continue
        node._check_versions()
        prim = node._prim
        for argnum, parent in parents:
            pg = prim.vjp(argnum, g, node, create_graph)
            key = id(parent)
            if key in grads:
                grads[key] = add(grads[key], pg)
            else:
                grads[key] = pg
