"""Gamma draws that are differentiable in their shape parameter (implicit reparameterisation, Figurnov et al.
2018, as PyTorch's ``_standard_gamma``): a draw ``x`` of Gamma(alpha, 1) moves with alpha as
``dx/dalpha = -(dF/dalpha) / f(x)``, F and f the Gamma CDF and density at the draw. ``standard_gamma_grad`` is
PyTorch's approximation of it (ATen's ``standard_gamma_grad_one``: a Taylor series for small x, Rice's saddle
point expansion for large alpha, a rational fit elsewhere), so gradients equal PyTorch's for the same draws.
Beta and Dirichlet draws are normalised Gamma draws, differentiable through them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff.primitive import Primitive
from ..core.defaults import generator
from ..core.traces import draw
from ..ops.reductions import sum as sum_
from ..ops.shape import broadcast_to
from ..tensor import Tensor
from .base import host

__all__ = ["dirichlet_rsample", "reparameterised_gamma", "standard_gamma_grad"]

# PyTorch's coefficients of its bivariate rational fit of the gradient (u = log(x / alpha), v = log(alpha))
_COEF_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07],
])


def _digamma(a: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import digamma
    except ImportError:  # pragma: no cover - SciPy is an optional dependency
        raise ImportError("Beta/Dirichlet rsample needs SciPy (its digamma): pip install 'chainrule[scipy]'") from None
    return digamma(a)


def _small_x(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """x < 0.8: the CDF's Taylor series and its derivative in alpha."""
    numer, denom = np.ones_like(a), a.copy()
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    with np.errstate(all="ignore"):
        pow_x_alpha = x**a
        pdf = x ** (a - 1) * np.exp(-x)
        cdf_alpha = (np.log(x) - _digamma(a)) * pow_x_alpha * series1 - pow_x_alpha * series2
        out = -cdf_alpha / pdf
    return np.where(np.isnan(out), 0.0, out)


def _large_alpha(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """alpha > 8: Rice's saddle point expansion (its own polynomial within 10% of alpha)."""
    with np.errstate(all="ignore"):
        near = (0.9 * a <= x) & (x <= 1.1 * a)
        numer_1 = 1 + 24 * a * (1 + 12 * a)
        numer_2 = 1440 * (a * a) + 6 * x * (53 - 120 * x) - 65 * x * x / a + a * (107 + 3600 * x)
        close = numer_1 * numer_2 / (1244160 * (a * a) * (a * a))
        denom = np.sqrt(8 * a)
        term2 = denom / (a - x)
        term3 = (x - a - a * np.log(x / a)) ** -1.5
        term23 = np.where(x < a, term2 - term3, term2 + term3)
        term1 = np.log(x / a) * term23 - np.sqrt(2 / a) * (a + x) / ((a - x) * (a - x))
        stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
        far = -stirling * x * term1 / denom
    return np.where(near, close, far)


def _rational(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    u, v = np.log(x / a), np.log(a)
    c = _COEF_UV[0][:, None] + u * (_COEF_UV[1][:, None] + u * _COEF_UV[2][:, None])  # (8, n)
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return np.exp(p / q)


def standard_gamma_grad(alpha: Any, x: Any) -> np.ndarray:
    """``dx/dalpha`` of a draw ``x`` of Gamma(alpha, 1), as PyTorch's ``torch._standard_gamma_grad`` (computed in
    float64, returned in ``x``'s dtype)."""
    dtype = np.result_type(x, np.float32)
    a, xs = (np.asarray(v, dtype=np.float64) for v in np.broadcast_arrays(alpha, x))
    a, xs = a.ravel(), xs.ravel()
    out = np.empty(a.shape, dtype=np.float64)
    small = xs < 0.8
    big = ~small & (a > 8.0)
    rest = ~small & ~big
    for where, rule in ((small, _small_x), (big, _large_alpha), (rest, _rational)):
        if where.any():
            out[where] = rule(a[where], xs[where])
    return out.reshape(np.broadcast_shapes(np.shape(alpha), np.shape(x))).astype(dtype)


def _gamma_vjp(g: Any, ans: Any, alpha: Any, x: Any) -> Any:
    return g * standard_gamma_grad(alpha, ans)


def _gamma_jvp(t: Any, ans: Any, alpha: Any, x: Any) -> Any:
    return t * standard_gamma_grad(alpha, ans)


_reparameterised = Primitive("standard_gamma_rsample", lambda alpha, x: x.copy(), register=False, reads=(0, "ans"))
_reparameterised.defvjp(_gamma_vjp, None)
_reparameterised.defjvp(_gamma_jvp, None)
_reparameterised.first_order_only = True  # (PyTorch's _standard_gamma_grad has no derivative either)


def reparameterised_gamma(alpha: Any, draws: Any) -> Any:
    """``draws`` (Gamma(alpha, 1) draws, alpha's shape) as a value differentiable in ``alpha`` through the implicit
    reparameterisation gradient."""
    return _reparameterised(alpha, draws)


def _standard_gamma(alpha: np.ndarray) -> np.ndarray:
    """Gamma(alpha, 1) draws from the default generator, at least the dtype's smallest normal number (PyTorch's
    ``_standard_gamma`` keeps draws positive: a zero would make the gradient and log-densities infinite)."""
    out = generator(None).standard_gamma(alpha)
    return np.maximum(out, np.finfo(np.float64).tiny)


def dirichlet_rsample(concentration: Any, shape: tuple[int, ...]) -> Tensor:
    """Dirichlet draws of ``shape`` (the event last), differentiable in ``concentration``: normalised Gamma draws
    of the concentration broadcast to ``shape``."""
    alpha = broadcast_to(concentration, shape) if tuple(concentration.shape) != shape else concentration
    values = np.broadcast_to(np.asarray(host(concentration), dtype=np.float64), shape)
    draws = draw(_standard_gamma, values).astype(concentration.dtype)
    draws = np.maximum(draws, np.finfo(draws.dtype).tiny)
    g = reparameterised_gamma(alpha, draws)
    return g / sum_(g, axis=-1, keepdims=True)

