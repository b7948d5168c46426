"""``chainrule.tree``: JAX's ``jax.tree`` names for the pytree helpers of :mod:`chainrule.tree_util`.

``tree.map`` is ``tree_util.tree_map``, ``tree.leaves`` is ``tree_util.tree_leaves``, and so on: the spelling
current JAX code uses (``jax.tree.map(lambda p, g: p - lr * g, params, grads)``).

Example:
    >>> import chainrule as cr
    >>> cr.tree.map(lambda p, g: p - 0.1 * g, {"w": 1.0, "b": (2.0, None)}, {"w": 10.0, "b": (1.0, None)})
    {'w': 0.0, 'b': (1.9, None)}
    >>> cr.tree.leaves({"w": 1.0, "b": (2.0, None)})  # sorted keys: "b" first
    [2.0, 1.0]
"""

from __future__ import annotations

from .tree_util import tree_all as all  # noqa: A004  (JAX's names shadow builtins here, as in jax.tree)
from .tree_util import tree_flatten as flatten
from .tree_util import tree_flatten_with_path as flatten_with_path
from .tree_util import tree_leaves as leaves
from .tree_util import tree_leaves_with_path as leaves_with_path
from .tree_util import tree_map as map  # noqa: A004
from .tree_util import tree_map_with_path as map_with_path
from .tree_util import tree_reduce as reduce
from .tree_util import tree_structure as structure
from .tree_util import tree_transpose as transpose
from .tree_util import tree_unflatten as unflatten

__all__ = ["all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map", "map_with_path", "reduce",
           "structure", "transpose", "unflatten"]
