"""Function transforms: ``grad``, ``value_and_grad``, ``jacobian``, ``hessian``, ``jvp``, ``vjp``...

JAX's names and semantics. Inputs may be floats, ints, NumPy arrays, ``Scalar``,
``Tensor``, or tuples, lists and dicts of them; results come back with the same
structure, as floats (for number inputs) or ndarrays. Transforms nest to any order and
in any mix (``grad(grad(f))``, ``jacfwd(jacrev(f))``): inside another transform they
return traced Tensors, so the outer one can differentiate them again.

Example:
    >>> import chainrule as cr
    >>> f = lambda a, b: b * ((a + b) * (a - b))
    >>> cr.grad(f, argnums=(0, 1))(1.0, 2.0)
    (4.0, -11.0)
    >>> cr.grad(cr.grad(f, argnums=1), argnums=1)(1.0, 2.0)
    -12.0
"""

from __future__ import annotations

# used by batching.lifted (the transforms inside vmap)
from ._common import _argnums as _argnums
from ._common import _as_tensor as _as_tensor
from ._common import _traced as _traced
from .forward import jvp, linearize
from .jacobians import hessian, hvp, jacfwd, jacobian, jacrev
from .reverse import deriv, elementwise_grad, grad, holomorphic_grad, value_and_grad, vjp

__all__ = [
    "value_and_grad", "grad", "deriv", "elementwise_grad", "vjp", "holomorphic_grad", "jvp", "linearize",
    "jacrev", "jacfwd", "jacobian", "hessian", "hvp",
]
