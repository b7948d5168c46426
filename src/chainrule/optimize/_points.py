"""Values and gradients of a one-point function at many points, through ``vmap``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..batching import vmap
from ..transforms import value_and_grad


def per_point_value_and_grad(
    f: Callable[[Any], Any], who: str
) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``points -> (f at each point, gradient at each point)`` for ``f`` written for one point.

    ``points`` has shape ``(n, dim)`` (or ``(n,)`` for a function of one number); each point is
    evaluated exactly as it would be alone (``vmap``: whole-array calls, no loop, no mixing).

    Example:
        >>> import numpy as np
        >>> t = np.array([1.0, 2.0])
        >>> v, g = per_point_value_and_grad(lambda x: np.sum((x - t) ** 2), "demo")(np.array([[0.0, 0.0], [1.0, 3.0]]))
        >>> v.tolist(), g.tolist()
        ([5.0, 1.0], [[-2.0, -4.0], [0.0, 2.0]])
    """

    def one_point(x: Any) -> Any:
        out = f(x)
        shape = np.shape(out)
        if int(np.prod(shape, dtype=int)) != 1:
            raise ValueError(
                f"{who}: f must return one number for one point x of shape {np.shape(x)}, got shape {shape}"
            )
        return out.reshape(()) if shape else out

    batched = vmap(value_and_grad(one_point))

    def evaluate(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v, g = batched(points)
        return np.asarray(v, dtype=float).reshape(len(points)), np.asarray(g, dtype=float).reshape(points.shape)

    return evaluate
