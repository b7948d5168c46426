"""Flatten nested tuples, lists and dicts of values into leaves, and rebuild them.

As in JAX, ``None`` is an empty subtree (no leaves; it comes back as None), and a
container comes back with its own type: a namedtuple stays that namedtuple, an
``OrderedDict`` an OrderedDict, a ``defaultdict`` keeps its default factory.
Also as in JAX, a dict's leaves come in the order of its sorted keys (an ``OrderedDict``'s in
its own order), so two dicts with the same keys inserted in different orders (a primal and
its tangent, an output and its cotangent) line up key by key; the rebuilt dict keeps the
original's key order. Other types join with ``register`` (``chainrule.tree_util.register_pytree_node``):
their children are subtrees, their auxiliary data is kept in the structure.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from typing import Any

# ("leaf", index) | ("none",) | (sequence type, [children defs])
# | ("dict", rebuild, keys in leaf order, [children defs], keys in the dict's own order)
# | ("custom", registered type, auxiliary data, [children defs])
Treedef = Any

# Registered node types: type -> (flatten: node -> (children, aux), unflatten: (aux, children) -> node,
# names of the children for leaf paths, or None)
REGISTRY: dict[type, tuple[Any, Any, Any]] = {}


def register(nodetype: type, flatten_func: Any, unflatten_func: Any, names: Any = None) -> None:
    """Make ``nodetype`` a pytree node (JAX's ``register_pytree_node``); see ``chainrule.tree_util``."""
    if nodetype in REGISTRY or nodetype in (tuple, list, dict, type(None)):
        raise ValueError(f"register_pytree_node: {nodetype.__name__} is already a pytree node type "
                         "(a type is registered once)")
    REGISTRY[nodetype] = (flatten_func, unflatten_func, names)


def _children(node: Any) -> tuple[list[Any], Any]:
    children, aux = REGISTRY[type(node)][0](node)
    return list(children), aux


def _dict_maker(node: dict) -> Any:
    """A function that rebuilds a mapping of ``node``'s type from (key, value) pairs."""
    kind = type(node)
    if isinstance(node, defaultdict):
        factory = node.default_factory
        return lambda pairs: kind(factory, pairs)
    if kind is dict:
        return dict
    return lambda pairs: kind(pairs)


def leaf_order(node: dict) -> list[Any]:
    """The keys of ``node`` in the order its leaves are listed: sorted (as JAX), unless the order is the
    mapping's meaning (an OrderedDict) or the keys cannot be compared with each other."""
    keys = list(node)
    if isinstance(node, OrderedDict):
        return keys
    try:
        return sorted(keys)
    except TypeError:
        return keys


def flatten(tree: Any, is_leaf: Any = None) -> tuple[list[Any], Treedef]:
    """Leaves of ``tree`` in order, and a description to rebuild it (iterative). ``is_leaf``: JAX's
    predicate for subtrees to take whole, as leaves."""
    leaves: list[Any] = []
    root: list[Any] = [None]
    stack: list[tuple[Any, list[Any], int]] = [(tree, root, 0)]
    while stack:
        node, parent, slot = stack.pop()
        if is_leaf is not None and is_leaf(node):
            parent[slot] = ("leaf", len(leaves))
            leaves.append(node)
        elif node is None:
            parent[slot] = ("none",)
        elif type(node) in REGISTRY:
            children, aux = _children(node)
            kids: list[Any] = [None] * len(children)
            parent[slot] = ("custom", type(node), aux, kids)
            stack.extend((child, kids, i) for i, child in reversed(list(enumerate(children))))
        elif isinstance(node, (tuple, list)):
            kids = [None] * len(node)
            parent[slot] = (type(node), kids)
            stack.extend((child, kids, i) for i, child in reversed(list(enumerate(node))))
        elif isinstance(node, dict):
            keys = leaf_order(node)
            kids = [None] * len(keys)
            parent[slot] = ("dict", _dict_maker(node), keys, kids, list(node))
            stack.extend((node[k], kids, i) for i, k in reversed(list(enumerate(keys))))
        else:
            parent[slot] = ("leaf", len(leaves))
            leaves.append(node)
    return leaves, root[0]


def leaf_paths(tree: Any) -> list[str]:
    """Where each leaf of ``tree`` sits, as an indexing expression (``"['w'][0]"``), in leaf order."""
    paths: list[str] = []
    stack: list[tuple[Any, str]] = [(tree, "")]
    while stack:
        node, path = stack.pop()
        if node is None:
            continue
        if type(node) in REGISTRY:
            children, _ = _children(node)
            names = REGISTRY[type(node)][2]
            stack.extend((child, f"{path}.{names[i]}" if names else f"{path}[<flat index {i}>]")
                         for i, child in reversed(list(enumerate(children))))
        elif isinstance(node, (tuple, list)):
            stack.extend((child, f"{path}[{i}]") for i, child in reversed(list(enumerate(node))))
        elif isinstance(node, dict):
            stack.extend((node[k], f"{path}[{k!r}]") for k in reversed(leaf_order(node)))
        else:
            paths.append(path)
    return paths


def unflatten(treedef: Treedef, leaves: list[Any]) -> Any:
    """Rebuild the structure ``treedef`` with new ``leaves``."""
    tag = treedef[0]
    if tag == "leaf":
        return leaves[treedef[1]]
    if tag == "none":
        return None
    if tag == "custom":
        _, kind, aux, kids = treedef
        return REGISTRY[kind][1](aux, [unflatten(d, leaves) for d in kids])
    if tag == "dict":
        _, make, keys, kids, order = treedef
        built = {k: unflatten(d, leaves) for k, d in zip(keys, kids)}
        return make([(k, built[k]) for k in order])
    kind, kids = treedef
    items = [unflatten(d, leaves) for d in kids]
    return kind(*items) if hasattr(kind, "_fields") else kind(items)  # a namedtuple takes its fields one by one


def same_structure(a: Treedef, b: Treedef) -> bool:
    """Whether two treedefs have the same shape: the same dict keys, sequence lengths and leaf places
    (a tuple and a list count as the same, as the transforms read either for one another)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        tx, ty = x[0], y[0]
        if tx in ("leaf", "none") or ty in ("leaf", "none"):
            if tx != ty:
                return False
            continue
        if (tx == "dict") != (ty == "dict") or (tx == "custom") != (ty == "custom"):
            return False
        if tx == "custom":
            if x[1] is not y[1] or x[2] != y[2] or len(x[3]) != len(y[3]):
                return False
            stack.extend(zip(x[3], y[3]))
        elif tx == "dict":
            if list(x[2]) != list(y[2]):
                return False
            stack.extend(zip(x[3], y[3]))
        else:
            if len(x[1]) != len(y[1]):
                return False
            stack.extend(zip(x[1], y[1]))
    return True


def describe(treedef: Treedef) -> str:
    """A short text for a structure in error messages: ``{'a': *, 'b': (*, *)}``."""
    tag = treedef[0]
    if tag == "leaf":
        return "*"
    if tag == "none":
        return "None"
    if tag == "dict":
        return "{" + ", ".join(f"{k!r}: {describe(d)}" for k, d in zip(treedef[2], treedef[3])) + "}"
    if tag == "custom":
        return f"{treedef[1].__name__}(" + ", ".join(describe(d) for d in treedef[3]) + ")"
    inner = ", ".join(describe(d) for d in treedef[1])
    return f"[{inner}]" if treedef[0] is list else f"({inner}{',' if len(treedef[1]) == 1 else ''})"
