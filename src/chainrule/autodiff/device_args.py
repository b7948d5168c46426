"""What a primitive call needs of devices besides its arrays: a 0-d zero made once per device and dtype (for the
rules' unread arguments), and a failed call's host 0-d constants retried as numbers."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.device import OFF_HOST
from ..core.device import of as _device_of
from ..tensor import Tensor

_DEVICE_ZEROS: dict[tuple[Any, str, Any], Any] = {}  # (array type, device, dtype) -> a 0-d zero made there once


def device_zero(like: Any, dtype: Any) -> Any:
    """A 0-d zero of ``dtype`` on the device of ``like``, made once (each ``zeros`` is a kernel launch on a GPU;
    the rules only read it, through a zero-stride view)."""
    key = (like.__class__, str(getattr(like, "device", "")), dtype)
    zero = _DEVICE_ZEROS.get(key)
    if zero is None:
        zero = _DEVICE_ZEROS[key] = _device_of(like).xp.zeros((), dtype)
    return zero


def host_scalars(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """``args`` with each 0-d host constant (a NumPy array, or a Tensor of one needing no gradient) as a NumPy
    scalar, when a device's values are among them; None when nothing changes. PyTorch takes a 0-dim CPU tensor
    with CUDA ones as a number; CuPy takes NumPy scalars, not 0-d arrays. (Tried only after a call failed.)"""
    vals = [a._data if isinstance(a, Tensor) else a for a in args]
    if not any(v.__class__ in OFF_HOST for v in vals):
        return None
    out, changed = list(args), False
    for i, (a, v) in enumerate(zip(args, vals, strict=True)):
        if v.__class__ is np.ndarray and v.ndim == 0 and not (isinstance(a, Tensor) and a._requires_grad):
            out[i], changed = v[()], True
    return tuple(out) if changed else None
