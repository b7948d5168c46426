"""Flatten nested tuples, lists and dicts of values into leaves, and rebuild them."""

from __future__ import annotations

from typing import Any

Treedef = Any  # ("leaf",) | (type, [children defs]) | (dict, keys, [children defs])


def flatten(tree: Any) -> tuple[list[Any], Treedef]:
    """Leaves of ``tree`` in order, and a description to rebuild it (iterative)."""
    leaves: list[Any] = []
    root: list[Any] = [None]
    stack: list[tuple[Any, list[Any], int]] = [(tree, root, 0)]
    while stack:
        node, parent, slot = stack.pop()
        if isinstance(node, (tuple, list)):
            kids: list[Any] = [None] * len(node)
            parent[slot] = (type(node), kids)
            stack.extend((child, kids, i) for i, child in reversed(list(enumerate(node))))
        elif isinstance(node, dict):
            keys = list(node)
            kids = [None] * len(keys)
            parent[slot] = (dict, keys, kids)
            stack.extend((node[k], kids, i) for i, k in reversed(list(enumerate(keys))))
        else:
            parent[slot] = ("leaf", len(leaves))
            leaves.append(node)
    return leaves, root[0]


def unflatten(treedef: Treedef, leaves: list[Any]) -> Any:
    """Rebuild the structure ``treedef`` with new ``leaves``."""
    if treedef[0] == "leaf":
        return leaves[treedef[1]]
    if treedef[0] is dict:
        _, keys, kids = treedef
        return {k: unflatten(d, leaves) for k, d in zip(keys, kids)}
    kind, kids = treedef
    items = [unflatten(d, leaves) for d in kids]
    return kind(items) if kind in (list, tuple) else kind(*items)
