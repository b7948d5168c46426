"""Layer normalisation and RMS normalisation as fused primitives (one node each).

``layer_norm``: y = (x - mean) / sqrt(var + eps) * w + b over the trailing axes;
``rms_norm``: y = x / sqrt(mean(x^2) + eps) * w. The forward pass keeps the normalised input
and the reciprocal standard deviation (one value per row) for the reverse rule, which
computes dx, dw and db together from them. With ``create_graph`` the rules recompute those
with differentiable ops (gradients of gradients work).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff.primitive import Primitive
from ._saved import Saved, on_values


def _rows(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """x as (rows, features): the normalised axes are the trailing ones."""
    return x.reshape(-1, int(np.prod([x.shape[a] for a in axes], dtype=np.int64)))


# -- NumPy fast paths (first order) -------------------------------------------------------------
def _ln_forward(x: np.ndarray, axes: tuple[int, ...], eps: float) -> tuple[np.ndarray, np.ndarray]:
    x2 = _rows(x, axes)
    inv_d = x.dtype.type(1.0 / x2.shape[1])
    xhat = x2 - np.add.reduce(x2, axis=1, keepdims=True) * inv_d
    var = np.einsum("ij,ij->i", xhat, xhat)[:, None] * inv_d
    var += x.dtype.type(eps)
    rstd = np.sqrt(var, out=var)
    np.reciprocal(rstd, out=rstd)
    xhat *= rstd
    return xhat, rstd


def _rms_forward(x: np.ndarray, axes: tuple[int, ...], eps: float) -> tuple[np.ndarray, np.ndarray]:
    x2 = _rows(x, axes)
    ms = np.einsum("ij,ij->i", x2, x2)[:, None] * x.dtype.type(1.0 / x2.shape[1])
    ms += x.dtype.type(eps)
    rstd = np.reciprocal(np.sqrt(ms, out=ms), out=ms)
    return x2 * rstd, rstd


def _affine(xhat: np.ndarray, shape: tuple[int, ...], w: Any, b: Any) -> np.ndarray:
    y = xhat * w.reshape(-1) if w is not None else xhat.copy()
    if b is not None:
        y += b.reshape(-1)
    return y.reshape(shape)


def _fast_grads(wanted: tuple[int, ...], g: np.ndarray, x: np.ndarray, w: Any, xhat: np.ndarray,
                rstd: np.ndarray, axes: tuple[int, ...], centred: bool) -> dict[int, Any]:
    g2 = g.reshape(xhat.shape)
    features = x.shape[x.ndim - len(axes):]
    grads: dict[int, Any] = {}
    if 1 in wanted:
        grads[1] = np.einsum("ij,ij->j", g2, xhat).reshape(features)
    if 2 in wanted:
        grads[2] = np.add.reduce(g2, axis=0).reshape(features)
    if 0 in wanted:
        inv_d = x.dtype.type(1.0 / xhat.shape[1])
        gw = g2 * w.reshape(-1) if w is not None else g2.copy()
        proj = np.einsum("ij,ij->i", gw, xhat)[:, None] * inv_d  # mean(gw * xhat) per row
        if centred:
            gw -= np.add.reduce(gw, axis=1, keepdims=True) * inv_d
        gw -= xhat * proj
        gw *= rstd
        grads[0] = gw.reshape(x.shape)
    return grads


# -- differentiable forms (any arrays, Tensors included) -----------------------------------------
def _parts(x: Any, axes: tuple[int, ...], eps: float, centred: bool) -> tuple[Any, Any]:
    if centred:
        x = x - np.mean(x, axis=axes, keepdims=True)
    rstd = (np.mean(x * x, axis=axes, keepdims=True) + eps) ** -0.5
    return x * rstd, rstd


def _dnorm(t: Any, xhat: Any, rstd: Any, axes: tuple[int, ...], centred: bool) -> Any:
    """The normalisation's derivative applied to t (it is self-adjoint: one formula for both modes)."""
    out = t - xhat * np.mean(t * xhat, axis=axes, keepdims=True)
    if centred:
        out = out - np.mean(t, axis=axes, keepdims=True)
    return out * rstd


def _norm_primitive(name: str, centred: bool) -> Primitive:
    def fn(x: Any, w: Any = None, b: Any = None, *, axes: tuple[int, ...], eps: float, saved: Saved) -> Any:
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            xhat, rstd = (_ln_forward if centred else _rms_forward)(x, axes, eps)
            if saved.wanted:
                saved.values["xhat"], saved.values["rstd"] = xhat, rstd
            return _affine(xhat, x.shape, w, b)
        xhat, _ = _parts(x, axes, eps, centred)
        y = xhat * w if w is not None else xhat
        return y + b if b is not None else y

    def saved_parts(x: Any, axes: tuple[int, ...], eps: float, saved: Saved) -> tuple[Any, Any, bool]:
        """(xhat, rstd, as_rows): the forward's arrays when it kept them, else recomputed."""
        if on_values(x) and "xhat" in saved.values:
            return saved.values["xhat"], saved.values["rstd"], True
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
