"""Triangular solves and what Cholesky factors solve, differentiable (PyTorch's spellings):
``linalg.solve_triangular``, ``triangular_solve`` (the older one, returning ``(solution, A)``),
``cholesky_solve``, ``cholesky_inverse``.

Each reads only the triangle it is told to (``upper``; ``unitriangular``: ones on the diagonal, which is
not read), as LAPACK does, and is written with ``solve``, ``tril`` / ``triu`` and ``matmul``: derivatives of
every order in both modes come with them. The gradient is the derivative of that function, so the entries
that are not read get zero. That is PyTorch's gradient for ``solve_triangular`` and ``triangular_solve``;
for ``cholesky_solve`` and ``cholesky_inverse`` PyTorch differentiates ``L @ L^H`` with the whole of ``L``,
so its gradient also has entries in the triangle never read (ours agrees with it on the triangle read, and
with finite differences everywhere).

Example:
    >>> import numpy as np, chainrule as cr
    >>> a = np.array([[2.0, 1.0], [0.0, 4.0]])
    >>> cr.linalg.solve_triangular(a, np.array([[3.0], [4.0]]), upper=True).tolist()
    [[1.0], [1.0]]
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...core.device import xp_of
from .._define import raw, shape_of
from ..declare import DECLARATIONS, declare_function
from .common import conj_transpose, require_matrices, require_square, transpose_last
from .solve import solve


class TriangularSolveResult(NamedTuple):
    solution: Any
    cloned_coefficient: Any


def _triangle(a: Any, upper: bool, unitriangular: bool = False) -> Any:
    """The triangle of ``a`` a triangular solve reads (``unitriangular``: ones on the diagonal instead)."""
    if not unitriangular:
        return np.triu(a) if upper else np.tril(a)
    eye = xp_of(raw(a)).eye(shape_of(a)[-1], dtype=np.result_type(raw(a)))
    return (np.triu(a, 1) if upper else np.tril(a, -1)) + eye


def _check(name: str, a: Any, b: Any) -> None:
    require_square(name, a)
    require_matrices(name, b)


def solve_triangular(A: Any, B: Any, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Any:  # noqa: N803
    """PyTorch's ``torch.linalg.solve_triangular``: ``X`` with ``A X = B`` (``left=False``: ``X A = B``) for
    triangular ``A`` (its upper triangle if ``upper``, else the lower; ``unitriangular``: a unit diagonal).

    Example:
        >>> import numpy as np, chainrule as cr
        >>> cr.linalg.solve_triangular(np.array([[2.0, 0.0], [1.0, 1.0]]), np.eye(2), upper=False).tolist()
        [[0.5, 0.0], [-0.5, 1.0]]
    """
    _check("solve_triangular", A, B)
    t = _triangle(A, upper, unitriangular)
    if left:
        return solve(t, B)
    return transpose_last(solve(transpose_last(t), transpose_last(B)))


def triangular_solve(b: Any, A: Any, upper: bool = True, transpose: bool = False,  # noqa: N803
                     unitriangular: bool = False) -> TriangularSolveResult:
    """PyTorch's older ``torch.triangular_solve(b, A)``: ``(X, A)`` with ``op(A) X = b``, ``op(A)`` being ``A``'s
    upper (``upper=True``, the default) or lower triangle, transposed when ``transpose``.

    Example:
        >>> import numpy as np, chainrule as cr
        >>> cr.triangular_solve(np.array([[4.0], [2.0]]), np.array([[2.0, 0.0], [0.0, 1.0]])).solution.tolist()
        [[2.0], [2.0]]
    """
    _check("triangular_solve", A, b)
    t = _triangle(A, upper, unitriangular)
    x = solve(transpose_last(t) if transpose else t, b)
    return TriangularSolveResult(x, DECLARATIONS["copy"].function(A))


def cholesky_solve(B: Any, L: Any, upper: bool = False) -> Any:  # noqa: N803
    """PyTorch's ``torch.cholesky_solve(B, L)``: ``X`` with ``A X = B``, ``A = L L^H`` given by its Cholesky
    factor ``L`` (its lower triangle; ``upper=True``: ``A = U^H U``, the upper one).

    Example:
        >>> import numpy as np, chainrule as cr
        >>> cr.cholesky_solve(np.array([[4.0], [2.0]]), np.array([[2.0, 0.0], [0.0, 1.0]])).tolist()
        [[1.0], [2.0]]
    """
    _check("cholesky_solve", L, B)
    t = _triangle(L, upper)
    first, second = (conj_transpose(t), t) if upper else (t, conj_transpose(t))
    return solve(second, solve(first, B))


def cholesky_inverse(L: Any, upper: bool = False) -> Any:  # noqa: N803
    """PyTorch's ``torch.cholesky_inverse(L)``: the inverse of ``A = L L^H`` (``upper=True``: ``U^H U``) from
    its Cholesky factor.

    Example:
        >>> import numpy as np, chainrule as cr
        >>> cr.cholesky_inverse(np.array([[2.0, 0.0], [0.0, 1.0]])).tolist()
        [[0.25, 0.0], [0.0, 1.0]]
    """
    require_square("cholesky_inverse", L)
    n = shape_of(L)[-1]
    eye = xp_of(raw(L)).eye(n, dtype=np.result_type(raw(L)))
    return cholesky_solve(np.broadcast_to(eye, shape_of(L)), L, upper)


declare_function(solve_triangular, namespaces=("linalg",), torch="torch.linalg.solve_triangular", cases="none")
declare_function(triangular_solve, method=True, torch="torch.triangular_solve", cases="none")
declare_function(cholesky_solve, method=True, torch="torch.cholesky_solve", cases="none")
declare_function(cholesky_inverse, method=True, torch="torch.cholesky_inverse", cases="none")
