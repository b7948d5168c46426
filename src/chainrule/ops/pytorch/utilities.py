"""PyTorch's small Tensor utilities and aliases: facts (``is_cpu``, ``nbytes``, ``is_signed``, ``get_device``),
spellings of existing ops (``diagflat``, ``hsplit``, ``cov``, ``adjoint``, ``ger``, ``row_stack``, ``trapz``),
``sum_to_size`` and ``cumulative_trapezoid`` (differentiable composites), ``unique_consecutive``, dtype rules
(``promote_types``, ``can_cast``), the generator's state and windows (``hann_window``, ``kaiser_window``). The
random fills (``bernoulli_``, ``exponential_``, ``random_``) are in :mod:`.random_fill`.

Example:
    >>> import chainrule as cr
    >>> t = cr.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> t.nbytes, t.is_signed(), t.sum_to_size(1, 2).tolist()
    (16, True, [[4.0, 6.0]])
    >>> cr.broadcast_shapes((2, 1), (3,)), cr.promote_types(cr.int32, cr.float32)
    ((2, 3), dtype('float64'))
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ...core import defaults
from ...core.device import is_off_host
from ...tensor import Tensor
from ..declare import TENSOR_METHODS, tensor_method
from .common import also_method, checked_axis, declared, dims_tuple, values_of
from .toplevel import bincount, histc, msort

# -- facts ----------------------------------------------------------------------------------------------
tensor_method("is_cpu", property(lambda self: not is_off_host(self._data),
                                 doc="PyTorch's ``is_cpu``: whether the values are on the host."))
tensor_method("itemsize", property(lambda self: int(self._data.itemsize),
                                   doc="PyTorch's ``itemsize``: bytes per entry."))
tensor_method("nbytes", property(lambda self: int(self._data.nbytes),
                                 doc="PyTorch's ``nbytes``: bytes of all the entries."))


@tensor_method("is_signed")
def is_signed(self: Tensor) -> bool:
    """PyTorch's ``is_signed()``: whether the dtype holds negative numbers (False for bool and unsigned)."""
    return np.dtype(self.dtype).kind in "ifc"


@tensor_method("is_same_size")
def is_same_size(self: Tensor, other: Any) -> bool:
    """PyTorch's ``is_same_size(other)``: whether both have one shape."""
    return tuple(self.shape) == tuple(other.shape)


@tensor_method("is_nonzero")
def is_nonzero(self: Tensor) -> bool:
    """PyTorch's ``is_nonzero()``: the truth of a one-entry tensor (more or fewer entries raise, as PyTorch)."""
    data = values_of(self, "is_nonzero")
    if data.size != 1:
        amount = "no values" if data.size == 0 else "more than one value"
        raise RuntimeError(f"is_nonzero: Boolean value of Tensor with {amount} is ambiguous")
    return bool(data.reshape(()))


@tensor_method("is_inference")
def is_inference(self: Tensor) -> bool:
    """PyTorch's ``is_inference()``: False; chainrule's ``inference_mode`` makes ordinary tensors (no graph)."""
    return False


@tensor_method("get_device")
def get_device(self: Tensor) -> int:
    """PyTorch's ``get_device()``: -1 on the host, else the device's index."""
    if not is_off_host(self._data):
        return -1
    return int(getattr(self.device, "index", None) or 0)


@tensor_method("is_conj")
def is_conj(self: Tensor) -> bool:
    """PyTorch's ``is_conj()``: False (chainrule conjugates at once; it has no lazy conjugate bit)."""
    return False


@tensor_method("is_neg")
def is_neg(self: Tensor) -> bool:
    """PyTorch's ``is_neg()``: False (no lazy negative bit)."""
    return False


@tensor_method("resolve_conj")
def resolve_conj(self: Tensor) -> Tensor:
    """PyTorch's ``resolve_conj()``: the tensor itself (no lazy conjugate to resolve)."""
    return self


@tensor_method("resolve_neg")
def resolve_neg(self: Tensor) -> Tensor:
    """PyTorch's ``resolve_neg()``: the tensor itself (no lazy negation to resolve)."""
    return self


@tensor_method("conj_physical")
def conj_physical(self: Tensor) -> Any:
    """PyTorch's ``conj_physical()``: the complex conjugate (a copy; a real tensor's own values)."""
    return declared("conjugate")(self)


@tensor_method("adjoint")
def adjoint(self: Tensor) -> Any:
    """PyTorch's ``adjoint()``: the conjugate transpose of the last two dims (``mH``)."""
    return self.mH


@tensor_method("new")
def new(self: Tensor, *args: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """PyTorch's legacy ``new``: ``t.new(2, 3)`` a tensor of that size (zeros here), ``t.new([1, 2])`` one of those
    values, ``t.new()`` an empty one; this tensor's dtype, a new leaf."""
    dims = args[0] if len(args) == 1 and type(args[0]).__name__ == "_Size" else args
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in dims):
        return self.new_zeros(*((0,) if not dims else dims), dtype=dtype, device=device)
    if len(args) != 1:
        raise TypeError(f"new: expected sizes (ints) or one sequence of values, got {args!r:.80}")
    return self.new_tensor(args[0], dtype=dtype, device=device)


# -- dtype conversions PyTorch names (integers: out of the graph, as integer tensors are) ------------------------
def _integer(name: str, dtype: Any) -> None:
    def convert(self: Tensor, *, memory_format: Any = None) -> Tensor:
        return Tensor._wrap(values_of(self, name).astype(dtype))

    convert.__doc__ = f"PyTorch's ``{name}()``: the values as {np.dtype(dtype).name} (out of the graph)."
    tensor_method(name, convert)


def _complex(name: str, dtype: Any) -> None:
    def convert(self: Tensor, *, memory_format: Any = None) -> Any:
        return self if self.dtype == dtype else declared("astype")(self, dtype)

    convert.__doc__ = f"PyTorch's ``{name}()``: the values as {np.dtype(dtype).name} (differentiable)."
    tensor_method(name, convert)


_integer("byte", np.uint8)
_integer("char", np.int8)
_integer("short", np.int16)
_complex("cfloat", np.complex64)
_complex("cdouble", np.complex128)


# -- spellings of existing ops ----------------------------------------------------------------------------
also_method("diagflat", "diagflat", lambda self, offset=0: declared("diagflat")(self, offset))
for _name in ("dsplit", "hsplit", "vsplit"):
    also_method(_name, _name, (lambda n: lambda self, sections: tuple(declared(n)(self, sections)))(_name))
    TENSOR_METHODS[_name].__doc__ = f"PyTorch's ``{_name}(sections)``: NumPy's ``{_name}``, as a tuple."
tensor_method("split_with_sizes", lambda self, split_sizes, dim=0: self.split(list(split_sizes), dim))
TENSOR_METHODS["split_with_sizes"].__doc__ = "PyTorch's ``split_with_sizes(sizes, dim=0)``: ``split(list(sizes))``."
tensor_method("unsafe_chunk", lambda self, chunks, dim=0: self.chunk(chunks, dim))
tensor_method("unsafe_split", lambda self, split_size, dim=0: self.split(split_size, dim))
tensor_method("unsafe_split_with_sizes", lambda self, split_sizes, dim=0: self.split(list(split_sizes), dim))
for _name in ("unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes"):
    TENSOR_METHODS[_name].__doc__ = f"PyTorch's ``{_name}``: ``{_name[7:]}`` (the pieces are new values here)."
also_method("isreal", "isreal")  # (torch.isreal is the op: chainrule.isreal)
tensor_method("msort", lambda self: msort(self))
TENSOR_METHODS["msort"].__doc__ = "PyTorch's ``msort()``: sorted along the first dim (``torch.msort``)."
tensor_method("bincount", lambda self, weights=None, minlength=0: bincount(self, weights, minlength))
TENSOR_METHODS["bincount"].__doc__ = "PyTorch's ``bincount(weights=None, minlength=0)`` (``torch.bincount``)."
tensor_method("histc", lambda self, bins=100, min=0.0, max=0.0: histc(self, bins, min, max))  # noqa: A006
TENSOR_METHODS["histc"].__doc__ = "PyTorch's ``histc(bins=100, min=0, max=0)`` (``torch.histc``)."
also_method("corrcoef", "corrcoef", lambda self: declared("corrcoef")(self))
also_method("outer", "ger", lambda self, vec2: declared("outer")(self, vec2))
TENSOR_METHODS["ger"].__doc__ = "PyTorch's ``ger(vec2)``: the outer product (``outer``)."


def cov(self: Tensor, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
    """PyTorch's ``cov()``: the covariance of the rows (variables) over the columns (observations), ``correction``
    subtracted from the count (1: unbiased), with frequency or observation weights."""
    return declared("cov")(self, ddof=correction, fweights=fweights, aweights=aweights)


also_method("cov", "cov", cov)


@tensor_method("sum_to_size")
def sum_to_size(self: Tensor, *size: Any) -> Any:
    """PyTorch's ``sum_to_size(*size)``: summed down to ``size``, which the shape must broadcast from (the
    gradient of a broadcast); differentiable.

    Example:
        >>> import chainrule as cr
        >>> cr.ones((2, 3)).sum_to_size(3).tolist()
        [2.0, 2.0, 2.0]
    """
    target = tuple(int(n) for n in dims_tuple(size))
    shape = tuple(self.shape)
    if len(target) > len(shape) or any(t not in (1, s) for t, s in zip(target[::-1], shape[::-1])):
        raise RuntimeError(f"sum_to_size: size {list(target)} is not expandable to size {list(shape)}")
    lead = len(shape) - len(target)
    axes = tuple(range(lead)) + tuple(lead + i for i, t in enumerate(target) if t == 1 and shape[lead + i] != 1)
    out = self.sum(axis=axes, keepdims=True) if axes else self
    return out.reshape(target) if tuple(out.shape) != target else out


@tensor_method("unique_consecutive")
def unique_consecutive(self: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """PyTorch's ``unique_consecutive``: each run of equal entries (or slices along ``dim``) kept once, with the
    index of its run per entry (``return_inverse``) and each run's length (``return_counts``); no gradient."""
    data = values_of(self, "unique_consecutive")
    axis = None if dim is None else checked_axis(self, dim, "unique_consecutive")
    rows = data.reshape(-1) if axis is None else np.moveaxis(data, axis, 0)
    if len(rows) == 0:
        starts = np.zeros(0, dtype=bool)
    else:
        differs = (rows[1:] != rows[:-1]).reshape(len(rows) - 1, -1).any(axis=1)
        starts = np.concatenate([[True], differs])
    kept = rows[starts] if axis is None else np.moveaxis(rows[starts], 0, axis)
    result: list[Any] = [Tensor._wrap(np.ascontiguousarray(kept))]
    if return_inverse:
        inverse = np.cumsum(starts) - 1
        result.append(Tensor._wrap(inverse.reshape(data.shape if axis is None else (-1,)).astype(np.int64)))
    if return_counts:
        result.append(Tensor._wrap(np.diff(np.append(np.flatnonzero(starts), len(rows))).astype(np.int64)))
    return result[0] if len(result) == 1 else tuple(result)


@tensor_method("hardshrink")
def hardshrink(self: Tensor, lambd: float = 0.5) -> Any:
    """PyTorch's ``hardshrink(lambd=0.5)``: the entries beyond ``[-lambd, lambd]``, zero inside (differentiable)."""
    v = self._data
    zero = np.where(v != v, v, 0).astype(v.dtype)  # 0, and NaN where self is NaN (as PyTorch's), a constant
    return declared("where")((self > lambd) | (self < -lambd), self, zero)


@tensor_method("prelu")
def prelu(self: Tensor, weight: Any) -> Any:
    """PyTorch's ``prelu(weight)``: ``x`` where positive, else ``weight * x``; ``weight`` has one entry, or one per
    channel (dim 1; dim 0 of a 1-d input). Differentiable in both."""
    w = weight if isinstance(weight, Tensor) else Tensor(np.asarray(weight, dtype=self.dtype))
    if w.size not in (1, self.shape[1 if self.ndim > 1 else 0] if self.ndim else 1):
        raise RuntimeError(f"prelu: weight has {w.size} entries; give 1 or one per channel "
                           f"({self.shape[1 if self.ndim > 1 else 0] if self.ndim else 1})")
    if w.size > 1 and self.ndim > 1:
        w = w.reshape((-1,) + (1,) * (self.ndim - 2))
    elif w.size == 1:
        w = w.reshape(())
    return declared("where")(self > 0, self, w * self)


# -- top level ------------------------------------------------------------------------------------------------
def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """PyTorch's ``torch.broadcast_shapes``: the shape the given shapes broadcast to (a tuple)."""
    return tuple(int(n) for n in np.broadcast_shapes(*(tuple(s) if not isinstance(s, int) else (s,)
                                                        for s in shapes)))


def promote_types(type1: Any, type2: Any) -> np.dtype:
    """PyTorch's ``torch.promote_types``: the smallest dtype both cast to (NumPy's promotion)."""
    return np.promote_types(type1, type2)


def can_cast(from_: Any, to: Any) -> bool:
    """PyTorch's ``torch.can_cast(from, to)``: whether PyTorch's casting rules allow it (within a kind, or to a
    higher kind: bool < int < float < complex)."""
    return bool(np.can_cast(from_, to, casting="same_kind"))


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """PyTorch's ``torch.scalar_tensor(s)``: a 0-d tensor of ``s``, the default float dtype unless given."""
    return Tensor(np.asarray(s, dtype=dtype or defaults.get_default_dtype()), requires_grad=requires_grad,
                  device=device)


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Any:  # noqa: A002
    """PyTorch's ``torch.rsub(input, other, alpha=1)``: ``other - alpha * input``."""
    return other - (input if alpha == 1 else input * alpha)


def cumulative_trapezoid(y: Any, x: Any = None, *, dx: float | None = None, dim: int = -1) -> Any:
    """PyTorch's ``torch.cumulative_trapezoid``: the running integral of ``y`` along ``dim`` by the trapezoidal
    rule (one entry fewer), samples at ``x`` or spaced ``dx`` (1); differentiable.

    Example:
        >>> import chainrule as cr
        >>> cr.cumulative_trapezoid(cr.tensor([1.0, 2.0, 3.0])).tolist()
        [1.5, 4.0]
    """
    y = y if isinstance(y, Tensor) else Tensor(y)
    axis = checked_axis(y, dim, "cumulative_trapezoid")
    n = y.shape[axis]
    upper = y.narrow(axis, 1, n - 1) if n > 1 else y.narrow(axis, 0, 0)
    lower = y.narrow(axis, 0, max(n - 1, 0))
    if x is not None:
        x = x if isinstance(x, Tensor) else Tensor(np.asarray(x, dtype=np.float64))
        xs = x if x.ndim == 1 else x.movedim(dim, -1)
        width = xs[..., 1:] - xs[..., :-1]
        if x.ndim == 1:
            width = width.reshape((-1,) + (1,) * (y.ndim - axis - 1))
        else:
            width = width.movedim(-1, dim)
        return ((upper + lower) * width / 2).cumsum(axis)
    return ((upper + lower) * ((1.0 if dx is None else dx) / 2)).cumsum(axis)


def trapz(y: Any, x: Any = None, *, dx: float | None = None, dim: int = -1) -> Any:
    """PyTorch's ``torch.trapz`` (``trapezoid``): the integral of ``y`` along ``dim`` by the trapezoidal rule."""
    return declared("trapezoid")(y, x, dx=1.0 if dx is None else dx, axis=dim)


# -- the generator ----------------------------------------------------------------------------------------------
def get_rng_state() -> dict[str, Any]:
    """PyTorch's ``torch.get_rng_state()``: the default generator's state (NumPy's ``bit_generator.state``, a dict,
    not PyTorch's byte tensor); ``set_rng_state`` puts it back."""
    return defaults.generator().bit_generator.state


def set_rng_state(new_state: dict[str, Any]) -> None:
    """PyTorch's ``torch.set_rng_state(state)``: the default generator continues from a state ``get_rng_state``
    gave."""
    if not isinstance(new_state, dict):
        raise TypeError("set_rng_state: expected the state get_rng_state() returned (a dict of NumPy's generator), "
                        f"got {type(new_state).__name__}")
    defaults.generator().bit_generator.state = new_state


def seed() -> int:
    """PyTorch's ``torch.seed()``: seed the default generator from the operating system's entropy; the seed."""
    value = int(np.random.SeedSequence().entropy % 2**63)
    defaults.manual_seed(value)
    return value


def initial_seed() -> int:
    """PyTorch's ``torch.initial_seed()``: the seed of the default generator (``manual_seed``'s, 0 at start)."""
    return defaults.initial_seed()


def set_printoptions(precision: int | None = None, threshold: int | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """PyTorch's ``torch.set_printoptions``: NumPy's print options, which a Tensor's repr uses (``profile``
    'default', 'short' or 'full' as PyTorch's; ``sci_mode`` False: no scientific notation)."""
    options: dict[str, Any] = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
                               "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
                               "full": dict(precision=4, threshold=sys.maxsize, edgeitems=3, linewidth=80)
                               }.get(profile or "", {})
    if profile is not None and not options:
        raise ValueError(f"set_printoptions: profile must be 'default', 'short' or 'full', got {profile!r}")
    given = dict(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth)
    options.update({k: v for k, v in given.items() if v is not None})
    if sci_mode is not None:
        options["suppress"] = not sci_mode
    np.set_printoptions(**options)


def get_num_threads() -> int:
    """PyTorch's ``torch.get_num_threads()``: the cores the host has (chainrule's BLAS and worker threads size
    themselves; ``set_num_threads`` changes nothing)."""
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def set_num_threads(n: int) -> None:
    """PyTorch's ``torch.set_num_threads(n)``: accepted and ignored (set ``OMP_NUM_THREADS`` or
    ``OPENBLAS_NUM_THREADS`` before the start to size NumPy's BLAS)."""
    if int(n) < 1:
        raise ValueError(f"set_num_threads: expects a positive integer, got {n}")


# -- windows ----------------------------------------------------------------------------------------------------
def _window(name: str, symmetric: Callable[[int], np.ndarray]) -> Callable[..., Tensor]:
    def window(window_length: int, periodic: bool = True, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
        n = int(window_length)
        if n < 0:
            raise RuntimeError(f"{name}: requires non-negative window_length, got window_length={n}")
        values = np.ones(1) if n == 1 else symmetric(n + 1)[:-1] if periodic else symmetric(n)
        return Tensor(np.asarray(values[:n]).astype(dtype or defaults.get_default_dtype()),
                      requires_grad=requires_grad, device=device)

    window.__name__ = window.__qualname__ = name
    window.__doc__ = (f"PyTorch's ``torch.{name}(window_length, periodic=True)``: NumPy's window of that name, one "
                      "longer with its last value dropped when ``periodic`` (for spectral analysis).")
    return window


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  device: Any = None, requires_grad: bool = False) -> Tensor:
    """PyTorch's ``torch.kaiser_window(window_length, periodic=True, beta=12.0)``: NumPy's Kaiser window."""
    return _window("kaiser_window", lambda n: np.kaiser(n, beta))(window_length, periodic, dtype=dtype,
                                                                   device=device, requires_grad=requires_grad)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "broadcast_shapes": broadcast_shapes, "promote_types": promote_types, "can_cast": can_cast,
    "scalar_tensor": scalar_tensor, "rsub": rsub, "trapz": trapz,
    "cumulative_trapezoid": cumulative_trapezoid, "get_rng_state": get_rng_state, "set_rng_state": set_rng_state,
    "seed": seed, "initial_seed": initial_seed, "set_printoptions": set_printoptions,
    "get_num_threads": get_num_threads, "set_num_threads": set_num_threads, "kaiser_window": kaiser_window,
    "bartlett_window": _window("bartlett_window", np.bartlett),
    "blackman_window": _window("blackman_window", np.blackman),
    "hamming_window": _window("hamming_window", np.hamming), "hann_window": _window("hann_window", np.hanning),
    "row_stack": lambda tensors, *, out=None: declared("vstack")(list(tensors)),
}
# torch.<name>(input, ...) is input.<name>(...) for these (functions.py makes them)
METHODS = ("is_same_size", "is_signed", "get_device", "is_nonzero", "is_inference", "adjoint", "resolve_conj",
           "resolve_neg", "conj_physical", "is_conj", "is_neg", "split_with_sizes", "unique_consecutive", "ger",
           "detach", "prelu", "hardshrink", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes")
