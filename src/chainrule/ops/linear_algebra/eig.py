"""``numpy.linalg.eig`` and ``eigvals`` for general (non-symmetric, real or complex) square matrices.

With ``a = V diag(w) V^-1`` and ``W = V^-1 da V``: ``dw = diag(W)`` and ``dV = V (F o W)``,
``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, then projected onto NumPy's normalisation
(LAPACK's: unit 2-norm, largest entry real). Eigenvalues must be distinct. Outputs are complex
unless every eigenvalue is real (NumPy's rule); a real matrix gets the real part of a complex
gradient. ``chainrule.linalg.eig``/``eigvals`` are complex always (PyTorch's and JAX's rule).
One primitive with two outputs (w, v) on one graph node; its rules read the
outputs only. Reverse rules are the transposes of the forward ones (JAX's convention), written with
differentiable ops, so every order works.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...autodiff.primitive import Primitive
from ...core.device import xp_of
from .._define import is_complex, raw, shape_of
from ..declare import implements
from .common import require_square


def _swap(x: Any) -> Any:
    return np.swapaxes(x, -1, -2)


def _gaps(w: Any) -> Any:
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    n = shape_of(w)[-1]
    eye = xp_of(raw(w)).eye(n, dtype=bool)
    diff = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, diff))


def _largest(v: Any) -> np.ndarray:
    """One-hot mask of each column's largest entry (the one LAPACK makes real)."""
    vals = np.abs(raw(v))
    k = np.argmax(vals, axis=-2)
    return xp_of(vals).arange(vals.shape[-2])[:, None] == np.expand_dims(k, -2)


def _vectors_tangent(v: Any, dv: Any) -> Any:
    """dv projected onto NumPy's normalisation of v (unit norm; largest entry real when complex)."""
    if is_complex(dv):
        dv = dv - v * np.real(np.sum(np.conjugate(v) * dv, axis=-2, keepdims=True))  # keep the norm 1
        top = _largest(v)
        rot = np.imag(np.sum(dv * top, axis=-2, keepdims=True)) / np.real(np.sum(v * top, axis=-2, keepdims=True))
        dv = dv - 1j * v * rot  # keep the largest entry real
    else:
        dv = dv - v * np.sum(v * dv, axis=-2, keepdims=True)
    return dv


def _eig_jvp(t: Any, ans: tuple[Any, Any], a: Any) -> tuple[Any, Any]:
    w, v = ans
    inner = np.linalg.inv(v) @ t @ v
    dw = np.diagonal(inner, axis1=-2, axis2=-1)
    return dw, _vectors_tangent(v, v @ (_gaps(w) * inner))


def _eig_vjp(g: tuple[Any, Any], ans: tuple[Any, Any], a: Any) -> Any:
    gw, gv = g
    w, v = ans
    vinv_t = _swap(np.linalg.inv(v))
    total = None
    if gw is not None:
        total = vinv_t @ (np.expand_dims(gw, -1) * _swap(v))
    if gv is not None:
        if is_complex(v) or is_complex(gv):
            top = _largest(v)
            sigma = np.imag(np.sum(gv * v, axis=-2, keepdims=True)) / np.real(np.sum(v * top, axis=-2, keepdims=True))
            gv = gv - 1j * sigma * top  # transpose of the phase projection
            gv = gv - np.conjugate(v) * np.real(np.sum(gv * v, axis=-2, keepdims=True))  # of the norm projection
        else:
            gv = gv - v * np.sum(gv * v, axis=-2, keepdims=True)
        part = vinv_t @ (_gaps(w) * (_swap(v) @ gv)) @ _swap(v)
        total = part if total is None else total + part
    return xp_of(raw(v)).zeros(np.shape(raw(v)), dtype=np.result_type(raw(v))) if total is None else total


# one primitive, two outputs (w, v) sharing one node; the rules read the outputs only
_eig = Primitive("eig", lambda a: tuple(np.linalg.eig(a)), n_outputs=2, reads=("ans",))
_eig.defjvp(_eig_jvp)
_eig.defvjp(_eig_vjp)


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


@implements(namespaces=("linalg",))
def eig(a: Any) -> EigResult:
    """Eigenvalues and unit eigenvectors of a general square matrix (distinct eigenvalues), complex always, as
    PyTorch's and JAX's (``numpy.linalg.eig`` of a Tensor keeps NumPy's rule: real when every eigenvalue is).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> a = np.array([[2.0, 1.0], [0.0, 3.0]])
        >>> cr.grad(lambda a: np.sum(cr.linalg.eig(a).eigenvalues.real * np.array([1.0, 2.0])))(a)
        array([[1., 0.],
               [1., 2.]])
    """
    w, v = numpy_eig(a)
    return EigResult(_complex(w), _complex(v))


@implements(namespaces=("linalg",))
def eigvals(a: Any) -> Any:
    """Eigenvalues of a general square matrix (distinct eigenvalues for derivatives), complex always."""
    return _complex(numpy_eigvals(a))


def _complex(x: Any) -> Any:
    """``x`` as a complex value (a real one's gradient is the real part of the complex cotangent)."""
    return x if is_complex(x) else x.astype(np.result_type(raw(x), np.complex64))


@implements(np.linalg.eig, namespaces=())  # public as chainrule.numpy.linalg.eig
def numpy_eig(a: Any) -> EigResult:
    """numpy.linalg.eig: complex outputs unless every eigenvalue is real (NumPy's rule)."""
    require_square("eig", a)
    if type(a) is np.ndarray:
        return EigResult(*np.linalg.eig(a))
    return EigResult(*_eig(a))  # Tensors, and batched values under vmap


@implements(np.linalg.eigvals, namespaces=())  # public as chainrule.numpy.linalg.eigvals
def numpy_eigvals(a: Any) -> Any:
    """numpy.linalg.eigvals: complex unless every eigenvalue is real (NumPy's rule)."""
    require_square("eigvals", a)
    return np.linalg.eigvals(a) if type(a) is np.ndarray else _eig(a)[0]
