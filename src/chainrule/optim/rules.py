"""The update rules, as plain functions on NumPy arrays: one SGD (momentum, Nesterov) and one Adam.

Both callers use them: the optimisers of :mod:`chainrule.optim` (one parameter array at a
time) and the steppers of :func:`chainrule.optimize.minimize` (the rows of the starts still
running). Each function moves ``p`` in place and updates the state arrays it is given in
place, in PyTorch's order of operations (``torch.optim.SGD``/``Adam``/``AdamW`` with
``foreach=False``), so a float64 run agrees with PyTorch to the last bit or nearly.

Example:
    >>> import numpy as np
    >>> p, g = np.array([1.0, -2.0]), np.array([0.5, 0.5])
    >>> buf = sgd(p, g, None, lr=0.1, momentum=0.9)  # the first step starts the momentum buffer at g
    >>> p.tolist(), buf.tolist()
    ([0.95, -2.05], [0.5, 0.5])
    >>> m, v = np.zeros(2), np.zeros(2)
    >>> adam(p, g, m, v, step=1, lr=0.1)  # Adam's first step moves each entry by about lr
    >>> np.round(p, 6).tolist()
    [0.85, -2.15]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.device import kernel
from ._kernels import axpy

__all__ = ["sgd", "adam"]


def sgd(
    p: np.ndarray,
    g: np.ndarray,
    buf: np.ndarray | None,
    lr: float,
    momentum: float = 0.0,
    dampening: float = 0.0,
    nesterov: bool = False,
    weight_decay: float = 0.0,
) -> np.ndarray | None:
    """One SGD step on ``p`` in place; returns the momentum buffer (``None`` without momentum).

    ``buf`` is the buffer of the previous step, or ``None`` on the first one (the buffer then
    starts as a copy of the gradient, undamped, as PyTorch). ``g`` is never written to.
    Rule: ``g += weight_decay * p``; ``buf = momentum * buf + (1 - dampening) * g``;
    ``p -= lr * (g + momentum * buf if nesterov else buf)``.
    """
    if momentum == 0 and weight_decay == 0:  # plain SGD (the common small-model case): one update, no state
        axpy(-lr, g, p)
        return None
    if weight_decay != 0:
        g = g + weight_decay * p
    if momentum != 0:
        if buf is None:
            buf = np.copy(g)  # an array even for a 0-d parameter (whose g + wd * p NumPy makes a scalar)
        else:
            buf *= momentum
            axpy(1 - dampening, g, buf)
        g = g + momentum * buf if nesterov else buf
    axpy(-lr, g, p)
    return buf


def adam(
    p: np.ndarray,
    g: np.ndarray,
    exp_avg: np.ndarray,
    exp_avg_sq: np.ndarray,
    step: int,
    lr: float,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    decoupled: bool = False,
    max_exp_avg_sq: np.ndarray | None = None,
) -> None:
    """One Adam step on ``p`` in place (``step`` counts from 1); the moment arrays are updated in place.

    ``weight_decay`` is L2 (added to the gradient), or decoupled (``p *= 1 - lr * weight_decay``
    first: AdamW) when ``decoupled``. Passing ``max_exp_avg_sq`` turns on AMSGrad (the running
    maximum of the second moment is used). ``g`` is never written to.
    """
    b1, b2 = betas
    if p.__class__ is not np.ndarray and max_exp_avg_sq is None:  # a device's arrays: one kernel, not fourteen
        decay = "none" if weight_decay == 0 else "decoupled" if decoupled else "l2"
        factor = 1 - lr * weight_decay if decoupled else weight_decay
        kernel(p, f"adam_{decay}", _adam_kernel(decay))(p, g, exp_avg, exp_avg_sq, factor, 1 - b1, b2, 1 - b2,
                                                       math.sqrt(1 - b2**step), eps, -(lr / (1 - b1**step)))
        return
    if weight_decay != 0:
        if decoupled:
            p *= 1 - lr * weight_decay
        else:
            g = g + weight_decay * p
    axpy(1 - b1, g - exp_avg, exp_avg)  # exp_avg.lerp_(g, 1 - b1)
    exp_avg_sq *= b2
    axpy(1 - b2, g * g, exp_avg_sq)
    bias_correction1 = 1 - b1**step
    bias_correction2_sqrt = math.sqrt(1 - b2**step)
    second = exp_avg_sq
    if max_exp_avg_sq is not None:
        np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        second = max_exp_avg_sq
    denom = np.sqrt(second)
    denom /= bias_correction2_sqrt
    denom += eps
    axpy(-(lr / bias_correction1), exp_avg / denom, p)


def _adam_kernel(decay: str) -> Any:
    """:func:`adam`'s arithmetic, operation for operation, as one elementwise function updating ``p`` and the
    moments in place (one launch on a GPU); ``decay`` says what ``factor`` is: unused, the decoupled
    ``1 - lr * weight_decay``, or the L2 ``weight_decay``."""

    def make(xp: Any, special: Any) -> Any:
        def step(p: Any, g: Any, m: Any, v: Any, factor: float, c1: float, b2: float, c2: float,
                 bias_correction2_sqrt: float, eps: float, rate: float) -> None:
            if decay == "decoupled":
                p *= factor
            elif decay == "l2":
                g = g + factor * p
            m += c1 * (g - m)
            v *= b2
            v += c2 * (g * g)
            p += rate * (m / (xp.sqrt(v) / bias_correction2_sqrt + eps))

        return step

    return make
