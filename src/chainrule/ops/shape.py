"""Ops that move entries around: reshape, transpose, broadcast, join, split, index."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff.batch_levels import is_batched, is_value
from ..autodiff.primitive import Primitive
from ..core import clock, traces
from ..core.device import add_at, as_array, index_on, xp_of
from ..core.promotion import promote_pair
from ..core.sparse import SliceGrad
from ..tensor import Tensor
from ..tensor.views import note_view
from ._define import is_complex, ndim_of, normalize_axis, raw, shape_of, wrap_like
from .declare import implements, linear_primitive, op
from .pytorch.dim_args import numpy_methods, with_dim
from .pytorch.index_reading import pytorch_index_parts

# Linear ops: each is declared by its transpose; the forward rule is the op applied to the tangent.
_reshape = linear_primitive("reshape", lambda x, shape: np.reshape(x, shape),
                            lambda g, ans, x, shape: g.reshape(np.shape(x)))
_transpose = linear_primitive(
    "transpose", lambda x, axes: np.transpose(x, axes),
    lambda g, ans, x, axes: g.transpose(tuple(np.argsort(axes).tolist())) if axes is not None else g.transpose(),
    reads=(),
)
# Summing the gradient back to the input's shape is done once, for every op, by the engine.
_broadcast_to = linear_primitive("broadcast_to", lambda x, shape: np.broadcast_to(x, shape),
                                 lambda g, ans, x, shape: g, reads=())
_identity = linear_primitive("identity", lambda x: x.copy(), "same", reads=())

# a cast is linear over the reals; a complex tangent cast to a real dtype keeps its real part
_astype = Primitive("astype", lambda x, dtype: x.astype(dtype), reads=())
_astype.defvjp(lambda g, ans, x, dtype: g)
_astype.defjvp(lambda t, ans, x, dtype: (np.real(t) if is_complex(t) and np.dtype(dtype).kind != "c"
                                          else t).astype(dtype))


def _shape_args(shape: tuple[Any, ...]) -> Any:
    return shape[0] if len(shape) == 1 else shape


@op(primitive=_reshape, kind="linear", numpy=np.reshape, cases="none",
    method={"reshape": lambda self, *shape: reshape(self, _shape_args(shape))})
def reshape(x: Any, shape: Any, *more: int, order: str = "C") -> Any:
    """The same entries in a new shape (one dimension may be -1), read and written in ``order``: "C" (last index
    fastest), "F" (first index fastest) or "A" (F for an array laid out in F order only, as NumPy)."""
    if more:
        shape = (shape, *more)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    try:
        target = np.empty(shape_of(x), dtype=np.bool_).reshape(shape).shape
    except ValueError:
        raise ValueError(
            f"reshape: cannot reshape an array of shape {shape_of(x)} ({np.size(raw(x))} entries) into shape {shape}"
        ) from None
    if str(order).upper() == "K":
        raise ValueError("reshape: order 'K' is not permitted for reshaping (as NumPy)")
    if _fortran("reshape", x, order):  # F order is C order on the reversed axes
        return transpose(_reshape(transpose(x), shape=target[::-1]))
    return _reshape(x, shape=target)


def _fortran(name: str, x: Any, order: Any) -> bool:
    """Whether ``order`` reads the entries first index fastest; "A" and "K" as NumPy reads them on ``x``'s memory."""
    order = "C" if order is None else str(order).upper()
    if order in ("A", "K"):
        flags = getattr(raw(x), "flags", None)
        fortran_only = flags is not None and flags.f_contiguous and not flags.c_contiguous
        if order == "K" and flags is not None and not (flags.c_contiguous or flags.f_contiguous):
            raise NotImplementedError(f"{name}: order='K' of a non-contiguous tensor is not supported; pass "
                                      "order='C' or 'F' (or make it contiguous first)")
        return fortran_only
    if order not in ("C", "F"):
        raise ValueError(f"{name}: order must be one of 'C', 'F', 'A' or 'K', got {order!r}")
    return order == "F"


@op(primitive=_transpose, kind="linear", numpy=np.transpose, cases="none")
def transpose(x: Any, axes: Any = None, dim1: Any = None) -> Any:
    """Reverse (or permute by ``axes``) the dimensions; ``transpose(x, dim0, dim1)`` swaps two (PyTorch's
    ``torch.transpose``: NumPy's ``axes`` is one sequence)."""
    if dim1 is not None:
        if ndim_of(x) == 0 and {int(axes), int(dim1)} <= {0, -1}:  # PyTorch reads a 0-d as having dim 0
            return _transpose(x, axes=None)
        return swapaxes(x, axes, dim1)
    if axes is not None:
        axes = tuple(int(a) % max(ndim_of(x), 1) for a in axes)
    return _transpose(x, axes=axes)


@op(primitive=_transpose, kind="linear", numpy=np.swapaxes, method=True, cases="none")
def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    """Exchange two dimensions."""
    n = ndim_of(x)
    axes = list(range(n))
    a, b = normalize_axis(axis1, n)[0], normalize_axis(axis2, n)[0]
    axes[a], axes[b] = axes[b], axes[a]
    return _transpose(x, axes=tuple(axes))


@implements(np.moveaxis)
def moveaxis(x: Any, source: Any, destination: Any) -> Any:
    """Move dimensions to new positions."""
    n = ndim_of(x)
    src = [a % n for a in np.atleast_1d(source)]
    dst = [a % n for a in np.atleast_1d(destination)]
    order = [a for a in range(n) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _transpose(x, axes=tuple(order))


@op(primitive=_reshape, kind="linear", numpy=np.expand_dims, method=True, cases="none")
def expand_dims(x: Any, axis: Any) -> Any:
    """Insert dimensions of size 1 at ``axis``."""
    return _reshape(x, shape=np.expand_dims(np.empty(shape_of(x), dtype=np.bool_), axis).shape)


def _squeeze_method(fn: Any) -> Any:
    """PyTorch's ``t.squeeze(dim)``: the given dimensions of size 1 go, the others stay (no error, unlike NumPy's
    ``squeeze(axis)``, which NumPy values under a transform keep)."""
    numpy_style = with_dim(fn, "squeeze")

    def method(self: Any, axis: Any = None, *args: Any, dim: Any = None, **kw: Any) -> Any:
        given = dim if dim is not None else axis
        shape = shape_of(self)
        if given is None or args or kw or numpy_methods() or not shape or (dim is not None and axis is not None):
            return numpy_style(self, axis, *args, dim=dim, **kw)
        return fn(self, tuple(a for a in normalize_axis(given, len(shape)) if shape[a] == 1))

    method.__name__ = "squeeze"
    return method


@op(primitive=_reshape, kind="linear", numpy=np.squeeze, method=True, cases="none", method_adapter=_squeeze_method)
def squeeze(x: Any, axis: Any = None) -> Any:
    """Remove dimensions of size 1 (all of them, or those in ``axis``)."""
    shape = shape_of(x)
    if axis is not None and not shape:  # PyTorch's t.squeeze(0) of a 0-d Tensor: the Tensor
        return _reshape(x, shape=()) if set(np.atleast_1d(axis).tolist()) <= {0, -1} else normalize_axis(axis, 0)
    if axis is not None:
        for a in normalize_axis(axis, len(shape)):
            if shape[a] != 1:
                raise ValueError(f"squeeze: axis {a} has size {shape[a]}, not 1 (input shape {shape})")
    return _reshape(x, shape=np.squeeze(np.empty(shape, dtype=np.bool_), axis=axis).shape)


@op(primitive=_reshape, kind="linear", numpy=np.ravel, method=True, cases="none")
def ravel(x: Any, order: str = "C") -> Any:
    """Flatten to one dimension, in ``order`` as ``reshape``."""
    if _fortran("ravel", x, order):
        return _reshape(transpose(x), shape=(int(np.size(raw(x))),))
    return _reshape(x, shape=(int(np.size(raw(x))),))


def flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    """Flatten to one dimension, or merge axes ``start_dim`` to ``end_dim`` into one (``torch.flatten(x, 1)``)."""
    shape = shape_of(x)
    if (start_dim, end_dim) == (0, -1) or not shape:
        return ravel(x)
    nd = len(shape)
    lo, hi = normalize_axis(start_dim, nd)[0], normalize_axis(end_dim, nd)[0]
    if lo > hi:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} for shape {shape}")
    return reshape(x, shape[:lo] + (-1,) + shape[hi + 1:])


@op(primitive=_broadcast_to, kind="linear", numpy=np.broadcast_to, method=True, cases="none")
def broadcast_to(x: Any, shape: Any) -> Any:
    """A view of ``x`` repeated to ``shape`` by broadcasting."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    try:
        np.broadcast_shapes(shape_of(x), shape)
    except ValueError:
        raise ValueError(f"broadcast_to: cannot broadcast shape {shape_of(x)} to {shape}") from None
    return _broadcast_to(x, shape=shape)


def each_of(one: Any, arys: tuple[Any, ...]) -> Any:
    """NumPy's ``atleast_*d(*arys)``: one array's result alone, several as a tuple; PyTorch's one sequence of
    Tensors (``torch.atleast_1d([a, b])``) as a tuple too."""
    if len(arys) == 1 and isinstance(arys[0], (list, tuple)) and any(isinstance(x, Tensor) for x in arys[0]):
        return tuple(one(x) for x in arys[0])
    return one(arys[0]) if len(arys) == 1 else tuple(one(x) for x in arys)


def _at_least_1d(x: Any) -> Any:
    return reshape(x, (1,)) if ndim_of(x) == 0 else x


def _at_least_2d(x: Any) -> Any:
    n = ndim_of(x)
    return x if n >= 2 else reshape(x, (1, -1) if n == 1 else (1, 1))


@implements(np.atleast_1d)
def atleast_1d(*arys: Any) -> Any:
    """View with at least one dimension (a 0-d input becomes shape (1,)); several arrays: a tuple."""
    return each_of(_at_least_1d, arys)


@implements(np.atleast_2d)
def atleast_2d(*arys: Any) -> Any:
    """View with at least two dimensions: (N,) becomes (1, N); several arrays: a tuple."""
    return each_of(_at_least_2d, arys)


@op(primitive=_astype, kind="primitive", method=True, cases="none")
def astype(x: Any, dtype: Any) -> Any:
    """Cast to ``dtype``; gradients come back in the input's dtype.

    A cast to an integer or boolean dtype leaves the graph (as in PyTorch): integer tensors
    cannot require grad, and rounding has no useful gradient.
    """
    dtype = np.dtype(dtype)
    if dtype.kind not in "fc":
        if is_batched(x):  # one example of a vmap: its whole batch cast (out of the graph, as any integer cast)
            return type(x)(astype(x.value, dtype), x.level)
        return wrap_like(raw(x).astype(dtype), x)
    return _astype(x, dtype=dtype)


@op(primitive=_identity, kind="linear", numpy=np.copy, method=True, cases="none")
def copy(x: Any) -> Any:
    """A copy that stays in the graph."""
    return _identity(x)


def fresh(result: Any, *inputs: Any) -> Any:
    """``result``, copied (in the graph) when it is or shares memory with one of ``inputs``.

    Only the view ops (reshape, transpose, slicing, broadcast_to, ...: PyTorch's views) give a
    result sharing its input's memory; every other op gives new memory, so that writing into its
    result never changes its input, even when the op has nothing to do (``roll`` by a multiple of
    the length, ``pad`` by zeros, ``nan_to_num`` of integers).
    """
    # the arrays themselves, not raw(): where memory lies is not a value read, so a jit trace need not guard it
    out = result._data if isinstance(result, Tensor) else result
    for x in inputs:
        arr = x._data if isinstance(x, Tensor) else x
        if result is x or isinstance(out, np.ndarray) and isinstance(arr, np.ndarray) and np.may_share_memory(out, arr):
            return copy(result)
    return result


def strided_view(result: Any, x: Any, layout: Callable[[tuple[int, ...]], tuple[tuple[int, ...], int]]) -> Any:
    """``result`` (a Tensor computed from the Tensor ``x`` by indexing, a copy) with its values read from ``x``'s
    memory instead: ``layout(x's strides)`` gives the strides of ``result``'s axes in ``x``'s memory and the byte
    offset of its first entry (the same values). For PyTorch's view ops that indexing computes as a copy
    (``diagonal``, ``unfold``), so that writing into one writes into the other, as there. The view's base is the
    owner of ``x``'s memory, so the version clock and the graph's in-place checks see one memory (NumPy's
    ``as_strided`` would hide the owner)."""
    arr = x._data if isinstance(x, Tensor) else None
    if result.__class__ is not Tensor or arr.__class__ is not np.ndarray or not arr.size:
        return result
    if traces.current() is not None:  # (jit replays the indexing: its copy)
        return result
    owner = clock.owner(arr)
    strides, start = layout(arr.strides)
    try:
        start += arr.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        view = np.ndarray(result.shape, arr.dtype, buffer=owner, offset=start, strides=strides)
    except (TypeError, ValueError, BufferError):  # memory NumPy itself strided (no buffer of its own): the copy
        return result
    view.flags.writeable = arr.flags.writeable
    result._data = view
    note_view(result, x, view.base)
    return result


# -- joining and splitting ------------------------------------------------------------------
def _concat_vjp(argnum: int, g: Any, ans: Any, *xs: Any, axis: int) -> Any:
    start = int(np.sum([np.shape(x)[axis] for x in xs[:argnum]], dtype=int))
    index = [slice(None)] * np.ndim(xs[argnum])
    index[axis] = slice(start, start + np.shape(xs[argnum])[axis])
    return g[tuple(index)]


_concatenate = linear_primitive("concatenate", lambda *xs, axis: np.concatenate(xs, axis=axis), _concat_vjp,
                                variadic=True)


def _sequence(name: str, xs: Any) -> list[Any]:
    if xs is None or isinstance(xs, (str, bytes)) or not hasattr(xs, "__len__"):
        raise TypeError(f"{name}: argument 'arrays' must be a sequence of arrays, got {type(xs).__name__}")
    if len(xs) == 0:
        raise ValueError(f"{name}: needs at least one array")
    return list(xs)


def _cast(name: str, xs: list[Any], dtype: Any, out: Any = None) -> list[Any]:
    """The arrays in ``dtype`` (NumPy's ``dtype=`` of the joining functions); ``out=`` is refused."""
    if out is not None:
        raise TypeError(f"{name}: the 'out' argument is not supported on Tensors (results are new tensors)")
    if dtype is None:
        dtypes = [getattr(x, "dtype", None) for x in xs]
        if len(set(dtypes)) == 1 or not any(isinstance(x, Tensor) for x in xs) or numpy_methods() or None in dtypes:
            return xs
        # Tensors of several dtypes: PyTorch's promotion (a float32 and an int64 Tensor join as float32)
        dtype = functools.reduce(promote_pair, [np.dtype(d) for d in dtypes])
    return [astype(x, dtype) if np.result_type(raw(x)) != np.dtype(dtype) else x for x in xs]


@op(primitive=_concatenate, kind="linear", numpy=np.concatenate, cases="none")
def concatenate(arrays: Any, axis: int | None = 0, out: Any = None, *, dtype: Any = None,
                casting: str = "same_kind", dim: int | None = None) -> Any:
    """Join arrays along an existing axis (``axis=None`` flattens them first; ``dim=`` is PyTorch's name)."""
    axis = _dim_as_axis("concatenate", axis, 0, dim)
    xs = _cast("concatenate", _sequence("concatenate", arrays), dtype, out)
    if axis is None:
        xs, axis = [ravel(x) for x in xs], 0
    ndim = ndim_of(xs[0])
    axis = normalize_axis(axis, ndim)[0]
    shapes = [shape_of(x) for x in xs]
    for s in shapes:
        if len(s) != ndim or any(a != b for i, (a, b) in enumerate(zip(s, shapes[0])) if i != axis):
            raise ValueError(f"concatenate: shapes {shapes} do not match except along axis {axis}")
    return _concatenate(*xs, axis=axis)


def _dim_as_axis(name: str, axis: Any, default: Any, dim: Any) -> Any:
    if dim is None:
        return axis
    if axis is not default:
        raise TypeError(f"{name}: got both axis={axis!r} and dim={dim!r}; pass one (dim is PyTorch's name for axis)")
    return dim


@implements(np.stack)
def stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None, casting: str = "same_kind",
          dim: int | None = None) -> Any:
    """Join arrays of one shape along a new axis (``dim=`` is PyTorch's name for ``axis``)."""
    axis = _dim_as_axis("stack", axis, 0, dim)
    xs = _cast("stack", _sequence("stack", arrays), dtype, out)
    shapes = {shape_of(x) for x in xs}
    if len(shapes) != 1:
        raise ValueError(f"stack: all arrays must have the same shape, got {sorted(shapes)}")
    axis = normalize_axis(axis, ndim_of(xs[0]) + 1)[0]
    return concatenate([expand_dims(x, axis) for x in xs], axis=axis)


@implements(np.hstack)
def hstack(arrays: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Join along axis 1 (axis 0 for 1-D arrays)."""
    xs = [atleast_1d(x) for x in _cast("hstack", _sequence("hstack", arrays), dtype)]
    return concatenate(xs, axis=0 if ndim_of(xs[0]) == 1 else 1)


@implements(np.vstack)
def vstack(arrays: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Join along axis 0, 1-D arrays as rows (NumPy 2's ``row_stack`` passes ``dtype=None``)."""
    return concatenate([atleast_2d(x) for x in _cast("vstack", _sequence("vstack", arrays), dtype)], axis=0)


@implements(np.split)
def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into pieces along ``axis`` (equal sections, or at the given indices)."""
    axis = normalize_axis(axis, ndim_of(x))[0]
    n = shape_of(x)[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError(f"split: an axis of length {n} does not split into {k} equal sections")
        bounds = list(range(0, n + 1, n // k))
    else:
        bounds = [0, *[int(i) for i in indices_or_sections], n]
    pieces = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        index = [slice(None)] * ndim_of(x)
        index[axis] = slice(lo, hi)
        pieces.append(getitem(x, tuple(index)))
    return pieces


@implements(np.array_split)
def array_split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """As ``split``, but ``k`` sections need not be equal: the first ``n % k`` get one more entry."""
    if not isinstance(indices_or_sections, (int, np.integer)):
        return split(x, indices_or_sections, axis=axis)
    k = int(indices_or_sections)
    if k <= 0:
        raise ValueError(f"array_split: the number of sections must be positive, got {k}")
    n = shape_of(x)[normalize_axis(axis, ndim_of(x))[0]]
    sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
    return split(x, np.cumsum(sizes)[:-1].tolist(), axis=axis)


# -- indexing -------------------------------------------------------------------------------
def _is_basic(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(
        i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer)) and not isinstance(i, bool)
        for i in items
    )


def _scatter_rows(g: np.ndarray, index: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The sum of g's rows into rows ``index`` of a zero array (``out[index] += g``, repeats adding up),
    as an embedding's gradient. Rows are sorted by index (stable) and each run of equal indices is summed
    down its rows, in the order np.add.at adds them (the same bits); many runs (a large vocabulary)
    are summed by np.add.reduceat instead. Either is several times faster than np.add.at."""
    n = shape[0]
    flat = index.reshape(-1).astype(np.intp, copy=False)
    out = np.zeros((n, int(np.prod(shape[1:], dtype=np.int64))), dtype=np.result_type(g))
    if flat.size == 0 or out.size == 0:
        return out.reshape(shape)
    low, high = int(flat.min()), int(flat.max())
    if low < -n or high >= n:  # np.add.at names the bad index
        np.add.at(out.reshape(shape), index, g)
    if low < 0:
        flat = np.where(flat < 0, flat + n, flat)
    order = np.argsort(flat, kind="stable")
    ranked = flat[order]
    rows = g.reshape(flat.size, -1)[order]
    starts = np.flatnonzero(np.concatenate(([True], ranked[1:] != ranked[:-1])))
    if starts.size * 512 <= rows.size:  # few runs: one sum per run (a Python step each)
        for lo, hi in zip(starts.tolist(), [*starts[1:].tolist(), flat.size]):
            np.add.reduce(rows[lo:hi], axis=0, out=out[ranked[lo]])
    else:
        out[ranked[starts]] = np.add.reduceat(rows, starts, axis=0)
    return out.reshape(shape)


def _scatter_fn(g: Any, index: Any, shape: tuple[int, ...]) -> np.ndarray:
    if (type(index) is np.ndarray and index.dtype.kind in "iu" and index.size > 64 and len(shape) >= 1
            and type(g) is np.ndarray and g.shape == index.shape + tuple(shape[1:])):
        return _scatter_rows(g, index, shape)  # integer rows (an embedding's gradient)
    out = xp_of(raw(g)).zeros(shape, dtype=np.result_type(g))  # where g is (the host or a device)
    if _is_basic(index):
        out[index] = g
    else:
        add_at(out, index, g)
    return out


# scatter_add: the transpose of indexing. Repeated integer indices add up.
_scatter_add = linear_primitive("scatter_add", _scatter_fn, lambda g, ans, x, index, shape: g[index_on(index, g)])

def _getitem_vjp(g: Any, ans: Any, x: Any, index: Any) -> Any:
    if g.__class__ is np.ndarray and x.__class__ is np.ndarray and g.dtype == x.dtype and _is_basic(index):
        return SliceGrad(x.shape, x.dtype, [(index, g)])  # no full-size zeros per slice (see core.sparse)
    return _scatter_add(g, index=index, shape=np.shape(x))


# linear: the transpose is the scatter above (or the sparse SliceGrad), the forward rule t[index]
def _getitem_forward(x: Any, index: Any) -> Any:
    at = index_on(index, x)
    out = x[at]
    if isinstance(out, np.generic) and isinstance(x, np.ndarray):
        # NumPy gives t[i] of a vector as a copy (a scalar), PyTorch as a 0-d view: t[0].sin_() writes into t
        items = at if isinstance(at, tuple) else (at,)
        if not any(i is Ellipsis for i in items):
            out = x[(*items, Ellipsis)]
    return out


_getitem = linear_primitive("getitem", _getitem_forward, _getitem_vjp)


def _raw_index(index: Any) -> Any:
    if isinstance(index, tuple):
        return tuple(_raw_index(i) for i in index)
    index = raw(index)
    if isinstance(index, list):
        index = as_array([raw(i) for i in index])
    return index



@op(primitive=_getitem, kind="linear", method="__getitem__", cases="none")
def getitem(x: Any, index: Any) -> Any:
    """``x[index]``: basic slicing, negative steps, boolean masks, integer arrays.

    Entries picked more than once get the sum of their gradients. On Tensors an integer beside integer arrays
    reads as PyTorch's (``t[1, :, idx]`` is ``t[1][:, idx]``); on NumPy values (inside ``grad`` of arrays,
    JAX's way) as NumPy's (``pytorch_index_parts``).
    """
    index = _raw_index(index)
    parts = pytorch_index_parts(index)  # (None at once for most indices: the cheap test first)
    if parts is not None and is_value(x) and not numpy_methods():
        return getitem(getitem(x, parts[0]), parts[1])
    try:
        return _getitem(x, index=index)
    except IndexError as e:
        items = index if isinstance(index, tuple) else (index,)
        hint = ""
        if any(isinstance(i, np.ndarray) and i.dtype.kind == "f" for i in items):
            hint = ("; a float index is often an integer argument that a transform differentiates (grad, vjp and "
                    "jvp make such arguments floats): keep it out of argnums, close over it, or pass "
                    "allow_int=True to grad")
        raise IndexError(f"getitem: index {index!r} does not fit a tensor of shape {shape_of(x)} ({e}){hint}") from None


@op(numpy=np.take, cases="none", method={"take": lambda self, indices, axis=None: take(self, indices, axis)})
def take(x: Any, indices: Any, axis: int | None = None, out: Any = None, mode: str = "raise") -> Any:
    """Entries at integer ``indices`` (along ``axis``, or of the flattened array); ``mode`` 'wrap' or 'clip' maps
    out-of-range indices as NumPy's (``out`` is not supported)."""
    if out is not None:
        raise TypeError("take: the 'out' argument is not supported on Tensors (results are new tensors)")
    idx = _index_array(indices)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if mode != "raise":  # the positions NumPy reads, found by NumPy on the positions themselves
        size = int(np.prod(shape_of(x))) if axis is None else shape_of(x)[normalize_axis(axis, ndim_of(x))[0]]
        idx = np.take(np.arange(size), as_array(idx), mode=mode)
    if axis is None:
        return getitem(ravel(x), idx)
    axis = normalize_axis(axis, ndim_of(x))[0]
    return getitem(x, (slice(None),) * axis + (idx,))


def _index_array(indices: Any) -> Any:
    """An integer index as an array; a batched one (under vmap) stays batched, as getitem takes it."""
    idx = raw(indices)
    return idx if hasattr(idx, "ndim") and not isinstance(idx, (int, float)) else as_array(idx)


@implements(np.take_along_axis)
def take_along_axis(x: Any, indices: Any, axis: int) -> Any:
    """Pick entries along ``axis`` with an index array of as many dimensions; the other dimensions broadcast
    against ``x``'s, as in NumPy (``axis=None``: of the flattened ``x``)."""
    idx = _index_array(indices)
    if axis is None:
        x, axis = ravel(x), 0
    xshape = shape_of(x)
    axis = normalize_axis(axis, len(xshape))[0]
    if idx.ndim != len(xshape):
        raise ValueError(f"take_along_axis: indices of shape {tuple(idx.shape)} for a tensor of shape {xshape}: "
                         "they need as many dimensions (add axes with indices[..., None] or np.expand_dims)")
    # every other axis: the broadcast length, read at position 0 of an axis of length 1
    out = tuple(idx.shape[a] if a == axis else np.broadcast_shapes((xshape[a],), (idx.shape[a],))[0]
                for a in range(idx.ndim))
    idx = np.broadcast_to(idx, out) if isinstance(idx, np.ndarray) and idx.shape != out else idx
    grids = np.ogrid[tuple(slice(n if xshape[a] != 1 else 1) for a, n in enumerate(out))]
    full = tuple(idx if a == axis else grids[a] for a in range(idx.ndim))
    return getitem(x, full)
