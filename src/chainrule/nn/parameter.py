"""``Parameter``: a Tensor that a ``Module`` finds and an optimiser updates; the default dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.defaults import get_default_dtype, set_default_dtype  # noqa: F401  (nn's names too)
from ..core.device import check_cpu
from ..tensor import Tensor


def resolve_dtype(dtype: Any, where: str, device: Any = None) -> np.dtype:
    """``dtype`` as a floating NumPy dtype (the default when None); clear error otherwise. ``device`` (PyTorch's
    layer argument) must be available: the layer is built on the host, then moved there
    (``nn.module_placement.place``)."""
    check_cpu(where, device)
    if dtype is None:
        return get_default_dtype()
    dt = np.dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"{where}: parameters must be floating point (float32 or float64), got dtype {dt}")
    return dt


class Parameter(Tensor):
    """A Tensor that is a trainable weight: ``requires_grad`` is on and the dtype is float.

    Assigning a Parameter to an attribute of a :class:`~chainrule.nn.Module` registers it,
    so ``module.parameters()`` finds it. Integer data becomes the default float dtype; the
    data is copied.

    Example:
        >>> import numpy as np
        >>> from chainrule.nn import Parameter
        >>> w = Parameter(np.zeros((2, 3), dtype=np.float32))
        >>> w.requires_grad, w.dtype, w.shape
        (True, dtype('float32'), (2, 3))
    """

    __slots__ = ()

    def __init__(self, data: Any, requires_grad: bool = True, dtype: Any = None, label: str | None = None) -> None:
        if isinstance(data, Tensor):
            data = data._data
        if data is None or isinstance(data, (str, bytes)):
            raise TypeError(f"Parameter: data must be a number or an array of numbers, got {type(data).__name__}")
        try:
            arr = np.array(data, dtype=None if dtype is None else np.dtype(dtype))
        except (TypeError, ValueError) as e:
            raise TypeError(f"Parameter: data could not be read as an array of numbers ({e})") from None
        if arr.dtype.kind in "iub" and dtype is None:
            arr = arr.astype(get_default_dtype())
        if arr.dtype.kind != "f":
            raise TypeError(
                f"Parameter: parameters must be floating point (float32 or float64), got dtype {arr.dtype}; "
                "pass dtype=np.float32"
            )
        self._set(arr, None, None)
        self.label = label
        self._requires_grad = bool(requires_grad)

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", prefix="Parameter(")
        extra = "" if self._data.dtype == np.float64 else f", dtype={self._data.dtype}"
        if not self._requires_grad:
            extra += ", requires_grad=False"
        return f"Parameter({body}{extra})"


class Buffer(Tensor):
    """PyTorch's ``nn.Buffer(data, persistent=True)``: assigned to a module attribute, it is registered as a buffer
    (``register_buffer``; saved in ``state_dict`` unless ``persistent=False``).

    Example:
        >>> from chainrule import nn
        >>> class Scaled(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.scale = nn.Buffer([2.0, 3.0])
        >>> list(Scaled().state_dict())
        ['scale']
    """

    __slots__ = ("persistent",)

    def __init__(self, data: Any = None, *, persistent: bool = True) -> None:
        super().__init__(np.zeros(0, dtype=get_default_dtype()) if data is None else data)
        self.persistent = bool(persistent)
