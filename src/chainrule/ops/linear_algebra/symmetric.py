"""The decompositions of a symmetric (Hermitian) matrix, which read one triangle: cholesky, eigh, eigvalsh.

The value reads the lower triangle of the input (as NumPy's and PyTorch's; ``UPLO='U'``/``upper=True``: the upper).
Two spellings differentiate it two ways, as their ecosystems do:

- ``chainrule.linalg`` (and the Tensor methods): PyTorch's and JAX's derivative, that of the function of the
  symmetric part ``(a + a^H) / 2``. The gradient is symmetric (Hermitian), so that a gradient step keeps a
  symmetric matrix symmetric, and it agrees with finite differences along every symmetric direction (the only ones
  a symmetric input can move in; a finite-difference check of ``f(a)`` should perturb ``(a + a.T) / 2``);
- ``numpy.linalg.<name>(tensor)`` and ``chainrule.numpy.linalg``: the derivative of the function of the triangle
  read (HIPS autograd's), zero above the diagonal, which agrees with finite differences in every direction.

For a matrix built symmetric (``b + b.T``) both give the same gradient of ``b``. ``eigh`` vectors need distinct
eigenvalues (repeated ones give inf/NaN; ``eigvalsh`` needs them for second order only). ``cholesky``'s rules are
derived for real matrices (a complex input's derivative raises); ``eigh``'s complex eigenvectors are unique up to
a phase each, and a loss that depends on those phases raises.

Example:
    >>> import chainrule as cr, numpy as np
    >>> a = cr.Tensor([[2.0, 1.0], [0.5, 3.0]], requires_grad=True)
    >>> cr.linalg.eigvalsh(a)[-1].backward(); bool(np.allclose(a.grad.numpy(), a.grad.numpy().T))
    True
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...autodiff.primitive import Primitive
from ...core.device import as_array
from .._define import conj, raw
from ..declare import implements
from .common import (
    conj_transpose,
    describe,
    diag_embed,
    diag_part,
    from_lower,
    hermitian_part,
    inverse_gaps,
    real_part,
    require_square,
    total_of,
    transpose_last,
)

_T = transpose_last


# -- Cholesky -----------------------------------------------------------------------------------------
def _half_lower(x: Any) -> Any:
    """The lower triangle with the diagonal halved."""
    return np.tril(x) - diag_embed(diag_part(x)) / 2


def _chol_vjp(g: Any, ans: Any, a: Any) -> Any:
    linv = np.linalg.inv(ans)
    return hermitian_part(_T(linv) @ _half_lower(_T(ans) @ g) @ linv)


def _chol_jvp(t: Any, ans: Any, a: Any) -> Any:
    linv = np.linalg.inv(ans)
    return ans @ _half_lower(linv @ hermitian_part(t) @ _T(linv))


def _cholesky_fn(a: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(
            f"cholesky: {describe(a)} is not positive definite, so it has no Cholesky factor; check that it is "
            "symmetric with positive eigenvalues (e.g. add eps * I), or use eigh"
        ) from None


_cholesky = Primitive("cholesky", _cholesky_fn, reads=("ans",))
_cholesky.defvjp(_chol_vjp)
_cholesky.defjvp(_chol_jvp)


@implements(namespaces=("linalg",))
def cholesky(a: Any, /, *, upper: bool = False) -> Any:
    """Lower-triangular L with a = L @ L^H (upper=True: U = L^H) for symmetric positive-definite a.

    The lower triangle is read (upper=True: the upper); the gradient is PyTorch's and JAX's, that of the function
    of the symmetric part of ``a`` (``numpy.linalg.cholesky(tensor)`` differentiates the triangle read instead)."""
    require_square("cholesky", a)
    if upper:  # the upper triangle read: the lower factor of a.T, transposed
        return _T(_cholesky(_T(a)))
    return _cholesky(a)


@implements(np.linalg.cholesky, namespaces=())  # public as chainrule.numpy.linalg.cholesky
def numpy_cholesky(a: Any, /, *, upper: bool = False) -> Any:
    """numpy.linalg.cholesky: as :func:`cholesky`, differentiated as the function of the triangle it reads (HIPS
    autograd's convention: it agrees with finite differences in every direction, not only symmetric ones)."""
    require_square("cholesky", a)
    if upper:
        return _T(_cholesky(_T(_read_triangle(a, "U"))))
    return _cholesky(_read_triangle(a))


def _read_triangle(a: Any, uplo: str = "L") -> Any:
    """The symmetric matrix NumPy's cholesky and eigh read from ``a`` (its lower triangle; ``uplo="U"``: upper),
    built with traced ops so that derivatives through it are those of the triangle read (the rules of the
    primitives are those of a symmetric input)."""
    if type(a) is np.ndarray:
        return a
    return from_lower(a) if uplo == "L" else _T(from_lower(_T(a)))


# -- symmetric eigendecomposition: one node, outputs (w, v) ------------------------------------------
# dS (Hermitian) gives dw = real(diag(V^H dS V)) and dV = V (F * (V^H dS V)), F the inverse gaps (the gauge where
# V^H dV has a zero diagonal); the reverse rule is its transpose for the pairing real(sum(g * t)), JAX's:
# G_S = conj(V) (diag(gw) + F * (V^T gV)) V^T. For real matrices conj(V) = V and these are the familiar ones.
def _eigh_vjp(g: tuple[Any, Any], ans: tuple[Any, Any], a: Any, UPLO: str) -> Any:  # noqa: N803
    gw, gv = g
    w, v = ans
    vc = conj(v)
    parts = []
    if gw is not None:  # d w_i = v_i^H da v_i
        parts.append((vc * np.expand_dims(gw, -2)) @ _T(v))
    if gv is not None:  # needs distinct eigenvalues (inverse_gaps)
        vtg = _T(v) @ gv
        _check_phase_free(vtg)
        parts.append(vc @ (inverse_gaps(w) * vtg) @ _T(v))
    return hermitian_part(total_of(parts, v))


def _check_phase_free(vtg: Any) -> None:
    """Complex eigenvectors are unique only up to a phase each; a loss that depends on those phases has no
    derivative (moving v_j to v_j e^(i t) changes it by t imag((V^T gV)_jj), which must be 0)."""
    drift = np.imag(np.diagonal(as_array(raw(vtg)), axis1=-2, axis2=-1))
    if drift.size and np.max(np.abs(drift)) > 1e-8 * (1.0 + np.max(np.abs(raw(vtg)))):
        raise TypeError(
            "eigh: the derivative is not defined for complex eigenvectors through their phases: each eigenvector is "
            "unique only up to a factor e^(i phi), and this function of them depends on it. Differentiate a "
            "phase-free function of them instead (np.abs(v), v @ v.conj().T, |v^H x|)")


def _eigh_jvp(t: Any, ans: tuple[Any, Any], a: Any, UPLO: str) -> tuple[Any, Any]:  # noqa: N803
    w, v = ans
    inner = conj_transpose(v) @ hermitian_part(t) @ v
    with np.errstate(divide="ignore", invalid="ignore"):  # repeated eigenvalues: inf/NaN vector tangents only
        dv = v @ (inverse_gaps(w) * inner)
    return real_part(diag_part(inner)), dv


def _eigh_fn(a: np.ndarray, UPLO: str) -> tuple[np.ndarray, np.ndarray]:  # noqa: N803
    return tuple(np.linalg.eigh(a, UPLO=UPLO))


# the triangle read (UPLO) is NumPy's and PyTorch's, so the values (eigenvectors' signs included) are theirs
_eigh = Primitive("eigh", _eigh_fn, n_outputs=2, reads=("ans",))
_eigh.defvjp(_eigh_vjp)
_eigh.defjvp(_eigh_jvp)


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


def _uplo(uplo: str) -> str:
    if uplo not in ("L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {uplo!r}")
    return uplo


@implements(namespaces=("linalg",))
def eigh(a: Any, UPLO: str = "L") -> EighResult:  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix (distinct eigenvalues assumed).

    One triangle is read (``UPLO``); the gradient is PyTorch's and JAX's, that of the function of the symmetric
    part of ``a`` (``numpy.linalg.eigh(tensor)`` differentiates the triangle read instead)."""
    require_square("eigh", a)
    w, v = _eigh(a, UPLO=_uplo(UPLO))
    return EighResult(w, v)


@implements(namespaces=("linalg",))
def eigvalsh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803
    """Eigenvalues (ascending) of a symmetric matrix (the gradient: as :func:`eigh`'s)."""
    require_square("eigvalsh", a)
    if type(a) is np.ndarray:
        return np.linalg.eigvalsh(a, UPLO=UPLO)
    return _eigh(a, UPLO=_uplo(UPLO))[0]


@implements(np.linalg.eigh, namespaces=())  # public as chainrule.numpy.linalg.eigh
def numpy_eigh(a: Any, UPLO: str = "L") -> EighResult:  # noqa: N803
    """numpy.linalg.eigh: as :func:`eigh`, differentiated as the function of the triangle it reads (HIPS autograd's
    convention: it agrees with finite differences in every direction, not only symmetric ones)."""
    require_square("eigh", a)
    w, v = _eigh(_read_triangle(a, _uplo(UPLO)), UPLO=UPLO)
    return EighResult(w, v)


@implements(np.linalg.eigvalsh, namespaces=())  # public as chainrule.numpy.linalg.eigvalsh
def numpy_eigvalsh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803
    """numpy.linalg.eigvalsh: as :func:`eigvalsh`, differentiated as the function of the triangle it reads."""
    require_square("eigvalsh", a)
    if type(a) is np.ndarray:
        return np.linalg.eigvalsh(a, UPLO=UPLO)
    return _eigh(_read_triangle(a, _uplo(UPLO)), UPLO=UPLO)[0]


# Cholesky's rules are derived for real symmetric matrices (eigh's are written for complex ones too).
_cholesky.no_complex("the rule is derived for real matrices")
