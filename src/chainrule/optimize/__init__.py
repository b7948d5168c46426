"""Gradient-based optimisation of plain NumPy functions, many starts at once.

``minimize(f, x0, method=...)`` runs gradient descent, momentum, Nesterov or Adam from one
start or from a whole array of starts in one vectorised run, and returns the final points
with their trajectories (positions, values, gradients).

Example:
    >>> import numpy as np
    >>> from chainrule.optimize import minimize
    >>> L = lambda x: x[1] * (x[0] + x[1]) * (x[0] - x[1])  # f(a, b) = b(a + b)(a - b)
    >>> r = minimize(L, np.array([1.0, 2.0]), lr=0.01, steps=1)
    >>> r.trajectory.values.round(6).tolist()
    [-6.0, -7.449355]
"""

from __future__ import annotations

from ._batch import CONTRACT, batch_value_and_grad
from .driver import DivergenceError, minimize
from .result import OptimizeResult, Trajectory
from .steppers import METHODS

__all__ = ["minimize", "OptimizeResult", "Trajectory", "DivergenceError", "METHODS", "CONTRACT", "batch_value_and_grad"]
