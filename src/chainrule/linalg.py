"""``chainrule.linalg``: NumPy's linear algebra, differentiable (``import chainrule.linalg as la``).

The same functions answer ``np.linalg.<name>(tensor)``. See :mod:`chainrule.ops.linear_algebra` for
the assumptions (non-singular, symmetric, distinct eigenvalues and singular values).

Example:
    >>> import numpy as np, chainrule as cr
    >>> import chainrule.linalg as la
    >>> cr.grad(lambda a: la.det(a))(np.array([[2.0, 0.0], [0.0, 3.0]]))
    array([[3., 0.],
           [0., 2.]])
"""

from __future__ import annotations

from .ops.arrays import matrix_transpose
from .ops.contraction import matmul, outer, tensordot
from .ops.declare import declared_in
from .ops.linear_algebra import EighResult, QRResult, SlogdetResult, SVDResult
from .ops.linear_algebra import linalg_diagonal as diagonal
from .ops.linear_algebra import linalg_trace as trace
from .ops.linear_algebra.eig import EigResult
from .ops.linear_algebra.solve import LstsqResult
from .ops.products import linalg_cross as cross
from .ops.products import vecdot
from .ops.queries import matrix_rank

LinAlgError = __import__("numpy").linalg.LinAlgError

# the functions declared public here (inv, det, eigh, svd, ...: ops/linear_algebra/), by their declarations
globals().update(declared_in("linalg"))

__all__ = [
    "EigResult", "EighResult", "LinAlgError", "LstsqResult", "QRResult", "SVDResult", "SlogdetResult", "cross",
    "diagonal", "matmul", "matrix_rank", "matrix_transpose", "outer", "tensordot", "trace", "vecdot",
]
__all__ += sorted(declared_in("linalg"))
