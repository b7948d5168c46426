"""``MultivariateNormal`` (given a covariance, its Cholesky factor or a precision matrix) and ``Independent``
(a batch of distributions read as one distribution over more dimensions)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..linalg import cholesky, solve_triangular
from ..ops.arrays import diagonal, flip
from ..ops.contraction import matmul
from ..ops.elementwise import log
from ..ops.reductions import sum as sum_
from ..ops.shape import broadcast_to, expand_dims, squeeze, swapaxes
from ..tensor import Tensor
from . import constraints
from .base import Distribution, as_param, as_size, describe, float_dtype, sum_rightmost
from .continuous import noise

__all__ = ["Independent", "MultivariateNormal"]


def batch_mahalanobis(scale_tril: Tensor, diff: Tensor) -> Tensor:
    """``diff^T (L L^T)^-1 diff`` over the batch: the squared norm of ``L^-1 diff`` (both broadcast)."""
    n = diff.shape[-1]
    shape = np.broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(diff.shape[:-1]))
    lower = scale_tril if scale_tril.shape[:-2] == shape else broadcast_to(scale_tril, shape + (n, n))
    diff = diff if diff.shape[:-1] == shape else broadcast_to(diff, shape + (n,))
    return sum_(squeeze(solve_triangular(lower, expand_dims(diff, -1), upper=False), -1) ** 2, axis=-1)


def _transposed(matrix: Tensor) -> Tensor:
    return swapaxes(matrix, -1, -2)


def half_log_det(scale_tril: Tensor) -> Tensor:
    """``log det(L L^T) / 2``: the sum of the logs of ``L``'s diagonal."""
    return sum_(log(diagonal(scale_tril, 0, -2, -1)), axis=-1)


def precision_to_scale_tril(precision: Tensor) -> Tensor:
    """The lower Cholesky factor of ``precision``'s inverse, PyTorch's way (the factor of the flipped matrix,
    flipped back and inverted), so that both read the same triangle and give the same gradient."""
    flipped = cholesky(flip(precision, (-2, -1)))
    lower_inv = _transposed(flip(flipped, (-2, -1)))
    eye = Tensor._wrap(np.eye(precision.shape[-1], dtype=precision.dtype))
    return solve_triangular(lower_inv, eye, upper=False)


class MultivariateNormal(Distribution):
    """The normal distribution over vectors with mean ``loc`` and one of ``covariance_matrix``, ``scale_tril``
    (its lower Cholesky factor) or ``precision_matrix`` (its inverse); batch dimensions broadcast.

    Example:
        >>> import chainrule as cr
        >>> from chainrule.distributions import MultivariateNormal
        >>> d = MultivariateNormal(cr.zeros(2), covariance_matrix=cr.tensor([[2.0, 0.0], [0.0, 0.5]]))
        >>> d.rsample((4,)).shape, round(float(d.log_prob(cr.zeros(2))), 4), d.variance.shape
        ((4, 2), -1.8379, (2,))
    """

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Any, covariance_matrix: Any = None, precision_matrix: Any = None, scale_tril: Any = None,
                 validate_args: bool | None = None) -> None:
        given = {k: v for k, v in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                   ("scale_tril", scale_tril)) if v is not None}
        if len(given) != 1:
            raise ValueError("MultivariateNormal: pass exactly one of covariance_matrix=, precision_matrix= or "
                             f"scale_tril=, got {sorted(given) or 'none'}")
        ((name, matrix),) = given.items()
        dtype = float_dtype([loc, matrix])
        loc, matrix = as_param(loc, dtype), as_param(matrix, dtype)
        if loc.ndim < 1:
            raise ValueError(f"MultivariateNormal: loc must be at least one-dimensional, got shape {tuple(loc.shape)}")
        if matrix.ndim < 2:
            raise ValueError(f"MultivariateNormal: {name} must be at least two-dimensional, with optional leading "
                             f"batch dimensions, got shape {tuple(matrix.shape)}")
        n = loc.shape[-1]
        if tuple(matrix.shape[-2:]) != (n, n):
            raise ValueError(f"MultivariateNormal: {name} must be {n} x {n} to match loc's last dimension {n}, got "
                             f"shape {tuple(matrix.shape)}")
        batch_shape = np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, broadcast_to(matrix, batch_shape + (n, n)))
        self.loc = broadcast_to(loc, batch_shape + (n,))
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        batch_shape = as_size(batch_shape)
        new = object.__new__(MultivariateNormal)
        new.__dict__.update(self.__dict__)
        n = self.event_shape[0]
        new.loc = broadcast_to(self.loc, batch_shape + (n,))
        for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
            if name in self.__dict__:
                new.__dict__[name] = broadcast_to(self.__dict__[name], batch_shape + (n, n))
        new._batch_shape = batch_shape
        return new

    def _full(self, matrix: Tensor) -> Tensor:
        n = self.event_shape[0]
        return broadcast_to(matrix, self.batch_shape + (n, n))

    @property
    def scale_tril(self) -> Tensor:  # type: ignore[override]
        """The lower Cholesky factor ``L`` of the covariance (``L L^T``)."""
        if "scale_tril" in self.__dict__:
            return self.__dict__["scale_tril"]
        return self._full(self._unbroadcasted_scale_tril)

    @scale_tril.setter
    def scale_tril(self, value: Tensor) -> None:
        self.__dict__["scale_tril"] = value

    @property
    def covariance_matrix(self) -> Tensor:
        """The covariance ``L L^T``."""
        if "covariance_matrix" in self.__dict__:
            return self.__dict__["covariance_matrix"]
        lower = self._unbroadcasted_scale_tril
        return self._full(matmul(lower, _transposed(lower)))

    @covariance_matrix.setter
    def covariance_matrix(self, value: Tensor) -> None:
        self.__dict__["covariance_matrix"] = value

    @property
    def precision_matrix(self) -> Tensor:
        """The inverse of the covariance, ``L^-T L^-1``."""
        if "precision_matrix" in self.__dict__:
            return self.__dict__["precision_matrix"]
        lower = self._unbroadcasted_scale_tril
        eye = Tensor._wrap(np.eye(lower.shape[-1], dtype=lower.dtype))
        lower_inv = solve_triangular(lower, eye, upper=False)
        return self._full(matmul(_transposed(lower_inv), lower_inv))

    @precision_matrix.setter
    def precision_matrix(self, value: Tensor) -> None:
        self.__dict__["precision_matrix"] = value

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return broadcast_to(sum_(self._unbroadcasted_scale_tril**2, axis=-1), self.batch_shape + self.event_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = noise("standard_normal", self._extended_shape(sample_shape), self.loc)
        return self.loc + squeeze(matmul(self._unbroadcasted_scale_tril, expand_dims(eps, -1)), -1)

    def log_prob(self, value: Any) -> Tensor:
        value = self._as_value(value)
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self.event_shape[0] * math.log(2 * math.pi) + m) - half_log_det(
            self._unbroadcasted_scale_tril)

    def entropy(self) -> Tensor:
        h = 0.5 * self.event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det(self._unbroadcasted_scale_tril)
        return h if tuple(h.shape) == self.batch_shape else broadcast_to(h, self.batch_shape)

    def __repr__(self) -> str:
        names = [n for n in ("loc", "covariance_matrix", "precision_matrix", "scale_tril") if n in self.__dict__]
        return f"MultivariateNormal({', '.join(f'{n}: {describe(self.__dict__[n])}' for n in names)})"


class Independent(Distribution):
    """``base_distribution`` with its last ``reinterpreted_batch_ndims`` batch dimensions read as event dimensions:
    ``log_prob`` and ``entropy`` sum over them (a diagonal Gaussian over vectors from a batch of ``Normal``).

    Example:
        >>> import chainrule as cr
        >>> from chainrule.distributions import Independent, Normal
        >>> d = Independent(Normal(cr.zeros(3, 2), 1.0), 1)
        >>> d.batch_shape, d.event_shape, d.log_prob(cr.zeros(3, 2)).shape
        ((3,), (2,), (3,))
    """

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        n = int(reinterpreted_batch_ndims)
        shape = base_distribution.batch_shape + base_distribution.event_shape
        if n > len(base_distribution.batch_shape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{n} vs {len(base_distribution.batch_shape)}")
        event_dim = n + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        super().__init__(shape[: len(shape) - event_dim], shape[len(shape) - event_dim:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Independent:
        batch_shape = as_size(batch_shape)
        new = object.__new__(Independent)
        new.__dict__.update(self.__dict__)
        new.base_dist = self.base_dist.expand(batch_shape + self.event_shape[: self.reinterpreted_batch_ndims])
        new._batch_shape = batch_shape
        return new

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]
        return False if self.reinterpreted_batch_ndims > 0 else self.base_dist.has_enumerate_support

    @property
    def support(self) -> Any:  # type: ignore[override]
        return constraints.independent(self.base_dist.support, self.reinterpreted_batch_ndims)

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Any) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
