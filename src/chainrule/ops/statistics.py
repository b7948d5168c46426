"""Statistics: NaN-skipping reductions, average, median, quantiles, ptp, cov, corrcoef.

Composites of ``sort``, ``take``, ``where`` and the reductions. NaN entries get no
gradient. Order statistics (median, quantile) send the gradient to the entries that sit
at the chosen sorted positions, interpolated linearly (NumPy's default 'linear' method).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..core.device import as_array, xp_of
from ..tensor import Tensor
from . import elementwise, reductions
from . import shape as shape_ops
from ._define import conj, is_complex, literal_on, ndim_of, normalize_axis, raw, shape_of
from .arrays import diagonal
from .contraction import matmul
from .declare import implements
from .selection import sort


def _nan(x: Any) -> np.ndarray:
    return np.isnan(raw(x))


def _fill(x: Any, value: float) -> Any:
    mask = _nan(x)
    return elementwise.where(mask, value, x) if mask.any() else x


def _no_out(name: str, out: Any, kw: dict[str, Any] | None = None) -> None:
    if out is not None:
        raise TypeError(f"{name}: the 'out' argument is not supported on Tensors (results are new tensors)")
    if kw:  # e.g. where=, initial=: ignoring them would give a silently different result
        raise TypeError(
            f"{name}: chainrule does not support the keyword(s) {sorted(kw)} for {name} on Tensors; "
            "select the entries first (e.g. np.where(mask, x, np.nan) before a nan-function)"
        )


@implements(np.nansum)
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None, **kw: Any) -> Any:
    """Sum treating NaNs as 0; ``initial`` is added and ``where`` masks the entries taken, as in NumPy."""
    _no_out("nansum", out, kw)
    return reductions.sum(_fill(a, 0.0), axis=axis, keepdims=keepdims, dtype=dtype, initial=initial, where=where)


@implements(np.nanprod)
def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
            where: Any = None, **kw: Any) -> Any:
    """Product treating NaNs as 1; ``initial`` multiplies and ``where`` masks the entries taken, as in NumPy."""
    _no_out("nanprod", out, kw)
    return reductions.prod(_fill(a, 1.0), axis=axis, keepdims=keepdims, dtype=dtype, initial=initial, where=where)


def _count(a: Any, axis: Any, keepdims: bool, where: Any = None) -> np.ndarray:
    """How many entries are not NaN (and taken by ``where``), in ``a``'s real float dtype (an int64 count would
    make float32 float64)."""
    taken = ~_nan(a) if where is None else ~_nan(a) & np.asarray(raw(where), dtype=bool)
    return np.sum(taken, axis=axis, keepdims=keepdims).astype(_real_float(a))


def _real_float(a: Any) -> np.dtype:
    """The real floating dtype of ``a``'s values (float32 stays float32; integers give float64)."""
    values = raw(a)
    dt = values.dtype if hasattr(values, "dtype") else as_array(values).dtype  # (a vmap value has one too)
    return np.finfo(dt).dtype if dt.kind in "fc" else np.dtype(np.float64)


@implements(np.nanmean)
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *,
            where: Any = None, **kw: Any) -> Any:
    """Mean of the entries that are not NaN (and taken by the mask ``where``)."""
    _no_out("nanmean", out, kw)
    a = _integers_as_float64(a)
    return elementwise.divide(nansum(a, axis=axis, keepdims=keepdims, where=where), _count(a, axis, keepdims, where))


def _integers_as_float64(a: Any) -> Any:
    """Integer (and bool) entries as float64: NumPy's statistics of integers, as ``mean`` gives (PyTorch refuses
    them); PyTorch's promotion would make the division inside float32."""
    dtype = getattr(a, "dtype", None)
    return shape_ops.astype(a, np.float64) if dtype is not None and np.dtype(dtype).kind in "biu" else a


@implements(np.nanvar)
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0, keepdims: bool = False, *,
           where: Any = None, **kw: Any) -> Any:
    """Variance of the entries that are not NaN (and taken by the mask ``where``)."""
    _no_out("nanvar", out, kw)
    d = elementwise.subtract(a, nanmean(a, axis=axis, keepdims=True, where=where))
    d = _fill(d, 0.0) if _nan(a).any() else d
    d = d if where is None else elementwise.where(where, d, 0.0)
    d = elementwise.abs(d) if is_complex(d) else d  # the variance of complex numbers: of |d| ** 2
    squares = reductions.sum(elementwise.multiply(d, d), axis=axis, keepdims=keepdims)
    return elementwise.divide(squares, _count(a, axis, keepdims, where) - ddof)


@implements(np.nanstd)
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0, keepdims: bool = False, *,
           where: Any = None, **kw: Any) -> Any:
    """Standard deviation of the entries that are not NaN (0, with derivatives 0, over one entry)."""
    _no_out("nanstd", None, kw)
    v = nanvar(a, axis=axis, out=out, ddof=ddof, keepdims=keepdims, where=where)
    single = (_count(a, axis, keepdims, where) == 1) & (ddof == 0)
    if not np.any(single):
        return elementwise.sqrt(v)
    # where one entry is left the variance is 0 to every order: keep it, and keep sqrt away from 0 there
    return elementwise.where(single, v, elementwise.sqrt(elementwise.where(single, 1.0, v)))


@implements(np.nanmax)
def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None, **kw: Any) -> Any:
    """Largest entry that is not NaN (ties share the gradient); NaN over an all-NaN slice without ``initial``."""
    _no_out("nanmax", out, kw)
    return _nan_extreme(reductions.max, -np.inf, a, axis, keepdims, initial, where)


@implements(np.nanmin)
def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None, **kw: Any) -> Any:
    """Smallest entry that is not NaN (ties share the gradient); NaN over an all-NaN slice without ``initial``."""
    _no_out("nanmin", out, kw)
    return _nan_extreme(reductions.min, np.inf, a, axis, keepdims, initial, where)


def _nan_extreme(reduce: Any, loser: float, a: Any, axis: Any, keepdims: bool, initial: Any, where: Any) -> Any:
    """max/min with NaNs replaced by the value that loses to every other; a slice with nothing else gives NaN (as
    NumPy, which warns), not the -inf/inf left by the replacement, unless ``initial`` is given."""
    kw = {} if initial is None and where is None else {"initial": initial, "where": where}
    y = reduce(_fill(a, loser), axis=axis, keepdims=keepdims, **kw)
    if initial is not None or not np.size(raw(a)):
        return y
    empty = np.all(_nan(a), axis=normalize_axis(axis, ndim_of(a)), keepdims=keepdims)
    if not np.any(empty):
        return y
    warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    return elementwise.where(empty, np.nan, y)


@implements(np.ptp)
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Range, max - min ("peak to peak")."""
    _no_out("ptp", out)
    return elementwise.subtract(reductions.max(a, axis=axis, keepdims=keepdims),
                                reductions.min(a, axis=axis, keepdims=keepdims))


@implements(np.average)
def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False) -> Any:
    """Weighted mean over ``axis``; differentiable in ``a`` and ``weights``.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> float(np.average(cr.Tensor([1.0, 3.0]), weights=[3.0, 1.0]))
        1.5
    """
    if weights is None:
        avg = reductions.mean(a, axis=axis, keepdims=keepdims)
        total = literal_on(a, np.size(raw(a)) / max(np.size(raw(avg)), 1), dtype=np.result_type(raw(avg)))
    else:
        w = literal_on(a, weights)
        if shape_of(w) != shape_of(a):
            if axis is None:
                raise TypeError(f"average: weights of shape {shape_of(w)} differ from a's {shape_of(a)}; give axis")
            if ndim_of(w) != 1:
                raise TypeError(f"average: 1-D weights expected when shapes differ, got shape {shape_of(w)}")
            ax = normalize_axis(axis, ndim_of(a))[0]
            if shape_of(w)[0] != shape_of(a)[ax]:
                raise ValueError(f"average: {shape_of(w)[0]} weights for an axis of length {shape_of(a)[ax]}")
            shape = [1] * ndim_of(a)
            shape[ax] = -1
            w = shape_ops.broadcast_to(shape_ops.reshape(w, tuple(shape)), shape_of(a))
        total = reductions.sum(w, axis=axis, keepdims=keepdims)
        avg = elementwise.divide(reductions.sum(elementwise.multiply(a, w), axis=axis, keepdims=keepdims), total)
    if returned:
        return avg, shape_ops.broadcast_to(total, shape_of(avg))
    return avg


# -- order statistics ---------------------------------------------------------------------------
_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


@implements(np.quantile)
def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, **kw: Any) -> Any:
    """The ``q``-th quantiles (0 <= q <= 1) over ``axis``; ``method`` 'linear' (the default), 'lower',
    'higher', 'nearest' or 'midpoint' (NumPy's, and PyTorch's ``interpolation``).

    Differentiable in ``a`` (and in ``q`` for 'linear'); the result has ``q``'s dimensions first, as NumPy's.
    """
    _no_out("quantile", out, {k: v for k, v in kw.items() if k != "weights"})
    if method not in _QUANTILE_METHODS or kw.get("weights") is not None:
        raise NotImplementedError(f"quantile: method must be one of {_QUANTILE_METHODS} (without weights), got "
                                  f"{method!r}")
    qs = as_array(raw(q), dtype=float)
    if np.any(qs < 0) or np.any(qs > 1):
        raise ValueError(f"quantile: q must be in [0, 1], got {raw(q)!r}")
    a = _integers_as_float64(a)
    nd = ndim_of(a)
    if nd == 0 and axis is not None:  # PyTorch reads a 0-d as one entry along dim 0 (normalize_axis checks it)
        normalize_axis(axis, 1)
        return quantile(shape_ops.reshape(a, (1,)), q, 0, method=method)
    if axis is None:
        flat, ax = shape_ops.ravel(a), 0
    else:
        axes = normalize_axis(axis, nd)
        if len(axes) != 1:
            rest = [i for i in range(nd) if i not in axes]
            moved = shape_ops.transpose(a, rest + list(axes))
            flat = shape_ops.reshape(moved, tuple(shape_of(a)[i] for i in rest) + (-1,))
            ax = len(rest)
        else:
            flat, ax = a, axes[0]
    n = shape_of(flat)[ax]
    if n == 0:
        raise ValueError("quantile: cannot take a quantile of an empty axis")
    ordered = sort(flat, axis=ax)
    pos = qs * (n - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    frac: Any = (pos - lo).astype(_real_float(a))  # float32 data keep float32, as NumPy's quantile
    if method != "linear":  # one order statistic (or the mean of two): piecewise constant in q
        if method in ("higher", "nearest"):
            lo = hi = (np.ceil(pos) if method == "higher" else np.round(pos)).astype(np.int64)  # round: half to even
        frac = np.where(frac > 0, 0.5, 0.0).astype(frac.dtype) if method == "midpoint" else np.zeros_like(frac)
    elif isinstance(q, Tensor):  # a traced q: the weight of the upper neighbour is q * (n - 1) - lo, exactly
        frac = elementwise.subtract(elementwise.multiply(q, float(n - 1)), lo.astype(frac.dtype))
    if not isinstance(frac, Tensor):
        frac = xp_of(raw(a)).asarray(frac)  # the weights where the values are (copied once to a device)
    frac = shape_ops.reshape(frac, qs.shape + (1,) * (ndim_of(flat) - ax - 1))
    v_lo, v_hi = shape_ops.take(ordered, lo, axis=ax), shape_ops.take(ordered, hi, axis=ax)
    res = elementwise.add(v_lo, elementwise.multiply(elementwise.subtract(v_hi, v_lo), frac))
    if qs.ndim:
        res = shape_ops.moveaxis(res, tuple(range(ax, ax + qs.ndim)), tuple(range(qs.ndim)))
    if keepdims:
        kept = list(shape_of(a))
        for i in range(nd) if axis is None else normalize_axis(axis, nd):
            kept[i] = 1
        res = shape_ops.reshape(res, qs.shape + tuple(kept))
    return res


@implements(np.percentile)
def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, **kw: Any) -> Any:
    """The ``q``-th percentiles (0 <= q <= 100) over ``axis``."""
    return quantile(a, _percent(q), axis=axis, out=out, method=method, keepdims=keepdims, **kw)


def _percent(q: Any) -> Any:
    """q / 100, keeping a Tensor q traced (quantiles are differentiable in q)."""
    return elementwise.divide(q, 100.0) if isinstance(q, Tensor) else as_array(q, dtype=float) / 100


@implements(np.median)
def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False) -> Any:
    """Middle value over ``axis`` (mean of the two middle ones for an even count)."""
    return quantile(a, 0.5, axis=axis, out=out, keepdims=keepdims)


def _present(row: Any, missing: np.ndarray, q: Any) -> Any:
    """The quantiles ``q`` of a 1-D ``row``'s entries that are not NaN; NaN when none is (NumPy warns then)."""
    if missing.all():
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=4)
        return shape_ops.broadcast_to(shape_ops.getitem(row, 0), np.shape(raw(q)))  # a NaN of the row
    return quantile(shape_ops.take(row, np.flatnonzero(~missing)), q)


def _nan_order(name: str, a: Any, q: Any, axis: Any, keepdims: bool) -> Any:
    mask = _nan(a)
    if not mask.any():
        return quantile(a, q, axis=axis, keepdims=keepdims)
    if axis is None:
        res = _present(shape_ops.ravel(a), mask.ravel(), q)
        return shape_ops.reshape(res, np.shape(raw(q)) + (1,) * ndim_of(a)) if keepdims else res
    ax = normalize_axis(axis, ndim_of(a))[0]
    moved = shape_ops.moveaxis(a, ax, -1)
    rows = shape_ops.reshape(moved, (-1, shape_of(moved)[-1]))
    mrows = np.moveaxis(mask, ax, -1).reshape(-1, shape_of(moved)[-1])
    outs = [_present(shape_ops.getitem(rows, i), mrows[i], q) for i in range(mrows.shape[0])]
    res = shape_ops.stack(outs, axis=-1)
    qnd = np.ndim(raw(q))
    res = shape_ops.reshape(res, shape_of(res)[:qnd] + shape_of(moved)[:-1])
    return shape_ops.expand_dims(res, qnd + ax) if keepdims else res


@implements(np.nanquantile)
def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, **kw: Any) -> Any:
    """``quantile`` of the entries that are not NaN."""
    _no_out("nanquantile", out, kw)
    if method != "linear":
        raise NotImplementedError(f"nanquantile: only method='linear' is supported, got {method!r}")
    return _nan_order("nanquantile", a, q, axis, keepdims)


@implements(np.nanpercentile)
def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, **kw: Any) -> Any:
    """``percentile`` of the entries that are not NaN."""
    return nanquantile(a, _percent(q), axis=axis, out=out, method=method, keepdims=keepdims)


@implements(np.nanmedian)
def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False) -> Any:
    """``median`` of the entries that are not NaN."""
    _no_out("nanmedian", out)
    return _nan_order("nanmedian", a, 0.5, axis, keepdims)


# -- covariance -----------------------------------------------------------------------------------
@implements(np.cov)
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    """Covariance matrix of the variables in the rows (``rowvar``) or columns of ``m``; ``fweights`` (integer
    repeat counts) and ``aweights`` (observation weights) as NumPy's, differentiable in ``aweights`` too."""
    if ndim_of(m) > 2:
        raise ValueError(f"cov: m must be 1-D or 2-D, got shape {shape_of(m)}")
    x = shape_ops.atleast_2d(m)
    if not rowvar and shape_of(x)[0] != 1:
        x = shape_ops.transpose(x)
    if y is not None:
        yy = shape_ops.atleast_2d(y)
        if not rowvar and shape_of(yy)[0] != 1:
            yy = shape_ops.transpose(yy)
        x = shape_ops.concatenate([x, yy], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = shape_of(x)[1]
    if fweights is None and aweights is None:
        d = elementwise.subtract(x, reductions.mean(x, axis=1, keepdims=True))
        c = elementwise.divide(matmul(d, conj(shape_ops.transpose(d))), float(n - ddof))
    else:
        c = _weighted_cov(x, fweights, aweights, ddof)
    return shape_ops.squeeze(c) if shape_of(c) == (1, 1) else c


def _weighted_cov(x: Any, fweights: Any, aweights: Any, ddof: int) -> Any:
    """NumPy's weighted covariance: the weighted mean, then the weighted products over a corrected total."""
    if fweights is not None and not np.issubdtype(np.asarray(raw(fweights)).dtype, np.integer):
        raise TypeError("cov: fweights must be integer")
    w = fweights if aweights is None else aweights if fweights is None else elementwise.multiply(fweights, aweights)
    total = reductions.sum(w)
    mean = elementwise.divide(reductions.sum(elementwise.multiply(x, w), axis=1, keepdims=True), total)
    d = elementwise.subtract(x, mean)
    if ddof == 0:
        fact = total
    elif aweights is None:
        fact = elementwise.subtract(total, ddof)
    else:
        fact = elementwise.subtract(total, elementwise.divide(ddof * reductions.sum(elementwise.multiply(w, aweights)),
                                                              total))
    if np.all(as_array(raw(fact)) <= 0):  # as NumPy (which warns): no degrees of freedom left
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=4)
        fact = 0.0
    return elementwise.divide(matmul(elementwise.multiply(d, w), conj(shape_ops.transpose(d))), fact)


@implements(np.corrcoef)
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """Pearson correlation coefficients (the normalised covariance matrix)."""
    c = cov(x, y, rowvar)
    if ndim_of(c) == 0:
        return elementwise.divide(c, c)
    s = elementwise.sqrt(diagonal(c))
    return elementwise.divide(elementwise.divide(c, shape_ops.expand_dims(s, 1)), shape_ops.expand_dims(s, 0))
