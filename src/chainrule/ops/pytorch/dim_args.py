"""Methods that take an axis in NumPy's spelling (``axis``, ``keepdims``) or PyTorch's (``dim``, ``keepdim``).

Adapters an op's declaration uses for its Tensor method (``method={"sum": reduction(sum)}``):
NumPy's meaning when called NumPy's way, PyTorch's with PyTorch's keywords.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, NamedTuple

import numpy as np

from ...core import pytree as _pytree
from ...core.device import as_array
from ...tensor import Tensor
from .._define import raw

# Inside a functional transform (grad, jacrev, vmap...) given NumPy values, as JAX's are, the methods whose NumPy and
# PyTorch meanings differ take NumPy's: f(x) on arrays and the transform of f must compute the same function.
_NUMPY_METHODS: ContextVar[bool] = ContextVar("chainrule_numpy_methods", default=False)
numpy_methods = _NUMPY_METHODS.get
"""True while a transform runs on NumPy values: the methods whose meanings differ take NumPy's."""


def accumulator_dtype(x: Any, dtype: Any) -> Any:
    """The dtype PyTorch sums and multiplies ``x`` in: int64 for an unsigned Tensor (NumPy's is uint64; its
    bool and signed integers already go to int64), else ``dtype`` (None: the input's)."""
    if dtype is None and isinstance(x, Tensor) and x._data.dtype.kind == "u" and not _NUMPY_METHODS.get():
        return np.dtype(np.int64)
    return dtype


@contextmanager
def numpy_methods_for(args: Any) -> Iterator[None]:
    """Methods take NumPy's meaning while a transform runs on ``args`` if none of them is a Tensor (or an outer
    transform already runs on NumPy values): ``x.std()`` is NumPy's (ddof 0), ``x.var(1)``/``x.max(1)`` take an
    axis. Given Tensors, the object API stays PyTorch's (``t.std()`` unbiased, ``t.max(1)`` values and indices)."""
    on = _NUMPY_METHODS.get() or not any(isinstance(leaf, Tensor) for leaf in _pytree.flatten(args)[0])
    token = _NUMPY_METHODS.set(on)
    try:
        yield
    finally:
        _NUMPY_METHODS.reset(token)


def _numpy_positional(names: tuple[str, ...], args: tuple[Any, ...], given: dict[str, Any], method: str) -> dict:
    """NumPy's positional parameters of an ndarray method, merged with the keywords given."""
    if len(args) > len(names):
        raise TypeError(f"{method}() takes at most {len(names)} positional arguments ({', '.join(names)}), "
                        f"got {len(args)}")
    merged = dict(given)
    for name, value in zip(names, args):
        merged[name] = value
    return merged


def resolve_dim(name: str, axis: Any, dim: Any, keepdims: Any = False, keepdim: Any = None) -> tuple[Any, bool]:
    """``axis``/``keepdims`` from either spelling (NumPy's, or PyTorch's ``dim``/``keepdim``); not both."""
    if dim is not None:
        if axis is not None:
            raise TypeError(
                f"{name}: got both axis={axis!r} and dim={dim!r}; pass one (dim is PyTorch's name for axis)"
            )
        axis = dim
    if keepdim is not None:
        if keepdims:
            raise TypeError(f"{name}: got both keepdims and keepdim; pass one (keepdim is PyTorch's name)")
        keepdims = keepdim
    return axis, bool(keepdims)


def scalar_along(self: Any, name: str, dim: Any) -> bool:
    """Whether ``self`` is 0-d and ``dim`` (PyTorch's spelling) names its one element: PyTorch reads a 0-d
    Tensor as one entry along dim 0 (or -1), so ``t.softmax(dim=-1)`` or ``t.max(dim=0)`` of a scalar work."""
    if dim is None or np.ndim(raw(self)) != 0:
        return False
    for d in dim if isinstance(dim, (tuple, list)) else (dim,):
        if int(d) not in (0, -1):
            raise IndexError(f"{name}: dim {d} is out of range for a 0-d Tensor (expected -1 or 0)")
    return True


def as_scalar(out: Any) -> Any:
    """A result computed on the 1-element view of a 0-d Tensor, back to 0-d (each part of a tuple)."""
    if isinstance(out, tuple):
        return type(out)(*(as_scalar(o) for o in out)) if hasattr(out, "_fields") else tuple(map(as_scalar, out))
    return out.reshape(()) if hasattr(out, "reshape") else out


class ValuesIndices(NamedTuple):
    """PyTorch's ``(values, indices)`` result of ``max(dim=...)`` and ``min(dim=...)``."""

    values: Any
    indices: Any

    def __getattr__(self, name: str) -> Any:
        # a NumPy reader's t.max(1).sum(): say what came back instead of a bare missing-attribute error
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError(
            f"'ValuesIndices' has no attribute {name!r}: this is PyTorch's (values, indices) pair (from max/min/"
            f"sort/topk with a dim); use .values.{name} (or axis= for NumPy's values only)"
        )


def reduction(fn: Any) -> Any:
    """A reduction method taking ``axis``/``keepdims`` or ``dim``/``keepdim``."""

    def method(self: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: Any = None,
               **kw: Any) -> Any:
        if dim is not None or keepdim is not None:  # (t.sum() pays no keyword check)
            if scalar_along(self, fn.__name__, dim if dim is not None else axis):  # (t.sum(0, keepdim=True) too)
                return as_scalar(fn(self.reshape((1,)), axis=0, keepdims=False, **kw))
            axis, keepdims = resolve_dim(fn.__name__, axis, dim, keepdims, keepdim)
        elif axis is not None and not _NUMPY_METHODS.get() and scalar_along(self, fn.__name__, axis):
            return as_scalar(fn(self.reshape((1,)), axis=0, keepdims=False, **kw))  # t.logsumexp(0) of a 0-d
        return fn(self, axis=axis, keepdims=keepdims, **kw)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def extreme(fn: Any, arg: Any, take_along_axis: Any, squeeze: Any) -> Any:
    """``max``/``min``: NumPy's meaning with ``axis``; with ``dim``, PyTorch's ``(values, indices)``.

    (``take_along_axis`` and ``squeeze`` are the shape ops, passed in: this module is below them.)
    """

    def values_and_indices(self: Tensor, *args: Any, axis: Any = None, keepdims: Any = None, dim: Any = None,
                           keepdim: Any = None, **kw: Any) -> Any:
        if args and dim is None and keepdim is None and _NUMPY_METHODS.get():  # ndarray.max(axis, out, keepdims...)
            merged = _numpy_positional(("axis", "out", "keepdims", "initial", "where"), args,
                                       {"axis": axis, "keepdims": bool(keepdims), **kw}, fn.__name__)
            return fn(self, **merged)
        if args:
            axis, dim, keepdims, keepdim = _positional_extreme(self, fn.__name__, args, axis, dim, keepdims, keepdim)
            if axis is _OTHER:  # PyTorch's t.max(other): the elementwise maximum
                return (elementwise_max if fn.__name__ == "max" else elementwise_min)(self, dim)
        if dim is None:
            axis, keepdims = resolve_dim(fn.__name__, axis, None, keepdims, keepdim)
            return fn(self, axis=axis, keepdims=keepdims, **kw)
        if scalar_along(self, fn.__name__, dim):
            return as_scalar(values_and_indices(self.reshape((1,)), dim=0, **kw))
        axis, keepdims = resolve_dim(fn.__name__, axis, dim, keepdims, keepdim)
        if kw:
            raise TypeError(f"{fn.__name__}(dim=...): unexpected arguments {sorted(kw)}")
        # PyTorch's gradient goes to the returned index only (not shared among ties, as amax does)
        data = raw(self)
        if not isinstance(data, (np.ndarray, np.generic)):  # inside vmap: a batched index picks per example
            kept = arg(data, axis=axis, keepdims=True)
            values = np.take_along_axis(self, kept, axis)  # NumPy's names dispatch to vmap's batched rules
            if keepdims:
                return ValuesIndices(values, kept)
            return ValuesIndices(np.squeeze(values, axis=axis), np.squeeze(kept, axis=axis))
        kept = as_array(arg(data, axis=axis, keepdims=True))  # raw: a jit trace checks the values read
        values = take_along_axis(self, kept, axis)
        if not keepdims:
            values = squeeze(values, axis=axis)
        indices = kept if keepdims else np.squeeze(kept, axis=axis)
        return ValuesIndices(values, Tensor._wrap(as_array(indices)))

    values_and_indices.__name__ = fn.__name__
    values_and_indices.__doc__ = (fn.__doc__ or "") + (" With ``dim=`` (PyTorch's spelling): a ``(values, indices)`` "
                                                       "pair.")
    return values_and_indices


_OTHER = object()  # marks t.max(other) / t.min(other), PyTorch's elementwise form


def elementwise_max(x: Any, y: Any) -> Any:
    return np.maximum(x, y)  # dispatches to chainrule's maximum for Tensors (this module is below elementwise)


def elementwise_min(x: Any, y: Any) -> Any:
    return np.minimum(x, y)


def _positional_extreme(self: Any, name: str, args: tuple, axis: Any, dim: Any, keepdims: Any,
                        keepdim: Any) -> tuple[Any, Any, Any, Any]:
    """Read ``t.max(...)``'s positional arguments: PyTorch's ``max(dim[, keepdim])`` and ``max(other)``, or NumPy's
    ``max(axis)`` when a NumPy keyword (``keepdims``) says so or the axis is a tuple (PyTorch takes one dim)."""
    first = args[0]
    if axis is not None or dim is not None:
        raise TypeError(f"{name}: got a positional argument {first!r} and an axis/dim keyword; pass one")
    if len(args) > 2:
        raise TypeError(f"{name}: takes at most dim and keepdim positionally, got {len(args)} arguments")
    if isinstance(first, (tuple, list)) or first is None:
        if len(args) > 1:
            raise TypeError(f"{name}: a second positional argument with axis={first!r}; pass keepdims=")
        return first, None, keepdims, keepdim
    if not isinstance(first, (int, np.integer)) or isinstance(first, bool):
        if len(args) > 1 or keepdims is not None or keepdim is not None:
            raise TypeError(f"{name}(other): PyTorch's elementwise {name} takes no other arguments")
        return _OTHER, first, None, None
    if keepdims is not None:  # NumPy's t.max(1, keepdims=True): values only
        if len(args) > 1:
            raise TypeError(f"{name}: got a second positional argument and keepdims=; pass keepdims= only")
        return first, None, keepdims, None
    if len(args) > 1:
        if keepdim is not None:
            raise TypeError(f"{name}: got keepdim both positionally and as a keyword; pass one")
        if not isinstance(args[1], (bool, np.bool_)):
            raise TypeError(f"{name}: the second positional argument is PyTorch's keepdim (a bool), got {args[1]!r}")
        keepdim = bool(args[1])
    return None, first, None, keepdim  # PyTorch's t.max(1): (values, indices)


def spread(fn: Any) -> Any:
    """``var``/``std``: NumPy's ``ddof`` (0) with ``axis=`` or ``keepdims=``; PyTorch's ``correction`` (1) otherwise:
    with no arguments (the object API is PyTorch's: ``t.std()`` is unbiased, as ``torch.std``; ``np.std(t)``
    stays NumPy's) and with a ``dim``, given by name or positionally (``t.std(1)``, ``t.var(0, True, True)``:
    PyTorch's dim, unbiased, keepdim)."""

    def method(self: Tensor, *args: Any, axis: Any = None, ddof: Any = None, keepdims: bool = False,
               dim: Any = None, keepdim: Any = None, unbiased: Any = None, correction: Any = None, **kw: Any) -> Any:
        if _NUMPY_METHODS.get() and dim is None and keepdim is None and unbiased is None and correction is None:
            merged = _numpy_positional(("axis", "dtype", "out", "ddof", "keepdims"), args,
                                       {"axis": axis, "ddof": ddof, "keepdims": keepdims, **kw}, fn.__name__)
            merged["ddof"] = merged["ddof"] or 0  # ndarray.var(axis, dtype, out, ddof=0, keepdims)
            return fn(self, **merged)
        if args:
            dim, unbiased, ddof, keepdim = _positional_spread(fn.__name__, args, axis, dim, unbiased, ddof,
                                                              correction, keepdims, keepdim)
        torch_style = axis is None and not keepdims  # NumPy's spelling names axis= (or keepdims=)
        if scalar_along(self, fn.__name__, dim):
            return as_scalar(method(self.reshape((1,)), ddof=ddof, dim=0, unbiased=unbiased, correction=correction,
                                    **kw))
        axis, keepdims = resolve_dim(fn.__name__, axis, dim, keepdims, keepdim)
        given = [n for n, v in (("ddof", ddof), ("unbiased", unbiased), ("correction", correction)) if v is not None]
        if len(given) > 1:
            raise TypeError(f"{fn.__name__}: pass one of ddof, unbiased and correction, got {' and '.join(given)}")
        if correction is not None:
            ddof = correction
        elif unbiased is not None:
            ddof = 1 if unbiased else 0
        elif ddof is None:
            ddof = 1 if torch_style else 0
        return fn(self, axis=axis, ddof=ddof, keepdims=keepdims, **kw)

    method.__name__ = fn.__name__
    method.__doc__ = (fn.__doc__ or "") + (" Without arguments or with a dim (``dim=`` or positional: PyTorch's "
                                           "spelling) the default is PyTorch's unbiased one; with ``axis=`` NumPy's "
                                           "ddof=0.")
    return method


def _positional_spread(name: str, args: tuple, axis: Any, dim: Any, unbiased: Any, ddof: Any, correction: Any,
                       keepdims: Any, keepdim: Any) -> tuple[Any, Any, Any, Any]:
    """PyTorch's ``std(dim, unbiased, keepdim)`` read from positional arguments (``std(True)``: unbiased, PyTorch's
    other overload; a bool is never a dim)."""
    if isinstance(args[0], (bool, np.bool_)):
        if len(args) > 1 or unbiased is not None or ddof is not None or correction is not None:
            raise TypeError(f"{name}: a positional bool is PyTorch's unbiased (std(unbiased)), got {args!r} and "
                            "ddof/unbiased/correction; pass dim=..., unbiased=... by name")
        return dim, bool(args[0]), None, keepdim
    if len(args) > 3:
        raise TypeError(f"{name}: takes at most dim, unbiased and keepdim positionally, got {len(args)} arguments")
    if axis is not None or dim is not None:
        raise TypeError(f"{name}: got a positional dim {args[0]!r} and an axis/dim keyword; pass one")
    dim = args[0]
    if len(args) > 1:
        if unbiased is not None or ddof is not None or correction is not None:
            raise TypeError(f"{name}: got unbiased positionally and ddof/unbiased/correction by name; pass one")
        if isinstance(args[1], (bool, np.bool_)):
            unbiased = bool(args[1])
        else:
            ddof = args[1]  # (a number there: the degrees-of-freedom correction)
    if len(args) > 2:
        if keepdim is not None or keepdims:
            raise TypeError(f"{name}: got keepdim both positionally and by name; pass one")
        keepdim = bool(args[2])
    return dim, unbiased, ddof, keepdim


def with_dim(fn: Any, name: str, default: Any = None) -> Any:
    """A method whose one axis argument may be spelled ``dim``."""

    def method(self: Tensor, axis: Any = default, *args: Any, dim: Any = None, **kw: Any) -> Any:
        if dim is not None:
            if axis is not default:
                raise TypeError(f"{name}: got both axis={axis!r} and dim={dim!r}; pass one")
            if scalar_along(self, name, dim):
                return as_scalar(fn(self.reshape((1,)), 0, *args, **kw))
            axis = dim
        elif axis is not None and not _NUMPY_METHODS.get() and scalar_along(self, name, axis):
            # t.cumsum(0) of a 0-d: 0-d (NumPy: 1-d); t.softmax(-1) (or its default -1) of a 0-d: 1, as PyTorch's
            return as_scalar(fn(self.reshape((1,)), 0, *args, **kw))
        return fn(self, axis, *args, **kw)

    method.__name__ = name
    return method
