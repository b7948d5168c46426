"""The LU factorisation with partial pivoting, differentiable (PyTorch's ``torch.linalg.lu_factor``, ``lu``,
``lu_solve``, ``inv_ex``, and ``torch.lu_unpack``), in NumPy (or CuPy): no SciPy needed.

``A = P L U``: ``L`` unit lower triangular, ``U`` upper triangular, ``P`` a permutation chosen on the values
(the largest entry of each column below the diagonal, LAPACK's ``getrf``; ``pivots`` is LAPACK's 1-based
row swaps, int32, as PyTorch's). ``P`` is piecewise constant, so the derivatives are those of the
factorisation of ``P^T A`` without pivoting: one primitive, ``lu_unpivoted`` (square matrices), whose rules
(PyTorch's ``linalg_lu_backward``) are written with triangular solves, so they are recorded under
``create_graph`` and derivatives of every order exist. Assumptions: square matrices; a non-zero pivot in
every column for the derivative (a singular matrix factors, its derivative is inf / NaN). The factorisation
without pivoting is holomorphic, so for complex input the same rules hold (JAX's pairing, transposes; PyTorch's
gradient is the conjugate).

Example:
    >>> import numpy as np, chainrule as cr
    >>> p, l, u = cr.linalg.lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> p.tolist(), l.tolist(), u.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [0.3333333333333333, 1.0]], [[3.0, 4.0], [0.0, 0.6666666666666667]])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...autodiff.primitive import Primitive
from ...core.device import is_off_host, xp_of
from ...tensor import Tensor
from .._define import raw, shape_of
from ..declare import declare_function
from ..shape import take_along_axis
from .common import conj_transpose, require_square, transpose_last
from .solve import inv
from .triangular import solve_triangular


class LUFactorResult(NamedTuple):
    LU: Any  # noqa: N815  (PyTorch's field name)
    pivots: Any


class LUResult(NamedTuple):
    P: Any  # noqa: N815
    L: Any  # noqa: N815
    U: Any  # noqa: N815


class InvExResult(NamedTuple):
    inverse: Any
    info: Any


def eliminate(a: Any, pivot: bool = True) -> tuple[Any, Any, Any, Any]:
    """Gaussian elimination of each matrix of the stack ``a`` (..., n, n): the packed factors (``L`` below the
    diagonal, ``U`` on and above), the row order ``perm`` (``a[perm] = L U``), LAPACK's 1-based ``pivots`` and
    ``info`` (the first zero pivot, 1-based; 0 if none), as ``getrf`` gives them."""
    xp = xp_of(a)
    n = a.shape[-1]
    lu = a.astype(np.result_type(a.dtype, np.float64) if a.dtype.kind not in "fc" else a.dtype, copy=True)
    flat = lu.reshape(-1, n, n)
    count = flat.shape[0]
    rows = xp.arange(count)
    perm = xp.tile(xp.arange(n), (count, 1))
    pivots = xp.tile(xp.arange(1, n + 1, dtype=np.int32), (count, 1))
    info = xp.zeros(count, dtype=np.int32)
    for k in range(n):
        if pivot:
            p = k + xp.argmax(xp.abs(flat[:, k:, k]), axis=1)
            pivots[:, k] = (p + 1).astype(np.int32)
            flat[rows, k], flat[rows, p] = flat[rows, p], flat[rows, k].copy()
            perm[rows, k], perm[rows, p] = perm[rows, p], perm[rows, k].copy()
        head = flat[:, k, k]
        zero = head == 0
        info = xp.where(zero & (info == 0), k + 1, info).astype(np.int32)
        below = flat[:, k + 1:, k] / xp.where(zero, 1, head)[:, None]  # (LAPACK leaves a zero column as it is)
        flat[:, k + 1:, k] = below
        flat[:, k + 1:, k + 1:] -= below[:, :, None] * flat[:, k, None, k + 1:]
    lead = a.shape[:-2]
    return lu, perm.reshape(*lead, n), pivots.reshape(*lead, n), info.reshape(lead)


def _factors(packed: Any) -> tuple[Any, Any]:
    """``L`` (unit diagonal) and ``U`` from the packed factors."""
    eye = xp_of(raw(packed)).eye(shape_of(packed)[-1], dtype=np.result_type(raw(packed)))
    return np.tril(packed, -1) + eye, np.triu(packed)


def _lu_vjp(g: Any, ans: Any, b: Any) -> Any:
    lower, upper = _factors(ans)
    phi = np.tril(transpose_last(lower) @ np.tril(g, -1), -1) + np.triu(np.triu(g) @ transpose_last(upper))
    left = solve_triangular(transpose_last(lower), phi, upper=True, unitriangular=True)  # L^-T phi
    return solve_triangular(transpose_last(upper), left, upper=False, left=False)  # ... U^-T


def _lu_jvp(t: Any, ans: Any, b: Any) -> Any:
    lower, upper = _factors(ans)
    m = solve_triangular(upper, solve_triangular(lower, t, upper=False, unitriangular=True), upper=True, left=False)
    return lower @ np.tril(m, -1) + np.triu(m) @ upper


_lu_unpivoted = Primitive("lu_unpivoted", lambda b: eliminate(b, pivot=False)[0], reads=("ans",))
_lu_unpivoted.defvjp(_lu_vjp)
_lu_unpivoted.defjvp(_lu_jvp)


def _as_like(x: Any, like: Any) -> Any:
    """An index array as a Tensor when ``like`` is one (PyTorch's results are Tensors), else as it is."""
    return Tensor._wrap(x) if isinstance(like, Tensor) else x


def _ordered(a: Any, perm: Any) -> Any:
    """The rows of each matrix of ``a`` in the order ``perm`` (``P^T a``), differentiably."""
    return take_along_axis(a, xp_of(perm).broadcast_to(perm[..., :, None], shape_of(a)), -2)


def values_of(a: Any) -> Any:
    """The values of ``a`` where they are (the host or a device); under vmap a batched value refuses, naming
    vmap (the pivots are chosen on the values, which vmap cannot batch)."""
    values = raw(a)
    return values if is_off_host(values) else np.asarray(values)


def _packed(name: str, a: Any, pivot: bool) -> tuple[Any, Any, Any]:
    require_square(name, a)
    values = values_of(a)
    _, perm, pivots, _ = eliminate(values, pivot)
    if values.dtype.kind not in "fc":
        a = a.astype(np.float64) if isinstance(a, Tensor) else values.astype(np.float64)
    return _lu_unpivoted(_ordered(a, perm) if pivot else a), perm, pivots


def lu_factor(A: Any, *, pivot: bool = True) -> LUFactorResult:  # noqa: N803
    """PyTorch's ``torch.linalg.lu_factor``: ``(LU, pivots)``, the factors packed in one matrix and LAPACK's
    1-based row swaps (int32). ``pivot=False``: no row swaps (fails on a zero pivot)."""
    packed, _, pivots = _packed("lu_factor", A, pivot)
    return LUFactorResult(packed, _as_like(pivots, packed))


def _permutation(perm: Any, dtype: Any) -> Any:
    """``P`` with ``A = P L U`` from the row order ``perm`` (``P^T A = A[perm]``)."""
    eye = xp_of(perm).eye(perm.shape[-1], dtype=dtype)
    return np.swapaxes(eye[perm], -1, -2)


def lu(A: Any, *, pivot: bool = True) -> LUResult:  # noqa: N803
    """PyTorch's ``torch.linalg.lu``: ``(P, L, U)`` with ``A = P L U``."""
    packed, perm, _ = _packed("lu", A, pivot)
    lower, upper = _factors(packed)
    p = _permutation(perm, np.result_type(raw(packed))) if pivot else xp_of(perm).empty((0,))
    return LUResult(_as_like(p, packed), lower, upper)


def _perm_of_pivots(pivots: Any) -> Any:
    """The row order ``perm`` that LAPACK's 1-based row swaps make."""
    values = raw(pivots)
    xp = xp_of(values)
    swaps = xp.asarray(values).astype(np.int64) - 1
    n = swaps.shape[-1]
    flat = swaps.reshape(-1, n)
    perm = xp.tile(xp.arange(n), (flat.shape[0], 1))
    rows = xp.arange(flat.shape[0])
    for k in range(n):
        p = flat[:, k]
        perm[rows, k], perm[rows, p] = perm[rows, p], perm[rows, k].copy()
    return perm.reshape(swaps.shape)


def lu_unpack(LU_data: Any, LU_pivots: Any, unpack_data: bool = True, unpack_pivots: bool = True) -> LUResult:  # noqa: N803
    """PyTorch's ``torch.lu_unpack``: ``(P, L, U)`` from the packed factors and pivots of ``lu_factor``."""
    require_square("lu_unpack", LU_data)
    xp = xp_of(raw(LU_data))
    dtype = np.result_type(raw(LU_data))
    p = _permutation(_perm_of_pivots(LU_pivots), dtype) if unpack_pivots else xp.empty((0,), dtype=dtype)
    lower, upper = _factors(LU_data) if unpack_data else (xp.empty((0,), dtype=dtype),) * 2
    return LUResult(_as_like(p, LU_data), lower, upper)


def lu_solve(LU: Any, pivots: Any, B: Any, *, left: bool = True, adjoint: bool = False) -> Any:  # noqa: N803
    """PyTorch's ``torch.linalg.lu_solve``: ``X`` with ``A X = B`` from ``lu_factor``'s ``(LU, pivots)``
    (``adjoint``: ``A^H X = B``; ``left=False``: ``X A = B`` or ``X A^H = B``)."""
    require_square("lu_solve", LU)
    lower, upper = _factors(LU)
    p = _permutation(_perm_of_pivots(pivots), np.result_type(raw(LU), raw(B)))
    if left and not adjoint:  # X = U^-1 L^-1 P^T B
        y = solve_triangular(lower, transpose_last(p) @ B, upper=False, unitriangular=True)
        return solve_triangular(upper, y, upper=True)
    if left:  # A^H = U^H L^H P^T: X = P L^-H U^-H B
        y = solve_triangular(conj_transpose(upper), B, upper=False)
        return p @ solve_triangular(conj_transpose(lower), y, upper=True, unitriangular=True)
    if not adjoint:  # X = B U^-1 L^-1 P^T
        y = solve_triangular(upper, B, upper=True, left=False)
        return solve_triangular(lower, y, upper=False, left=False, unitriangular=True) @ transpose_last(p)
    y = solve_triangular(conj_transpose(lower), B @ p, upper=True, left=False, unitriangular=True)  # B P L^-H U^-H
    return solve_triangular(conj_transpose(upper), y, upper=False, left=False)


def inv_ex(A: Any, *, check_errors: bool = False) -> InvExResult:  # noqa: N803
    """PyTorch's ``torch.linalg.inv_ex``: ``(inverse, info)``, ``info`` 0 for an invertible matrix, else the
    1-based position of the first zero pivot of its LU factorisation (its inverse is then NaN). With
    ``check_errors=True`` a singular matrix raises."""
    require_square("inv_ex", A)
    values = values_of(A)
    _, _, _, info = eliminate(values)
    singular = info > 0
    if check_errors and bool(singular.any()):
        raise np.linalg.LinAlgError(f"inv_ex: the matrix is singular (info {int(info.max())}: a zero pivot in the LU "
                                    "factorisation); it has no inverse")
    xp = xp_of(values)
    if not bool(singular.any()):
        return InvExResult(inv(A), _as_like(info, A))
    eye = xp.eye(values.shape[-1], dtype=np.result_type(values.dtype, np.float64))
    flag = singular[..., None, None]
    inverse = inv(np.where(flag, eye, A))
    return InvExResult(np.where(flag, xp.asarray(np.nan, dtype=eye.dtype), inverse), _as_like(info, A))


declare_function(lu_factor, namespaces=("linalg",), torch="torch.linalg.lu_factor", cases="none",
                 primitive=_lu_unpivoted, kind="primitive")
declare_function(lu, namespaces=("linalg",), torch="torch.linalg.lu", cases="none")
declare_function(lu_unpack, torch="torch.lu_unpack", cases="none")
declare_function(lu_solve, namespaces=("linalg",), torch="torch.linalg.lu_solve", cases="none")
declare_function(inv_ex, namespaces=("linalg",), torch="torch.linalg.inv_ex", cases="none")
