"""``chainrule.scipy.stats``: the normal distribution's functions as ``jax.scipy.stats.norm`` has them, differentiable
in ``x``, ``loc`` and ``scale``, and JAX's other distributions (``t``, ``gamma``, ``poisson``, ... in
:mod:`chainrule.scipy.distributions`).

Example:
    >>> import chainrule as cr
    >>> from chainrule.scipy.stats import norm
    >>> round(cr.grad(norm.logpdf)(1.0), 6)  # d/dx of -x**2/2
    -1.0
"""

from __future__ import annotations

import math
from typing import Any

from .. import numpy as cnp
from .. import special
from .distributions import *  # noqa: F403  (t, cauchy, laplace, logistic, gamma, beta, poisson, ...)
from .distributions import __all__ as _distributions

__all__ = ["norm", *_distributions]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


class _Normal:
    """``scipy.stats.norm``'s functions of ``x`` (or ``q``) with ``loc`` and ``scale``."""

    @staticmethod
    def logpdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        z = (x - loc) / scale
        return -0.5 * z * z - cnp.log(scale) - _HALF_LOG_2PI

    @staticmethod
    def pdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        return cnp.exp(_Normal.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        return special.ndtr((x - loc) / scale)

    @staticmethod
    def logcdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        return special.log_ndtr((x - loc) / scale)

    @staticmethod
    def sf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        return special.ndtr((loc - x) / scale)

    @staticmethod
    def logsf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        return special.log_ndtr((loc - x) / scale)

    @staticmethod
    def ppf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        return loc + scale * special.ndtri(q)


norm = _Normal()
