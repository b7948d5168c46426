"""PyTorch's older linear-algebra spellings, and ``linalg.cholesky_ex``: the Tensor methods ``t.svd()`` (``V``,
not ``Vh``; ``some=``), ``t.qr(some=)``, ``t.cholesky(upper=)``, ``t.lu()`` (``(LU, pivots)``, as
``torch.lu``) and ``b.lu_solve(LU, pivots)``, each the ``numpy.linalg`` decomposition or the solve of
:mod:`.lu` under PyTorch's older signature, so with their derivatives. ``chainrule.svd``, ``qr``,
``cholesky``, ``lu`` and ``lu_solve`` call these methods (``ops/pytorch/functions.py``).

Example:
    >>> import chainrule as cr
    >>> u, s, v = cr.tensor([[3.0, 0.0], [0.0, 2.0]]).svd()
    >>> s.tolist(), v.shape
    ([3.0, 2.0], (2, 2))
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...core.device import xp_of
from ...tensor import Tensor
from .._define import raw, shape_of
from ..declare import declare_function, tensor_method
from .common import conj_transpose, require_square
from .decompositions import qr, svd
from .lu import lu_factor, lu_solve, values_of
from .symmetric import cholesky


class SVDLegacyResult(NamedTuple):
    U: Any  # noqa: N815  (PyTorch's field names)
    S: Any  # noqa: N815
    V: Any  # noqa: N815


class CholeskyExResult(NamedTuple):
    L: Any  # noqa: N815
    info: Any


def _svd(self: Any, some: bool = True, compute_uv: bool = True) -> SVDLegacyResult:
    """PyTorch's older ``svd``: ``(U, S, V)`` with ``A = U diag(S) V^H`` (``V``, not ``Vh``); ``some=True`` the
    reduced factors; ``compute_uv=False``: ``S`` with zero-filled ``U`` (m x m) and ``V`` (n x n), as PyTorch's."""
    if not compute_uv:
        m, n = shape_of(self)[-2:]
        lead, xp = shape_of(self)[:-2], xp_of(raw(self))
        zeros = lambda k: Tensor._wrap(xp.zeros((*lead, k, k), dtype=self.dtype))  # noqa: E731
        return SVDLegacyResult(zeros(m), svd(self, compute_uv=False), zeros(n))
    u, s, vh = svd(self, full_matrices=not some)
    return SVDLegacyResult(u, s, conj_transpose(vh))


def _qr(self: Any, some: bool = True) -> tuple[Any, Any]:
    """PyTorch's older ``qr``: ``(Q, R)``, reduced (``some=True``) or complete."""
    return tuple(qr(self, mode="reduced" if some else "complete"))


def _cholesky(self: Any, upper: bool = False) -> Any:
    """PyTorch's older ``cholesky``: the lower factor ``L`` of ``A = L L^H`` (``upper=True``: ``U``, ``A = U^H U``)."""
    return cholesky(self, upper=upper)


def _lu(self: Any, pivot: bool = True, get_infos: bool = False) -> tuple[Any, ...]:
    """PyTorch's older ``lu``: ``(LU, pivots)`` as ``linalg.lu_factor`` (``get_infos=True``: with LAPACK's
    ``info`` per matrix, 0 where no pivot is zero)."""
    packed, pivots = lu_factor(self, pivot=pivot)
    if not get_infos:
        return packed, pivots
    values = raw(packed)
    diagonal = xp_of(values).diagonal(values, axis1=-2, axis2=-1) == 0
    first = xp_of(values).where(diagonal.any(axis=-1), diagonal.argmax(axis=-1) + 1, 0).astype(np.int32)
    return packed, pivots, Tensor._wrap(first)


def _lu_solve(self: Any, LU_data: Any, LU_pivots: Any) -> Any:  # noqa: N803
    """PyTorch's older ``b.lu_solve(LU_data, LU_pivots)``: ``X`` with ``A X = b``, ``A`` factored by ``lu``."""
    return lu_solve(LU_data, LU_pivots, self)


for _name, _method in (("svd", _svd), ("qr", _qr), ("cholesky", _cholesky), ("lu", _lu), ("lu_solve", _lu_solve)):
    tensor_method(_name, _method)


def cholesky_ex(A: Any, *, upper: bool = False, check_errors: bool = False) -> CholeskyExResult:  # noqa: N803
    """PyTorch's ``torch.linalg.cholesky_ex``: ``(L, info)``, ``info`` 0 where the matrix is positive definite,
    else the order of its first leading minor that is not (``L`` is NaN there). ``check_errors=True``: raise."""
    require_square("cholesky_ex", A)
    values = values_of(A)
    values = values if xp_of(values) is np else values.get()  # (the check runs on the host: a device's array)
    n = values.shape[-1]
    flat = values.reshape(-1, n, n)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    try:
        np.linalg.cholesky(flat if not upper else np.swapaxes(flat, -1, -2))
    except np.linalg.LinAlgError:
        for i, m in enumerate(flat):
            info[i] = _first_failing_minor(m.T if upper else m)
    info = info.reshape(values.shape[:-2])
    if check_errors and info.any():
        raise np.linalg.LinAlgError(f"cholesky_ex: the matrix is not positive definite (its leading minor of order "
                                    f"{int(info.max())} is not)")
    xp = xp_of(raw(A))
    info_here = xp.asarray(info)
    if not info.any():
        return CholeskyExResult(cholesky(A, upper=upper), Tensor._wrap(info_here) if isinstance(A, Tensor)
                                else info_here)
    flag = info_here[..., None, None] > 0
    eye = xp.eye(n, dtype=np.result_type(values.dtype, np.float64))
    factor = cholesky(np.where(flag, eye, A), upper=upper)
    nan = xp.asarray(np.nan, dtype=eye.dtype)
    return CholeskyExResult(np.where(flag, nan, factor), Tensor._wrap(info_here) if isinstance(A, Tensor)
                            else info_here)


def _first_failing_minor(m: np.ndarray) -> int:
    for k in range(1, m.shape[-1] + 1):
        try:
            np.linalg.cholesky(np.asarray(m[:k, :k]))
        except np.linalg.LinAlgError:
            return k
    return 0


declare_function(cholesky_ex, namespaces=("linalg",), torch="torch.linalg.cholesky_ex", cases="none")
