"""JAX's functional index updates, ``x.at[idx].set(v)`` and friends, on Tensors (and batched values under vmap).

A traced value cannot be changed in place (``x[idx] = v`` would lose what ``x`` held before), so JAX
spells the update as an expression that returns a new array; chainrule does the same, differentiably
in ``x`` and ``v``. The index is anything NumPy indexing takes. Repeated positions behave as NumPy's
assignment and JAX's scatters: ``set`` keeps the last value, ``add`` adds them all, ``multiply``,
``divide``, ``power``, ``min``, ``max`` and ``apply`` apply them one after another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import ops as _ops
from ..autodiff import batch_levels as _batching
from ..tensor import Tensor


class IndexUpdates:
    """``x.at``: index it (``x.at[idx]``) to get the update methods."""

    __slots__ = ("x",)

    def __init__(self, x: Any) -> None:
        self.x = x

    def __getitem__(self, index: Any) -> _IndexUpdate:
        return _IndexUpdate(self.x, index)

    def __repr__(self) -> str:
        return f"_IndexUpdates({self.x!r})"


class _IndexUpdate:
    """``x.at[idx]``: ``get``, ``set``, ``add``, ``subtract``, ``multiply``, ``divide``, ``power``, ``min``,
    ``max``, ``apply``; each returns the updated copy of ``x``."""

    __slots__ = ("x", "index")

    def __init__(self, x: Any, index: Any) -> None:
        self.x, self.index = x, index

    def __getattribute__(self, name: str) -> Any:
        method = object.__getattribute__(self, name)
        if name.startswith("_") or not callable(method) or not _batching.open:
            return method
        x, index = object.__getattribute__(self, "x"), object.__getattribute__(self, "index")
        if not _batching.batched_tree(index if isinstance(index, tuple) else (index,)):
            return method
        return lambda *args, **kwargs: _per_example_update(name, x, index, args, kwargs)

    def get(self, **options: Any) -> Any:
        mode, fill_value = _options("get", options)
        index, positions = _in_bounds(np.shape(self.x), self.index, mode, gather=True)
        if positions is None:
            return self.x[index]
        fill = fill_for(np.dtype(self.x.dtype)) if fill_value is None else fill_value
        return np.where(positions < 0, np.asarray(fill, dtype=self.x.dtype), self.x[index])

    def set(self, values: Any, **options: Any) -> Any:
        return self._scatter("set", values, None, options)

    def add(self, values: Any, **options: Any) -> Any:
        return self._scatter("add", values, None, options)

    def subtract(self, values: Any, **options: Any) -> Any:
        return self._scatter("subtract", -values, None, options)

    def _scatter(self, name: str, values: Any, combine: Callable[[Any, Any], Any] | None,
                 options: dict[str, Any]) -> Any:
        """The update ``name``: out-of-bounds positions are dropped (JAX's default) or clipped (``mode="clip"``)."""
        mode, _ = _options(name, options)
        index, positions = _in_bounds(np.shape(self.x), self.index, mode, gather=False)
        if name in ("add", "subtract"):
            if positions is None:
                return _ops.add_at(self.x, index, values)
            keep = positions.reshape(-1) >= 0
            flat_values = _ops.reshape(_ops.broadcast_to(values, positions.shape), (-1,))[keep]
            flat = _ops.add_at(_ops.reshape(self.x, (-1,)), positions.reshape(-1)[keep], flat_values)
            return _ops.reshape(flat, np.shape(self.x))
        return _updated(self.x, index, values, combine, positions)

    def multiply(self, values: Any, **options: Any) -> Any:
        return self._scatter("multiply", values, lambda old, v: old * v, options)

    mul = multiply

    def divide(self, values: Any, **options: Any) -> Any:
        return self._scatter("divide", values, lambda old, v: old / v, options)

    def power(self, values: Any, **options: Any) -> Any:
        return self._scatter("power", values, lambda old, v: old ** v, options)

    def min(self, values: Any, **options: Any) -> Any:
        return self._extremum("min", values, np.minimum, options)

    def max(self, values: Any, **options: Any) -> Any:
        return self._extremum("max", values, np.maximum, options)

    def _extremum(self, name: str, values: Any, pick: Callable[[Any, Any], Any], options: dict[str, Any]) -> Any:
        """``min``/``max``: the extreme of each entry and the values written to it; where several are equal (the
        entry and repeated positions' values), its derivative is their average, as JAX's scatter's."""
        mode, _ = _options(name, options)
        index, positions = _in_bounds(np.shape(self.x), self.index, mode, gather=False)
        best = _updated(self.x, index, values, pick, positions)
        if np.dtype(self.x.dtype).kind not in "fc":
            return best
        shape = tuple(np.shape(self.x))
        if positions is None:
            positions = np.arange(int(np.prod(shape))).reshape(shape)[_raw(index)]
        flat_positions = positions.reshape(-1)
        keep = flat_positions >= 0
        where = flat_positions[keep]
        flat, top = _ops.reshape(self.x, (-1,)), _ops.reshape(best, (-1,))
        flat_values = _ops.reshape(_ops.broadcast_to(values, positions.shape), (-1,))[keep]
        tie_x, tie_v = flat == top, flat_values == top[where]  # (comparisons: no derivative through the weights)
        count = _ops.add_at(np.where(tie_x, 1.0, 0.0), where, np.where(tie_v, 1.0, 0.0))
        total = _ops.add_at(np.where(tie_x, flat, 0), where, np.where(tie_v, flat_values, 0))
        averaged = np.where(count > 0, total / np.where(count > 0, count, 1.0), top)  # (none equal: a NaN)
        return _ops.reshape(_ops.astype(averaged, self.x.dtype) if averaged.dtype != self.x.dtype else averaged,
                            shape)

    def apply(self, func: Callable[[Any], Any], **options: Any) -> Any:
        return self._scatter("apply", None, lambda old, _: func(old), options)


def _per_example_update(name: str, x: Any, index: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """``x.at[index].name(*args)`` under vmap with an index that differs per example: once per example
    (the positions written differ between examples, so no one whole-batch update exists)."""
    def one(x: Any, index: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(IndexUpdates(x)[index], name)(*args, **kwargs)

    return _batching.per_example(one, (x, index, *args), kwargs)


_MODES = (None, "clip", "fill", "drop", "promise_in_bounds")


def _options(method: str, options: dict[str, Any]) -> tuple[Any, Any]:
    """JAX's ``mode=`` (what to do with indices out of bounds) and ``fill_value=`` (a gather's value there)."""
    options = {k: v for k, v in options.items() if k not in ("indices_are_sorted", "unique_indices")}
    mode, fill_value = options.pop("mode", None), options.pop("fill_value", None)
    mode = getattr(mode, "name", mode)  # jax.lax.GatherScatterMode.CLIP -> "CLIP"
    mode = mode.lower() if isinstance(mode, str) else mode
    if options or mode not in _MODES:
        raise TypeError(
            f"x.at[...].{method}: " + (f"unknown options {sorted(options)}" if options else f"mode={mode!r} is not "
                                       f"one of {_MODES[1:]}") + " (JAX's: mode=, fill_value=, indices_are_sorted=, "
            "unique_indices=)")
    if fill_value is not None and method != "get":
        raise TypeError(f"x.at[...].{method}: fill_value= is for get() (an update drops out-of-bounds positions)")
    return mode, fill_value


def fill_for(dtype: np.dtype) -> Any:
    """JAX's default value of a gather out of bounds: NaN, the most negative signed or largest unsigned integer,
    True for booleans."""
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


def _in_bounds(shape: tuple[int, ...], index: Any, mode: Any, gather: bool) -> tuple[Any, np.ndarray | None]:
    """``index`` with its integer parts in bounds, as JAX reads them (negative ones count from the end first), and
    None, or, where some position is out of bounds and ``mode`` leaves it out (fill or drop; a scatter's default),
    the flat position of each entry of ``x[index]`` with -1 where it is out of bounds.

    Clipping (``mode="clip"``, and a gather's default) moves an index to the nearest end."""
    items = list(index) if isinstance(index, tuple) else [index]
    raw = [np.asarray(i) if isinstance(i, list) else _raw(i) for i in items]
    used = sum(0 if i is None or i is Ellipsis else np.ndim(i) if _is_mask(i) else 1 for i in raw)
    dims, dim = [], 0  # the axis each integer part indexes
    for i in raw:
        if i is Ellipsis:
            dim += len(shape) - used
        elif i is not None:
            dims.append(dim if _is_integer(i) else None)
            dim += np.ndim(i) if _is_mask(i) else 1
    parts = [i for i in raw if i is not None and i is not Ellipsis]
    outside = [d is not None and (np.any(np.asarray(p) >= shape[d]) or np.any(np.asarray(p) < -shape[d]))
               for p, d in zip(parts, dims) if d is not None and d < len(shape)]
    if not any(outside):
        return index, None
    clip = mode == "clip" or (gather and mode in (None, "promise_in_bounds"))
    n_of = iter(dims)
    clipped, sentinel = [], []
    for i in raw:
        d = None if i is None or i is Ellipsis else next(n_of)
        if d is None or d >= len(shape):
            clipped.append(i)
            sentinel.append(i)
            continue
        n = shape[d]
        p = np.asarray(i)
        p = np.where(p < 0, p + n, p)
        bad = (p < 0) | (p >= n)
        clipped.append(np.clip(p, 0, max(n - 1, 0)))
        sentinel.append(np.where(bad, n, p))
    if clip:
        return tuple(clipped), None
    hit = {d for d in dims if d is not None}
    ext = np.full([n + (k in hit) for k, n in enumerate(shape)], -1, dtype=np.int64)
    ext[tuple(slice(0, n) for n in shape)] = np.arange(int(np.prod(shape))).reshape(shape)
    return tuple(clipped), ext[tuple(sentinel)]



def _is_integer(i: Any) -> bool:
    return (isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))) or (
        isinstance(i, np.ndarray) and i.dtype.kind in "iu")


def _is_mask(i: Any) -> bool:
    return isinstance(i, np.ndarray) and i.dtype == np.bool_


def _updated(x: Any, index: Any, values: Any, combine: Callable[[Any, Any], Any] | None,
             positions: np.ndarray | None = None) -> Any:
    """``x`` with the entries at ``index`` replaced by ``values`` (``combine`` is None) or by
    ``combine(old, value)``, one occurrence of each repeated position at a time. ``positions``, when given, are
    the flat positions ``index`` reaches, -1 for those left out (out of bounds)."""
    shape = tuple(np.shape(x))
    size = int(np.prod(shape))
    if positions is None:
        positions = np.arange(size).reshape(shape)[_raw(index)]
    flat_positions = positions.reshape(-1)
    keep = flat_positions >= 0
    if values is None:
        flat_values = None
    else:
        flat_values = _ops.reshape(_ops.broadcast_to(values, positions.shape), (-1,))
    if not keep.all():
        flat_positions = flat_positions[keep]
        flat_values = None if flat_values is None else flat_values[keep]
    flat = _ops.reshape(x, (-1,))
    if combine is None:  # NumPy's assignment: of repeated positions, the last one's value stays
        order = np.arange(flat_positions.size)[::-1]
        _, first_of_reversed = np.unique(flat_positions[::-1], return_index=True)
        rounds = [np.sort(order[first_of_reversed])]
    else:
        rounds = _rounds(flat_positions)
    for picks in rounds:
        where = flat_positions[picks]
        if combine is None:
            new = flat_values[picks]
        else:
            new = combine(flat[where], None if flat_values is None else flat_values[picks])
        keep = np.ones(size, dtype=bool)
        keep[where] = False  # (a where, not a product with 0/1: an inf or NaN being replaced must not stay NaN)
        flat = _ops.add_at(np.where(keep, flat, 0), where, new)
    return _ops.reshape(flat, shape)


def _rounds(positions: np.ndarray) -> list[np.ndarray]:
    """The occurrences split into rounds with each position at most once per round, in order."""
    rounds, left = [], np.arange(positions.size)
    while left.size:
        _, first = np.unique(positions[left], return_index=True)
        picks = np.sort(left[first])
        rounds.append(picks)
        left = np.setdiff1d(left, picks, assume_unique=True)
    return rounds


def _raw(index: Any) -> Any:
    """The index with any Tensor in it read as its integer values (indices carry no derivative)."""
    if isinstance(index, tuple):
        return tuple(_raw(i) for i in index)
    data = getattr(index, "_data", None)
    if isinstance(data, np.ndarray) and not isinstance(index, np.ndarray):
        return data
    return index


def _at(self: Any) -> IndexUpdates:
    """JAX's functional index update: ``x.at[idx].set(v)`` returns a copy of ``x`` with ``x[idx] = v``
    (also ``add``, ``multiply``, ``divide``, ``power``, ``min``, ``max``, ``apply``, ``get``).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(lambda x: np.sum(x.at[0].set(x[1] ** 2)))(np.array([1.0, 3.0]))
        array([0., 7.])
    """
    return IndexUpdates(self)


Tensor.at = property(_at)  # type: ignore[attr-defined]


class ArrayWithAt(np.ndarray):
    """What ``chainrule.numpy``'s functions return where NumPy's return an ndarray: an ndarray (a subclass,
    so every NumPy function and ``isinstance(x, np.ndarray)`` take it) with JAX's ``x.at[idx]`` too, so that a JAX
    program's ``jnp.zeros(3).at[0].set(1.0)`` runs outside a transform as inside one. NumPy's arithmetic keeps
    the class (``(2 * x).at`` works); it prints as an ndarray, and ``numpy.asarray`` gives the plain array.

    Example:
        >>> import chainrule.numpy as cnp
        >>> cnp.zeros(3).at[1].set(5.0)
        array([0., 5., 0.])
    """

    @property
    def at(self) -> _PlainUpdates:
        """JAX's functional index update: ``x.at[idx].set(v)`` returns an updated copy (``get``, ``add``, ...)."""
        return _PlainUpdates(self.view(np.ndarray))

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))


class _PlainUpdates(IndexUpdates):
    """``x.at`` of an ``ArrayWithAt``: the updated copies are ``ArrayWithAt`` too (JAX programs chain them)."""

    __slots__ = ()

    def __getitem__(self, index: Any) -> Any:
        update = _IndexUpdate(self.x, index)
        return _Rewrapped(update)


class _Rewrapped:
    __slots__ = ("update",)

    def __init__(self, update: _IndexUpdate) -> None:
        self.update = update

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.update, name)
        return lambda *args, **kwargs: with_at(_untracked(method(*args, **kwargs)))


def _untracked(out: Any) -> Any:
    """A result that no derivative reaches as its NumPy array (the update of a NumPy array by constants)."""
    if isinstance(out, Tensor) and not out._requires_grad and not out._tangents and out._data.__class__ is np.ndarray:
        return out._data
    return out


def with_at(out: Any) -> Any:
    """``out`` as an ``ArrayWithAt`` if it is a plain ndarray (a tuple or list of them, each); else as it is."""
    if out.__class__ is np.ndarray:
        return out.view(ArrayWithAt)
    if out.__class__ is tuple and any(o.__class__ is np.ndarray for o in out):
        return tuple(o.view(ArrayWithAt) if o.__class__ is np.ndarray else o for o in out)
    return out
