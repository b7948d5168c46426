"""PyTorch's selecting methods: ``amax``, ``topk``, ``kthvalue``, ``median(dim)``, ``mode``, ``gather``,
``scatter``, ``masked_select``, ``narrow``, ``split``, ``chunk``, ``unbind``, ..."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...autodiff.batch_levels import is_batched
from ...core.device import DeviceError, is_off_host, of
from ...tensor import Tensor
from .. import tie_order
from .._define import literal_on, raw
from ..declare import tensor_method
from ..numeric import add_at
from .common import (
    also_method,
    as_array,
    check_range,
    checked_axis,
    declared,
    index_along,
    operand_shape,
    overwrite_at,
    values_of,
)
from .dim_args import ValuesIndices, as_scalar, scalar_along
from .methods import stable_order


# -- reductions ----------------------------------------------------------------------------------
def _extreme(name: str, fn_name: str) -> Callable[..., Any]:
    def method(self: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
        if scalar_along(self, name, dim):
            return as_scalar(method(self.reshape((1,)), 0))
        axis = tuple(dim) if isinstance(dim, (tuple, list)) else dim
        if axis == ():
            axis = None  # PyTorch's dim=() reduces every dimension
        return declared(fn_name)(self, axis=axis, keepdims=keepdim)

    method.__doc__ = (f"PyTorch's ``{name}``: the {fn_name}imum over ``dim`` (all by default); the gradient is "
                      "shared equally among tied entries, as PyTorch's.")
    return method


also_method("max", "amax", _extreme("amax", "max"))
also_method("min", "amin", _extreme("amin", "min"))


def _picked(self: Tensor, idx: np.ndarray, axis: int, keepdim: bool) -> ValuesIndices:
    """The entries at ``idx`` (keepdims-shaped) along ``axis``: the gradient goes to exactly those entries."""
    values = declared("take_along_axis")(self, idx, axis)
    if not keepdim:
        values = declared("squeeze")(values, axis)
        idx = np.squeeze(idx, axis=axis)
    return ValuesIndices(values, Tensor._wrap(as_array(idx, dtype=np.int64)))


def _scalar_like(self: Tensor) -> tuple[Tensor, bool]:
    return (declared("reshape")(self, (1,)), True) if self.ndim == 0 else (self, False)


def _tied_rows(data: np.ndarray, axis: int, order: np.ndarray, upto: int) -> tuple[np.ndarray, np.ndarray]:
    """The values as rows (``axis`` last), and which rows have two equal entries among the first ``upto + 1``
    in sorted ``order`` (NaN rows left out: their order is the stable one)."""
    rows = np.moveaxis(data, axis, -1).reshape(-1, data.shape[axis])
    ranked = np.take_along_axis(rows, np.moveaxis(order, axis, -1).reshape(rows.shape), -1)[:, : upto + 1]
    tied = (ranked[:, 1:] == ranked[:, :-1]).any(axis=1) & ~np.isnan(rows).any(axis=1)
    return rows, tied


def _rows_back(picked: np.ndarray, data: np.ndarray, axis: int) -> np.ndarray:
    """Per-row picks (``rows x m``) back to the Tensor's layout, ``m`` along ``axis``."""
    moved_shape = np.moveaxis(data, axis, -1).shape[:-1] + (picked.shape[1],)
    return np.moveaxis(picked.reshape(moved_shape), -1, axis)


def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> ValuesIndices:  # noqa: A002
    """PyTorch's ``topk``: the ``k`` largest (or smallest) entries along ``dim`` and their indices; each value's
    gradient goes to its index. Among equal entries the one PyTorch's CPU ``topk`` picks wins (its sort is not
    stable: ``ops/tie_order.py`` replays it for rows with ties)."""
    values_of(self, "topk")
    x, scalar = _scalar_like(self)
    axis = checked_axis(x, dim, "topk")
    if not 0 <= k <= x.shape[axis]:
        raise ValueError(f"topk: k={k} is out of range for dim {dim} of size {x.shape[axis]}")
    data = as_array(raw(x))
    order = stable_order(data, axis, largest)
    idx = order[(slice(None),) * axis + (slice(0, k),)]
    # (on a device, equal entries keep the stable order: PyTorch's own CUDA order differs from its CPU one)
    if k > 0 and data.size and not is_off_host(data):
        rows, tied = _tied_rows(data, axis, order, k)
        replay = tie_order.rows_to_replay(tied, data.shape[axis])
        if replay.size:
            picked = np.moveaxis(idx, axis, -1).reshape(-1, k).copy()
            for r in replay:
                picked[r] = tie_order.topk_row(rows[r], k, largest)
            idx = _rows_back(picked, data, axis)
    out = _picked(x, idx, axis, True)
    return ValuesIndices(*(declared("reshape")(v, ()) for v in out)) if scalar else out


def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """PyTorch's ``kthvalue``: the ``k``-th smallest entry (1-based) along ``dim`` and its index (among equal
    entries, the one PyTorch's CPU quickselect picks, replayed by ``ops/tie_order.py``)."""
    values_of(self, "kthvalue")
    x, scalar = _scalar_like(self)
    axis = checked_axis(x, dim, "kthvalue")
    if not 1 <= k <= x.shape[axis]:
        raise ValueError(f"kthvalue: k={k} is out of range for dim {dim} of size {x.shape[axis]} (k counts from 1)")
    data = as_array(raw(x))
    order = stable_order(data, axis, False)
    idx = order[(slice(None),) * axis + (slice(k - 1, k),)]
    if is_off_host(data):  # equal entries keep the stable order there (PyTorch's CUDA order differs from its CPU one)
        return _picked(x, idx, axis, keepdim and not scalar)
    rows = np.moveaxis(data, axis, -1).reshape(-1, data.shape[axis])
    kth = np.moveaxis(np.take_along_axis(data, idx, axis), axis, -1).reshape(-1, 1)
    tied = ((rows == kth).sum(axis=1) > 1) & ~np.isnan(rows).any(axis=1)
    replay = tie_order.rows_to_replay(tied, data.shape[axis])
    if replay.size:  # which of the equal entries PyTorch's quickselect leaves at k: replayed
        picked = np.moveaxis(idx, axis, -1).reshape(-1, 1).copy()
        for r in replay:
            picked[r, 0] = tie_order.kthvalue_row(rows[r], k)
        idx = _rows_back(picked, data, axis)
    return _picked(x, idx, axis, keepdim and not scalar)


def median(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """PyTorch's ``median``: the lower median (an entry, not the mean of the middle two as ``numpy.median``).

    Without ``dim``: the value, its gradient shared among the entries equal to it; with ``dim``:
    ``(values, indices)``, the gradient to the index. ``chainrule.median(t)`` of a Tensor is this one (as
    ``torch.median``); with ``axis=`` (or ``numpy.median``, ``chainrule.numpy.median``) it is NumPy's.
    """
    values_of(self, "median")
    if dim is None:
        flat = declared("ravel")(self)
        if flat.shape[0] == 0:
            raise ValueError("median: the Tensor is empty")
        order = np.argsort(raw(flat), kind="stable")  # raw: a jit trace checks the values read
        middle = int(order[(flat.shape[0] - 1) // 2])
        if flat.dtype.kind in "biu":
            return flat[middle].clone()  # the entry itself, in its dtype, as PyTorch's (a new Tensor, not a view)
        value = flat._data[middle]
        tied = (flat._data == value).astype(flat.dtype)
        total = declared("sum")(declared("multiply")(flat, tied))
        return declared("divide")(total, tied.sum())  # = value; d/dx = tied / count
    x, scalar = _scalar_like(self)
    axis = checked_axis(x, dim, "median")
    idx = np.take(stable_order(raw(x), axis, False), [(x.shape[axis] - 1) // 2], axis=axis)
    return _picked(x, idx, axis, keepdim and not scalar)


def nanmedian(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """PyTorch's ``nanmedian``: :func:`median` of the entries that are not NaN (NaN where there are none)."""
    values_of(self, "nanmedian")
    if dim is None:
        flat = declared("ravel")(self)
        if flat.shape[0] == 0:
            raise ValueError("nanmedian: the Tensor is empty")
        data = raw(flat)
        present = data[~np.isnan(data)]
        if present.size == 0:
            return declared("reshape")(flat[:1], ())  # NaN, as PyTorch's
        value = np.sort(present, kind="stable")[(present.size - 1) // 2]
        return declared("mean")(flat[np.flatnonzero(data == value)])  # = value; the gradient shared by its ties
    x, scalar = _scalar_like(self)
    axis = checked_axis(x, dim, "nanmedian")
    data = raw(x)
    counts = (~np.isnan(data)).sum(axis=axis, keepdims=True)
    order = stable_order(data, axis, False)  # NaN last
    idx = np.take_along_axis(order, np.maximum(counts - 1, 0) // 2, axis=axis)
    return _picked(x, idx, axis, keepdim and not scalar)


def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """PyTorch's ``mode``: the most frequent entry along ``dim`` (the smallest among equally frequent ones)
    and the index of its last occurrence; the gradient goes to that index."""
    values_of(self, "mode")
    x, scalar = _scalar_like(self)
    axis = checked_axis(x, dim, "mode")
    if is_off_host(raw(x)):
        raise DeviceError(f"mode: computes on the host (a count per row) and got values on the device "
                          f"{of(raw(x)).name!r}; pass t.cpu() (and move the result back with .to(device))")
    moved = np.moveaxis(raw(x), axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    best = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        values, counts = np.unique(row, return_counts=True)  # sorted values: argmax picks the smallest mode
        best[r] = np.flatnonzero(row == values[np.argmax(counts)])[-1]
    idx = np.expand_dims(best.reshape(moved.shape[:-1]), axis)
    return _picked(x, idx, axis, keepdim and not scalar)


also_method("take_along_axis", "topk", topk)
also_method("take_along_axis", "kthvalue", kthvalue)
also_method("take_along_axis", "median", median)
also_method("take_along_axis", "nanmedian", nanmedian)
also_method("take_along_axis", "mode", mode)


# -- indexing: gather, scatter, select --------------------------------------------------------------
def _index_array(name: str, index: Any) -> np.ndarray:
    idx = as_array(raw(index))  # (raw: a jit trace guards the values it reads: a replay with others traces again)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{name}: index must hold integers, got dtype {idx.dtype}")
    return idx


def _zero_d_as_one(self: Tensor, idx: np.ndarray, src: Any = None) -> tuple[np.ndarray, Any, bool]:
    """PyTorch reads a 0-d index (and a 0-d src) into a 1-D Tensor as one entry: ``zeros(10).scatter_(0,
    tensor(y), value=1)`` is the data tutorial's one-hot label. Says whether it did."""
    if idx.ndim != 0 or self.ndim != 1:
        return idx, src, False
    if isinstance(src, Tensor) and src.ndim == 0:
        src = src.reshape((1,))
    return idx.reshape(1), src, True


def _check_index(name: str, self: Tensor, axis: int, idx: np.ndarray, other: tuple[int, ...] | None = None) -> None:
    if idx.ndim != max(self.ndim, 1):
        raise ValueError(f"{name}: index has {idx.ndim} dimensions, the Tensor {self.ndim}; they must match")
    for d, n in enumerate(idx.shape):
        if d != axis and n > self.shape[d] or other is not None and n > other[d]:
            raise ValueError(f"{name}: index shape {idx.shape} is larger than {self.shape} (or src's) at dim {d}")
    check_range(name, _all_values(idx), axis, self.shape[axis])



def _batched_index(name: str, index: Any) -> Any:
    """A batched index (inside vmap: one example's, its batch held whole) kept as it is for ``take_along_axis``,
    which batches it; its dtype is checked here and its values, all examples at once, by ``_check_index``."""
    kind = np.dtype(index.dtype).kind
    if kind not in "iu":
        raise TypeError(f"{name}: index must hold integers, got dtype {np.dtype(index.dtype)}")
    return index


def _all_values(idx: Any) -> np.ndarray:
    """The values of an index, every example of a batched one (inside vmap) together: a range check only compares
    each entry with a size, so it reads them all at once without mixing the examples."""
    while is_batched(idx):
        idx = idx.value
    return as_array(raw(idx))


def gather(self: Tensor, dim: int, index: Any) -> Any:
    """PyTorch's ``gather``: ``out[i][j] = self[index[i][j]][j]`` along ``dim`` (``index`` may be smaller than
    ``self`` in the other dims); repeated indices add their gradients. Under ``vmap`` the index may be batched
    (``torch.func.vmap(lambda x, i: x.gather(0, i))``), ``self`` batched or not."""
    axis = checked_axis(self, dim, "gather")
    take = _batched_index if is_batched(index) else _index_array
    if self.ndim == 0:  # PyTorch reads a 0-d Tensor as one entry: the result has the index's shape
        idx = take("gather", index)
        return gather(self.reshape((1,)), 0, idx.reshape((-1,))).reshape(idx.shape)
    idx, _, one = _zero_d_as_one(self, take("gather", index))
    _check_index("gather", self, axis, idx)
    corner = tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(idx.shape))
    out = declared("take_along_axis")(self[corner], idx, axis)
    return out.reshape(()) if one else out


def _positions(idx: np.ndarray, axis: int) -> tuple[np.ndarray, ...]:
    grid = list(np.indices(idx.shape, sparse=True))
    grid[axis] = idx
    return tuple(grid)


def _src_part(src: Any, idx: np.ndarray, dtype: Any) -> Any:
    if isinstance(src, Tensor):
        return src[tuple(slice(0, n) for n in idx.shape)]
    return np.broadcast_to(literal_on(idx, src, dtype=dtype), idx.shape)  # (a number: where the index is)


def scatter_add(self: Tensor, dim: int, index: Any, src: Any) -> Any:
    """PyTorch's ``scatter_add``: ``self`` with ``src[i][j]`` added at ``[index[i][j]][j]`` along ``dim``;
    repeated indices add up."""
    axis = checked_axis(self, dim, "scatter_add")
    idx, src, _ = _zero_d_as_one(self, _index_array("scatter_add", index), src)
    _check_index("scatter_add", self, axis, idx, operand_shape(src) if isinstance(src, Tensor) else None)
    if idx.size == 0:
        return declared("copy")(self)
    return add_at(self, _positions(idx, axis), _src_part(src, idx, self.dtype))



def scatter(self: Tensor, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: Any = None) -> Any:
    """PyTorch's ``scatter``: ``self`` with ``src`` (a Tensor, or ``value``) written at ``index`` along ``dim``.

    Repeated positions are refused (PyTorch leaves which write wins unspecified); ``reduce="add"`` and
    ``"multiply"`` (PyTorch's older spelling) are ``scatter_add`` and ``scatter_reduce(..., "prod")``.
    """
    if (src is None) == (value is None):
        raise TypeError("scatter: pass src (a Tensor or number) or value=, one of them")
    src = value if src is None else src
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise ValueError(f"scatter: reduce must be 'add' or 'multiply' (as PyTorch's), got {reduce!r}; "
                             "scatter_reduce takes 'sum', 'prod', 'mean', 'amax' and 'amin'")
        idx = _index_array("scatter", index)
        part = _src_part(src, idx, self.dtype) if isinstance(src, Tensor) else np.broadcast_to(
            np.asarray(src, dtype=self.dtype), idx.shape)
        if reduce == "add":
            return scatter_add(self, dim, idx, part)
        return self.scatter_reduce(dim, idx, part if isinstance(part, Tensor) else Tensor._wrap(part), "prod")
    axis = checked_axis(self, dim, "scatter")
    idx, src, _ = _zero_d_as_one(self, _index_array("scatter", index), src)
    _check_index("scatter", self, axis, idx, operand_shape(src) if isinstance(src, Tensor) else None)
    return overwrite_at(self, _positions(idx, axis), _src_part(src, idx, self.dtype),
                        "scatter: index writes some positions more than once, so the result would depend on the "
                        "order; make the indices unique along dim, or use scatter_add to add them")


def take_along_dim(self: Tensor, indices: Any, dim: int | None = None) -> Any:
    """PyTorch's ``take_along_dim``: NumPy's ``take_along_axis`` (of the flattened Tensor when ``dim`` is None)."""
    if dim is None:
        return declared("take_along_axis")(declared("ravel")(self), np.ravel(as_array(raw(indices))), 0)
    idx = _index_array("take_along_dim", indices)
    axis = checked_axis(self, dim, "take_along_dim")
    check_range("take_along_dim", idx, axis, self.shape[axis], wraps=True)  # negative indices count from the end
    return declared("take_along_axis")(self, idx, axis)


def masked_select(self: Tensor, mask: Any) -> Any:
    """PyTorch's ``masked_select``: the entries where ``mask`` holds (both broadcast), as a 1-D Tensor."""
    m = as_array(raw(mask))
    if m.dtype != bool:
        raise TypeError(f"masked_select: mask must be boolean, got dtype {m.dtype}")
    shape = np.broadcast_shapes(self.shape, m.shape)
    x = self if self.shape == shape else declared("broadcast_to")(self, shape)
    return declared("extract")(np.broadcast_to(m, shape), x)


also_method("take_along_axis", "gather", gather)
also_method("take_along_axis", "take_along_dim", take_along_dim)
also_method("extract", "masked_select", masked_select)
def where(self: Tensor, condition: Any, other: Any) -> Any:
    """PyTorch's ``t.where(condition, other)``: ``where(condition, t, other)``; the condition must be boolean, as
    PyTorch's (``cond.where(x, y)``, tinygrad's order, would otherwise pick by the truth of ``x``)."""
    kind = np.asarray(raw(condition)).dtype.kind if not hasattr(condition, "dtype") else np.dtype(condition.dtype).kind
    if kind != "b":
        raise TypeError(f"Tensor.where: the condition must be boolean (t.where(condition, other) is "
                        f"where(condition, t, other), as PyTorch's), got {type(condition).__name__} of dtype kind "
                        f"{kind!r}; for where(cond, x, y) write cr.where(cond, x, y), or compare (x > 0) first")
    return declared("where")(condition, self, other)


also_method("where", "where", where)
tensor_method("scatter_add", scatter_add)
tensor_method("scatter", scatter)


@tensor_method("narrow")
def narrow(self: Tensor, dim: int, start: int, length: int) -> Any:
    """PyTorch's ``narrow``: ``length`` entries from ``start`` along ``dim``."""
    axis = checked_axis(self, dim, "narrow")
    n = self.shape[axis]
    begin = start + n if start < 0 else start
    if not (0 <= begin <= n and 0 <= length and begin + length <= n):
        raise IndexError(f"narrow: start {start} and length {length} do not fit dim {dim} of size {n}")
    return self[index_along(self.ndim, axis, slice(begin, begin + length))]


@tensor_method("select")
def select_(self: Tensor, dim: int, index: int) -> Any:
    """PyTorch's ``select``: the slice at ``index`` along ``dim`` (that dim removed)."""
    axis = checked_axis(self, dim, "select")
    if not -self.shape[axis] <= index < self.shape[axis]:
        raise IndexError(f"select: index {index} is out of range for dim {dim} of size {self.shape[axis]}")
    return self[index_along(self.ndim, axis, index)]


@tensor_method("split")
def split_(self: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Any, ...]:
    """PyTorch's ``split``: pieces of ``split_size`` entries along ``dim`` (the last may be smaller), or of the
    sizes listed (they must add up to the dim's size). ``chainrule.split`` is NumPy's (split points)."""
    axis = checked_axis(self, dim, "split")
    n = self.shape[axis]
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int(split_size_or_sections)
        if size <= 0:
            raise ValueError(f"split: split_size must be positive, got {size}")
        sizes = [min(size, n - s) for s in range(0, n, size)] or [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise ValueError(f"split: sizes {sizes} add up to {sum(sizes)}, not to the size {n} of dim {dim}")
    starts = np.cumsum([0, *sizes[:-1]])
    return tuple(self[index_along(self.ndim, axis, slice(s, s + k))] for s, k in zip(starts, sizes, strict=True))


@tensor_method("chunk")
def chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple[Any, ...]:
    """PyTorch's ``chunk``: pieces of ``ceil(size / chunks)`` entries along ``dim`` (fewer pieces if they run out)."""
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    n = self.shape[checked_axis(self, dim, "chunk")]
    return split_(self, max(math.ceil(n / chunks), 1), dim) if n else split_(self, [0] * chunks, dim)


@tensor_method("unbind")
def unbind(self: Tensor, dim: int = 0) -> tuple[Any, ...]:
    """PyTorch's ``unbind``: the slices along ``dim``, as a tuple."""
    axis = checked_axis(self, dim, "unbind")
    return tuple(self[index_along(self.ndim, axis, i)] for i in range(self.shape[axis]))


@tensor_method("unflatten")
def unflatten(self: Tensor, dim: int, sizes: Any) -> Any:
    """PyTorch's ``unflatten``: dim ``dim`` split into ``sizes`` (one may be -1)."""
    axis = checked_axis(self, dim, "unflatten")
    return declared("reshape")(self, self.shape[:axis] + tuple(sizes) + self.shape[axis + 1:])


# -- index and value queries (no gradient: integer indices, or values picked without a rule) ---------------
@tensor_method("unique")
def unique(self: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: Any = None) -> Any:
    """PyTorch's ``unique``: the distinct values in increasing order (no gradient, as PyTorch has none), with
    the inverse indices and counts when asked; ``dim`` takes distinct slices along it."""
    axis = None if dim is None else checked_axis(self, dim, "unique")
    found = np.unique(values_of(self, "unique"), return_inverse=True, return_counts=True, axis=axis)
    values, inverse, counts = found
    if axis is None:
        inverse = inverse.reshape(self.shape)
    out = [Tensor._wrap(values)]
    if return_inverse:
        out.append(Tensor._wrap(inverse.astype(np.int64)))
    if return_counts:
        out.append(Tensor._wrap(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


@tensor_method("argwhere")
def argwhere(self: Tensor) -> Any:
    """PyTorch's ``argwhere``: the indices of the non-zero entries, one row each (shape ``(n, ndim)``)."""
    return Tensor._wrap(np.argwhere(values_of(self, "argwhere")).astype(np.int64))
