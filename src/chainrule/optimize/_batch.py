"""Evaluate a one-point function and its gradient for many points in one vectorised call.

The contract: ``f`` is written for ONE point ``x`` of shape ``(dim,)`` using ``x[i]`` and
elementwise NumPy operations, e.g. ``lambda x: (1 - x[0])**2 + 100*(x[1] - x[0]**2)**2``.
Called with the batch transposed, ``X`` of shape ``(dim, *batch)``, ``X[i]`` is the array of the
i-th coordinates of every point, so the same code returns one value per point (shape ``batch``).
The gradient of ``sum(f(X))`` with respect to ``X`` is then every point's gradient at once:
the points do not interact, so the sum decouples them.

For a function of one number (``f(x) = x**3 - 10*x**2``), ``X`` simply holds one value per point.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..scalar import Scalar
from ..tensor import Tensor

CONTRACT = (
    "f must be written for one point, using x[i] and elementwise NumPy operations "
    "(e.g. np.sum(x**2, axis=0), not np.sum(x**2)); it is then evaluated for all points in one call"
)


def _plain(value: Any) -> np.ndarray:
    if isinstance(value, Tensor):
        return value.data
    if isinstance(value, Scalar):
        return np.asarray(value.data)
    return np.asarray(value, dtype=float)


def batch_value_and_grad(
    f: Callable[[Any], Any], X: np.ndarray, batch: tuple[int, ...], who: str
) -> tuple[np.ndarray, np.ndarray]:
    """``(f(X), d sum(f(X)) / dX)``: values of shape ``batch``, gradients of the shape of ``X``.

    ``X`` has shape ``(dim, *batch)`` (a vector function) or ``batch`` (a function of one number).

    Example:
        >>> import numpy as np
        >>> X = np.array([[1.0, 2.0], [3.0, 4.0]])  # two points, (1, 3) and (2, 4)
        >>> v, g = batch_value_and_grad(lambda x: x[0] * x[1], X, (2,), "demo")
        >>> v.tolist(), g.tolist()
        ([3.0, 8.0], [[3.0, 4.0], [1.0, 2.0]])
    """
    from ..transforms import value_and_grad

    n = int(np.prod(batch, dtype=int))

    def total(x: Any) -> Any:
        out = f(x)
        raw = out.data if isinstance(out, (Tensor, Scalar)) else out
        shape = np.shape(raw)
        constant = not (isinstance(out, Tensor) and out._rg)
        if shape != batch and not (np.size(raw) == 1 and (n == 1 or constant)):
            got = "one number" if shape == () else f"shape {shape}"
            raise ValueError(
                f"{who}: f returned {got} for {n} points passed as x of shape {X.shape}, "
                f"expected shape {batch}; {CONTRACT}"
            )
        return (out.sum() if isinstance(out, Tensor) else np.sum(raw)), out

    try:
        (_, out), g = value_and_grad(total, has_aux=True)(X)
    except IndexError as e:
        raise IndexError(f"{who}: f indexed x of shape {X.shape} out of range ({e}); {CONTRACT}") from None
    values = np.array(np.broadcast_to(_plain(out), batch), dtype=float)
    return values, np.asarray(g, dtype=float).reshape(X.shape)
