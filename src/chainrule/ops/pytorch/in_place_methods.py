"""PyTorch's in-place methods (``t.relu_()``, ``t.addmm_(a, b)``, ``t.squeeze_()``), all made by one rule from
the out-of-place method of the same name, and recorded in the graph as PyTorch records them.

``t.<op>_(*args)`` is ``t.<op>(*args)`` written into ``t`` itself (the same object):

- outside the graph (under ``no_grad``, or when neither ``t`` nor an operand requires grad): the op on the values,
  written over them;
- in the graph (``h = x @ w; h.relu_()``): the op on a copy of the old values (so that a rule reading them still
  has them), written over ``t``'s memory, and ``t`` takes the op's node: what later uses ``t`` differentiates
  through the change, as in PyTorch.

PyTorch's checks hold: a leaf that requires grad refuses (outside ``no_grad``); a value an earlier op saved and that
the change overwrites makes that op's backward raise (the version clock). Where the op that made the tensor kept
its own output for its rule (``dlogits = F.softmax(logits, 1); dlogits[range(n), y] -= 1``), it is handed the old
values instead, so its backward is right (PyTorch's would refuse). A view, or a tensor that has views, changes
with its base and the base's other views, as PyTorch rebases them (``ops/pytorch/view_writes.py``). One more
refusal: a tensor whose memory something else holds (a ``detach()``ed Tensor, a value a later op kept for its rule)
is not changed in the graph, since chainrule does not carry the change over to it; the error says to write it out
of place. Shape methods (``squeeze_``, ``t_``, ``transpose_``) change the tensor's
shape, not its values.

Example:
    >>> import chainrule as cr
    >>> x = cr.Tensor([-1.0, 2.0], requires_grad=True)
    >>> h = x * 3
    >>> h.relu_() is h
    True
    >>> h.sum().backward(); x.grad
    Tensor([0., 3.])
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ...core import state, traces
from ...core.state import no_grad
from ...tensor import Tensor
from ...tensor import inplace as _tensor_inplace
from ...tensor.inplace import carries_tangent
from ...tensor.views import base_of, family
from ..declare import tensor_method
from .common import declared, in_place, values_of
from .view_writes import record_in_family


def traced_operand(args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """The first operand (nested one level in a list or tuple) that requires grad while grad mode is on, or carries
    a forward-mode tangent, or None."""
    grad = state.grad_enabled()
    for a in (*args, *kw.values()):
        for b in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(b, Tensor) and (b._requires_grad and grad or carries_tangent(b)):
                return b
    return None


def _shared(self: Tensor) -> bool:
    """Does anything besides ``self`` refer to its memory (a view, another Tensor, a value saved by a node)?"""
    if sys.getrefcount(self._data) > 2:  # self's slot, getrefcount's argument
        return True
    base = self._data.base
    while isinstance(base, np.ndarray):  # self a view: its base must be held by the view chain alone
        if sys.getrefcount(base) > 3:  # the view's .base, this name, getrefcount's argument
            return True
        base = base.base
    return False


def _free_kept_output(self: Tensor) -> Any:
    """When the op that made ``self`` kept its output for its rule (softmax, exp): that op is handed a copy of the
    old values, which its rule then reads (the change overwrites only ``self``'s memory); returns the copy, or None
    when the op kept nothing of ``self``. PyTorch's backward would refuse such a graph later; here it is right."""
    node = self._node
    if node is None:
        return None
    ans = node.ans
    if ans is self._data:
        node.ans = self._data.copy()
        return node.ans
    if isinstance(ans, tuple) and any(a is self._data for a in ans):
        kept = self._data.copy()
        node.ans = tuple(kept if a is self._data else a for a in ans)
        return kept
    return None


def record(self: Tensor, name: str, compute: Callable[[Tensor], Any], operand: Any = None) -> Tensor:
    """``self`` becomes ``compute(old)`` in the graph: the values written over its memory, the node taken on."""
    self._inplace_guard(name, operand, recorded=True)  # a leaf that requires grad, a tangent, inside a transform
    if traces.current() is not None:
        raise RuntimeError(f"{name}: an in-place change of a tensor in the graph inside jit is not recorded by the "
                           f"trace; write it out of place (h = h.{name[:-1]}(...))")
    root = base_of(self)
    if root is not None or getattr(self, "_views", None) and family(self):  # a view, or a base that has live views
        if root is None:
            _free_kept_output(self)
        return record_in_family(self, self if root is None else root, name, compute, _fitted,
                                lambda: _shared_error(name, self))
    kept = _free_kept_output(self)
    if _shared(self):
        raise _shared_error(name, self)
    kept = self._data.copy() if kept is None else kept
    old = Tensor._linked(kept, self._node, self._index) if self._node is not None else Tensor._wrap(kept)
    if self._tangents:
        old._tangents = self._tangents
    result = _fitted(name, self, compute(old))
    retained = self.retains_grad
    if retained:  # the grad kept is the new value's (PyTorch's): the old node stops writing it
        self._node.outputs[self._index][1] = False
    self._data[...] = result._data
    self._bump_version()
    self._node, self._index, self._stamp = result._node, result._index, result._stamp
    self._requires_grad = result._requires_grad
    if self._tangents or result._tangents:
        self._tangents = result._tangents
    if retained:
        self.retain_grad()
    return self


def _shared_error(name: str, self: Tensor) -> RuntimeError:
    fix = ("h = h.at[index].set(v), or cr.where(mask, v, h)" if name == "__setitem__" else "h = h + b"
           if name.startswith("__i") else f"h = h.{name[:-1]}(...)")
    if self._node is None and carries_tangent(self):  # most likely jvp's input, which may be the caller's array
        return RuntimeError(
            f"{name}: in-place change of a tensor carrying a forward-mode tangent (inside jvp/jacfwd) whose memory "
            f"is shared (jvp's input may be the caller's array, or another Tensor holds it); write it out of place "
            f"({fix}), even under chainrule.no_grad()")
    return RuntimeError(
        f"{name}: in-place change of a tensor in the graph whose memory is shared (another Tensor not made as a "
        "view of it, an array handed out by .numpy(), or a value an earlier op saved for its gradient): chainrule "
        f"does not carry the change over to them. Write it out of place ({fix}), or wrap it in "
        "chainrule.no_grad() if no gradient should flow through it")


def _fitted(name: str, self: Tensor, result: Any) -> Tensor:
    result = result if isinstance(result, Tensor) else Tensor._wrap(np.asarray(result))
    if result.shape != self.shape:
        raise ValueError(f"{name}: the result has shape {tuple(result.shape)}, which cannot be stored in place in a "
                         f"Tensor of shape {tuple(self.shape)}; write it out of place")
    if result.dtype != self.dtype:
        if not np.can_cast(result.dtype, self.dtype, casting="same_kind"):
            raise TypeError(f"{name}: the result has dtype {result.dtype}, which cannot be stored in place in a "
                            f"Tensor of dtype {self.dtype} (PyTorch refuses this too); write it out of place")
        result = declared("astype")(result, self.dtype) if result._requires_grad else result
    return result


def in_place_by(name: str, fn: Callable[..., Any]) -> Callable[..., Tensor]:
    """``name(t, *args)``: ``fn(t, *args)`` (out of place) written into ``t`` itself, recorded in the graph."""

    def on_values(values: np.ndarray, *args: Any, **kw: Any) -> Any:
        with no_grad():
            return fn(Tensor._wrap(values), *args, **kw)

    values_path = in_place(name, on_values)

    def method(self: Tensor, *args: Any, **kw: Any) -> Tensor:
        values_of(self, name)
        operand = traced_operand(args, kw)
        if operand is not None or state.grad_enabled() and self._requires_grad or carries_tangent(self):
            return record(self, name, lambda old: fn(old, *args, **kw), operand)
        return values_path(self, *args, **kw)

    return method


def in_place_of(name: str) -> Callable[..., Tensor]:
    """``Tensor.<name>_``: the method ``<name>`` written into the tensor itself (recorded in the graph)."""
    method = in_place_by(f"{name}_", lambda t, *args, **kw: getattr(t, name)(*args, **kw))
    method.__doc__ = (f"In place: ``t.{name}(...)`` written into ``t`` (PyTorch's ``{name}_``; recorded in the graph "
                      "as in PyTorch, see chainrule.ops.pytorch.in_place_methods).")
    return method


def reshaped_in_place(name: str) -> Callable[..., Tensor]:
    """``Tensor.<name>_`` for a shape method (``squeeze``, ``t``, ``transpose``): the tensor takes the new shape
    (a view of the same memory); in the graph it takes the op's node."""

    def method(self: Tensor, *args: Any, **kw: Any) -> Tensor:
        values_of(self, f"{name}_")
        if state.grad_enabled() and self._requires_grad or carries_tangent(self):
            self._inplace_guard(f"{name}_", recorded=True)
            result = getattr(self, name)(*args, **kw)
            self._node, self._index, self._stamp = result._node, result._index, result._stamp
            self._tangents = result._tangents
        else:
            self._inplace_guard(f"{name}_")
            with no_grad():
                result = getattr(self, name)(*args, **kw)
        self._data = result._data
        return self

    method.__doc__ = f"In place: this tensor takes the shape of ``t.{name}(...)`` (PyTorch's ``{name}_``)."
    return method


# PyTorch's in-place methods of ops chainrule has (each ``<name>_`` from the method ``<name>``)
VALUE_METHODS = (
    # unary math
    "relu", "sigmoid", "tanh", "log", "log1p", "log2", "log10", "expm1", "exp2", "sin", "cos", "tan", "sinh", "cosh",
    "asin", "acos", "atan", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
    "erf", "erfc", "erfinv", "lgamma", "digamma", "sinc", "deg2rad", "rad2deg", "reciprocal", "rsqrt", "floor",
    "ceil", "round", "trunc", "fix", "frac", "sign", "sgn", "absolute", "negative", "nan_to_num", "logit",
    "exp", "neg", "sqrt", "abs", "square",
    # with operands
    "clamp", "clamp_min", "clamp_max", "clip", "lerp", "addcmul", "addcdiv", "masked_fill", "index_fill", "index_add",
    "scatter", "scatter_add", "index_put", "fmod", "remainder", "atan2", "arctan2", "hypot", "copysign", "xlogy",
    "true_divide", "multiply", "subtract", "divide", "floor_divide", "heaviside", "logaddexp",
    "addmm", "addbmm", "addmv", "addr", "baddbmm", "cumsum", "cumprod", "tril", "triu",
    # comparisons and logic (1 or 0 written in the tensor's dtype, as PyTorch)
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    "conj_physical",
    # integers and special functions
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "gcd",
    "lcm", "ldexp", "nextafter", "i0", "igamma", "igammac", "polygamma", "mvlgamma",
)
SHAPE_METHODS = ("squeeze", "unsqueeze", "t", "transpose", "swapaxes", "swapdims")

for _name in VALUE_METHODS:
    tensor_method(f"{_name}_", in_place_of(_name))
for _name in SHAPE_METHODS:
    tensor_method(f"{_name}_", reshaped_in_place(_name))
_float_power_ = in_place_of("float_power")


@tensor_method("float_power_")
def float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In place: ``t.float_power(exponent)``, computed in double precision, so ``t`` must be float64 (or
    complex128), as PyTorch requires."""
    if np.dtype(self.dtype) not in (np.float64, np.complex128):
        raise RuntimeError(f"float_power_: the base has dtype {self.dtype} but the operation's result requires "
                           "dtype float64 (PyTorch's rule); convert first (t = t.double()) or write it out of place")
    return _float_power_(self, exponent)


def _add(old: Tensor, other: Any, alpha: Any) -> Any:
    return old + (other if alpha == 1 else other * alpha)


def _sub(old: Tensor, other: Any, alpha: Any) -> Any:
    return old - (other if alpha == 1 else other * alpha)


def _set_at(old: Tensor, index: Any, value: Any) -> Any:
    """``h[index] = value`` as a new value: ``h.at[index].set(value)`` (JAX's update; differentiable in both)."""
    return old.at[index].set(value)


def _mul(old: Tensor, other: Any, alpha: Any) -> Any:
    return old * other


def _div(old: Tensor, other: Any, alpha: Any) -> Any:
    return old / other


def _pow(old: Tensor, other: Any, alpha: Any) -> Any:
    return old ** other


def _fill(old: Tensor, value: Any, alpha: Any) -> Any:
    return old.at[...].set(value.detach() if isinstance(value, Tensor) else value)


def _copy(old: Tensor, other: Any, alpha: Any) -> Any:
    other = other if isinstance(other, Tensor) else Tensor._wrap(np.asarray(other, dtype=old.dtype))
    return declared("broadcast_to")(other, tuple(old.shape))


# the in-place methods of ``tensor/inplace.py`` (``add_``, ``t += x``, ``copy_``) record through this in the graph
_tensor_inplace.IN_GRAPH.update(
    record=record, add_=_add, sub_=_sub, __iadd__=_add, __isub__=_sub, mul_=_mul, __imul__=_mul, div_=_div,
    __itruediv__=_div, pow_=_pow, __ipow__=_pow, copy_=_copy, __setitem__=_set_at, fill_=_fill)


# torch.relu_(t), torch.exp_(t), ...: PyTorch's top-level in-place functions, the methods on their first argument
TOPLEVEL = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_",
    "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_",
    "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "log10_", "log1p_", "log2_", "log_",
    "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_",
    "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "index_put_",
    "fill_", "zero_", "detach_",
)
