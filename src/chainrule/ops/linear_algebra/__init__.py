"""``numpy.linalg`` with derivatives: inv, det, slogdet, solve, cholesky, eigh, svd, qr, norm...

Every function works on stacks of matrices (leading axes are batch axes) and is differentiable
to any order in both modes: the rules are written with NumPy functions, so on Tensors they are
recorded too. The functions live by job, each module stating its assumptions:

- :mod:`.solve`: inv, det, slogdet, solve, matrix_power, pinv, lstsq, multi_dot,
  tensorinv, tensorsolve (non-singular or full-rank matrices; ``det`` also at singular ones);
- :mod:`.decompositions` (svd, svdvals, qr) and :mod:`.symmetric` (cholesky, eigh, eigvalsh, with PyTorch's and
  NumPy's gradient conventions): each decomposition one
  primitive with several outputs (symmetric input, distinct eigenvalues / singular values for
  the vectors, no gradient to the columns ``full_matrices`` / ``mode='complete'`` add);
- :mod:`.norms`: norm, vector_norm, matrix_norm, cond, trace, diagonal;
- :mod:`.eig`: eig, eigvals for general square matrices.

This module gathers their public names (``chainrule.linalg`` reads the declarations).

Example:
    >>> import chainrule as cr, numpy as np
    >>> from chainrule import linalg
    >>> cr.grad(lambda a: linalg.svd(a, compute_uv=False).sum())(np.diag([3.0, 2.0]))
    array([[1., 0.],
           [0., 1.]])
"""

from __future__ import annotations

from .common import require_square
from .decompositions import QRResult, SVDResult, qr, svd, svdvals
from .legacy import CholeskyExResult, SVDLegacyResult, cholesky_ex
from .lu import InvExResult, LUFactorResult, LUResult, inv_ex, lu, lu_factor, lu_solve, lu_unpack
from .matrix_exp import matrix_exp
from .norms import cond, linalg_diagonal, linalg_trace, matrix_norm, norm, vector_norm
from .solve import (
    SlogdetResult,
    det,
    inv,
    lstsq,
    matrix_power,
    multi_dot,
    pinv,
    slogdet,
    solve,
    tensorinv,
    tensorsolve,
)
from .symmetric import EighResult, cholesky, eigh, eigvalsh
from .triangular import TriangularSolveResult, cholesky_inverse, cholesky_solve, solve_triangular, triangular_solve

__all__ = [
    "EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cond", "det", "eigh", "eigvalsh", "inv",
    "linalg_diagonal", "linalg_trace", "lstsq", "matrix_exp", "matrix_norm", "matrix_power", "multi_dot", "norm",
    "pinv", "qr", "require_square", "slogdet", "solve", "svd", "svdvals", "tensorinv", "tensorsolve", "vector_norm",
    "CholeskyExResult", "SVDLegacyResult", "cholesky_ex", "InvExResult", "LUFactorResult", "LUResult", "inv_ex",
    "lu", "lu_factor", "lu_solve", "lu_unpack",
    "TriangularSolveResult", "cholesky_inverse", "cholesky_solve", "solve_triangular", "triangular_solve",
]
