"""The reverse-mode engine: graph order, gradient accumulation, the backward sweep.

It knows no op. A node is any object with these attributes:

- ``_parents``: a tuple of ``(argnum, parent)`` pairs, empty for a leaf;
- ``_stamp``: a creation number, larger than its parents';
- ``_prim``: an object with ``vjp(argnum, g, node, create_graph)`` returning the
  gradient for that parent (already reduced to the parent's shape);
- ``_check_versions()``: raises if a tensor saved for backward was changed in place.

Nothing here recurses, so graphs of any depth are fine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import Any

from ..core.state import is_grad_enabled, set_grad_enabled  # noqa: F401  (grad mode lives in core.state)
from .sparse import SliceGrad

_creation = attrgetter("_stamp")


def toposort(roots: Iterable[Any]) -> list[Any]:
    """Every node reachable from ``roots``, children before parents.

    Nodes carry a creation number ``_stamp`` and a node is always made after its parents,
    so a reachability walk plus one sort gives the order: no recursion, no post-order.
    Nodes are hashed by identity.
    """
    seen = set(roots)
    nodes = list(seen)
    stack = list(nodes)
    pop, push, mark, keep = stack.pop, stack.append, seen.add, nodes.append
    while stack:
        for _, parent in pop()._parents:
            if parent not in seen:
                mark(parent)
                keep(parent)
                push(parent)
    nodes.sort(key=_creation, reverse=True)
    return nodes


def backward_sweep(
    roots: list[Any],
    seeds: list[Any],
    create_graph: bool,
    add: Callable[[Any, Any], Any],
    wanted: set[Any] | None = None,
) -> list[tuple[Any, Any]]:
    """Propagate ``seeds`` (d final / d root) from ``roots`` back through the graph.

    Returns ``(node, gradient)`` for each node in ``wanted``, or, when ``wanted`` is None,
    for each leaf (no parents) and each node that asked to keep its gradient (``_retain``).
    ``add`` sums two gradients of the same node.
    """
    grads: dict[Any, Any] = {}
    for root, seed in zip(roots, seeds):
        grads[root] = add(grads[root], seed) if root in grads else seed
    found: list[tuple[Any, Any]] = []
    for node in toposort(roots):
        g = grads.pop(node, None)
        if g is None:
            continue
        if g.__class__ is SliceGrad:  # slices' gradients, kept sparse while they were summed
            g = g.dense()
        parents = node._parents
        if node in wanted if wanted is not None else (not parents or node._retain):
            found.append((node, g))
        if not parents:
            continue
        node._check_versions()
        vjp = node._prim.vjp
        for argnum, parent in parents:
            pg = vjp(argnum, g, node, create_graph)
            if parent in grads:
                grads[parent] = add(grads[parent], pg)
            else:
                grads[parent] = pg
    return found
