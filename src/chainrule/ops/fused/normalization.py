"""Layer normalisation and RMS normalisation as fused primitives (one node each).

``layer_norm``: y = (x - mean) / sqrt(var + eps) * w + b over the trailing axes;
``rms_norm``: y = x / sqrt(mean(x^2) + eps) * w. The forward pass keeps the normalised input
and the reciprocal standard deviation (one value per row) for the reverse rule, which
computes dx, dw and db together from them. With ``create_graph`` the rules recompute those
with differentiable ops (gradients of gradients work).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...autodiff.primitive import Primitive
from ...core.device import contiguous, is_off_host, kernel
from ...runtime.threads import for_blocks
from .._saved import Saved, on_values


def _rows(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """x as (rows, features): the normalised axes are the trailing ones."""
    return x.reshape(-1, math.prod([x.shape[a] for a in axes]))


# -- NumPy fast paths (first order) -------------------------------------------------------------
# Blocks of rows small enough to stay in the CPU cache while every pass runs over them, split
# between threads (runtime.threads); row sums are products with a vector of ones (BLAS). Sums over
# rows (the weight and bias gradients) add one partial sum per block, in block order: the blocks
# do not depend on the number of threads, so neither do the results.
_BLOCK_ELEMENTS = 65536


def _block_rows(d: int) -> int:
    return max(1, _BLOCK_ELEMENTS // max(1, d))


_MEANS: dict[tuple[int, Any], np.ndarray] = {}


def _mean_vector(d: int, dtype: Any) -> np.ndarray:
    """A read-only vector of ``d`` values 1/d: a row's mean is one product with it (BLAS); made once per size."""
    v = _MEANS.get((d, dtype))
    if v is None:
        if len(_MEANS) > 64:
            _MEANS.clear()
        v = _MEANS[d, dtype] = np.full(d, 1.0 / d, dtype=dtype)
        v.flags.writeable = False
    return v


def _normalise(x: np.ndarray, axes: tuple[int, ...], eps: float, centred: bool, w: Any = None, b: Any = None,
               affine: bool = False) -> tuple[Any, np.ndarray, np.ndarray]:
    """(y or None, xhat (rows, D), rstd (rows, 1)); y = xhat * w + b in x's shape when ``affine``."""
    x2 = _rows(x, axes)
    n, d = x2.shape
    xhat = np.empty_like(x2)
    rstd = np.empty((n, 1), dtype=x.dtype)
    y = np.empty_like(x2) if affine else None
    args = (w.reshape(-1) if w is not None else None, b.reshape(-1) if b is not None else None, eps, centred)
    block = _block_rows(d)
    if n <= block:  # one block (one token at a time when sampling): no bookkeeping
        _normalise_block(x2, xhat, rstd, y, *args)
    else:
        for_blocks(lambda lo, hi: _normalise_block(x2[lo:hi], xhat[lo:hi], rstd[lo:hi],
                                                   None if y is None else y[lo:hi], *args), n, block)
    return (y.reshape(x.shape) if y is not None else None), xhat, rstd


def _normalise_block(xb: np.ndarray, xh: np.ndarray, r: np.ndarray, yb: Any, wf: Any, bf: Any, eps: float,
                     centred: bool) -> None:
    """Rows ``xb`` normalised into ``xh``, their 1 / std into ``r``, and xhat * w + b into ``yb`` (unless None)."""
    dt = xb.dtype.type
    mean = _mean_vector(xb.shape[1], xb.dtype)
    if centred:
        np.subtract(xb, (xb @ mean)[:, None], out=xh)
    else:
        np.copyto(xh, xb)
    np.multiply(np.einsum("ij,ij->i", xh, xh)[:, None], mean[0], out=r)
    r += dt(eps)
    np.sqrt(r, out=r)
    np.reciprocal(r, out=r)
    xh *= r
    if yb is not None:
        if wf is not None:
            np.multiply(xh, wf, out=yb)
        else:
            np.copyto(yb, xh)
        if bf is not None:
            yb += bf


def _ln_forward(x: np.ndarray, axes: tuple[int, ...], eps: float) -> tuple[np.ndarray, np.ndarray]:
    return _normalise(x, axes, eps, True)[1:]


def _rms_forward(x: np.ndarray, axes: tuple[int, ...], eps: float) -> tuple[np.ndarray, np.ndarray]:
    return _normalise(x, axes, eps, False)[1:]


def _fast_grads(wanted: tuple[int, ...], g: np.ndarray, x: np.ndarray, w: Any, xhat: np.ndarray,
                rstd: np.ndarray, axes: tuple[int, ...], centred: bool) -> dict[int, Any]:
    g2 = contiguous(g).reshape(xhat.shape)
    n, d = xhat.shape
    features = x.shape[x.ndim - len(axes):]
    dt = x.dtype.type
    inv_d = dt(1.0 / d)
    ones_d = np.ones(d, dtype=x.dtype)
    wf = w.reshape(-1) if w is not None else None
    block = _block_rows(d)
    count = -(-n // block)
    want_dx, want_dw, want_db = 0 in wanted, 1 in wanted, 2 in wanted
    dx = np.empty_like(xhat) if want_dx else None
    dw_parts = np.empty((count, d), dtype=x.dtype) if want_dw else None
    db_parts = np.empty((count, d), dtype=x.dtype) if want_db else None

    def work(lo: int, hi: int) -> None:
        gb, xh = g2[lo:hi], xhat[lo:hi]
        ones_n = np.ones(hi - lo, dtype=x.dtype)
        i = lo // block
        if want_dw:
            dw_parts[i] = ones_n @ (gb * xh)
        if want_db:
            db_parts[i] = ones_n @ gb
        if want_dx:
            gw = dx[lo:hi]
            if wf is not None:
                np.multiply(gb, wf, out=gw)
            else:
                np.copyto(gw, gb)
            proj = np.einsum("ij,ij->i", gw, xh)[:, None] * inv_d  # mean(gw * xhat) per row
            if centred:
                gw -= (gw @ ones_d)[:, None] * inv_d
            gw -= xh * proj
            gw *= rstd[lo:hi]

    for_blocks(work, n, block)
    grads: dict[int, Any] = {}
    if want_dw:
        grads[1] = np.add.reduce(dw_parts, axis=0).reshape(features)
    if want_db:
        grads[2] = np.add.reduce(db_parts, axis=0).reshape(features)
    if want_dx:
        grads[0] = dx.reshape(x.shape)
    return grads


# -- differentiable forms (any arrays, Tensors included) -----------------------------------------
def _stats(x: Any, axes: tuple[int, ...], eps: float, centred: bool) -> tuple[Any, Any, Any]:
    """(x centred (x itself when not), the mean (None when not centred), the reciprocal standard deviation)."""
    mean = np.mean(x, axis=axes, keepdims=True) if centred else None
    xc = x - mean if centred else x
    return xc, mean, (np.mean(xc * xc, axis=axes, keepdims=True) + eps) ** -0.5


def _parts(x: Any, axes: tuple[int, ...], eps: float, centred: bool) -> tuple[Any, Any]:
    xc, _, rstd = _stats(x, axes, eps, centred)
    return xc * rstd, rstd


def _dnorm(t: Any, xhat: Any, rstd: Any, axes: tuple[int, ...], centred: bool) -> Any:
    """The normalisation's derivative applied to t (it is self-adjoint: one formula for both modes)."""
    out = t - xhat * np.mean(t * xhat, axis=axes, keepdims=True)
    if centred:
        out = out - np.mean(t, axis=axes, keepdims=True)
    return out * rstd


def _device_grads(wanted: tuple[int, ...], g: Any, w: Any, xhat: Any, rstd: Any, axes: tuple[int, ...],
                  centred: bool) -> dict[int, Any]:
    """The wanted gradients on a device's arrays (x's shape): one pass for all three, each row mean or column sum
    one kernel with the products before it (see :func:`_row_mean`), where recomputing the normalisation once per
    argument took three times as many launches."""
    grads: dict[int, Any] = {}
    rows = tuple(range(g.ndim - len(axes)))
    if 1 in wanted:
        grads[1] = _reduce(g, rows, None, "sum_product", lambda xp: lambda g, xhat: xp.sum(g * xhat, axis=rows))(
            g, xhat)
    if 2 in wanted:
        grads[2] = g.sum(axis=rows)
    if 0 in wanted:  # _dnorm: its two row means and its last four operations, three kernels
        n = math.prod(g.shape[a] for a in axes)
        if w is not None:
            a = _row_mean(g, axes, "mean_weighted_product", lambda xp: lambda g, w, xhat, n: xp.sum(
                g * w * xhat, axis=axes) / n)(g, w, xhat, n)
            if centred:
                m = _row_mean(g, axes, "mean_weighted", lambda xp: lambda g, w, n: xp.sum(g * w, axis=axes) / n)(
                    g, w, n)
                grads[0] = kernel(g, "dnorm_weighted", _dnorm_weighted)(g, w, xhat, a, m, rstd)
            else:
                grads[0] = kernel(g, "dnorm_weighted_uncentred", _dnorm_weighted_uncentred)(g, w, xhat, a, rstd)
        else:
            a = _row_mean(g, axes, "mean_product", lambda xp: lambda g, xhat, n: xp.sum(g * xhat, axis=axes) / n)(
                g, xhat, n)
            if centred:
                m = _row_mean(g, axes, "mean", lambda xp: lambda g, n: xp.sum(g, axis=axes) / n)(g, n)
                grads[0] = kernel(g, "dnorm", _dnorm_kernel)(g, xhat, a, m, rstd)
            else:
                grads[0] = kernel(g, "dnorm_uncentred", _dnorm_uncentred)(g, xhat, a, rstd)
    return grads


# -- a device's kernels (each fused into one launch where the device fuses: CuPy) -----------------
def _reduce(like: Any, axes: tuple[int, ...], keep: Any, name: str, body: Any) -> Any:
    """``body(xp)``: elementwise operations, one sum over ``axes``, scalar arithmetic after it (what ``cupy.fuse``
    puts in one reduction kernel), as a kernel for ``like``'s device; ``keep``: the kept axes' shape, or None."""
    fn = kernel(like, f"{name}_{axes}", lambda xp, special: body(xp))
    return fn if keep is None else lambda *args: fn(*args).reshape(keep)


def _row_mean(x: Any, axes: tuple[int, ...], name: str, body: Any) -> Any:
    """:func:`_reduce` over the normalised axes, the result shaped as ``np.mean(..., keepdims=True)``'s."""
    return _reduce(x, axes, tuple(1 if i in axes else d for i, d in enumerate(x.shape)), name, body)


def _device_stats(x: Any, axes: tuple[int, ...], eps: float, centred: bool) -> tuple[Any, Any]:
    """(the rows' means or None, their 1 / sqrt(mean square + eps)) of a device's array: a kernel each."""
    n = math.prod(x.shape[a] for a in axes)
    if not centred:
        return None, _row_mean(x, axes, f"rsqrt_mean_square_{eps!r}", lambda xp: lambda x, n: (
            xp.sum(x * x, axis=axes) / n + eps) ** -0.5)(x, n)
    mean = _row_mean(x, axes, "mean", lambda xp: lambda x, n: xp.sum(x, axis=axes) / n)(x, n)
    return mean, _row_mean(x, axes, f"rsqrt_variance_{eps!r}", lambda xp: lambda x, m, n: (
        xp.sum((x - m) * (x - m), axis=axes) / n + eps) ** -0.5)(x, mean, n)


def _normalised(x: Any, mean: Any, rstd: Any, w: Any, b: Any) -> Any:
    """``(x - mean) * rstd * w + b`` (the parts that are there) on a device: one kernel."""
    key = (mean is not None, w is not None, b is not None)
    args = [a for a in (x, mean, rstd, w, b) if a is not None]
    return kernel(x, "normalised_" + "".join("1" if k else "0" for k in key), _NORMALISED[key])(*args)


_NORMALISED = {  # (centred, scaled, shifted): the normalisation's elementwise step
    (True, True, True): lambda xp, special: lambda x, m, r, w, b: (x - m) * r * w + b,
    (True, True, False): lambda xp, special: lambda x, m, r, w: (x - m) * r * w,
    (True, False, True): lambda xp, special: lambda x, m, r, b: (x - m) * r + b,
    (True, False, False): lambda xp, special: lambda x, m, r: (x - m) * r,
    (False, True, True): lambda xp, special: lambda x, r, w, b: x * r * w + b,
    (False, True, False): lambda xp, special: lambda x, r, w: x * r * w,
    (False, False, True): lambda xp, special: lambda x, r, b: x * r + b,
    (False, False, False): lambda xp, special: lambda x, r: x * r,
}


def _dnorm_weighted(xp: Any, special: Any) -> Any:
    return lambda g, w, xhat, a, m, rstd: (g * w - xhat * a - m) * rstd


def _dnorm_weighted_uncentred(xp: Any, special: Any) -> Any:
    return lambda g, w, xhat, a, rstd: (g * w - xhat * a) * rstd


def _dnorm_kernel(xp: Any, special: Any) -> Any:
    return lambda t, xhat, a, m, rstd: (t - xhat * a - m) * rstd


def _dnorm_uncentred(xp: Any, special: Any) -> Any:
    return lambda t, xhat, a, rstd: (t - xhat * a) * rstd


def _plain(dtype: np.dtype, *xs: Any) -> bool:
    """Weights absent or NumPy arrays of x's dtype (else the affine step promotes, as NumPy would)."""
    for x in xs:
        if x is not None and (type(x) is not np.ndarray or x.dtype != dtype):
            return False
    return True


def _norm_primitive(name: str, centred: bool) -> Primitive:
    def fn(x: Any, w: Any = None, b: Any = None, *, axes: tuple[int, ...], eps: float, saved: Saved) -> Any:
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            fused = _plain(x.dtype, w, b)
            y, xhat, rstd = _normalise(x, axes, eps, centred, w, b, affine=fused)
            if saved.wanted:
                saved.values["xhat"], saved.values["rstd"] = xhat, rstd
            if fused:
                return y
            y = xhat * w.reshape(-1) if w is not None else xhat.copy()
            return (y + b.reshape(-1) if b is not None else y).reshape(x.shape)
        if is_off_host(x) and x.dtype.kind == "f":  # a device's arrays: three kernels where CuPy fuses
            mean, rstd = _device_stats(x, axes, eps, centred)
            if saved.wanted:  # the row statistics (small) for the reverse rule
                saved.values["mean"], saved.values["rstd"] = mean, rstd
            return _normalised(x, mean, rstd, w, b)
        xc, mean, rstd = _stats(x, axes, eps, centred)
        xhat = xc * rstd
        y = xhat * w if w is not None else xhat
        return y + b if b is not None else y

    def saved_parts(x: Any, axes: tuple[int, ...], eps: float, saved: Saved) -> tuple[Any, Any, bool]:
        """(xhat, rstd, as_rows): the forward's arrays when it kept them, else recomputed."""
        if on_values(x) and "xhat" in saved.values:
            return saved.values["xhat"], saved.values["rstd"], True
        if on_values(x) and "rstd" in saved.values:  # a device's forward kept the row statistics
            mean, rstd = saved.values["mean"], saved.values["rstd"]
            return _normalised(x, mean, rstd, None, None), rstd, False
        if on_values(x) and isinstance(x, np.ndarray) and x.dtype.kind == "f":
            xhat, rstd = (_ln_forward if centred else _rms_forward)(x, axes, eps)
            return xhat, rstd, True
        xhat, rstd = _parts(x, axes, eps, centred)
        return xhat, rstd, False

    def vjp(argnum: int) -> Any:
        def rule(g: Any, ans: Any, x: Any, w: Any = None, b: Any = None, *, axes: tuple[int, ...], eps: float,
                 saved: Saved) -> Any:
            if on_values(g, x, w) and isinstance(g, np.ndarray) and isinstance(x, np.ndarray):
                def compute(wanted: tuple[int, ...]) -> dict[int, Any]:
                    xhat, rstd, _ = saved_parts(x, axes, eps, saved)
                    return _fast_grads(wanted, g, x, w, xhat, rstd, axes, centred)

                return saved.take(argnum, g, compute)
            if on_values(g, x, w) and is_off_host(x):  # a device's arrays: every gradient from one pass as well
                def on_device(wanted: tuple[int, ...]) -> dict[int, Any]:
                    xhat, rstd, _ = saved_parts(x, axes, eps, saved)
                    return _device_grads(wanted, g, w, xhat, rstd, axes, centred)

                return saved.take(argnum, g, on_device)
            xhat, rstd = _parts(x, axes, eps, centred)  # differentiable: recomputed from x
            if argnum == 0:
                return _dnorm(g * w if w is not None else g, xhat, rstd, axes, centred)
            return g * xhat if argnum == 1 else g

        return rule

    def jvp(argnum: int) -> Any:
        def rule(t: Any, ans: Any, x: Any, w: Any = None, b: Any = None, *, axes: tuple[int, ...], eps: float,
                 saved: Saved) -> Any:
            xhat, rstd, rows = saved_parts(x, axes, eps, saved)
            if rows:
                xhat, rstd = xhat.reshape(np.shape(x)), rstd.reshape(*np.shape(x)[: -len(axes)], *(1,) * len(axes))
            if argnum == 0:
                dy = _dnorm(t, xhat, rstd, axes, centred)
                return dy * w if w is not None else dy
            return xhat * t if argnum == 1 else t

        return rule

    prim = Primitive(name, fn, reads=(0, 1))  # x and the weight (and the forward's Saved), not the output
    prim.defvjp(vjp(0), vjp(1), vjp(2))
    prim.defjvp(jvp(0), jvp(1), jvp(2))
    return prim


layer_norm_primitive = _norm_primitive("nn.layer_norm", centred=True)
rms_norm_primitive = _norm_primitive("nn.rms_norm", centred=False)
