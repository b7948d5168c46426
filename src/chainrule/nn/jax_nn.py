"""``jax.nn``'s functions with JAX's names and signatures, as ``chainrule.nn.relu``, ``chainrule.nn.softmax``, ...

JAX users write ``jax.nn.gelu(x)`` (the tanh approximation by default), ``jax.nn.softmax(x, axis=-1)``,
``jax.nn.one_hot(labels, 10)``; PyTorch users ``torch.nn.functional``. Both spellings are here: PyTorch's in
``chainrule.nn.functional``, JAX's in ``chainrule.nn`` (``torch.nn`` itself has no lowercase functions, so the two
never collide). Each is the ``nn.functional`` op with JAX's defaults; they take NumPy arrays (as JAX arrays) and
Tensors, inside ``grad``, ``vmap`` and ``jit`` as outside.

Example:
    >>> import numpy as np, chainrule as cr
    >>> np.round(cr.nn.softmax(np.array([0.0, np.log(3.0)])), 3)
    array([0.25, 0.75])
    >>> cr.grad(lambda x: cr.nn.relu(x).sum())(np.array([-1.0, 0.0, 2.0]))
    array([0., 0., 1.])
    >>> cr.nn.one_hot(np.array([2, 0]), 3)
    array([[0., 0., 1.],
           [1., 0., 0.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import reductions
from ..ops.elementwise import (
    relu,
    sigmoid,
    softplus,  # log(1 + exp(x)), the op itself (JAX's has no beta)
    tanh,
)
from . import functional as F
from .functional.activations import silu
from .functional.extras import hardsigmoid, hardswish, logsigmoid, mish, relu6

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity", "leaky_relu",
    "log_sigmoid", "log_softmax", "logsumexp", "mish", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu",
    "soft_sign", "softmax", "softplus", "squareplus", "standardize", "swish", "tanh",
]

# the same functions as nn.functional's (without PyTorch's inplace flag), with the same derivatives at their kinks
# (relu'(0) = 0, as JAX's)
swish = silu
hard_sigmoid, hard_silu, log_sigmoid = hardsigmoid, hardswish, logsigmoid
hard_swish = hard_silu


def identity(x: Any) -> Any:
    """``x`` itself (``jax.nn.identity``)."""
    return x


# the ones below are written as JAX writes them (np.where of the pieces), so that their derivatives at the kinks
# are JAX's where they differ from PyTorch's (leaky_relu'(0) = 1, hard_tanh'(1) = 1, elu''(0) = alpha, celu, soft_sign)
def elu(x: Any, alpha: float = 1.0) -> Any:
    """``x`` above 0, ``alpha * (exp(x) - 1)`` below."""
    return np.where(x > 0, x, alpha * np.expm1(np.where(x > 0, 0.0, x)))


def selu(x: Any) -> Any:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    return 1.0507009873554804934193349852946 * elu(x, 1.6732632423543772848170429916717)


def celu(x: Any, alpha: float = 1.0) -> Any:
    """``max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)`` (at 0, max and min share the slope, as JAX's)."""
    upper = np.where(x > 0, x, np.where(x < 0, 0.0, 0.5 * x))
    lower = np.where(x < 0, x, np.where(x > 0, 0.0, 0.5 * x))
    return upper + alpha * np.expm1(lower / alpha)


def leaky_relu(x: Any, negative_slope: float = 1e-2) -> Any:
    """``x`` from 0 up, ``negative_slope * x`` below."""
    return np.where(x >= 0, x, negative_slope * x)


def soft_sign(x: Any) -> Any:
    """``x / (|x| + 1)`` (``|x|``'s slope at 0 is 1, JAX's)."""
    return x / (np.where(x >= 0, x, -x) + 1)


def gelu(x: Any, approximate: bool = True) -> Any:
    """GELU; JAX's default is the tanh approximation (``approximate=False``: the exact one, with erf)."""
    return F.gelu(x, approximate="tanh" if approximate else "none")


def hard_tanh(x: Any) -> Any:
    """``x`` clipped to [-1, 1]."""
    return np.where(x > 1, 1.0, np.where(x < -1, -1.0, x))


def squareplus(x: Any, b: float = 4.0) -> Any:
    """``(x + sqrt(x**2 + b)) / 2``, a smooth ReLU."""
    return (x + np.sqrt(x * x + b)) / 2


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """``exp(x) / sum(exp(x))`` along ``axis`` (JAX's default: the last); ``where``: the entries that count
    (the others get 0)."""
    if where is None:
        return F.softmax(x, axis=axis)
    shifted = np.where(where, x, -np.inf)
    return np.where(where, F.softmax(shifted, axis=axis), 0.0)


def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """``x - logsumexp(x)`` along ``axis`` (JAX's default: the last)."""
    if where is None:
        return F.log_softmax(x, axis=axis)
    shifted = np.where(where, x, -np.inf)
    return np.where(where, F.log_softmax(shifted, axis=axis), -np.inf)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis`` (every axis when None), as ``jax.nn.logsumexp``."""
    if b is None:
        return reductions.logsumexp(a, axis=axis, keepdims=keepdims)
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    total = np.log(np.sum(b * np.exp(a - top), axis=axis, keepdims=True)) + top
    return total if keepdims else np.squeeze(total, axis=axis)


def glu(x: Any, axis: int = -1) -> Any:
    """The first half of ``x`` along ``axis`` gated by the sigmoid of the second half."""
    return F.glu(x, axis)


def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None, epsilon: float = 1e-5) -> Any:
    """``(x - mean) / sqrt(variance + epsilon)`` along ``axis`` (computed where not given), as JAX's."""
    if mean is None:
        mean = np.mean(x, axis=axis, keepdims=True)
    if variance is None:
        variance = np.mean(x * x, axis=axis, keepdims=True) - mean * mean
    return (x - mean) / np.sqrt(variance + epsilon)


def one_hot(x: Any, num_classes: int, *, dtype: Any = np.float64, axis: int = -1) -> Any:
    """Float one-hot vectors of the integer ``x`` along a new ``axis`` (JAX's: an index outside
    ``[0, num_classes)`` gives a row of zeros; no gradient)."""
    hot = np.expand_dims(x, -1) == np.arange(int(num_classes))
    return np.moveaxis(hot.astype(dtype), -1, axis)
