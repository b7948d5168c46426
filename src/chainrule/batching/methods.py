"""Batched values get Tensor's operators and methods (they call the same chainrule functions)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import methods as _tensor_methods  # noqa: F401  (Tensor's methods that are not ops)
from ..ops import pointwise
from ..ops import shape as shape_ops
from ..ops.declare import TENSOR_METHODS
from ..ops.index_update import IndexUpdates
from .value import Batched


def _no_in_place(name: str) -> Any:
    def method(self: Batched, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"vmap: {name} changes a value in place; inside vmap use the functional form")

    return method


def _setitem(self: Batched, index: Any, value: Any) -> None:
    raise TypeError(
        "vmap: x[...] = value writes into a batched value in place, which chainrule's vmap cannot do (it keeps "
        "no views of one example, so a view taken earlier would not see the write); write it out of place: "
        "x = x.at[index].set(value)"
    )


def _in_place_method(self: Batched, name: str) -> Any:
    """PyTorch's in-place methods (``mul_``, ``add_``...) on a batched value: a clear refusal, not AttributeError."""
    if name.endswith("_") and not name.startswith("_") and hasattr(Batched, name[:-1]):
        raise TypeError(
            f"vmap: {name} changes a batched value in place, which chainrule's vmap cannot do; use the out-of-place "
            f"form and rebind it: x = x.{name[:-1]}(...)"
        )
    raise AttributeError(f"'Batched' object has no attribute {name!r}")


def _detach(self: Batched) -> Batched:
    v = self.value
    return Batched(v.detach() if hasattr(v, "detach") else v, self.level)


_VALUE_METHODS = {
    "argmax": lambda self, axis=None, keepdims=False: np.argmax(self, axis=axis, keepdims=keepdims),
    "argmin": lambda self, axis=None, keepdims=False: np.argmin(self, axis=axis, keepdims=keepdims),
    "argsort": lambda self, axis=-1, kind=None, order=None: np.argsort(self, axis=axis, kind=kind),
    "any": lambda self, axis=None, keepdims=False: np.any(self, axis=axis, keepdims=keepdims),
    "all": lambda self, axis=None, keepdims=False: np.all(self, axis=axis, keepdims=keepdims),
    "nonzero": lambda self: np.nonzero(self),
    "sort": _no_in_place("sort"),
    "fill": _no_in_place("fill"),
    "searchsorted": _no_in_place("searchsorted"),
    "detach": _detach,
}

_SKIP = {"__array_ufunc__", "__array_function__", "__iter__", "T", "mT", "real", "imag"}  # Batched has its own
for _name, _fn in {**{k: v for k, v in TENSOR_METHODS.items() if k not in _SKIP}, **_VALUE_METHODS}.items():
    setattr(Batched, _name, _fn)
Batched.T = property(lambda self: shape_ops.transpose(self), doc="The transpose of one example.")
Batched.mT = property(lambda self: shape_ops.swapaxes(self, -1, -2), doc="Transpose of the last two axes.")
Batched.real = property(pointwise.real)
Batched.imag = property(pointwise.imag)
Batched.__setitem__ = _setitem
Batched.__getattr__ = _in_place_method
Batched.at = property(IndexUpdates, doc="JAX's functional index update of one example: x.at[idx].set(v).")
