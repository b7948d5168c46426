"""Helpers shared by the ``numpy.linalg`` modules (``solve``, ``decompositions``, ``norms``).

Each works on ndarrays and on Tensors (NumPy functions and operators only), so a rule built from
them is recorded under ``create_graph`` and can be differentiated again.

Example:
    >>> import numpy as np
    >>> from chainrule.ops.linear_algebra.common import inverse_gaps
    >>> inverse_gaps(np.array([1.0, 3.0]))
    array([[ 0. ,  0.5],
           [-0.5,  0. ]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autodiff import batch_levels as _batching
from ...core.device import xp_of
from .. import elementwise
from .._define import conj, is_complex, raw, shape_of


def transpose_last(x: Any) -> Any:
    """Swap the last two axes (the transpose of each matrix in a stack)."""
    return np.swapaxes(x, -1, -2)


def conj_transpose(a: Any) -> Any:
    """The conjugate transpose of the last two axes."""
    return conj(transpose_last(a))


def from_lower(t: Any) -> Any:
    """The symmetric (Hermitian) matrix that NumPy's cholesky and eigh read from ``t``: its lower triangle,
    mirrored (conjugated), with the real part of the diagonal (LAPACK ignores its imaginary part)."""
    low = np.tril(t, -1)
    return low + conj_transpose(low) + diag_embed(real_part(diag_part(t)))


def hermitian_part(t: Any) -> Any:
    """``(t + t^H) / 2``: the tangent, or the gradient, of a function that reads a symmetric (Hermitian) matrix.

    cholesky, eigh and eigvalsh read one triangle of their input, but their derivatives are those of the
    function of the symmetric part, as PyTorch's and JAX's: the gradient is symmetric (a gradient step keeps a
    symmetric matrix symmetric) and agrees with finite differences along every symmetric direction, the only
    ones in which a symmetric input can move."""
    return (t + conj_transpose(t)) / 2


def hermitian_read(a: Any) -> Any:
    """The Hermitian matrix read from ``a``'s lower triangle (its value: :func:`from_lower`), differentiated as
    ``a`` itself: PyTorch's ``pinv(hermitian=True)`` reads one triangle and differentiates the general pseudo-inverse
    (its ``pinv_backward``), which on a Hermitian input is this gradient."""
    return a + (from_lower(a) - a).detach()


def real_part(x: Any) -> Any:
    """The real part of a complex value (traced for Tensors); a real value itself."""
    return np.real(x) if is_complex(x) else x


def diag_part(m: Any) -> Any:
    return np.diagonal(m, axis1=-2, axis2=-1)


def diag_embed(v: Any) -> Any:
    """Diagonal matrices with ``v`` (..., n) on their diagonals."""
    n = np.shape(v)[-1]
    return np.expand_dims(v, -1) * xp_of(raw(v)).eye(n, dtype=np.result_type(raw(v)))


def inverse_gaps(w: Any) -> Any:
    """F[..., i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it (inf where two values are equal)."""
    gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    eye = xp_of(raw(w)).eye(np.shape(w)[-1], dtype=bool)
    return np.where(eye, 0.0, 1 / np.where(eye, 1.0, gaps))


def modulus(x: Any) -> Any:
    """|x| for complex x (norms are of moduli), x itself for real x."""
    return elementwise.abs(x) if is_complex(x) else x


def describe(a: Any) -> str:
    """"the 3x3 matrix" or "a 3x3 matrix of the stack (2,)": the words "shape"/"dimension" would make
    the forward pass's error handler read it as a broadcasting error."""
    s = shape_of(a)
    return f"a {s[-2]}x{s[-1]} matrix of the stack {s[:-2]}" if len(s) > 2 else f"the {s[-2]}x{s[-1]} matrix"


def singular_error(name: str, a: Any, what: str, fix: str) -> np.linalg.LinAlgError:
    return np.linalg.LinAlgError(f"{name}: {describe(a)} is singular, so {what}; {fix}")


def guarded(name: str, fn: Any, what: str, fix: str) -> Any:
    """NumPy's ``fn``, with its bare "Singular matrix" replaced by an error naming ``name`` and the matrix."""

    def run(a: Any, *rest: Any) -> Any:
        try:
            return fn(a, *rest)
        except np.linalg.LinAlgError:
            raise singular_error(name, a, what, fix) from None

    return run


def checked_inv(name: str, a: Any, what: str, fix: str) -> Any:
    """inv(a) inside ``name``'s rules; a singular matrix names ``name``, its shape and the way out."""
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise singular_error(name, a, what, fix) from None


def require_square(name: str, a: Any) -> None:
    s = shape_of(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise np.linalg.LinAlgError(f"{name}: needs square matrices (..., n, n), got shape {s}")


def require_matrices(name: str, a: Any) -> tuple[int, ...]:
    s = shape_of(a)
    if len(s) < 2:
        raise np.linalg.LinAlgError(f"{name}: needs matrices (..., m, n), got shape {s}")
    return s


def require_full_rank(name: str, a: Any) -> None:
    s = shape_of(a)
    whole = raw(a)
    while isinstance(whole, _batching.BATCHED):  # under vmap: every example of the batch must have full rank
        whole = raw(whole.value)
    if np.any(np.linalg.matrix_rank(whole) < min(s[-2], s[-1])):
        raise np.linalg.LinAlgError(f"{name}: the {s[-2]}x{s[-1]} matrix is rank-deficient; chainrule's {name} needs "
                                    "full rank (its derivative does not exist where the rank changes)")


def total_of(parts: list[Any], like: Any) -> Any:
    """The sum of the gradient contributions of the outputs that got a cotangent (zeros if none did)."""
    if not parts:
        values = raw(like)
        return xp_of(values).zeros(np.shape(values), dtype=np.result_type(values))  # where like is
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out
