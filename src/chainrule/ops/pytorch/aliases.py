"""PyTorch's other names for ops chainrule has: ``t.atan()``, ``t.log2()``, ``t.fmax(u)``, ``t.det()``, ...

A PyTorch user reaches for these methods first; each is the declared op under PyTorch's name (or
a short composite), so it has that op's derivatives. Where PyTorch's argument order differs from
NumPy's (``nan_to_num``, ``diff``, ``nansum``), the method takes PyTorch's.

Example:
    >>> import chainrule as cr
    >>> t = cr.Tensor([[1.0, 3.0], [2.0, 0.5]])
    >>> t.atan().shape, t.cummax(dim=1).indices.tolist()
    ((2, 2), [[0, 1], [0, 0]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.device import as_array, index_on, xp_of
from ...tensor import Tensor
from .._define import raw
from ..declare import tensor_method
from ..numeric import add_at
from .common import (
    also_method,
    check_range,
    checked_axis,
    declared,
    overwrite_at,
    scaled,
    values_of,
)
from .dim_args import ValuesIndices, as_scalar, scalar_along

# -- one op under PyTorch's name -------------------------------------------------------------------
for _name, _methods in [
    ("arccos", ("acos", "arccos")), ("arccosh", ("acosh", "arccosh")), ("arcsin", ("asin", "arcsin")),
    ("arcsinh", ("asinh", "arcsinh")), ("arctan", ("atan", "arctan")), ("arctanh", ("atanh", "arctanh")),
    ("arctan2", ("arctan2",)), ("deg2rad", ("deg2rad",)), ("rad2deg", ("rad2deg",)), ("exp2", ("exp2",)),
    ("log2", ("log2",)), ("log10", ("log10",)), ("trunc", ("trunc", "fix")), ("sign", ("sgn",)),
    ("signbit", ("signbit",)), ("angle", ("angle",)), ("sinc", ("sinc",)), ("positive", ("positive",)),
    ("isfinite", ("isfinite",)),
    ("isinf", ("isinf",)), ("isposinf", ("isposinf",)), ("isneginf", ("isneginf",)),
    ("logical_and", ("logical_and",)), ("logical_or", ("logical_or",)), ("logical_xor", ("logical_xor",)),
    ("multiply", ("multiply",)), ("negative", ("negative",)), ("divide", ("true_divide",)),
    ("floor_divide", ("floor_divide",)), ("fmax", ("fmax",)), ("fmin", ("fmin",)), ("logaddexp", ("logaddexp",)),
    ("logaddexp2", ("logaddexp2",)), ("float_power", ("float_power",)), ("copysign", ("copysign",)),
    ("heaviside", ("heaviside",)), ("kron", ("kron",)), ("vdot", ("vdot",)), ("fliplr", ("fliplr",)),
    ("flipud", ("flipud",)), ("rot90", ("rot90",)), ("moveaxis", ("moveaxis",)),
    ("greater", ("greater",)), ("greater_equal", ("greater_equal",)), ("less", ("less",)),
    ("less_equal", ("less_equal",)), ("not_equal", ("not_equal",)), ("det", ("det",)),
    ("slogdet", ("slogdet",)), ("inv", ("inverse",)), ("pinv", ("pinverse",)),
    ("matrix_power", ("matrix_power",)),
]:
    for _method in _methods:
        also_method(_name, _method)

also_method("subtract", "subtract", lambda self, other, *, alpha=1: declared("subtract")(self, scaled(other, alpha)))
also_method("divide", "divide", lambda self, other, *, rounding_mode=None: self.div(other, rounding_mode=rounding_mode))
also_method("nan_to_num", "nan_to_num", lambda self, nan=0.0, posinf=None, neginf=None:
            declared("nan_to_num")(self, nan=nan, posinf=posinf, neginf=neginf))
also_method("maximum", "clamp_min", lambda self, min: self.clamp(min=min))  # noqa: A006
also_method("minimum", "clamp_max", lambda self, max: self.clamp(max=max))  # noqa: A006


def _dim_method(function_name: str, method_name: str) -> None:
    """A reduction method with PyTorch's ``(dim=None, keepdim=False)``."""
    def method(self: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
        if scalar_along(self, method_name, dim):
            return as_scalar(method(self.reshape((1,)), 0))
        axis = tuple(dim) if isinstance(dim, (tuple, list)) else dim
        out = declared(function_name)(self, axis=axis, keepdims=keepdim)
        return out if dtype is None else out.astype(dtype)

    method.__doc__ = f"PyTorch's ``{method_name}(dim=None, keepdim=False)``: ``chainrule.{function_name}`` over dim."
    also_method(function_name, method_name, method)


_dim_method("nansum", "nansum")
_dim_method("nanmean", "nanmean")


def diff(self: Tensor, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """PyTorch's ``diff``: the ``n``-th forward difference along ``dim``."""
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return declared("diff")(self, n=n, axis=dim, **kw)


def count_nonzero(self: Tensor, dim: Any = None) -> Tensor:
    """PyTorch's ``count_nonzero``: how many entries are not zero (over ``dim``, all by default), as int64."""
    axis = tuple(dim) if isinstance(dim, (tuple, list)) else dim
    return Tensor._wrap(as_array(np.count_nonzero(raw(self), axis=axis), dtype=np.int64))


also_method("diff", "diff", diff)
also_method("count_nonzero", "count_nonzero", count_nonzero)


def logdet(self: Tensor) -> Any:
    """PyTorch's ``logdet``: ``log(det)``; NaN where the determinant is negative, -inf where it is 0."""
    return declared("log")(declared("det")(self))


also_method("det", "logdet", logdet)


# -- composites ---------------------------------------------------------------------------------------
@tensor_method("frac")
def frac(self: Tensor) -> Any:
    """PyTorch's ``frac``: ``x - trunc(x)`` (derivative 1, as PyTorch's)."""
    return declared("subtract")(self, declared("trunc")(self))  # (trunc: derivative 0; values of one example in vmap)


@tensor_method("dist")
def dist(self: Tensor, other: Any, p: float = 2) -> Any:
    """PyTorch's ``dist``: the ``p``-norm of ``self - other`` (broadcast), over every entry."""
    return declared("subtract")(self, other).norm(p=p)


@tensor_method("aminmax")
def aminmax(self: Tensor, *, dim: Any = None, keepdim: bool = False) -> Any:
    """PyTorch's ``aminmax``: ``(min, max)`` over ``dim`` (all by default), each as ``amin``/``amax``."""
    from collections import namedtuple

    pair = namedtuple("aminmax", ["min", "max"])
    return pair(self.amin(dim=dim, keepdim=keepdim), self.amax(dim=dim, keepdim=keepdim))


def _running_extreme(name: str, larger: bool) -> Any:
    def method(self: Tensor, dim: Any = None, *, axis: Any = None) -> ValuesIndices:
        if (dim is None) == (axis is None):  # axis=: PyTorch's alias of dim
            raise TypeError(f"{name}: pass the dim to scan along, once (dim= or its alias axis=), got dim={dim!r} "
                            f"and axis={axis!r}")
        dim = axis if dim is None else dim
        if scalar_along(self, name, dim):
            return as_scalar(method(self.reshape((1,)), 0))
        axis = checked_axis(self, dim, name)
        data = np.moveaxis(raw(self), axis, -1)  # (raw: a jit trace guards the values read)
        idx = xp_of(data).zeros(data.shape, dtype=np.int64)  # where the values are
        if data.shape[-1] == 0:  # nothing to scan: empty values and indices, as PyTorch's
            return ValuesIndices(declared("take_along_axis")(self, np.moveaxis(idx, -1, axis), axis),
                                 Tensor._wrap(np.moveaxis(idx, -1, axis)))
        best = data[..., :1].copy()
        nan = data.dtype.kind in "fc"
        for i in range(1, data.shape[-1]):  # PyTorch's rule: a tie or a NaN takes the later index, NaN stays
            col = data[..., i]
            take = (col >= best[..., 0]) if larger else (col <= best[..., 0])
            if nan:
                take |= np.isnan(col)
            idx[..., i] = np.where(take, i, idx[..., i - 1])
            best[..., 0] = np.where(take, col, best[..., 0])
        idx = np.moveaxis(idx, -1, axis)
        return ValuesIndices(declared("take_along_axis")(self, idx, axis), Tensor._wrap(idx))

    method.__doc__ = (f"PyTorch's ``{name}``: running {'max' if larger else 'min'}imum along ``dim`` and where each "
                      "came from (a tie takes the later index); each value's gradient goes to its index.")
    return method


also_method("take_along_axis", "cummax", _running_extreme("cummax", True))
also_method("take_along_axis", "cummin", _running_extreme("cummin", False))


@tensor_method("logcumsumexp")
def logcumsumexp(self: Tensor, dim: int) -> Any:
    """PyTorch's ``logcumsumexp``: ``log(cumsum(exp(x)))`` along ``dim``, computed stably.

    A scan of ``logaddexp`` (log2(n) steps, each entry combined with the one ``k`` before it), so every partial
    sum is exact to rounding however far apart the entries are (one shift by the maximum underflowed the early
    entries: ``[0, 100]`` in float32 gave 0.017, not 0), and its derivatives of every order are logaddexp's.

    Example:
        >>> import chainrule as cr
        >>> cr.tensor([0.0, 100.0]).logcumsumexp(0)
        Tensor([  0., 100.], dtype=float32)
    """
    if scalar_along(self, "logcumsumexp", dim):
        return as_scalar(logcumsumexp(self.reshape((1,)), 0))
    axis = checked_axis(self, dim, "logcumsumexp")
    before = (slice(None),) * axis
    running, n, k = self, self.shape[axis], 1
    while k < n:
        combined = declared("logaddexp")(running[before + (slice(k, None),)], running[before + (slice(None, n - k),)])
        running = declared("concatenate")([running[before + (slice(None, k),)], combined], axis)
        k *= 2
    return running if running is not self else declared("multiply")(self, 1)  # (new memory, as every op)


@tensor_method("index_add")
def index_add(self: Tensor, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Any:
    """PyTorch's ``index_add``: ``self`` with ``alpha * source``'s slices added at ``index`` along ``dim``
    (repeated indices add up)."""
    axis = checked_axis(self, dim, "index_add")
    idx = as_array(raw(index))
    if self.ndim == 0:  # PyTorch reads a 0-d Tensor (and a 0-d source) as one entry, and gives a 0-d back
        part = source.reshape((1,)) if isinstance(source, Tensor) else np.reshape(source, (1,))
        return index_add(self.reshape((1,)), 0, idx.reshape(-1), part, alpha=alpha).reshape(())
    if idx.ndim != 1 or idx.dtype.kind not in "iu":
        raise ValueError(f"index_add: index must be a 1-D integer array, got shape {idx.shape} dtype {idx.dtype}")
    check_range("index_add", idx, axis, self.shape[axis])
    position = (slice(None),) * axis + (idx,)
    return add_at(self, position, scaled(source, alpha))


@tensor_method("index_fill")
def index_fill(self: Tensor, dim: int, index: Any, value: Any) -> Any:
    """PyTorch's ``index_fill``: the slices at ``index`` along ``dim`` set to ``value`` (no gradient there)."""
    axis = checked_axis(self, dim, "index_fill")
    if self.ndim == 0:  # PyTorch reads a 0-d Tensor as one entry, and gives a 0-d back
        return index_fill(self.reshape((1,)), 0, index, value).reshape(())
    idx = as_array(raw(index))
    mask = xp_of(self._data).zeros(self.shape[axis], dtype=bool)  # where the values are
    check_range("index_fill", idx, axis, self.shape[axis], wraps=True)  # negative indices count from the end
    mask[index_on(idx, mask)] = True
    return self.masked_fill(mask.reshape((-1,) + (1,) * (self.ndim - axis - 1)), value)


def _special(name: str, method_name: str) -> Any:
    def method(self: Tensor, *args: Any) -> Any:
        from ..special_functions import scipy_special as special  # SciPy, an optional extra: needed only when called

        return getattr(special, name)(self, *args)

    method.__doc__ = f"PyTorch's ``{method_name}``: ``chainrule.special.{name}`` (needs SciPy)."
    return method


for _name, _method in [("erfc", "erfc"), ("erfinv", "erfinv"), ("gammaln", "lgamma"), ("digamma", "digamma"),
                       ("xlogy", "xlogy")]:
    tensor_method(_method, _special(_name, _method))
_logit = _special("logit", "logit")


@tensor_method("logit")
def logit(self: Tensor, eps: float | None = None) -> Any:
    """PyTorch's ``logit``: ``log(p / (1 - p))``; with ``eps``, ``p`` clamped to ``[eps, 1 - eps]`` first."""
    return _logit(self if eps is None else self.clamp(eps, 1.0 - eps))


@tensor_method("index_put")
def index_put(self: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Any:
    """PyTorch's ``index_put``: ``self`` with ``values`` written (``accumulate=True``: added) at the positions
    ``indices`` (a tuple of index arrays, one per leading dim). Repeated positions need ``accumulate=True``."""
    position = tuple(as_array(raw(i)) for i in indices)
    if accumulate:
        return add_at(self, position, values)
    return overwrite_at(self, position, values, "index_put: indices name some positions more than once, so the "
                        "result would depend on the order; make them unique, or pass accumulate=True to add")


@tensor_method("fill_diagonal_")
def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """PyTorch's ``fill_diagonal_``: the main diagonal set to ``fill_value``, in place (allowed under no_grad or
    outside the graph)."""
    values_of(self, "fill_diagonal_")
    self._inplace_guard("fill_diagonal_")
    if self.ndim < 2 or (self.ndim > 2 and len(set(self.shape)) != 1):
        raise ValueError(f"fill_diagonal_: needs at least 2 dimensions, all of one size beyond 2, got {self.shape}")
    np.fill_diagonal(self._data, fill_value, wrap=wrap)
    self._bump_version()
    return self


@tensor_method("diag_embed")
def diag_embed(self: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    """PyTorch's ``diag_embed``: matrices whose ``offset`` diagonal holds the last axis (the last two dims)."""
    if (dim1, dim2) not in ((-2, -1), (self.ndim - 1, self.ndim)):
        raise NotImplementedError(f"diag_embed: only dim1=-2, dim2=-1 (the new last two dims) is supported, got "
                                  f"dim1={dim1}, dim2={dim2}; move the axes afterwards with movedim")
    n = self.shape[-1] if self.ndim else 1
    m = n + abs(offset)
    xp = xp_of(self._data)  # where the values are
    place = xp.zeros((n, m, m), dtype=self.dtype)
    i = xp.arange(n)
    place[i, i + max(-offset, 0), i + max(offset, 0)] = 1
    return declared("einsum")("...i,ijk->...jk", self, place)


def _quantile_method(function_name: str) -> Any:
    def method(self: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
               interpolation: str = "linear") -> Any:
        if scalar_along(self, function_name, dim):  # PyTorch reads a 0-d Tensor as one entry; keepdim keeps 0-d
            return method(self.reshape((1,)), q, 0, False, interpolation=interpolation)
        return declared(function_name)(self, q._data if isinstance(q, Tensor) and not q.requires_grad else q,
                                       axis=dim, keepdims=keepdim, method=interpolation)

    method.__doc__ = (f"PyTorch's ``{function_name}(q, dim=None, keepdim=False, interpolation=...)``: "
                      f"``chainrule.{function_name}`` (``q``'s dimensions first).")
    return method


also_method("quantile", "quantile", _quantile_method("quantile"))
also_method("nanquantile", "nanquantile", _quantile_method("nanquantile"))
