"""Update rules for ``minimize``: plain gradient descent, momentum, Nesterov, Adam.

The arithmetic is :mod:`chainrule.optim.rules`, the same functions the optimisers of
``chainrule.optim`` use (PyTorch's update rules). Each stepper holds its state for every
start at once (arrays of shape ``(n_starts, dim)``) and updates only the rows of the starts
still running, so a start's path does not depend on which other starts run beside it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..optim import rules


class Stepper:
    """Base class: ``step(rows, x, d, lr, t)`` moves the points ``x`` of the starts ``rows`` in place.

    ``d`` is the descent gradient of those rows (the gradient of the function being
    minimised), ``lr`` the learning rate of this step, ``t`` the 1-based step number (every
    running start took the same number of steps: starts only ever stop).
    """

    name = ""
    options: dict[str, Any] = {}

    def __init__(self, shape: tuple[int, ...], **options: Any) -> None:
        self.shape = shape
        for key, value in options.items():
            setattr(self, key, value)

    def step(self, rows: np.ndarray, x: np.ndarray, d: np.ndarray, lr: float, t: int) -> None:
        raise NotImplementedError

    def delta(self, rows: np.ndarray, d: np.ndarray, lr: float, t: int) -> np.ndarray:
        """The move of the starts ``rows`` (their state advances as by ``step``)."""
        x = np.zeros_like(d)
        self.step(rows, x, d, lr, t)
        return x

    def _rows(self, state: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The state of ``rows``: the array itself when every start still runs (no copy), else a copy."""
        return state if len(rows) == len(state) else state[rows]


class GradientDescent(Stepper):
    """``x <- x - lr * g``."""

    name = "gd"
    options: dict[str, Any] = {}

    def step(self, rows: np.ndarray, x: np.ndarray, d: np.ndarray, lr: float, t: int) -> None:
        rules.sgd(x, d, None, lr)


class Momentum(Stepper):
    """Heavy ball (PyTorch's form): ``v <- momentum * v + g``, ``x <- x - lr * v``."""

    name = "momentum"
    options = {"momentum": 0.9}
    nesterov = False

    def __init__(self, shape: tuple[int, ...], **options: Any) -> None:
        super().__init__(shape, **options)
        if not 0.0 <= self.momentum < 1.0:
            raise ValueError(f"minimize: {self.name} momentum must lie in [0, 1), got {self.momentum!r}")
        self.v = np.zeros(shape)

    def step(self, rows: np.ndarray, x: np.ndarray, d: np.ndarray, lr: float, t: int) -> None:
        if self.momentum == 0:
            rules.sgd(x, d, None, lr)
            return
        v = rules.sgd(x, d, None if t == 1 else self._rows(self.v, rows), lr, self.momentum, nesterov=self.nesterov)
        if v is not self.v:
            self.v[rows] = v


class Nesterov(Momentum):
    """Nesterov momentum (PyTorch's form): ``v <- momentum * v + g``, ``x <- x - lr * (g + momentum * v)``.

    Equivalent to taking the gradient at the look-ahead point, with one gradient per step
    taken at the current position (so the recorded trajectory stays consistent).
    """

    name = "nesterov"
    nesterov = True


class Adam(Stepper):
    """Adam with bias correction (Kingma & Ba, PyTorch's form): steps of about ``lr`` per coordinate."""

    name = "adam"
    options = {"betas": (0.9, 0.999), "eps": 1e-8}

    def __init__(self, shape: tuple[int, ...], **options: Any) -> None:
        super().__init__(shape, **options)
        b1, b2 = self.betas
        if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0):
            raise ValueError(f"minimize: adam betas must lie in [0, 1), got {self.betas!r}")
        self.m = np.zeros(shape)
        self.v = np.zeros(shape)

    def step(self, rows: np.ndarray, x: np.ndarray, d: np.ndarray, lr: float, t: int) -> None:
        m, v = self._rows(self.m, rows), self._rows(self.v, rows)
        rules.adam(x, d, m, v, t, lr, (float(self.betas[0]), float(self.betas[1])), self.eps)
        if m is not self.m:
            self.m[rows], self.v[rows] = m, v


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
