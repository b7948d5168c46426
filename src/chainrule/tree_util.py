"""``chainrule.tree_util``: JAX's pytree helpers, for the nested tuples, lists and dicts the transforms take and give.

As in JAX, ``None`` is an empty subtree, a dict's leaves come in sorted-key order, and containers come back
with their own types (namedtuples, OrderedDicts). Typical use: an update step over a parameter dict. Other
types become nodes with ``register_pytree_node``, ``register_pytree_node_class`` or ``register_dataclass``;
every transform (``grad``, ``vmap``, ``jacobian``, ...) then looks inside them.

Example:
    >>> import numpy as np, chainrule as cr
    >>> from chainrule.tree_util import tree_map
    >>> params = {"w": np.array([1.0, 2.0]), "b": 0.5}
    >>> grads = cr.grad(lambda p: np.sum(p["w"] ** 2) + p["b"])(params)
    >>> tree_map(lambda p, g: p - 0.1 * g, params, grads)
    {'w': array([0.8, 1.6]), 'b': 0.4}
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from .core import pytree as _pytree

__all__ = ["tree_all", "tree_flatten", "tree_leaves", "tree_map", "tree_reduce", "tree_structure", "tree_unflatten",
           "register_pytree_node", "register_pytree_node_class", "register_dataclass", "tree_flatten_with_path",
           "tree_leaves_with_path", "tree_map_with_path", "keystr", "SequenceKey", "DictKey", "GetAttrKey",
           "FlattenedIndexKey", "Partial", "register_pytree_with_keys", "register_pytree_with_keys_class",
           "register_static", "tree_transpose", "all_leaves"]

_NO_INITIALIZER = object()


class PyTreeDef:
    """The structure of a pytree, without its leaves (what ``tree_flatten`` and ``tree_structure`` give)."""

    __slots__ = ("_treedef", "num_leaves")

    def __init__(self, treedef: Any, num_leaves: int) -> None:
        self._treedef, self.num_leaves = treedef, num_leaves

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PyTreeDef) and _shape(self._treedef) == _shape(other._treedef)

    def __hash__(self) -> int:
        return hash(repr(_shape(self._treedef)))

    def __repr__(self) -> str:
        return f"PyTreeDef({_pytree.describe(self._treedef)})"  # JAX's text: PyTreeDef({'a': *, 'b': (*, None)})

    def unflatten(self, leaves: Any) -> Any:
        """This structure rebuilt with ``leaves`` (``tree_unflatten(self, leaves)``)."""
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of ``tree`` where this structure has its leaves (``tree`` must have this structure down to
        them), in leaf order."""
        found: list[Any] = []
        stack = [(self._treedef, tree)]
        while stack:
            treedef, node = stack.pop()
            tag = treedef[0]
            if tag == "leaf":
                found.append(node)
                continue
            here = _pytree.flatten(node, is_leaf=lambda x: x is not node)[1]  # node's own level
            if tag == "none" or here[0] in ("leaf", "none") or not _same_level(treedef, here):
                if tag == "none" and node is None:
                    continue
                raise ValueError(f"flatten_up_to: the tree has {_pytree.describe(here)} where the structure "
                                 f"{self} has {_pytree.describe(treedef)}")
            kids = _pytree.flatten(node, is_leaf=lambda x: x is not node)[0]
            stack.extend(reversed(list(zip(treedef[3] if tag in ("dict", "custom") else treedef[1], kids))))
        return found


def _same_level(a: Any, b: Any) -> bool:
    """Whether two treedefs have the same node at the top (kind, keys, number of children; children not compared)."""
    if a[0] != b[0]:  # (the container's type: a tuple and a list differ, as in JAX)
        return False
    if a[0] == "dict":
        return list(a[2]) == list(b[2])
    if a[0] == "custom":
        return a[1] is b[1] and a[2] == b[2] and len(a[3]) == len(b[3])
    return len(a[1]) == len(b[1])


def _shape(treedef: Any) -> Any:
    """A comparable description of a treedef (container types and keys, no rebuild functions)."""
    tag = treedef[0]
    if tag in ("leaf", "none"):
        return tag
    if tag == "dict":
        return ("dict", tuple(treedef[2]), tuple(_shape(k) for k in treedef[3]))
    if tag == "custom":
        return ("custom", treedef[1].__qualname__, treedef[2], tuple(_shape(k) for k in treedef[3]))
    return (treedef[0].__name__, tuple(_shape(k) for k in treedef[1]))


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], PyTreeDef]:
    """``(leaves, treedef)``: the leaves in order and the structure to rebuild ``tree`` with ``tree_unflatten``
    (``is_leaf``: subtrees it says yes to are leaves)."""
    leaves, treedef = _pytree.flatten(tree, is_leaf)
    return leaves, PyTreeDef(treedef, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Any) -> Any:
    """The structure ``treedef`` rebuilt with ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tree_unflatten: the structure has {treedef.num_leaves} leaves, got {len(leaves)}")
    return _pytree.unflatten(treedef._treedef, leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, in order."""
    return _pytree.flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure of ``tree`` without its leaves."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``f`` applied leaf by leaf to ``tree`` and the trees in ``rest`` (which must have its structure, or more:
    where ``tree`` has a leaf, ``f`` gets their subtree there, as in JAX)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for k, other in enumerate(rest):
        try:  # as JAX: the first tree is a prefix of the others (f gets their subtrees where it has leaves)
            others.append(treedef.flatten_up_to(other))
        except ValueError:
            raise ValueError(f"tree_map: tree {k + 1} has structure {tree_structure(other, is_leaf)}, the first "
                             f"tree {treedef}; the first must be the same or a prefix of it") from None
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any, initializer: Any = _NO_INITIALIZER,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """The leaves of ``tree`` folded left to right by ``function`` (from ``initializer`` when given).

    Example:
        >>> from chainrule.tree_util import tree_reduce
        >>> tree_reduce(lambda a, b: a + b, {"w": 1.0, "b": (2.0, 3.0)})
        6.0
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        if not leaves:
            raise TypeError("tree_reduce: the tree has no leaves and no initializer was given")
        total, leaves = leaves[0], leaves[1:]
    else:
        total = initializer
    for leaf in leaves:
        total = function(total, leaf)
    return total


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf of ``tree`` is true (as Python's ``all``)."""
    return all(tree_leaves(tree, is_leaf))


def register_pytree_node(nodetype: type, flatten_func: Callable[[Any], tuple[Any, Any]],
                         unflatten_func: Callable[[Any, Any], Any], flatten_with_keys_func: Any = None) -> None:
    """Make ``nodetype`` a pytree node, as JAX's: ``flatten_func(node)`` gives ``(children, aux_data)`` (the
    children are subtrees, ``aux_data`` hashable and compared as part of the structure), and
    ``unflatten_func(aux_data, children)`` rebuilds a node. A type is registered once.

    Example:
        >>> import numpy as np, chainrule as cr
        >>> from chainrule.tree_util import register_pytree_node
        >>> class Point:
        ...     def __init__(self, x, y):
        ...         self.x, self.y = x, y
        >>> register_pytree_node(Point, lambda p: ((p.x, p.y), None), lambda aux, xy: Point(*xy))
        >>> g = cr.grad(lambda p: p.x * p.y ** 2)(Point(3.0, 2.0))
        >>> type(g).__name__, g.x, g.y
        ('Point', 4.0, 12.0)
    """
    _pytree.register(nodetype, flatten_func, unflatten_func)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: register ``cls`` with its ``tree_flatten(self)`` method and ``tree_unflatten(cls, aux_data,
    children)`` classmethod, as JAX's.

    Example:
        >>> import chainrule as cr
        >>> from chainrule.tree_util import register_pytree_node_class
        >>> @register_pytree_node_class
        ... class Scaled:
        ...     def __init__(self, value, scale):
        ...         self.value, self.scale = value, scale
        ...     def tree_flatten(self):
        ...         return (self.value,), self.scale  # scale: static, part of the structure
        ...     @classmethod
        ...     def tree_unflatten(cls, scale, children):
        ...         return cls(children[0], scale)
        >>> cr.grad(lambda s: s.scale * s.value ** 2)(Scaled(3.0, 10)).value
        60.0
    """
    _pytree.register(cls, lambda node: node.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype: type, data_fields: Any = None, meta_fields: Any = None,
                       drop_fields: Any = ()) -> type:
    """Register a dataclass (usable as a decorator), as JAX's: ``data_fields`` are children, ``meta_fields`` static
    (part of the structure). Without them the dataclass's fields are read: those declared with
    ``field(metadata={"static": True})`` are meta fields, the others data fields.

    Example:
        >>> import dataclasses, numpy as np, chainrule as cr
        >>> from chainrule.tree_util import register_dataclass
        >>> @register_dataclass
        ... @dataclasses.dataclass
        ... class Params:
        ...     w: np.ndarray
        ...     name: str = dataclasses.field(default="layer", metadata={"static": True})
        >>> cr.grad(lambda p: np.sum(p.w ** 2))(Params(np.array([1.0, 2.0])))
        Params(w=array([2., 4.]), name='layer')
    """
    import dataclasses

    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: {nodetype.__name__} is not a dataclass; pass data_fields and "
                            "meta_fields")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass: give both data_fields and meta_fields, or neither (for a dataclass)")
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)

    def flatten(node: Any) -> tuple[Any, Any]:
        return [getattr(node, f) for f in data_fields], tuple(getattr(node, m) for m in meta_fields)

    def unflatten(aux: Any, children: Any) -> Any:
        return nodetype(**dict(zip(data_fields, children, strict=True)), **dict(zip(meta_fields, aux, strict=True)))

    _pytree.register(nodetype, flatten, unflatten, names=data_fields)
    return nodetype


# -- paths: where each leaf sits (JAX's key types, keystr, the *_with_path functions) --------------------------
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """Entry ``idx`` of a tuple or list: ``[0]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    """Entry ``key`` of a dict: ``['w']``."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """Attribute ``name`` (a namedtuple's field, a registered dataclass's data field): ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """Child ``key`` of a registered node whose children have no names."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


# types registered with their own keys (register_pytree_with_keys): type -> flatten_with_keys
_KEYED: dict[type, Callable[[Any], tuple[Any, Any]]] = {}


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable[[Any], tuple[Any, Any]],
                              unflatten_func: Callable[[Any, Any], Any],
                              flatten_func: Callable[[Any], tuple[Any, Any]] | None = None) -> None:
    """``register_pytree_node`` with a key per child, as JAX's: ``flatten_with_keys(node)`` gives
    ``(((key, child), ...), aux_data)``; the keys are the children's path entries (``tree_flatten_with_path``)."""

    def flatten(node: Any) -> tuple[Any, Any]:
        pairs, aux = flatten_with_keys(node)
        return [child for _, child in pairs], aux

    _pytree.register(nodetype, flatten_func or flatten, unflatten_func)
    _KEYED[nodetype] = flatten_with_keys


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: ``register_pytree_with_keys`` with the class's ``tree_flatten_with_keys(self)`` method and
    ``tree_unflatten(cls, aux_data, children)`` classmethod (and its ``tree_flatten`` if it has one)."""
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, lambda node: node.tree_flatten_with_keys(), cls.tree_unflatten,
                              (lambda node: node.tree_flatten()) if flatten is not None else None)
    return cls


def register_static(cls: type) -> type:
    """Make ``cls`` a node with no children (usable as a decorator), as JAX's: its values are part of the
    structure, never leaves, so transforms pass them through (they must be hashable)."""
    _pytree.register(cls, lambda node: ((), node), lambda node, _: node)
    return cls


def _keyed_children(node: Any) -> list[tuple[Any, Any]] | None:
    """``(key, child)`` for each child of ``node`` in leaf order, or None for a leaf."""
    if type(node) in _KEYED:
        return list(_KEYED[type(node)](node)[0])
    if type(node) in _pytree.REGISTRY:
        children, _ = _pytree._children(node)
        names = _pytree.REGISTRY[type(node)][2]
        return [(GetAttrKey(names[i]) if names else FlattenedIndexKey(i), c) for i, c in enumerate(children)]
    if isinstance(node, tuple) and hasattr(node, "_fields"):
        return [(GetAttrKey(name), c) for name, c in zip(node._fields, node)]
    if isinstance(node, (tuple, list)):
        return [(SequenceKey(i), c) for i, c in enumerate(node)]
    if isinstance(node, dict):
        return [(DictKey(k), node[k]) for k in _pytree.leaf_order(node)]
    return None


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                           ) -> tuple[list[tuple[tuple[Any, ...], Any]], PyTreeDef]:
    """``([(path, leaf), ...], treedef)``: ``tree_flatten``'s leaves, each with its path (a tuple of keys).

    Example:
        >>> from chainrule.tree_util import keystr, tree_flatten_with_path
        >>> pairs, _ = tree_flatten_with_path({"w": [1.0, 2.0], "b": None})
        >>> [(keystr(path), leaf) for path, leaf in pairs]
        [("['w'][0]", 1.0), ("['w'][1]", 2.0)]
    """
    return tree_leaves_with_path(tree, is_leaf), tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[tuple[tuple[Any, ...], Any]]:
    """``[(path, leaf), ...]`` in leaf order (``tree_flatten_with_path`` without the structure)."""
    found: list[tuple[tuple[Any, ...], Any]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), tree)]
    while stack:
        path, node = stack.pop()
        if is_leaf is not None and is_leaf(node):
            found.append((path, node))
            continue
        if node is None:
            continue
        children = _keyed_children(node)
        if children is None:
            found.append((path, node))
        else:
            stack.extend((path + (key,), child) for key, child in reversed(children))
    return found


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``tree_map`` where ``f`` gets each leaf's path first: ``f(path, leaf, *leaves_of_rest)``.

    Example:
        >>> from chainrule.tree_util import keystr, tree_map_with_path
        >>> params = {"dense": {"w": 2.0, "b": 1.0}, "out": {"w": 3.0, "b": 0.5}}
        >>> tree_map_with_path(lambda path, x: 0.0 if keystr(path).endswith("['b']") else x, params)
        {'dense': {'w': 2.0, 'b': 0.0}, 'out': {'w': 3.0, 'b': 0.0}}
    """
    paths = iter([path for path, _ in tree_leaves_with_path(tree, is_leaf)])
    return tree_map(lambda x, *xs: f(next(paths), x, *xs), tree, *rest, is_leaf=is_leaf)


def keystr(keys: tuple[Any, ...], *, simple: bool = False, separator: str = "") -> str:
    """A path as text: ``"['w'][0].bias"``; ``simple=True`` gives the bare keys joined by ``separator``."""
    if not simple:
        return separator.join(str(k) for k in keys)
    return separator.join(str(getattr(k, next(iter(k.__dataclass_fields__)))) for k in keys)


# -- Partial: a partial function that is a pytree (its bound arguments are children, the function static) ------
class Partial(functools.partial):
    """``functools.partial`` as a pytree, as JAX's: its bound arguments are the children, so a transform
    differentiates or batches through them, and a Partial can be passed to or returned from one.

    Example:
        >>> import chainrule as cr
        >>> from chainrule.tree_util import Partial
        >>> scale = Partial(lambda s, x: s * x, 3.0)
        >>> cr.grad(lambda p, x: p(x))(scale, 2.0).args
        (2.0,)
    """


_pytree.register(Partial, lambda p: ((p.args, p.keywords), p.func),
                 lambda func, children: Partial(func, *children[0], **children[1]))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any) -> Any:
    """A tree of structure ``outer`` whose leaves are trees of structure ``inner`` turned into a tree of structure
    ``inner`` whose leaves are trees of structure ``outer`` (JAX's ``tree_transpose``; ``inner_treedef`` None:
    read from the first subtree).

    Example:
        >>> from chainrule.tree_util import tree_structure, tree_transpose
        >>> per_example = [{"x": 1, "y": 2}, {"x": 3, "y": 4}]
        >>> tree_transpose(tree_structure([0, 0]), tree_structure({"x": 0, "y": 0}), per_example)
        {'x': [1, 3], 'y': [2, 4]}
    """
    subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(subtrees[0]) if subtrees else tree_structure(None)
    columns = [inner_treedef.flatten_up_to(sub) for sub in subtrees]
    rows = [tree_unflatten(outer_treedef, [column[k] for column in columns]) for k in range(inner_treedef.num_leaves)]
    return tree_unflatten(inner_treedef, rows)


def all_leaves(iterable: Any, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every item of ``iterable`` is a leaf (flattens to itself alone)."""
    for item in iterable:
        leaves = tree_leaves(item, is_leaf)
        if len(leaves) != 1 or leaves[0] is not item:
            return False
    return True
