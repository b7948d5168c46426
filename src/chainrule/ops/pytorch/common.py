"""What the PyTorch spellings share: the declared op by name, a method recorded in an op's declaration,
and PyTorch's dim checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.device import add_at as add_at_in_place
from ...core.device import as_array as _as_array
from ...core.device import check_indices, xp_of
from ...tensor import Tensor
from .._define import raw
from ..declare import DECLARATIONS, TENSOR_METHODS, tensor_method
from ..numeric import add_at


def declared(name: str) -> Callable[..., Any]:
    return DECLARATIONS[name].function


def also_method(function_name: str, method_name: str, body: Callable[..., Any] | None = None) -> None:
    """``Tensor.<method_name>`` as a method of the declared op ``function_name`` (recorded in its declaration)."""
    decl = DECLARATIONS[function_name]
    tensor_method(method_name, body or decl.function, owner=function_name)
    made = TENSOR_METHODS[method_name]
    if getattr(made, "__doc__", None) is None:
        made.__doc__ = decl.function.__doc__
    decl.tensor_methods[method_name] = made
    decl.methods = tuple(decl.tensor_methods)


def values_of(self: Any, name: str) -> np.ndarray:
    """The values of a Tensor; inside ``vmap`` (a batched value) a clear refusal, for methods that read them."""
    if not isinstance(self, Tensor):
        raise TypeError(f"vmap: Tensor.{name} reads the values (to choose entries, or in place), which vmap cannot "
                        f"batch; call it outside vmap")
    return raw(self)  # (a jit trace guards what is read: a replay on other values traces again)


def operand_shape(x: Any) -> tuple[int, ...]:
    """The shape of an operand (a Tensor, a batched value inside vmap, an array or a number)."""
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def as_array(x: Any, dtype: Any = None) -> np.ndarray:
    """A Tensor's values, or ``x`` as an array (a device's array stays there), in ``dtype`` when given."""
    return _as_array(raw(x), dtype)  # (raw: a jit trace guards the values read)


def checked_axis(self: Tensor, dim: int, name: str) -> int:
    nd = max(self.ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"{name}: dim {dim} is out of range for a Tensor of {self.ndim} dimensions")
    return dim % nd


def index_along(ndim: int, axis: int, index: Any) -> tuple[Any, ...]:
    return (slice(None),) * axis + (index,)


def scaled(other: Any, alpha: Any) -> Any:
    return other if alpha == 1 else declared("multiply")(other, alpha)

def dims_tuple(dims: tuple[Any, ...]) -> Any:
    return tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims


def overwrite_at(self: Tensor, positions: tuple[Any, ...], values: Any, repeated: str) -> Any:
    """``self`` with ``values`` written at ``positions`` (no gradient to what they replace). Each position is
    written at most once: a repeat would make the result depend on the order, so it raises ``repeated``."""
    # where the values are (a batched value under vmap: its mask is one example's, on the host)
    xp = xp_of(self._data) if isinstance(self, Tensor) else np
    hit = xp.zeros(self.shape, dtype=np.int64)
    add_at_in_place(hit, positions, 1)
    if hit.size and int(hit.max()) > 1:
        raise ValueError(repeated)
    kept = declared("where")(hit.astype(bool), xp.zeros((), dtype=self.dtype), self)
    return add_at(kept, positions, values)


def in_place(name: str, fn: Callable[..., np.ndarray]) -> Callable[..., Tensor]:
    """The method ``name``: ``fn(values, *args)`` written over the values, under the in-place rules."""

    def method(self: Tensor, *args: Any, **kw: Any) -> Tensor:
        values_of(self, name)
        self._inplace_guard(name)
        result = as_array(fn(self._data, *args, **kw))
        if result.shape != self.shape:  # writing it would broadcast (or fail with NumPy's message)
            raise ValueError(f"{name}: the result has shape {result.shape}, which cannot be stored in place in a "
                             f"Tensor of shape {self.shape}")
        if not np.can_cast(result.dtype, self._data.dtype, casting="same_kind"):
            raise TypeError(f"{name}: the result has dtype {result.dtype}, which cannot be stored in place in a "
                            f"Tensor of dtype {self._data.dtype}; write it out of place")
        self._data[...] = result
        self._bump_version()
        return self

    method.__doc__ = f"In place: ``{name[:-1]}`` (allowed under no_grad or outside the graph, as in PyTorch)."
    return method


def check_range(name: str, idx: np.ndarray, axis: int, size: int, wraps: bool = False) -> None:
    """PyTorch's gather, scatter, index_select, index_add, ... take indices in ``[0, size)``: a negative one is
    refused, not wrapped around as NumPy's indexing would. ``wraps``: the op counts negative indices from the end
    (PyTorch's ``index_fill``, ``take_along_dim``), so ``[-size, size)``."""
    low = -size if wraps else 0

    def error() -> IndexError:
        bad = int(idx.min()) if idx.min() < low else int(idx.max())
        wrap = (f"; negative indices do not count from the end here (as in PyTorch): use index % {size} for that"
                if bad < 0 and not wraps else "")
        return IndexError(f"{name}: index {bad} is out of range for dim {axis} of size {size} (valid: {low} to "
                          f"{size - 1}){wrap}")

    check_indices(idx, size, error, low)
