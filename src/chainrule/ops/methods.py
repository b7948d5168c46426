"""Tensor methods that are not ops (in-place sort and fill, bitwise operators, ``T``, iteration), and
NumPy's dispatch onto chainrule functions (``__array_ufunc__``, ``__array_function__``).

An op's own methods (``t.exp()``, ``t + u``, ``t.sum(dim=1)``) come from its declaration (``ops/declare.py``).
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import numpy as np

from ..core import traces
from ..core.promotion import result_dtype
from ..core.state import is_traced
from ..core.traces import reads_values
from ..tensor import Tensor
from . import cumulative, pointwise, reductions
from . import shape as shape_ops
from ._define import NUMPY_FUNCTIONS, NUMPY_UFUNCS, raw, wrap_like
from .declare import implements, tensor_method
from .pytorch.dim_args import numpy_methods
from .pytorch.methods import torch_argsort, torch_sort


def _sort(self: Tensor, dim: Any = -1, descending: Any = False, stable: Any = None, *, axis: Any = None,
          kind: Any = None, order: Any = None) -> Any:
    """PyTorch's ``sort``: ``(values, indices)``, the values a differentiable sorted copy (``t.sort()``,
    ``t.sort(dim)``, ``t.sort(dim, descending)``, ``t.sort(dim=..., descending=..., stable=...)``).

    With NumPy's keywords (``axis=``, ``kind=``, ``order=``) the call reads as NumPy's: ndarray.sort, in place,
    returning None (outside the graph only).

    Example:
        >>> from chainrule import Tensor
        >>> values, indices = Tensor([3.0, 1.0, 2.0]).sort()
        >>> values, indices
        (Tensor([1., 2., 3.]), Tensor([1, 2, 0]))
    """
    if isinstance(descending, str):  # NumPy's positional kind: t.sort(-1, "stable")
        descending, kind = False, descending
    if axis is None and kind is None and order is None:
        return torch_sort(self, axis=dim, descending=bool(descending), stable=bool(stable))
    if descending:
        raise TypeError("sort: descending= is PyTorch's sort, axis=/kind=/order= NumPy's in-place one; pass one kind "
                        "(t.sort(dim, descending=True) gives (values, indices))")
    self._inplace_guard("sort (in place; use np.sort(t) or chainrule.sort(t) for a differentiable sorted copy)")
    self._data.sort(axis=dim if axis is None else axis, kind="stable" if stable and kind is None else kind,
                    order=order)
    self._bump_version()


tensor_method("sort", _sort)
tensor_method("argsort", reads_values(torch_argsort, "argsort"))


@tensor_method("fill")
def _fill(self: Tensor, value: Any) -> None:
    """Set every entry to ``value`` in place, as ndarray.fill (only outside the graph)."""
    self.fill_(value)


@tensor_method("nonzero")
@reads_values
def _nonzero(self: Tensor, *, as_tuple: Any = None) -> Any:
    """PyTorch's ``nonzero``: the indices of the non-zero entries as one ``(n, ndim)`` int64 Tensor of rows (no
    gradient); ``as_tuple=True``, or NumPy values under a transform (``ndarray.nonzero``'s reading), a tuple of
    index arrays, one per dimension."""
    if as_tuple or (as_tuple is None and numpy_methods()):
        return np.nonzero(self._data)
    return Tensor._wrap(np.argwhere(self._data).astype(np.int64))


@tensor_method("searchsorted")
@reads_values
def _searchsorted(self: Tensor, v: Any, side: str = "left", sorter: Any = None) -> Any:
    """Where ``v`` would go in these sorted values, as ndarray.searchsorted (no gradient)."""
    return np.searchsorted(self._data, raw(v), side, sorter)


def _on_values(fn: Any, *args: Any) -> Any:
    """Integer and boolean operators: no gradient, answer on the values."""
    if traces.open:  # a jit trace checks the values read on replay
        traces.reads_all("an integer operator", args)
    if _traced(args) and any(np.result_type(raw(a)).kind in "fc" for a in args):
        raise TypeError(f"{fn.__name__}: not defined for floating-point tensors")
    values = [raw(a) for a in args]
    if len(values) == 2 and not numpy_methods() and all(v.__class__ in (np.ndarray, bool, int) for v in values):
        # PyTorch's promotion: a 0-d Tensor or a Python int keeps a dimensioned Tensor's dtype (int32 & t0 is int32)
        dtype = result_dtype(values)
        values = [v.astype(dtype, copy=False) if v.__class__ is np.ndarray else v for v in values]
    return wrap_like(fn(*values), *args)


def _bitwise(name: str, ufunc: Any, reflected: bool = False) -> None:
    def method(self: Tensor, other: Any) -> Any:
        return _on_values(ufunc, other, self) if reflected else _on_values(ufunc, self, other)

    method.__doc__ = f"numpy.{ufunc.__name__} on integer or boolean values (no gradient)."
    tensor_method(name, method)


for _name, _ufunc in (("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)):
    _bitwise(f"__{_name}__", _ufunc)
    _bitwise(f"__r{_name}__", _ufunc, reflected=True)


@tensor_method("__invert__")
def _invert(self: Tensor) -> Any:
    """numpy.invert on integer or boolean values (no gradient)."""
    return _on_values(np.invert, self)


tensor_method("T", property(lambda self: shape_ops.transpose(self), doc="The transpose (dimensions reversed)."))
tensor_method("mT", property(lambda self: shape_ops.swapaxes(self, -1, -2),
                             doc="Transpose of the last two dimensions."))


def _part_setter(part: str) -> Any:
    """``t.real = v`` / ``t.imag = v`` in place, as PyTorch and NumPy allow, only outside the graph."""
    rebuilt = "x + 1j * z.imag" if part == "real" else "z.real + 1j * x"

    def setter(self: Tensor, value: Any) -> None:
        try:
            self._inplace_guard(f"Tensor.{part} = ...", value)
        except RuntimeError as e:
            raise RuntimeError(f"{e}. To replace the {part} part of z differentiably: z = {rebuilt}") from None
        if part == "imag" and self._data.dtype.kind != "c":
            raise TypeError(f"Tensor.imag = ...: a {self._data.dtype} tensor has no imaginary part to set; make it "
                            "complex first (z = t.astype(complex))")
        setattr(self._data, part, raw(value))
        self._bump_version()

    return setter


tensor_method("real", property(pointwise.real, _part_setter("real"),
                               doc="The real part (the tensor itself for real tensors); settable outside the graph."))
tensor_method("imag", property(pointwise.imag, _part_setter("imag"),
                               doc="The imaginary part (zeros for real tensors); settable outside the graph."))


@tensor_method("__iter__")
def _iter(self: Tensor) -> Any:
    """The entries along the first axis, one Tensor each."""
    if self._data.ndim == 0:
        raise TypeError("iteration over a 0-d Tensor")
    return (self[i] for i in range(len(self._data)))


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
        return v._data
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


def _ufunc_home(ufunc: Any) -> str:
    """The namespace a ufunc is called from, for error messages: SciPy's special functions are ufuncs too."""
    special = sys.modules.get("scipy.special")
    if getattr(np, ufunc.__name__, None) is not ufunc and special is not None:
        if getattr(special, ufunc.__name__.lstrip("_"), None) is not None:
            return "scipy.special"
    return "numpy"


def _array_ufunc(self: Tensor, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    fn = NUMPY_UFUNCS.get(ufunc) if method == "__call__" else None
    if fn is None and method == "__call__" and _load_scipy_rules():
        fn = NUMPY_UFUNCS.get(ufunc)
    if fn is not None and (not kwargs or set(kwargs) <= getattr(fn, "ufunc_kwargs", frozenset())):
        return fn(*inputs, **kwargs)
    if method == "at":
        return _ufunc_at(ufunc, inputs)
    if method in ("reduce", "accumulate") and (ufunc, method) in REDUCING and isinstance(inputs[0], Tensor):
        result = reducing(ufunc, method, inputs, kwargs)
        if result is not None:
            return result
    if _traced((inputs, kwargs)):  # keywords too: where=, out=, or any other route to a traced value
        name = f"{_ufunc_home(ufunc)}.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        raise _no_rule(name + (f" with {sorted(kwargs)}" if kwargs and fn is not None else ""))
    out = kwargs.get("out")
    result = getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs))
    if out is not None:
        for o in out:
            if isinstance(o, Tensor):
                o._bump_version()
        return out[0] if len(out) == 1 else out
    return result


# numpy.<ufunc>.reduce / .accumulate of a Tensor (or a value under vmap): the chainrule function computing the same
REDUCING: dict[tuple[Any, str], Any] = {
    (np.add, "reduce"): lambda x, axis, keep, dt: reductions.sum(x, axis, keep, dtype=dt),
    (np.multiply, "reduce"): lambda x, axis, keep, dt: reductions.prod(x, axis, keep, dtype=dt),
    (np.maximum, "reduce"): lambda x, axis, keep, dt: reductions.max(x, axis, keep),
    (np.minimum, "reduce"): lambda x, axis, keep, dt: reductions.min(x, axis, keep),
    (np.logaddexp, "reduce"): lambda x, axis, keep, dt: reductions.logsumexp(x, axis, keep),
    (np.add, "accumulate"): lambda x, axis, keep, dt: cumulative.cumsum(x, axis, dtype=dt),
    (np.multiply, "accumulate"): lambda x, axis, keep, dt: cumulative.cumprod(x, axis, dtype=dt),
    (np.maximum, "accumulate"): lambda x, axis, keep, dt: x.cummax(axis).values,
    (np.minimum, "accumulate"): lambda x, axis, keep, dt: x.cummin(axis).values,
    (np.logaddexp, "accumulate"): lambda x, axis, keep, dt: x.logcumsumexp(axis),
}


def reducing(ufunc: Any, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``np.add.reduce(t, axis=0)`` and the like (NumPy's default axis is 0), or None where the call has more than
    one operand or keywords beyond axis, keepdims (reduce) and dtype (sums and products)."""
    allowed = {"axis", "dtype"} | ({"keepdims"} if method == "reduce" else set())
    x = inputs[0]
    if len(inputs) != 1 or set(kwargs) - allowed:
        return None
    dt = kwargs.get("dtype")
    if dt is not None and ufunc not in (np.add, np.multiply):
        return None
    if method == "accumulate" and ufunc in (np.maximum, np.minimum, np.logaddexp) and not isinstance(x, Tensor):
        return None  # (running extremes and logcumsumexp are Tensor methods, without a batching rule)
    axis = kwargs.get("axis", 0)
    if method == "accumulate" and x.ndim == 0:
        raise TypeError(f"numpy.{ufunc.__name__}.accumulate: a 0-d array has no axis to accumulate along")
    return REDUCING[ufunc, method](x, axis, bool(kwargs.get("keepdims", False)), dt)


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
    # register scipy.special's ufuncs (gammaln, ...; i0e, gammainc... too)
    from .special_functions import bessel, scipy_special  # noqa: F401

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


tensor_method("__array_ufunc__", _array_ufunc)
tensor_method("__array_function__", _dispatch_function)


# Functions that only look at shapes and values answer with plain NumPy results.
@implements(np.shape, differentiable=False, namespaces=())  # (chainrule.ops.shape is the module of shape ops)
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
