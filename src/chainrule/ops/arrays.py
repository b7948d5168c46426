"""NumPy's array builders and rearrangers: diag, tril/triu, flip, roll, tile, repeat, pad, stacking...

All are composites of indexing, reshaping and joining (see :mod:`shape`), so their
gradients (and derivatives of any order, in both modes) come from those ops: an entry
that appears several times in the output gets the sum of its gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.device import as_array, xp_of
from ..tensor import Tensor
from . import contraction, elementwise
from . import shape as shape_ops
from ._define import ndim_of, normalize_axis, np_attr, on_device_of, raw, shape_of, where_is
from .declare import implements, op
from .pytorch.dim_args import numpy_methods, resolve_dim


def _axis(name: str, axis: Any, ndim: int) -> int:
    try:
        return normalize_axis(axis, ndim)[0]
    except np.exceptions.AxisError as e:
        raise np.exceptions.AxisError(f"{name}: {e}") from None


# -- diagonals and triangles ------------------------------------------------------------------
@implements(np.diag)
def diag(v: Any, k: int = 0) -> Any:
    """A 1-D input becomes a square matrix with it on diagonal ``k``; a 2-D input gives its diagonal ``k``.

    Example:
        >>> import chainrule as cr
        >>> cr.diag(cr.Tensor([1.0, 2.0]))
        Tensor([[1., 0.],
                [0., 2.]])
    """
    n = ndim_of(v)
    if n == 2:
        return _diagonal_copy(v, k, 0, 1)  # a copy, as PyTorch's diag (diagonal is a view)
    if n != 1:
        raise ValueError(f"diag: input must be 1-D or 2-D, got shape {shape_of(v)}")
    m = shape_of(v)[0]
    size = m + abs(k)
    i = np.arange(m)
    return shape_ops._scatter_add(v, index=(i + max(-k, 0), i + max(k, 0)), shape=(size, size))


@implements(np.diagflat)
def diagflat(v: Any, k: int = 0) -> Any:
    """The flattened input on diagonal ``k`` of a square matrix."""
    return diag(shape_ops.ravel(v), k)


def _diagonal_method(self: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, *, dim1: Any = None,
                     dim2: Any = None) -> Any:
    """``t.diagonal``: ndarray's ``axis1``/``axis2`` or PyTorch's ``dim1``/``dim2`` (the same positions)."""
    axis1, _ = resolve_dim("diagonal", None if dim1 is not None and axis1 == 0 else axis1, dim1)
    axis2, _ = resolve_dim("diagonal", None if dim2 is not None and axis2 == 1 else axis2, dim2)
    return diagonal(self, offset, axis1, axis2)


@op(numpy=np.diagonal, cases="none", method={"diagonal": _diagonal_method})
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """Diagonal ``offset`` of the 2-D slices over ``axis1`` and ``axis2``, as the last axis: a view of ``a``, as
    PyTorch's (writing into it writes into ``a``; NumPy's is read-only)."""
    out = _diagonal_copy(a, offset, axis1, axis2)
    nd = ndim_of(a)
    a1, a2 = normalize_axis(axis1, nd)[0], normalize_axis(axis2, nd)[0]

    def layout(s: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
        rest = tuple(s[i] for i in range(nd) if i not in (a1, a2))
        return rest + (s[a1] + s[a2],), max(0, -offset) * s[a1] + max(0, offset) * s[a2]

    return shape_ops.strided_view(out, a, layout)


def _diagonal_copy(a: Any, offset: int, axis1: int, axis2: int) -> Any:
    nd = ndim_of(a)
    if nd < 2:
        raise ValueError(f"diagonal: input must have at least 2 dimensions, got shape {shape_of(a)}")
    a1, a2 = _axis("diagonal", axis1, nd), _axis("diagonal", axis2, nd)
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 and axis2 must differ, both are {a1}")
    rows, cols = shape_of(a)[a1], shape_of(a)[a2]
    n = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
    moved = shape_ops.moveaxis(a, (a1, a2), (-2, -1))
    xp = xp_of(raw(moved))  # the positions where the values are (the host or a device)
    return shape_ops.getitem(moved, (Ellipsis, xp.arange(n) + max(0, -offset), xp.arange(n) + max(0, offset)))


def _triangle(name: str, m: Any, keep: np.ndarray) -> Any:
    return elementwise.where(keep, m, np.result_type(raw(m)).type(0))


def _tri_shape(name: str, m: Any) -> tuple[int, int]:
    s = shape_of(m)
    if not s:
        raise ValueError(f"{name}: input must have at least 1 dimension, got a 0-d array")
    return (s[0], s[0]) if len(s) == 1 else (s[-2], s[-1])


@implements(np.tril)
def tril(m: Any, k: int = 0) -> Any:
    """Zeros above diagonal ``k`` (of the last two axes)."""
    r, c = _tri_shape("tril", m)
    return _triangle("tril", m, xp_of(raw(m)).tri(r, c, k, dtype=bool))


@implements(np.triu)
def triu(m: Any, k: int = 0) -> Any:
    """Zeros below diagonal ``k`` (of the last two axes)."""
    r, c = _tri_shape("triu", m)
    return _triangle("triu", m, ~xp_of(raw(m)).tri(r, c, k - 1, dtype=bool))


# -- reversing and rotating -------------------------------------------------------------------
@implements(np.flip)
def flip(m: Any, axis: Any = None) -> Any:
    """Reverse the order of entries along ``axis`` (all axes by default)."""
    nd = ndim_of(m)
    axes = range(nd) if axis is None else normalize_axis(axis, nd)
    if len(set(axes)) != len(axes):  # flipped twice would be no flip: NumPy and PyTorch refuse it too
        raise ValueError(f"flip: axis {axis} names an axis more than once; name each axis to reverse once")
    index = [slice(None)] * nd
    for a in axes:
        index[a] = slice(None, None, -1)
    return shape_ops.fresh(shape_ops.getitem(m, tuple(index)), m)  # a copy, as PyTorch's flip (NumPy's is a view)


@implements(np.fliplr)
def fliplr(m: Any) -> Any:
    """Reverse the columns (axis 1)."""
    if ndim_of(m) < 2:
        raise ValueError(f"fliplr: input must be at least 2-D, got shape {shape_of(m)}")
    return flip(m, 1)


@implements(np.flipud)
def flipud(m: Any) -> Any:
    """Reverse the rows (axis 0)."""
    if ndim_of(m) < 1:
        raise ValueError("flipud: input must be at least 1-D, got a 0-d array")
    return flip(m, 0)


@implements(np.rot90)
def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (as numpy.rot90)."""
    nd = ndim_of(m)
    if len(axes) != 2 or nd < 2:
        raise ValueError(f"rot90: needs two axes of an array of at least 2 dimensions, got axes {axes} and shape "
                         f"{shape_of(m)}")
    a0, a1 = _axis("rot90", axes[0], nd), _axis("rot90", axes[1], nd)
    if a0 == a1:
        raise ValueError(f"rot90: the two axes must differ, got {axes}")
    k %= 4
    if k == 0:
        return shape_ops.copy(m)
    if k == 2:
        return flip(flip(m, a0), a1)
    order = list(range(nd))
    order[a0], order[a1] = order[a1], order[a0]
    if k == 1:
        return shape_ops.transpose(flip(m, a1), order)
    return flip(shape_ops.transpose(m, order), a1)


@implements(np.roll)
def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Shift entries along ``axis`` with wrap-around (of the flattened array when ``axis`` is None).

    Always new memory, as PyTorch's (a shift by a multiple of the length too)."""
    if axis is None:
        return shape_ops.reshape(roll(shape_ops.ravel(a), shift, 0), shape_of(a))
    given, nd = a, ndim_of(a)
    shifts: dict[int, int] = {}
    for s, ax in np.broadcast(as_array(raw(shift)), as_array(axis)):
        ax = _axis("roll", int(ax), nd)
        shifts[ax] = shifts.get(ax, 0) + int(s)
    for ax, s in shifts.items():
        n = shape_of(a)[ax]
        if n and s % n:
            a = shape_ops.take(a, (np.arange(n) - s) % n, axis=ax)
    return shape_ops.fresh(a, given)


@implements(np.rollaxis)
def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Move ``axis`` to lie before position ``start`` (prefer ``moveaxis``)."""
    nd = ndim_of(a)
    axis = _axis("rollaxis", axis, nd)
    if not -nd <= start <= nd:
        raise np.exceptions.AxisError(f"rollaxis: start {start} is out of bounds for {nd} dimensions")
    start %= nd + 1
    if axis < start:
        start -= 1
    return a if axis == start else shape_ops.moveaxis(a, axis, start)


# -- repeating -----------------------------------------------------------------------------------
@implements(np.tile)
def tile(a: Any, reps: Any) -> Any:
    """Repeat the whole array ``reps`` times along each axis."""
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    shape = shape_of(a)
    d = max(len(reps), len(shape))
    shape = (1,) * (d - len(shape)) + shape
    reps = (1,) * (d - len(reps)) + reps
    spread = [n for pair in zip((1,) * d, shape, strict=False) for n in pair]
    target = [n for pair in zip(reps, shape, strict=False) for n in pair]
    tiled = shape_ops.broadcast_to(shape_ops.reshape(a, spread), target)
    # new memory, as PyTorch's tile: with reps of ones the reshape would be a read-only view of the broadcast
    return shape_ops.fresh(shape_ops.reshape(tiled, tuple(r * n for r, n in zip(reps, shape, strict=False))), a)


def _repeat_method(self: Any, *args: Any, axis: Any = None, repeats: Any = None) -> Any:
    """``t.repeat``: NumPy's ``repeat(repeats, axis=)`` or PyTorch's ``repeat(*sizes)`` (a tile), by which reading
    the call allows; a call both read differently (``t.repeat(3)`` of a vector, ``t.repeat(2, 1)`` of a matrix) is
    PyTorch's, as the object API's methods are, except inside a transform given NumPy values, where methods keep
    NumPy's meaning (each entry repeated)."""
    if repeats is not None or axis is not None:
        if repeats is not None and args:
            raise TypeError("repeat: got repeats both positionally and as a keyword; pass one")
        return repeat(self, repeats if repeats is not None else args[0], axis) if args or repeats is not None \
            else repeat(self, None, axis)
    if not args:
        raise TypeError("repeat: give the repeats (NumPy's repeat(repeats, axis=)) or sizes (PyTorch's repeat(*sizes))")
    nd = ndim_of(self)
    if len(args) == 1 and isinstance(args[0], (tuple, list)):  # PyTorch's repeat((2, 1)) / torch.Size
        return tile(self, _torch_sizes(args[0], nd))
    if not all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        if len(args) == 1:  # per-entry counts: NumPy's
            return repeat(self, args[0], None)
        raise TypeError(f"repeat: expected integer sizes, got {args!r}")
    numpy_reads = len(args) == 1 or (len(args) == 2 and nd >= 1 and -nd <= int(args[1]) < nd)
    torch_reads = len(args) >= nd and not (numpy_reads and numpy_methods())
    if torch_reads:
        return tile(self, _torch_sizes(args, nd))
    if numpy_reads:
        return repeat(self, args[0], args[1] if len(args) == 2 else None)
    raise ValueError(f"repeat: {len(args)} sizes {tuple(args)} for a Tensor of {nd} dimensions (PyTorch's repeat "
                     f"needs at least one size per dimension)")


def _torch_sizes(sizes: Any, nd: int) -> tuple[int, ...]:
    sizes = tuple(int(n) for n in sizes)
    if len(sizes) < nd:
        raise ValueError(f"repeat: {len(sizes)} sizes {sizes} for a Tensor of {nd} dimensions (PyTorch's repeat "
                         f"needs at least one size per dimension)")
    return sizes


@op(numpy=np.repeat, cases="none", method={"repeat": _repeat_method})
def repeat(a: Any, repeats: Any, axis: int | None = None) -> Any:
    """Repeat each entry ``repeats`` times along ``axis`` (of the flattened array when None)."""
    if axis is None:
        a, axis = shape_ops.ravel(a), 0
    axis = _axis("repeat", axis, ndim_of(a))
    xp = xp_of(raw(a))  # the positions where the values are (the host or a device)
    counts = raw(repeats)
    if xp is not np and isinstance(counts, np.ndarray):
        counts = counts.tolist()
    idx = xp.repeat(xp.arange(shape_of(a)[axis]), counts)
    return shape_ops.take(a, idx, axis=axis)


# -- padding -------------------------------------------------------------------------------------
_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")


def _filled(values: Any, ax: int, side: int, shape: list[int], dtype: Any, like: Any) -> Any:
    if isinstance(values, Tensor):
        return shape_ops.broadcast_to(shape_ops.astype(shape_ops.getitem(values, (ax, side)), dtype), tuple(shape))
    return xp_of(where_is(like)).full(shape, values[ax, side], dtype=dtype)  # where the padded array is


@implements(np.pad)
def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad with a constant (``constant_values``), by ``edge``, ``reflect``, ``symmetric`` or ``wrap``, by a statistic
    (``maximum``, ``minimum``, ``mean``, ``median``, over ``stat_length``) or by ``linear_ramp``.

    Differentiable in ``array``; padded copies of an entry send their gradients back to it.
    """
    nd = ndim_of(array)
    widths = np.broadcast_to(as_array(raw(pad_width), dtype=np.int64), (nd, 2))
    if (widths < 0).any():
        raise ValueError(f"pad: pad widths must be non-negative, got {raw(pad_width)!r}")
    if mode == "constant":
        given = kwargs.pop("constant_values", 0)
        if not widths.any():  # nothing to pad: still a copy, as NumPy's pad and PyTorch's
            _no_more("pad", kwargs)
            return shape_ops.copy(array)
        _no_more("pad", kwargs)
        x = array
        dtype = np.result_type(raw(array))
        # a Tensor fill value is differentiable too: each padded block is that value broadcast
        values: Any = shape_ops.broadcast_to(given, (nd, 2)) if isinstance(given, Tensor) else np.broadcast_to(
            as_array(given), (nd, 2))
        for ax in range(nd):  # later axes pad over earlier ones: corners take the last axis's values, as NumPy
            before, after = (int(w) for w in widths[ax])
            parts = []
            shape = list(shape_of(x))
            if before:
                shape[ax] = before
                parts.append(_filled(values, ax, 0, shape, dtype, array))
            parts.append(x)
            if after:
                shape[ax] = after
                parts.append(_filled(values, ax, 1, shape, dtype, array))
            if len(parts) > 1:
                x = shape_ops.concatenate(parts, axis=ax)
        return x
    if mode in _STAT_MODES or mode == "linear_ramp":
        return shape_ops.fresh(_pad_from_edges(array, widths, mode, kwargs), array)
    if mode not in _INDEX_MODES:
        raise NotImplementedError(
            f"pad: mode {mode!r} has no derivative rule in chainrule; use 'constant' or one of "
            f"{_INDEX_MODES + _STAT_MODES + ('linear_ramp',)} ('empty' leaves the padding undefined)"
        )
    extra = {"reflect_type": kwargs.pop("reflect_type")} if "reflect_type" in kwargs else {}
    _no_more("pad", kwargs)
    if extra and mode not in ("reflect", "symmetric"):
        raise ValueError(f"pad: unsupported keyword arguments for mode {mode!r}: {{'reflect_type'}} (as NumPy)")
    odd = extra.get("reflect_type", "even") == "odd"
    x = array
    for ax in range(nd):
        before, after = (int(w) for w in widths[ax])
        if not (before or after):
            continue
        if odd:
            # odd reflection pads with 2 * edge - mirrored entry: not a copy of entries but a linear map of the
            # axis, whose matrix is NumPy's pad of the identity's columns
            n = shape_of(x)[ax]
            weights = np.pad(np.eye(n, dtype=np.result_type(raw(x), float)), ((before, after), (0, 0)), mode=mode,
                             reflect_type="odd")
            x = shape_ops.moveaxis(contraction.tensordot(on_device_of(x, weights), x, axes=([1], [ax])), 0, ax)
        else:
            idx = np.pad(np.arange(shape_of(x)[ax]), (before, after), mode=mode, **extra)
            x = shape_ops.take(x, idx, axis=ax)
    return shape_ops.fresh(x, array)


_STAT_MODES = ("maximum", "minimum", "mean", "median")


def _pad_from_edges(x: Any, widths: np.ndarray, mode: str, kwargs: dict[str, Any]) -> Any:
    """NumPy's pad by a statistic of the ``stat_length`` entries at each end (``maximum``, ``minimum``, ``mean``,
    ``median``) or by a ``linear_ramp`` from ``end_values`` to the edge entry; axis by axis, as NumPy (a later axis
    reads the padding of the earlier ones). Every padded value is a function of the entries, so differentiable."""
    nd = ndim_of(x)
    key = "end_values" if mode == "linear_ramp" else "stat_length"
    given = kwargs.pop(key, None)
    _no_more("pad", kwargs)
    if mode == "linear_ramp":
        ends = np.broadcast_to(as_array(0.0 if given is None else raw(given), dtype=float), (nd, 2))
    else:
        lengths = None if given is None else np.broadcast_to(as_array(raw(given), dtype=np.int64), (nd, 2))
    # through NumPy's dispatch to chainrule's reductions (statistics, where median lives, reads this module)
    stat = {"maximum": np.max, "minimum": np.min, "mean": np.mean, "median": np.median}.get(mode)
    for ax in range(nd):
        n = shape_of(x)[ax]
        pieces = {}
        for side, width in enumerate(int(w) for w in widths[ax]):
            if not width:
                continue
            if mode == "linear_ramp":  # end + (edge - end) * i / width, toward the array
                edge = shape_ops.take(x, [0 if side == 0 else n - 1], axis=ax)
                ramp = np.arange(width, dtype=float) / width
                ramp = (ramp if side == 0 else ramp[::-1]).reshape((-1,) + (1,) * (nd - 1 - ax))
                end = ends[ax, side]
                pieces[side] = elementwise.add(end * (1 - ramp), elementwise.multiply(edge, ramp))
            else:
                k = n if lengths is None else min(int(lengths[ax, side]), n)
                if k < 1:
                    raise ValueError(f"pad: stat_length of 0 entries along axis {ax} has no {mode} (as NumPy)")
                window = slice(0, k) if side == 0 else slice(n - k, n)
                value = stat(shape_ops.getitem(x, (slice(None),) * ax + (window,)), axis=ax, keepdims=True)
                shape = list(shape_of(x))
                shape[ax] = width
                pieces[side] = shape_ops.broadcast_to(value, tuple(shape))
        if pieces:
            x = shape_ops.concatenate([p for p in (pieces.get(0), x, pieces.get(1)) if p is not None], axis=ax)
    return x


def _no_more(name: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise TypeError(f"{name}: unsupported keyword argument(s) {sorted(kwargs)}")


# -- joining, splitting, broadcasting -------------------------------------------------------------
@implements(np.atleast_3d)
def atleast_3d(*arys: Any) -> Any:
    """View with at least three dimensions: (N,) becomes (1, N, 1), (M, N) becomes (M, N, 1); several arrays: a
    tuple."""
    return shape_ops.each_of(_at_least_3d, arys)


def _at_least_3d(x: Any) -> Any:
    n = ndim_of(x)
    if n == 0:
        return shape_ops.reshape(x, (1, 1, 1))
    if n == 1:
        return shape_ops.reshape(x, (1, -1, 1))
    if n == 2:
        return shape_ops.expand_dims(x, 2)
    return x


@implements(np.dstack)
def dstack(tup: Any) -> Any:
    """Join along the third axis (depth)."""
    return shape_ops.concatenate([_at_least_3d(x) for x in tup], axis=2)


@implements(np.column_stack)
def column_stack(tup: Any) -> Any:
    """Join 1-D arrays as columns (2-D arrays as they are) along axis 1."""
    return shape_ops.concatenate([shape_ops.reshape(x, (-1, 1)) if ndim_of(x) < 2 else x for x in tup], axis=1)


@implements(np.append)
def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` added at the end (both flattened when ``axis`` is None)."""
    if axis is None:
        return shape_ops.concatenate([shape_ops.ravel(arr), shape_ops.ravel(values)], axis=0)
    return shape_ops.concatenate([arr, values], axis=axis)


@implements(np.delete)
def delete(arr: Any, obj: Any, axis: int | None = None) -> Any:
    """The array without the entries ``obj`` (int, slice or indices) along ``axis``."""
    if axis is None:
        arr, axis = shape_ops.ravel(arr), 0
    axis = _axis("delete", axis, ndim_of(arr))
    keep = np.ones(shape_of(arr)[axis], dtype=bool)
    keep[raw(obj) if not isinstance(obj, slice) else obj] = False
    return shape_ops.take(arr, np.flatnonzero(keep), axis=axis)


@implements(np.hsplit)
def hsplit(x: Any, indices_or_sections: Any) -> list[Any]:
    """Split along axis 1 (axis 0 for 1-D arrays)."""
    return shape_ops.split(x, indices_or_sections, axis=1 if ndim_of(x) > 1 else 0)


@implements(np.vsplit)
def vsplit(x: Any, indices_or_sections: Any) -> list[Any]:
    """Split along axis 0."""
    return shape_ops.split(x, indices_or_sections, axis=0)


@implements(np.dsplit)
def dsplit(x: Any, indices_or_sections: Any) -> list[Any]:
    """Split along axis 2."""
    return shape_ops.split(x, indices_or_sections, axis=2)


@implements(np.meshgrid)
def meshgrid(*xi: Any, indexing: str = "xy", sparse: bool = False, copy: bool = True) -> tuple[Any, ...]:
    """Coordinate arrays from 1-D coordinate vectors (``indexing`` 'xy' or 'ij')."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    nd = len(xi)
    outs = []
    for i, x in enumerate(xi):
        shape = [1] * nd
        shape[i] = -1
        if indexing == "xy" and nd > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        outs.append(shape_ops.reshape(shape_ops.ravel(x), tuple(shape)))
    if not sparse:
        full = np.broadcast_shapes(*[shape_of(o) for o in outs])
        outs = [shape_ops.broadcast_to(o, full) for o in outs]
    return tuple(outs)


@implements(np.broadcast_arrays)
def broadcast_arrays(*args: Any, subok: bool = False) -> tuple[Any, ...]:
    """The inputs broadcast to one shape."""
    shape = np.broadcast_shapes(*[shape_of(a) for a in args])
    return tuple(shape_ops.broadcast_to(a, shape) for a in args)


@implements(np_attr("concat"))
def concat(arrays: Any, /, axis: int | None = 0, out: Any = None, *, dtype: Any = None,
           casting: str = "same_kind", dim: int | None = None) -> Any:
    """The array-API name of ``concatenate`` (NumPy's ``concat`` is ``concatenate``: same arguments)."""
    return shape_ops.concatenate(arrays, axis, out, dtype=dtype, casting=casting, dim=dim)


@implements(np_attr("permute_dims"))
def permute_dims(a: Any, /, axes: Any = None) -> Any:
    """The array-API name of ``transpose``."""
    return shape_ops.transpose(a, axes)


@implements(np_attr("matrix_transpose"), np_attr("linalg.matrix_transpose"))
def matrix_transpose(x: Any, /) -> Any:
    """Swap the last two axes."""
    if ndim_of(x) < 2:
        raise ValueError(f"matrix_transpose: input must be at least 2-D, got shape {shape_of(x)}")
    return shape_ops.swapaxes(x, -1, -2)


@implements(np_attr("unstack"))
def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices along ``axis``, as a tuple."""
    axis = _axis("unstack", axis, ndim_of(x))
    head = (slice(None),) * axis
    return tuple(shape_ops.getitem(x, head + (i,)) for i in range(shape_of(x)[axis]))
