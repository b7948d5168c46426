"""Tensor's operators and methods, and NumPy's dispatch onto chainrule functions."""

from __future__ import annotations

import inspect
import sys
from typing import Any

import numpy as np

from ..core.state import is_traced
from ..tensor import Tensor
from . import arrays as A
from . import contraction as C
from . import cumulative as CU
from . import elementwise as E
from . import pointwise as P
from . import selection as SEL
from . import shape as S
from ._define import NUMPY_FUNCTIONS, NUMPY_UFUNCS, implements, raw, wrap_like
from .torch_methods import TORCH_METHODS, torch_argsort, torch_sort, with_dim


def _reflect(fn: Any) -> Any:
    return lambda self, other: fn(other, self)


def _shape_args(shape: tuple[Any, ...]) -> Any:
    return shape[0] if len(shape) == 1 else shape


def _sort_in_place(self: Tensor, axis: int = -1, kind: Any = None, order: Any = None, *, dim: Any = None,
                   descending: Any = None, stable: Any = None) -> Any:
    """Sort in place, as ndarray.sort (only outside the graph); ``np.sort(t)`` is the differentiable sort.

    With PyTorch's keywords (``dim=``, ``descending=``, ``stable=``) it is PyTorch's ``sort``: a
    differentiable sorted copy and the indices, as ``(values, indices)``.
    """
    if dim is not None or descending is not None or stable is not None:
        return torch_sort(self, axis=-1 if dim is None else dim, descending=bool(descending))
    self._inplace_guard("sort (in place; use np.sort(t) or chainrule.sort(t) for a differentiable sorted copy)")
    self.data.sort(axis=axis, kind=kind)
    self._bump_version()


def _fill(self: Tensor, value: Any) -> None:
    """Set every entry to ``value`` in place, as ndarray.fill (only outside the graph)."""
    self.fill_(value)


def _on_values(fn: Any, *args: Any) -> Any:
    """Integer and boolean operators: no gradient, answer on the values."""
    if _traced(args) and any(np.result_type(raw(a)).kind in "fc" for a in args):
        raise TypeError(f"{fn.__name__}: not defined for floating-point tensors")
    return wrap_like(fn(*[raw(a) for a in args]), *args)


_METHODS = {
    "__add__": E.add, "__radd__": _reflect(E.add),
    "__sub__": E.subtract, "__rsub__": _reflect(E.subtract),
    "__mul__": E.multiply, "__rmul__": _reflect(E.multiply),
    "__truediv__": E.divide, "__rtruediv__": _reflect(E.divide),
    "__pow__": E.power, "__rpow__": _reflect(E.power),
    "__matmul__": C.matmul, "__rmatmul__": _reflect(C.matmul),
    "__neg__": E.negative, "__pos__": E.positive, "__abs__": E.abs,
    "__lt__": E.less, "__le__": E.less_equal, "__gt__": E.greater, "__ge__": E.greater_equal,
    "__eq__": E.equal, "__ne__": E.not_equal,
    "__getitem__": S.getitem,
    "exp": E.exp, "log": E.log, "log1p": E.log1p, "expm1": E.expm1, "sqrt": E.sqrt,
    "sin": E.sin, "cos": E.cos, "tan": E.tan, "tanh": E.tanh, "sigmoid": E.sigmoid, "relu": E.relu,
    "abs": E.abs, "sign": E.sign, "square": E.square,
    "clip": E.clip, "maximum": E.maximum, "minimum": E.minimum,
    "dot": C.dot, "matmul": C.matmul,
    "reshape": lambda self, *shape: S.reshape(self, _shape_args(shape)),
    "swapaxes": S.swapaxes,
    "expand_dims": S.expand_dims, "broadcast_to": S.broadcast_to, "ravel": S.ravel,
    "astype": S.astype, "copy": S.copy,
    "cumsum": with_dim(lambda self, axis=None, dtype=None, out=None: CU.cumsum(self, axis, dtype, out), "cumsum"),
    "cumprod": with_dim(lambda self, axis=None, dtype=None, out=None: CU.cumprod(self, axis, dtype, out), "cumprod"),
    "diagonal": lambda self, offset=0, axis1=0, axis2=1: A.diagonal(self, offset, axis1, axis2),
    "trace": lambda self, offset=0, axis1=0, axis2=1, dtype=None, out=None: C.trace(self, offset, axis1, axis2),
    "repeat": lambda self, repeats, axis=None: A.repeat(self, repeats, axis),
    "take": lambda self, indices, axis=None: S.take(self, indices, axis),
    "compress": lambda self, condition, axis=None: SEL.compress(condition, self, axis),
    "round": lambda self, decimals=0, out=None: E.round(self, decimals),
    "__round__": lambda self, ndigits=None: E.round(self, ndigits or 0),
    "conj": P.conjugate, "conjugate": P.conjugate,
    "sort": _sort_in_place,
    "argsort": torch_argsort,
    "nonzero": lambda self: np.nonzero(self.data),
    "searchsorted": lambda self, v, side="left", sorter=None: np.searchsorted(self.data, raw(v), side, sorter),
    "fill": _fill,
    "__floordiv__": P.floor_divide, "__rfloordiv__": _reflect(P.floor_divide),
    "__mod__": P.mod, "__rmod__": _reflect(P.mod),
    "__divmod__": lambda self, other: (P.floor_divide(self, other), P.mod(self, other)),
    "__invert__": lambda self: _on_values(np.invert, self),
    "__and__": lambda self, other: _on_values(np.bitwise_and, self, other),
    "__or__": lambda self, other: _on_values(np.bitwise_or, self, other),
    "__xor__": lambda self, other: _on_values(np.bitwise_xor, self, other),
    "__rand__": lambda self, other: _on_values(np.bitwise_and, other, self),
    "__ror__": lambda self, other: _on_values(np.bitwise_or, other, self),
    "__rxor__": lambda self, other: _on_values(np.bitwise_xor, other, self),
    **TORCH_METHODS,
}
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)
Tensor.T = property(lambda self: S.transpose(self), doc="The transpose (dimensions reversed).")
Tensor.mT = property(lambda self: S.swapaxes(self, -1, -2), doc="Transpose of the last two dimensions.")
Tensor.real = property(P.real, doc="The real part (the tensor itself for real tensors).")
Tensor.imag = property(P.imag, doc="The imaginary part (zeros for real tensors).")


def _iter(self: Tensor) -> Any:
    if self.data.ndim == 0:
        raise TypeError("iteration over a 0-d Tensor")
    return (self[i] for i in range(len(self.data)))


Tensor.__iter__ = _iter


# -- NumPy protocols ------------------------------------------------------------------------------
def _traced(values: Any) -> bool:
    """True if any Tensor among (nested) ``values`` carries a gradient or a live tangent."""
    stack = list(values)
    while stack:
        v = stack.pop()
        if isinstance(v, Tensor):
            if is_traced(v):
                return True
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return False


def _unwrap(v: Any) -> Any:
    if isinstance(v, Tensor):
        return v.data
    if isinstance(v, (list, tuple)):
        return type(v)(_unwrap(x) for x in v)
    if isinstance(v, dict):
        return {k: _unwrap(x) for k, x in v.items()}
    return v


def _no_rule(what: str) -> TypeError:
    return TypeError(
        f"chainrule has no derivative rule for {what}; it would drop the gradient. Use a chainrule function "
        "(see chainrule.ops.table()), define one with chainrule.custom_vjp, or call it on .detach()ed values"
    )


def _array_ufunc(self: Tensor, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    fn = NUMPY_UFUNCS.get(ufunc) if method == "__call__" else None
    if fn is None and method == "__call__" and _load_scipy_rules():
        fn = NUMPY_UFUNCS.get(ufunc)
    if fn is not None and (not kwargs or set(kwargs) <= getattr(fn, "ufunc_kwargs", frozenset())):
        return fn(*inputs, **kwargs)
    if method == "at":
        return _ufunc_at(ufunc, inputs)
    if _traced((inputs, kwargs)):  # keywords too: where=, out=, or any other route to a traced value
        name = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        raise _no_rule(name + (f" with {sorted(kwargs)}" if kwargs and fn is not None else ""))
    out = kwargs.get("out")
    result = getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs))
    if out is not None:
        for o in out:
            if isinstance(o, Tensor):
                o._bump_version()
        return out[0] if len(out) == 1 else out
    return result


def _ufunc_at(ufunc: Any, inputs: tuple[Any, ...]) -> None:
    """``numpy.<ufunc>.at(a, indices, b)``: in place on untraced values; traced ones need the out-of-place form."""
    if _traced(inputs):
        fix = "chainrule.add_at(a, indices, b), which returns the result" if ufunc is np.add else (
            "an out-of-place expression (chainrule.add_at for numpy.add.at)")
        raise TypeError(
            f"numpy.{ufunc.__name__}.at changes its first argument in place, which cannot carry a derivative; "
            f"use {fix}"
        )
    ufunc.at(*_unwrap(inputs))
    if isinstance(inputs[0], Tensor):
        inputs[0]._bump_version()


_scipy_rules = {"loaded": False}


def _load_scipy_rules() -> bool:
    """Register SciPy's ufuncs the first time one meets a Tensor (only if SciPy is already in use)."""
    if _scipy_rules["loaded"] or "scipy.special" not in sys.modules:
        return False
    _scipy_rules["loaded"] = True
    from . import special  # noqa: F401  (registers scipy.special's ufuncs)

    return True


def _array_function(self: Tensor, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    fn = NUMPY_FUNCTIONS.get(func)
    if fn is not None:
        return fn(*args, **kwargs)
    if _traced((args, kwargs)):  # keywords (weights=, y=) and nested lists, tuples and dicts alike
        module = getattr(func, "__module__", None) or "numpy"
        raise _no_rule(f"{module}.{getattr(func, '__name__', func)}")
    return func(*_unwrap(args), **_unwrap(kwargs))


def _keywords_of(fn: Any) -> frozenset[str] | None:
    """The keyword arguments ``fn`` accepts (None: any, it takes ``**kwargs``)."""
    known = _KEYWORDS.get(fn, _KEYWORDS)
    if known is _KEYWORDS:
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = None
        if params is None or any(p.kind is p.VAR_KEYWORD for p in params):
            known = None
        else:
            known = frozenset(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        _KEYWORDS[fn] = known
    return known


_KEYWORDS: dict[Any, frozenset[str] | None] = {}


def _dispatch_function(self: Tensor, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    """NumPy's function dispatch, after checking that chainrule's version takes every keyword given."""
    if kwargs:
        fn = NUMPY_FUNCTIONS.get(func)
        known = _keywords_of(fn) if fn is not None else None
        if known is not None and not known.issuperset(kwargs):
            bad = sorted(set(kwargs) - known)
            name = f"{getattr(func, '__module__', None) or 'numpy'}.{getattr(func, '__name__', func)}"
            raise TypeError(
                f"{name}: chainrule does not support the keyword argument{'s' if len(bad) > 1 else ''} "
                f"{', '.join(repr(k) for k in bad)} of {name} on Tensors (it takes {', '.join(sorted(known))}); "
                + ("write the mask into the values instead (np.sum(np.where(mask, x, 0))), " if "where" in bad
                   else "compute it another way, ")
                + "or call NumPy on .detach()ed values (no gradient)"
            )
    return _array_function(self, func, types, args, kwargs)


Tensor.__array_ufunc__ = _array_ufunc
Tensor.__array_function__ = _dispatch_function


# Functions that only look at shapes and values answer with plain NumPy results.
@implements(np.shape, differentiable=False)
def shape(x: Any) -> tuple[int, ...]:
    """The shape of the values (numpy.shape; no gradient)."""
    return np.shape(raw(x))


@implements(np.ndim, differentiable=False)
def ndim(x: Any) -> int:
    """The number of dimensions (numpy.ndim; no gradient)."""
    return np.ndim(raw(x))


@implements(np.size, differentiable=False)
def size(x: Any, axis: Any = None) -> int:
    """The number of entries (numpy.size; no gradient)."""
    return np.size(raw(x), axis)


@implements(np.zeros_like, differentiable=False)
def zeros_like(x: Any, dtype: Any = None, **kw: Any) -> np.ndarray:
    """A NumPy array of zeros with the shape of x (a constant)."""
    return np.zeros_like(raw(x), dtype=dtype, **kw)


@implements(np.ones_like, differentiable=False)
def ones_like(x: Any, dtype: Any = None, **kw: Any) -> np.ndarray:
    """A NumPy array of ones with the shape of x (a constant)."""
    return np.ones_like(raw(x), dtype=dtype, **kw)


@implements(np.result_type, differentiable=False)
def result_type(*xs: Any) -> np.dtype:
    """The dtype NumPy would give (numpy.result_type)."""
    return np.result_type(*[raw(x) for x in xs])
