"""In-place changes of a Tensor (``t += x``, ``p.add_(g, alpha=-lr)``, ``t[i] = v``), a mixin of ``Tensor``.

PyTorch's rules: an in-place change is allowed under ``no_grad`` and on tensors outside the
graph; it is refused on a leaf that requires grad. In the graph (or with an operand that is), ``add_``,
``copy_``, ``t[i] = v`` and ``h += x`` are recorded by the ops layer (``IN_GRAPH``, from
``chainrule.ops.pytorch.in_place_methods``), the others (``fill_``, ``h //= x``) refused, since writing
over a value would lose what its gradient needs. Every change is recorded on the version
clock (:mod:`chainrule.core.clock`) against the memory written, so a graph that saved the old
values refuses to differentiate them.
"""

from __future__ import annotations

import operator
import sys
from typing import Any

import numpy as np

from ..core import clock, state
from .views import check_view_write


class InPlaceMethods:
    """The in-place methods of ``Tensor`` (it inherits them; ``isinstance(x, InPlaceMethods)`` means a Tensor)."""

    __slots__ = ()
    _data: np.ndarray
    _requires_grad: bool
    _node: Any
    _tangents: Any
    shape: Any

    def _bump_version(self) -> None:
        """Record an in-place change of this tensor's memory on the version clock (``_version`` grows)."""
        clock.record_change(self._data)

    def _inplace_guard(self, what: str, value: Any = None, recorded: bool = False) -> None:
        """Refuse an in-place change PyTorch refuses; ``recorded``: the caller records it in the graph, so a tensor
        in the graph is allowed (a leaf that requires grad is not)."""
        if self._data.__class__ is np.ndarray and (not self._data.flags.writeable or _overlaps(self._data)):
            raise RuntimeError(
                f"{what}: this Tensor's values cannot be written in place: more than one of its entries may refer to "
                "one memory location (an expand()ed tensor, unfold()'s overlapping windows) or they are a read-only "
                "array's. clone() it first (PyTorch refuses this too)"
            )
        check_view_write(what, self)
        other_traced = isinstance(value, InPlaceMethods) and state.is_traced(value)
        if not recorded and (carries_tangent(self) or (
            other_traced and not (value._requires_grad and state.grad_enabled())
        )):
            raise RuntimeError(
                f"{what}: in-place change of a tensor carrying a forward-mode tangent (inside jvp/jacfwd) would "
                "drop its derivative; write it out of place (x = x + y), even under chainrule.no_grad()"
            )
        if self._requires_grad and self._node is None and state.transform_depth():
            raise RuntimeError(
                f"{what}: in-place change of a Tensor being differentiated inside grad/jacobian/... (even under "
                "no_grad: it may share memory with the caller's array); write it out of place (x = x + y)"
            )
        if not state.grad_enabled() or not (self._requires_grad or other_traced):
            return
        if self._requires_grad and self._node is None:
            raise RuntimeError(
                f"{what}: a leaf Tensor that requires grad is being used in an in-place operation (PyTorch "
                "refuses this too). For an update step, wrap it in chainrule.no_grad(): "
                "`with cr.no_grad(): p -= lr * p.grad`; otherwise write it out of place (p = p - x)"
            )
        if recorded:
            return
        fix = ("h = cr.where(mask, value, h) or h.masked_fill(mask, value) for a mask, cr.add_at(h, index, v) "
               "to add at indices, or build the pieces and cr.concatenate/cr.stack them" if what == "__setitem__"
               else "h = h + b")
        shared = (" (`h += b` becomes `h = h + b` when nothing else refers to h or its memory; here another name, "
                  "a list, a view of h or a saved value does, and would keep the old value)") if what.startswith(
                      "__i") else ""
        raise RuntimeError(
            f"{what}: in-place change of a tensor in the graph is not recorded by chainrule; the gradient would "
            f"be wrong{shared}. Write it out of place ({fix}), or wrap it in chainrule.no_grad() if no gradient "
            "should flow through it"
        )

    def __setitem__(self, index: Any, value: Any) -> None:
        at = _raw_index(index)
        split = INDEX_PARTS.get("torch")  # t[1, :, idx] = v writes t[1][:, idx], as PyTorch (index_reading)
        parts = split(at) if split is not None else None
        if self._in_graph("__setitem__", value):  # h[i] = v in the graph: recorded (h.at[i].set(v) into h)
            set_at = IN_GRAPH["__setitem__"]
            rule = (lambda old: set_at(old, at, value)) if parts is None else (
                lambda old: set_at(old, parts[0], set_at(old[parts[0]], parts[1], value)))
            IN_GRAPH["record"](self, "__setitem__", rule, value)
            return
        self._inplace_guard("__setitem__", value)
        written = value._data if isinstance(value, InPlaceMethods) else value
        if parts is None:
            self._data[at] = written
        else:
            self._data[parts[0]][parts[1]] = written  # (the integers alone give a view: the write lands in self)
        clock.record_change(self._data)

    def _rebinds(self, name: str, other: Any) -> bool:
        """Does ``t += x`` (an operator, not ``add_``) give ``t`` a new value instead of writing in place?

        PyTorch records an in-place change of a tensor in the graph (``loss = 0`` then ``loss += term`` in a
        loop); chainrule gives the name the out-of-place result (``loss = loss + term``), which is the same
        whenever nothing else refers to the tensor or its memory. When something does (another name, a list,
        a view, a node that saved the values), the two differ and the change is refused, as before.
        """
        if not name.startswith("__i") or not (state.grad_enabled() or state.transform_depth()):
            return False
        if self._tangents and state.any_visible(self._tangents):
            return False
        traced = self._requires_grad or isinstance(other, InPlaceMethods) and state.is_traced(other)
        if not traced or self._requires_grad and self._node is None:
            return False  # outside the graph (an ordinary in-place change), or a leaf (refused, as in PyTorch)
        if getattr(self, "_base", None) is not None and not sys.getrefcount(self) <= _TEMPORARY_REFS:
            return False  # a view: the change reaches its base (tensor/views.py), unless only the interpreter holds
            # it (`out[i] += x[i]`, which Python then assigns to out[i] itself)
        # references to this tensor: the caller's name (and its operand on the stack, on most Pythons), self in
        # __iadd__, _inplace and here, getrefcount's argument: counted once by _Probe; to its array: the data
        # slot and getrefcount's argument
        return sys.getrefcount(self) <= _SOLE_TENSOR_REFS and sys.getrefcount(self._data) <= 2

    def _rebound(self, name: str, ufunc: Any, other: Any) -> Any:
        """``self <op> other`` out of place, in the graph, with the shape and dtype in place would keep."""
        result = _OUT_OF_PLACE[ufunc](self, other)
        if result.shape != self.shape:
            raise ValueError(
                f"{name}: the result of shape {result.shape} does not fit in place in a Tensor of shape "
                f"{self.shape}; write it out of place (t = t {_SYMBOL[name]} x)"
            )
        if result._data.dtype != self._data.dtype:
            if not np.can_cast(result._data.dtype, self._data.dtype, casting="same_kind"):
                raise TypeError(
                    f"{name}: the result has dtype {result._data.dtype}, which cannot be stored in place in a Tensor "
                    f"of dtype {self._data.dtype} (PyTorch refuses this too); write it out of place "
                    f"(t = t {_SYMBOL[name]} x) or convert first (t = t.astype(float))"
                )
            result = result.astype(self._data.dtype)
        return result

    def _in_graph(self, name: str, other: Any, *operands: Any) -> bool:
        """Is this change one the graph records (ops/pytorch/in_place_methods.py, registered in IN_GRAPH)?"""
        if name not in IN_GRAPH:
            return False
        if state.grad_enabled() and (self._requires_grad or isinstance(other, InPlaceMethods) and other._requires_grad):
            return True
        return carries_tangent(self) or carries_tangent(other)  # forward mode: the tangents are carried over

    def _inplace(self, name: str, ufunc: Any, other: Any, alpha: Any = 1) -> Any:
        if ufunc in _OUT_OF_PLACE and self._rebinds(name, other):
            return self._rebound(name, ufunc, other)
        if self._in_graph(name, other):
            rule = IN_GRAPH[name]
            return IN_GRAPH["record"](self, name, lambda old: rule(old, other, alpha), other)
        other = other if alpha == 1 else _scaled(other, alpha)
        self._inplace_guard(name, other)
        other_data = other._data if isinstance(other, InPlaceMethods) else other
        try:
            ufunc(self._data, other_data, out=self._data, casting="same_kind")
        except TypeError as e:
            if "cast" not in str(e) or other_data is None:
                kind = type(other).__name__
                raise TypeError(f"{name}: cannot combine a Tensor with {kind} {other!r:.40} ({e})") from None
            # NumPy's casting error: e.g. an int tensor += a float
            result = np.result_type(self._data, other_data) if ufunc is not np.divide else np.dtype(np.float64)
            raise TypeError(
                f"{name}: the result has dtype {result}, which cannot be stored in place in a Tensor of dtype "
                f"{self._data.dtype} (PyTorch refuses this too); write it out of place (t = t {_SYMBOL[name]} x) "
                "or convert first (t = t.astype(float))"
            ) from None
        except ValueError as e:  # the result would have another shape
            raise ValueError(
                f"{name}: the result of shape {np.broadcast_shapes(np.shape(self._data), np.shape(other_data))} "
                f"does not fit in place in a Tensor of shape {self.shape} ({e}); write it out of place "
                f"(t = t {_SYMBOL[name]} x)"
            ) from None
        clock.record_change(self._data)
        return self

    def _inplace_matmul(self, other: Any) -> Any:
        self._inplace_guard("__imatmul__", other)
        other_data = other._data if isinstance(other, InPlaceMethods) else np.asarray(other)
        result = np.matmul(self._data, other_data)
        if result.shape != self.shape:
            raise ValueError(
                f"__imatmul__: the product has shape {result.shape}, which does not fit in place in a Tensor of "
                f"shape {self.shape}; write it out of place (t = t @ x)"
            )
        if not np.can_cast(result.dtype, self._data.dtype, casting="same_kind"):
            raise TypeError(
                f"__imatmul__: the product has dtype {result.dtype}, which cannot be stored in place in a Tensor of "
                f"dtype {self._data.dtype}; write it out of place (t = t @ x)"
            )
        self._data[...] = result
        clock.record_change(self._data)
        return self

    # Python's augmented assignment: changes the tensor itself (p -= lr * p.grad updates p).
    def __iadd__(self, other: Any) -> Any:
        return self._inplace("__iadd__", np.add, other)

    def __isub__(self, other: Any) -> Any:
        return self._inplace("__isub__", np.subtract, other)

    def __imul__(self, other: Any) -> Any:
        return self._inplace("__imul__", np.multiply, other)

    def __itruediv__(self, other: Any) -> Any:
        return self._inplace("__itruediv__", np.divide, other)

    def __ifloordiv__(self, other: Any) -> Any:
        return self._inplace("__ifloordiv__", np.floor_divide, other)

    def __imod__(self, other: Any) -> Any:
        return self._inplace("__imod__", np.remainder, other)

    def __ipow__(self, other: Any) -> Any:
        return self._inplace("__ipow__", np.power, other)

    def __imatmul__(self, other: Any) -> Any:
        return self._inplace_matmul(other)

    def __iand__(self, other: Any) -> Any:
        return self._inplace("__iand__", np.bitwise_and, other)

    def __ior__(self, other: Any) -> Any:
        return self._inplace("__ior__", np.bitwise_or, other)

    def __ixor__(self, other: Any) -> Any:
        return self._inplace("__ixor__", np.bitwise_xor, other)

    def add_(self, other: Any, alpha: float = 1) -> Any:
        """In place: self += alpha * other (allowed under no_grad or outside the graph, as in PyTorch).

        Example:
            >>> import chainrule as cr
            >>> p = cr.Tensor([1.0, 2.0])
            >>> p.add_(cr.Tensor([1.0, 1.0]), alpha=0.5)
            Tensor([1.5, 2.5])
        """
        return self._inplace("add_", np.add, other, alpha)

    def sub_(self, other: Any, alpha: float = 1) -> Any:
        """In place: self -= alpha * other."""
        return self._inplace("sub_", np.subtract, other, alpha)

    def mul_(self, other: Any) -> Any:
        """In place: self *= other."""
        return self._inplace("mul_", np.multiply, other)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Any:
        """In place: self /= other (``rounding_mode="trunc"`` or ``"floor"``: PyTorch's rounded quotient)."""
        if rounding_mode is not None:
            return self.divide_(other, rounding_mode=rounding_mode)
        return self._inplace("div_", np.divide, other)

    def pow_(self, other: Any) -> Any:
        """In place: self **= other."""
        return self._inplace("pow_", np.power, other)

    def copy_(self, other: Any) -> Any:
        """In place: overwrite the values with ``other``'s (broadcast to this shape)."""
        if self._in_graph("copy_", other):
            return IN_GRAPH["record"](self, "copy_", lambda old: IN_GRAPH["copy_"](old, other, 1), other)
        self._inplace_guard("copy_", other)
        np.copyto(self._data, other._data if isinstance(other, InPlaceMethods) else other)
        clock.record_change(self._data)
        return self

    def fill_(self, value: float) -> Any:
        """In place: set every entry to ``value``."""
        if self._in_graph("fill_", None):  # recorded: the old values get no gradient (z[:, 0].zero_())
            return IN_GRAPH["record"](self, "fill_", lambda old: IN_GRAPH["fill_"](old, value, 1))
        self._inplace_guard("fill_")
        self._data.fill(value)
        clock.record_change(self._data)
        return self

    def zero_(self) -> Any:
        """In place: set every entry to zero."""
        return self.fill_(0)


_SYMBOL = {
    "__iadd__": "+", "__isub__": "-", "__imul__": "*", "__itruediv__": "/", "__ifloordiv__": "//",
    "__imod__": "%", "__ipow__": "**", "__iand__": "&", "__ior__": "|", "__ixor__": "^",
    "add_": "+", "sub_": "-", "mul_": "*", "div_": "/", "pow_": "**",
}


# in the graph, ``h.add_(x)``, ``h += x`` (when h cannot be rebound) and ``h.copy_(x)`` are recorded by the ops layer:
# IN_GRAPH["record"] and the out-of-place rule of each name, registered by chainrule.ops.pytorch.in_place_methods
IN_GRAPH: dict[str, Any] = {}
# how PyTorch splits an index that NumPy reads otherwise (integers first): registered by chainrule.ops.shape
INDEX_PARTS: dict[str, Any] = {}


# the out-of-place operators a Python augmented assignment (``t += x``) falls back to in the graph
_OUT_OF_PLACE = {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
                 np.divide: operator.truediv, np.power: operator.pow}


class _Probe:
    """The same call path as ``t += x`` on a Tensor (``__iadd__`` -> ``_inplace`` -> ``_rebinds``), to count the
    references a tensor held by one name has there on this Python (the interpreter's stack may or may not hold
    one of its own)."""

    def __iadd__(self, other: Any) -> Any:
        return self._inplace(other)

    def _inplace(self, other: Any) -> Any:
        return self._rebinds(other)

    def _rebinds(self, other: Any) -> int:
        return sys.getrefcount(self)


def _sole_references() -> int:
    probe = _Probe()
    probe += 0
    return probe  # type: ignore[return-value]  (the count, rebound by +=)


class _Fresh:
    """A container whose items are new objects, as a Tensor's are (``t[i]`` is a new view)."""

    def __getitem__(self, index: Any) -> _Probe:
        return _Probe()

    def __setitem__(self, index: Any, count: int) -> None:
        self.count = count


def _temporary_references() -> int:
    fresh = _Fresh()
    fresh[0] += 0
    return fresh.count


_SOLE_TENSOR_REFS = _sole_references()  # 6 on CPython 3.11 (see InPlaceMethods._rebinds; tests/test_inplace.py)
# references of a temporary in `t[i] += x` (5 on CPython 3.11), or 0 where a name is not told from it (then no view is
# given the out-of-place result)
_TEMPORARY_REFS = _temporary_references() if _temporary_references() < _SOLE_TENSOR_REFS else 0


def carries_tangent(t: Any) -> bool:
    """Does ``t`` (anything) carry a forward-mode tangent of a level visible now (inside jvp)?"""
    return isinstance(t, InPlaceMethods) and bool(t._tangents) and state.any_visible(t._tangents)


def _scaled(other: Any, alpha: float) -> Any:
    if isinstance(other, InPlaceMethods):
        if state.is_traced(other):
            return other  # refused by the guard, with the operand named
        return other._data * alpha
    return np.asarray(other) * alpha


def _raw_index(index: Any) -> Any:
    if isinstance(index, InPlaceMethods):
        return index._data
    if isinstance(index, tuple):
        return tuple(i._data if isinstance(i, InPlaceMethods) else i for i in index)
    return index


def _overlaps(a: np.ndarray) -> bool:
    """Whether entries of ``a`` are one memory location by a step of 0 along an axis (an expanded view, as_strided
    with a 0 stride): PyTorch's internal-overlap refusal. (Other overlapping layouts, such as unfold's windows,
    PyTorch lets through, and so does this.)"""
    return not a.flags.c_contiguous and any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape))
