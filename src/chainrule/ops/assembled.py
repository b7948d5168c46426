"""NumPy's ``block``, ``insert``, ``resize`` and ``choose``: arrays assembled from the entries of others, as one gather.

Each runs NumPy's own function on arrays of labels standing for the entries of its inputs, then gathers
the labelled entries from the inputs joined end to end. So NumPy's rules decide the result's shape and
order, broadcasting and every error, and the derivative is that of a gather: an entry placed several
times gets the sum of its gradients.

Example:
    >>> import numpy as np
    >>> import chainrule as cr
    >>> a = np.array([[1.0, 2.0]])
    >>> cr.grad(lambda a: np.block([[a, a], [a, 2 * a]]).sum())(a).tolist()
    [[5.0, 5.0]]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import shape as shape_ops
from ._define import raw, shape_of
from .declare import implements


def _gathered(pieces: list[Any], arrange: Any) -> Any:
    """``arrange(*labels)`` (NumPy's function on one label array per piece) filled with the pieces' entries."""
    labels, start = [], 0
    for piece in pieces:
        shape = shape_of(piece)
        size = math.prod(shape)
        labels.append(np.arange(start, start + size, dtype=np.intp).reshape(shape))
        start += size
    index = np.asarray(arrange(*labels))
    joined = shape_ops.concatenate([shape_ops.ravel(p) for p in pieces], axis=0)
    return shape_ops.take(joined, index)


def _leaves(nested: Any) -> list[Any]:
    if isinstance(nested, list):
        return [leaf for item in nested for leaf in _leaves(item)]
    return [nested]


def _rebuilt(nested: Any, leaves: Any) -> Any:
    if isinstance(nested, list):
        return [_rebuilt(item, leaves) for item in nested]
    return next(leaves)


@implements(np.block)
def block(arrays: Any) -> Any:
    """Nested lists of arrays joined: the innermost lists along the last axis, the next ones along the one
    before, and so on (NumPy's ``block``)."""
    pieces = _leaves(arrays)
    return _gathered(pieces, lambda *labels: np.block(_rebuilt(arrays, iter(labels))))


@implements(np.insert)
def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` inserted before the indices ``obj`` along ``axis`` (the flattened array when None); the values
    take ``arr``'s dtype, as NumPy's."""
    dtype = getattr(arr, "dtype", None)
    if dtype is not None and getattr(values, "dtype", dtype) != dtype:
        values = values.astype(dtype)
    elif dtype is not None and not hasattr(values, "dtype"):
        values = np.asarray(values, dtype=dtype)
    return _gathered([arr, values], lambda a, v: np.insert(a, raw(obj), v, axis=axis))


@implements(np.resize)
def resize(a: Any, new_shape: Any) -> Any:
    """``a``'s entries, repeated in order as often as needed, in the shape ``new_shape``."""
    return _gathered([a], lambda labels: np.resize(labels, raw(new_shape)))


@implements(np.choose)
def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
    """Entry by entry, the entry of the choice ``a`` names (all broadcast together; ``mode`` as NumPy's)."""
    if out is not None:
        raise TypeError("choose: the 'out' argument is not supported on Tensors (the result is a new Tensor)")
    return _gathered(list(choices), lambda *labels: np.choose(raw(a), labels, mode=mode))
