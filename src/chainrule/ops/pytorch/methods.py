"""PyTorch's spellings of Tensor methods: ``dim=``/``keepdim=``, ``view``, ``unsqueeze``, ``permute``, ...

The rule: a method name that ndarray also has keeps NumPy's meaning when called NumPy's
way (``t.sum(axis=1)``, ``t.std()``, ``t.repeat(3)``); called with PyTorch's keywords
(``dim=``, ``keepdim=``) it has PyTorch's meaning, including where the two libraries
differ: ``t.max(dim=1)`` returns ``(values, indices)`` and ``t.std(dim=1)`` is the unbiased
(``correction=1``) estimate, as in PyTorch. Names only PyTorch has (``view``, ``unsqueeze``,
``permute``, ``clamp``, ...) have PyTorch's meaning (``masked_fill`` is in :mod:`chainrule.ops.masking`).

Example:
    >>> import chainrule as cr
    >>> t = cr.Tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> t.sum(dim=1, keepdim=True).shape
    (2, 1)
    >>> t.max(dim=1).indices
    Tensor([1, 0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.device import as_array, registered
from ...core.promotion import result_dtype
from ...core.state import is_grad_enabled
from ...core.traces import reads_values
from ...tensor import Tensor
from .. import arrays, device_ops, elementwise, tie_order
from .. import shape as shape_ops
from .._define import raw
from ..declare import tensor_method
from .dim_args import ValuesIndices, as_scalar, numpy_methods, resolve_dim, scalar_along


def _value_method(np_fn: Any, name: str, as_tensor: bool = False) -> Any:
    def method(self: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: Any = None,
               **kw: Any) -> Any:
        axis, keepdims = resolve_dim(name, axis, dim, keepdims, keepdim)
        out = np_fn(self._data, axis=axis, keepdims=keepdims, **kw)
        if as_tensor and not numpy_methods():  # PyTorch's t.argmax(dim=1): an int64 Tensor (pred.eq(y), .float())
            out = as_array(out)  # (t.all() of a uint8 Tensor is uint8 in PyTorch, bool otherwise)
            return Tensor._wrap(out.astype(np.uint8) if self._data.dtype == np.uint8 and out.dtype == bool else out)
        return out

    method.__name__ = name
    return method


def _shape_args(shape: tuple[Any, ...]) -> Any:
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list, np.ndarray)) else shape


@tensor_method("view")
def view(self: Tensor, *shape: Any) -> Any:
    """PyTorch's ``view``: the same values in another shape (``-1`` infers one size); as reshape. ``view(dtype)``
    (``t.view(cr.int32)``) reads the same bytes as another dtype, sharing memory (the last dim scales when the
    sizes differ), as PyTorch's and NumPy's ``view``; the bits have no derivative.

    Example:
        >>> import chainrule as cr
        >>> cr.tensor([1.0, -2.0]).view(cr.int32).tolist()
        [1065353216, -1073741824]
    """
    if len(shape) == 1 and (isinstance(shape[0], np.dtype) or isinstance(shape[0], type)
                            and issubclass(shape[0], np.generic)):
        return _bit_view(self, np.dtype(shape[0]))
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list)):
        raise TypeError(f"view: expected sizes (view(2, 3) or view((2, 3))) or a dtype (view(cr.int32)), got "
                        f"{shape[0]!r}; .astype(dtype) converts the values instead")
    return shape_ops.reshape(self, _shape_args(shape))


def _bit_view(self: Tensor, dtype: np.dtype) -> Tensor:
    if self.requires_grad and is_grad_enabled() and dtype.kind in "fc":
        raise NotImplementedError(f"view: reading the bits of a Tensor that requires grad as {dtype} has no "
                                  "derivative; call it on t.detach(), or convert the values with .to(dtype)")
    try:
        return Tensor._wrap(self._data.view(dtype))
    except ValueError as e:
        raise ValueError(f"view: cannot read a Tensor of shape {self.shape} and dtype {self.dtype} as {dtype} ({e}); "
                         f"its last dim must be contiguous and its size in bytes divisible by {dtype.itemsize}") from e


@tensor_method("unsqueeze")
def unsqueeze(self: Tensor, dim: int) -> Any:
    """PyTorch's ``unsqueeze``: a new axis of size 1 at ``dim``."""
    return shape_ops.expand_dims(self, dim)


@tensor_method("permute")
def permute(self: Tensor, *dims: Any) -> Any:
    """PyTorch's ``permute``: reorder the axes (``permute(2, 0, 1)``)."""
    dims = _shape_args(dims)
    if len(dims) != self.ndim:
        raise ValueError(f"permute: got {len(dims)} dims {tuple(dims)} for a Tensor of {self.ndim} dimensions")
    return shape_ops.transpose(self, tuple(dims))


@tensor_method("transpose")
def transpose(self: Tensor, *axes: Any, dim0: Any = None, dim1: Any = None) -> Any:
    """NumPy's ``transpose(*axes)`` (a permutation); two axes swap them (PyTorch's) where NumPy would need another
    number of axes, and on a 2-D Tensor too (``t.transpose(0, 1)`` is PyTorch's transpose, not NumPy's identity
    permutation), except inside a transform given NumPy values, where methods keep NumPy's meaning."""
    if dim0 is not None or dim1 is not None:
        axes = (dim0, dim1)
    if not axes:
        return shape_ops.transpose(self, None)
    if len(axes) != 2:  # one sequence, or as many axes as dimensions: NumPy's permutation
        return shape_ops.transpose(self, tuple(_shape_args(axes)))
    if self.ndim == 0 and scalar_along(self, "transpose", axes):  # PyTorch's swap of a 0-d's dims 0 and -1
        return shape_ops.transpose(self, None)
    if self.ndim != 2:  # NumPy would need self.ndim axes: PyTorch's swap
        return shape_ops.swapaxes(self, axes[0], axes[1])
    if [int(a) % 2 for a in axes] in ([0, 1], [0, 0], [1, 1]) and not numpy_methods():  # PyTorch's swap (NumPy's:
        # the identity, or an error for a repeated axis; PyTorch's swap of a dim with itself changes nothing)
        return shape_ops.swapaxes(self, axes[0], axes[1])
    return shape_ops.transpose(self, tuple(axes))


@tensor_method("t")
def t(self: Tensor) -> Any:
    """PyTorch's ``t()``: the transpose of a matrix (a 0-d or 1-d Tensor is returned as it is)."""
    if self.ndim > 2:
        raise ValueError(f"t(): expects a Tensor of at most 2 dimensions, got {self.ndim}; use .transpose(d0, d1)")
    return shape_ops.transpose(self) if self.ndim == 2 else self


@tensor_method("expand")
def expand(self: Tensor, *sizes: Any) -> Any:
    """PyTorch's ``expand``: broadcast to ``sizes`` (``-1`` keeps a size)."""
    sizes = _shape_args(sizes)
    lead = len(sizes) - self.ndim
    if lead < 0:
        raise ValueError(f"expand: {len(sizes)} sizes {tuple(sizes)} for a Tensor of {self.ndim} dimensions")
    shape = tuple(self.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(sizes))
    if shape[lead:] == self.shape and all(n == 1 for n in shape[:lead]):  # nothing repeated: a view that may be
        return shape_ops.reshape(self, shape)  # written in place, as PyTorch's (a broadcast one is read-only)
    return shape_ops.broadcast_to(self, shape)


@tensor_method("flatten")
def flatten(self: Tensor, start_dim: Any = 0, end_dim: int = -1) -> Any:
    """All axes (or ``start_dim`` to ``end_dim``, PyTorch's) merged into one; ``flatten('C')`` as ndarray's."""
    if isinstance(start_dim, str):
        if start_dim not in ("C", "A", "K"):
            raise ValueError(f"flatten: order {start_dim!r} is not supported; only 'C'")
        start_dim = 0
    nd = max(self.ndim, 1)
    lo, hi = start_dim % nd, end_dim % nd
    if self.ndim == 0:
        return shape_ops.reshape(self, (1,))
    shape = self.shape[:lo] + (-1,) + self.shape[hi + 1:]
    return shape_ops.reshape(self, shape)


@tensor_method("clamp")
def clamp(self: Tensor, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """PyTorch's ``clamp``: limit values to [min, max] (either may be None)."""
    if min is None and max is None:
        raise ValueError("clamp: give min, max or both")
    bounds = [b for b in (min, max) if b is not None]
    if not numpy_methods() and all(isinstance(b, (Tensor, bool, int, float)) for b in bounds):
        # PyTorch's promotion over the value and its bounds (an int Tensor clamped at 1.5 is float32)
        target = result_dtype([self._data, *(b._data if isinstance(b, Tensor) else b for b in bounds)])
        self, min, max = (shape_ops.astype(v, target) if isinstance(v, Tensor) and v.dtype != target else v
                          for v in (self, min, max))
    return elementwise.clip(self, min, max)


@tensor_method("norm")
def norm(self: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False) -> Any:
    """PyTorch's ``norm``: the ``p``-norm of all entries (``dim=None``) or along ``dim``."""
    from ... import linalg

    order = 2 if p in ("fro", 2, 2.0) else p
    if scalar_along(self, "norm", dim):
        return as_scalar(norm(self.reshape((1,)), p, 0))
    if dim is None:
        out = linalg.norm(shape_ops.reshape(self, (-1,)), ord=order)
        return shape_ops.reshape(out, (1,) * self.ndim) if keepdim else out
    if isinstance(dim, (tuple, list)):
        if order != 2:
            raise ValueError(f"norm: p={p!r} over several dims is not supported; use p='fro' (or 2)")
        return _vector_norm(self, tuple(dim), keepdim)
    return linalg.norm(self, ord=order, axis=dim, keepdims=keepdim)


def _vector_norm(self: Tensor, dim: Any, keepdim: bool) -> Any:
    from ... import linalg

    moved = shape_ops.moveaxis(self, tuple(dim), tuple(range(-len(dim), 0)))
    flat = shape_ops.reshape(moved, moved.shape[: moved.ndim - len(dim)] + (-1,))
    out = linalg.norm(flat, ord=2, axis=-1)
    if keepdim:
        shape = tuple(1 if i in {d % self.ndim for d in dim} else n for i, n in enumerate(self.shape))
        out = shape_ops.reshape(out, shape)
    return out


_FLOAT_NAMES = {"float32": np.float32, "float64": np.float64, "float": np.float32, "double": np.float64,
                "float16": np.float16, "half": np.float16}


def _dtype_of(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, str):
        name = x.removeprefix("torch.")
        if name in _FLOAT_NAMES:
            return np.dtype(_FLOAT_NAMES[name])
        return np.dtype(name)
    return np.dtype(x)


@tensor_method("to")
def to(self: Tensor, *args: Any, dtype: Any = None, device: Any = None, copy: bool = False, **kw: Any) -> Any:
    """PyTorch's ``to``: ``to(dtype)``, ``to("cuda")``, ``to(device, dtype)``, ``to(other_tensor)`` (its device and
    dtype); a move between devices is differentiable (see ``chainrule.ops.device_ops``)."""
    kw.pop("non_blocking", None)
    kw.pop("memory_format", None)  # PyTorch's strides (preserve_format, channels_last): the values are the same
    if kw:
        raise TypeError(f"to: chainrule does not support the keyword(s) {sorted(kw)} of Tensor.to")
    flags = [a for a in args if isinstance(a, (bool, np.bool_))]  # PyTorch's to(dtype, non_blocking, copy)
    if len(flags) > 2 or flags and not all(isinstance(a, (bool, np.bool_)) for a in args[len(args) - len(flags):]):
        raise TypeError(f"to: takes (device, dtype, non_blocking, copy) positionally, got {args!r}")
    if len(flags) == 2:
        copy = bool(flags[1]) or copy
    for a in args[:len(args) - len(flags)]:
        if isinstance(a, str) and a.split(":")[0] in _device_names() or _is_device(a):
            device = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        else:
            dtype = a
    if device is not None:
        moved_self = device_ops.moved(self, device)
        if moved_self is not self:
            self, copy = moved_self, False
    if dtype is None:
        return shape_ops.copy(self) if copy else self
    dt = _dtype_of(dtype)
    if dt == self.dtype:
        return shape_ops.copy(self) if copy else self
    return shape_ops.astype(self, dt)


def _is_device(a: Any) -> bool:
    return type(a).__name__ in ("device", "Device")  # PyTorch's, or chainrule's t.device


def _device_names() -> set[str]:
    return {"cpu", "cuda", "mps", "xpu", "meta", *registered()}


def stable_order(data: np.ndarray, axis: Any, descending: bool) -> np.ndarray:
    """Indices of a stable sort (equal entries keep their order), ascending or descending; NaN counts as
    the largest value, as in PyTorch (last ascending, first descending)."""
    if not descending:
        return np.argsort(data, axis=axis, kind="stable")
    # negating keeps ties in order, as PyTorch's stable descending sort
    keys = -(data if data.dtype.kind in "fi" else data.astype(np.int64))
    if data.dtype.kind != "f" or not np.isnan(data).any():
        return np.argsort(keys, axis=axis, kind="stable")
    ax = -1 if axis is None else axis
    flat = data.ravel() if axis is None else data
    return np.lexsort((keys.ravel() if axis is None else keys, ~np.isnan(flat)), axis=ax)  # stable: NaN first


def torch_order(data: np.ndarray, axis: int, descending: bool, stable: bool) -> np.ndarray:
    """PyTorch's sort order: stable with ``stable=True`` (and for rows of up to 16); otherwise ties in longer
    rows come in the order PyTorch's unstable sort leaves them (``ops/tie_order.py``)."""
    order = stable_order(data, axis, descending)
    return order if stable else tie_order.sort_rows(data, axis % data.ndim, order, descending)


def torch_sort(self: Tensor, axis: Any = -1, descending: bool = False, stable: bool = False) -> ValuesIndices:
    """PyTorch's ``sort(dim, descending)``: the sorted values (differentiable) and their indices."""
    if scalar_along(self, "sort", axis):
        return as_scalar(torch_sort(self.reshape((1,)), 0, descending))
    idx = torch_order(raw(self), axis, descending, stable)  # raw: a jit trace checks the values read
    return ValuesIndices(shape_ops.take_along_axis(self, idx, axis), Tensor._wrap(idx))


def torch_argsort(self: Tensor, axis: Any = -1, kind: Any = None, order: Any = None, *, dim: Any = None,
                  descending: bool = False, stable: Any = None) -> Any:
    """Indices that sort the values (``axis`` or PyTorch's ``dim``, optionally ``descending``; PyTorch's
    positional ``argsort(dim, descending)`` too): an int64 Tensor, as PyTorch's (and ``argmax``'s); NumPy's
    spelling (a ``kind``, or ``axis=None``) gives NumPy's array."""
    if isinstance(kind, (bool, np.bool_)):  # PyTorch's second positional argument is descending, not a kind
        kind, descending = None, bool(kind) or descending
    axis, _ = resolve_dim("argsort", None if axis == -1 and dim is not None else axis, dim)
    if scalar_along(self, "argsort", dim if dim is not None else axis):  # (t.argsort(0) of a 0-d too)
        return Tensor._wrap(np.zeros((), dtype=np.int64))
    if kind is not None or axis is None:  # NumPy's argsort (a kind named, or the flattened array)
        return np.argsort(raw(self), axis=axis, kind=kind) if not descending else stable_order(raw(self), axis, True)
    return Tensor._wrap(torch_order(as_array(raw(self)), axis, descending, bool(stable)))


@tensor_method("repeat_interleave")
def repeat_interleave(self: Tensor, repeats: Any, dim: Any = None, *, output_size: Any = None) -> Any:
    """PyTorch's ``repeat_interleave``: each entry ``repeats`` times along ``dim`` (NumPy's ``repeat``);
    ``output_size``, PyTorch's hint of the result's length along ``dim``, is checked."""
    out = arrays.repeat(self, repeats, dim)
    length = out.shape[dim] if dim is not None else out.size
    if output_size is not None and int(output_size) != length:
        raise ValueError(f"repeat_interleave: output_size={output_size} but the repeats give {length} entries; "
                         f"pass output_size={length} or leave it out")
    return out


@tensor_method("index_select")
def index_select(self: Tensor, dim: int, index: Any) -> Any:
    """PyTorch's ``index_select``: the entries at ``index`` along ``dim`` (in ``[0, size)``: a negative index is
    refused, as in PyTorch)."""
    from .common import check_range, checked_axis  # (torch_extras builds on this module)

    idx = raw(index)
    if isinstance(idx, (np.ndarray, list, tuple, int, np.integer)):  # (under vmap a batched index is checked there)
        axis = checked_axis(self, dim, "index_select")
        check_range("index_select", np.asarray(idx), axis, self.shape[axis] if self.ndim else 1)
        if self.ndim == 0:  # PyTorch reads a 0-d Tensor as one entry, and gives a 0-d back
            return shape_ops.take(self.reshape((1,)), np.zeros(np.shape(idx), dtype=np.int64), 0).reshape(())
    return shape_ops.take(self, index, dim)


for _np_fn in (np.argmax, np.argmin, np.any, np.all):
    tensor_method(_np_fn.__name__, reads_values(_value_method(_np_fn, _np_fn.__name__,
                                                           as_tensor=True)))


@tensor_method("clone")
def clone(self: Tensor, *, memory_format: Any = None) -> Any:
    """PyTorch's ``clone``: a copy that stays in the graph."""
    return shape_ops.copy(self)


@tensor_method("contiguous")
def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """PyTorch's ``contiguous()``: the tensor itself when its entries lie in row-major order, else a copy in the
    graph (writing into it leaves the tensor, as there)."""
    return self if self._data.flags.c_contiguous else shape_ops.copy(self)


@tensor_method("numel")
def numel(self: Tensor) -> int:
    """PyTorch's ``numel``: the number of entries (of one example inside vmap)."""
    return int(np.prod(self.shape))


@tensor_method("dim")
def dim(self: Tensor) -> int:
    """PyTorch's ``dim``: the number of dimensions (of one example inside vmap)."""
    return len(self.shape)


@tensor_method("float")
def float32(self: Tensor, *, memory_format: Any = None) -> Any:  # (a PyTorch layout: the values are the same)
    """PyTorch's ``float()``: the values as float32."""
    return to(self, np.float32)


@tensor_method("double")
def float64(self: Tensor, *, memory_format: Any = None) -> Any:
    """PyTorch's ``double()``: the values as float64."""
    return to(self, np.float64)


@tensor_method("long")
def int64(self: Tensor, *, memory_format: Any = None) -> Tensor:
    """PyTorch's ``long()``: the values as int64 (out of the graph, as integer tensors are)."""
    return Tensor._wrap(self._data.astype(np.int64))


# PyTorch's legacy type names (t.type() and t.type("torch.FloatTensor")) and their dtypes
_TYPE_NAMES = {"torch.FloatTensor": np.float32, "torch.DoubleTensor": np.float64, "torch.HalfTensor": np.float16,
               "torch.LongTensor": np.int64, "torch.IntTensor": np.int32, "torch.ShortTensor": np.int16,
               "torch.CharTensor": np.int8, "torch.ByteTensor": np.uint8, "torch.BoolTensor": np.bool_}


@tensor_method("type")
def type_(self: Tensor, dtype: Any = None, non_blocking: bool = False) -> Any:
    """PyTorch's ``type``: ``t.type(torch.float)`` (or ``t.type("torch.FloatTensor")``) is ``t.to(dtype)``;
    ``t.type()`` names the type as PyTorch does (``"torch.FloatTensor"``)."""
    if dtype is None:
        for name, dt in _TYPE_NAMES.items():
            if np.dtype(dt) == self.dtype:
                return name
        return f"torch.{self.dtype.name}"
    if isinstance(dtype, str) and dtype.removeprefix("torch.cuda.") != dtype:
        raise TypeError(f"type: {dtype!r} names a CUDA tensor type; use t.to('cuda') (and a dtype) to move it")
    return to(self, _TYPE_NAMES.get(dtype, dtype) if isinstance(dtype, str) else dtype)
