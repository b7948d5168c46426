"""Helpers to declare primitives and tie them to the NumPy functions they stand for."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff.batch_levels import is_batched
from ..core import traces
from ..core.device import ARRAY_TYPES, as_array, constant_on, xp_of
from ..tensor import Tensor

# NumPy callables -> chainrule functions, used by Tensor.__array_ufunc__ / __array_function__.
NUMPY_UFUNCS: dict[Any, Callable[..., Any]] = {}
NUMPY_FUNCTIONS: dict[Any, Callable[..., Any]] = {}
# Public chainrule functions, by name, with the NumPy names they answer to.
FUNCTIONS: dict[str, Callable[..., Any]] = {}
# chainrule function -> the NumPy (or SciPy) callables it stands for, in registration order.
NUMPY_NAMES: dict[Callable[..., Any], list[Any]] = {}
# Functions whose results carry no gradient (comparisons, indices, counts): they answer on the values.
NONDIFFERENTIABLE: set[Callable[..., Any]] = set()


def implements(
    *numpy_callables: Any, differentiable: bool = True
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a chainrule function as the Tensor version of NumPy callables.

    ``differentiable=False`` marks a function that answers on the values only (its
    result never carries a gradient: indices, counts, booleans).
    """

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for np_fn in numpy_callables:
            if np_fn is None:  # a NumPy name this NumPy version lacks (see np_attr)
                continue
            table = NUMPY_UFUNCS if isinstance(np_fn, np.ufunc) else NUMPY_FUNCTIONS
            table[np_fn] = fn
            NUMPY_NAMES.setdefault(fn, []).append(np_fn)
        FUNCTIONS.setdefault(fn.__name__, fn)
        if not differentiable:
            NONDIFFERENTIABLE.add(fn)
        return fn

    return register


def np_attr(path: str) -> Any:
    """``numpy.<path>`` (e.g. "linalg.vecdot"), or None when this NumPy version has no such name."""
    obj: Any = np
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def is_complex(x: Any) -> bool:
    """Whether ``x`` (a Tensor, an array, a batched value under vmap, a number) has a complex dtype."""
    dtype = getattr(x, "dtype", None)
    return np.iscomplexobj(x) if dtype is None else dtype.kind == "c"


def conj(x: Any) -> Any:
    """The complex conjugate of a complex value (traced for Tensors); a real value itself."""
    return np.conjugate(x) if is_complex(x) else x


def raw(x: Any) -> Any:
    """The ndarray inside a Tensor, or the value itself."""
    if isinstance(x, Tensor):
        if traces.open:  # a jit trace checks on replay what was computed from the values outside the primitives
            trace = traces.current()
            if trace is not None:
                trace.read_raw(x, sys._getframe(1))
        return x._data
    return x


def where_is(x: Any) -> Any:
    """The array inside a Tensor (or the value itself) for where it lives, the host or a device: unlike
    :func:`raw`, not a read of its values (a jit trace need not guard it)."""
    return x._data if isinstance(x, Tensor) else x


def on_device_of(x: Any, constant: Any) -> Any:
    """A constant an op made on the host (a matrix, an index plane) where ``x`` (a Tensor or an array) is."""
    return constant_on(where_is(x), constant)


def literal_on(x: Any, value: Any, dtype: Any = None) -> Any:
    """A Python number or list given with ``x`` (``prepend=0.5``, ``to_begin=[1.0]``) as an array where ``x`` is;
    an array or a Tensor as it is (a host array mixed with a device's values is refused where it is mixed, as
    CuPy refuses it)."""
    if isinstance(value, (np.ndarray, Tensor)) or value.__class__ in ARRAY_TYPES:
        return value if dtype is None or isinstance(value, Tensor) else as_array(value, dtype=dtype)
    return constant_on(where_is(x), np.asarray(value, dtype=dtype))


def xp_where(x: Any) -> Any:
    """The array module where ``x`` (a Tensor or an array) lives, to create arrays that go with it (not a value
    read)."""
    return xp_of(where_is(x))


def wrap_like(value: Any, *inputs: Any) -> Any:
    """Wrap a non-differentiable result as a Tensor if any input was a Tensor (a batched one, inside vmap, stays
    as it is: its examples are its own)."""
    if any(isinstance(i, Tensor) for i in inputs) and not is_batched(value):
        out = Tensor._wrap(as_array(value))
        if traces.open:  # a jit trace records comparisons as ops, and checks other such values on replay
            trace = traces.current()
            if trace is not None:
                trace.wrapped(out, inputs, sys._getframe(1))
        return out
    return value


def normalize_axis(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """``axis`` as a sorted tuple of non-negative ints (None stays None)."""
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            op = sys._getframe(1).f_code.co_name  # the public function that was called (error path only)
            raise np.exceptions.AxisError(
                f"{op}: axis {a} is out of bounds for an array of dimension {ndim}; "
                + (f"use an axis in [-{ndim}, {ndim - 1}]" if ndim else "a 0-d array has no axes; use axis=None")
            )
        out.append(a % max(ndim, 1))
    return tuple(sorted(out))


def ndim_of(x: Any) -> int:
    return np.ndim(raw(x))


def shape_of(x: Any) -> tuple[int, ...]:
    return np.shape(raw(x))
