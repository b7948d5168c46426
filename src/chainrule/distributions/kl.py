"""``kl_divergence(p, q)`` and its registry ``register_kl``, as PyTorch's: the most specific pair of registered
types wins; the closed forms are PyTorch's, written with Tensor ops so they differentiate in both arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..ops.elementwise import abs as absolute
from ..ops.elementwise import exp, log, where
from ..ops.reductions import sum as sum_
from ..ops.shape import broadcast_to, expand_dims
from ..tensor import Tensor
from .base import Distribution, sum_rightmost
from .concentration import Beta, Dirichlet, special_functions
from .continuous import Exponential, Laplace, Normal, Uniform
from .discrete import Bernoulli, Categorical, OneHotCategorical, log1pexp
from .multivariate import Independent, MultivariateNormal, batch_mahalanobis, half_log_det

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict[tuple[type, type], Callable[[Any, Any], Tensor]] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable[[Any, Any], Tensor]], Callable[[Any, Any], Tensor]]:
    """Register ``fn(p, q)`` as ``KL(p || q)`` for ``p`` of ``type_p`` and ``q`` of ``type_q`` (subclasses too).

    Example:
        >>> from chainrule.distributions import Normal, kl_divergence, register_kl
        >>> class Unit(Normal):
        ...     pass
        >>> @register_kl(Unit, Unit)
        ... def _kl_unit(p, q):
        ...     return (p.loc - q.loc) ** 2 / 2
        >>> float(kl_divergence(Unit(1.0, 1.0), Unit(0.0, 1.0)))
        0.5
    """
    for t in (type_p, type_q):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"register_kl: expected subclasses of Distribution, got {t!r}")

    def decorator(fn: Callable[[Any, Any], Tensor]) -> Callable[[Any, Any], Tensor]:
        _KL_REGISTRY[type_p, type_q] = fn
        return fn

    return decorator


def _lookup(type_p: type, type_q: type) -> Callable[[Any, Any], Tensor] | None:
    """The registered rule whose types are nearest ``type_p`` and ``type_q`` in their method resolution orders."""
    best, rank = None, None
    for (p, q), fn in _KL_REGISTRY.items():
        if issubclass(type_p, p) and issubclass(type_q, q):
            r = (type_p.__mro__.index(p), type_q.__mro__.index(q))
            if rank is None or r < rank:
                best, rank = fn, r
    return best


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """``KL(p || q)``, the Kullback-Leibler divergence, in nats, for each distribution of the broadcast batch.

    Example:
        >>> from chainrule.distributions import Normal, kl_divergence
        >>> float(kl_divergence(Normal(1.0, 1.0), Normal(0.0, 1.0)))
        0.5
    """
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p of {type(p).__name__} and q of "
                                  f"{type(q).__name__}; register one with @register_kl({type(p).__name__}, "
                                  f"{type(q).__name__})")
    return fn(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - log(var_ratio))


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = _masked(t, q.probs == 0, np.inf)
    t = _masked(t, p.probs == 0, 0.0)
    return sum_(t, axis=-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (log1pexp(-q.logits) - log1pexp(-p.logits))
    t1 = _masked(_masked(t1, q.probs == 0, np.inf), p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (log1pexp(q.logits) - log1pexp(p.logits))
    t2 = _masked(_masked(t2, q.probs == 1, np.inf), p.probs == 1, 0.0)
    return t1 + t2


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         f"computed: {p.event_shape} and {q.event_shape}")
    from ..linalg import solve_triangular

    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    n = p.event_shape[0]
    shape = np.broadcast_shapes(tuple(lq.shape[:-2]), tuple(lp.shape[:-2]))
    solved = solve_triangular(broadcast_to(lq, shape + (n, n)), broadcast_to(lp, shape + (n, n)), upper=False)
    term2 = sum_(solved**2, axis=(-2, -1))
    term3 = batch_mahalanobis(lq, q.loc - p.loc)
    return half_log_det(lq) - half_log_det(lp) + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL(Independent || Independent) needs the same reinterpreted_batch_ndims, got "
                                  f"{p.reinterpreted_batch_ndims} and {q.reinterpreted_batch_ndims}")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    sp = special_functions()
    sum_p, sum_q = p.concentration1 + p.concentration0, q.concentration1 + q.concentration0
    t1 = sp.gammaln(q.concentration1) + sp.gammaln(q.concentration0) + sp.gammaln(sum_p)
    t2 = sp.gammaln(p.concentration1) + sp.gammaln(p.concentration0) + sp.gammaln(sum_q)
    t3 = (p.concentration1 - q.concentration1) * sp.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * sp.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * sp.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sp = special_functions()
    sum_p = sum_(p.concentration, axis=-1)
    sum_q = sum_(q.concentration, axis=-1)
    t1 = sp.gammaln(sum_p) - sp.gammaln(sum_q)
    t2 = sum_(sp.gammaln(p.concentration) - sp.gammaln(q.concentration), axis=-1)
    t3 = p.concentration - q.concentration
    t4 = sp.digamma(p.concentration) - expand_dims(sp.digamma(sum_p), -1)
    return t1 - t2 + sum_(t3 * t4, axis=-1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = log((q.high - q.low) / (p.high - p.low))
    return _masked(result, np.logical_or(np.greater(q.low, p.low), np.less(q.high, p.high)), np.inf)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return rate_ratio - log(rate_ratio) - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = absolute(p.loc - q.loc)
    t1 = -log(scale_ratio)
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


def _masked(t: Any, mask: Any, value: float) -> Any:
    """``t`` with ``value`` where ``mask`` holds (PyTorch's ``t[mask] = value``: no gradient flows there)."""
    return where(mask, np.asarray(value, dtype=t.dtype), t)
