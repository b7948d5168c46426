"""PyTorch's shape spellings of existing ops (``movedim``, ``view_as``), new tensors like one
(``new_zeros``), in-place methods (``exp_``, ``clamp_``), and facts about the storage (``stride``)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...core.device import backend, check_cpu, move, of
from ...tensor import Tensor
from ..declare import TENSOR_METHODS, tensor_method
from .common import also_method, as_array, checked_axis, declared, dims_tuple, values_of
from .dim_args import scalar_along

also_method("moveaxis", "movedim", lambda self, source, destination: declared("moveaxis")(self, source, destination))
also_method("swapaxes", "swapdims", lambda self, dim0, dim1: declared("swapaxes")(self, dim0, dim1))


def tensor_split(self: Tensor, indices_or_sections: Any, dim: int = 0) -> Any:
    """PyTorch's ``tensor_split``: ``n`` pieces as even as can be (the first ones one longer), or the pieces
    between the given indices, along ``dim`` (NumPy's ``array_split``)."""
    cut = indices_or_sections
    cut = cut.tolist() if isinstance(cut, Tensor) else cut
    return tuple(declared("array_split")(self, cut, axis=checked_axis(self, dim, "tensor_split")))


also_method("array_split", "tensor_split", tensor_split)


def _flip(self: Tensor, *dims: Any, **named: Any) -> Any:
    if "dims" in named and not dims:  # t.flip(dims=(0,))
        dims = (named.pop("dims"),)
    if named:
        raise TypeError(f"flip() got unexpected keyword(s) {sorted(named)}; it takes dims")
    if not dims:
        raise TypeError("flip: give the dims to flip (PyTorch's t.flip(dims)); numpy.flip(t) flips every axis")
    if scalar_along(self, "flip", dims_tuple(dims)):
        return declared("copy")(self)
    return declared("flip")(self, dims_tuple(dims))


also_method("flip", "flip", _flip)
def _roll(self: Tensor, shifts: Any, dims: Any = None) -> Any:
    count = len(shifts) if isinstance(shifts, (tuple, list)) else 1
    if count != (1 if dims is None else len(dims) if isinstance(dims, (tuple, list)) else 1):
        raise ValueError(f"roll: shifts={shifts!r} and dims={dims!r} do not align: PyTorch's t.roll takes one shift "
                         f"per dim (or one shift of the flattened Tensor, without dims); for NumPy's broadcasting "
                         f"write np.roll(t, shift, axis)")
    return declared("roll")(self, shifts, dims)


also_method("roll", "roll", _roll)
also_method("tile", "tile", lambda self, *dims: declared("tile")(self, dims_tuple(dims)))
also_method("tril", "tril", lambda self, diagonal=0: declared("tril")(self, diagonal))
also_method("triu", "triu", lambda self, diagonal=0: declared("triu")(self, diagonal))
also_method("diag", "diag", lambda self, diagonal=0: declared("diag")(self, diagonal))
also_method("reshape", "reshape_as", lambda self, other: declared("reshape")(self, tuple(other.shape)))
also_method("reshape", "view_as", lambda self, other: declared("reshape")(self, tuple(other.shape)))
also_method("broadcast_to", "expand_as", lambda self, other: declared("broadcast_to")(self, tuple(other.shape)))
also_method("astype", "type_as",
      lambda self, other: self if self.dtype == other.dtype else declared("astype")(self, other.dtype))
for _method in ("movedim", "flip", "roll", "tile", "tril", "triu", "diag", "reshape_as", "view_as", "expand_as",
                "type_as"):
    TENSOR_METHODS[_method].__doc__ = f"PyTorch's ``{_method}`` (its argument names and defaults)."


# -- new tensors like this one (constants) ---------------------------------------------------------
def _size(size: tuple[Any, ...]) -> tuple[int, ...]:
    return tuple(int(n) for n in dims_tuple(size))


def _new(name: str, values: np.ndarray, device: Any, requires_grad: bool, like: Tensor) -> Tensor:
    """A new leaf of host ``values`` on ``device`` (else ``like``'s device, as PyTorch's ``new_*``)."""
    check_cpu(name, device)
    target = backend(device) if device is not None else of(like._data)
    values = move(values, target)
    return Tensor(values, requires_grad=True) if requires_grad else Tensor._wrap(values)


@tensor_method("new_zeros")
def new_zeros(self: Tensor, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """PyTorch's ``new_zeros``: zeros of ``size``, this Tensor's dtype (a new leaf, out of the graph)."""
    return _new("new_zeros", np.zeros(_size(size), dtype=dtype or self.dtype), device, requires_grad, self)


@tensor_method("new_ones")
def new_ones(self: Tensor, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """PyTorch's ``new_ones``: ones of ``size``, this Tensor's dtype."""
    return _new("new_ones", np.ones(_size(size), dtype=dtype or self.dtype), device, requires_grad, self)


@tensor_method("new_empty")
def new_empty(self: Tensor, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """PyTorch's ``new_empty``: a Tensor of ``size`` and this Tensor's dtype (zeros here: never garbage)."""
    return _new("new_empty", np.zeros(_size(size), dtype=dtype or self.dtype), device, requires_grad, self)


@tensor_method("new_full")
def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """PyTorch's ``new_full``: ``fill_value`` everywhere in ``size``, this Tensor's dtype."""
    return _new("new_full", np.full(_size((size,)), fill_value, dtype=dtype or self.dtype), device, requires_grad, self)


@tensor_method("new_tensor")
def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    """PyTorch's ``new_tensor``: a copy of ``data`` with this Tensor's dtype, on its device (a new leaf)."""
    values = data._data if isinstance(data, Tensor) else as_array(data)
    values = values.astype(dtype or self.dtype, copy=True)
    return _new("new_tensor", values, device, requires_grad, self)


# -- in place (the methods made from ops are in in_place_methods.py) ----------------------------------------
@tensor_method("detach_")
def detach_(self: Tensor) -> Tensor:
    """PyTorch's ``detach_``: cut this Tensor from the graph, in place (it becomes a leaf without gradient)."""
    values_of(self, "detach_")
    self._requires_grad, self._node, self._index = False, None, None
    return self


# -- facts about the storage, and dtype conversions -------------------------------------------------
tensor_method("nelement", lambda self: int(values_of(self, "nelement").size))
TENSOR_METHODS["nelement"].__doc__ = "PyTorch's ``nelement``: the number of entries (``numel``)."


@tensor_method("element_size")
def element_size(self: Tensor) -> int:
    """PyTorch's ``element_size``: bytes per entry."""
    return int(values_of(self, "element_size").itemsize)


@tensor_method("is_contiguous")
def is_contiguous(self: Tensor) -> bool:
    """PyTorch's ``is_contiguous``: whether the entries lie in row-major order without gaps."""
    return bool(values_of(self, "is_contiguous").flags.c_contiguous)


@tensor_method("stride")
def stride(self: Tensor, dim: int | None = None) -> Any:
    """PyTorch's ``stride``: steps between entries, in entries (NumPy's ``strides`` are in bytes)."""
    data = values_of(self, "stride")
    steps = tuple(s // data.itemsize for s in data.strides)
    return steps if dim is None else steps[checked_axis(self, dim, "stride")]


@tensor_method("data_ptr")
def data_ptr(self: Tensor) -> int:
    """PyTorch's ``data_ptr``: the address of the first entry (equal for a view that starts where its base does:
    ``a.data_ptr() == a[0].data_ptr()``)."""
    data = values_of(self, "data_ptr")
    return int(of(data).address(data))


@tensor_method("storage_offset")
def storage_offset(self: Tensor) -> int:
    """PyTorch's ``storage_offset``: how many entries into its base's memory a view starts (0 for the base)."""
    data = values_of(self, "storage_offset")
    base = data
    while getattr(base, "base", None) is not None and hasattr(base.base, "dtype"):
        base = base.base
    return (of(data).address(data) - of(base).address(base)) // data.itemsize


# what a PyTorch program asks of a tensor's kind: chainrule's are dense, strided, unquantized, on a real device
for _name in ("is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_nested", "is_mkldnn"):
    tensor_method(_name, property(lambda self: False, doc=f"PyTorch's ``{_name}``: False (dense Tensors only)."))
tensor_method("layout", property(lambda self: "strided", doc="PyTorch's ``layout``: ``'strided'`` (``cr.strided``)."))


@tensor_method("share_memory_")
def share_memory_(self: Tensor) -> Tensor:
    """PyTorch's ``share_memory_`` (for its multiprocessing): chainrule's worker processes get copies, so this is
    itself, unchanged."""
    return self


@tensor_method("is_shared")
def is_shared(self: Tensor) -> bool:
    """PyTorch's ``is_shared``: False (see :func:`share_memory_`)."""
    return False


@tensor_method("apply_")
def apply_(self: Tensor, fn: Any) -> Tensor:
    """PyTorch's ``apply_``: ``fn`` (a Python function of one number) on every entry, in place (outside the graph:
    a host tensor that does not require grad, as PyTorch's)."""
    data = values_of(self, "apply_")
    self._inplace_guard("apply_")
    if data.__class__ is not np.ndarray:
        raise TypeError(f"apply_: only a Tensor on the host takes a Python function per entry, this one is on "
                        f"{self.device}")
    if self._requires_grad:
        raise RuntimeError("apply_: a Python function per entry has no derivative; call it on t.detach()")
    flat = data.reshape(-1)
    flat[...] = [fn(v) for v in flat.tolist()]
    if not data.flags.c_contiguous:
        data[...] = flat.reshape(data.shape)
    self._bump_version()
    return self


@tensor_method("map_")
def map_(self: Tensor, other: Any, fn: Any) -> Tensor:
    """PyTorch's ``map_``: ``fn(a, b)`` of each entry and ``other``'s (broadcast to this shape), in place."""
    b = np.broadcast_to(as_array(other._data if isinstance(other, Tensor) else other), self.shape)
    pairs = iter(b.reshape(-1).tolist())
    return apply_(self, lambda a: fn(a, next(pairs)))


def _adjoint(self: Tensor) -> Any:
    if self.ndim < 2:
        raise ValueError(f"mH: needs at least 2 dimensions, got {self.ndim}")
    swapped = declared("swapaxes")(self, -1, -2)
    return declared("conjugate")(swapped) if np.dtype(self.dtype).kind == "c" else swapped


def _matrix_adjoint(self: Tensor) -> Any:
    if self.ndim != 2:
        raise ValueError(f"H: needs a matrix (2 dimensions), got {self.ndim}; use .mH for batches")
    return _adjoint(self)


tensor_method("mH", property(_adjoint, doc="PyTorch's ``mH``: the conjugate transpose of the last two dims."))
tensor_method("H", property(_matrix_adjoint, doc="PyTorch's ``H``: the conjugate transpose of a matrix."))


class GradFn(NamedTuple):
    """What PyTorch's ``t.grad_fn`` tells: the op that computed a tensor in the graph (``name()``), and
    ``next_functions``, one ``(grad_fn, 0)`` pair per input that requires grad (``None`` for a leaf, where
    PyTorch has its AccumulateGrad), to walk the graph as the PyTorch tutorials do."""

    op: str
    tensor: Any = None

    def name(self) -> str:
        return self.op

    @property
    def next_functions(self) -> tuple[tuple[GradFn | None, int], ...]:
        parents = self.tensor.parents if self.tensor is not None else ()
        return tuple((_grad_fn(parent), 0) for parent in parents)

    def __repr__(self) -> str:
        return f"GradFn(op={self.op!r})"


def _grad_fn(self: Tensor) -> GradFn | None:
    return None if self.is_leaf else GradFn(self.op, self)


tensor_method("grad_fn", property(_grad_fn, doc="PyTorch's ``grad_fn``: None for a leaf (or a tensor outside the "
                                              "graph), else the op that computed it (``t.op``)."))
tensor_method("output_nr", property(lambda self: self._index or 0, doc="PyTorch's ``output_nr``: which output of "
                                   "the op that computed it this tensor is (0 for a leaf or a single output)."))


@tensor_method("half")
def half(self: Tensor, *, memory_format: Any = None) -> Any:  # (a PyTorch layout: the values are the same)
    """PyTorch's ``half()``: the values as float16."""
    return self if self.dtype == np.float16 else declared("astype")(self, np.float16)


@tensor_method("bfloat16")
def bfloat16(self: Tensor, *, memory_format: Any = None) -> Any:
    """PyTorch's ``bfloat16()``: refused with a TypeError saying what to use (NumPy has no bfloat16 type)."""
    from ...core.absent_dtype import bfloat16 as absent

    return absent.dtype  # (raises)


@tensor_method("int")
def int32(self: Tensor, *, memory_format: Any = None) -> Tensor:
    """PyTorch's ``int()``: the values as int32 (out of the graph, as integer tensors are)."""
    return Tensor._wrap(values_of(self, "int").astype(np.int32))


@tensor_method("bool")
def boolean(self: Tensor, *, memory_format: Any = None) -> Tensor:
    """PyTorch's ``bool()``: the values as booleans (out of the graph)."""
    return Tensor._wrap(values_of(self, "bool").astype(bool))




@tensor_method("is_floating_point")
def is_floating_point(self: Tensor) -> bool:
    """PyTorch's ``is_floating_point()``: whether the dtype is a real floating one."""
    return np.dtype(self.dtype).kind == "f"


@tensor_method("is_complex")
def is_complex(self: Tensor) -> bool:
    """PyTorch's ``is_complex()``: whether the dtype is complex."""
    return np.dtype(self.dtype).kind == "c"


@tensor_method("ndimension")
def ndimension(self: Tensor) -> int:
    """PyTorch's ``ndimension()``: the number of dimensions (``ndim``)."""
    return self.ndim


def _retains_grad(self: Tensor) -> bool:
    node = self._node
    if node is None or not node.outputs:
        return False
    entry = node.outputs.get(self._index)
    return bool(entry and entry[0]() is self and entry[1])


tensor_method("retains_grad", property(_retains_grad, doc="PyTorch's ``retains_grad``: whether ``retain_grad()`` "
                                                          "was called on this computed tensor (False for a leaf)."))
