"""Picking entries by value: sort, select, nan_to_num, compress, extract, interp.

Composites of indexing and ``where``. Sorting sends each output entry's gradient back to
the input entry that landed there (ties are broken by position, as a stable sort).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.device import as_array
from ..tensor import Tensor
from . import elementwise, pointwise
from . import shape as shape_ops
from ._define import ndim_of, normalize_axis, raw, shape_of
from .declare import implements, op


@implements(np.sort)
def sort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Any:
    """Sorted copy along ``axis`` (of the flattened array when None); each entry keeps its gradient.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(lambda x: np.sort(x)[0])(np.array([3.0, 1.0, 2.0]))
        array([0., 1., 0.])
    """
    if order is not None:
        raise TypeError("sort: 'order' (structured arrays) is not supported on Tensors")
    if axis is None:
        a, axis = shape_ops.ravel(a), 0
    if ndim_of(a) == 0:
        raise np.exceptions.AxisError("sort: cannot sort a 0-d array along an axis")
    axis = normalize_axis(axis, ndim_of(a))[0]
    idx = np.argsort(raw(a), axis=axis, kind="stable")
    return shape_ops.take_along_axis(a, idx, axis)


@implements(np.select)
def select(condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    """Entries of the first choice whose condition holds, else ``default`` (all broadcast). Given a Tensor and
    two integers, PyTorch's ``select(input, dim, index)`` (NumPy's choices are never one integer)."""
    if isinstance(choicelist, (int, np.integer)) and hasattr(condlist, "select") and np.ndim(raw(condlist)) > 0:
        return condlist.select(choicelist, default)  # torch.select(t, dim, index): the Tensor method
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: {len(condlist)} conditions but {len(choicelist)} choices; give one choice each")
    if not condlist:
        raise ValueError("select: needs at least one condition")
    result = default
    for cond, choice in reversed(list(zip(condlist, choicelist, strict=False))):
        c = as_array(raw(cond))
        if c.dtype != bool:
            raise TypeError(f"select: conditions must be boolean arrays, got dtype {c.dtype}")
        result = elementwise.where(c, choice, result)
    shape = np.broadcast_shapes(*[shape_of(x) for x in [*condlist, *choicelist, default]])
    return result if shape_of(result) == shape else shape_ops.broadcast_to(result, shape)


@implements(np.nan_to_num)
def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    """NaN and infinities replaced by numbers; replaced entries get zero gradient, the others 1."""
    d = as_array(raw(x))
    if d.dtype.kind not in "fc":  # nothing to replace; a copy all the same (as PyTorch), unless copy=False
        return shape_ops.copy(x) if copy and isinstance(x, Tensor) else x
    info = np.finfo(d.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    bad = ~np.isfinite(d)
    values = np.where(np.isnan(d), nan, np.where(d > 0, hi, lo)).astype(d.dtype)
    return elementwise.where(bad, values, x)


@op(numpy=np.compress, cases="none",
    method={"compress": lambda self, condition, axis=None: compress(condition, self, axis)})
def compress(condition: Any, a: Any, axis: int | None = None) -> Any:
    """Slices along ``axis`` where ``condition`` holds (of the flattened array when None)."""
    idx = np.flatnonzero(as_array(raw(condition)))
    if axis is None:
        return shape_ops.take(shape_ops.ravel(a), idx)
    return shape_ops.take(a, idx, axis=axis)


@implements(np.extract)
def extract(condition: Any, arr: Any) -> Any:
    """Entries where ``condition`` holds, flattened."""
    return shape_ops.take(shape_ops.ravel(arr), np.flatnonzero(np.ravel(raw(condition))))


def _periodic(x: Any, xp: Any, fp: Any, period: Any) -> tuple[Any, Any, Any]:
    """NumPy's periodic interp as a plain one: x and the knots taken modulo ``period`` (derivative 1), the knots
    sorted, and one knot wrapped around at each end."""
    period = abs(float(raw(period)))
    if period == 0:
        raise ValueError("interp: period must be a non-zero value")
    x, xp = pointwise.mod(x, period), pointwise.mod(xp, period)
    order = np.argsort(as_array(raw(xp)), kind="stable")
    xp, fp = shape_ops.take(xp, order), shape_ops.take(fp, order)
    n = len(order)
    xp = shape_ops.concatenate([elementwise.subtract(shape_ops.take(xp, [n - 1]), period), xp,
                                elementwise.add(shape_ops.take(xp, [0]), period)])
    fp = shape_ops.concatenate([shape_ops.take(fp, [n - 1]), fp, shape_ops.take(fp, [0])])
    return x, xp, fp


@implements(np.interp)
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Any:
    """Piecewise-linear interpolation; differentiable in ``x``, ``xp``, ``fp``, ``left`` and ``right``.

    ``xp`` (increasing) is differentiable too. At a knot the derivative in ``x`` is the slope of the
    segment to its right; outside ``[xp[0], xp[-1]]`` it is 0.
    """
    if period is not None:
        x, xp, fp = _periodic(x, xp, fp, period)
        left = right = None  # as NumPy: a periodic x never falls outside
    knots = as_array(raw(xp), dtype=float)
    if knots.ndim != 1 or shape_of(fp) != knots.shape or knots.size == 0:
        raise ValueError(f"interp: xp and fp must be 1-D of one length, got shapes {knots.shape} and {shape_of(fp)}")
    xr = as_array(raw(x))
    n = knots.size
    if n == 1:
        y = shape_ops.take(fp, np.zeros(xr.shape, dtype=int))
    else:
        i = np.clip(np.searchsorted(knots, xr, side="right") - 1, 0, n - 2)
        if isinstance(xp, Tensor):  # traced knots: the weights depend on them too
            x0, x1 = shape_ops.take(xp, i), shape_ops.take(xp, i + 1)
        else:
            x0, x1 = knots[i], knots[i + 1]
        w = elementwise.divide(elementwise.subtract(x, x0), x1 - x0)
        f0, f1 = shape_ops.take(fp, i), shape_ops.take(fp, i + 1)
        y = elementwise.add(f0, elementwise.multiply(w, elementwise.subtract(f1, f0)))
    below = shape_ops.take(fp, 0) if left is None else left
    above = shape_ops.take(fp, n - 1) if right is None else right
    y = elementwise.where(xr < knots[0], below, y)
    return elementwise.where(xr > knots[-1], above, y)
