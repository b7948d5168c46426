"""Writing an nn.functional result into its input, as PyTorch's in-place functions and ``inplace=True`` do.

``written_over(name, fn)`` is the function ``name`` (``"relu_"``): ``fn``'s result written into the Tensor it is
given, recorded in the graph as PyTorch records it (``ops/pytorch/in_place_methods.py``), or into a NumPy array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.device import as_array
from ...core.state import is_grad_enabled
from ...ops._define import raw
from ...ops.pytorch.in_place_methods import record, traced_operand
from ...tensor import Tensor


def written_over(name: str, fn: Any) -> Any:
    """PyTorch's in-place ``F.name``: ``fn``'s values written into the Tensor, where PyTorch allows it."""

    def inplace(input: Any, *args: Any, **kw: Any) -> Any:  # noqa: A002
        if not isinstance(input, Tensor):
            if isinstance(input, np.ndarray):
                input[...] = as_array(fn(input, *args, **kw))
                return input
            raise TypeError(f"{name}: writes in place into a Tensor or an array, got {type(input).__name__}; "
                            f"use {name[:-1]} for a new value")
        if input._requires_grad and is_grad_enabled():  # in the graph: recorded, as PyTorch records it
            return record(input, name, lambda old: fn(old, *args, **kw), traced_operand(args, kw))
        input._inplace_guard(name)
        input._data[...] = raw(fn(input._data, *args, **kw))
        input._bump_version()
        return input

    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = (f"In place: ``{name[:-1]}`` written into the Tensor (recorded in the graph, as in PyTorch; "
                       "see chainrule.ops.pytorch.in_place_methods).")
    return inplace
