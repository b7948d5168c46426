"""PyTorch's type promotion for ops on Tensors (ATen's ``result_type``), where NumPy 2's differs.

Operands fall in three priority groups: dimensioned arrays (a Tensor or ndarray with ndim >= 1), zero-dim
arrays, and wrapped numbers (Python and NumPy scalars). Each group's dtypes promote among themselves
(``promote_pair``); a lower group changes the result only when its category (bool < integer < floating <
complex) is higher (``_combine``). A floating wrapped number counts as the default dtype (float32), a complex
one as its complex twin, so ``int_tensor * 1.5`` and ``float32_tensor + np.float64(2)`` are float32 where
NumPy 2 says float64. Ops that always give floats (true division, sqrt, exp, ...) turn integer and bool inputs
into the default dtype.

Only ops with a Tensor among their operands follow this rule (``ops/promoting.py`` casts them before the op
runs); NumPy arrays alone keep NumPy's rule (docs/design.md, "Dtypes").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .defaults import get_default_dtype

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_WEAK = (bool, int, float, complex)  # Python numbers: NumPy 2 already treats them as PyTorch does, mostly
_COMPLEX_OF = {np.dtype(np.float16): np.dtype(np.complex64), np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}


def promote_pair(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types: the higher category wins whole (int64 + float16 is float16, not NumPy's float64)."""
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca == cb or (ca >= 2 and cb >= 2):
        return np.promote_types(a, b)
    return a if ca > cb else b


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """ATen's combine_categories: ``lower`` (a lower-priority group) counts only if its category is higher."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    ch, cl = _CATEGORY[higher.kind], _CATEGORY[lower.kind]
    if ch == 3:
        return higher
    if cl == 3:
        return _COMPLEX_OF.get(higher, lower) if ch == 2 else lower
    if ch == 2:
        return higher
    if ch == 0 or cl == 2:
        return promote_pair(higher, lower)
    return higher


def _wrapped(v: Any) -> np.dtype:
    """The dtype a Python or NumPy scalar stands for (ATen's wrapped number)."""
    kind = np.asarray(v).dtype.kind
    if kind == "c":
        return _COMPLEX_OF[get_default_dtype()]
    if kind == "f":
        return get_default_dtype()
    return np.dtype(np.int64) if kind in "iu" else np.dtype(np.bool_)


def result_dtype(values: list[Any]) -> np.dtype:
    """The dtype PyTorch gives an elementwise op on ``values``: arrays (anything with ``dtype`` and ``ndim``: a
    Tensor, an ndarray, one example of a vmap batch) and Python or NumPy scalars.

    Example:
        >>> import numpy as np
        >>> result_dtype([np.ones(3, np.float32), np.arange(3)]), result_dtype([np.arange(3), 1.5])
        (dtype('float32'), dtype('float32'))
    """
    dims = zeros = wrapped = None
    for v in values:
        if isinstance(v, (np.generic, *_WEAK)):
            d = _wrapped(v)
            wrapped = d if wrapped is None else promote_pair(wrapped, d)
        elif v.ndim:
            dims = v.dtype if dims is None else promote_pair(dims, v.dtype)
        else:
            zeros = v.dtype if zeros is None else promote_pair(zeros, v.dtype)
    return _combine(_combine(dims, zeros), wrapped)
