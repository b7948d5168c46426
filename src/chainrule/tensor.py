"""``Tensor``: a NumPy array that records the operations applied to it.

The class holds state only; its operators and methods are the differentiable functions
of :mod:`chainrule.ops`, attached in :mod:`chainrule.ops.methods`.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

import numpy as np

from ._conversion import from_sequence, numpy_internal_caller
from .core import state

# One clock for creation and in-place changes: a tensor's _stamp is its creation time (so
# parents have smaller stamps than children, which orders the graph), its _version the
# time of its last in-place change. A node whose input has _version > node._stamp was
# computed from a value that no longer exists.
_tick = itertools.count(1).__next__
_last_change = [0]  # stamp of the latest in-place change anywhere: nodes made after it need no check
# In-place changes by memory: id(owning array) -> (array, stamp). Views (slices, reshape,
# .T, detach) share memory with their base, so a change through any of them is seen.
# The arrays are held weakly: an entry goes away with its array, so in-place changes of
# temporaries in a long loop do not pile up.
_changed_memory: dict[int, tuple[weakref.ref, int]] = {}


def _record_change(owner: np.ndarray, stamp: int) -> None:
    key = id(owner)

    def forget(ref: weakref.ref, key: int = key) -> None:
        if _changed_memory.get(key, (None,))[0] is ref:  # not a newer array at the same address
            del _changed_memory[key]

    _changed_memory[key] = (weakref.ref(owner, forget), stamp)


def _owner(arr: np.ndarray) -> np.ndarray:
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def _changed_after(arr: Any, stamp: int) -> bool:
    if not isinstance(arr, np.ndarray):
        return False
    owner = _owner(arr)
    entry = _changed_memory.get(id(owner))
    return entry is not None and entry[0]() is owner and entry[1] > stamp


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


def _check_data(data: Any, name: str = "data") -> None:
    if data is None or isinstance(data, (str, bytes)):
        raise TypeError(f"Tensor: argument '{name}' must be a number or an array of numbers, got {type(data).__name__}")


class TensorMethods:
    """Tensor's operators and op methods, filled from the op declarations (``chainrule.ops.declare``).

    Empty here: this layer knows no op. ``Tensor`` inherits it, so ``Tensor.exp`` is found on it.
    """

    __slots__ = ()


class Tensor(TensorMethods):
    """An N-d array (NumPy-backed) that records operations for automatic differentiation.

    ``Tensor(data, requires_grad=False, dtype=None, label=None)``. Python floats become
    float64, other dtypes are kept (float32 works end to end). The data is copied.

    Example:
        >>> from chainrule import Tensor
        >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> y = (x ** 2).sum()
        >>> y.backward()
        >>> x.grad
        Tensor([2., 4., 6.])

    Calling ``backward()`` twice adds the new gradients to ``.grad`` (as PyTorch does);
    call ``zero_grad()`` (or set ``grad = None``) between steps.
    """

    __slots__ = (
        "data", "grad", "label", "_rg", "_prim", "_args", "_raw", "_kw", "_parents",
        "_stamp", "_version", "_tangents", "_retain", "__weakref__",
    )
    __array_priority__ = 1000

    def __init__(
        self,
        data: Any,
        requires_grad: bool = False,
        dtype: Any = None,
        label: str | None = None,
    ) -> None:
        if isinstance(data, Tensor):
            data = data.data
        _check_data(data)
        try:
            arr = np.array(data, dtype=dtype)
        except (TypeError, ValueError) as e:
            raise TypeError(f"Tensor: argument 'data' could not be read as an array of numbers ({e})") from None
        if arr.dtype == object or arr.dtype.kind in "USV":
            raise TypeError(
                f"Tensor: argument 'data' must hold numbers, got an array of dtype {arr.dtype} "
                f"(element type {type(arr.flat[0]).__name__ if arr.size else 'unknown'})"
            )
        self._init(arr, label)
        if requires_grad:
            self.requires_grad = True

    def _init(self, arr: np.ndarray, label: str | None = None) -> None:
        self.data = arr
        self.grad = None
        self.label = label
        self._rg = False
        self._prim = None
        self._args = ()
        self._kw = None
        self._parents = ()
        self._stamp = _tick()
        self._version = 0
        self._tangents = None
        self._retain = False

    @classmethod
    def _wrap(cls, arr: np.ndarray) -> Tensor:
        """A new Tensor around ``arr`` without copying (internal)."""
        t = cls.__new__(cls)
        t.data = arr
        t.grad = None
        t.label = None
        t._rg = False
        t._prim = None
        t._args = ()
        t._parents = ()
        t._tangents = None
        t._version = 0
        t._stamp = _tick()
        t._retain = False
        return t

    # -- array attributes --------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> _Size:
        """The number of entries (ndarray's ``t.size``); called: the shape (PyTorch's ``t.size()``) or ``t.size(d)``."""
        return _Size(self.data.size, self.data.shape)

    def __len__(self) -> int:
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d Tensor")
        return len(self.data)

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
        """The underlying ndarray (shared, not copied; writes to it are not tracked, as PyTorch's ``.data``)."""
        self._refuse_number_in_transform("numpy()")
        return self.data

    def tolist(self) -> Any:
        """The values as (nested) Python lists of numbers."""
        self._refuse_number_in_transform("tolist()")
        return self.data.tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if state.transform_depth() and (self._tangents or self._rg and state.grad_enabled()):
            # inside grad/jvp/...: a NumPy copy of a traced value would carry no derivative
            raise TypeError(
                f"a Tensor of shape {self.shape} being differentiated was converted to a NumPy array (e.g. by "
                "np.array([...]) or a function without a chainrule rule); its gradient would be lost. Use "
                "chainrule.numpy (cnp.array, cnp.stack) or chainrule functions, or .detach() on purpose"
            )
        if self._rg and state.grad_enabled() and from_sequence(Tensor):
            raise TypeError(
                f"a Tensor of shape {self.shape} that requires grad was put into a new NumPy array (np.array([...]) "
                "or np.asarray([...]) of a list of Tensors); the result is a plain array and the gradient would be "
                "lost. Use chainrule.stack / cnp.array / cnp.stack to build it in the graph, or .detach() the "
                "Tensors (or wrap in chainrule.no_grad()) to read values"
            )
        if self._rg and state.grad_enabled():
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

    def __repr__(self) -> str:
        body = np.array2string(self.data, separator=", ", prefix="Tensor(")
        extra = ""
        if self.data.dtype not in (np.float64, np.int64, np.bool_):
            extra += f", dtype={self.data.dtype}"
        if self._rg:
            extra += ", requires_grad=True" if self._prim is None else f", op={self._prim.name}"
        return f"Tensor({body}{extra})"

    # -- autodiff state ------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if flag and self.data.dtype.kind not in "fc":
            raise TypeError(
                f"Tensor: only floating-point tensors can require grad, this one has dtype {self.data.dtype}; "
                "make it float, e.g. Tensor(data, dtype=float, requires_grad=True)"
            )
        if not flag and self._prim is not None:
            raise RuntimeError("requires_grad can only be switched off on a leaf; use .detach() instead")
        self._rg = bool(flag)

    def requires_grad_(self, flag: bool = True) -> Tensor:
        self.requires_grad = flag
        return self

    @property
    def is_leaf(self) -> bool:
        return self._prim is None

    @property
    def op(self) -> str:
        """Name of the operation that made this tensor ('' for a leaf)."""
        return self._prim.name if self._prim is not None else ""

    @property
    def parents(self) -> tuple[Tensor, ...]:
        """The tensors this one was computed from (those that require grad)."""
        return tuple(p for _, p in self._parents)

    def detach(self) -> Tensor:
        """The same data, cut from the graph (no gradient flows through it)."""
        return Tensor._wrap(self.data)

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after ``backward()``."""
        self._retain = True

    def zero_grad(self) -> None:
        """Forget the accumulated gradient (sets ``.grad`` to None)."""
        self.grad = None

    def graph(self, **kw: Any) -> Any:
        """A picture of the graph behind this value (Jupyter shows it inline); see ``chainrule.draw``."""
        from .graph import draw

        return draw(self, **kw)

    def _check_versions(self) -> None:
        stamp = self._stamp
        if _last_change[0] < stamp:
            return  # nothing anywhere changed in place since this node was made
        if _changed_after(self.data, stamp):
            self._raise_modified(self)
        for a, v in zip(self._args, self._raw):
            if _changed_after(v, stamp):
                self._raise_modified(a)

    def _raise_modified(self, t: Any) -> None:
        raise RuntimeError(
            f"backward: a tensor of shape {np.shape(t.data if isinstance(t, Tensor) else t)} needed by the "
            f"gradient of '{self._prim.name}' was "
            "modified in place after it was used; the gradient would be wrong. Compute on a copy "
            "(t = t.copy()) or make the change before using the tensor."
        )

    def _bump_version(self) -> None:
        self._version = _last_change[0] = _tick()
        owner = _owner(self.data)
        _record_change(owner, self._version)

    def backward(self, gradient: Any = None, create_graph: bool = False, retain_graph: bool | None = None) -> None:
        """Add d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires grad.

        A one-element output needs no ``gradient``; a larger one needs the gradient of some
        final scalar with respect to it (same shape). With ``create_graph=True`` the
        gradients are themselves differentiable Tensors, for derivatives of higher order.
        """
        from .autodiff.backprop import backward

        backward([self], [gradient], create_graph=create_graph)

    # -- in-place changes (tracked by the version counter) -------------------------------
    # PyTorch's rules: an in-place change is allowed under no_grad and on tensors outside
    # the graph; it is refused (not recorded) on a tensor in the graph, or with an operand
    # that is, since writing over a value would lose what its gradient needs.
    def _inplace_guard(self, what: str, value: Any = None) -> None:
        other_traced = isinstance(value, Tensor) and state.is_traced(value)
        if self._tangents and state.any_visible(self._tangents) or (
            other_traced and not (value._rg and state.grad_enabled())
        ):
            raise RuntimeError(
                f"{what}: in-place change of a tensor carrying a forward-mode tangent (inside jvp/jacfwd) would "
                "drop its derivative; write it out of place (x = x + y), even under chainrule.no_grad()"
            )
        if self._rg and state.transform_depth():
            raise RuntimeError(
                f"{what}: in-place change of a Tensor being differentiated inside grad/jacobian/... (even under "
                "no_grad: it may share memory with the caller's array); write it out of place (x = x + y)"
            )
        if not state.grad_enabled() or not (self._rg or other_traced):
            return
        if self._rg and self._prim is None:
            raise RuntimeError(
                f"{what}: a leaf Tensor that requires grad is being used in an in-place operation (PyTorch "
                "refuses this too). For an update step, wrap it in chainrule.no_grad(): "
                "`with cr.no_grad(): p -= lr * p.grad`; otherwise write it out of place (p = p - x)"
            )
        raise RuntimeError(
            f"{what}: in-place change of a tensor in the graph is not recorded by chainrule; the gradient would "
            "be wrong. Write it out of place (h = h + b), or wrap it in chainrule.no_grad() if no gradient "
            "should flow through it"
        )

    def __setitem__(self, index: Any, value: Any) -> None:
        self._inplace_guard("__setitem__", value)
        self.data[_raw_index(index)] = value.data if isinstance(value, Tensor) else value
        self._bump_version()

    def _inplace(self, name: str, ufunc: Any, other: Any) -> Tensor:
        self._inplace_guard(name, other)
        other_data = other.data if isinstance(other, Tensor) else other
        try:
            ufunc(self.data, other_data, out=self.data, casting="same_kind")
        except TypeError as e:
            if "cast" not in str(e) or other_data is None:
                kind = type(other).__name__
                raise TypeError(f"{name}: cannot combine a Tensor with {kind} {other!r:.40} ({e})") from None
            # NumPy's casting error: e.g. an int tensor += a float
            result = np.result_type(self.data, other_data) if ufunc is not np.divide else np.dtype(np.float64)
            raise TypeError(
                f"{name}: the result has dtype {result}, which cannot be stored in place in a Tensor of dtype "
                f"{self.data.dtype} (PyTorch refuses this too); write it out of place (t = t {_SYMBOL[name]} x) "
                "or convert first (t = t.astype(float))"
            ) from None
        except ValueError as e:  # the result would have another shape
            raise ValueError(
                f"{name}: the result of shape {np.broadcast_shapes(np.shape(self.data), np.shape(other_data))} "
                f"does not fit in place in a Tensor of shape {self.shape} ({e}); write it out of place "
                f"(t = t {_SYMBOL[name]} x)"
            ) from None
        self._bump_version()
        return self

    def _inplace_matmul(self, other: Any) -> Tensor:
        self._inplace_guard("__imatmul__", other)
        other_data = other.data if isinstance(other, Tensor) else np.asarray(other)
        result = np.matmul(self.data, other_data)
        if result.shape != self.shape:
            raise ValueError(
                f"__imatmul__: the product has shape {result.shape}, which does not fit in place in a Tensor of "
                f"shape {self.shape}; write it out of place (t = t @ x)"
            )
        if not np.can_cast(result.dtype, self.data.dtype, casting="same_kind"):
            raise TypeError(
                f"__imatmul__: the product has dtype {result.dtype}, which cannot be stored in place in a Tensor of "
                f"dtype {self.data.dtype}; write it out of place (t = t @ x)"
            )
        self.data[...] = result
        self._bump_version()
        return self

    # Python's augmented assignment: changes the tensor itself (p -= lr * p.grad updates p).
    def __iadd__(self, other: Any) -> Tensor:
        return self._inplace("__iadd__", np.add, other)

    def __isub__(self, other: Any) -> Tensor:
        return self._inplace("__isub__", np.subtract, other)

    def __imul__(self, other: Any) -> Tensor:
        return self._inplace("__imul__", np.multiply, other)

    def __itruediv__(self, other: Any) -> Tensor:
        return self._inplace("__itruediv__", np.divide, other)

    def __ifloordiv__(self, other: Any) -> Tensor:
        return self._inplace("__ifloordiv__", np.floor_divide, other)

    def __imod__(self, other: Any) -> Tensor:
        return self._inplace("__imod__", np.remainder, other)

    def __ipow__(self, other: Any) -> Tensor:
        return self._inplace("__ipow__", np.power, other)

    def __imatmul__(self, other: Any) -> Tensor:
        return self._inplace_matmul(other)

    def __iand__(self, other: Any) -> Tensor:
        return self._inplace("__iand__", np.bitwise_and, other)

    def __ior__(self, other: Any) -> Tensor:
        return self._inplace("__ior__", np.bitwise_or, other)

    def __ixor__(self, other: Any) -> Tensor:
        return self._inplace("__ixor__", np.bitwise_xor, other)

    def add_(self, other: Any, alpha: float = 1) -> Tensor:
        """In place: self += alpha * other (allowed under no_grad or outside the graph, as in PyTorch).

        Example:
            >>> import chainrule as cr
            >>> p = cr.Tensor([1.0, 2.0])
            >>> p.add_(cr.Tensor([1.0, 1.0]), alpha=0.5)
            Tensor([1.5, 2.5])
        """
        return self._inplace("add_", np.add, other if alpha == 1 else _scaled(other, alpha))

    def sub_(self, other: Any, alpha: float = 1) -> Tensor:
        """In place: self -= alpha * other."""
        return self._inplace("sub_", np.subtract, other if alpha == 1 else _scaled(other, alpha))

    def mul_(self, other: Any) -> Tensor:
        """In place: self *= other."""
        return self._inplace("mul_", np.multiply, other)

    def div_(self, other: Any) -> Tensor:
        """In place: self /= other."""
        return self._inplace("div_", np.divide, other)

    def pow_(self, other: Any) -> Tensor:
        """In place: self **= other."""
        return self._inplace("pow_", np.power, other)

    def copy_(self, other: Any) -> Tensor:
        """In place: overwrite the values with ``other``'s (broadcast to this shape)."""
        self._inplace_guard("copy_", other)
        np.copyto(self.data, other.data if isinstance(other, Tensor) else other)
        self._bump_version()
        return self

    def fill_(self, value: float) -> Tensor:
        """In place: set every entry to ``value``."""
        self._inplace_guard("fill_")
        self.data.fill(value)
        self._bump_version()
        return self

    def zero_(self) -> Tensor:
        """In place: set every entry to zero."""
        return self.fill_(0)


_SYMBOL = {
    "__iadd__": "+", "__isub__": "-", "__imul__": "*", "__itruediv__": "/", "__ifloordiv__": "//",
    "__imod__": "%", "__ipow__": "**", "__iand__": "&", "__ior__": "|", "__ixor__": "^",
    "add_": "+", "sub_": "-", "mul_": "*", "div_": "/", "pow_": "**",
}


def _scaled(other: Any, alpha: float) -> Any:
    if isinstance(other, Tensor):
        if state.is_traced(other):
            return other  # refused by the guard, with the operand named
        return other.data * alpha
    return np.asarray(other) * alpha


def _raw_index(index: Any) -> Any:
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, tuple):
        return tuple(i.data if isinstance(i, Tensor) else i for i in index)
    return index


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """Shorthand for ``Tensor(data, requires_grad=..., dtype=...)``."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)
