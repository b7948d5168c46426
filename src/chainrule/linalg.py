"""``chainrule.linalg``: NumPy's linear algebra, differentiable (``import chainrule.linalg as la``).

The same functions answer ``np.linalg.<name>(tensor)``. See :mod:`chainrule.ops.linalg` for
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
from .ops.eig import EigResult, eig, eigvals
from .ops.linalg import (
    EighResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    cholesky,
    cond,
    det,
    eigh,
    eigvalsh,
    inv,
    lstsq,
    matrix_norm,
    matrix_power,
    multi_dot,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    tensorinv,
    tensorsolve,
    vector_norm,
)
from .ops.linalg import linalg_diagonal as diagonal
from .ops.linalg import linalg_trace as trace
from .ops.products import linalg_cross as cross
from .ops.products import vecdot
from .ops.queries import matrix_rank

LinAlgError = __import__("numpy").linalg.LinAlgError

__all__ = [
    "EigResult", "EighResult", "LinAlgError", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cond", "cross",
    "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm",
    "matrix_power", "matrix_transpose", "matrix_rank", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet",
    "solve", "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm",
]
