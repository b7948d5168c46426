"""``Batched``: what a function under ``vmap`` sees in place of one example.

A Batched value holds the whole batch (``value``, an ndarray, a Tensor, or a Batched value
of an outer ``vmap``) with the batch on axis 0, and the ``level`` of the ``vmap`` that made
it. It looks like one example (``shape``, ``ndim``, operators, methods, NumPy functions):
every operation goes to a chainrule function, whose primitives meet the batching hook in
``apply`` and run once on the whole batch. Asking for a concrete value (``bool``,
``float``, ``np.asarray``) raises: it would differ between examples.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff import batch_levels as _state


class ConcreteValueError(TypeError):
    """A batched value was asked for one concrete value (bool, float, np.asarray...)."""


# How a Batched value answers NumPy's protocols: protocol.py (which imports this module) installs its two
# entry points here when imported; the package's __init__ imports it, so they are there before any vmap runs.
NUMPY_PROTOCOL: dict[str, Any] = {}


class Batched:
    """One example of a batch, as seen inside ``vmap`` (the batch is ``value``'s axis 0)."""

    __slots__ = ("value", "level")
    __array_priority__ = 1000.0

    def __init__(self, value: Any, level: int) -> None:
        self.value = value
        self.level = level

    # -- what one example looks like -------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.shape[1:])

    @property
    def batch_size(self) -> int:
        return int(self.value.shape[0])

    @property
    def ndim(self) -> int:
        return len(self.value.shape) - 1

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=int))

    @property
    def dtype(self) -> np.dtype:
        return self.value.dtype

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d batched value (one example is a number)")
        return self.shape[0]

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"Batched(level={self.level}, shape={self.shape}, batch={self.batch_size})"

    # -- values that would differ per example ----------------------------------------------
    def _concrete(self, what: str) -> TypeError:
        return ConcreteValueError(
            f"vmap: {what} of a batched value: its value differs from example to example, so Python control "
            "flow (if/while/and/or) or a conversion to a Python number cannot be batched; use np.where / "
            "np.maximum / np.clip on the values instead, or move the computation outside vmap"
        )

    def __bool__(self) -> bool:
        raise self._concrete("bool()")

    def __float__(self) -> float:
        raise self._concrete("float()")

    def __int__(self) -> int:
        raise self._concrete("int()")

    def __complex__(self) -> complex:
        raise self._concrete("complex()")

    def __index__(self) -> int:
        raise self._concrete("use as an index (__index__)")

    def item(self, *args: Any) -> Any:
        raise self._concrete("item()")

    def tolist(self) -> Any:
        raise self._concrete("tolist()")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise ConcreteValueError(
            "vmap: a batched value was converted to a NumPy array (np.asarray / np.array, a NumPy array indexed "
            "by it, or a NumPy or Python function with no batching rule): that would mix the examples. Use NumPy "
            "functions that chainrule supports (chainrule.batching.table() lists how each op batches); to index "
            "a NumPy array a by a batched index i, use chainrule.Tensor(a)[i]"
        )

    # -- NumPy's protocols ---------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        _check_all_open(inputs, kwargs)
        return NUMPY_PROTOCOL["ufunc"](ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        _check_all_open(args, kwargs)
        return NUMPY_PROTOCOL["function"](func, args, kwargs)


def _check_all_open(args: Any, kwargs: dict[str, Any]) -> None:
    """Every Batched argument belongs to a running vmap. NumPy asks only the first argument of each type, so
    this one answers for Batched values of every level among them (the rules batch the innermost first)."""
    stack = list(args) + list(kwargs.values())
    while stack:
        a = stack.pop()
        if isinstance(a, Batched):
            _check_open(a)
        elif isinstance(a, (list, tuple)):
            stack.extend(a)


def _check_open(x: Batched) -> None:
    if not any(level == x.level for level, _ in _state._SIZES.get()):
        raise TypeError(
            "vmap: a batched value was used after its vmap returned (it escaped through a global, a closure "
            "or a side effect); return it from the vmapped function instead"
        )


_state.BATCHED = (Batched,)
