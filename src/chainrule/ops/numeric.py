"""NumPy's numeric helpers on Tensors: linspace (in its endpoints), gradient, partition,
piecewise, apply_along_axis, and add_at (the out-of-place ``numpy.add.at``).

All are built from other ops, so both modes and every order come with them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.device import OFF_HOST, as_array, index_on, xp_of
from ..tensor import Tensor
from . import elementwise
from . import shape as shape_ops
from ._define import literal_on, ndim_of, normalize_axis, raw, shape_of, where_is, wrap_like, xp_where
from .declare import implements


def _plain(x: Any) -> bool:
    """A NumPy array or a number (not a Tensor, nor a batched value under vmap)."""
    return type(x) is np.ndarray or isinstance(x, np.generic) or not hasattr(x, "__array_function__")


@implements(np.linspace)
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype: Any = None,
             axis: int = 0, *, device: Any = None) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop``; differentiable in both endpoints.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(lambda b: np.sum(np.linspace(0.0, b, 5)))(2.0)  # 0 + 1/4 + 1/2 + 3/4 + 1
        2.5
    """
    if _plain(start) and _plain(stop):
        return np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis)
    num = int(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    div = (num - 1) if endpoint else num
    delta = elementwise.subtract(stop, start)
    shape = np.broadcast_shapes(shape_of(start), shape_of(stop))
    ends = (e._data if isinstance(e, Tensor) else e for e in (start, stop))  # where they are: not a value read
    xp = next((xp_of(v) for v in ends if v.__class__ in OFF_HOST), np)
    steps = xp.arange(num, dtype=float).reshape((-1,) + (1,) * len(shape))
    if div > 0:
        step = elementwise.divide(delta, div)
        y = elementwise.add(elementwise.multiply(steps, step), start)
    else:  # one sample with endpoint: just start (NumPy's step is NaN)
        step = elementwise.multiply(delta, np.nan)
        y = elementwise.add(elementwise.multiply(steps, delta), start)
    if endpoint and num > 1:  # the last value is stop exactly, as in NumPy
        last = shape_ops.expand_dims(shape_ops.broadcast_to(stop, shape), 0)
        y = shape_ops.concatenate([shape_ops.getitem(y, slice(0, num - 1)), last], axis=0)
    y = shape_ops.moveaxis(y, 0, axis) if shape else y
    if dtype is not None:
        y = shape_ops.astype(y, dtype)
    return (y, step) if retstep else y


@implements(np.gradient)
def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """Second-order central differences inside, one-sided at the edges (``edge_order`` 1 or 2), as
    numpy.gradient; spacings are numbers or coordinate arrays (constants)."""
    nd = ndim_of(f)
    given = range(nd) if axis is None else (axis if isinstance(axis, (tuple, list)) else (axis,))
    axes = tuple(normalize_axis(a, nd)[0] for a in given)  # in the order given, as NumPy returns them
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: edge_order must be 1 or 2, got {edge_order}")
    if len(varargs) == 0:
        spacing: list[Any] = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(raw(varargs[0])) == 0:
        spacing = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(f"gradient: give one spacing, or one per axis ({len(axes)}), got {len(varargs)}")
    if any(isinstance(h, Tensor) and h._requires_grad for h in spacing):
        raise TypeError("gradient: spacings are constants here (not differentiable); pass NumPy numbers or arrays")
    out = [_gradient_along(f, ax, as_array(raw(h), dtype=float), edge_order) for ax, h in zip(axes, spacing)]
    return out[0] if len(out) == 1 else tuple(out)


def _take(f: Any, ax: int, sl: slice) -> Any:
    return shape_ops.getitem(f, (slice(None),) * ax + (sl,))


def _shaped(w: Any, ax: int, nd: int) -> Any:
    """Weights along ``ax`` (1-D) shaped to broadcast against the slices of an nd array."""
    w = as_array(w, dtype=float)
    return w.reshape((-1,) + (1,) * (nd - ax - 1)) if w.ndim else w


def _gradient_along(f: Any, ax: int, h: np.ndarray, edge_order: int) -> Any:
    n = shape_of(f)[ax]
    nd = ndim_of(f)
    if n < edge_order + 1:
        raise ValueError(f"gradient: an axis of length {n} is too short for edge_order={edge_order}; it needs "
                         f"at least {edge_order + 1} entries")
    if h.ndim == 0:
        dx = xp_where(f).full(n - 1, float(h))  # where f is
    elif h.shape == (n,):
        dx = np.diff(h)
    else:
        raise ValueError(f"gradient: coordinates along axis {ax} must have length {n}, got shape {h.shape}")
    dx1, dx2 = dx[:-1], dx[1:]
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    inner = elementwise.add(elementwise.add(elementwise.multiply(_take(f, ax, slice(0, n - 2)), _shaped(a, ax, nd)),
                        elementwise.multiply(_take(f, ax, slice(1, n - 1)), _shaped(b, ax, nd))),
                  elementwise.multiply(_take(f, ax, slice(2, n)), _shaped(c, ax, nd)))

    def at(i: int) -> Any:
        return _take(f, ax, slice(i, i + 1) if i != -1 else slice(n - 1, n))

    if edge_order == 1:
        first = elementwise.divide(elementwise.subtract(at(1), at(0)), dx[0])
        last = elementwise.divide(elementwise.subtract(at(-1), _take(f, ax, slice(n - 2, n - 1))), dx[-1])
    else:
        d1, d2 = dx[0], dx[1]
        mul, add = elementwise.multiply, elementwise.add
        first = add(add(mul(at(0), -(2.0 * d1 + d2) / (d1 * (d1 + d2))), mul(at(1), (d1 + d2) / (d1 * d2))),
                    mul(at(2), -d1 / (d2 * (d1 + d2))))
        d1, d2 = dx[-2], dx[-1]
        last = add(add(mul(_take(f, ax, slice(n - 3, n - 2)), d2 / (d1 * (d1 + d2))),
                       mul(_take(f, ax, slice(n - 2, n - 1)), -(d2 + d1) / (d1 * d2))),
                   mul(at(-1), (2.0 * d2 + d1) / (d2 * (d1 + d2))))
    return shape_ops.concatenate([first, inner, last], axis=ax)


@implements(np.partition)
def partition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect", order: Any = None) -> Any:
    """numpy.partition: the k-th entries in sorted place, smaller before and larger after; each entry keeps
    its gradient (the arrangement is NumPy's own, from argpartition)."""
    if order is not None:
        raise TypeError("partition: 'order' (structured arrays) is not supported on Tensors")
    if axis is None:
        a, axis = shape_ops.ravel(a), 0
    kinds = {} if kind == "introselect" else {"kind": kind}  # CuPy's argpartition has no kind (its one way)
    idx = np.argpartition(raw(a), kth, axis=axis, **kinds)
    return shape_ops.take_along_axis(a, idx, axis=axis)


@implements(np.piecewise)
def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> Any:
    """numpy.piecewise: each function (or constant) applied to the entries its condition picks (only
    those: a function is never evaluated, nor differentiated, where it does not apply)."""
    xv = raw(x)
    if isinstance(condlist, (list, tuple)):
        conds = [as_array(raw(c), dtype=bool) for c in condlist]
    else:  # one array: a single condition, or a stack of them (one more dimension than x)
        c = as_array(raw(condlist), dtype=bool)
        conds = list(c) if c.ndim > np.ndim(xv) else [c]
    funcs = list(funclist)
    if len(funcs) == len(conds) + 1:  # the last one is the default, where no condition holds
        conds.append(~functools.reduce(np.logical_or, conds) if conds else xp_where(x).ones(np.shape(xv), dtype=bool))
    elif len(funcs) != len(conds):
        raise ValueError(f"piecewise: with {len(conds)} condition(s) give {len(conds)} or {len(conds) + 1} "
                         f"function(s), got {len(funcs)}")
    dtype = np.result_type(xv.dtype, float) if np.ndim(xv) else np.result_type(xv)
    out: Any = xp_where(x).zeros(np.shape(xv), dtype=dtype)  # where x is
    for cond, fn in zip(conds, funcs):
        cond = np.broadcast_to(cond, np.shape(xv))
        if not cond.any():
            continue
        if callable(fn):
            piece = fn(shape_ops.getitem(x, cond) if isinstance(x, Tensor) else xv[cond], *args, **kw)
        else:
            piece = fn
        piece = shape_ops.broadcast_to(piece, (int(cond.sum()),)) if isinstance(piece, Tensor) else np.broadcast_to(
            literal_on(x, piece, dtype=out.dtype), (int(cond.sum()),))
        # later conditions win where several hold (as in NumPy): clear the place, then put the piece there
        out = elementwise.add(elementwise.where(cond, 0.0, out), _place(piece, cond))
    return wrap_like(out, x) if not isinstance(out, Tensor) else out  # (constants only: still a Tensor for one)


def _place(values: Any, mask: np.ndarray) -> Any:
    """An array of the mask's shape with ``values`` where it holds and 0 elsewhere."""
    if isinstance(values, Tensor):
        return shape_ops._scatter_add(values, index=mask, shape=mask.shape)
    out = xp_of(mask).zeros(mask.shape, dtype=values.dtype)  # where the mask is
    out[mask] = values
    return out


@implements(np.apply_along_axis)
def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """numpy.apply_along_axis: ``func1d`` on every 1-D slice along ``axis``, the results stacked where the
    axis was (a Python loop over the slices, as NumPy's own)."""
    nd = ndim_of(arr)
    axis = normalize_axis(axis, nd)[0]
    moved = shape_ops.moveaxis(arr, axis, -1)
    lead = shape_of(moved)[:-1]
    outs = [func1d(shape_ops.getitem(moved, idx), *args, **kwargs) for idx in np.ndindex(*lead)]
    if not outs:
        raise ValueError("apply_along_axis: cannot apply a function to an empty array")
    pieces = [o if isinstance(o, Tensor) else as_array(o) for o in outs]
    out_shape = np.shape(raw(pieces[0]))
    stacked = shape_ops.reshape(shape_ops.stack(pieces), lead + out_shape)
    # the result's own axes go where ``axis`` was
    k = len(out_shape)
    order = list(range(axis)) + list(range(len(lead), len(lead) + k)) + list(range(axis, len(lead)))
    return shape_ops.transpose(stacked, tuple(order)) if k else stacked


def add_at(x: Any, indices: Any, values: Any) -> Any:
    """``x`` with ``values`` added at ``indices`` (repeated indices add up): the out-of-place ``numpy.add.at``,
    differentiable in ``x`` and ``values``. (``numpy.add.at`` itself changes its argument in place, which a
    traced Tensor cannot do.)

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(lambda v: np.sum(cr.add_at(np.zeros(3), [0, 0, 2], v) ** 2))(np.array([1.0, 2.0, 3.0]))
        array([6., 6., 6.])
    """
    index = index_on(shape_ops._raw_index(indices), where_is(x))  # (host index arrays go where x is)
    target = np.shape(xp_where(x).empty(shape_of(x), dtype=bool)[index])
    if _plain(values) or values.__class__ in OFF_HOST:  # a constant: a Tensor, so that scatter_add places it
        c = literal_on(x, values)  # (a number where x is)
        v = Tensor._wrap(np.broadcast_to(c, target).astype(np.result_type(raw(x), c), copy=True))
    else:
        v = shape_ops.broadcast_to(values, target)
    return elementwise.add(x, shape_ops._scatter_add(v, index=index, shape=shape_of(x)))
