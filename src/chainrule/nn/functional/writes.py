"""Writing an nn.functional result into its input, as PyTorch's in-place functions and ``inplace=True`` do.

``written_over(name, fn)`` is the function ``name`` (``"relu_"``): ``fn``'s result written into the Tensor it is
given by the rule every in-place method follows (``ops/pytorch/in_place_methods.in_place_by``: recorded in the
graph as PyTorch records it), or into a NumPy array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.device import as_array
from ...ops.pytorch.in_place_methods import in_place_by
from ...tensor import Tensor


def written_over(name: str, fn: Any) -> Any:
    """PyTorch's in-place ``F.name``: ``fn``'s values written into the Tensor (or array), where PyTorch allows it."""
    method = in_place_by(name, fn)

    def inplace(input: Any, *args: Any, **kw: Any) -> Any:  # noqa: A002
        if isinstance(input, Tensor):
            return method(input, *args, **kw)
        if isinstance(input, np.ndarray):
            input[...] = as_array(fn(input, *args, **kw))
            return input
        raise TypeError(f"{name}: writes in place into a Tensor or an array, got {type(input).__name__}; "
                        f"use {name[:-1]} for a new value")

    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = (f"In place: ``{name[:-1]}`` written into the Tensor (recorded in the graph, as in PyTorch; "
                       "see chainrule.ops.pytorch.in_place_methods).")
    return inplace
