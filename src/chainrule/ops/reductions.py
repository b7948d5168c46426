"""Reductions over axes: sum, mean, max, min, prod, var, std, logsumexp, softmax.

``max``/``min`` share the gradient equally between tied entries (as PyTorch's ``amax``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..autodiff.primitive import Primitive
from . import elementwise
from . import shape as shape_ops
from ._define import is_complex, ndim_of, normalize_axis, raw, shape_of
from ._scans import exclusive_products
from .declare import linear_primitive, op
from .pytorch.dim_args import accumulator_dtype, extreme, reduction, spread, with_dim


def _restore(g: Any, axis: tuple[int, ...] | None, keepdims: bool, ndim: int) -> Any:
    """Give a reduced gradient back its reduced axes (size 1), ready to broadcast."""
    if keepdims or ndim == 0:
        return g
    if axis is None:
        return g.reshape((1,) * ndim)
    shape = list(np.shape(g))
    for a in axis:
        shape.insert(a, 1)
    return g.reshape(tuple(shape))


def _count(shape: tuple[int, ...], axis: tuple[int, ...] | None) -> int:
    if axis is None:
        return int(np.prod(shape))
    return int(np.prod([shape[a] for a in axis]))


# sum and mean are linear: the transpose alone (the reduced gradient spread back) gives both modes
def _sum_fn(x: Any, axis: Any, keepdims: bool) -> Any:
    if x.__class__ is np.ndarray:  # what np.sum runs for an ndarray, without its ~2 us of Python set-up
        return np.add.reduce(x, axis=axis, keepdims=keepdims)
    return np.sum(x, axis=axis, keepdims=keepdims)


_sum = linear_primitive("sum", _sum_fn, lambda g, ans, x, axis, keepdims: _restore(g, axis, keepdims, np.ndim(x)))
_mean = linear_primitive(
    "mean", lambda x, axis, keepdims: np.mean(x, axis=axis, keepdims=keepdims),
    lambda g, ans, x, axis, keepdims: _restore(g, axis, keepdims, np.ndim(x)) / _count(np.shape(x), axis),
)


def _extreme(name: str, np_fn: Any) -> Primitive:
    prim = Primitive(name, lambda x, axis, keepdims: np_fn(x, axis=axis, keepdims=keepdims))

    def share(ans: Any, x: Any, axis: Any, keepdims: bool) -> Any:
        # 1 / (number of ties) on each entry equal to the extreme, 0 elsewhere. A NaN extreme of every entry is
        # shared by the NaN entries (PyTorch's max()/min()), not NaN for all (0 / 0); along an axis PyTorch's
        # amax(dim) gives NaN there, and so does this
        xr, best = raw(x), raw(_restore(ans, axis, keepdims, np.ndim(x)))
        hit = xr == best
        if axis is None and xr.dtype.kind in "fc" and np.isnan(best).any():
            hit |= np.isnan(xr) & np.isnan(best)
        return hit / hit.sum(axis=axis, keepdims=True)

    prim.defvjp(
        lambda g, ans, x, axis, keepdims: _restore(g, axis, keepdims, np.ndim(x)) * share(ans, x, axis, keepdims)
    )
    prim.defjvp(
        lambda t, ans, x, axis, keepdims: (t * share(ans, x, axis, keepdims)).sum(axis=axis, keepdims=keepdims)
    )
    return prim


_max = _extreme("max", np.max)
_min = _extreme("min", np.min)


def _others_product(x: Any, axis: tuple[int, ...] | None) -> Any:
    """Product over ``axis`` of every entry but the one in each position.

    From running products before and after each entry (no division by the value), so it is
    exact at zeros and near underflow; on Tensors every step is recorded (exact to any order).
    """
    nd = np.ndim(x)
    axes = tuple(range(nd)) if axis is None else axis
    keep = [a for a in range(nd) if a not in axes]
    moved = np.transpose(x, keep + list(axes))
    shape = np.shape(moved)
    # the reduced axes as one, sized explicitly: -1 cannot be inferred when another axis is empty
    before, after = exclusive_products(moved.reshape(shape[: len(keep)] + (int(np.prod(shape[len(keep):])),)))
    return np.transpose((before * after).reshape(shape), tuple(np.argsort(keep + list(axes)).tolist()))


def _prod_partials(ans: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    """d prod / d x for every entry, exact to any order (at exact zeros too)."""
    return _others_product(x, axis)


_prod = Primitive("prod", lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims))
_prod.defvjp(
    lambda g, ans, x, axis, keepdims: _restore(g, axis, keepdims, np.ndim(x)) * _prod_partials(ans, x, axis, keepdims)
)
_prod.defjvp(
    lambda t, ans, x, axis, keepdims: (t * _prod_partials(ans, x, axis, keepdims)).sum(axis=axis, keepdims=keepdims)
)


@op(primitive=_sum, kind="linear", numpy=np.sum, method=True, method_adapter=reduction, cases="reduction",
    domain="real", torch="torch.sum")
def sum(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None, out: Any = None,  # noqa: A001
        initial: Any = None, where: Any = None) -> Any:
    """Sum over ``axis`` (all axes by default); ``where``: a mask of the entries taken, ``initial``: added."""
    _no_out("sum", out)
    dtype = accumulator_dtype(x, dtype)
    if where is not None:
        x = elementwise.where(where, x, 0.0)
    y = _sum(x, axis=normalize_axis(axis, ndim_of(x)), keepdims=bool(keepdims))
    y = y if initial is None else elementwise.add(y, initial)
    return y if dtype is None else y.astype(dtype)


@op(primitive=_mean, kind="linear", numpy=np.mean, method=True, method_adapter=reduction,
    cases="reduction", domain="real", torch="torch.mean")
def mean(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None, out: Any = None, *,
         where: Any = None) -> Any:
    """Mean over ``axis`` (all axes by default); ``where``: a mask of the entries taken."""
    _no_out("mean", out)
    if where is not None:  # the masked sum over the number of entries taken
        taken = elementwise.add(elementwise.where(where, 1.0, 0.0), np.zeros(shape_of(x)))  # the mask, x's shape
        y = elementwise.divide(sum(x, axis, keepdims, where=where), sum(taken, axis, keepdims))
        return y if dtype is None else y.astype(dtype)
    y = _mean(x, axis=normalize_axis(axis, ndim_of(x)), keepdims=bool(keepdims))
    return y if dtype is None else y.astype(dtype)


@op(primitive=_max, kind="primitive", numpy=(np.max, np.amax), method=True,
    method_adapter=lambda fn: extreme(fn, np.argmax, shape_ops.take_along_axis, shape_ops.squeeze),
    cases="reduction", domain="distinct", torch="torch.amax")
def max(x: Any, axis: Any = None, keepdims: bool = False, out: Any = None,  # noqa: A001
        initial: Any = None, where: Any = None) -> Any:
    """Largest entry over ``axis``; tied entries share the gradient equally. ``initial``: a floor (needed
    with ``where``, the mask of the entries taken)."""
    _no_out("max", out)
    if initial is not None or where is not None:
        return _with_initial("max", x, axis, keepdims, initial, where)
    _nonempty("max", x, axis)
    return _max(x, axis=normalize_axis(axis, ndim_of(x)), keepdims=bool(keepdims))


@op(primitive=_min, kind="primitive", numpy=(np.min, np.amin), method=True,
    method_adapter=lambda fn: extreme(fn, np.argmin, shape_ops.take_along_axis, shape_ops.squeeze),
    cases="reduction", domain="distinct", torch="torch.amin")
def min(x: Any, axis: Any = None, keepdims: bool = False, out: Any = None,  # noqa: A001
        initial: Any = None, where: Any = None) -> Any:
    """Smallest entry over ``axis``; tied entries share the gradient equally. ``initial``: a ceiling (needed
    with ``where``, the mask of the entries taken)."""
    _no_out("min", out)
    if initial is not None or where is not None:
        return _with_initial("min", x, axis, keepdims, initial, where)
    _nonempty("min", x, axis)
    return _min(x, axis=normalize_axis(axis, ndim_of(x)), keepdims=bool(keepdims))


@op(primitive=_prod, kind="primitive", numpy=np.prod, method=True, method_adapter=reduction, cases="none")
def prod(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None, out: Any = None,
         initial: Any = None, where: Any = None) -> Any:
    """Product over ``axis``; derivatives of every order are exact where entries are 0 (no division).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.hessian(np.prod)(np.zeros(2))
        array([[0., 1.],
               [1., 0.]])
    """
    _no_out("prod", out)
    dtype = accumulator_dtype(x, dtype)
    if where is not None:
        x = elementwise.where(where, x, 1.0)
    y = _prod(x, axis=normalize_axis(axis, ndim_of(x)), keepdims=bool(keepdims))
    y = y if initial is None else elementwise.multiply(y, initial)
    return y if dtype is None else y.astype(dtype)


@op(numpy=np.var, method=True, method_adapter=spread, cases="none")
def var(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False, dtype: Any = None, out: Any = None, *,
        where: Any = None, correction: Any = None) -> Any:
    """Variance over ``axis`` with ``ddof`` delta degrees of freedom; ``where``: a mask of the entries taken.

    Over a single entry (ddof=0) the variance is identically 0: its derivatives of every order
    are 0. With no degrees of freedom left (count <= ddof) the value is NumPy's (nan or inf)
    and so is the gradient: it is undefined there, and says so.
    """
    _no_out("var", out)
    ddof = _correction("var", ddof, correction)
    axes = normalize_axis(axis, ndim_of(x))
    d = x - mean(x, axis=axes, keepdims=True, where=where)
    if is_complex(d):  # NumPy's variance of complex numbers: mean of |d| ** 2, real
        d = np.abs(d)
    if where is None:
        count = _count(shape_of(x), axes)
    else:  # the entries taken, per slice; the others add 0
        count = np.sum(np.broadcast_to(raw(where), shape_of(x)), axis=axes, keepdims=keepdims)
        d = elementwise.where(where, d, 0.0)
    dof = np.maximum(count - ddof, 0)  # none left: divide by 0 (nan or inf, as NumPy and PyTorch), never by < 0
    if np.any(dof == 0):
        warnings.warn(f"var: degrees of freedom <= 0 (ddof={ddof} for {count} entries): the result is nan or inf, "
                      f"as NumPy's and PyTorch's", RuntimeWarning, stacklevel=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = sum(d * d, axis=axes, keepdims=keepdims) / dof
    return v if dtype is None else v.astype(dtype)


@op(numpy=np.std, method=True, method_adapter=spread, cases="none")
def std(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False, dtype: Any = None, out: Any = None, *,
        where: Any = None, correction: Any = None) -> Any:
    """Standard deviation over ``axis`` with ``ddof`` delta degrees of freedom; ``where``: a mask of the entries.

    Over a single entry the standard deviation is identically 0, with derivatives 0 of every
    order (not sqrt's NaN at 0). Where several entries are all equal it is not differentiable
    (a kink, as |x| at 0): the gradient is 0 there, as PyTorch's (which masks it; JAX gives NaN).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(np.std)(np.array([3.0]))
        array([0.])
    """
    _no_out("std", out)
    ddof = _correction("std", ddof, correction)
    axes = normalize_axis(axis, ndim_of(x))
    v = var(x, axis=axes, ddof=ddof, keepdims=keepdims, where=where)
    if _count(shape_of(x), axes) == 1 and ddof == 0 and where is None:
        s = v  # one entry: var is 0 to every order
    else:  # 0 where the entries are all equal, with gradient 0 there (PyTorch's), not 0.5 / sqrt(0) * 0 = nan
        spread_out = v != 0
        s = np.where(spread_out, np.where(spread_out, v, 1.0) ** 0.5, 0.0)
    return s if dtype is None else s.astype(dtype)


def _floats(x: Any) -> Any:
    """Integers and booleans as floats (NumPy's float64) before a shift by the maximum: ``x - max`` of unsigned
    integers wraps around (a Tensor's were made float32 already, ops/promoting.py)."""
    return x.astype(np.float64) if x.dtype.kind in "biu" else x


def _lse_fn(x: Any, axis: Any, keepdims: bool) -> Any:
    x = _floats(x)
    m = _shift(x, axis)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):  # an empty or all -inf slice sums to 0: its log is -inf, as PyTorch's
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _lse_weights(ans: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    return np.exp(x - _restore(ans, axis, keepdims, np.ndim(x)))


_logsumexp = Primitive("logsumexp", _lse_fn)
_logsumexp.defvjp(
    lambda g, ans, x, axis, keepdims: _restore(g, axis, keepdims, np.ndim(x)) * _lse_weights(ans, x, axis, keepdims)
)
_logsumexp.defjvp(
    lambda t, ans, x, axis, keepdims: (t * _lse_weights(ans, x, axis, keepdims)).sum(axis=axis, keepdims=keepdims)
)


@op(primitive=_logsumexp, kind="primitive", namespaces=("ops",), method=True, method_adapter=reduction,
    cases="reduction", domain="real", torch="torch.logsumexp")
def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """log(sum(exp(x))) over ``axis``, stable for large inputs."""
    return _logsumexp(x, axis=normalize_axis(axis, ndim_of(x)), keepdims=bool(keepdims))


def _softmax_fn(x: Any, axis: Any) -> Any:
    x = _floats(x)
    e = np.exp(x - _shift(x, axis))
    return e / np.sum(e, axis=axis, keepdims=True)


_softmax = Primitive("softmax", _softmax_fn)
_softmax.defvjp(lambda g, ans, x, axis: ans * (g - (g * ans).sum(axis=axis, keepdims=True)))
_softmax.defjvp(lambda t, ans, x, axis: ans * (t - (t * ans).sum(axis=axis, keepdims=True)))


def _log_softmax_fn(x: Any, axis: Any) -> Any:
    x = _floats(x)
    s = x - _shift(x, axis)
    with np.errstate(divide="ignore"):  # (an empty slice sums to 0)
        return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


_log_softmax = Primitive("log_softmax", _log_softmax_fn)
_log_softmax.defvjp(lambda g, ans, x, axis: g - np.exp(ans) * g.sum(axis=axis, keepdims=True))
_log_softmax.defjvp(lambda t, ans, x, axis: t - (np.exp(ans) * t).sum(axis=axis, keepdims=True))


def _whole_0d(axis: Any, x: Any) -> bool:
    """Whether ``x`` is 0-d and ``axis`` 0 or -1: its one entry is normalised (PyTorch's)."""
    return ndim_of(x) == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1)


@op(primitive=_softmax, kind="primitive", method=True, method_adapter=lambda fn: with_dim(fn, "softmax", -1),
    cases="none")
def softmax(x: Any, axis: int = -1, *, dtype: Any = None) -> Any:
    """exp(x) / sum(exp(x)) along ``axis``, stable for large inputs; ``dtype``: ``x`` cast to it first (PyTorch's)."""
    x = x if dtype is None else shape_ops.astype(x, dtype)
    return _softmax(x, axis=None if _whole_0d(axis, x) else normalize_axis(axis, ndim_of(x)))


@op(primitive=_log_softmax, kind="primitive", method=True,
    method_adapter=lambda fn: with_dim(fn, "log_softmax", -1), cases="none")
def log_softmax(x: Any, axis: int = -1, *, dtype: Any = None) -> Any:
    """x - logsumexp(x) along ``axis``, stable for large inputs; ``dtype``: ``x`` cast to it first (PyTorch's)."""
    x = x if dtype is None else shape_ops.astype(x, dtype)
    return _log_softmax(x, axis=None if _whole_0d(axis, x) else normalize_axis(axis, ndim_of(x)))


def _with_initial(name: str, x: Any, axis: Any, keepdims: bool, initial: Any, where: Any) -> Any:
    """NumPy's max/min with ``initial`` (and ``where``): the masked-out entries lose to every other value."""
    if initial is None:
        raise ValueError(f"{name}: 'where' needs 'initial' (a {name}imum has no identity to give the entries "
                         "left out), as in NumPy; pass initial=")
    pick = elementwise.maximum if name == "max" else elementwise.minimum
    if where is not None:
        x = elementwise.where(where, x, -np.inf if name == "max" else np.inf)
    axes = normalize_axis(axis, ndim_of(x))
    if not np.size(raw(x)):  # nothing to compare: ``initial`` in the reduced shape (the empty sum sets the shape)
        return elementwise.add(sum(x, axes, keepdims), initial)
    reduce = _max if name == "max" else _min
    return pick(reduce(x, axis=axes, keepdims=bool(keepdims)), initial)


def _correction(name: str, ddof: Any, correction: Any) -> Any:
    """The array API's ``correction=``, NumPy's other name for ``ddof`` (both given: NumPy's error)."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"{name}: ddof and correction can't be provided simultaneously.")
    return correction


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise TypeError(f"{name}: the 'out' argument is not supported on Tensors (results are new tensors)")


def _nonempty(name: str, x: Any, axis: Any = None) -> None:
    """Refuse a max/min over an axis of length 0 (NumPy and PyTorch do); other axes may be empty: (0, 3) over
    axis 1 is an empty result, as in both."""
    shape = shape_of(x)
    if 0 not in shape:
        return
    axes = range(len(shape)) if axis is None else normalize_axis(axis, len(shape))
    if any(shape[a] == 0 for a in axes):
        raise ValueError(f"{name}: zero-size input of shape {shape} has no {name}imum along axis {axis}")


def _shift(x: Any, axis: Any) -> Any:
    """The max along ``axis`` (kept), to shift by before exp; -inf over an empty axis (where the sum is 0:
    logsumexp -inf and softmax empty, as PyTorch's), not NumPy's error."""
    if np.size(x) == 0:
        return np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    return np.max(x, axis=axis, keepdims=True)

