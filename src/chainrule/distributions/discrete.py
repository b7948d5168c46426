"""The discrete families: ``Bernoulli``, ``Categorical`` and ``OneHotCategorical``, given ``probs`` or ``logits``.

As in PyTorch, the one not given is derived (and kept) on first use: ``logits`` from ``probs`` clamped into
``[eps, 1 - eps]``, so probabilities 0 and 1 give finite log-probabilities and gradients.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from ..core.defaults import generator
from ..core.traces import draw
from ..ops.elementwise import clip, log, log1p, logaddexp, sigmoid
from ..ops.reductions import logsumexp, softmax
from ..ops.reductions import sum as sum_
from ..ops.shape import astype, broadcast_to, expand_dims, squeeze, take_along_axis
from ..tensor import Tensor
from . import constraints
from .base import Distribution, as_param, as_size, broadcast_all, checkable, float_dtype, host
from .continuous import noise

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical"]


def _one_of(name: str, probs: Any, logits: Any) -> None:
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: pass either probs= or logits=, not both nor neither "
                         f"(got probs={probs!r}, logits={logits!r})")


def _clamped(probs: Tensor) -> Tensor:
    eps = float(np.finfo(np.dtype(probs.dtype)).eps)
    return clip(probs, eps, 1 - eps)


class Bernoulli(Distribution):
    """A coin that shows 1 with probability ``probs`` (or ``sigmoid(logits)``), 0 otherwise.

    Example:
        >>> from chainrule.distributions import Bernoulli
        >>> d = Bernoulli(probs=0.25)
        >>> round(float(d.log_prob(1.0)), 4), float(d.mean), float(d.variance)
        (-1.3863, 0.25, 0.1875)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        _one_of("Bernoulli", probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.__dict__["probs" if probs is not None else "logits"]
        super().__init__(self._param.shape, validate_args=validate_args)

    def _expandable(self) -> set[str]:
        return {"probs", "logits", "_param"}

    @cached_property
    def probs(self) -> Tensor:
        """The probability of 1."""
        return sigmoid(self.logits)

    @cached_property
    def logits(self) -> Tensor:
        """The log-odds of 1."""
        p = _clamped(self.probs)
        return log(p) - log1p(-p)

    @property
    def param_shape(self) -> tuple[int, ...]:
        return tuple(self._param.shape)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return Tensor._wrap(np.where(host(self.probs) == 0.5, np.nan, host(mode)).astype(mode.dtype))

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = noise("random", shape, self.probs)
        return Tensor._wrap((host(u) < np.broadcast_to(host(self.probs), shape)).astype(u.dtype))

    def log_prob(self, value: Any) -> Tensor:
        value = self._as_value(value)
        if not np.issubdtype(value.dtype, np.floating):
            value = astype(value, self.logits.dtype)
        return -_bce_with_logits(self.logits, value)

    def entropy(self) -> Tensor:
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = Tensor._wrap(np.arange(2, dtype=self._param.dtype).reshape((2,) + (1,) * len(self.batch_shape)))
        return values.expand((2,) + self.batch_shape) if expand else values


def log1pexp(x: Any) -> Any:
    """``log(1 + exp(x))``, stable for large ``|x|`` (the softplus), as ``logaddexp(0, x)``."""
    return logaddexp(0.0, x)


def _bce_with_logits(logits: Tensor, target: Tensor) -> Tensor:
    """PyTorch's ``binary_cross_entropy_with_logits`` without reduction: ``(1 - t) x + log(1 + exp(-x))``, stable."""
    return (1 - target) * logits + log1pexp(-logits)


class Categorical(Distribution):
    """One of ``K`` categories (the last dimension of ``probs`` or ``logits``); values are integer indices.

    ``probs`` need not sum to 1 (they are normalised); ``logits`` are normalised log-probabilities afterwards.

    Example:
        >>> import chainrule as cr
        >>> from chainrule.distributions import Categorical
        >>> d = Categorical(logits=cr.zeros(4))
        >>> d.sample((3,)).shape, round(float(d.entropy()), 4), float(d.log_prob(2).exp())
        ((3,), 1.3863, 0.25)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        _one_of(type(self).__name__, probs, logits)
        given = "probs" if probs is not None else "logits"
        raw_param = probs if probs is not None else logits
        param = as_param(raw_param, float_dtype([raw_param]))
        if param.ndim < 1:
            raise ValueError(f"`{given}` parameter must be at least one-dimensional (one entry per category), "
                             f"got shape {tuple(param.shape)}")
        if probs is not None:
            self.probs = param / sum_(param, axis=-1, keepdims=True)
        else:
            self.logits = param - logsumexp(param, axis=-1, keepdims=True)
        self._param = self.__dict__[given]
        self._num_events = param.shape[-1]
        super().__init__(tuple(param.shape[:-1]), validate_args=validate_args)

    def _expandable(self) -> set[str]:
        return {"probs", "logits", "_param"}

    @cached_property
    def probs(self) -> Tensor:
        """The probability of each category (summing to 1 over the last dimension)."""
        return softmax(self.logits, axis=-1)

    @cached_property
    def logits(self) -> Tensor:
        """The log-probability of each category (clamped away from -inf where ``probs`` is 0)."""
        return log(_clamped(self.probs))

    @property
    def support(self) -> Any:  # type: ignore[override]
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self) -> tuple[int, ...]:
        return tuple(self._param.shape)

    @property
    def mean(self) -> Tensor:
        return Tensor._wrap(np.full(self.batch_shape, np.nan, dtype=self.probs.dtype))

    @property
    def mode(self) -> Tensor:
        return Tensor._wrap(np.asarray(host(self.probs).argmax(-1)).astype(np.int64))

    @property
    def variance(self) -> Tensor:
        return Tensor._wrap(np.full(self.batch_shape, np.nan, dtype=self.probs.dtype))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = as_size(sample_shape) + self.batch_shape
        return Tensor._wrap(draw(_categories, host(self.probs), shape))

    def log_prob(self, value: Any) -> Tensor:
        value = self._as_value(value)
        # the indices as an array (a jit trace then sees values it cannot follow and runs the call as it is),
        # or, batched by vmap, as they are
        index = np.asarray(host(value), dtype=np.int64) if checkable(value) else value
        if index.dtype != np.int64:  # (vmap's astype to a value's own dtype recurses: skip it)
            index = astype(index, np.int64)
        shape = np.broadcast_shapes(tuple(index.shape), self.batch_shape)
        log_pmf = self.logits
        if log_pmf.shape[:-1] != shape:
            log_pmf = broadcast_to(log_pmf, shape + (self._num_events,))
        if index.shape != shape:
            index = broadcast_to(index, shape) if not checkable(index) else np.broadcast_to(index, shape)
        return squeeze(take_along_axis(log_pmf, expand_dims(index, -1), axis=-1), -1)

    def entropy(self) -> Tensor:
        min_real = float(np.finfo(np.dtype(self.logits.dtype)).min)
        return -sum_(clip(self.logits, min_real, None) * self.probs, axis=-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = Tensor._wrap(np.arange(self._num_events, dtype=np.int64).reshape(
            (-1,) + (1,) * len(self.batch_shape)))
        return values.expand((-1,) + self.batch_shape) if expand else values


def _categories(probs: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Category indices of ``shape`` (sample shape + batch shape), by inverting each row's running sum."""
    k = probs.shape[-1]
    batch = probs.shape[:-1]
    cdf = np.cumsum(probs.astype(np.float64), axis=-1)
    cdf = cdf / cdf[..., -1:]
    u = generator(None).random(shape)
    picked = (u[..., None] >= np.broadcast_to(cdf, shape[: len(shape) - len(batch)] + batch + (k,))).sum(-1)
    return np.minimum(picked, k - 1).astype(np.int64)


class OneHotCategorical(Distribution):
    """``Categorical`` with its values written one-hot: the event is a vector of ``K`` zeros with one 1.

    Example:
        >>> import chainrule as cr
        >>> from chainrule.distributions import OneHotCategorical
        >>> d = OneHotCategorical(probs=cr.tensor([0.0, 1.0, 0.0]))
        >>> d.sample().tolist(), d.event_shape
        ([0.0, 1.0, 0.0], (3,))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> OneHotCategorical:
        new = object.__new__(OneHotCategorical)
        new.__dict__.update(self.__dict__)
        new._categorical = self._categorical.expand(batch_shape)
        new._batch_shape = as_size(batch_shape)
        return new

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return Tensor._wrap(np.eye(self.event_shape[0], dtype=self.probs.dtype)[host(self._categorical.mode)])

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        indices = host(self._categorical.sample(sample_shape))
        return Tensor._wrap(np.eye(self.event_shape[0], dtype=self.probs.dtype)[indices])

    def log_prob(self, value: Any) -> Tensor:
        value = self._as_value(value)
        return self._categorical.log_prob(Tensor._wrap(host(value).argmax(-1)))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = Tensor._wrap(np.eye(n, dtype=self.probs.dtype).reshape((n,) + (1,) * len(self.batch_shape) + (n,)))
        return values.expand((n,) + self.batch_shape + (n,)) if expand else values

    def __repr__(self) -> str:
        return "OneHot" + repr(self._categorical)
