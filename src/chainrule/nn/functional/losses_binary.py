"""``binary_cross_entropy`` as PyTorch computes it, with PyTorch's derivative formulas to second order.

PyTorch's backward is ``(p - y) / max(p (1 - p), 1e-12f)`` and its double backward
``(p**2 - 2 p y + y) / ((p + 1e-12)**2 (1 - p + 1e-12)**2)``: not the exact second derivative
``(p**2 - 2 p y + y) / (p (1 - p))**2``, and far from it where ``p`` or ``1 - p`` is below about 1e-6 (a
saturated sigmoid). Two primitives replay them: the loss, whose derivative in ``p`` is the second, the
gradient, whose derivative in ``p`` is PyTorch's double backward. Derivatives in the target: ``-logit(p)``
and ``-1 / max(p (1 - p), 1e-12)``, as PyTorch's.

Example:
    >>> import numpy as np
    >>> from chainrule.nn.functional.losses_binary import bce_terms
    >>> bce_terms(np.array([0.5, 1.0]), np.array([1.0, 0.0]))
    array([  0.69314718, 100.        ])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autodiff.primitive import Primitive

_CLAMP_EPS = float(np.float32(1e-12))  # the backward's clamp of p (1 - p): PyTorch's float constant 1e-12f
_SHIFT_EPS = 1e-12  # the double backward adds this (a double) to p and 1 - p


def _loss(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):  # log(0) = -inf, then clamped at -100 as PyTorch's
        return (y - 1) * np.maximum(np.log1p(-p), -100.0) - y * np.maximum(np.log(p), -100.0)


def _gradient(p: Any, y: Any) -> Any:
    return (p - y) / np.maximum(p * (1 - p), _CLAMP_EPS)


def _curvature(p: Any, y: Any) -> Any:
    return (p * p - 2 * p * y + y) / ((p + _SHIFT_EPS) ** 2 * (1 - p + _SHIFT_EPS) ** 2)


def _minus_logit(p: Any) -> Any:
    with np.errstate(divide="ignore"):
        return np.log1p(-p) - np.log(p)


def _cross(p: Any) -> Any:
    return -1.0 / np.maximum(p * (1 - p), _SHIFT_EPS)


_bce_gradient = Primitive("nn.binary_cross_entropy_gradient", _gradient)
_bce_gradient.defvjp(lambda g, ans, p, y: g * _curvature(p, y), lambda g, ans, p, y: g * _cross(p))
_bce_gradient.defjvp(lambda t, ans, p, y: t * _curvature(p, y), lambda t, ans, p, y: t * _cross(p))

bce_terms = Primitive("nn.binary_cross_entropy", _loss)
bce_terms.defvjp(lambda g, ans, p, y: g * _bce_gradient(p, y), lambda g, ans, p, y: g * _minus_logit(p))
bce_terms.defjvp(lambda t, ans, p, y: t * _bce_gradient(p, y), lambda t, ans, p, y: t * _minus_logit(p))
