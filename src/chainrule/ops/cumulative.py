"""Running totals and differences: cumsum, cumprod, diff, ediff1d and their NaN-skipping forms.

``cumsum`` and ``cumprod`` are primitives; the reverse rule of a running sum is a running
sum taken backwards. ``cumprod``'s rules never divide by the input: they are running
products before each entry and a linear recurrence (``_scans``), so they are exact to any
order at exact zeros and near underflow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff.primitive import Primitive
from ..core.device import xp_of
from ..tensor import Tensor
from . import elementwise
from . import shape as shape_ops
from ._define import literal_on, ndim_of, normalize_axis, np_attr, raw, shape_of
from ._scans import _pad_front, exclusive_products, linear_recurrence
from .declare import implements, op
from .pytorch.dim_args import accumulator_dtype, with_dim


def _reverse_cumsum(g: Any, axis: int) -> Any:
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


_cumsum = Primitive("cumsum", lambda x, axis: np.cumsum(x, axis=axis))
_cumsum.defvjp(lambda g, ans, x, axis: _reverse_cumsum(g, axis))
_cumsum.defjvp(lambda t, ans, x, axis: np.cumsum(t, axis=axis))

def _plain_and_safe(ans: Any, x: Any) -> bool:
    """Plain arrays with no zero, no overflow and no underflow: there ans[k] / x[i] is the exact partial
    up to rounding, and the O(n) formula reverse_cumsum(g * ans) / x may be used (first order only)."""
    if isinstance(ans, Tensor) or isinstance(x, Tensor) or np.result_type(x).kind != "f":
        return False
    tiny = np.finfo(np.result_type(x)).tiny
    return bool(np.all(np.abs(x) >= tiny) and np.all(np.isfinite(ans)) and np.all(np.abs(ans) >= tiny))


def _cumprod_vjp(g: Any, ans: Any, x: Any, axis: int) -> Any:
    if _plain_and_safe(ans, x) and not isinstance(g, Tensor):
        return _reverse_cumsum(g * ans, axis) / x
    # d out[k] / d x[i] = prod(x[j], j <= k, j != i) for i <= k: the products before i times
    # r[i] = g[i] + x[i+1] * r[i+1], a recurrence run backwards (from the end of the axis)
    xm, gm = np.moveaxis(x, axis, -1), np.moveaxis(g, axis, -1)
    before, _ = exclusive_products(xm)
    following = _pad_front(xm[..., ::-1], 1, 0.0)  # x[i+1], read from the end
    r = linear_recurrence(following, gm[..., ::-1])[..., ::-1]
    return np.moveaxis(before * r, -1, axis)


def _cumprod_jvp(t: Any, ans: Any, x: Any, axis: int) -> Any:
    # d out[k] = x[k] * d out[k-1] + t[k] * out[k-1], and out[k-1] is the product before k
    xm, tm = np.moveaxis(x, axis, -1), np.moveaxis(t, axis, -1)
    before, _ = exclusive_products(xm)
    return np.moveaxis(linear_recurrence(xm, tm * before), -1, axis)


_cumprod = Primitive("cumprod", lambda x, axis: np.cumprod(x, axis=axis))
_cumprod.defvjp(_cumprod_vjp)
_cumprod.defjvp(_cumprod_jvp)


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise TypeError(f"{name}: the 'out' argument is not supported on Tensors (results are new tensors)")


def _flat_axis(x: Any, axis: Any) -> tuple[Any, int]:
    if axis is None:
        return shape_ops.ravel(x), 0
    return x, normalize_axis(axis, max(ndim_of(x), 1))[0]


def _cast(y: Any, dtype: Any) -> Any:
    return y if dtype is None else shape_ops.astype(y, dtype)


@op(numpy=np.cumsum, cases="none", method={"cumsum": with_dim(
    lambda self, axis=None, dtype=None, out=None: cumsum(self, axis, dtype, out), "cumsum")})
def cumsum(x: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Running sum along ``axis`` (of the flattened array when ``axis`` is None).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(lambda x: np.cumsum(x).sum())(np.array([1.0, 2.0, 3.0]))
        array([3., 2., 1.])
    """
    _no_out("cumsum", out)
    dtype = accumulator_dtype(x, dtype)
    x, axis = _flat_axis(x, axis)
    return _cast(_cumsum(shape_ops.atleast_1d(x), axis=axis), dtype)


@op(numpy=np.cumprod, cases="none", method={"cumprod": with_dim(
    lambda self, axis=None, dtype=None, out=None: cumprod(self, axis, dtype, out), "cumprod")})
def cumprod(x: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Running product along ``axis`` (of the flattened array when ``axis`` is None).

    Derivatives of every order are exact where entries are 0 (no division by the input).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(lambda x: np.cumprod(x)[-1])(np.array([2.0, 0.0, 3.0]))
        array([0., 6., 0.])
    """
    _no_out("cumprod", out)
    dtype = accumulator_dtype(x, dtype)
    x, axis = _flat_axis(x, axis)
    return _cast(_cumprod(shape_ops.atleast_1d(x), axis=axis), dtype)


_NOVALUE = getattr(np, "_NoValue", object())


def _edge(value: Any, x: Any, axis: int) -> Any:
    """A scalar ``prepend``/``append`` value spread over one slice along ``axis``."""
    if ndim_of(value) != 0:
        return literal_on(x, value)
    shape = list(shape_of(x))
    shape[axis] = 1
    if not isinstance(value, Tensor):
        value = literal_on(x, value, dtype=np.result_type(raw(x), value))
    return shape_ops.broadcast_to(value, tuple(shape))


@implements(np.diff)
def diff(x: Any, n: int = 1, axis: int = -1, prepend: Any = _NOVALUE, append: Any = _NOVALUE) -> Any:
    """The ``n``-th difference along ``axis``: x[1:] - x[:-1], applied ``n`` times.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.diff(cr.Tensor([1.0, 4.0, 9.0]))
        Tensor([3., 5.])
    """
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    if ndim_of(x) == 0:
        raise ValueError("diff: needs an input of at least one dimension, got a 0-d array")
    axis = normalize_axis(axis, ndim_of(x))[0]
    given, parts = x, []
    if prepend is not _NOVALUE and prepend is not None:
        parts.append(_edge(prepend, x, axis))
    parts.append(x)
    if append is not _NOVALUE and append is not None:
        parts.append(_edge(append, x, axis))
    if len(parts) > 1:
        x = shape_ops.concatenate(parts, axis=axis)
    head = (slice(None),) * axis
    if n == 0:  # NumPy returns the input itself; a copy, as PyTorch's diff
        return shape_ops.fresh(x, given)
    # bools differ by xor (NumPy's and PyTorch's diff)
    differ = elementwise.not_equal if np.result_type(raw(x)) == np.bool_ else elementwise.subtract
    for _ in range(n):
        x = differ(shape_ops.getitem(x, head + (slice(1, None),)),
                                 shape_ops.getitem(x, head + (slice(None, -1),)))
    return x


@implements(np.ediff1d)
def ediff1d(x: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of the flattened array, with optional values before and after."""
    parts = [shape_ops.ravel(literal_on(x, to_begin))] if to_begin is not None else []
    parts.append(diff(shape_ops.ravel(x)))
    if to_end is not None:
        parts.append(shape_ops.ravel(literal_on(x, to_end)))
    return parts[0] if len(parts) == 1 else shape_ops.concatenate(parts)


@implements(np.nancumsum)
def nancumsum(x: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Running sum treating NaNs as 0 (they get no gradient)."""
    return cumsum(elementwise.where(np.isnan(raw(x)), 0.0, x), axis=axis, dtype=dtype, out=out)


@implements(np.nancumprod)
def nancumprod(x: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Running product treating NaNs as 1 (they get no gradient)."""
    return cumprod(elementwise.where(np.isnan(raw(x)), 1.0, x), axis=axis, dtype=dtype, out=out)


def _cumulative(name: str, fn: Any, start: float, x: Any, axis: Any, dtype: Any, include_initial: bool) -> Any:
    if axis is None:
        if ndim_of(x) > 1:
            raise ValueError(f"{name}: axis must be given for an input of {ndim_of(x)} dimensions")
        axis = 0
    y = fn(x, axis=axis, dtype=dtype)
    if not include_initial:
        return y
    axis = normalize_axis(axis, ndim_of(y))[0]
    shape = list(shape_of(y))
    shape[axis] = 1
    return shape_ops.concatenate([xp_of(raw(y)).full(shape, start, dtype=raw(y).dtype), y], axis=axis)


@implements(np_attr("cumulative_sum"))
def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None, out: Any = None,
                   include_initial: bool = False) -> Any:
    """The array-API running sum (``include_initial`` adds the leading 0)."""
    _no_out("cumulative_sum", out)
    return _cumulative("cumulative_sum", cumsum, 0.0, x, axis, dtype, include_initial)


@implements(np_attr("cumulative_prod"))
def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None, out: Any = None,
                    include_initial: bool = False) -> Any:
    """The array-API running product (``include_initial`` adds the leading 1)."""
    _no_out("cumulative_prod", out)
    return _cumulative("cumulative_prod", cumprod, 1.0, x, axis, dtype, include_initial)
