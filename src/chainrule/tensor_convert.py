"""Reading a Tensor's values as Python numbers and NumPy arrays, a mixin of ``Tensor``.

Inside a transform (grad, jvp, ...) a value being differentiated turned into a plain number or
array would lose its derivative: these conversions refuse, with the fix in the message.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ._conversion import from_sequence, numpy_internal_caller
from .core import state
from .core.device import OFF_HOST
from .core.device import of as _device_of


class NotOneElementError(TypeError, ValueError):
    """float(), int(), complex(), bool() or item() of a Tensor with other than one element.

    Both a TypeError (as NumPy's float() of a larger array) and a ValueError (as its bool()).
    """


class _Size(int):
    """An int (the number of entries) that, called, gives the shape as PyTorch's ``size()`` does."""


    def __new__(cls, n: int, shape: tuple[int, ...]) -> _Size:
        self = super().__new__(cls, n)
        self._shape = shape
        return self

    def __call__(self, dim: int | None = None) -> Any:
        if dim is None:
            return self._shape
        try:
            return self._shape[dim]
        except (IndexError, TypeError):
            raise IndexError(f"size({dim!r}): a Tensor of {len(self._shape)} dimensions has no such dim") from None

    def __reduce__(self) -> Any:
        return (int, (int(self),))


def _copy_of_tracked(x: Any) -> None:
    """Tensor(x) of a value in a graph copies the values only, as torch.tensor(x) does: an error inside a
    transform (the derivative would change without a word), a warning elsewhere (PyTorch's habit)."""
    if state.transform_depth() > 0:
        raise ValueError(
            "Tensor(x): x is a value being differentiated, and a new Tensor of it would cut it from the graph, so "
            "the derivative would silently miss that path; use x itself (x.clone() for a copy that keeps the "
            "graph), or cr.stop_gradient(x) / x.detach() to cut it on purpose"
        )
    if state.grad_enabled():
        warnings.warn(
            "Tensor(x) of a Tensor that requires grad copies its values and cuts them from the graph (as "
            "torch.tensor(x) does); use x.clone() to keep the graph, or x.detach().clone() to say the cut is meant",
            UserWarning, stacklevel=3,
        )


def _on_device(what: str, data: Any) -> str:
    name = _device_of(data).name
    return (f"{what}: this Tensor is on the device {name!r}, not in host memory; copy it to the host first with "
            f"t.cpu().numpy() (or keep computing on {name!r})")


def _check_data(data: Any, name: str = "data") -> None:
    if data is None or isinstance(data, (str, bytes)):
        raise TypeError(f"Tensor: argument '{name}' must be a number or an array of numbers, got {type(data).__name__}")


class ConversionMethods:
    """``item``, ``numpy``, ``tolist``, ``__array__``, ``float()``, ``int()``, ... of ``Tensor`` (it inherits them)."""

    __slots__ = ()
    data: np.ndarray
    _requires_grad: bool
    _tangents: Any
    shape: Any

    def _refuse_number_in_transform(self, what: str) -> None:
        """Inside grad/jvp/...: a Python number made from a traced value carries no derivative."""
        if state.transform_depth() and state.is_traced(self):
            raise TypeError(
                f"{what} of a Tensor being differentiated (inside grad, jvp, jacobian, hessian, ...) gives a plain "
                "Python number or array without its derivative; math.* functions do this too (math.exp(x) calls "
                "float(x)). "
                "Use NumPy or chainrule.numpy (cnp) functions on the Tensor instead (np.exp(x), cnp.exp(x), x ** 2), "
                "or .detach() it on purpose"
            )

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        self._refuse_number_in_transform("item()")
        return self._one_value("item()")

    def _one_value(self, what: str) -> Any:
        if self.data.size != 1:
            raise NotOneElementError(
                f"{what}: only a one-element Tensor converts to a number, this one has shape {self.shape}; "
                "reduce it first (.sum(), .mean(), t[0]) or use .tolist()"
            )
        return self.data.item()

    def numpy(self) -> np.ndarray:
        """The underlying ndarray (shared, not copied; writes to it are not tracked, as PyTorch's ``.data``).
        A Tensor on another device (a GPU) refuses, as PyTorch's does: ``t.cpu().numpy()`` copies it to the host."""
        self._refuse_number_in_transform("numpy()")
        if self.data.__class__ in OFF_HOST:
            raise TypeError(_on_device("numpy()", self.data))
        return self.data

    def tolist(self) -> Any:
        """The values as (nested) Python lists of numbers."""
        self._refuse_number_in_transform("tolist()")
        return self.data.tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self.data.__class__ in OFF_HOST:  # NumPy's conversion would copy from the device without a word
            raise TypeError(_on_device("np.asarray()", self.data))
        if dtype is not None and np.dtype(dtype).kind in "biu":
            # to integers or booleans (np.int64(t), np.asarray(t, dtype=int)): nothing differentiable to lose, as
            # autograd's and JAX's integer casts, whose derivative is zero
            return self.data.astype(dtype)
        if state.transform_depth() and (self._tangents or self._requires_grad and state.grad_enabled()):
            # inside grad/jvp/...: a NumPy copy of a traced value would carry no derivative
            raise TypeError(
                f"a Tensor of shape {self.shape} being differentiated was converted to a NumPy array (e.g. by "
                "np.array([...]) or a function without a chainrule rule); its gradient would be lost. Use "
                "chainrule.numpy (cnp.array, cnp.stack) or chainrule functions, or .detach() on purpose"
            )
        if self._requires_grad and state.grad_enabled() and from_sequence(ConversionMethods):
            raise TypeError(
                f"a Tensor of shape {self.shape} that requires grad was put into a new NumPy array (np.array([...]) "
                "or np.asarray([...]) of a list of Tensors); the result is a plain array and the gradient would be "
                "lost. Use chainrule.stack / cnp.array / cnp.stack to build it in the graph, or .detach() the "
                "Tensors (or wrap in chainrule.no_grad()) to read values"
            )
        if self._requires_grad and state.grad_enabled():
            inside = numpy_internal_caller()
            if inside is not None:
                raise TypeError(
                    f"{inside} converted a Tensor of shape {self.shape} that requires grad to a plain NumPy array "
                    "inside NumPy's own code (an argument NumPy does not dispatch on, such as constant_values= "
                    "of np.pad or a value in np.piecewise's funclist); the gradient would be lost. Use a "
                    "chainrule function that is differentiable in that argument, or .detach() it on purpose"
                )
        if dtype is not None and dtype != self.data.dtype:
            return self.data.astype(dtype)
        return self.data.copy() if copy else self.data

    def __float__(self) -> float:
        self._refuse_number_in_transform("float()")
        return float(self._one_value("float()"))

    def __int__(self) -> int:
        self._refuse_number_in_transform("int()")
        return int(self._one_value("int()"))

    def __complex__(self) -> complex:
        self._refuse_number_in_transform("complex()")
        return complex(self._one_value("complex()"))

    def __index__(self) -> int:
        if self.data.dtype.kind not in "iub":
            raise TypeError(f"only integer Tensors can be used as an index, not {self.data.dtype}")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise NotOneElementError(
                f"bool(): the truth value of a Tensor of shape {self.shape} is ambiguous; use .any() or .all()"
            )
        return bool(self.data)

    __hash__ = object.__hash__

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"`` formats a one-element Tensor's value (as PyTorch); no spec gives ``str(t)``."""
        if not spec:
            return str(self)
        return format(self.item(), spec)
