"""JAX's ``jax.scipy`` spellings for JAX programs: ``chainrule.scipy.special`` (which is :mod:`chainrule.special`),
``chainrule.scipy.stats.norm`` and SciPy's signatures of the linear algebra in :mod:`chainrule.scipy.linalg`.

Example:
    >>> import chainrule as cr
    >>> from chainrule.scipy.special import logsumexp
    >>> from chainrule.scipy.stats import norm
    >>> round(float(logsumexp(cr.numpy.zeros(2))), 6), round(float(norm.logpdf(0.0)), 6)
    (0.693147, -0.918939)
"""

from __future__ import annotations

import sys

from .. import special
from . import linalg, stats

sys.modules[f"{__name__}.special"] = special  # `from chainrule.scipy.special import logsumexp`: the same module

__all__ = ["special", "stats", "linalg"]
