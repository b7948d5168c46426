"""PyTorch's ``parametrizations.orthogonal``: a matrix (or a batch of matrices) kept orthogonal (unitary when
complex) by computing it from an unconstrained original: ``matrix_exp`` or the Cayley map of a skew-symmetric
matrix, or a product of Householder reflectors, with PyTorch's dynamic trivialization (a ``base`` buffer, the
orthogonal matrix the map's identity starts from).

The maps are written with chainrule's differentiable ops, so the gradient reaches the original and an optimiser
step on it keeps the weight orthogonal. Assigning a weight (``right_inverse``, also run when the parametrization
is registered) works on the values, outside the graph, as PyTorch's ``no_grad`` method.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core import defaults
from ...core.device import as_array, move, of
from ...core.state import no_grad
from ...ops._define import xp_where
from ...ops.linear_algebra.matrix_exp import matrix_exp
from ...ops.linear_algebra.solve import solve
from ...ops.shape import concatenate
from ...tensor import Tensor
from ..module import Module
from . import parametrize

MAPS = ("matrix_exp", "cayley", "householder")


def householder_product(a: Any, tau: Any) -> Any:
    """PyTorch's ``linalg.householder_product``: the first ``k`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i
    v_i^H`` with ``v_i`` the ``i``-th column of ``a`` (..., n, k) below the diagonal and 1 on it (LAPACK's
    ``orgqr`` form); differentiable in ``a`` and ``tau``, applied one reflector at a time (last first)."""
    n, k = a.shape[-2], a.shape[-1]
    eye = Tensor._wrap(xp_where(a).eye(n, k, dtype=a.dtype))  # (where a is: a device's array stays there)
    v = a.tril(-1) + eye
    q = eye
    for i in reversed(range(k)):
        vi = v[..., :, i:i + 1]
        q = q - tau[..., i:i + 1, None] * (vi @ (vi.mH @ q))
    return q


def geqrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's ``geqrf`` of real matrices (..., n, k), as PyTorch's ``torch.geqrf``: R on and above the diagonal,
    the Householder vectors below it, and their factors ``tau`` (``dlarfg``'s reflectors, one column at a time)."""
    a = np.array(a, dtype=np.result_type(a, np.float32), copy=True)
    n, k = a.shape[-2:]
    tau = np.zeros(a.shape[:-2] + (min(n, k),), dtype=a.dtype)
    for b in np.ndindex(*a.shape[:-2]):
        m = a[b]
        for i in range(min(n, k)):
            alpha, x = m[i, i], m[i + 1:, i]
            norm = np.linalg.norm(x)
            if norm == 0:
                continue  # H = I (tau 0), as dlarfg
            beta = -np.copysign(np.hypot(alpha, norm), alpha)
            tau[b + (i,)] = (beta - alpha) / beta
            x /= alpha - beta
            m[i, i] = beta
            v = np.concatenate([[1.0], x]).astype(a.dtype)
            m[i:, i + 1:] -= tau[b + (i,)] * np.outer(v, v @ m[i:, i + 1:])
    return a, tau


def _is_orthogonal(q: np.ndarray) -> bool:
    n, k = q.shape[-2:]
    eps = 10.0 * n * np.finfo(q.dtype).eps
    return bool(np.allclose(np.swapaxes(q, -1, -2).conj() @ q, np.eye(k), atol=eps))


def _make_orthogonal(a: np.ndarray) -> np.ndarray:
    """The Q factor of ``a = QR`` (a tall matrix) with R's diagonal made non-negative, as PyTorch's."""
    q, r = np.linalg.qr(a)
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


class _Orthogonal(Module):
    """The parametrization ``orthogonal`` registers (PyTorch's ``_Orthogonal``)."""

    def __init__(self, weight: Any, orthogonal_map: str, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if np.dtype(weight.dtype).kind == "c" and orthogonal_map == "householder":
            raise ValueError("orthogonal: the householder parametrization does not support complex tensors; "
                             "use orthogonal_map='matrix_exp' or 'cayley'")
        self.shape, self.orthogonal_map = tuple(weight.shape), orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Any) -> Any:
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x, n, k = x.mT, k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:
                x = concatenate([x, Tensor._wrap(xp_where(x).zeros(x.shape[:-2] + (n, n - k), dtype=x.dtype))],
                                axis=-1)
            a = x - x.mH
            if self.orthogonal_map == "matrix_exp":
                q = matrix_exp(a)
            else:
                eye = Tensor._wrap(xp_where(a).eye(n, dtype=a.dtype))
                q = solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(-1)
            tau = 2.0 / (1.0 + (a * a).sum(axis=-2))
            signs = Tensor._wrap(xp_where(x).trunc(x.diagonal(dim1=-2, dim2=-1)._data))  # PyTorch's .int()
            q = householder_product(a, tau) * signs[..., None, :]
        if "base" in self._buffers:
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, q: Any) -> Any:
        """The original whose image is ``q`` (PyTorch's): with trivialization, ``base`` becomes ``q`` (made
        orthogonal when it is not; a wide or tall one completed by random columns) and the original ``-I``."""
        with no_grad():
            data = q._data if isinstance(q, Tensor) else np.asarray(q)
            if tuple(data.shape) != self.shape:
                raise ValueError(f"orthogonal: expected a matrix or batch of matrices of shape {self.shape}, got a "
                                 f"tensor of shape {tuple(data.shape)}")
            device = of(data)
            arr = as_array(device.to_host(data) if device.xp is not np else data)
            n, k = arr.shape[-2:]
            transpose = n < k
            if transpose:
                arr, n, k = np.swapaxes(arr, -1, -2), k, n
            if "base" not in self._buffers:
                if self.orthogonal_map != "householder":
                    raise NotImplementedError("orthogonal: a matrix_exp or cayley parametrization cannot be assigned "
                                              "to when use_trivialization=False (PyTorch's limit too)")
                a, tau = geqrf(arr)
                diag = np.einsum("...ii->...i", a[..., :k, :k])
                diag[...] = np.sign(diag) * np.where(tau == 0, -1, 1)
                out = np.swapaxes(a, -1, -2) if transpose else a
                return Tensor._wrap(move(np.ascontiguousarray(out), device))
            if n == k:
                base = arr.copy() if _is_orthogonal(arr) else _make_orthogonal(arr)
            else:
                extra = defaults.generator().standard_normal(arr.shape[:-2] + (n, n - k)).astype(arr.dtype)
                base = _make_orthogonal(np.concatenate([arr, extra], axis=-1))
            self.base = Tensor._wrap(move(base, device))
            neg_eye = np.zeros(self.shape, dtype=data.dtype)
            idx = np.arange(min(self.shape[-2:]))
            neg_eye[..., idx, idx] = -1.0
            return Tensor._wrap(move(neg_eye, device))


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """PyTorch's ``parametrizations.orthogonal``: ``module.<name>`` (a matrix, or a batch of matrices (..., m, n))
    becomes orthogonal (orthonormal columns when m >= n, rows otherwise; unitary when complex), computed from
    ``parametrizations.<name>.original`` by ``orthogonal_map``: ``"matrix_exp"`` or ``"cayley"`` (of the
    skew-symmetric matrix the original's lower triangle gives) or ``"householder"`` (a product of reflectors);
    default ``"matrix_exp"`` for a square or complex matrix, else ``"householder"``. With ``use_trivialization``
    (default) the result is ``base @ map(original)``, ``base`` a buffer: the weight starts as the original weight
    (orthogonalised by QR when it is not orthogonal) and gradient steps on the original keep it orthogonal.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn, optim
        >>> from chainrule.nn.utils.parametrizations import orthogonal
        >>> layer = orthogonal(nn.Linear(3, 5, rng=0, dtype=np.float64))
        >>> opt = optim.SGD(layer.parameters(), lr=0.1)
        >>> for _ in range(3):
        ...     opt.zero_grad(); layer(np.ones((2, 3))).sum().backward(); opt.step()
        >>> w = layer.weight.detach().numpy(); bool(np.allclose(w.T @ w, np.eye(3)))
        True
        >>> list(layer.state_dict())
        ['bias', 'parametrizations.weight.original', 'parametrizations.weight.0.base']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"orthogonal: module {type(module).__name__} has no parameter or buffer named '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"orthogonal: expected a matrix or batch of matrices, got a tensor of {weight.ndim} "
                         "dimensions")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or np.dtype(weight.dtype).kind == "c" else "householder"
    if orthogonal_map not in MAPS:
        raise ValueError(f'orthogonal: orthogonal_map has to be one of "matrix_exp", "cayley", "householder", got '
                         f"{orthogonal_map!r}")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


__all__ = ["householder_product", "orthogonal"]
