"""JAX's ``jax.flatten_util.ravel_pytree``: a pytree of arrays as one vector, and the function that rebuilds it.

Example:
    >>> import numpy as np
    >>> from chainrule.flatten_util import ravel_pytree
    >>> flat, unravel = ravel_pytree({"w": np.ones((2, 2)), "b": np.zeros(2)})
    >>> flat.tolist(), unravel(flat * 2)["w"].tolist()
    ([0.0, 0.0, 1.0, 1.0, 1.0, 1.0], [[2.0, 2.0], [2.0, 2.0]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import numpy as cnp
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``(flat, unravel)``: the leaves raveled and joined in leaf order (their common dtype), and the function that
    cuts a vector of that length back into the pytree, each leaf in its shape and dtype (differentiable)."""
    leaves, structure = tree_flatten(pytree)
    shapes = [np.shape(leaf) for leaf in leaves]
    dtypes = [getattr(leaf, "dtype", None) or np.asarray(leaf).dtype for leaf in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    flat = cnp.concatenate([cnp.ravel(leaf) for leaf in leaves]) if leaves else np.zeros(0)
    ends = np.cumsum(sizes)

    def unravel(vector: Any) -> Any:
        if np.shape(vector) != (int(ends[-1]) if sizes else 0,):
            raise ValueError(f"ravel_pytree's unravel: expected a vector of {int(ends[-1]) if sizes else 0} entries, "
                             f"got shape {np.shape(vector)}")
        parts = [cnp.reshape(vector[end - size:end], shape).astype(dtype)
                 for end, size, shape, dtype in zip(ends, sizes, shapes, dtypes)]
        return tree_unflatten(structure, parts)

    return flat, unravel
