"""``chainrule.max(t, 1)`` and ``chainrule.min(t, 1)`` read as ``torch.max(t, 1)``: a ``(values, indices)`` pair.

The PyTorch tutorials write ``_, predicted = torch.max(outputs, 1)``; NumPy's reading of the same call
(the values along axis 1) would unpack a batch of two silently into the wrong thing. So, given a Tensor,
a dim (positional or ``dim=``) gives PyTorch's pair and another Tensor the elementwise extreme, as the
methods ``t.max(1)`` and ``t.max(other)`` do. ``axis=``, NumPy arrays, ``numpy.max`` / ``chainrule.numpy.max``
and functions under a transform given NumPy values keep NumPy's meaning (the values).

Example:
    >>> import chainrule as cr
    >>> values, indices = cr.max(cr.Tensor([[1.0, 3.0], [4.0, 2.0]]), 1)
    >>> indices
    Tensor([1, 0])
    >>> cr.max(cr.Tensor([[1.0, 3.0], [4.0, 2.0]]), axis=1)
    Tensor([3., 4.])
"""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import reductions
from .dim_args import numpy_methods


def _pytorch_call(x: Any, args: tuple[Any, ...], kw: dict[str, Any]) -> bool:
    return isinstance(x, Tensor) and not numpy_methods() and (bool(args) or "dim" in kw)


def max(x: Any, *args: Any, **kw: Any) -> Any:  # noqa: A001
    """NumPy's ``max`` (``axis=``), or PyTorch's ``torch.max(t, dim)`` pair / ``torch.max(t, other)`` on a Tensor."""
    if _pytorch_call(x, args, kw):
        return x.max(*args, **kw)
    return reductions.max(x, *args, **kw)


def min(x: Any, *args: Any, **kw: Any) -> Any:  # noqa: A001
    """NumPy's ``min`` (``axis=``), or PyTorch's ``torch.min(t, dim)`` pair / ``torch.min(t, other)`` on a Tensor."""
    if _pytorch_call(x, args, kw):
        return x.min(*args, **kw)
    return reductions.min(x, *args, **kw)
