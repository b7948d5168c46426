"""``import chainrule.numpy as cnp``: NumPy's namespace, with functions that trace Tensors.

Every NumPy function chainrule has a rule for is here under its NumPy name (``cnp.sin``,
``cnp.cumsum``, ``cnp.linalg.inv``...), plus the array makers, dtypes and constants, which
pass straight through to NumPy. ``cnp.array`` and ``cnp.asarray`` keep the graph when
given (lists of) Tensors: ``cnp.array([x ** 2, x])`` is differentiable, where
``numpy.array`` would silently copy the values. Every ``cnp`` function reads a (nested) list
of Tensors where NumPy reads a list as an array: ``cnp.mean([x, y])`` stacks them first.
``cnp.r_`` and ``cnp.c_`` join Tensors as NumPy's index tricks do.

A NumPy name with no derivative rule is not here: ``cnp.unique`` raises AttributeError
saying so. (``numpy.unique(tensor)`` raises a TypeError naming the function as well.)

Example:
    >>> import chainrule as cr
    >>> import chainrule.numpy as cnp
    >>> def f(x):
    ...     return cnp.sum(cnp.cumsum(cnp.sin(x)) * cnp.array([1.0, 2.0]))
    >>> cr.grad(f)(cnp.array([0.0, 0.0]))
    array([3., 2.])
"""

from __future__ import annotations

import builtins as _builtins
import functools as _functools
import sys as _sys
from typing import Any

import numpy as _np

from . import fft, linalg  # noqa: F401  (cnp.fft, cnp.linalg)
from .autodiff import batch_levels as _vmap_state
from .ops import _define
from .ops import index_update as _index_update
from .ops import jax_numpy as _jax_numpy
from .ops import shape as _shape
from .tensor import Tensor as _Tensor

# Array makers, dtypes and constants: NumPy's own (they make new constants, with no gradient).
_PASSTHROUGH = (
    "asanyarray", "ascontiguousarray", "zeros", "ones", "empty", "full", "arange", "logspace",
    "geomspace", "eye", "identity", "tri", "indices", "diag_indices", "tril_indices", "triu_indices", "mgrid",
    "ogrid", "random", "pi", "e", "inf", "nan", "newaxis", "euler_gamma", "float16", "float32", "float64",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "bool_", "complex64",
    "complex128", "intp", "dtype", "ndarray", "generic", "number", "floating", "integer", "finfo", "iinfo",
    "errstate", "seterr", "geterr", "set_printoptions", "get_printoptions", "printoptions", "isscalar",
    "broadcast_shapes", "ndindex", "ndenumerate", "unravel_index", "ravel_multi_index", "issubdtype",
    "promote_types", "can_cast", "testing", "exceptions",
)


# NumPy's callable behind each name of FUNCTIONS (for vmap's rules, which are keyed by it)
_NUMPY_OF: dict[str, Any] = {}


def _numpy_functions() -> dict[str, Any]:
    names: dict[str, Any] = {}
    for name in dir(_np):
        obj = getattr(_np, name, None)
        if name.startswith("_"):
            continue
        try:
            fn = _define.NUMPY_UFUNCS.get(obj) or _define.NUMPY_FUNCTIONS.get(obj)
        except TypeError:  # unhashable attribute
            continue
        if fn is not None:
            names[name] = fn
            _NUMPY_OF[name] = obj
    return names


def _traced(x: Any) -> bool:
    """A Tensor, or another array type that answers NumPy's protocol itself (a batched value under vmap)."""
    return isinstance(x, _Tensor) or (
        hasattr(type(x), "__array_function__") and type(x) is not _np.ndarray and not isinstance(x, _np.generic)
        and type(x) is not _index_update.ArrayWithAt
    )


def _has_tensor(obj: Any) -> bool:
    stack = [obj]
    while stack:
        item = stack.pop()
        if _traced(item):
            return True
        if isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def _build(obj: Any, dtype: Any) -> Any:
    """Nested lists of Tensors and numbers as one Tensor, by stacking (iterative, innermost first)."""
    if _traced(obj):
        return obj if dtype is None or obj.dtype == dtype else _shape.astype(obj, dtype)
    if not isinstance(obj, (list, tuple)):
        return _np.asarray(obj, dtype=dtype)
    # post-order walk without recursion: (node, children built?)
    results: dict[int, Any] = {}
    stack: list[tuple[Any, bool]] = [(obj, False)]
    while stack:
        node, ready = stack.pop()
        if isinstance(node, (list, tuple)):
            if ready:
                parts = [results[id(child)] if isinstance(child, (list, tuple)) else _leaf(child, dtype)
                         for child in node]
                results[id(node)] = _shape.stack(parts) if parts else _np.asarray([], dtype=dtype)
            else:
                stack.append((node, True))
                stack.extend((child, False) for child in node if isinstance(child, (list, tuple)))
    return results[id(obj)]


def _leaf(x: Any, dtype: Any) -> Any:
    if _traced(x):
        return x if dtype is None or x.dtype == dtype else _shape.astype(x, dtype)
    return _np.asarray(x, dtype=dtype if dtype is not None else None)


def array(obj: Any, dtype: Any = None, *, copy: bool = True, **kwargs: Any) -> Any:
    """numpy.array that keeps the graph: (nested lists of) Tensors become one Tensor by stacking."""
    if _has_tensor(obj):
        out = _build(obj, dtype)
        return _shape.copy(out) if copy and out is obj else out
    return _np.array(obj, dtype=dtype, copy=copy, **kwargs)


def asarray(obj: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """numpy.asarray that keeps the graph (a Tensor is returned as it is)."""
    if _has_tensor(obj):
        return _build(obj, dtype)
    return _np.asarray(obj, dtype=dtype, **kwargs)


# (this module's globals take NumPy's names, ``any`` and ``sum`` included: builtins are spelled out)
# Functions that take a sequence of arrays (not one array-like) as they are.
_SEQUENCE_FUNCTIONS = frozenset({
    "concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack", "block", "select",
    "piecewise", "einsum", "broadcast_arrays", "meshgrid", "apply_along_axis", "unstack", "lexsort", "choose",
})


def _reads_lists(fn: Any, numpy_fn: Any = None) -> Any:
    """``fn`` with list (or tuple) arguments that hold Tensors stacked into one Tensor first,
    where NumPy would read them with asarray (so the graph is kept).

    Under vmap, batched arguments take the path ``numpy_fn`` takes on them (its value rule, or one call
    per example where the function reads concrete values), so ``cnp.f`` and ``numpy.f`` answer alike."""

    @_functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _builtins.any(a.__class__ in (list, tuple) and _has_tensor(a) for a in args):
            args = tuple(_build(a, None) if a.__class__ in (list, tuple) and _has_tensor(a) else a for a in args)
        if kwargs and _builtins.any(v.__class__ in (list, tuple) and _has_tensor(v) for v in kwargs.values()):
            kwargs = {k: _build(v, None) if v.__class__ in (list, tuple) and _has_tensor(v) else v
                      for k, v in kwargs.items()}
        if numpy_fn is not None and _vmap_state.open and _vmap_state.batched_in(args, kwargs or {}):
            return _vmap_state.numpy_call(numpy_fn, args, kwargs)
        return fn(*args, **kwargs)

    return wrapper


def _batches_as_numpy(fn: Any, numpy_fn: Any) -> Any:
    """A function of a sequence of arrays (stack, select...): under vmap, numpy_fn's path (see _reads_lists)."""

    @_functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _vmap_state.open and _vmap_state.batched_in(args, kwargs or {}):
            return _vmap_state.numpy_call(numpy_fn, args, kwargs)
        return fn(*args, **kwargs)

    return wrapper


FUNCTIONS = _numpy_functions()
globals().update({name: _batches_as_numpy(fn, _NUMPY_OF[name]) if name in _SEQUENCE_FUNCTIONS
                  else _reads_lists(fn, _NUMPY_OF[name]) for name, fn in FUNCTIONS.items()})


def _list_reading_namespace(module: Any, numpy_module: Any, sequence_functions: frozenset[str]) -> Any:
    """``module`` (chainrule.linalg, chainrule.fft) as ``cnp.linalg`` / ``cnp.fft``: its functions read lists of
    Tensors as NumPy reads lists as arrays (``cnp.linalg.norm([x, y])``), as the other ``cnp`` functions do. A name
    is the function ``numpy_module``'s function calls on a Tensor, where the two differ (``cnp.linalg.eigh`` is
    ``numpy.linalg.eigh``'s: its gradient is that of the triangle read; ``chainrule.linalg.eigh``'s, PyTorch's)."""
    import types

    space = types.ModuleType(f"{__name__}.{module.__name__.rsplit('.', 1)[-1]}", module.__doc__)
    for name in dir(module):
        obj = getattr(module, name)
        twin = getattr(numpy_module, name, None)
        obj = _define.NUMPY_FUNCTIONS.get(twin, obj) if callable(twin) else obj
        if name.startswith("_") or isinstance(obj, types.ModuleType) or name in ("annotations", "declared_in"):
            continue
        wrap = callable(obj) and not isinstance(obj, type) and name not in sequence_functions
        setattr(space, name, _reads_lists(obj) if wrap else obj)
    space.__all__ = list(getattr(module, "__all__", []))
    return space


linalg = _list_reading_namespace(linalg, _np.linalg, frozenset({"multi_dot"}))
fft = _list_reading_namespace(fft, _np.fft, frozenset())
globals().update({name: getattr(_np, name) for name in _PASSTHROUGH if hasattr(_np, name)})
# ``import chainrule.numpy.random as npr`` (HIPS autograd's examples: autograd.numpy.random), ``import
# chainrule.numpy.linalg``: the namespaces are importable by their dotted names, as autograd.numpy's are
_sys.modules.update({f"{__name__}.{name}": globals()[name] for name in ("linalg", "fft", "random")})



def _like(name: str) -> Any:
    """``cnp.zeros_like`` and friends: given a Tensor, a constant Tensor (as ``jnp.zeros_like`` gives a jax array),
    so that JAX's ``cnp.zeros_like(x).at[i].set(v)`` works; given anything else, NumPy's result."""
    numpy_fn = globals()[name]

    @_functools.wraps(numpy_fn)
    def like(a: Any, *args: Any, **kwargs: Any) -> Any:
        out = numpy_fn(a, *args, **kwargs)
        return _Tensor._wrap(out) if isinstance(a, _Tensor) and type(out) is _np.ndarray else out

    return like


for _name in ("zeros_like", "ones_like", "full_like", "empty_like"):
    if _name in globals():
        globals()[_name] = _like(_name)



def _takes_precision(name: str) -> Any:
    """JAX's ``jnp.dot(a, b, precision=...)`` and the other contractions: ``precision`` is accepted and changes
    nothing (NumPy computes at the inputs' full precision, JAX's ``"highest"``)."""
    fn = globals()[name]

    @_functools.wraps(fn)
    def contraction(*args: Any, precision: Any = None, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return contraction


for _name in ("dot", "matmul", "einsum", "tensordot", "inner", "vdot"):
    if _name in globals():
        globals()[_name] = _takes_precision(_name)

__all__ = sorted([*FUNCTIONS, *(n for n in _PASSTHROUGH if hasattr(_np, n)), "array", "asarray", "fft", "linalg", "r_",
                  "c_"])


def __getattr__(name: str) -> Any:
    if hasattr(_np, name):
        raise AttributeError(
            f"chainrule.numpy has no {name!r}: numpy.{name} has no derivative rule in chainrule. Use a function "
            f"listed in chainrule.ops.table(), define one with chainrule.custom_vjp, or call numpy.{name} on "
            ".detach()ed values"
        )
    raise AttributeError(f"module 'chainrule.numpy' has no attribute {name!r}")


class _Joiner:
    """``cnp.r_`` / ``cnp.c_``: NumPy's index tricks, joining Tensors through a traced concatenate.

    Slices become ranges (as in NumPy); a leading string ``"axis[,ndmin[,trans1d]]"`` sets the
    axis and the dimensions as NumPy's does. Without Tensors this is ``numpy.r_`` / ``numpy.c_``.
    """

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int) -> None:
        self.name, self.axis, self.ndmin, self.trans1d = name, axis, ndmin, trans1d

    def __getitem__(self, key: Any) -> Any:
        items = list(key) if isinstance(key, tuple) else [key]
        if not _has_tensor(items):
            return getattr(_np, self.name)[key]
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if isinstance(items[0], str):
            try:
                settings = [int(v) for v in items.pop(0).split(",")]
            except ValueError:
                raise NotImplementedError(
                    f"cnp.{self.name}: only the 'axis[,ndmin[,trans1d]]' directive works with Tensors (not 'r'/'c' "
                    "matrix directives)"
                ) from None
            axis, ndmin, trans1d = (settings + [ndmin, trans1d][len(settings) - 1:])[:3]
        like = next(it for it in items if _traced(it))  # ranges and numbers are made where it is
        parts = [self._promote(_define.on_device_of(like, _np.r_[it]) if isinstance(it, slice) else
                               it if _traced(it) or isinstance(it, _np.ndarray) else _define.literal_on(like, it),
                               ndmin, trans1d) for it in items]
        return _shape.concatenate(parts, axis=axis)

    @staticmethod
    def _promote(item: Any, ndmin: int, trans1d: int) -> Any:
        """``numpy.array(item, ndmin=ndmin)``, with 1-D items' axis moved as NumPy's ``trans1d`` says."""
        x = item if _traced(item) else _np.asarray(item)
        nd = x.ndim
        if nd >= ndmin:
            return x
        x = _shape.reshape(x, (1,) * (ndmin - nd) + x.shape) if _traced(x) else x.reshape(
            (1,) * (ndmin - nd) + x.shape)
        if trans1d != -1:
            k2, k1 = ndmin - nd, trans1d
            if k1 < 0:
                k1 += k2 + 1
            order = list(range(ndmin))
            axes = order[:k1] + order[k2:] + order[k1:k2]
            x = _shape.transpose(x, axes) if _traced(x) else x.transpose(axes)
        return x


r_ = _Joiner("r_", 0, 1, -1)
c_ = _Joiner("c_", -1, 2, 0)


# JAX's keywords NumPy lacks (size= of nonzero/where/argwhere/flatnonzero, clip's min=/max=, take's mode="fill")
for _name in ("nonzero", "where", "argwhere", "flatnonzero", "clip", "take"):
    if _name in globals():
        globals()[_name] = getattr(_jax_numpy, _name)(globals()[_name])


# Where NumPy gives an ndarray, cnp gives one with JAX's ``.at`` (``cnp.zeros(3).at[0].set(1.0)``; see ArrayWithAt)
def _with_at(fn: Any) -> Any:
    @_functools.wraps(fn)
    def returns_with_at(*args: Any, **kwargs: Any) -> Any:
        return _index_update.with_at(fn(*args, **kwargs))

    returns_with_at.__wrapped__ = getattr(fn, "__wrapped__", fn)  # the chainrule function, as before the wrap
    return returns_with_at


_MAKERS = ("asanyarray", "ascontiguousarray", "zeros", "ones", "empty", "full", "arange", "logspace", "geomspace",
           "eye", "identity", "tri")
for _name in (*FUNCTIONS, *_MAKERS, "array", "asarray"):
    if _name in globals():
        globals()[_name] = _with_at(globals()[_name])
for _space in (linalg, fft):
    for _name in _space.__all__:
        if callable(getattr(_space, _name, None)) and not isinstance(getattr(_space, _name), type):
            setattr(_space, _name, _with_at(getattr(_space, _name)))
