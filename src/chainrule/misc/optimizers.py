"""HIPS autograd's ``autograd.misc.optimizers``: ``sgd`` (with momentum), ``rmsprop`` and ``adam``, each
``optimizer(grad, x0, callback=None, num_iters=..., step_size=..., ...)`` with ``grad(x, i)`` the gradient at
iteration ``i`` and ``callback(x, i, g)`` called before each step. ``x0`` may be any pytree (dicts, lists, tuples
of arrays): the optimiser works on it flattened, and hands back the result and the callback's ``x`` and ``g`` in
``x0``'s structure.

Example:
    >>> import numpy as np
    >>> from chainrule import grad
    >>> from chainrule.misc.optimizers import sgd
    >>> x = sgd(grad(lambda x, i: np.sum((x - 1.0) ** 2)), np.zeros(3), num_iters=500, step_size=0.1)
    >>> np.round(x, 4).tolist()
    [1.0, 1.0, 1.0]
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .flatten import flatten

__all__ = ["adam", "rmsprop", "sgd"]


def _on_pytrees(optimize: Callable[..., Any]) -> Callable[..., Any]:
    """``optimize`` written for one vector, run on a pytree ``x0`` (autograd's ``unflatten_optimizer``)."""

    @functools.wraps(optimize)
    def run(grad: Callable[[Any, int], Any], x0: Any, callback: Callable[..., Any] | None = None, *args: Any,
            **kwargs: Any) -> Any:
        if not callable(grad):
            raise TypeError(f"{optimize.__name__}: grad must be a function grad(x, i) giving the gradient at "
                            f"iteration i (e.g. chainrule.grad(objective) for objective(x, i)), got "
                            f"{type(grad).__name__}")
        x, unflatten = flatten(x0)
        x = np.asarray(x, dtype=np.float64)
        flat_grad = lambda v, i: np.asarray(flatten(grad(unflatten(v), i))[0], dtype=np.float64)
        flat_callback = None if callback is None else lambda v, i, g: callback(unflatten(v), i, unflatten(g))
        return unflatten(optimize(flat_grad, x, flat_callback, *args, **kwargs))

    return run


@_on_pytrees
def sgd(grad: Callable[..., Any], x: Any, callback: Callable[..., Any] | None = None, num_iters: int = 200,
        step_size: float = 0.1, mass: float = 0.9) -> Any:
    """Gradient descent with momentum: ``velocity = mass * velocity - (1 - mass) * g; x += step_size * velocity``."""
    velocity = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback is not None:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@_on_pytrees
def rmsprop(grad: Callable[..., Any], x: Any, callback: Callable[..., Any] | None = None, num_iters: int = 100,
            step_size: float = 0.1, gamma: float = 0.9, eps: float = 1e-8) -> Any:
    """Root mean square propagation (the running mean of ``g**2`` starts at 1, as autograd's)."""
    avg_sq_grad = np.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback is not None:
            callback(x, i, g)
        avg_sq_grad = avg_sq_grad * gamma + g**2 * (1 - gamma)
        x = x - step_size * g / (np.sqrt(avg_sq_grad) + eps)
    return x


@_on_pytrees
def adam(grad: Callable[..., Any], x: Any, callback: Callable[..., Any] | None = None, num_iters: int = 100,
         step_size: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Any:
    """Adam (Kingma and Ba), with bias-corrected moments."""
    m = np.zeros(len(x))
    v = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback is not None:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g**2 + b2 * v
        m_hat = m / (1 - b1 ** (i + 1))
        v_hat = v / (1 - b2 ** (i + 1))
        x = x - step_size * m_hat / (np.sqrt(v_hat) + eps)
    return x
