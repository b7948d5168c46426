"""The matrix exponential, ``expm(A) = I + A + A^2/2! + ...``, differentiable to any order (PyTorch's
``torch.linalg.matrix_exp``).

The value is Higham's (2005) scaling and squaring with Padé approximants (degree 3 to 13, by the 1-norm),
written with the array module of the input (NumPy on the host, CuPy on a GPU): no SciPy needed. Each matrix
of a stack gets its own degree and power of two, so a stack gives the values each matrix alone would.

The derivative is the Fréchet derivative ``L(A, E)``, read off the top right block of the exponential of
a matrix twice as large (Mathias 1996; PyTorch does the same)::

    expm([[A, E], [0, A]]) = [[expm(A), L(A, E)], [0, expm(A)]]

The forward rule is ``L(A, T)``, the reverse rule ``L(A^T, G)`` (for complex ``A`` the transpose: JAX's
pairing, as every rule here; PyTorch's gradient is its conjugate). Both call ``matrix_exp`` itself, so under
``create_graph`` they are recorded and differentiate again (each order doubles the matrix).

Example:
    >>> import numpy as np, chainrule as cr
    >>> cr.matrix_exp(cr.Tensor([[0.0, 1.0], [0.0, 0.0]])).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    >>> cr.grad(lambda a: cr.matrix_exp(a).sum())(np.zeros((1, 1)))   # d e^a / da at 0
    array([[1.]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...autodiff.primitive import Primitive
from ...core.device import xp_of
from .._define import raw, shape_of
from ..declare import declare_function
from .common import require_square, transpose_last


def _pade_coefficients(m: int) -> tuple[float, ...]:
    """The coefficients b_j of the (m, m) Padé approximant of exp, scaled so that b_m = 1 (exact integers)."""
    return tuple(float(math.factorial(2 * m - j) * math.factorial(m) // math.factorial(j)
                       // math.factorial(m - j) // math.factorial(m)) for j in range(m + 1))


# each Padé degree and the 1-norm up to which it gives the exponential to double precision (Higham 2005)
_THETA = {3: 1.495585217958292e-2, 5: 2.539398330063230e-1, 7: 9.504178996162932e-1, 9: 2.097847961257068,
          13: 5.371920351148152}
_PADE = {m: _pade_coefficients(m) for m in _THETA}


def _pade(a: Any, m: int, xp: Any) -> Any:
    """The (m, m) Padé approximant of ``expm`` of each matrix of the stack ``a``: ``(V - U)^-1 (V + U)``."""
    b = _PADE[m]
    eye = xp.eye(a.shape[-1], dtype=a.dtype)
    powers = [eye, a @ a]  # even powers I, A^2, A^4, A^6
    for _ in range(2 if m == 13 else m // 2 - 1):
        powers.append(powers[-1] @ powers[1])
    if m == 13:  # Higham's evaluation: A^6 (b13 A^6 + b11 A^4 + b9 A^2) + ...
        i, a2, a4, a6 = powers
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * i)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * i
    else:
        u = a @ sum(b[2 * k + 1] * p for k, p in enumerate(powers))
        v = sum(b[2 * k] * p for k, p in enumerate(powers))
    return xp.linalg.solve(v - u, v + u)


def expm_values(a: Any) -> Any:
    """``expm`` of each matrix of the stack ``a`` (arrays of NumPy or CuPy, float or complex): each matrix
    with the lowest Padé degree its 1-norm allows, or degree 13 after halving it ``s`` times and squaring
    the result ``s`` times."""
    xp = xp_of(a)
    if a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    if a.size == 0:
        return a.copy()
    norm = xp.abs(a).sum(axis=-2).max(axis=-1)  # the 1-norm of each matrix
    norm = xp.where(xp.isfinite(norm), norm, 0.0)  # (inf and NaN give NaN whatever the degree)
    squarings = xp.ceil(xp.log2(xp.maximum(norm / _THETA[13], 1.0))).astype(np.int64)  # ||a / 2^s||_1 <= theta
    degree = xp.full(norm.shape, 13, dtype=np.int64)
    for m in (9, 7, 5, 3):
        degree = xp.where(norm <= _THETA[m], m, degree)
    flat, degree, squarings = a.reshape((-1, *a.shape[-2:])), degree.reshape(-1), squarings.reshape(-1)
    out = xp.empty_like(flat)
    for m in _THETA:
        which = xp.nonzero(degree == m)[0]
        if which.size == 0:
            continue
        part = flat[which]
        if m == 13:
            s = squarings[which]
            r = _pade(part / xp.asarray(2.0 ** s, dtype=part.real.dtype)[:, None, None], 13, xp)
            for k in range(int(s.max())):  # square each matrix as often as it was halved
                r = xp.where((s > k)[:, None, None], r @ r, r)
        else:
            r = _pade(part, m, xp)
        out[which] = r
    return out.reshape(a.shape)


def frechet(a: Any, e: Any) -> Any:
    """The Fréchet derivative ``L(a, e)`` of ``expm`` at ``a`` in the direction ``e``: the top right block of
    ``expm([[a, e], [0, a]])``, taken with ``matrix_exp`` itself (recorded on Tensors)."""
    n = shape_of(a)[-1]
    dtype = np.result_type(raw(a), raw(e))
    zero = xp_of(raw(a)).zeros(shape_of(a), dtype=dtype)
    top = np.concatenate([a, e], axis=-1)
    bottom = np.concatenate([zero, a], axis=-1)
    return matrix_exp(np.concatenate([top, bottom], axis=-2))[..., :n, n:]


_matrix_exp = Primitive("matrix_exp", expm_values, reads=(0,))
_matrix_exp.defvjp(lambda g, ans, a: frechet(transpose_last(a), g))
_matrix_exp.defjvp(lambda t, ans, a: frechet(a, t))


def matrix_exp(a: Any) -> Any:
    """The matrix exponential of each square matrix in the stack ``a`` (..., n, n): PyTorch's
    ``torch.linalg.matrix_exp`` (``scipy.linalg.expm``), differentiable to any order in both modes.

    Example:
        >>> import chainrule as cr
        >>> t = cr.Tensor([[0.0, -1.0], [1.0, 0.0]]) * 3.141592653589793   # a rotation by pi
        >>> [[round(v, 6) + 0.0 for v in row] for row in t.matrix_exp().tolist()]
        [[-1.0, 0.0], [0.0, -1.0]]
    """
    require_square("matrix_exp", a)
    return _matrix_exp(a)


declare_function(matrix_exp, primitive=_matrix_exp, method=True, namespaces=("ops", "linalg"),
                 torch="torch.linalg.matrix_exp", kind="primitive", cases="none")
