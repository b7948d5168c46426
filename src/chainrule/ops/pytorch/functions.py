"""PyTorch's top-level functions that chainrule has as Tensor methods: ``chainrule.cat``, ``chainrule.clamp``...

A PyTorch program calls ``torch.cat(ts, dim=1)``, ``torch.clamp(x, min=0)``, ``torch.mm(a, b)`` as often as the
methods. chainrule's top-level functions follow NumPy (``concatenate``, ``clip``, ``matmul``), and its Tensor
has PyTorch's methods, so each of these names is the method of the same name called on its first argument
(an array or a number becomes a Tensor first): one behaviour, written once, in the method. ``cat`` is
``concatenate`` with PyTorch's ``dim``; ``from_numpy``, ``as_tensor`` and ``is_tensor`` are as PyTorch's.

Example:
    >>> import chainrule as cr
    >>> a = cr.Tensor([[1.0, 2.0]])
    >>> cr.cat([a, a], dim=0).shape, cr.clamp(a, min=1.5).tolist(), cr.unsqueeze(a, 0).shape
    ((2, 2), [[1.5, 2.0]], (1, 1, 2))
    >>> cr.mm(a, cr.t(a)).tolist(), cr.is_tensor(a), cr.numel(a)
    ([[5.0]], True, 2)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...autodiff.batch_levels import is_value
from ...core.promotion import promote_pair
from ...tensor import Tensor
from .._define import where_is
from ..shape import concatenate
from .block_diag import block_diag
from .constructors import tensor
from .in_place_methods import TOPLEVEL as IN_PLACE
from .keywords import write_out
from .legacy_types import LEGACY_TYPES
from .numeric_methods import FUNCTIONS as NUMERIC
from .toplevel import FUNCTIONS as TOPLEVEL
from .utilities import FUNCTIONS as UTILITIES
from .utilities import METHODS as UTILITY_METHODS

# torch.<name>(input, *args, **kwargs) == input.<name>(*args, **kwargs) for each of these
METHODS = (
    "clamp", "unsqueeze", "permute", "movedim", "narrow", "chunk", "unbind", "gather", "scatter", "index_select",
    "repeat_interleave", "t", "numel", "topk", "amax", "amin", "norm", "dist", "pow", "neg", "logit",
    "xlogy", "lerp", "addcmul", "mm", "bmm", "mv", "addmm", "baddbmm", "inverse", "det", "eq", "ne", "lt", "gt",
    "le", "ge",
    # (the arithmetic and other methods PyTorch programs also call as torch.<name>(input, ...))
    "sub", "mul", "div", "true_divide", "clone", "atan2", "asin", "acos", "atan", "lgamma", "digamma", "frac",
    "addcdiv", "masked_select", "aminmax", "cummax", "kthvalue", "slogdet", "logdet", "pinverse", "matrix_power",
    "absolute", "acosh", "asinh", "atanh", "addbmm", "addmv", "addr", "clamp_max", "clamp_min", "cummin",
    "diag_embed", "erfc", "erfinv", "index_add", "index_fill", "index_put", "is_complex", "is_floating_point",
    "logcumsumexp", "mode", "scatter_add", "sgn", "swapdims", "take_along_dim", "tensor_split", "unflatten",
    "unique",
    "index_copy", "index_reduce", "masked_scatter", "scatter_reduce", "diagonal_scatter", "select_scatter",
    "slice_scatter", "renorm", "svd", "qr", "cholesky", "lu", "lu_solve", "mvlgamma", "i0", "igamma", "igammac",
    "nextafter", "gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
    "bitwise_right_shift", "as_strided",
)


def _method(name: str) -> Callable[..., Any]:
    def call(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002  (PyTorch's parameter name)
        value = input if is_value(input) else Tensor(input)  # (a vmap value has the methods)
        out = kwargs.pop("out", None)  # torch.mul(a, b, out=c): the method's result written into c
        result = getattr(value, name)(*args, **kwargs)
        return result if out is None else write_out(name, result, out)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"PyTorch's ``torch.{name}(input, ...)``: ``input.{name}(...)`` (see the Tensor method)."
    return call


FUNCTIONS: dict[str, Callable[..., Any]] = {name: _method(name) for name in METHODS + IN_PLACE + UTILITY_METHODS}


def cat(tensors: Sequence[Any], dim: int = 0, *, axis: int | None = None) -> Any:
    """PyTorch's ``torch.cat(tensors, dim=0)``: ``concatenate`` along ``dim``. As PyTorch's, an empty 1-d tensor
    (``torch.tensor([])``, the usual start of a loop that appends) is skipped beside tensors of other ranks; its
    dtype still takes part in the result's."""
    if axis is not None and dim != 0:
        raise TypeError(f"cat: got both dim={dim} and axis={axis}; pass one")
    parts = list(tensors)
    kept = [t for t in parts if np.shape(where_is(t)) != (0,)]  # (shapes and dtypes: no value read)
    if kept and len(kept) < len(parts) and any(np.ndim(where_is(t)) != 1 for t in kept):
        out = concatenate(kept, axis=dim if axis is None else axis)
        dtype = functools.reduce(promote_pair, [np.result_type(getattr(where_is(t), "dtype", t)) for t in parts])
        return out if out.dtype == dtype else out.astype(dtype)
    return concatenate(parts, axis=dim if axis is None else axis)


def from_numpy(array: np.ndarray) -> Tensor:
    """PyTorch's ``torch.from_numpy``: a Tensor that shares the array's memory."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}; "
                        "use chainrule.tensor(data) for other data")
    return Tensor._wrap(array)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """PyTorch's ``torch.as_tensor``: ``data`` itself if it is already a Tensor of that dtype, else a new one."""
    if isinstance(data, Tensor) and (dtype is None or np.dtype(dtype) == data.dtype):
        return data
    return tensor(data, dtype=dtype, device=device)


def is_tensor(obj: Any) -> bool:
    """PyTorch's ``torch.is_tensor``: whether ``obj`` is a chainrule Tensor."""
    return isinstance(obj, Tensor)


def var_mean(input: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:  # noqa: A002  (PyTorch's name)
    """PyTorch's ``torch.var_mean(input, dim=None, *, correction=1, keepdim=False)``: ``(input.var(...),
    input.mean(dim, keepdim))``, the variance unbiased by default as PyTorch's.

    Example:
        >>> import chainrule as cr
        >>> [t.tolist() for t in cr.var_mean(cr.Tensor([[1.0, 3.0], [2.0, 6.0]]), dim=1)]
        [[2.0, 8.0], [2.0, 4.0]]
    """
    return _spread_and_mean("var", input, args, kwargs)


def std_mean(input: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:  # noqa: A002
    """PyTorch's ``torch.std_mean``: ``(input.std(...), input.mean(dim, keepdim))``."""
    return _spread_and_mean("std", input, args, kwargs)


def _spread_and_mean(name: str, input: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:  # noqa: A002,E501
    value = input if is_value(input) else Tensor(input)
    kwargs = dict(kwargs)  # PyTorch's aliases axis= and keepdims= mean its dim= and keepdim= here (unbiased std)
    for alias, torch_name in (("axis", "dim"), ("keepdims", "keepdim")):
        if alias in kwargs:
            if torch_name in kwargs:
                raise TypeError(f"{name}_mean: got both {torch_name}= and its alias {alias}=; pass one")
            kwargs[torch_name] = kwargs.pop(alias)
    dim = args[0] if args and not isinstance(args[0], (bool, np.bool_)) else kwargs.get("dim")  # (True): unbiased
    keepdim = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
    mean = value.mean(dim=dim, keepdim=keepdim) if dim is not None or keepdim else value.mean()
    return getattr(value, name)(*args, **kwargs), mean


FUNCTIONS.update(block_diag=block_diag)
FUNCTIONS.update(NUMERIC)  # polygamma(n, input), histogram, unravel_index
FUNCTIONS.update(cat=cat, from_numpy=from_numpy, as_tensor=as_tensor, is_tensor=is_tensor, var_mean=var_mean,
                 std_mean=std_mean)
FUNCTIONS.update(UTILITIES)  # broadcast_shapes, promote_types, windows, the generator's state...
FUNCTIONS.update(LEGACY_TYPES)  # torch.FloatTensor([...]), torch.LongTensor(2, 3), isinstance(t, FloatTensor)
FUNCTIONS.update(TOPLEVEL)  # randperm, normal, tril_indices, cdist...: PyTorch's functions that are not methods
