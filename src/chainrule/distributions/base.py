"""``Distribution``, the base of PyTorch's ``torch.distributions``: shapes, sampling, validation, ``expand``.

A distribution's parameters are Tensors (Python floats, NumPy arrays and Tensors are accepted and broadcast
together, as PyTorch does), and everything it computes from them (``log_prob``, ``rsample``, ``entropy``,
``kl_divergence``) is made of chainrule's Tensor ops, so gradients flow to the parameters at any order, in
reverse and forward mode, and under ``grad``, ``jvp`` and ``hessian``. ``sample()`` is drawn outside the
graph; ``rsample()`` (where ``has_rsample``) is the reparameterised draw, differentiable in the parameters.
Draws come from the generator ``chainrule.manual_seed`` seeds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np

from ..autodiff.batch_levels import is_batched, is_value
from ..core.defaults import get_default_dtype
from ..core.state import no_grad
from ..ops.elementwise import exp, sqrt
from ..ops.reductions import sum as sum_
from ..ops.shape import astype, broadcast_to
from ..tensor import Tensor
from . import constraints
from .constraints import Constraint

__all__ = ["Distribution", "broadcast_all"]


def as_size(sample_shape: Any) -> tuple[int, ...]:
    """PyTorch's ``sample_shape`` (a tuple, list, ``torch.Size``-like or int) as a tuple of ints."""
    if isinstance(sample_shape, (int, np.integer)) and not isinstance(sample_shape, bool):
        return (int(sample_shape),)
    items = list(sample_shape) if isinstance(sample_shape, Iterable) and not isinstance(sample_shape, str) else None
    if items is None or not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in items):
        raise TypeError(f"sample_shape must be a tuple of ints such as (3,) or (2, 5), got {sample_shape!r}")
    size = tuple(int(n) for n in items)
    if any(n < 0 for n in size):
        raise ValueError(f"sample_shape must have non-negative sizes, got {size}")
    return size


def float_dtype(values: Iterable[Any]) -> np.dtype:
    """The dtype parameters take: that of the floating Tensors or arrays among them (promoted), else the default."""
    arrays = [v for v in values if is_value(v) or isinstance(v, np.ndarray)]
    dtypes = [np.dtype(v.dtype) for v in arrays if np.dtype(v.dtype).kind == "f"]
    return np.result_type(*dtypes) if dtypes else get_default_dtype()


def as_param(value: Any, dtype: Any) -> Tensor:
    """``value`` as a floating Tensor of ``dtype`` (a Tensor of another dtype is cast, in the graph; a value
    batched by ``vmap`` stays as it is)."""
    if is_value(value):
        return value if value.dtype == dtype else astype(value, dtype)
    return Tensor._wrap(np.asarray(value, dtype=dtype))


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """PyTorch's ``broadcast_all``: floats, arrays and Tensors as Tensors of one floating dtype and one shape.

    Example:
        >>> from chainrule.distributions import broadcast_all
        >>> [t.shape for t in broadcast_all(0.0, [1.0, 2.0])]
        [(2,), (2,)]
    """
    dtype = float_dtype(values)
    tensors = [as_param(v, dtype) for v in values]
    shape = np.broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else broadcast_to(t, shape) for t in tensors)


def sum_rightmost(value: Tensor, dims: int) -> Tensor:
    """``value`` summed over its last ``dims`` dimensions."""
    return sum_(value, axis=tuple(range(-dims, 0))) if dims > 0 else value


def checkable(value: Any) -> bool:
    """Whether ``value``'s numbers can be read to check them: not so for a value batched by ``vmap``."""
    return not is_batched(value)


def host(value: Any) -> np.ndarray:
    """The values of a Tensor or array, on the host, for checking (never in the graph)."""
    data = value._data if isinstance(value, Tensor) else value
    return np.asarray(data.get() if hasattr(data, "get") and not isinstance(data, np.ndarray) else data)


def describe(value: Any) -> str:
    """A parameter or value for an error message: its number, or its shape."""
    if not checkable(value):
        return f"batched, of shape {tuple(value.shape)}"
    data = host(value)
    return repr(data.item()) if data.size == 1 else f"Tensor of shape {data.shape}"


class Distribution:
    """PyTorch's ``torch.distributions.Distribution``: the shapes (``sample_shape + batch_shape + event_shape``),
    sampling, ``log_prob`` and the moments a family defines, and the checks ``validate_args`` turns on (on by
    default, as in PyTorch: invalid parameters raise at construction, values outside the support in
    ``log_prob``; inside ``vmap`` the values differ per example and are not read, so not checked).

    Example:
        >>> import chainrule as cr
        >>> from chainrule.distributions import Normal
        >>> d = Normal(cr.tensor([0.0, 1.0]), 2.0)
        >>> d.batch_shape, d.event_shape, d.sample((5,)).shape
        ((2,), (), (5, 2))
    """

    has_rsample: ClassVar[bool] = False
    has_enumerate_support: ClassVar[bool] = False
    arg_constraints: ClassVar[dict[str, Constraint]] = {}
    support: Any = None
    _validate_args: bool = True

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions made afterwards (on by default)."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (), validate_args: bool | None = None) -> None:
        self._batch_shape = as_size(batch_shape)
        self._event_shape = as_size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if constraint is constraints.dependent or name not in self.__dict__:
                    continue  # given through another parameter (probs for logits), or checked by the family
                value = self.__dict__[name]
                if not checkable(value):
                    continue
                if not np.all(constraint.check(host(value))):
                    raise ValueError(
                        f"Expected parameter {name} ({describe(value)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{host(value)}\n"
                        f"Pass {name} values that satisfy it (or validate_args=False to skip the check)")

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The shape of the batch of independent distributions (parameters broadcast together)."""
        return self._batch_shape

    @property
    def event_shape(self) -> tuple[int, ...]:
        """The shape of one draw of one distribution (``()`` for a scalar family)."""
        return self._event_shape

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """The same family with its parameters broadcast (without copies) to the larger ``batch_shape``.

        Example:
            >>> from chainrule.distributions import Normal
            >>> Normal(0.0, 1.0).expand((3,)).batch_shape
            (3,)
        """
        batch_shape = as_size(batch_shape)
        new = _instance if _instance is not None else object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        k = len(self._batch_shape)
        for name, value in self.__dict__.items():
            if is_value(value) and name in self._expandable():
                new.__dict__[name] = broadcast_to(value, batch_shape + tuple(value.shape[k:]))
        new._batch_shape = batch_shape
        return new

    def _expandable(self) -> set[str]:
        """The attributes that carry the batch shape (the parameters, given or derived)."""
        return set(self.arg_constraints)

    def _extended_shape(self, sample_shape: Any = ()) -> tuple[int, ...]:
        return as_size(sample_shape) + self._batch_shape + self._event_shape

    @property
    def mean(self) -> Tensor:
        """The mean of each distribution of the batch."""
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        """The most likely value."""
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance of each distribution of the batch."""
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        """The standard deviation (the square root of ``variance``)."""
        return sqrt(self.variance)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape``, outside the graph (no gradient)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """A reparameterised draw: differentiable in the parameters (families with ``has_rsample``)."""
        raise NotImplementedError(f"{type(self).__name__} has no rsample (has_rsample is False): use sample(), and "
                                  "the score function log_prob(x) * f(x) for gradients (REINFORCE)")

    def sample_n(self, n: int) -> Tensor:
        """``sample((n,))`` (PyTorch's deprecated spelling)."""
        return self.sample((n,))

    def log_prob(self, value: Any) -> Tensor:
        """The log of the density (or mass) at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value: Any) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Any) -> Tensor:
        """The inverse of ``cdf``: the value below which a fraction ``value`` of the mass lies."""
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def entropy(self) -> Tensor:
        """The differential (or Shannon) entropy, in nats, of each distribution of the batch."""
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Tensor:
        """``exp(entropy())``."""
        return exp(self.entropy())

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete support, along a new leading dimension."""
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def _as_value(self, value: Any) -> Tensor:
        """``value`` as a Tensor (floats and arrays in the parameters' dtype), checked when ``validate_args``."""
        if not is_value(value):
            data = np.asarray(value)
            if data.dtype.kind == "f" or not self.support.is_discrete:  # a float value takes the parameters' dtype
                data = data.astype(self._dtype())
            value = Tensor._wrap(data)
        if self._validate_args and checkable(value) and all(checkable(v) for v in self.__dict__.values()):
            self._validate_sample(value)
        return value

    def _dtype(self) -> np.dtype:
        for name in self.arg_constraints:
            if is_value(self.__dict__.get(name)):
                return np.dtype(self.__dict__[name].dtype)
        return get_default_dtype()

    def _validate_sample(self, value: Tensor) -> None:
        event_dim = len(self._event_shape)
        shape = tuple(value.shape)
        if len(shape) < event_dim or shape[len(shape) - event_dim:] != self._event_shape:
            raise ValueError(f"{type(self).__name__}: the value's shape {shape} must end in the event shape "
                             f"{self._event_shape}")
        try:
            np.broadcast_shapes(shape, self._batch_shape + self._event_shape)
        except ValueError:
            raise ValueError(f"{type(self).__name__}: the value's shape {shape} does not broadcast with the "
                             f"distribution's shape {self._batch_shape + self._event_shape} (batch + event)") from None
        ok = self.support.check(host(value))
        if not np.all(ok):
            raise ValueError(f"Expected value argument ({describe(value)}) to be within the support "
                             f"({self.support!r}) of the distribution {self!r}, but found invalid values:\n"
                             f"{host(value)}\nPass values in the support (or validate_args=False to skip the check)")

    def __repr__(self) -> str:
        names = [n for n in self.arg_constraints if n in self.__dict__]
        return f"{type(self).__name__}({', '.join(f'{n}: {describe(self.__dict__[n])}' for n in names)})"


LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
