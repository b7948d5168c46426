"""Neural-network functions (as ``torch.nn.functional``): layers, activations, losses.

The fused ones are primitives (registered as ``nn.<name>``) with both a reverse (VJP) and
a forward (JVP) rule, written with NumPy functions so they also run on Tensors (gradients
of gradients work):
``linear``, ``gelu`` (exact and tanh), ``silu``, ``cross_entropy`` (softmax-minus-target
gradient, stable for large logits), ``binary_cross_entropy_with_logits``, ``layer_norm``,
``rms_norm``, ``scaled_dot_product_attention``, ``masked_softmax``. The others (``mse_loss``,
``dropout``, ...) are built from existing ops.

Example:
    >>> import numpy as np
    >>> from chainrule import Tensor
    >>> import chainrule.nn.functional as F
    >>> logits = Tensor([[2.0, 0.5, -1.0]], requires_grad=True)
    >>> loss = F.cross_entropy(logits, np.array([0]))
    >>> loss.backward()
    >>> np.round(logits.grad.data, 3)
    array([[-0.214,  0.175,  0.039]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autodiff.primitive import Primitive
from ..ops import reductions as _reductions
from ..ops._define import raw
from ..ops._saved import Saved, on_values
from ..ops.attention import qkv_attention, scaled_dot_product_attention
from ..ops.elementwise import erf, relu, sigmoid, square, tanh
from ..ops.gauss import gelu_f32, gelu_grad_f32, ndtr
from ..ops.masking import masked_fill, masked_softmax
from ..ops.normalization import layer_norm_primitive as _layer_norm
from ..ops.normalization import rms_norm_primitive as _rms_norm
from ..ops.reductions import mean
from ..ops.shape import getitem, moveaxis, reshape
from ..ops.torch_methods import resolve_dim
from ..tensor import Tensor

__all__ = [
    "linear", "relu", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax",
    "mse_loss", "cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
    "layer_norm", "rms_norm", "dropout", "embedding", "scaled_dot_product_attention",
    "masked_softmax", "masked_fill", "qkv_attention",
]

_REDUCTIONS = ("mean", "sum", "none")


def softmax(x: Any, axis: Any = None, *, dim: Any = None) -> Any:
    """exp(x) / sum(exp(x)) along ``axis`` (PyTorch's ``dim``; the last axis by default).

    Example:
        >>> import chainrule.nn.functional as F
        >>> F.softmax(np.array([[0.0, 0.0]]), dim=-1)
        array([[0.5, 0.5]])
    """
    axis, _ = resolve_dim("softmax", axis, dim)
    return _reductions.softmax(x, -1 if axis is None else axis)


def log_softmax(x: Any, axis: Any = None, *, dim: Any = None) -> Any:
    """x - logsumexp(x) along ``axis`` (PyTorch's ``dim``; the last axis by default)."""
    axis, _ = resolve_dim("log_softmax", axis, dim)
    return _reductions.log_softmax(x, -1 if axis is None else axis)


# == linear: x @ w.T + b, one node ========================================================
def _rows(x: Any) -> Any:
    """x as a matrix (rows, features): NumPy's matmul runs a 2-D product through one BLAS call,
    a stacked one through one call per leading index (much slower for (B, T, D) @ (D, E))."""
    return x if x.ndim == 2 else x.reshape(-1, x.shape[-1])


def _linear_fn(x: Any, w: Any, b: Any = None) -> Any:
    if x.ndim > 2:
        return _linear_fn(_rows(x), w, b).reshape(*x.shape[:-1], w.shape[0])
    out = x @ w.T
    if b is not None:
        out += b
    return out


def _linear_vjp_x(g: Any, ans: Any, x: Any, w: Any, b: Any = None) -> Any:
    return g @ w if g.ndim <= 2 else (_rows(g) @ w).reshape(*g.shape[:-1], w.shape[1])


def _linear_vjp_w(g: Any, ans: Any, x: Any, w: Any, b: Any = None) -> Any:
    nd = x.ndim
    if nd == 1:
        return g.reshape(-1, 1) * x.reshape(1, -1)
    g2, x2 = _rows(g), _rows(x)
    if g2.shape[1] < x2.shape[1] and type(g2) is np.ndarray:  # OpenBLAS is much slower with the short side first
        return (x2.T @ g2).T
    return g2.T @ x2


def _linear_vjp_b(g: Any, ans: Any, x: Any, w: Any, b: Any = None) -> Any:
    return g.sum(axis=0) if g.ndim == 2 else _rows(g).sum(axis=0)


def _linear_jvp_x(t: Any, ans: Any, x: Any, w: Any, b: Any = None) -> Any:
    return t @ w.T if t.ndim <= 2 else (_rows(t) @ w.T).reshape(*t.shape[:-1], w.shape[0])


def _linear_jvp_w(t: Any, ans: Any, x: Any, w: Any, b: Any = None) -> Any:
    return x @ t.T if x.ndim <= 2 else (_rows(x) @ t.T).reshape(*x.shape[:-1], w.shape[0])


_linear = Primitive("nn.linear", _linear_fn, reads=(0, 1))  # x and w: not the output, not the bias
_linear.defvjp(_linear_vjp_x, _linear_vjp_w, _linear_vjp_b)
_linear.defjvp(_linear_jvp_x, _linear_jvp_w, lambda t, ans, x, w, b=None: t)


def linear(x: Any, weight: Any, bias: Any = None) -> Any:
    """``x @ weight.T + bias`` (weight has shape (out_features, in_features), as in PyTorch).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.linear(np.ones((2, 3)), np.ones((4, 3)), np.zeros(4)).shape
        (2, 4)
    """
    if not hasattr(x, "shape"):  # (a Batched value inside vmap has one)
        x = np.asarray(x)
    sx = x.data.shape if isinstance(x, Tensor) else x.shape
    sw = weight.data.shape if isinstance(weight, Tensor) else np.shape(weight)
    if len(sw) != 2:
        raise ValueError(f"linear: weight must be 2-D (out_features, in_features), got shape {sw}")
    if len(sx) == 0 or sx[-1] != sw[1]:
        raise ValueError(
            f"linear: input of shape {sx} does not fit weight of shape {sw}: the input's last axis must have "
            f"size {sw[1]} (in_features)"
        )
    if bias is None:
        return _linear(x, weight)
    sb = bias.data.shape if isinstance(bias, Tensor) else np.shape(bias)
    if sb != (sw[0],):
        raise ValueError(f"linear: bias must have shape ({sw[0]},) to match weight {sw}, got {sb}")
    return _linear(x, weight, bias)


# == activations =========================================================================
_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu_d(ans: Any, x: Any) -> Any:
    return 0.5 * (1.0 + erf(x * _SQRT_HALF)) + x * _INV_SQRT_2PI * np.exp(-0.5 * x * x)


def _gelu_tanh_inner(x: Any) -> Any:
    return _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)


def _gelu_tanh_d(ans: Any, x: Any) -> Any:
    th = tanh(_gelu_tanh_inner(x))
    return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * _SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * x * x)


def _silu_d(ans: Any, x: Any) -> Any:
    s = sigmoid(x)
    return s * (1.0 + x * (1.0 - s))


def _elementwise(name: str, fn: Any, d: Any) -> Primitive:
    prim = Primitive(name, fn)
    prim.defvjp(lambda g, ans, x: g * d(ans, x))
    prim.defjvp(lambda t, ans, x: t * d(ans, x))
    return prim


def _gelu_fn(x: Any, *, saved: Saved | None = None) -> Any:
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or x.ndim == 0:
        return 0.5 * x * (1.0 + erf(x * _SQRT_HALF))
    if x.dtype == np.float32:  # chunked, in cache: no SciPy, no scalar loop, no float64
        y, cdf = gelu_f32(x)
    else:
        cdf = ndtr(x)
        y = x * cdf
    if saved is not None and saved.wanted:
        saved.values["cdf"] = cdf  # Phi(x), for the reverse rule
    return y


def _gelu_vjp(g: Any, ans: Any, x: Any, *, saved: Saved | None = None) -> Any:
    if on_values(g, x) and isinstance(x, np.ndarray) and x.ndim and x.dtype.kind == "f":
        cdf = saved.values.pop("cdf", None) if saved is not None else None  # used once, then let go
        if x.dtype == np.float32 and g.dtype == np.float32:
            return gelu_grad_f32(x, gelu_f32(x)[1] if cdf is None else cdf, g)
        if cdf is None:
            cdf = ndtr(x)
        d = x * x  # gelu'(x) = Phi(x) + x phi(x), in place
        d *= -0.5
        np.exp(d, out=d)
        d *= x
        d *= _INV_SQRT_2PI
        d += cdf
        d *= g
        return d
    return g * _gelu_d(ans, x)


_gelu = Primitive("nn.gelu", _gelu_fn)
_gelu.defvjp(_gelu_vjp)
_gelu.defjvp(lambda t, ans, x, *, saved=None: t * _gelu_d(ans, x))
_gelu_tanh = _elementwise("nn.gelu_tanh", lambda x: 0.5 * x * (1.0 + np.tanh(_gelu_tanh_inner(x))), _gelu_tanh_d)
_silu = _elementwise("nn.silu", lambda x: x * sigmoid(x), _silu_d)


def gelu(x: Any, approximate: str = "none") -> Any:
    """Gaussian error linear unit: ``x * Phi(x)`` (``approximate='none'``, exact, with erf) or its
    tanh approximation (``approximate='tanh'``), as ``torch.nn.functional.gelu``.

    Example:
        >>> import chainrule.nn.functional as F
        >>> round(float(F.gelu(1.0)), 4), round(float(F.gelu(1.0, approximate="tanh")), 4)
        (0.8413, 0.8412)
    """
    if approximate == "none":
        return _gelu(x, saved=Saved(x))
    if approximate == "tanh":
        return _gelu_tanh(x)
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def silu(x: Any) -> Any:
    """``x * sigmoid(x)`` (also called swish).

    Example:
        >>> import chainrule.nn.functional as F
        >>> round(float(F.silu(1.0)), 4)
        0.7311
    """
    return _silu(x)


# == cross entropy: fused softmax + negative log-likelihood =================================
def _ce_prepare(x: Any, target: Any, ignore_index: int, smoothing: float, reduction: str) -> tuple[Any, ...]:
    """(q, w): smoothed target distribution (N, C) and per-row weights (N, 1), both constant."""
    xr = raw(x)
    n, c = xr.shape
    dt = xr.dtype
    t = raw(target)
    if t.dtype.kind == "f":  # class probabilities
        q = t.astype(dt, copy=True)
        if smoothing:
            q = q * (1.0 - smoothing) + smoothing / c
        w = np.ones((n, 1), dtype=dt)
        count = n
    else:
        valid = t != ignore_index
        q = np.full((n, c), smoothing / c, dtype=dt)
        q[np.arange(n), np.where(valid, t, 0)] += 1.0 - smoothing
        w = valid.astype(dt).reshape(n, 1)
        count = int(valid.sum())
    if reduction == "mean":
        w = w / count if count else w * np.nan
    return q, w


def _ce_rows(target: np.ndarray, ignore_index: int) -> tuple[np.ndarray, np.ndarray | None, int]:
    """Class index per row (0 where ignored), the 0/1 mask of kept rows (None: all kept), how many are kept."""
    valid = target != ignore_index
    if valid.all():
        return target, None, len(target)
    return np.where(valid, target, 0), valid, int(valid.sum())


def _ce_fn(x: np.ndarray, target: np.ndarray, ignore_index: int, smoothing: float, reduction: str) -> np.ndarray:
    n, c = x.shape
    s = x - np.maximum.reduce(x, axis=-1, keepdims=True)
    lse = np.log(np.add.reduce(np.exp(s), axis=-1))  # log-sum-exp of the shifted logits, per row
    if target.dtype.kind == "f":  # -sum_c q_c (s_c - lse) with q the (smoothed) probabilities
        q = target * (1.0 - smoothing) + smoothing / c if smoothing else target
        losses = lse * q.sum(axis=-1) - (q * s).sum(axis=-1)
        count, valid = n, None
    else:
        t, valid, count = _ce_rows(target, ignore_index)
        losses = lse - s[np.arange(n), t]
        if smoothing:
            losses = (1.0 - smoothing) * losses + smoothing * (lse - s.mean(axis=-1))
        if valid is not None:
            losses = losses * valid
    losses = losses.astype(x.dtype, copy=False)
    if reduction == "none":
        return losses
    total = losses.sum()
    if reduction == "mean":
        return total / count if count else total * np.nan
    return total


def _probabilities(x: Any) -> Any:
    e = np.exp(x - np.max(raw(x), axis=-1, keepdims=True))  # the shift is a constant: exact gradient
    return e / e.sum(axis=-1, keepdims=True)


def _ce_vjp(g: Any, ans: Any, x: Any, target: Any, ignore_index: int, smoothing: float, reduction: str) -> Any:
    if type(x) is np.ndarray and type(g) is np.ndarray:  # fast path: in place, one (N, C) array
        n, c = x.shape
        p = np.exp(x - np.maximum.reduce(x, axis=-1, keepdims=True))
        p /= np.add.reduce(p, axis=-1, keepdims=True)
        if target.dtype.kind == "f":
            p -= target * (1.0 - smoothing) + smoothing / c if smoothing else target
            valid, count = None, n
        else:
            t, valid, count = _ce_rows(target, ignore_index)
            if p.flags.c_contiguous:  # p[rows, t] -= ..., on the flat view (cheaper than 2-d fancy indexing)
                p.reshape(-1)[np.arange(0, n * c, c) + t] -= 1.0 - smoothing
            else:
                p[np.arange(n), t] -= 1.0 - smoothing
            if smoothing:
                p -= smoothing / c
        if reduction == "none":
            p *= g.reshape(-1, 1) if valid is None else (g * valid).reshape(-1, 1)
            return p
        scale = g / count if reduction == "mean" else g
        if valid is not None:
            scale = scale * valid.reshape(-1, 1)
        p *= scale
        return p
    q, w = _ce_prepare(x, target, ignore_index, smoothing, reduction)
    scale = g.reshape(-1, 1) * w if reduction == "none" else g * w
    return (_probabilities(x) - q) * scale


def _ce_jvp(t: Any, ans: Any, x: Any, target: Any, ignore_index: int, smoothing: float, reduction: str) -> Any:
    q, w = _ce_prepare(x, target, ignore_index, smoothing, reduction)
    per_row = ((_probabilities(x) - q) * t).sum(axis=-1) * w[:, 0]
    return per_row if reduction == "none" else per_row.sum()


_cross_entropy = Primitive("nn.cross_entropy", _ce_fn)
_cross_entropy.defvjp(_ce_vjp, None)
_cross_entropy.defjvp(_ce_jvp, None)


def _check_reduction(name: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def cross_entropy(
    logits: Any,
    target: Any,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Any:
    """Cross-entropy between ``softmax(logits)`` and the targets, as ``torch.nn.functional.cross_entropy``.

    ``logits``: shape (N, C), (C,) or (N, C, d1, ...) (classes on axis 1). ``target``: integer
    class indices of shape (N,) / () / (N, d1, ...), or class probabilities of the logits'
    shape. Rows whose target is ``ignore_index`` count for nothing (and are left out of the
    mean). ``label_smoothing`` mixes the target with the uniform distribution. Stable for
    large logits; one fused node whose gradient is ``softmax - target``.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> round(float(F.cross_entropy(np.array([[1000.0, 0.0]]), np.array([1]))), 1)
        1000.0
    """
    _check_reduction("cross_entropy", reduction)
    if not 0.0 <= float(label_smoothing) <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    if isinstance(target, Tensor) and target._requires_grad:
        raise TypeError("cross_entropy: target must be a constant (no gradient flows into it); pass target.detach()")
    if not isinstance(logits, Tensor):
        logits = np.asarray(logits)
    xr = logits.data if isinstance(logits, Tensor) else logits
    sx = xr.shape
    t = target.data if isinstance(target, Tensor) else np.asarray(target)
    if xr.dtype.kind != "f":
        raise TypeError(f"cross_entropy: logits must be floating point, got dtype {xr.dtype}")
    if len(sx) == 0:
        raise ValueError("cross_entropy: logits must have a class axis, got a 0-d value")
    c = sx[0] if len(sx) == 1 else sx[1]
    soft = t.dtype.kind == "f"
    if soft:
        if t.shape != sx:
            raise ValueError(
                f"cross_entropy: probability targets (float) must have the logits' shape {sx}, got {t.shape}; "
                "for class indices pass an integer array"
            )
    else:
        if t.dtype.kind not in "iu":
            raise TypeError(
                f"cross_entropy: target must hold integer class indices (or float probabilities), got {t.dtype}"
            )
        want = () if len(sx) == 1 else (sx[0], *sx[2:])
        if t.shape != want:
            raise ValueError(
                f"cross_entropy: logits of shape {sx} need a target of shape {want} (one class index per "
                f"{'input' if not want else 'row'}), got target of shape {t.shape}"
            )
        if t.size and (t.min() < 0 or t.max() >= c):
            bad = (t != ignore_index) & ((t < 0) | (t >= c))
            if bad.any():
                raise IndexError(
                    f"cross_entropy: target holds class {int(t[bad].flat[0])}, outside [0, {c}) for logits with "
                    f"{c} classes (ignore_index={ignore_index})"
                )
    x = logits
    if len(sx) == 1:
        x, t2 = reshape(x, (1, c)), t.reshape((1, c) if soft else (1,))
    elif len(sx) > 2:
        x = reshape(moveaxis(x, 1, -1), (-1, c))
        t2 = np.moveaxis(t, 1, -1).reshape(-1, c) if soft else t.reshape(-1)
    else:
        t2 = t
    out = _cross_entropy(x, t2, ignore_index=int(ignore_index), smoothing=float(label_smoothing), reduction=reduction)
    if reduction == "none":
        out = reshape(out, () if len(sx) == 1 else (sx[0], *sx[2:]))
    return out


def nll_loss(log_probs: Any, target: Any, ignore_index: int = -100, reduction: str = "mean") -> Any:
    """Negative log-likelihood of integer targets given log-probabilities of shape (N, C).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> bool(float(F.nll_loss(np.log(np.array([[0.5, 0.5]])), np.array([0]))) == -np.log(0.5))
        True
    """
    _check_reduction("nll_loss", reduction)
    s = np.shape(raw(log_probs))
    t = np.asarray(raw(target))
    if len(s) != 2 or t.shape != (s[0],) or t.dtype.kind not in "iu":
        raise ValueError(
            f"nll_loss: expected log_probs (N, C) and integer target (N,), got {s} and {t.shape} {t.dtype}"
        )
    valid = t != ignore_index
    if ((t < 0) | (t >= s[1]))[valid].any():
        raise IndexError(f"nll_loss: target outside [0, {s[1]}) (ignore_index={ignore_index})")
    weights = valid.astype(np.result_type(raw(log_probs)))
    picked = -getitem(log_probs, (np.arange(s[0]), np.where(valid, t, 0))) * weights
    if reduction == "none":
        return picked
    total = picked.sum()
    return total if reduction == "sum" else total / int(valid.sum())


# == binary cross entropy with logits =======================================================
def _softplus_neg(x: Any) -> Any:
    return np.logaddexp(0.0, -x)  # log(1 + exp(-x)), stable


def _bce_fn(x: Any, y: Any, pos_weight: Any = None) -> Any:
    sp = _softplus_neg(x)
    if pos_weight is None:
        return (1.0 - y) * x + sp
    return (1.0 - y) * x + (1.0 + (pos_weight - 1.0) * y) * sp


def _bce_dx(ans: Any, x: Any, y: Any, pos_weight: Any = None) -> Any:
    if pos_weight is None:
        return sigmoid(x) - y
    return (1.0 - y) - (1.0 + (pos_weight - 1.0) * y) * sigmoid(-x)


def _bce_dy(ans: Any, x: Any, y: Any, pos_weight: Any = None) -> Any:
    if pos_weight is None:
        return -x
    return -x + (pos_weight - 1.0) * _softplus_neg(x)


_bce = Primitive("nn.binary_cross_entropy_with_logits", _bce_fn)
_bce.defvjp(lambda g, ans, *a: g * _bce_dx(ans, *a), lambda g, ans, *a: g * _bce_dy(ans, *a), None)
_bce.defjvp(lambda t, ans, *a: t * _bce_dx(ans, *a), lambda t, ans, *a: t * _bce_dy(ans, *a), None)


def _reduce(name: str, losses: Any, reduction: str) -> Any:
    if reduction == "mean":
        return mean(losses)
    if reduction == "sum":
        return losses.sum() if isinstance(losses, Tensor) else np.sum(losses)
    return losses


def binary_cross_entropy_with_logits(
    logits: Any, target: Any, reduction: str = "mean", pos_weight: Any = None
) -> Any:
    """Binary cross-entropy of ``sigmoid(logits)`` against targets in [0, 1], computed stably from
    the logits (as ``torch.nn.functional.binary_cross_entropy_with_logits``).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> round(float(F.binary_cross_entropy_with_logits(np.array([0.0]), np.array([1.0]))), 4)
        0.6931
    """
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    sx, sy = np.shape(raw(logits)), np.shape(raw(target))
    if sx != sy:
        raise ValueError(
            f"binary_cross_entropy_with_logits: logits of shape {sx} and target of shape {sy} must have the "
            "same shape (reshape the target, e.g. y.reshape(-1, 1))"
        )
    dt = np.result_type(raw(logits))
    if dt.kind != "f":
        raise TypeError(f"binary_cross_entropy_with_logits: logits must be floating point, got dtype {dt}")
    if not isinstance(target, Tensor):
        target = np.asarray(target, dtype=dt)
    args = (logits, target) if pos_weight is None else (logits, target, np.asarray(raw(pos_weight), dtype=dt))
    return _reduce("binary_cross_entropy_with_logits", _bce(*args), reduction)


# == mean squared error ======================================================================
def mse_loss(input: Any, target: Any, reduction: str = "mean") -> Any:  # noqa: A002
    """Mean (or sum) of squared differences; ``input`` and ``target`` must have the same shape.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> float(F.mse_loss(np.array([1.0, 2.0]), np.array([0.0, 0.0])))
        2.5
    """
    _check_reduction("mse_loss", reduction)
    si, st = np.shape(raw(input)), np.shape(raw(target))
    if si != st:
        raise ValueError(
            f"mse_loss: input of shape {si} and target of shape {st} must have the same shape "
            "(broadcasting them is usually a bug; reshape one, e.g. target.reshape(-1, 1))"
        )
    if not isinstance(target, Tensor):
        target = np.asarray(target, dtype=np.result_type(raw(input)))
    return _reduce("mse_loss", square(input - target), reduction)


# == normalisation ==========================================================================
def _norm_axes(name: str, x: Any, normalized_shape: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    ns = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    sx = np.shape(raw(x))
    if len(ns) > len(sx) or tuple(sx[len(sx) - len(ns):]) != ns:
        raise ValueError(f"{name}: input of shape {sx} does not end with normalized_shape {ns}")
    return ns, tuple(range(len(sx) - len(ns), len(sx)))


def _norm_args(name: str, x: Any, normalized_shape: Any, weight: Any, bias: Any) -> tuple[Any, tuple[int, ...]]:
    if not isinstance(x, Tensor) and not hasattr(x, "batch_size"):  # (a Batched value inside vmap passes as is)
        x = np.asarray(x)
        if x.dtype.kind != "f":
            x = x.astype(np.float64)
    ns, axes = _norm_axes(name, x, normalized_shape)
    for what, p in (("weight", weight), ("bias", bias)):
        if p is not None and np.shape(raw(p)) != ns:
            raise ValueError(f"{name}: {what} must have shape normalized_shape {ns}, got {np.shape(raw(p))}")
    return x, axes


def layer_norm(x: Any, normalized_shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    """Normalise over the last ``len(normalized_shape)`` axes to mean 0 and variance 1 (biased),
    then scale by ``weight`` and shift by ``bias``; one fused node (as ``torch.nn.functional.layer_norm``).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> np.round(F.layer_norm(np.array([[1.0, 3.0]]), (2,)), 3)
        array([[-1.,  1.]])
    """
    x, axes = _norm_args("layer_norm", x, normalized_shape, weight, bias)
    args = (x, weight, bias)
    return _layer_norm(*args, axes=axes, eps=float(eps), saved=Saved(*args))


def rms_norm(x: Any, normalized_shape: Any, weight: Any = None, eps: float | None = None) -> Any:
    """Divide by the root mean square over the last axes (eps defaults to the dtype's machine epsilon,
    as PyTorch), then scale by ``weight``; one fused node.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> np.round(F.rms_norm(np.array([[3.0, 4.0]]), (2,)), 3)
        array([[0.849, 1.131]])
    """
    x, axes = _norm_args("rms_norm", x, normalized_shape, weight, None)
    if eps is None:
        eps = float(np.finfo(np.result_type(raw(x))).eps)
    args = (x, weight)
    return _rms_norm(*args, axes=axes, eps=float(eps), saved=Saved(*args))


# == dropout and embedding =====================================================================
def dropout(x: Any, p: float = 0.5, training: bool = True, rng: Any = None) -> Any:
    """Zero each entry with probability ``p`` and scale the rest by 1 / (1 - p) (identity when not training).

    ``rng``: a ``numpy.random.Generator`` or a seed, for reproducible masks.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> y = F.dropout(np.ones(6), p=0.5, rng=0)
        >>> sorted(set(y.tolist())) in ([0.0, 2.0], [2.0], [0.0])
        True
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability p must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return x
    xr = raw(x)
    dt = np.result_type(xr)
    if p == 1.0:
        return x * np.zeros(np.shape(xr), dtype=dt)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    mask = (gen.random(np.shape(xr)) >= p).astype(dt) * dt.type(1.0 / (1.0 - p))
    return x * mask


def embedding(indices: Any, weight: Any) -> Any:
    """Rows of ``weight`` (num_embeddings, dim) picked by integer ``indices`` of any shape.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.embedding(np.array([[0, 2]]), np.eye(3)).shape
        (1, 2, 3)
    """
    idx = np.asarray(raw(indices))
    n = np.shape(raw(weight))[0]
    if idx.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got dtype {idx.dtype}")
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = idx[(idx < 0) | (idx >= n)].flat[0]
        raise IndexError(f"embedding: index {int(bad)} is out of range for an embedding table of {n} rows")
    return getitem(weight, idx)

