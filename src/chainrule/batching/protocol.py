"""NumPy functions and ufuncs called on Batched values.

Differentiable ones go to the chainrule function NumPy's name stands for (its primitives are
batched by the hook in ``apply``). Functions that only look at values or shapes (comparisons,
``argmax``, ``shape``, ``zeros_like``...) have value rules here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff import batch_levels as _state
from ..core import pytree as _pytree
from ..ops._define import NONDIFFERENTIABLE, NUMPY_FUNCTIONS, NUMPY_UFUNCS
from ..ops.methods import REDUCING, reducing
from .rules import _shift, _top, at, batch_value, expand, ndim
from .value import NUMPY_PROTOCOL, Batched, ConcreteValueError

# NumPy callables being dispatched right now: a library function that calls its own NumPy name on the
# values (np.linalg.slogdet(raw(a)) inside slogdet) wants values, example by example.
_active: list[Any] = []
# Library functions that fell back to one call per example (they read concrete values), for table().
PER_EXAMPLE: set[str] = set()


def per_example(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``fn`` called once per example of the innermost batch level among the arguments; results stacked."""
    from ..ops.shape import stack

    leaves, treedef = _pytree.flatten((args, kwargs))
    level = max(x.level for x in leaves if isinstance(x, Batched))
    size = _state.size(level)
    rows = []
    for b in range(size):
        a, k = _pytree.unflatten(treedef, [x.value[b] if at(x, level) else x for x in leaves])
        rows.append(fn(*a, **k))
    first = rows[0]
    if isinstance(first, tuple):
        parts = [Batched(stack([np.asarray(r[i]) if np.isscalar(r[i]) else r[i] for r in rows]), level)
                 for i in range(len(first))]
        return type(first)(*parts) if hasattr(first, "_fields") else tuple(parts)
    return Batched(stack([np.asarray(r) if np.isscalar(r) else r for r in rows]), level)


def _call(np_fn: Any, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The chainrule function for ``np_fn`` on the batch; per example if it reads concrete values."""
    if np_fn in _active:
        return per_example(np_fn, args, kwargs)
    _active.append(np_fn)
    try:
        return fn(*args, **kwargs)
    except ConcreteValueError:
        pass
    finally:
        _active.pop()
    PER_EXAMPLE.add(_name(np_fn))
    return per_example(fn, args, kwargs)


def _name(fn: Any) -> str:
    return f"numpy.{getattr(fn, '__name__', fn)}"


def ufunc(uf: Any, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if method in ("reduce", "accumulate") and (uf, method) in REDUCING and isinstance(inputs[0], Batched):
        result = reducing(uf, method, inputs, kwargs)  # np.add.reduce(x) is np.sum(x, axis=0): its rule batches
        if result is not None:
            return result
    if method != "__call__" or "out" in kwargs:
        raise NotImplementedError(
            f"vmap: {_name(uf)}" + (f".{method}" if method != "__call__" else " with out=")
            + " has no batching rule; write it with whole-array functions (np.sum, np.cumsum, ...)"
        )
    fn = NUMPY_UFUNCS.get(uf)
    if fn is not None and fn not in NONDIFFERENTIABLE:
        return _call(uf, fn, inputs, kwargs)
    # values only (comparisons, isfinite, logical ops...): line up the batch axis and call NumPy
    L, _ = _top(inputs, kwargs)
    nd = max(ndim(a) for a in inputs)
    vals = [expand(a.value, nd - a.ndim) if at(a, L) else a for a in inputs]
    out = uf(*vals, **kwargs)
    return tuple(Batched(o, L) for o in out) if isinstance(out, tuple) else Batched(out, L)


def _first(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Batched:
    x = args[0] if args else next(iter(kwargs.values()))
    if not isinstance(x, Batched):
        raise NotImplementedError("vmap: only the first argument of this function may be batched")
    return x


def _shape_rule(args: tuple, kwargs: dict) -> Any:
    return _first(args, kwargs).shape


def _ndim_rule(args: tuple, kwargs: dict) -> Any:
    return _first(args, kwargs).ndim


def _size_rule(args: tuple, kwargs: dict) -> Any:
    x = _first(args, kwargs)
    axis = args[1] if len(args) > 1 else kwargs.get("axis")
    return x.size if axis is None else x.shape[axis]


def _result_type_rule(args: tuple, kwargs: dict) -> Any:
    return np.result_type(*[a.dtype if isinstance(a, Batched) else a for a in args])


def _like(func: Any) -> Callable[[tuple, dict], Any]:
    def rule(args: tuple, kwargs: dict) -> Any:
        x = _first(args, kwargs)
        if kwargs.get("shape") is not None:
            raise NotImplementedError(f"vmap: {_name(func)} with shape= has no batching rule")
        return Batched(func(x.value, *args[1:], **kwargs), x.level)

    return rule


def _along_axis(func: Any, default: Any, flatten_none: bool) -> Callable[[tuple, dict], Any]:
    """A function of values with one axis parameter (argmax, any, argsort...)."""

    def rule(args: tuple, kwargs: dict) -> Any:
        x = _first(args, kwargs)
        kwargs = dict(kwargs)
        axis = args[1] if len(args) > 1 else kwargs.pop("axis", default)
        value = x.value
        if axis is None and flatten_none:
            value, axis = value.reshape((x.batch_size, -1)), 1
        else:
            axis = _shift(axis, x.ndim)
        return Batched(func(value, axis, *args[2:], **kwargs), x.level)

    return rule


def _concrete(func: Any) -> Callable[[tuple, dict], Any]:
    def rule(args: tuple, kwargs: dict) -> Any:
        raise TypeError(
            f"vmap: {_name(func)} of a batched value gives a Python value or a shape that differs per example; "
            "it cannot be batched (use np.where, np.isclose or masks instead)"
        )

    return rule


def _isclose(args: tuple, kwargs: dict) -> Any:
    a, b = args[0], args[1]
    L, _ = _top((a, b), {})
    nd = max(ndim(a), ndim(b))
    vals = [expand(v.value, nd - v.ndim) if at(v, L) else v for v in (a, b)]
    return Batched(np.isclose(*vals, *args[2:], **kwargs), L)


def _dtype_only(func: Any) -> Callable[[tuple, dict], Any]:
    return lambda args, kwargs: func(np.empty(0, dtype=_first(args, kwargs).dtype))


def _take_along_axis(args: tuple, kwargs: dict) -> Any:
    from ..ops.shape import take_along_axis

    x, idx = args[0], args[1] if len(args) > 1 else kwargs["indices"]
    axis = args[2] if len(args) > 2 else kwargs["axis"]
    L, B = _top((x, idx), {})
    nd = max(ndim(x), ndim(idx))
    xv, iv = (expand(batch_value(v, L, B), nd - ndim(v)) for v in (x, idx))
    return Batched(take_along_axis(xv, iv, axis=_shift(axis, nd)), L)


VALUE_RULES: dict[Any, Callable[[tuple, dict], Any]] = {
    np.shape: _shape_rule,
    np.ndim: _ndim_rule,
    np.size: _size_rule,
    np.result_type: _result_type_rule,
    np.zeros_like: _like(np.zeros_like),
    np.ones_like: _like(np.ones_like),
    np.empty_like: _like(np.zeros_like),
    np.full_like: _like(np.full_like),
    np.argmax: _along_axis(np.argmax, None, True),
    np.argmin: _along_axis(np.argmin, None, True),
    np.nanargmax: _along_axis(np.nanargmax, None, True),
    np.nanargmin: _along_axis(np.nanargmin, None, True),
    np.argsort: _along_axis(np.argsort, -1, True),
    np.any: _along_axis(np.any, None, False),
    np.all: _along_axis(np.all, None, False),
    np.count_nonzero: _along_axis(np.count_nonzero, None, False),
    np.isclose: _isclose,
    np.iscomplexobj: _dtype_only(np.iscomplexobj),
    np.isrealobj: _dtype_only(np.isrealobj),
    np.take_along_axis: _take_along_axis,
    np.allclose: _concrete(np.allclose),
    np.array_equal: _concrete(np.array_equal),
    np.array_equiv: _concrete(np.array_equiv),
    np.nonzero: _concrete(np.nonzero),
    np.argwhere: _concrete(np.argwhere),
    np.flatnonzero: _concrete(np.flatnonzero),
}


def function(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    rule = VALUE_RULES.get(func)
    if rule is not None:
        return rule(args, kwargs)
    fn = NUMPY_FUNCTIONS.get(func)
    if fn is not None and fn not in NONDIFFERENTIABLE:
        return _call(func, fn, args, kwargs)
    if fn is not None:  # answers on values only (no gradient): example by example
        PER_EXAMPLE.add(_name(func))
        return per_example(func, args, kwargs)
    raise NotImplementedError(
        f"vmap: {_name(func)} has no batching rule; use functions chainrule supports "
        "(chainrule.batching.table() lists how each op batches)"
    )


def numpy_call(np_fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A NumPy function or ufunc on batched arguments, as NumPy's protocols would run it (for cnp's names)."""
    if isinstance(np_fn, np.ufunc):
        return ufunc(np_fn, "__call__", args, kwargs)
    return function(np_fn, args, kwargs)


_state.numpy_call, _state.per_example = numpy_call, per_example
NUMPY_PROTOCOL.update(ufunc=ufunc, function=function)  # Batched.__array_ufunc__ / __array_function__ call these
