"""Reading a Tensor's values as Python numbers and NumPy arrays, a mixin of ``Tensor``.

Inside a transform (grad, jvp, ...) a value being differentiated turned into a plain number or
array would lose its derivative: these conversions refuse, with the fix in the message.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..core import state, traces
from ..core.conversion import NO_DERIVATIVE as _NO_DERIVATIVE
from ..core.conversion import called_function, from_sequence, numpy_internal_caller, storing_by_index
from ..core.device import OFF_HOST, flush_checks
from ..core.device import of as _device_of
from ..core.errors import ChainruleWarning
from ..core.traces import reads_values


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
            ChainruleWarning, stacklevel=3,
        )


def _on_device(what: str, data: Any) -> str:
    name = _device_of(data).name
    return (f"{what}: this Tensor is on the device {name!r}, not in host memory; copy it to the host first with "
            f"t.cpu().numpy() (or keep computing on {name!r})")


def _refuse_sizes(data: Any, second: Any, dtype: Any) -> None:
    """``Tensor(2, 3)``: PyTorch's legacy constructor reads sizes; here the second argument is ``requires_grad``."""
    sizes = ", ".join(str(v) for v in (data, second, dtype) if isinstance(v, (int, np.integer)))
    raise TypeError(f"Tensor({sizes}): Tensor(data, requires_grad) takes the values as data and requires_grad "
                    f"as a bool, got requires_grad={second!r}; for a tensor of shape ({sizes}) write "
                    f"cr.zeros({sizes}) or cr.empty({sizes}) (PyTorch's legacy torch.Tensor({sizes}) reads sizes)")


def _check_data(data: Any, name: str = "data") -> None:
    if data is None or isinstance(data, (str, bytes)):
        raise TypeError(f"Tensor: argument '{name}' must be a number or an array of numbers, got {type(data).__name__}")


class ConversionMethods:
    """``item``, ``numpy``, ``tolist``, ``__array__``, ``float()``, ``int()``, ... of ``Tensor`` (it inherits them)."""

    __slots__ = ()
    _data: np.ndarray
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

    def _refuse_store_into_array(self) -> None:
        """``out[i] = t`` with ``out`` a NumPy array: the array keeps the value only, so a gradient through ``out``
        would silently miss ``t``'s path (the call comes from NumPy's C code: the caller's frame is two up)."""
        if self._requires_grad and state.grad_enabled() and storing_by_index(3):
            inside = numpy_internal_caller(3)
            if inside is not None:  # NumPy's own code storing an argument it does not dispatch on
                self._refuse_numpy_internal(inside)
            raise TypeError(
                f"a Tensor of shape {self.shape} that requires grad was written into a NumPy array (out[i] = t); the "
                "array keeps its value only, so the gradient through it would be lost. Build the result in the graph "
                "instead: collect the pieces in a list and cr.stack(pieces) (or cr.concatenate, cr.where). To store "
                "a value only (a loss history), write out[i] = t.item(), or t.detach()"
            )

    def _refuse_numpy_internal(self, inside: str) -> None:
        raise TypeError(
            f"{inside} converted a Tensor of shape {self.shape} that requires grad to a plain NumPy array "
            "inside NumPy's own code (an argument NumPy does not dispatch on, such as constant_values= "
            "of np.pad or a value in np.piecewise's funclist); the gradient would be lost. Use a "
            "chainrule function that is differentiable in that argument, or .detach() it on purpose"
        )

    @reads_values
    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        self._refuse_number_in_transform("item()")
        return self._one_value("item()")

    def _one_value(self, what: str) -> Any:
        if self._data.size != 1:
            raise NotOneElementError(
                f"{what}: only a one-element Tensor converts to a number, this one has shape {self.shape}; "
                "reduce it first (.sum(), .mean(), t[0]) or use .tolist()"
            )
        if self._data.__class__ in OFF_HOST:
            flush_checks()  # (a read from a device: its queued checks are answered first)
        return self._data.item()

    @reads_values
    def numpy(self) -> np.ndarray:
        """The underlying ndarray (shared, not copied; writes to it are not tracked, as PyTorch's ``.data``).
        A Tensor on another device (a GPU) refuses, as PyTorch's does: ``t.cpu().numpy()`` copies it to the host."""
        self._refuse_number_in_transform("numpy()")
        if self._data.__class__ in OFF_HOST:
            raise TypeError(_on_device("numpy()", self._data))
        return self._data

    @reads_values
    def tolist(self) -> Any:
        """The values as (nested) Python lists of numbers."""
        self._refuse_number_in_transform("tolist()")
        if self._data.__class__ in OFF_HOST:
            flush_checks()
        return self._data.tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if traces.open:  # a jit trace checks on replay that the values read are the same (not a decorator: the
            traces.reads_all("__array__()", (self,))  # checks below count the frames up to NumPy's caller)
        if self._data.__class__ in OFF_HOST:  # NumPy's conversion would copy from the device without a word
            raise TypeError(_on_device("np.asarray()", self._data))
        if dtype is not None and np.dtype(dtype).kind in "biu":
            # to integers or booleans (np.int64(t), np.asarray(t, dtype=int)): nothing differentiable to lose, as
            # autograd's and JAX's integer casts, whose derivative is zero
            return self._data.astype(dtype)
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
            self._refuse_store_into_array()
            inside = numpy_internal_caller()
            if inside is not None:
                self._refuse_numpy_internal(inside)
        if dtype is not None and dtype != self._data.dtype:
            return self._data.astype(dtype)
        return self._data.copy() if copy else self._data

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        """The values over DLPack (``torch.tensor(t)``, ``torch.from_dlpack(t)``), with ``__array__``'s checks."""
        arr = self.__array__()
        try:
            return arr.__dlpack__(*args, **kwargs)
        except BufferError:  # NumPy exports no read-only array (a broadcast view): a copy then
            return arr.copy().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._data.__dlpack_device__()

    def __float__(self) -> float:
        self._refuse_number_in_transform("float()")
        self._refuse_store_into_array()
        if self._requires_grad and state.grad_enabled():  # math.exp(t): a float without t's gradient
            fn = called_function(2)
            if getattr(fn, "__module__", None) in ("math", "cmath") and fn.__name__ not in _NO_DERIVATIVE:
                raise TypeError(
                    f"{fn.__module__}.{fn.__name__}() of a Tensor that requires grad gives a plain float, so the "
                    f"gradient through it would be lost. Use chainrule's or NumPy's function on the Tensor "
                    f"(cr.{fn.__name__}(t) or np.{fn.__name__}(t) where they exist); to use the value on purpose, "
                    f"{fn.__module__}.{fn.__name__}(t.item())"
                )
        value = float(self._one_value("float()"))
        if traces.open:  # what reads_values does, inline: the checks above count the frames up to the caller
            traces.read(self, "__float__()", lambda v: float(v.item()), value)
        return value

    def __int__(self) -> int:
        self._refuse_number_in_transform("int()")
        self._refuse_store_into_array()
        value = int(self._one_value("int()"))
        if traces.open:  # what reads_values does, inline: the checks above count the frames up to the caller
            traces.read(self, "__int__()", lambda v: int(v.item()), value)
        return value

    def __complex__(self) -> complex:
        self._refuse_number_in_transform("complex()")
        self._refuse_store_into_array()
        value = complex(self._one_value("complex()"))
        if traces.open:  # what reads_values does, inline: the checks above count the frames up to the caller
            traces.read(self, "__complex__()", lambda v: complex(v.item()), value)
        return value

    @reads_values
    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub":
            raise TypeError(f"only integer Tensors can be used as an index, not {self._data.dtype}")
        return int(self.item())

    @reads_values
    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise NotOneElementError(
                f"bool(): the truth value of a Tensor of shape {self.shape} is ambiguous; use .any() or .all()"
            )
        if self._data.__class__ in OFF_HOST:
            flush_checks()  # (a read from a device: its queued checks are answered first)
        return bool(self._data)

    __hash__ = object.__hash__

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"`` formats a one-element Tensor's value; a 0-d Tensor with no spec is its value, as
        PyTorch's (``f"{t.argmax()}"`` is ``7``); other Tensors with no spec give ``str(t)``."""
        if not spec:
            if self._data.ndim:
                return str(self)
            try:
                return format(self.item(), "")
            except TypeError:  # a value being differentiated (inside grad): shown, not read
                return str(self)
        return format(self.item(), spec)
