"""Update rules for ``minimize``: plain gradient descent, momentum, Nesterov, Adam.

Each stepper holds its state for every start at once (arrays of shape ``(n_starts, dim)``)
and updates only the rows of the starts still running, so a start's path does not depend
on which other starts run beside it.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Stepper:
    """Base class: ``delta(rows, d, lr, t)`` is the move of the starts ``rows``.

    ``d`` is the descent gradient of those rows (the gradient of the function being
    minimised), ``lr`` the learning rate of this step, ``t`` the 1-based step number.
    """

    name = ""
    options: dict[str, Any] = {}

    def __init__(self, shape: tuple[int, ...], **options: Any) -> None:
        self.shape = shape
        for key, value in options.items():
            setattr(self, key, value)

    def delta(self, rows: np.ndarray, d: np.ndarray, lr: float, t: int) -> np.ndarray:
        raise NotImplementedError


class GradientDescent(Stepper):
    """``x <- x - lr * g``."""

    name = "gd"
    options: dict[str, Any] = {}

    def delta(self, rows: np.ndarray, d: np.ndarray, lr: float, t: int) -> np.ndarray:
        return -lr * d


class Momentum(Stepper):
    """Heavy ball (PyTorch's form): ``v <- momentum * v + g``, ``x <- x - lr * v``."""

    name = "momentum"
    options = {"momentum": 0.9}

    def __init__(self, shape: tuple[int, ...], **options: Any) -> None:
        super().__init__(shape, **options)
        if not 0.0 <= self.momentum < 1.0:
            raise ValueError(f"minimize: {self.name} momentum must lie in [0, 1), got {self.momentum!r}")
        self.v = np.zeros(shape)

    def delta(self, rows: np.ndarray, d: np.ndarray, lr: float, t: int) -> np.ndarray:
        v = self.momentum * self.v[rows] + d
        self.v[rows] = v
        return -lr * v


class Nesterov(Momentum):
    """Nesterov momentum (PyTorch's form): ``v <- momentum * v + g``, ``x <- x - lr * (g + momentum * v)``.

    Equivalent to taking the gradient at the look-ahead point, with one gradient per step
    taken at the current position (so the recorded trajectory stays consistent).
    """

    name = "nesterov"

    def delta(self, rows: np.ndarray, d: np.ndarray, lr: float, t: int) -> np.ndarray:
        v = self.momentum * self.v[rows] + d
        self.v[rows] = v
        return -lr * (d + self.momentum * v)


class Adam(Stepper):
    """Adam with bias correction (Kingma & Ba): steps of about ``lr`` per coordinate."""

    name = "adam"
    options = {"betas": (0.9, 0.999), "eps": 1e-8}

    def __init__(self, shape: tuple[int, ...], **options: Any) -> None:
        super().__init__(shape, **options)
        b1, b2 = self.betas
        if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0):
            raise ValueError(f"minimize: adam betas must lie in [0, 1), got {self.betas!r}")
        self.m = np.zeros(shape)
        self.v = np.zeros(shape)

    def delta(self, rows: np.ndarray, d: np.ndarray, lr: float, t: int) -> np.ndarray:
        b1, b2 = self.betas
        m = b1 * self.m[rows] + (1.0 - b1) * d
        v = b2 * self.v[rows] + (1.0 - b2) * d * d
        self.m[rows], self.v[rows] = m, v
        m_hat = m / (1.0 - b1**t)
        v_hat = v / (1.0 - b2**t)
        return -lr * m_hat / (np.sqrt(v_hat) + self.eps)


METHODS: dict[str, type[Stepper]] = {cls.name: cls for cls in (GradientDescent, Momentum, Nesterov, Adam)}
DEFAULT_LR = {"gd": 1e-2, "momentum": 1e-2, "nesterov": 1e-2, "adam": 1e-3}


def make(method: str, shape: tuple[int, ...], options: dict[str, Any]) -> Stepper:
    """The stepper for ``method`` with its options checked against the ones it takes."""
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"minimize: unknown method {method!r}; choose one of {', '.join(map(repr, METHODS))}")
    cls = METHODS[method]
    unknown = sorted(set(options) - set(cls.options))
    if unknown:
        takes = ", ".join(cls.options) or "none"
        raise TypeError(f"minimize: method {method!r} takes no option {unknown[0]!r} (its options: {takes})")
    return cls(shape, **{**cls.options, **options})
