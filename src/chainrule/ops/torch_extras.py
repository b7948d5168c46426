"""More of PyTorch's Tensor methods: ``sub(alpha=)``, ``eq``, ``amax``, ``mm``, ``gather``, ``topk``, ...

Each is a method of the op that computes it (``t.sub`` is ``subtract``, ``t.gather`` is
``take_along_axis``, ``t.atan2`` is ``arctan2``), recorded in that op's declaration; a method
that is no op of its own (``narrow``, ``view_as``, ``new_zeros``, in-place ``exp_``) is a
:func:`~chainrule.ops.declare.tensor_method`. Names ndarray has keep NumPy's meaning
(``t.repeat``, ``t.std()``); names only PyTorch has take PyTorch's, including the index a
``(values, indices)`` result sends the gradient to (``topk``, ``kthvalue``, ``median(dim)``,
``mode``) and a gradient shared among ties where PyTorch shares it (``amax``, ``median()``).

Example:
    >>> import chainrule as cr
    >>> t = cr.Tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> t.sub(1.0, alpha=2.0)
    Tensor([[-1.,  3.],
            [ 5.,  0.]])
    >>> t.topk(1, dim=1).indices
    Tensor([[1],
            [0]])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..tensor import Tensor
from ._define import raw
from .declare import DECLARATIONS, TENSOR_METHODS, elementwise_op, tensor_method
from .dim_args import ValuesIndices
from .torch_methods import _order


def _fn(name: str) -> Callable[..., Any]:
    return DECLARATIONS[name].function


def _also(function_name: str, method_name: str, body: Callable[..., Any] | None = None) -> None:
    """``Tensor.<method_name>`` as a method of the declared op ``function_name`` (recorded in its declaration)."""
    decl = DECLARATIONS[function_name]
    tensor_method(method_name, body or decl.function, owner=function_name)
    made = TENSOR_METHODS[method_name]
    if getattr(made, "__doc__", None) is None:
        made.__doc__ = decl.function.__doc__
    decl.tensor_methods[method_name] = made
    decl.methods = tuple(decl.tensor_methods)


def _values(self: Any, name: str) -> np.ndarray:
    """The values of a Tensor; inside ``vmap`` (a batched value) a clear refusal, for methods that read them."""
    if not isinstance(self, Tensor):
        raise TypeError(f"vmap: Tensor.{name} reads the values (to choose entries, or in place), which vmap cannot "
                        f"batch; call it outside vmap")
    return self.data


def _shape(x: Any) -> tuple[int, ...]:
    """The shape of an operand (a Tensor, a batched value inside vmap, an array or a number)."""
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _raw(x: Any) -> np.ndarray:
    return x.data if isinstance(x, Tensor) else np.asarray(x)


def _axis(self: Tensor, dim: int, name: str) -> int:
    nd = max(self.ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"{name}: dim {dim} is out of range for a Tensor of {self.ndim} dimensions")
    return dim % nd


def _index_along(ndim: int, axis: int, index: Any) -> tuple[Any, ...]:
    return (slice(None),) * axis + (index,)


# -- arithmetic with PyTorch's keywords ---------------------------------------------------------
def _scaled(other: Any, alpha: Any) -> Any:
    return other if alpha == 1 else _fn("multiply")(other, alpha)


_also("add", "add", lambda self, other, *, alpha=1: _fn("add")(self, _scaled(other, alpha)))
_also("subtract", "sub", lambda self, other, *, alpha=1: _fn("subtract")(self, _scaled(other, alpha)))
_also("multiply", "mul", lambda self, other: _fn("multiply")(self, other))


def div(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Any:
    """PyTorch's ``div``: true division; ``rounding_mode="trunc"`` or ``"floor"`` rounds (zero gradient, as PyTorch)."""
    if rounding_mode is None:
        return _fn("divide")(self, other)
    if rounding_mode == "floor":
        return _fn("floor_divide")(self, other)
    if rounding_mode == "trunc":
        return _fn("trunc")(_fn("divide")(self, other))
    raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")


_also("divide", "div", div)
for _name, _method in [("negative", "neg"), ("reciprocal", "reciprocal"), ("sinh", "sinh"), ("cosh", "cosh"),
                       ("erf", "erf"), ("ceil", "ceil"), ("floor", "floor"), ("hypot", "hypot"),
                       ("arctan2", "atan2"), ("fmod", "fmod"), ("mod", "remainder"), ("equal", "eq"),
                       ("not_equal", "ne"), ("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                       ("less_equal", "le"), ("logical_not", "logical_not"), ("isnan", "isnan"),
                       ("isclose", "isclose"), ("allclose", "allclose"), ("array_equal", "equal"),
                       ("inner", "inner")]:
    _also(_name, _method)

rsqrt = elementwise_op(
    "rsqrt", lambda x: 1.0 / np.sqrt(x), lambda ans, x: -0.5 * ans * ans * ans,
    doc="1 / sqrt(x), elementwise (PyTorch's ``rsqrt``).\n\n    Example:\n        >>> import chainrule as cr\n"
        "        >>> cr.rsqrt(cr.Tensor([4.0]))\n        Tensor([0.5])",
    method=True, domain="positive", torch="torch.rsqrt",
)


def addcmul(self: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    """PyTorch's ``addcmul``: ``self + value * tensor1 * tensor2``."""
    return _fn("add")(self, _scaled(_fn("multiply")(tensor1, tensor2), value))


def addcdiv(self: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    """PyTorch's ``addcdiv``: ``self + value * tensor1 / tensor2``."""
    return _fn("add")(self, _scaled(_fn("divide")(tensor1, tensor2), value))


def lerp(self: Tensor, end: Any, weight: Any) -> Any:
    """PyTorch's ``lerp``: ``self + weight * (end - self)``."""
    return _fn("add")(self, _fn("multiply")(weight, _fn("subtract")(end, self)))


for _method, _body in [("addcmul", addcmul), ("addcdiv", addcdiv), ("lerp", lerp)]:
    tensor_method(_method, _body)  # composites of several ops


# -- matrix products (PyTorch's shapes checked: they do not broadcast) ----------------------------
def _need(name: str, what: str, t: Any, ndim: int) -> None:
    if len(_shape(t)) != ndim:
        raise ValueError(f"{name}: {what} must be {ndim}-D, got shape {_shape(t)}; use matmul to broadcast")


def mm(self: Tensor, mat2: Any) -> Any:
    """PyTorch's ``mm``: the product of two matrices (2-D only; ``matmul`` broadcasts)."""
    _need("mm", "self", self, 2)
    _need("mm", "mat2", mat2, 2)
    return _fn("matmul")(self, mat2)


def bmm(self: Tensor, mat2: Any) -> Any:
    """PyTorch's ``bmm``: batched matrix products of two 3-D Tensors with the same batch size."""
    _need("bmm", "self", self, 3)
    _need("bmm", "mat2", mat2, 3)
    if self.shape[0] != _shape(mat2)[0]:
        raise ValueError(f"bmm: batch sizes differ: {self.shape} and {_shape(mat2)}")
    return _fn("matmul")(self, mat2)


def mv(self: Tensor, vec: Any) -> Any:
    """PyTorch's ``mv``: a matrix times a vector."""
    _need("mv", "self", self, 2)
    _need("mv", "vec", vec, 1)
    return _fn("matmul")(self, vec)


def _add_product(self: Tensor, product: Any, beta: Any, alpha: Any) -> Any:
    scaled = _scaled(product, alpha)
    return scaled if beta == 0 else _fn("add")(_scaled(self, beta), scaled)  # beta=0: self ignored, as PyTorch


def addmm(self: Tensor, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """PyTorch's ``addmm``: ``beta * self + alpha * (mat1 @ mat2)``."""
    return _add_product(self, mm(mat1, mat2) if isinstance(mat1, Tensor) else mm(Tensor(mat1), mat2), beta, alpha)


def baddbmm(self: Tensor, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """PyTorch's ``baddbmm``: ``beta * self + alpha * (batch1 @ batch2)``, batched."""
    return _add_product(self, bmm(batch1 if isinstance(batch1, Tensor) else Tensor(batch1), batch2), beta, alpha)


for _method, _body in [("mm", mm), ("bmm", bmm), ("mv", mv), ("addmm", addmm), ("baddbmm", baddbmm)]:
    _also("matmul", _method, _body)


def outer(self: Tensor, vec2: Any) -> Any:
    """PyTorch's ``outer``: the outer product of two vectors."""
    _need("outer", "self", self, 1)
    _need("outer", "vec2", vec2, 1)
    return _fn("outer")(self, vec2)


def cross(self: Tensor, other: Any, dim: int | None = None) -> Any:
    """PyTorch's ``cross``: the cross product along ``dim`` (default: the first dimension of size 3)."""
    if dim is None:
        sizes = np.broadcast_shapes(self.shape, _shape(other))
        dim = next((i for i, n in enumerate(sizes) if n == 3), None)
        if dim is None:
            raise ValueError(f"cross: no dimension of size 3 in shape {sizes}; pass dim=")
    return _fn("cross")(self, other, axis=dim)


_also("outer", "outer", outer)
_also("cross", "cross", cross)


# -- reductions ----------------------------------------------------------------------------------
def _extreme(name: str, fn_name: str) -> Callable[..., Any]:
    def method(self: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
        axis = tuple(dim) if isinstance(dim, (tuple, list)) else dim
        if axis == ():
            axis = None  # PyTorch's dim=() reduces every dimension
        return _fn(fn_name)(self, axis=axis, keepdims=keepdim)

    method.__doc__ = (f"PyTorch's ``{name}``: the {fn_name}imum over ``dim`` (all by default); the gradient is "
                      "shared equally among tied entries, as PyTorch's.")
    return method


_also("max", "amax", _extreme("amax", "max"))
_also("min", "amin", _extreme("amin", "min"))


def _picked(self: Tensor, idx: np.ndarray, axis: int, keepdim: bool) -> ValuesIndices:
    """The entries at ``idx`` (keepdims-shaped) along ``axis``: the gradient goes to exactly those entries."""
    values = _fn("take_along_axis")(self, idx, axis)
    if not keepdim:
        values = _fn("squeeze")(values, axis)
        idx = np.squeeze(idx, axis=axis)
    return ValuesIndices(values, Tensor._wrap(np.asarray(idx, dtype=np.int64)))


def _stable_order(data: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    return _order(data, axis, descending)  # NaN the largest, as PyTorch


def _scalar_like(self: Tensor) -> tuple[Tensor, bool]:
    return (_fn("reshape")(self, (1,)), True) if self.ndim == 0 else (self, False)


def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> ValuesIndices:  # noqa: A002
    """PyTorch's ``topk``: the ``k`` largest (or smallest) entries along ``dim`` and their indices; each value's
    gradient goes to its index. Ties are broken by position (the first one wins)."""
    _values(self, "topk")
    x, scalar = _scalar_like(self)
    axis = _axis(x, dim, "topk")
    if not 0 <= k <= x.shape[axis]:
        raise ValueError(f"topk: k={k} is out of range for dim {dim} of size {x.shape[axis]}")
    idx = np.take(_stable_order(raw(x), axis, largest), np.arange(k), axis=axis)
    out = _picked(x, idx, axis, True)
    return ValuesIndices(*(_fn("reshape")(v, ()) for v in out)) if scalar else out


def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """PyTorch's ``kthvalue``: the ``k``-th smallest entry (1-based) along ``dim`` and its index."""
    _values(self, "kthvalue")
    x, scalar = _scalar_like(self)
    axis = _axis(x, dim, "kthvalue")
    if not 1 <= k <= x.shape[axis]:
        raise ValueError(f"kthvalue: k={k} is out of range for dim {dim} of size {x.shape[axis]} (k counts from 1)")
    idx = np.take(_stable_order(raw(x), axis, False), [k - 1], axis=axis)
    return _picked(x, idx, axis, keepdim and not scalar)


def median(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """PyTorch's ``median``: the lower median (an entry, not the mean of the middle two as ``numpy.median``).

    Without ``dim``: the value, its gradient shared among the entries equal to it; with ``dim``:
    ``(values, indices)``, the gradient to the index. ``chainrule.median`` is NumPy's.
    """
    _values(self, "median")
    if dim is None:
        flat = _fn("ravel")(self)
        if flat.shape[0] == 0:
            raise ValueError("median: the Tensor is empty")
        order = np.argsort(raw(flat), kind="stable")  # raw: a jit trace checks the values read
        value = flat.data[order[(flat.shape[0] - 1) // 2]]
        tied = (flat.data == value).astype(flat.dtype)
        return _fn("divide")(_fn("sum")(_fn("multiply")(flat, tied)), tied.sum())  # = value; d/dx = tied / count
    x, scalar = _scalar_like(self)
    axis = _axis(x, dim, "median")
    idx = np.take(_stable_order(raw(x), axis, False), [(x.shape[axis] - 1) // 2], axis=axis)
    return _picked(x, idx, axis, keepdim and not scalar)


def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """PyTorch's ``mode``: the most frequent entry along ``dim`` (the smallest among equally frequent ones)
    and the index of its last occurrence; the gradient goes to that index."""
    _values(self, "mode")
    x, scalar = _scalar_like(self)
    axis = _axis(x, dim, "mode")
    moved = np.moveaxis(raw(x), axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    best = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        values, counts = np.unique(row, return_counts=True)  # sorted values: argmax picks the smallest mode
        best[r] = np.flatnonzero(row == values[np.argmax(counts)])[-1]
    idx = np.expand_dims(best.reshape(moved.shape[:-1]), axis)
    return _picked(x, idx, axis, keepdim and not scalar)


_also("take_along_axis", "topk", topk)
_also("take_along_axis", "kthvalue", kthvalue)
_also("take_along_axis", "median", median)
_also("take_along_axis", "mode", mode)


# -- indexing: gather, scatter, select --------------------------------------------------------------
def _index_array(name: str, index: Any) -> np.ndarray:
    idx = np.asarray(_raw(index))
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{name}: index must hold integers, got dtype {idx.dtype}")
    return idx


def _check_index(name: str, self: Tensor, axis: int, idx: np.ndarray, other: tuple[int, ...] | None = None) -> None:
    if idx.ndim != max(self.ndim, 1):
        raise ValueError(f"{name}: index has {idx.ndim} dimensions, the Tensor {self.ndim}; they must match")
    for d, n in enumerate(idx.shape):
        if d != axis and n > self.shape[d] or other is not None and n > other[d]:
            raise ValueError(f"{name}: index shape {idx.shape} is larger than {self.shape} (or src's) at dim {d}")
    if idx.size and (idx.min() < -self.shape[axis] or idx.max() >= self.shape[axis]):
        raise IndexError(f"{name}: index out of range for dim {axis} of size {self.shape[axis]}")


def gather(self: Tensor, dim: int, index: Any) -> Any:
    """PyTorch's ``gather``: ``out[i][j] = self[index[i][j]][j]`` along ``dim`` (``index`` may be smaller than
    ``self`` in the other dims); repeated indices add their gradients."""
    axis = _axis(self, dim, "gather")
    idx = _index_array("gather", index)
    _check_index("gather", self, axis, idx)
    corner = tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(idx.shape))
    return _fn("take_along_axis")(self[corner], idx, axis)


def _positions(idx: np.ndarray, axis: int) -> tuple[np.ndarray, ...]:
    grid = list(np.indices(idx.shape, sparse=True))
    grid[axis] = idx
    return tuple(grid)


def _src_part(src: Any, idx: np.ndarray, dtype: Any) -> Any:
    if isinstance(src, Tensor):
        return src[tuple(slice(0, n) for n in idx.shape)]
    return np.broadcast_to(np.asarray(src, dtype=dtype), idx.shape)


def scatter_add(self: Tensor, dim: int, index: Any, src: Any) -> Any:
    """PyTorch's ``scatter_add``: ``self`` with ``src[i][j]`` added at ``[index[i][j]][j]`` along ``dim``;
    repeated indices add up."""
    axis = _axis(self, dim, "scatter_add")
    idx = _index_array("scatter_add", index)
    _check_index("scatter_add", self, axis, idx, _shape(src) if isinstance(src, Tensor) else None)
    if idx.size == 0:
        return _fn("copy")(self)
    return _add_at(self, _positions(idx, axis), _src_part(src, idx, self.dtype))


def _add_at(x: Any, positions: Any, values: Any) -> Any:
    from .numeric import add_at

    return add_at(x, positions, values)


def scatter(self: Tensor, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: Any = None) -> Any:
    """PyTorch's ``scatter``: ``self`` with ``src`` (a Tensor, or ``value``) written at ``index`` along ``dim``.

    Repeated positions are refused (PyTorch leaves which write wins unspecified); ``reduce=`` is not supported.
    """
    if reduce is not None:
        raise ValueError(f"scatter: reduce={reduce!r} is not supported; use scatter_add (reduce='add' is its sum)")
    if (src is None) == (value is None):
        raise TypeError("scatter: pass src (a Tensor or number) or value=, one of them")
    src = value if src is None else src
    axis = _axis(self, dim, "scatter")
    idx = _index_array("scatter", index)
    _check_index("scatter", self, axis, idx, _shape(src) if isinstance(src, Tensor) else None)
    positions = _positions(idx, axis)
    hit = np.zeros(self.shape, dtype=np.int64)
    np.add.at(hit, positions, 1)
    if hit.max(initial=0) > 1:
        raise ValueError("scatter: index writes some positions more than once, so the result would depend on the "
                         "order; make the indices unique along dim, or use scatter_add to add them")
    kept = _fn("where")(hit.astype(bool), np.zeros((), dtype=self.dtype), self)
    return _add_at(kept, positions, _src_part(src, idx, self.dtype))


def take_along_dim(self: Tensor, indices: Any, dim: int | None = None) -> Any:
    """PyTorch's ``take_along_dim``: NumPy's ``take_along_axis`` (of the flattened Tensor when ``dim`` is None)."""
    if dim is None:
        return _fn("take_along_axis")(_fn("ravel")(self), np.ravel(_raw(indices)), 0)
    return _fn("take_along_axis")(self, _index_array("take_along_dim", indices), dim)


def masked_select(self: Tensor, mask: Any) -> Any:
    """PyTorch's ``masked_select``: the entries where ``mask`` holds (both broadcast), as a 1-D Tensor."""
    m = np.asarray(_raw(mask))
    if m.dtype != bool:
        raise TypeError(f"masked_select: mask must be boolean, got dtype {m.dtype}")
    shape = np.broadcast_shapes(self.shape, m.shape)
    x = self if self.shape == shape else _fn("broadcast_to")(self, shape)
    return _fn("extract")(np.broadcast_to(m, shape), x)


_also("take_along_axis", "gather", gather)
_also("take_along_axis", "take_along_dim", take_along_dim)
_also("extract", "masked_select", masked_select)
_also("where", "where", lambda self, condition, other: _fn("where")(condition, self, other))
TENSOR_METHODS["where"].__doc__ = "PyTorch's ``t.where(condition, other)``: ``where(condition, t, other)``."
tensor_method("scatter_add", scatter_add)
tensor_method("scatter", scatter)


@tensor_method("narrow")
def narrow(self: Tensor, dim: int, start: int, length: int) -> Any:
    """PyTorch's ``narrow``: ``length`` entries from ``start`` along ``dim``."""
    axis = _axis(self, dim, "narrow")
    n = self.shape[axis]
    begin = start + n if start < 0 else start
    if not (0 <= begin <= n and 0 <= length and begin + length <= n):
        raise IndexError(f"narrow: start {start} and length {length} do not fit dim {dim} of size {n}")
    return self[_index_along(self.ndim, axis, slice(begin, begin + length))]


@tensor_method("select")
def select_(self: Tensor, dim: int, index: int) -> Any:
    """PyTorch's ``select``: the slice at ``index`` along ``dim`` (that dim removed)."""
    axis = _axis(self, dim, "select")
    if not -self.shape[axis] <= index < self.shape[axis]:
        raise IndexError(f"select: index {index} is out of range for dim {dim} of size {self.shape[axis]}")
    return self[_index_along(self.ndim, axis, index)]


@tensor_method("split")
def split_(self: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Any, ...]:
    """PyTorch's ``split``: pieces of ``split_size`` entries along ``dim`` (the last may be smaller), or of the
    sizes listed (they must add up to the dim's size). ``chainrule.split`` is NumPy's (split points)."""
    axis = _axis(self, dim, "split")
    n = self.shape[axis]
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int(split_size_or_sections)
        if size <= 0:
            raise ValueError(f"split: split_size must be positive, got {size}")
        sizes = [min(size, n - s) for s in range(0, n, size)] or [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise ValueError(f"split: sizes {sizes} add up to {sum(sizes)}, not to the size {n} of dim {dim}")
    starts = np.cumsum([0, *sizes[:-1]])
    return tuple(self[_index_along(self.ndim, axis, slice(s, s + k))] for s, k in zip(starts, sizes, strict=True))


@tensor_method("chunk")
def chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple[Any, ...]:
    """PyTorch's ``chunk``: pieces of ``ceil(size / chunks)`` entries along ``dim`` (fewer pieces if they run out)."""
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    n = self.shape[_axis(self, dim, "chunk")]
    return split_(self, max(math.ceil(n / chunks), 1), dim) if n else split_(self, [0] * chunks, dim)


@tensor_method("unbind")
def unbind(self: Tensor, dim: int = 0) -> tuple[Any, ...]:
    """PyTorch's ``unbind``: the slices along ``dim``, as a tuple."""
    axis = _axis(self, dim, "unbind")
    return tuple(self[_index_along(self.ndim, axis, i)] for i in range(self.shape[axis]))


@tensor_method("unflatten")
def unflatten(self: Tensor, dim: int, sizes: Any) -> Any:
    """PyTorch's ``unflatten``: dim ``dim`` split into ``sizes`` (one may be -1)."""
    axis = _axis(self, dim, "unflatten")
    return _fn("reshape")(self, self.shape[:axis] + tuple(sizes) + self.shape[axis + 1:])


# -- shape methods of existing ops, with PyTorch's argument names --------------------------------------
def _dims(dims: tuple[Any, ...]) -> Any:
    return tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims


_also("moveaxis", "movedim", lambda self, source, destination: _fn("moveaxis")(self, source, destination))


def _flip(self: Tensor, *dims: Any) -> Any:
    if not dims:
        raise TypeError("flip: give the dims to flip (PyTorch's t.flip(dims)); numpy.flip(t) flips every axis")
    return _fn("flip")(self, _dims(dims))


_also("flip", "flip", _flip)
_also("roll", "roll", lambda self, shifts, dims=None: _fn("roll")(self, shifts, dims))
_also("tile", "tile", lambda self, *dims: _fn("tile")(self, _dims(dims)))
_also("tril", "tril", lambda self, diagonal=0: _fn("tril")(self, diagonal))
_also("triu", "triu", lambda self, diagonal=0: _fn("triu")(self, diagonal))
_also("diag", "diag", lambda self, diagonal=0: _fn("diag")(self, diagonal))
_also("reshape", "reshape_as", lambda self, other: _fn("reshape")(self, tuple(other.shape)))
_also("reshape", "view_as", lambda self, other: _fn("reshape")(self, tuple(other.shape)))
_also("broadcast_to", "expand_as", lambda self, other: _fn("broadcast_to")(self, tuple(other.shape)))
_also("astype", "type_as",
      lambda self, other: self if self.dtype == other.dtype else _fn("astype")(self, other.dtype))
for _method in ("movedim", "flip", "roll", "tile", "tril", "triu", "diag", "reshape_as", "view_as", "expand_as",
                "type_as"):
    TENSOR_METHODS[_method].__doc__ = f"PyTorch's ``{_method}`` (its argument names and defaults)."


# -- new tensors like this one (constants) ---------------------------------------------------------
def _size(size: tuple[Any, ...]) -> tuple[int, ...]:
    return tuple(int(n) for n in _dims(size))


@tensor_method("new_zeros")
def new_zeros(self: Tensor, *size: Any, dtype: Any = None) -> Tensor:
    """PyTorch's ``new_zeros``: zeros of ``size``, this Tensor's dtype (out of the graph)."""
    return Tensor._wrap(np.zeros(_size(size), dtype=dtype or self.dtype))


@tensor_method("new_ones")
def new_ones(self: Tensor, *size: Any, dtype: Any = None) -> Tensor:
    """PyTorch's ``new_ones``: ones of ``size``, this Tensor's dtype."""
    return Tensor._wrap(np.ones(_size(size), dtype=dtype or self.dtype))


@tensor_method("new_full")
def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None) -> Tensor:
    """PyTorch's ``new_full``: ``fill_value`` everywhere in ``size``, this Tensor's dtype."""
    return Tensor._wrap(np.full(_size((size,)), fill_value, dtype=dtype or self.dtype))


@tensor_method("new_tensor")
def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """PyTorch's ``new_tensor``: a copy of ``data`` with this Tensor's dtype (a new leaf)."""
    return Tensor(_raw(data), requires_grad=requires_grad, dtype=dtype or self.dtype)


# -- in place (PyTorch's rules: refused in the graph, allowed under no_grad and outside it) -----------
def in_place(name: str, fn: Callable[..., np.ndarray]) -> Callable[..., Tensor]:
    """The method ``name``: ``fn(values, *args)`` written over the values, under the in-place rules."""

    def method(self: Tensor, *args: Any, **kw: Any) -> Tensor:
        _values(self, name)
        self._inplace_guard(name)
        result = fn(self.data, *args, **kw)
        if not np.can_cast(result.dtype, self.data.dtype, casting="same_kind"):
            raise TypeError(f"{name}: the result has dtype {result.dtype}, which cannot be stored in place in a "
                            f"Tensor of dtype {self.data.dtype}; write it out of place")
        self.data[...] = result
        self._bump_version()
        return self

    method.__doc__ = f"In place: ``{name[:-1]}`` (allowed under no_grad or outside the graph, as in PyTorch)."
    return method


def _clamped(d: np.ndarray, min: Any = None, max: Any = None) -> np.ndarray:  # noqa: A002
    if min is None and max is None:
        raise ValueError("clamp_: give min, max or both")
    return np.clip(d, min, max)


for _method, _np in [("neg_", np.negative), ("sqrt_", np.sqrt), ("exp_", np.exp), ("abs_", np.abs),
                     ("square_", np.square), ("clamp_", _clamped)]:
    tensor_method(_method, in_place(_method, _np))


@tensor_method("detach_")
def detach_(self: Tensor) -> Tensor:
    """PyTorch's ``detach_``: cut this Tensor from the graph, in place (it becomes a leaf without gradient)."""
    _values(self, "detach_")
    self._requires_grad, self._node, self._index = False, None, None
    return self


# -- facts about the storage, and dtype conversions -------------------------------------------------
tensor_method("nelement", lambda self: int(_values(self, "nelement").size))
TENSOR_METHODS["nelement"].__doc__ = "PyTorch's ``nelement``: the number of entries (``numel``)."


@tensor_method("element_size")
def element_size(self: Tensor) -> int:
    """PyTorch's ``element_size``: bytes per entry."""
    return int(_values(self, "element_size").itemsize)


@tensor_method("is_contiguous")
def is_contiguous(self: Tensor) -> bool:
    """PyTorch's ``is_contiguous``: whether the entries lie in row-major order without gaps."""
    return bool(_values(self, "is_contiguous").flags.c_contiguous)


@tensor_method("stride")
def stride(self: Tensor, dim: int | None = None) -> Any:
    """PyTorch's ``stride``: steps between entries, in entries (NumPy's ``strides`` are in bytes)."""
    data = _values(self, "stride")
    steps = tuple(s // data.itemsize for s in data.strides)
    return steps if dim is None else steps[_axis(self, dim, "stride")]


def _adjoint(self: Tensor) -> Any:
    if self.ndim < 2:
        raise ValueError(f"mH: needs at least 2 dimensions, got {self.ndim}")
    swapped = _fn("swapaxes")(self, -1, -2)
    return _fn("conjugate")(swapped) if np.dtype(self.dtype).kind == "c" else swapped


def _matrix_adjoint(self: Tensor) -> Any:
    if self.ndim != 2:
        raise ValueError(f"H: needs a matrix (2 dimensions), got {self.ndim}; use .mH for batches")
    return _adjoint(self)


tensor_method("mH", property(_adjoint, doc="PyTorch's ``mH``: the conjugate transpose of the last two dims."))
tensor_method("H", property(_matrix_adjoint, doc="PyTorch's ``H``: the conjugate transpose of a matrix."))


@tensor_method("half")
def half(self: Tensor) -> Any:
    """PyTorch's ``half()``: the values as float16."""
    return self if self.dtype == np.float16 else _fn("astype")(self, np.float16)


@tensor_method("int")
def int32(self: Tensor) -> Tensor:
    """PyTorch's ``int()``: the values as int32 (out of the graph, as integer tensors are)."""
    return Tensor._wrap(_values(self, "int").astype(np.int32))


@tensor_method("bool")
def boolean(self: Tensor) -> Tensor:
    """PyTorch's ``bool()``: the values as booleans (out of the graph)."""
    return Tensor._wrap(_values(self, "bool").astype(bool))
