"""PyTorch's ``torch.distributions.constraints``: what a parameter or a value must satisfy.

Each constraint checks raw arrays (``check(array)`` gives a boolean array over the batch: one entry per
value of ``event_dim`` trailing dimensions) and prints as PyTorch's does, for the error messages.

Example:
    >>> import numpy as np
    >>> from chainrule.distributions import constraints
    >>> constraints.positive.check(np.array([1.0, -1.0])).tolist(), constraints.positive
    ([True, False], GreaterThan(lower_bound=0.0))
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "Constraint", "boolean", "dependent", "greater_than", "greater_than_eq", "half_open_interval", "independent",
    "integer_interval", "interval", "lower_cholesky", "nonnegative", "nonnegative_integer", "one_hot", "positive",
    "positive_definite", "real", "real_vector", "simplex", "unit_interval",
]


class Constraint:
    """A set of values: ``check(array)`` says which are in it (over all but the last ``event_dim`` dims)."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Any) -> np.ndarray:
        """Which values satisfy the constraint (a boolean array of the batch shape)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """A constraint that depends on other parameters (``Uniform``'s bounds): not checked on its own."""

    def check(self, value: Any) -> np.ndarray:
        raise ValueError("Cannot determine validity of dependent constraint")


class _Real(Constraint):
    def check(self, value: Any) -> np.ndarray:
        return value == value  # not NaN


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Any) -> np.ndarray:
        return (value == 0) | (value == 1)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: float, strict: bool = True) -> None:
        self.lower_bound, self.strict = lower_bound, strict

    def check(self, value: Any) -> np.ndarray:
        return value > self.lower_bound if self.strict else value >= self.lower_bound

    def __repr__(self) -> str:
        return f"{'GreaterThan' if self.strict else 'GreaterThanEq'}(lower_bound={self.lower_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: float, upper_bound: float, half_open: bool = False) -> None:
        self.lower_bound, self.upper_bound, self.half_open = lower_bound, upper_bound, half_open

    def check(self, value: Any) -> np.ndarray:
        upper = value < self.upper_bound if self.half_open else value <= self.upper_bound
        return (self.lower_bound <= value) & upper

    def __repr__(self) -> str:
        name = "HalfOpenInterval" if self.half_open else "Interval"
        return f"{name}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: int, upper_bound: int | None) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Any) -> np.ndarray:
        ok = (value % 1 == 0) & (self.lower_bound <= value)
        return ok if self.upper_bound is None else ok & (value <= self.upper_bound)

    def __repr__(self) -> str:
        if self.upper_bound is None:
            return f"IntegerGreaterThan(lower_bound={self.lower_bound})"
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Any) -> np.ndarray:
        return np.all(value >= 0, axis=-1) & (np.abs(value.sum(-1) - 1) < 1e-6)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Any) -> np.ndarray:
        return np.all((value == 0) | (value == 1), axis=-1) & (value.sum(-1) == 1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Any) -> np.ndarray:
        lower = np.all(np.tril(value) == value, axis=(-2, -1))
        return lower & np.all(np.diagonal(value, axis1=-2, axis2=-1) > 0, axis=-1)


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value: Any) -> np.ndarray:
        value = np.asarray(value)
        symmetric = np.all(np.isclose(value, np.swapaxes(value, -2, -1), atol=1e-6), axis=(-2, -1))
        flat = value.reshape((-1,) + value.shape[-2:])
        definite = np.array([_has_cholesky(m) for m in flat], dtype=bool).reshape(value.shape[:-2])
        return symmetric & definite


def _has_cholesky(m: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(m)
    except np.linalg.LinAlgError:
        return False
    return True


class _Independent(Constraint):
    """``base`` over ``reinterpreted_batch_ndims`` more trailing dimensions (all must satisfy it)."""

    def __init__(self, base: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint, self.reinterpreted_batch_ndims = base, reinterpreted_batch_ndims
        self.is_discrete = base.is_discrete
        self.event_dim = base.event_dim + reinterpreted_batch_ndims

    def check(self, value: Any) -> np.ndarray:
        ok = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        return np.all(ok, axis=tuple(range(-n, 0))) if n else ok

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


dependent = _Dependent()
real = _Real()
real_vector = _Independent(real, 1)
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThan(0.0, strict=False)
unit_interval = _Interval(0.0, 1.0)
nonnegative_integer = _IntegerInterval(0, None)
simplex = _Simplex()
one_hot = _OneHot()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
independent = _Independent
integer_interval = _IntegerInterval


def greater_than(lower_bound: float) -> Constraint:
    """Values above ``lower_bound``."""
    return _GreaterThan(lower_bound)


def greater_than_eq(lower_bound: float) -> Constraint:
    """Values at or above ``lower_bound``."""
    return _GreaterThan(lower_bound, strict=False)


def interval(lower_bound: float, upper_bound: float) -> Constraint:
    """Values in ``[lower_bound, upper_bound]``."""
    return _Interval(lower_bound, upper_bound)


def half_open_interval(lower_bound: float, upper_bound: float) -> Constraint:
    """Values in ``[lower_bound, upper_bound)``."""
    return _Interval(lower_bound, upper_bound, half_open=True)
