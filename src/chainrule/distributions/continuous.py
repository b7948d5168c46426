"""The scalar continuous families: ``Normal``, ``Uniform``, ``Exponential``, ``Laplace`` (PyTorch's formulas)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.defaults import generator
from ..core.traces import draw
from ..ops.elementwise import abs as absolute
from ..ops.elementwise import clip, erf, exp, expm1, log, log1p, reciprocal, sign, where
from ..tensor import Tensor
from . import constraints
from .base import LOG_SQRT_2PI, Distribution, broadcast_all, checkable, describe, host, is_value

__all__ = ["Exponential", "Laplace", "Normal", "Uniform"]


def _drawn(method: str, shape: tuple[int, ...], dtype: Any, args: tuple[Any, ...] = ()) -> np.ndarray:
    """Draws of the default generator (``manual_seed``'s), told to a jit trace so that a replay draws afresh."""
    return draw(lambda m, a, s, d: np.asarray(getattr(generator(None), m)(*a, size=s)).astype(d),
                method, args, shape, np.dtype(dtype))


def noise(method: str, shape: tuple[int, ...], like: Tensor, args: tuple[Any, ...] = ()) -> Tensor:
    """A Tensor of draws of ``shape`` in the dtype of ``like`` (outside the graph)."""
    return Tensor._wrap(_drawn(method, shape, like.dtype, args))


class _LocationScale(Distribution):
    """A family on the real line by ``loc`` and ``scale`` (> 0), symmetric about ``loc`` (its mean and mode)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc


class Normal(_LocationScale):
    """The normal (Gaussian) distribution with mean ``loc`` and standard deviation ``scale``.

    Example:
        >>> import chainrule as cr
        >>> from chainrule.distributions import Normal
        >>> mu = cr.tensor(0.5, requires_grad=True)
        >>> Normal(mu, 1.0).log_prob(1.5).backward()
        >>> float(mu.grad)
        1.0
    """

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale**2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = noise("standard_normal", self._extended_shape(sample_shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        value = self._as_value(value)
        return -((value - self.loc) ** 2) / (2 * self.scale**2) - log(self.scale) - LOG_SQRT_2PI

    def cdf(self, value: Any) -> Tensor:
        value = self._as_value(value)
        return 0.5 * (1 + erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value: Any) -> Tensor:
        value = _probability(self, value)
        return self.loc + self.scale * _erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + LOG_SQRT_2PI + log(self.scale)


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``.

    Example:
        >>> from chainrule.distributions import Uniform
        >>> d = Uniform(0.0, 4.0)
        >>> float(d.entropy()), float(d.cdf(1.0)), float(d.mean)
        (1.3862943649291992, 0.25, 2.0)
    """

    arg_constraints = {"low": constraints.dependent, "high": constraints.dependent}
    has_rsample = True

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        check = validate_args if validate_args is not None else self._validate_args
        if check and checkable(self.low) and checkable(self.high) and not np.all(host(self.low) < host(self.high)):
            raise ValueError(f"Uniform is not defined when low >= high: got low {host(self.low)} and high "
                             f"{host(self.high)}; pass low < high")
        super().__init__(self.low.shape, validate_args=validate_args)

    def _expandable(self) -> set[str]:
        return {"low", "high"}

    @property
    def support(self) -> Any:  # type: ignore[override]
        return _Between(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return self.high * np.nan

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = noise("random", self._extended_shape(sample_shape), self.low)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Any) -> Tensor:
        value = self._as_value(value)
        # (NumPy's functions rather than <= and >: a comparison of a vmap-batched value with a Tensor needs them)
        inside = np.logical_and(np.less_equal(self.low, value), np.greater(self.high, value))
        return where(inside, -log(self.high - self.low), np.asarray(-np.inf, dtype=self.low.dtype))

    def cdf(self, value: Any) -> Tensor:
        value = self._as_value(value)
        return clip((value - self.low) / (self.high - self.low), 0, 1)

    def icdf(self, value: Any) -> Tensor:
        return _probability(self, value) * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return log(self.high - self.low)

    def __repr__(self) -> str:
        return f"Uniform(low: {describe(self.low)}, high: {describe(self.high)})"


class _Between(constraints.Constraint):
    """``[low, high)`` for each distribution of a batch (Uniform's support)."""

    def __init__(self, low: Tensor, high: Tensor) -> None:
        self.low, self.high = host(low), host(high)

    def check(self, value: Any) -> np.ndarray:
        return (self.low <= value) & (value < self.high)

    def __repr__(self) -> str:
        low = self.low.item() if self.low.size == 1 else "low"
        high = self.high.item() if self.high.size == 1 else "high"
        return f"Interval(lower_bound={low}, upper_bound={high})"


class Exponential(Distribution):
    """The exponential distribution with ``rate`` (mean ``1 / rate``), on ``[0, inf)``.

    Example:
        >>> from chainrule.distributions import Exponential
        >>> d = Exponential(2.0)
        >>> float(d.mean), float(d.log_prob(0.0))
        (0.5, 0.6931471824645996)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return reciprocal(self.rate)

    @property
    def mode(self) -> Tensor:
        return self.rate * 0

    @property
    def stddev(self) -> Tensor:
        return reciprocal(self.rate)

    @property
    def variance(self) -> Tensor:
        return self.rate ** -2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return noise("standard_exponential", self._extended_shape(sample_shape), self.rate) / self.rate

    def log_prob(self, value: Any) -> Tensor:
        value = self._as_value(value)
        return log(self.rate) - self.rate * value

    def cdf(self, value: Any) -> Tensor:
        value = self._as_value(value)
        return 1 - exp(-self.rate * value)

    def icdf(self, value: Any) -> Tensor:
        return -log1p(-_probability(self, value)) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - log(self.rate)


class Laplace(_LocationScale):
    """The Laplace (double exponential) distribution with location ``loc`` and scale ``scale``.

    Example:
        >>> from chainrule.distributions import Laplace
        >>> d = Laplace(0.0, 1.0)
        >>> float(d.variance), round(float(d.log_prob(1.0)), 4)
        (2.0, -1.6931)
    """

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale**2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = float(np.finfo(np.dtype(self.loc.dtype)).eps)
        u = noise("uniform", self._extended_shape(sample_shape), self.loc, (eps - 1, 1.0))
        return self.loc - self.scale * sign(u) * log1p(-absolute(u))

    def log_prob(self, value: Any) -> Tensor:
        value = self._as_value(value)
        return -log(2 * self.scale) - absolute(value - self.loc) / self.scale

    def cdf(self, value: Any) -> Tensor:
        value = self._as_value(value)
        z = value - self.loc
        return 0.5 - 0.5 * sign(z) * expm1(-absolute(z) / self.scale)

    def icdf(self, value: Any) -> Tensor:
        term = _probability(self, value) - 0.5
        return self.loc - self.scale * sign(term) * log1p(-2 * absolute(term))

    def entropy(self) -> Tensor:
        return 1 + log(2 * self.scale)


def _probability(d: Distribution, value: Any) -> Tensor:
    """``icdf``'s argument as a Tensor, checked to lie in [0, 1] when ``validate_args``."""
    if not is_value(value):
        value = Tensor._wrap(np.asarray(value, dtype=d._dtype()))
    if d._validate_args and checkable(value):
        data = host(value)
        if not np.all((data >= 0) & (data <= 1)):
            raise ValueError(f"{type(d).__name__}.icdf: expected probabilities in [0, 1], got {data}")
    return value



def _erfinv(x: Any) -> Any:
    """The inverse error function (SciPy's, for a value batched by ``vmap``; a Tensor's method otherwise)."""
    if isinstance(x, Tensor):
        return x.erfinv()
    from ..special import erfinv

    return erfinv(x)
