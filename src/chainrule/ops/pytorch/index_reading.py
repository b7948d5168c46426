"""How PyTorch reads an index where NumPy reads it otherwise: an integer beside integer (or boolean) arrays.

``getitem`` (ops/shape.py) and ``t[...] = v`` (tensor/inplace.py, through ``INDEX_PARTS``) split such an index in
two steps on Tensors; NumPy values (inside ``grad`` of arrays, JAX's way) keep NumPy's reading.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...tensor import inplace as _tensor_inplace
from .dim_args import numpy_methods


def pytorch_index_parts(index: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """``(ints, rest)`` where PyTorch reads ``index`` otherwise than NumPy, else None.

    PyTorch takes integers as basic indices, applied before the integer (or boolean) arrays; NumPy counts them
    among the arrays. The two differ only when an integer is what keeps the indices apart: ``x[1, :, idx]`` is
    ``x[1][:, idx]`` in PyTorch (idx's axes in place), while NumPy puts idx's axes first.

    Example:
        >>> import numpy as np
        >>> pytorch_index_parts((1, slice(None), np.array([0, 2])))
        ((1, slice(None, None, None), slice(None, None, None)), (slice(None, None, None), array([0, 2])))
    """
    if type(index) is not tuple or len(index) < 3:  # (an integer and an array apart need a third index between)
        return None
    ints = [isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) for i in index]
    arrays = [not n and hasattr(i, "ndim") and hasattr(i, "dtype") and np.dtype(i.dtype).kind in "iub"
              for i, n in zip(index, ints)]
    if not any(ints) or not any(arrays):
        return None
    advanced = [k for k, (n, a) in enumerate(zip(ints, arrays)) if n or a]
    if advanced[-1] - advanced[0] + 1 == len(advanced):
        return None  # adjacent for NumPy too: both put the arrays' axes in place
    held = [k for k, a in enumerate(arrays) if a]
    if not all(ints[k] or arrays[k] for k in range(held[0], held[-1] + 1)):
        return None  # the arrays themselves apart: both put their axes first
    first: list[Any] = []
    for i, n, a in zip(index, ints, arrays):
        if n or i is Ellipsis:
            first.append(i)
        elif i is not None:  # (None adds an axis: it belongs to the second step)
            first.extend([slice(None)] * (i.ndim if a and np.dtype(i.dtype).kind == "b" else 1))
    return tuple(first), tuple(i for i, n in zip(index, ints) if not n)


_tensor_inplace.INDEX_PARTS["torch"] = lambda index: None if numpy_methods() else pytorch_index_parts(index)
