"""PyTorch's ``torch.distributions``: probability distributions whose ``log_prob``, ``rsample``, ``entropy`` and
``kl_divergence`` are chainrule Tensor ops, so they differentiate in the parameters (any order, both modes,
under ``grad``, ``jvp``, ``hessian``). Draws come from the generator ``chainrule.manual_seed`` seeds.

Families: ``Normal``, ``Uniform``, ``Exponential``, ``Laplace``, ``Bernoulli``, ``Categorical``,
``OneHotCategorical``, ``MultivariateNormal``, ``Independent``, and ``Beta`` and ``Dirichlet`` (no ``rsample``);
``kl_divergence`` with ``register_kl``.

Example:
    >>> import chainrule as cr
    >>> from chainrule.distributions import Categorical
    >>> logits = cr.zeros(3, requires_grad=True)
    >>> policy = Categorical(logits=logits)
    >>> action = policy.sample()
    >>> (-policy.log_prob(action) * 2.0).backward()   # REINFORCE: -log pi(a) * return
    >>> logits.grad.shape
    (3,)
"""

from __future__ import annotations

from . import constraints
from .base import Distribution, broadcast_all
from .concentration import Beta, Dirichlet
from .continuous import Exponential, Laplace, Normal, Uniform
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .kl import kl_divergence, register_kl
from .multivariate import Independent, MultivariateNormal

__all__ = [
    "Bernoulli", "Beta", "Categorical", "Dirichlet", "Distribution", "Exponential", "Independent", "Laplace",
    "MultivariateNormal", "Normal", "OneHotCategorical", "Uniform", "broadcast_all", "constraints", "kl_divergence",
    "register_kl",
]
