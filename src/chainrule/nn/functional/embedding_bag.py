"""``torch.nn.functional.embedding_bag``: the sums, means or maxima of bags of embedding rows, without making the
per-index rows a separate result.

The bags are read on the host from the (integer, non-differentiable) indices and offsets: a sum or a mean is one
product of a (bags, indices) weight matrix with the picked rows, a max the first largest of each bag's rows per
feature (PyTorch's choice at ties). The matrix and the masks are sent where the table is.

Example:
    >>> import numpy as np
    >>> import chainrule.nn.functional as F
    >>> F.embedding_bag(np.array([0, 1, 2, 2]), np.eye(3), np.array([0, 2]), mode="sum").tolist()
    [[1.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.device import as_array, is_off_host, of
from ...ops import elementwise as ew
from ...ops._define import on_device_of, raw, xp_where
from ...ops.contraction import matmul
from ...ops.reductions import sum as reduce_sum

__all__ = ["embedding_bag"]


def _host(x: Any) -> np.ndarray:
    a = as_array(raw(x))
    return of(a).to_host(a) if is_off_host(a) else a


def _bags(name: str, idx: np.ndarray, offsets: Any, include_last_offset: bool) -> tuple[np.ndarray, list]:
    """The flat indices and, per bag, the positions in them."""
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{name}: offsets must be None for a 2-d input (each row is a bag), got offsets")
        b, n = idx.shape
        return idx.reshape(-1), [list(range(i * n, (i + 1) * n)) for i in range(b)]
    if idx.ndim != 1 or offsets is None:
        raise ValueError(f"{name}: expects a 2-d input (bags as rows), or a 1-d input with offsets; got input of "
                         f"shape {idx.shape}{' and no offsets' if offsets is None else ''}")
    off = _host(offsets).astype(np.int64).reshape(-1)
    if off.size == 0 or off[0] != 0 or np.any(np.diff(off) < 0) or off[-1] > idx.size:
        raise ValueError(f"{name}: offsets must start at 0, not decrease and stay within the input's {idx.size} "
                         f"indices, got {off.tolist()}")
    ends = list(off[1:]) + ([] if include_last_offset else [idx.size])
    starts = list(off[: len(ends)])
    return idx, [list(range(s, e)) for s, e in zip(starts, ends)]


def embedding_bag(input: Any, weight: Any, offsets: Any = None, max_norm: float | None = None,  # noqa: A002
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Any = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Any:
    """Per bag, the ``"sum"``, ``"mean"`` or ``"max"`` of the rows of ``weight`` its indices pick; bags are the
    rows of a 2-d ``input``, or the slices ``offsets`` starts of a 1-d one. ``per_sample_weights`` (sum only)
    scales each row; indices equal to ``padding_idx`` are left out of their bag; an empty bag gives zeros."""
    name = "embedding_bag"
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"{name}: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError(f"{name}: max_norm, scale_grad_by_freq and sparse are not supported; for max_norm "
                                  "call F.embedding(input, weight, max_norm=...) first (it rescales the rows in place)")
    if per_sample_weights is not None and mode != "sum":
        raise ValueError(f"{name}: per_sample_weights is only supported for mode='sum', got mode={mode!r}")
    idx = _host(input)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{name}: indices must be integers, got dtype {idx.dtype}")
    rows_n, dim = np.shape(raw(weight))
    flat, bags = _bags(name, idx, offsets, include_last_offset)
    if flat.size and (flat.min() < 0 or flat.max() >= rows_n):
        raise IndexError(f"{name}: index {int(flat.max() if flat.max() >= rows_n else flat.min())} is out of range "
                         f"for an embedding table of {rows_n} rows")
    keep = np.ones(flat.size, bool) if padding_idx is None else flat != int(padding_idx) % rows_n
    bags = [[i for i in bag if keep[i]] for bag in bags]
    dt = np.result_type(raw(weight))
    rows = weight[on_device_of(raw(weight), flat)]  # (indices, dim)
    if mode != "max":
        m = np.zeros((len(bags), flat.size), dtype=dt)
        for b, bag in enumerate(bags):
            m[b, bag] = 1.0 / len(bag) if mode == "mean" and bag else 1.0
        if per_sample_weights is not None:
            rows = ew.multiply(rows, per_sample_weights.reshape(-1, 1) if hasattr(per_sample_weights, "reshape")
                               else np.reshape(per_sample_weights, (-1, 1)))
        return matmul(on_device_of(raw(weight), m), rows)
    width = max([len(bag) for bag in bags] + [1])
    pos = np.array([(bag + [0] * width)[:width] for bag in bags], dtype=np.int64).reshape(len(bags), width)
    valid = np.array([[j < len(bag) for j in range(width)] for bag in bags], dtype=bool).reshape(len(bags), width)
    gathered = rows[on_device_of(raw(weight), pos)] if flat.size else None  # (bags, width, dim)
    if gathered is None:
        return matmul(on_device_of(raw(weight), np.zeros((len(bags), 0), dt)), rows)
    xp = xp_where(raw(weight))
    g = raw(gathered)
    ok = on_device_of(raw(weight), valid)[..., None]
    chosen = xp.where(ok, g, -np.inf).argmax(axis=1)  # (bags, dim): the first largest
    pick = (xp.arange(width)[None, :, None] == chosen[:, None, :]) & ok
    return reduce_sum(ew.where(pick, gathered, np.zeros((), dt)), axis=1)
