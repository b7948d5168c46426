"""``SliceGrad``: the gradient of a slice, kept as (index, values) until it meets another gradient.

The reverse rule of ``x[index]`` is "zeros of x's shape with ``g`` at ``index``". Built eagerly,
every slice of a large tensor (the q, k and v thirds of an attention projection, the rows of a
batch) allocates and zero-fills a full-size array, and the engine then adds those arrays
together. A ``SliceGrad`` holds only ``index`` and ``g``: two of them add up into one list of
parts, a dense gradient plus a ``SliceGrad`` adds ``g`` into a copy of the dense one, and the
engine turns what is left into one array (:meth:`dense`) before a rule or a user sees it. Only
basic indices (ints, slices, ``None``, ``...``) are kept this way: their positions never repeat,
so the sums are the ones the dense arrays would give.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .device import ARRAY_TYPES
from .device import xp_of as _xp_of


class SliceGrad:
    """Zeros of ``shape`` and ``dtype`` with each part's values added at its basic index."""

    __slots__ = ("shape", "dtype", "parts")
    __array_ufunc__ = None  # ndarray + SliceGrad defers to SliceGrad.__radd__

    def __init__(self, shape: tuple[int, ...], dtype: Any, parts: list[tuple[Any, np.ndarray]]) -> None:
        self.shape = shape
        self.dtype = dtype
        self.parts = parts

    def __repr__(self) -> str:
        return f"SliceGrad(shape={self.shape}, dtype={self.dtype}, parts={len(self.parts)})"

    def dense(self) -> np.ndarray:
        """One new array: zeros with every part added at its index (in the order they came)."""
        first, *rest = self.parts
        out = _xp_of(first[1]).zeros(self.shape, self.dtype)  # zeros where the gradient is (NumPy, or a device)
        out[first[0]] = first[1]
        for index, g in rest:
            out[index] += g
        return out

    def __add__(self, other: Any) -> Any:
        if other.__class__ is SliceGrad:
            return SliceGrad(self.shape, self.dtype, self.parts + other.parts)
        if other.__class__ not in ARRAY_TYPES or other.shape != self.shape or other.dtype != self.dtype:
            return self.dense() + other
        out = other.copy()  # never write into an array a rule or a caller may still hold
        for index, g in self.parts:
            out[index] += g
        return out

    __radd__ = __add__  # addition of these parts commutes elementwise


def densify(g: Any) -> Any:
    """``g`` as an array when it is a :class:`SliceGrad`, else ``g`` itself."""
    return g.dense() if g.__class__ is SliceGrad else g
