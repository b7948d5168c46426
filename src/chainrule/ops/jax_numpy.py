"""``jax.numpy``'s keywords that NumPy lacks, for ``chainrule.numpy``: ``size=``/``fill_value=`` of ``nonzero``,
``where``, ``argwhere`` and ``flatnonzero`` (a fixed-size answer, so they work under ``vmap``), ``clip``'s
``min=``/``max=`` and ``take``'s ``mode="fill"`` with ``fill_value=``.

Each wraps the ``chainrule.numpy`` function of the same name and calls it unchanged when none of these keywords
is given, so NumPy programs see NumPy's behaviour (``take`` out of bounds raises, as NumPy's does; JAX's default
there is ``mode="fill"``, named in the error).

Example:
    >>> import numpy as np
    >>> import chainrule.numpy as cnp
    >>> cnp.nonzero(np.array([0.0, 3.0, 0.0, 4.0]), size=3, fill_value=-1)
    (array([ 1,  3, -1]),)
    >>> cnp.take(np.array([1.0, 2.0]), np.array([1, 5]), mode="fill", fill_value=0.0)
    array([2., 0.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff import batch_levels as _batching
from .index_update import fill_for


def _values(x: Any) -> np.ndarray:
    """The concrete values of an array, a Tensor or a number (positions carry no derivative)."""
    data = getattr(x, "_data", None)
    return np.asarray(data if isinstance(data, np.ndarray) else x)


def _sized_nonzero(a: Any, size: int, fill_value: Any) -> tuple[np.ndarray, ...]:
    """``numpy.nonzero(a)`` cut or padded to ``size`` entries (padding ``fill_value``, one per axis or shared)."""
    found = np.nonzero(np.atleast_1d(_values(a)))
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * len(found)
    if len(fills) != len(found):
        raise ValueError(f"nonzero: fill_value has {len(fills)} entries, the array has {len(found)} axes")
    out = []
    for idx, fill in zip(found, fills):
        padded = np.full(size, 0 if fill is None else fill, dtype=idx.dtype)
        padded[:min(size, idx.size)] = idx[:size]
        out.append(padded)
    return tuple(out)


def _batched_or(one: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``one(*args, **kwargs)``, once per example under vmap (the positions differ between examples), level by
    level under nested vmaps."""
    if _batching.open and _batching.batched_in(args, kwargs):
        return _batching.per_example(lambda *a, **k: _batched_or(one, a, k), args, kwargs)
    return one(*args, **kwargs)


def _check_size(name: str, size: Any) -> int:
    if not isinstance(size, (int, np.integer)) or size < 0:
        raise TypeError(f"{name}: size must be a non-negative int (the number of positions returned), got {size!r}")
    return int(size)


def nonzero(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def nonzero(a: Any, *, size: Any = None, fill_value: Any = None) -> Any:
        if size is None:
            if fill_value is not None:
                raise TypeError("nonzero: fill_value needs size= (it pads the answer to that many positions)")
            return fn(a)
        size = _check_size("nonzero", size)
        return _batched_or(lambda a: _sized_nonzero(a, size, fill_value), (a,), {})

    return nonzero


def where(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def where(condition: Any, *xy: Any, size: Any = None, fill_value: Any = None, **kwargs: Any) -> Any:
        if size is None and fill_value is None:
            return fn(condition, *xy, **kwargs)
        if xy or kwargs:
            raise TypeError("where: size= and fill_value= go with where(condition) alone (the positions), not with "
                            "where(condition, x, y)")
        size = _check_size("where", size)
        return _batched_or(lambda c: _sized_nonzero(c, size, fill_value), (condition,), {})

    return where


def argwhere(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def argwhere(a: Any, *, size: Any = None, fill_value: Any = None) -> Any:
        if size is None and fill_value is None:
            return fn(a)
        size = _check_size("argwhere", size)

        def one(a: Any) -> np.ndarray:
            if np.ndim(_values(a)) == 0:
                return np.zeros((size, 0), dtype=np.intp)
            return np.stack(_sized_nonzero(a, size, fill_value), axis=-1)

        return _batched_or(one, (a,), {})

    return argwhere


def flatnonzero(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def flatnonzero(a: Any, *, size: Any = None, fill_value: Any = None) -> Any:
        if size is None and fill_value is None:
            return fn(a)
        size = _check_size("flatnonzero", size)
        return _batched_or(lambda a: _sized_nonzero(np.ravel(_values(a)), size, fill_value)[0], (a,), {})

    return flatnonzero


_NO_VALUE = object()


def clip(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def clip(a: Any, a_min: Any = _NO_VALUE, a_max: Any = _NO_VALUE, *args: Any, min: Any = _NO_VALUE,  # noqa: A002
             max: Any = _NO_VALUE, **kwargs: Any) -> Any:  # noqa: A002  (JAX's and NumPy 2.1's names)
        if min is not _NO_VALUE:
            if a_min is not _NO_VALUE:
                raise TypeError("clip: give the lower bound once (a_min or min=)")
            a_min = min
        if max is not _NO_VALUE:
            if a_max is not _NO_VALUE:
                raise TypeError("clip: give the upper bound once (a_max or max=)")
            a_max = max
        return fn(a, None if a_min is _NO_VALUE else a_min, None if a_max is _NO_VALUE else a_max, *args, **kwargs)

    return clip


def take(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: Any = None, *,
             fill_value: Any = None, unique_indices: bool = False, indices_are_sorted: bool = False) -> Any:
        if mode in ("fill", "drop", "promise_in_bounds") or fill_value is not None:
            if mode not in (None, "fill", "drop", "promise_in_bounds"):
                raise ValueError(f"take: fill_value= goes with mode='fill', not mode={mode!r}")
            if out is not None:
                raise TypeError("take: out= cannot be combined with mode='fill'")
            return _take_fill(a, indices, axis, fill_value)
        try:
            return fn(a, indices, axis=axis, out=out, mode=mode or "raise")
        except IndexError as e:
            raise IndexError(f"take: {e} (JAX's jnp.take fills such positions: pass mode='fill' (NaN, or "
                             "fill_value=...), mode='clip' or mode='wrap')") from None

    return take


def _take_fill(a: Any, indices: Any, axis: Any, fill_value: Any) -> Any:
    """``take`` with positions out of bounds (after negative ones count from the end) set to ``fill_value``."""
    if axis is None:
        a, axis = np.ravel(a), 0
    axis = axis + np.ndim(a) if axis < 0 else axis
    n = np.shape(a)[axis]
    if _batching.open and _batching.batched_tree(indices):
        return _batching.per_example(lambda i: _take_fill(a, i, axis, fill_value), (indices,), {})
    idx = _values(indices).astype(np.int64)
    idx = np.where(idx < 0, idx + n, idx)
    outside = (idx < 0) | (idx >= n)
    picked = np.take(a, np.where(outside, 0, idx) if n else np.zeros_like(idx), axis=axis) if n else None
    dtype = np.dtype(a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype)
    fill = fill_for(dtype) if fill_value is None else fill_value
    if picked is None:  # an empty axis: every position is out of bounds
        shape = np.shape(a)[:axis] + idx.shape + np.shape(a)[axis + 1:]
        return np.full(shape, fill, dtype=dtype)
    mask = outside.reshape((1,) * axis + idx.shape + (1,) * (np.ndim(a) - axis - 1))
    return np.where(mask, np.asarray(fill, dtype=dtype), picked)
