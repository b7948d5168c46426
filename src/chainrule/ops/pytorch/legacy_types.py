"""PyTorch's legacy typed constructors, ``torch.FloatTensor([1, 2])``, ``torch.LongTensor(2, 3)``, ...: each makes a
Tensor of its dtype (from data, or zeros of the given sizes), and ``isinstance(t, cr.FloatTensor)`` asks a Tensor's
dtype, as in PyTorch.

Example:
    >>> import chainrule as cr
    >>> x = cr.FloatTensor([1, 2])
    >>> x.dtype, isinstance(x, cr.FloatTensor), isinstance(x, cr.LongTensor), cr.LongTensor(2, 3).shape
    (dtype('float32'), True, False, (2, 3))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...tensor import Tensor
from .constructors import tensor, zeros


class _LegacyType(type):
    """The metaclass of the legacy types: calling one constructs a Tensor; isinstance compares dtypes."""

    dtype: np.dtype

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:  # type: ignore[override]
        if not args:
            return zeros(0, dtype=cls.dtype, device=device)
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return zeros(*args, dtype=cls.dtype, device=device)  # sizes (PyTorch leaves them uninitialised)
        if len(args) == 1:
            return tensor(args[0], dtype=cls.dtype, device=device)
        raise TypeError(f"{cls.__name__}: pass data (a list, an array, a Tensor) or sizes (ints), got {len(args)} "
                        "arguments that are not all ints")

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype


def _legacy(name: str, dtype: Any) -> type:
    return _LegacyType(name, (), {"dtype": np.dtype(dtype), "__doc__": f"PyTorch's ``torch.{name}``: {dtype}."})


LEGACY_TYPES = {name: _legacy(name, dtype) for name, dtype in [
    ("FloatTensor", np.float32), ("DoubleTensor", np.float64), ("HalfTensor", np.float16),
    ("LongTensor", np.int64), ("IntTensor", np.int32), ("ShortTensor", np.int16), ("CharTensor", np.int8),
    ("ByteTensor", np.uint8), ("BoolTensor", np.bool_),
]}
