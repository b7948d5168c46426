"""PyTorch's writes at indices that combine or replace: ``scatter_reduce``, ``index_reduce``, ``index_copy``,
``masked_scatter`` (and their in-place ``_`` forms), as Tensor methods and ``chainrule.<name>`` functions.

Each is built from differentiable ops (``add_at``, ``where``, ``multiply``), so its derivatives, of every
order and in both modes, are theirs:

- ``"sum"`` and ``"mean"`` add the entries that land on one position (``"mean"`` divides by their count,
  ``self`` counted when ``include_self``);
- ``"prod"`` multiplies them, one factor per entry (the entries landing on one position are ranked, and the
  r-th of each position is written into the r-th factor), so a zero has its exact gradient, as PyTorch's;
- ``"amax"`` / ``"amin"`` share the gradient equally among the entries equal to the result, as PyTorch's.

With ``include_self=False`` the positions some entry lands on start from the entries alone (``self`` there
gets no gradient); the others keep ``self``.

Example:
    >>> import chainrule as cr
    >>> x = cr.zeros(3)
    >>> x.scatter_reduce(0, cr.tensor([0, 0, 2]), cr.tensor([1.0, 2.0, 5.0]), "amax", include_self=False).tolist()
    [2.0, 0.0, 5.0]
    >>> x.index_copy(0, cr.tensor([2]), cr.tensor([7.0])).tolist()
    [0.0, 0.0, 7.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.device import add_at as add_at_in_place
from ...core.device import index_on, xp_of
from ...core.state import no_grad
from ...tensor import Tensor
from ..declare import tensor_method
from ..numeric import add_at
from .common import as_array, check_range, checked_axis, declared, in_place, operand_shape, overwrite_at
from .indexing import _check_index, _index_array, _src_part, _zero_d_as_one

_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _flat_positions(idx: Any, axis: int) -> tuple[Any, ...]:
    """The position in ``self`` of each entry of ``idx`` (``idx`` along ``axis``, its own place elsewhere)."""
    xp = xp_of(idx)
    grids = [idx if d == axis else xp.arange(n).reshape((1,) * d + (n,) + (1,) * (idx.ndim - d - 1))
             for d, n in enumerate(idx.shape)]  # (made where idx is)
    return tuple(xp.broadcast_to(g, idx.shape).reshape(-1) for g in grids)


def _ranks(positions: tuple[Any, ...], shape: tuple[int, ...]) -> Any:
    """For each entry, how many entries before it (in some order) land on the same position: entries of one
    rank land on distinct positions, so each rank can be written at once."""
    xp = xp_of(positions[0])
    target = xp.ravel_multi_index(positions, shape) if positions[0].size else positions[0]
    order = xp.argsort(target)
    ordered = target[order]
    first = xp.searchsorted(ordered, ordered, side="left")  # where each entry's group starts, once sorted
    ranks = xp.empty_like(order)
    ranks[order] = xp.arange(ordered.size) - first
    return ranks


def _reduced(name: str, self: Tensor, axis: int, idx: Any, part: Any, reduce: str, include_self: bool) -> Any:
    """``self`` with the entries of ``part`` (shaped as ``idx``) combined by ``reduce`` into their positions."""
    xp = xp_of(self._data)
    positions = tuple(index_on(p, self._data) for p in _flat_positions(idx, axis))
    values = declared("ravel")(part) if isinstance(part, Tensor) or hasattr(part, "_data") else Tensor._wrap(
        xp.asarray(part, dtype=self.dtype).reshape(-1))
    hits = xp.zeros(self.shape, dtype=np.int64)
    add_at_in_place(hits, positions, 1)
    scattered = hits > 0
    if reduce in ("sum", "mean"):
        base = self if include_self else declared("where")(scattered, xp.zeros((), dtype=self.dtype), self)
        total = add_at(base, positions, values)
        if reduce == "sum":
            return total
        counts = xp.where(scattered, hits + int(include_self), 1).astype(self.dtype)
        if self.dtype.kind in "iub":
            return Tensor._wrap(xp.floor_divide(total._data, counts).astype(self.dtype))
        return declared("divide")(total, counts)
    ranks = _ranks(positions, self.shape)
    if reduce == "prod":
        out = self if include_self else declared("where")(scattered, xp.ones((), dtype=self.dtype), self)
        for r in range(int(ranks.max()) + 1 if ranks.size else 0):
            which = xp.nonzero(ranks == r)[0]
            factor = overwrite_at(Tensor._wrap(xp.ones(self.shape, dtype=self.dtype)),
                                  tuple(p[which] for p in positions), values[which], f"{name}: ranks overlap")
            out = declared("multiply")(out, factor)
        return out
    return _extreme(self, positions, values, ranks, scattered, include_self, reduce)


def _extreme(self: Tensor, positions: tuple[Any, ...], values: Any, ranks: Any, scattered: Any,
             include_self: bool, reduce: str) -> Any:
    """``amax`` / ``amin``: the result from the values; the gradient shared among the entries equal to it."""
    xp = xp_of(self._data)
    pick = xp.maximum if reduce == "amax" else xp.minimum
    src = as_array(values)
    # the result in the promoted dtype, as sum's and mean's (PyTorch refuses mixed dtypes): a source entry rounded
    # to self's dtype was no longer equal to the result, and lost its gradient
    dtype = xp.result_type(self._data, src)
    result = self._data.astype(dtype)
    if not include_self:  # a position some entry lands on starts from its rank-0 entry
        first = xp.nonzero(ranks == 0)[0]
        result[tuple(p[first] for p in positions)] = src[first]
    for r in range(int(not include_self), int(ranks.max()) + 1 if ranks.size else 0):
        which = xp.nonzero(ranks == r)[0]
        where = tuple(p[which] for p in positions)
        result[where] = pick(result[where], src[which])
    if dtype.kind not in "fc":  # integers: no gradient
        return Tensor._wrap(result)
    self_counts = (self._data == result) & (~scattered if not include_self else True)
    src_counts = src == result[positions]
    shares = self_counts.astype(dtype)
    add_at_in_place(shares, positions, src_counts.astype(dtype))
    weight = 1 / xp.maximum(shares, 1)
    zero = xp.zeros((), dtype=dtype)
    own = declared("where")(self_counts, declared("multiply")(self, weight), zero)
    theirs = declared("where")(src_counts, declared("multiply")(values, weight[positions]), zero)
    out = add_at(own, positions, theirs)
    # 1/3 + 1/3 + 1/3 may miss by an ulp: put back the exact value (a constant; the gradient stays shared)
    off = xp.where((shares > 1) & xp.isfinite(result), result - out._data, 0)
    return declared("add")(out, off.astype(dtype)) if bool(xp.any(off != 0)) else out


def _checked_reduce(name: str, reduce: str, allowed: tuple[str, ...]) -> None:
    if reduce not in allowed:
        raise ValueError(f"{name}: reduce must be one of {', '.join(map(repr, allowed))}, got {reduce!r}")


def scatter_reduce(self: Tensor, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True) -> Any:
    """PyTorch's ``scatter_reduce``: ``src[i][j]`` combined into ``self[index[i][j]][j]`` along ``dim`` by
    ``reduce`` (``"sum"``, ``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``); ``include_self=False`` leaves
    ``self`` out where some entry lands."""
    _checked_reduce("scatter_reduce", reduce, _SCATTER_REDUCTIONS)
    axis = checked_axis(self, dim, "scatter_reduce")
    idx, src, one = _zero_d_as_one(self, _index_array("scatter_reduce", index), src)
    _check_index("scatter_reduce", self, axis, idx, operand_shape(src) if hasattr(src, "shape") else None)
    part = _src_part(src, idx, self.dtype)
    return _reduced("scatter_reduce", self, axis, idx, part, reduce, include_self)


def index_reduce(self: Tensor, dim: int, index: Any, source: Any, reduce: str, *, include_self: bool = True) -> Any:
    """PyTorch's ``index_reduce``: the slices of ``source`` combined into ``self``'s slices ``index`` along
    ``dim`` by ``reduce`` (``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``)."""
    _checked_reduce("index_reduce", reduce, _INDEX_REDUCTIONS)
    axis = checked_axis(self, dim, "index_reduce")
    idx = _index_array("index_reduce", index)
    if idx.ndim > 1:
        raise ValueError(f"index_reduce: index must be 1-D, got shape {idx.shape}")
    idx = idx.reshape(-1)
    check_range("index_reduce", idx, axis, self.shape[axis] if self.ndim else 1)
    want = tuple(len(idx) if d == axis else n for d, n in enumerate(self.shape))
    if tuple(operand_shape(source)) != want:
        raise ValueError(f"index_reduce: source has shape {tuple(operand_shape(source))}; with {len(idx)} indices "
                         f"along dim {dim} of a Tensor of shape {self.shape} it must be {want}")
    full = xp_of(idx).broadcast_to(idx.reshape((-1,) + (1,) * (self.ndim - axis - 1)), want)
    return _reduced("index_reduce", self, axis, full, source, reduce, include_self)


def index_copy(self: Tensor, dim: int, index: Any, source: Any) -> Any:
    """PyTorch's ``index_copy``: ``self`` with its slices ``index`` along ``dim`` replaced by ``source``'s
    (the gradient goes to ``source`` there, to ``self`` elsewhere). Each index once: a repeat is refused."""
    axis = checked_axis(self, dim, "index_copy")
    if self.ndim == 0:  # PyTorch reads a 0-d Tensor (and a 0-d source) as one entry, and gives a 0-d back
        part = source.reshape((1,)) if hasattr(source, "reshape") else np.reshape(source, (1,))
        return index_copy(self.reshape((1,)), 0, np.reshape(as_array(index), -1), part).reshape(())
    idx = as_array(index)
    if idx.ndim != 1 or idx.dtype.kind not in "iu":
        raise ValueError(f"index_copy: index must be a 1-D integer array, got shape {idx.shape} dtype {idx.dtype}")
    check_range("index_copy", idx, axis, self.shape[axis])
    want = tuple(len(idx) if d == axis else n for d, n in enumerate(self.shape))
    if tuple(operand_shape(source)) != want:
        raise ValueError(f"index_copy: source has shape {tuple(operand_shape(source))}; with {len(idx)} indices "
                         f"along dim {dim} of a Tensor of shape {self.shape} it must be {want}")
    return overwrite_at(self, (slice(None),) * axis + (idx,), source,
                        "index_copy: index names some slices more than once, so the result would depend on the "
                        "order; make the indices unique")


def masked_scatter(self: Tensor, mask: Any, source: Any) -> Any:
    """PyTorch's ``masked_scatter``: ``self`` (broadcast with ``mask``) with the entries where ``mask`` holds
    replaced, in row-major order, by the first entries of ``source``."""
    m = as_array(mask)
    if m.dtype != bool:
        raise TypeError(f"masked_scatter: mask must be boolean, got dtype {m.dtype}")
    shape = np.broadcast_shapes(self.shape, m.shape)
    x = self if self.shape == shape else declared("broadcast_to")(self, shape)
    m = xp_of(x._data).broadcast_to(index_on(m, x._data), shape)
    where = xp_of(m).nonzero(m) if shape else ()
    n = int(where[0].size) if shape else int(bool(m))
    size = int(np.prod(operand_shape(source)))
    if size < n:
        raise ValueError(f"masked_scatter: the mask holds at {n} entries but source has only {size}; source needs "
                         "at least as many entries as the mask selects")
    flat = declared("ravel")(source) if hasattr(source, "shape") else np.ravel(source)
    if not shape:  # a 0-d Tensor
        return declared("where")(m, flat[0], x) if n else x
    return overwrite_at(x, where, flat[:n], "masked_scatter: repeated positions")


def _in_place_of(name: str, method: Callable[..., Any]) -> Callable[..., Tensor]:
    def on_values(values: np.ndarray, *args: Any, **kw: Any) -> np.ndarray:
        with no_grad():
            return as_array(method(Tensor._wrap(values), *args, **kw)._data)

    return in_place(f"{name}_", on_values)


for _name, _method in (("scatter_reduce", scatter_reduce), ("index_reduce", index_reduce),
                       ("index_copy", index_copy), ("masked_scatter", masked_scatter)):
    tensor_method(_name, _method)
    tensor_method(f"{_name}_", _in_place_of(_name, _method))
