"""``chainrule.scipy.linalg``: SciPy's (and ``jax.scipy.linalg``'s) signatures over :mod:`chainrule.linalg`.

SciPy's spellings differ from NumPy's and PyTorch's: ``cholesky`` returns the upper factor unless ``lower=True``,
``solve_triangular`` takes ``lower=`` and ``trans=`` and a vector right-hand side, ``cho_factor`` returns the
factor with its ``lower`` flag for ``cho_solve``, ``eigh`` takes ``eigvals_only=``.

Example:
    >>> import numpy as np
    >>> from chainrule.scipy import linalg
    >>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
    >>> np.allclose(linalg.cho_solve(linalg.cho_factor(a), np.array([1.0, 2.0])), np.linalg.solve(a, [1.0, 2.0]))
    True
"""

from __future__ import annotations

from typing import Any

from .. import linalg as _linalg
from .. import numpy as cnp
from ..ops.pytorch.common import declared

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "solve", "inv", "det", "eigh", "expm",
           "block_diag", "svd", "qr"]


def cholesky(a: Any, lower: bool = False) -> Any:
    """The Cholesky factor of ``a``: upper (``U^T U = a``, SciPy's default) or lower (``lower=True``)."""
    return _linalg.cholesky(a, upper=not lower)


def cho_factor(a: Any, lower: bool = False) -> tuple[Any, bool]:
    """``(c, lower)`` for :func:`cho_solve` (``c`` the factor :func:`cholesky` gives)."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any) -> Any:
    """``x`` with ``a x = b``, from ``cho_factor(a)``; ``b`` a vector or a matrix."""
    c, lower = c_and_lower
    return _on_columns(b, lambda m: declared("cholesky_solve")(m, c, upper=not lower))


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False, unit_diagonal: bool = False) -> Any:
    """``x`` with ``op(a) x = b`` for triangular ``a``: ``trans`` 0 or "N" (``a``), 1 or "T" (``a^T``), 2 or "C"
    (``a^H``); ``lower`` says which triangle ``a`` holds; ``b`` a vector or a matrix."""
    if trans in (1, "T", 2, "C"):
        a = cnp.swapaxes(cnp.conj(a) if trans in (2, "C") else a, -1, -2)
        lower = not lower
    elif trans not in (0, "N"):
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2 or 'N', 'T', 'C', got {trans!r}")
    return _on_columns(b, lambda m: _linalg.solve_triangular(a, m, upper=not lower, unitriangular=unit_diagonal))


def solve(a: Any, b: Any, assume_a: str = "gen", lower: bool = False) -> Any:
    """``x`` with ``a x = b`` (``assume_a`` is a hint SciPy uses to pick a method; the answer is the same)."""
    return _on_columns(b, lambda m: _linalg.solve(a, m))


def inv(a: Any) -> Any:
    return _linalg.inv(a)


def det(a: Any) -> Any:
    return _linalg.det(a)


def eigh(a: Any, lower: bool = True, eigvals_only: bool = False) -> Any:
    """``(w, v)`` of a symmetric (Hermitian) ``a`` from the triangle ``lower`` names; ``w`` alone with
    ``eigvals_only``."""
    w, v = _linalg.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def expm(a: Any) -> Any:
    """The matrix exponential."""
    return _linalg.matrix_exp(a)


def block_diag(*arrs: Any) -> Any:
    return declared("block_diag")(*arrs)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    return _linalg.svd(a, full_matrices=full_matrices) if compute_uv else _linalg.svdvals(a)


def qr(a: Any, mode: str = "full") -> Any:
    """``(q, r)``: ``mode`` "full" (SciPy's default: ``q`` square) or "economic" (``q`` with ``a``'s columns)."""
    if mode not in ("full", "economic"):
        raise ValueError(f"qr: mode must be 'full' or 'economic', got {mode!r}")
    return _linalg.qr(a, mode="complete" if mode == "full" else "reduced")


def _on_columns(b: Any, solve_matrix: Any) -> Any:
    """``solve_matrix`` of ``b`` as a matrix: a vector goes in as one column and comes out as a vector."""
    if cnp.ndim(b) == 1:
        return solve_matrix(cnp.expand_dims(b, -1))[..., 0]
    return solve_matrix(b)
