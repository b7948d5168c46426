"""PyTorch's ops that write a view's values back, or read overlapping windows: ``diagonal_scatter``,
``select_scatter``, ``slice_scatter`` (the input with one diagonal, slice or strided slice replaced by
``src``), ``unfold`` (sliding windows), as Tensor methods and ``chainrule.<name>`` functions (``unfold`` is a
method only: ``torch.nn.functional.unfold`` is another op).

Each is indexing and ``add_at``, so derivatives of every order in both modes come with them: ``src`` gets the
gradient at the positions it fills, the input everywhere else; an entry in several windows of ``unfold``
gets the sum of their gradients.

Example:
    >>> import chainrule as cr
    >>> cr.arange(5.0).unfold(0, 2, 2).tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    >>> cr.zeros(2, 2).diagonal_scatter(cr.ones(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.device import xp_of
from ...tensor import Tensor
from ..declare import tensor_method
from ..shape import strided_view
from .common import checked_axis, declared, index_along, operand_shape, overwrite_at


def _replaced(name: str, self: Tensor, position: tuple[Any, ...], src: Any) -> Any:
    want = np.shape(xp_of(self._data).empty(self.shape, dtype=bool)[position])
    if tuple(operand_shape(src)) != want:
        raise ValueError(f"{name}: src has shape {tuple(operand_shape(src))}; the part of the input it replaces has "
                         f"shape {want}")
    if isinstance(src, Tensor) and src.dtype != self.dtype:  # the result has self's dtype, as PyTorch's
        src = declared("astype")(src, self.dtype)
    return overwrite_at(self, position, src, f"{name}: repeated positions")


@tensor_method("select_scatter")
def select_scatter(self: Tensor, src: Any, dim: int, index: int) -> Any:
    """PyTorch's ``select_scatter``: the input with its slice ``index`` along ``dim`` (``select(dim, index)``)
    replaced by ``src``."""
    axis = checked_axis(self, dim, "select_scatter")
    if not -self.shape[axis] <= index < self.shape[axis]:
        raise IndexError(f"select_scatter: index {index} is out of range for dim {dim} of size {self.shape[axis]}")
    return _replaced("select_scatter", self, index_along(self.ndim, axis, index), src)


@tensor_method("slice_scatter")
def slice_scatter(self: Tensor, src: Any, dim: int = 0, start: int | None = None, end: int | None = None,
                  step: int = 1) -> Any:
    """PyTorch's ``slice_scatter``: the input with its slice ``start:end:step`` along ``dim`` replaced by ``src``."""
    axis = checked_axis(self, dim, "slice_scatter")
    if step <= 0:
        raise ValueError(f"slice_scatter: step must be positive, got {step}")
    return _replaced("slice_scatter", self, index_along(self.ndim, axis, slice(start, end, step)), src)


@tensor_method("diagonal_scatter")
def diagonal_scatter(self: Tensor, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    """PyTorch's ``diagonal_scatter``: the input with its diagonal ``diagonal(offset, dim1, dim2)`` replaced by
    ``src`` (shaped as that diagonal: the other dims, then the diagonal's entries)."""
    if self.ndim < 2:
        raise ValueError(f"diagonal_scatter: needs at least 2 dimensions, got shape {self.shape}")
    a1, a2 = checked_axis(self, dim1, "diagonal_scatter"), checked_axis(self, dim2, "diagonal_scatter")
    if a1 == a2:
        raise ValueError(f"diagonal_scatter: dim1 and dim2 must differ, got {dim1} and {dim2}")
    moved = declared("moveaxis")(self, (a1, a2), (-2, -1))
    n1, n2 = moved.shape[-2:]
    k = max(min(n1 + min(offset, 0), n2 - max(offset, 0)), 0)
    i = xp_of(self._data).arange(k)
    position = (Ellipsis, i + max(-offset, 0), i + max(offset, 0))
    return declared("moveaxis")(_replaced("diagonal_scatter", moved, position, src), (-2, -1), (a1, a2))


@tensor_method("unfold")
def unfold(self: Tensor, dimension: int, size: int, step: int) -> Any:
    """PyTorch's ``Tensor.unfold``: every window of ``size`` entries along ``dimension``, ``step`` apart: that
    dim becomes the number of windows, and a last dim of ``size`` holds each window."""
    if self.ndim == 0:  # PyTorch reads a 0-d Tensor as one entry, and gives a 1-D Tensor back
        return unfold(self.reshape((1,)), 0, size, step).reshape((size,))
    axis = checked_axis(self, dimension, "unfold")
    n = self.shape[axis]
    if step <= 0:
        raise ValueError(f"unfold: step must be positive, got {step}")
    if not 0 <= size <= n:
        raise ValueError(f"unfold: size {size} does not fit dimension {dimension} of size {n} (0 to {n})")
    xp = xp_of(self._data)
    windows = xp.arange(0, n - size + 1, step)[:, None] + xp.arange(size)[None, :]  # (count, size)
    picked = self[index_along(self.ndim, axis, windows)]  # (..., count, size, ...)
    out = declared("moveaxis")(picked, axis + 1, -1)

    def layout(s: tuple[int, ...]) -> tuple[tuple[int, ...], int]:  # a view of self's memory, as PyTorch's
        return s[:axis] + (s[axis] * step,) + s[axis + 1:] + (s[axis],), 0

    return strided_view(out, self, layout)


@tensor_method("as_strided")
def as_strided(self: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Any:
    """PyTorch's ``as_strided``: the entries at ``storage_offset + sum(i_k * stride_k)`` of the memory this tensor
    views (strides in entries; the offset is this tensor's own by default), in the shape ``size``. Differentiable
    when every such entry is one of this tensor's (a window over it, as ``unfold`` by hand); on the host a view of
    it, which a change in place reaches (refused where entries repeat, as PyTorch's)."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride) or any(n < 0 for n in size):
        raise ValueError(f"as_strided: size {size} and stride {stride} must be as long, with sizes >= 0")
    data = self._data
    steps = [s // data.itemsize for s in data.strides]
    origin = self.storage_offset()
    own = origin + sum(np.arange(n).reshape((-1,) + (1,) * (self.ndim - k - 1)) * s
                       for k, (n, s) in enumerate(zip(data.shape, steps))) + np.zeros(data.shape, dtype=np.int64)
    start = origin if storage_offset is None else int(storage_offset)
    want = (start + sum(np.arange(n).reshape((-1,) + (1,) * (len(size) - k - 1)) * s
                        for k, (n, s) in enumerate(zip(size, stride))) + np.zeros(size, dtype=np.int64)).ravel()
    order = np.argsort(own.ravel(), kind="stable")
    known = own.ravel()[order]
    at = np.minimum(np.searchsorted(known, want), max(known.size - 1, 0))
    if known.size and np.unique(known).size != known.size:
        raise NotImplementedError("as_strided: this tensor's entries overlap in memory (an expanded tensor); "
                                  "call it on a tensor that owns its entries (t.contiguous())")
    if want.size and (not known.size or (known[at] != want).any()):
        raise NotImplementedError(
            f"as_strided: size {size}, stride {stride} and offset {start} reach memory outside this tensor's "
            f"entries; chainrule differentiates windows over the tensor itself (call it on the base tensor)")
    out = declared("reshape")(self, (-1,))[xp_of(data).asarray(order[at].reshape(size))]
    if data.__class__ is not np.ndarray or not want.size:
        return out

    def layout(s: tuple[int, ...]) -> tuple[tuple[int, ...], int]:  # strides in bytes, from this tensor's start
        return tuple(k * data.itemsize for k in stride), (start - origin) * data.itemsize

    return strided_view(out, self, layout)  # (a change in place of repeated entries is refused, as PyTorch's)
