"""``chainrule.special``: SciPy's special functions, differentiable (needs ``pip install chainrule[scipy]``).

Importing it registers SciPy's ufuncs, so ``scipy.special.gammaln(tensor)`` is traced too.
Use ``logsumexp``, ``softmax``, ``log_softmax``, ``polygamma`` and ``multigammaln`` from here:
SciPy's own versions are not ufuncs and would convert a Tensor to a plain array.

Example:
    >>> import chainrule as cr
    >>> from chainrule import special
    >>> round(cr.grad(special.digamma)(1.0), 6)  # pi**2 / 6
    1.644934
"""

from __future__ import annotations

from .ops.declare import declared_in
from .ops.special_functions import bessel as special_bessel  # noqa: F401  (declares j0, jn, iv, gammainc, rgamma...)
from .ops.special_functions.scipy_special import (
    beta,
    betaln,
    digamma,
    entr,
    erf,
    expit,
    log_softmax,
    logsumexp,
    multigammaln,
    polygamma,
    psi,
    softmax,
    xlog1py,
    xlogy,
)

# the functions declared public here (gammaln, erfc, ndtr...: ops/special_functions/), by their declarations
globals().update(declared_in("special"))

__all__ = [
    "beta", "betaln", "digamma", "entr", "erf", "expit", "log_softmax", "logsumexp", "multigammaln", "polygamma",
    "psi", "softmax", "xlog1py", "xlogy",
]
__all__ += sorted(declared_in("special"))
