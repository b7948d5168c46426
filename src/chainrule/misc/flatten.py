"""HIPS autograd's ``autograd.misc.flatten``: ``flatten(value) -> (vector, unflatten)`` for a pytree of arrays and
numbers (JAX's ``ravel_pytree``; dicts in sorted-key order).

Example:
    >>> import numpy as np
    >>> from chainrule.misc.flatten import flatten
    >>> flat, unflatten = flatten({"b": np.zeros(2), "w": np.ones((2, 2))})
    >>> flat.tolist(), unflatten(flat + 1)["b"].tolist()
    ([0.0, 0.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..flatten_util import ravel_pytree

__all__ = ["flatten"]


def flatten(value: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``(vector, unflatten)``: the leaves of ``value`` raveled into one vector, and the function rebuilding it."""
    return ravel_pytree(value)
