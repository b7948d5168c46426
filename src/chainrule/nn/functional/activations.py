"""Activation functions of ``chainrule.nn.functional``: ``gelu`` (exact and tanh) and ``silu``.

Each is one primitive with both rules. Exact float32 GELU runs ``ops.special_functions.gauss.gelu_f32`` (no SciPy,
in cache-sized blocks split between threads) and keeps Phi(x) for its reverse rule; SiLU on float
arrays runs ``ops.logistic`` the same way and keeps sigmoid(x).

Example:
    >>> import chainrule.nn.functional as F
    >>> round(float(F.gelu(1.0)), 4)
    0.8413
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...autodiff.batch_levels import is_batched
from ...autodiff.primitive import Primitive
from ...core.device import OFF_HOST, as_array, kernel
from ...ops import elementwise as _ew
from ...ops._define import raw
from ...ops._saved import Saved, on_values
from ...ops.elementwise import erf, sigmoid, tanh
from ...ops.logistic import silu_backward, silu_forward
from ...ops.special_functions.gauss import gelu_f32, gelu_grad_f32, ndtr, times_f32

__all__ = ["gelu", "silu", "softplus"]


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


def _gelu_kernel(xp: Any, special: Any) -> Any:
    erf = special.erf

    def gelu(x: Any) -> Any:
        return x * (0.5 + 0.5 * erf(x * _SQRT_HALF))

    return gelu


def _gelu_grad_kernel(xp: Any, special: Any) -> Any:
    erf, exp = special.erf, xp.exp

    def gelu_grad(g: Any, x: Any) -> Any:  # g (Phi(x) + x phi(x))
        return g * (0.5 + 0.5 * erf(x * _SQRT_HALF) + x * _INV_SQRT_2PI * exp(-0.5 * x * x))

    return gelu_grad


def _gelu_fn(x: Any, *, saved: Saved | None = None) -> Any:
    wanted = saved is not None and bool(saved.wanted)
    if x.__class__ in OFF_HOST and x.dtype.kind == "f":  # one fused kernel on a GPU (each op is a launch)
        return kernel(x, "gelu", _gelu_kernel)(x)
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or x.ndim == 0:
        return 0.5 * x * (1.0 + erf(x * _SQRT_HALF))
    if x.dtype == np.float32:  # chunked, in cache: no SciPy, no scalar loop, no float64
        y, slope = gelu_f32(x, slope=wanted)
        if wanted:
            saved.values["slope"] = slope  # gelu'(x): the reverse rule is one product
        return y
    cdf = ndtr(x)
    if wanted:
        saved.values["cdf"] = cdf  # Phi(x), for the reverse rule
    return x * cdf


def _gelu_vjp(g: Any, ans: Any, x: Any, *, saved: Saved | None = None) -> Any:
    if on_values(g, x) and x.__class__ in OFF_HOST and x.dtype.kind == "f":
        return kernel(x, "gelu_grad", _gelu_grad_kernel)(g, x)
    if on_values(g, x) and isinstance(x, np.ndarray) and x.ndim and x.dtype.kind == "f":
        values = saved.values if saved is not None else {}
        slope, cdf = values.pop("slope", None), values.pop("cdf", None)  # used once, then let go
        if x.dtype == np.float32 and g.dtype == np.float32 and g.shape == x.shape:
            return times_f32(g, gelu_f32(x, slope=True)[1] if slope is None else slope)
        if x.dtype == np.float32:
            return gelu_grad_f32(x, gelu_f32(x)[1], g)
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
def _fast_silu(*xs: Any) -> bool:
    """Real floating-point NumPy arrays of one shape and dtype: the blocked kernels (ops.logistic) apply."""
    x = xs[-1]
    return all(type(a) is np.ndarray and a.dtype == x.dtype and a.shape == x.shape for a in xs) and \
        x.dtype.kind == "f" and x.ndim > 0


def _silu_fn(x: Any, *, saved: Saved | None = None) -> Any:
    if not _fast_silu(x):
        return x * sigmoid(x)
    y, s = silu_forward(x)
    if saved is not None and saved.wanted:
        saved.values["sigmoid"] = s  # for the reverse rule: 5 passes instead of recomputing the sigmoid
    return y


def _silu_vjp(g: Any, ans: Any, x: Any, *, saved: Saved | None = None) -> Any:
    s = saved.values.pop("sigmoid", None) if saved is not None else None  # used once, then let go
    if on_values(g, x) and _fast_silu(g, x):
        return silu_backward(g, x, silu_forward(x)[1] if s is None else s)
    return g * _silu_d(ans, x)


_silu = Primitive("nn.silu", _silu_fn)
_silu.defvjp(_silu_vjp)
_silu.defjvp(lambda t, ans, x, *, saved=None: t * _silu_d(ans, x))


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
    return _silu(x, saved=Saved(x))


def softplus(x: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold`` (PyTorch's linear
    tail: derivative 1 there), as ``torch.nn.functional.softplus``.

    Example:
        >>> import chainrule.nn.functional as F
        >>> round(float(F.softplus(1.0)), 4), round(float(F.softplus(1.0, beta=2.0)), 4), float(F.softplus(30.0))
        (1.3133, 1.0635, 30.0)
    """
    scaled = x if beta == 1 else _ew.multiply(x, beta)
    smooth = _ew.softplus(scaled)
    if beta != 1:
        smooth = _ew.divide(smooth, beta)
    values = raw(scaled)
    if is_batched(values):  # inside vmap: the comparison batches
        return _ew.where(values > threshold, x, smooth)
    values = as_array(values)
    at = values == threshold
    if at.any():  # PyTorch: the smooth branch's value and slope there, second derivative 0 (its double backward: <)
        scale = as_array(values.dtype.type(beta))
        slope = 1.0 / (1.0 + np.exp(-values))  # sigmoid(beta * x): the smooth branch's derivative
        line = _ew.add(_ew.multiply(_ew.subtract(x, raw(x)), slope), np.logaddexp(0.0, values) / scale)
        smooth = _ew.where(at, line, smooth)
    tail = values > threshold
    return _ew.where(tail, x, smooth) if tail.any() else smooth
