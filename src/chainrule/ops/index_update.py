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
        _refuse_options("get", options)
        return self.x[self.index]

    def set(self, values: Any, **options: Any) -> Any:
        _refuse_options("set", options)
        return _updated(self.x, self.index, values, None)

    def add(self, values: Any, **options: Any) -> Any:
        _refuse_options("add", options)
        return _ops.add_at(self.x, self.index, values)

    def subtract(self, values: Any, **options: Any) -> Any:
        _refuse_options("subtract", options)
        return _ops.add_at(self.x, self.index, -values)

    def multiply(self, values: Any, **options: Any) -> Any:
        _refuse_options("multiply", options)
        return _updated(self.x, self.index, values, lambda old, v: old * v)

    mul = multiply

    def divide(self, values: Any, **options: Any) -> Any:
        _refuse_options("divide", options)
        return _updated(self.x, self.index, values, lambda old, v: old / v)

    def power(self, values: Any, **options: Any) -> Any:
        _refuse_options("power", options)
        return _updated(self.x, self.index, values, lambda old, v: old ** v)

    def min(self, values: Any, **options: Any) -> Any:
        _refuse_options("min", options)
        return _updated(self.x, self.index, values, np.minimum)

    def max(self, values: Any, **options: Any) -> Any:
        _refuse_options("max", options)
        return _updated(self.x, self.index, values, np.maximum)

    def apply(self, func: Callable[[Any], Any], **options: Any) -> Any:
        _refuse_options("apply", options)
        return _updated(self.x, self.index, None, lambda old, _: func(old))


def _per_example_update(name: str, x: Any, index: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """``x.at[index].name(*args)`` under vmap with an index that differs per example: once per example
    (the positions written differ between examples, so no one whole-batch update exists)."""
    def one(x: Any, index: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(IndexUpdates(x)[index], name)(*args, **kwargs)

    return _batching.per_example(one, (x, index, *args), kwargs)


def _refuse_options(method: str, options: dict[str, Any]) -> None:
    """JAX's ``mode=``/``fill_value=`` say what to do with indices out of bounds; here they raise, as in NumPy."""
    options = {k: v for k, v in options.items() if v is not None and k not in ("indices_are_sorted", "unique_indices")}
    if options.get("mode") == "promise_in_bounds":
        options.pop("mode")
    if options:
        raise TypeError(
            f"x.at[...].{method}: options {sorted(options)} are not supported (indices out of bounds raise "
            "IndexError, as in NumPy); clip or mask the indices first, e.g. np.clip(idx, 0, n - 1)"
        )


def _updated(x: Any, index: Any, values: Any, combine: Callable[[Any, Any], Any] | None) -> Any:
    """``x`` with the entries at ``index`` replaced by ``values`` (``combine`` is None) or by
    ``combine(old, value)``, one occurrence of each repeated position at a time."""
    shape = tuple(np.shape(x))
    size = int(np.prod(shape))
    positions = np.arange(size).reshape(shape)[_raw(index)]
    flat_positions = positions.reshape(-1)
    if values is None:
        flat_values = None
    else:
        flat_values = _ops.reshape(_ops.broadcast_to(values, positions.shape), (-1,))
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
        keep = np.ones(size)
        keep[where] = 0.0
        flat = _ops.add_at(flat * keep, where, new)
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
