"""The families of concentration parameters: ``Beta`` and ``Dirichlet`` (PyTorch's formulas; needs SciPy for
``lgamma`` and ``digamma``). ``rsample`` normalises Gamma draws that are differentiable in their concentrations
(implicit reparameterisation gradients, PyTorch's approximation: :mod:`.gamma_draws`); ``sample`` draws outside the
graph."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.defaults import generator
from ..core.traces import draw
from ..ops.elementwise import clip, where
from ..ops.reductions import sum as sum_
from ..ops.shape import stack
from ..tensor import Tensor
from . import constraints
from .base import Distribution, as_param, as_size, broadcast_all, float_dtype, host
from .gamma_draws import dirichlet_rsample

__all__ = ["Beta", "Dirichlet"]


def special_functions() -> Any:
    from .. import special  # SciPy's functions with derivatives (an optional dependency, needed on first use)

    return special


class Dirichlet(Distribution):
    """The Dirichlet distribution over the probability simplex, with ``concentration`` (its last dimension
    is the event).

    Example:
        >>> import numpy as np
        >>> from chainrule.distributions import Dirichlet
        >>> d = Dirichlet(np.array([1.0, 2.0, 3.0]))
        >>> d.mean.tolist(), d.sample((4,)).shape, round(float(d.log_prob(np.array([0.2, 0.3, 0.5]))), 4)
        ([0.16666666666666666, 0.3333333333333333, 0.5], (4, 3), 1.5041)
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Any, validate_args: bool | None = None) -> None:
        concentration = as_param(concentration, float_dtype([concentration]))
        if concentration.ndim < 1:
            raise ValueError("Dirichlet: `concentration` parameter must be at least one-dimensional, got shape "
                             f"{tuple(concentration.shape)}")
        self.concentration = concentration
        super().__init__(tuple(concentration.shape[:-1]), tuple(concentration.shape[-1:]), validate_args)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """A draw differentiable in ``concentration``: normalised Gamma draws, each differentiated implicitly (as
        PyTorch's ``_standard_gamma``; first order only).

        Example:
            >>> import chainrule as cr
            >>> from chainrule.distributions import Dirichlet
            >>> c = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
            >>> x = Dirichlet(c).rsample((5,))
            >>> x[:, 0].sum().backward(); x.shape, c.grad.shape
            ((5, 3), (3,))
        """
        return dirichlet_rsample(self.concentration, self._extended_shape(sample_shape))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        alpha = np.broadcast_to(host(self.concentration), shape).astype(np.float64)
        return Tensor._wrap(draw(_dirichlet, alpha).astype(self.concentration.dtype))

    def log_prob(self, value: Any) -> Tensor:
        value = self._as_value(value)
        sp, a = special_functions(), self.concentration
        return (sum_(sp.xlogy(a - 1.0, value), axis=-1) + sp.gammaln(sum_(a, axis=-1))
                - sum_(sp.gammaln(a), axis=-1))

    @property
    def mean(self) -> Tensor:
        return self.concentration / sum_(self.concentration, axis=-1, keepdims=True)

    @property
    def mode(self) -> Tensor:
        return dirichlet_mode(self.concentration)

    @property
    def variance(self) -> Tensor:
        total = sum_(self.concentration, axis=-1, keepdims=True)
        return self.concentration * (total - self.concentration) / (total**2 * (total + 1))

    def entropy(self) -> Tensor:
        sp, a = special_functions(), self.concentration
        k = a.shape[-1]
        total = sum_(a, axis=-1)
        return (sum_(sp.gammaln(a), axis=-1) - sp.gammaln(total) - (k - total) * sp.digamma(total)
                - sum_((a - 1.0) * sp.digamma(a), axis=-1))


def dirichlet_mode(concentration: Any) -> Any:
    """PyTorch's mode: ``(a - 1)`` clamped at 0 and normalised; where every concentration is below 1 (the density
    is unbounded at every corner), the first corner, as PyTorch's."""
    above = clip(concentration - 1, 0.0, None)
    total = sum_(above, axis=-1, keepdims=True)
    corner = np.equal(total, 0)
    mode = above / where(corner, np.asarray(1, dtype=total.dtype), total)
    first = np.eye(concentration.shape[-1], dtype=concentration.dtype)[0]
    return where(corner, first, mode)


def _dirichlet(alpha: np.ndarray) -> np.ndarray:
    """Dirichlet draws for every row of ``alpha`` (normalised Gamma draws, as NumPy's ``dirichlet``)."""
    g = generator(None).standard_gamma(alpha)
    return g / g.sum(-1, keepdims=True)


class Beta(Distribution):
    """The Beta distribution on [0, 1] with ``concentration1`` (alpha) and ``concentration0`` (beta).

    Example:
        >>> from chainrule.distributions import Beta
        >>> d = Beta(2.0, 3.0)
        >>> float(d.mean), round(float(d.log_prob(0.5)), 4)
        (0.4000000059604645, 0.4055)
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(tuple(self.concentration1.shape), validate_args=validate_args)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """A draw differentiable in both concentrations: the first entry of a Dirichlet draw of the pair (as
        PyTorch's), from Gamma draws differentiated implicitly.

        Example:
            >>> import chainrule as cr
            >>> from chainrule.distributions import Beta
            >>> a = cr.tensor(2.0, requires_grad=True)
            >>> x = Beta(a, 3.0).rsample((4,))
            >>> x.sum().backward(); x.shape, a.grad.shape
            ((4,), ())
        """
        both = stack([self.concentration1, self.concentration0], axis=-1)
        return dirichlet_rsample(both, self._extended_shape(as_size(sample_shape)) + (2,))[..., 0]

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(as_size(sample_shape))
        a = np.broadcast_to(host(self.concentration1), shape).astype(np.float64)
        b = np.broadcast_to(host(self.concentration0), shape).astype(np.float64)
        return Tensor._wrap(draw(_beta, a, b).astype(self.concentration1.dtype))

    def log_prob(self, value: Any) -> Tensor:
        value = self._as_value(value)
        sp, a, b = special_functions(), self.concentration1, self.concentration0
        return sp.xlogy(a - 1.0, value) + sp.xlogy(b - 1.0, 1.0 - value) + sp.gammaln(a + b) - sp.gammaln(
            a) - sp.gammaln(b)

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        both = stack([self.concentration1, self.concentration0], axis=-1)
        return dirichlet_mode(both)[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total**2 * (total + 1))

    def entropy(self) -> Tensor:
        sp, a, b = special_functions(), self.concentration1, self.concentration0
        total = a + b
        return (sp.gammaln(a) + sp.gammaln(b) - sp.gammaln(total) - (a - 1) * sp.digamma(a)
                - (b - 1) * sp.digamma(b) + (total - 2) * sp.digamma(total))


def _beta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return generator(None).beta(a, b)


