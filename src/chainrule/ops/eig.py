"""``numpy.linalg.eig`` and ``eigvals`` for general (non-symmetric, real or complex) square matrices.

With ``a = V diag(w) V^-1`` and ``W = V^-1 da V``: ``dw = diag(W)`` and ``dV = V (F o W)``,
``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, then projected onto NumPy's normalisation
(LAPACK's: unit 2-norm, largest entry real). Eigenvalues must be distinct. Outputs are complex
unless every eigenvalue is real (NumPy's rule); a real matrix gets the real part of a complex
gradient. Reverse rules are the transposes of the forward ones (JAX's convention), written with
differentiable ops, so every order works.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..autodiff.primitive import Primitive
from ..tensor import Tensor
from ._define import is_complex, raw, shape_of
from .declare import implements
from .linalg import require_square


def _swap(x: Any) -> Any:
    return np.swapaxes(x, -1, -2)


def _values_fn(a: np.ndarray) -> np.ndarray:
    return np.linalg.eig(a)[0]


def _vectors_fn(a: np.ndarray) -> np.ndarray:
    return np.linalg.eig(a)[1]


_eig_values = Primitive("eig_values", _values_fn)
_eig_vectors = Primitive("eig_vectors", _vectors_fn)


def _parts(a: Any) -> tuple[Any, Any]:
    """Eigenvalues and eigenvectors: traced when ``a`` is (rules run on Tensors for higher orders)."""
    if isinstance(a, Tensor):
        return _eig_values(a), _eig_vectors(a)
    w, v = np.linalg.eig(a)
    return w, v


def _gaps(w: Any) -> Any:
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    n = shape_of(w)[-1]
    eye = np.eye(n, dtype=bool)
    diff = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, diff))


def _largest(v: Any) -> np.ndarray:
    """One-hot mask of each column's largest entry (the one LAPACK makes real)."""
    vals = np.abs(raw(v))
    k = np.argmax(vals, axis=-2)
    return np.arange(vals.shape[-2])[:, None] == np.expand_dims(k, -2)


def _values_jvp(t: Any, ans: Any, a: Any) -> Any:
    _, v = _parts(a)
    return np.diagonal(np.linalg.inv(v) @ t @ v, axis1=-2, axis2=-1)


def _values_vjp(g: Any, ans: Any, a: Any) -> Any:
    _, v = _parts(a)
    return _swap(np.linalg.inv(v)) @ (np.expand_dims(g, -1) * _swap(v))


def _vectors_jvp(t: Any, ans: Any, a: Any) -> Any:
    w, v = _parts(a)
    dv = v @ (_gaps(w) * (np.linalg.inv(v) @ t @ v))
    if is_complex(dv):
        dv = dv - v * np.real(np.sum(np.conjugate(v) * dv, axis=-2, keepdims=True))  # keep the norm 1
        top = _largest(v)
        rot = np.imag(np.sum(dv * top, axis=-2, keepdims=True)) / np.real(np.sum(v * top, axis=-2, keepdims=True))
        dv = dv - 1j * v * rot  # keep the largest entry real
    else:
        dv = dv - v * np.sum(v * dv, axis=-2, keepdims=True)
    return dv


def _vectors_vjp(g: Any, ans: Any, a: Any) -> Any:
    w, v = _parts(a)
    if is_complex(v) or is_complex(g):
        top = _largest(v)
        sigma = np.imag(np.sum(g * v, axis=-2, keepdims=True)) / np.real(np.sum(v * top, axis=-2, keepdims=True))
        g = g - 1j * sigma * top  # transpose of the phase projection
        g = g - np.conjugate(v) * np.real(np.sum(g * v, axis=-2, keepdims=True))  # of the norm projection
    else:
        g = g - v * np.sum(g * v, axis=-2, keepdims=True)
    vinv = np.linalg.inv(v)
    return _swap(vinv) @ (_gaps(w) * (_swap(v) @ g)) @ _swap(v)


_eig_values.defjvp(_values_jvp)
_eig_values.defvjp(_values_vjp)
_eig_vectors.defjvp(_vectors_jvp)
_eig_vectors.defvjp(_vectors_vjp)


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


@implements(np.linalg.eig, namespaces=("linalg",))
def eig(a: Any) -> EigResult:
    """Eigenvalues and unit eigenvectors of a general square matrix (distinct eigenvalues).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> a = np.array([[2.0, 1.0], [0.0, 3.0]])
        >>> cr.grad(lambda a: np.sum(np.linalg.eig(a).eigenvalues * np.array([1.0, 2.0])))(a)
        array([[1., 0.],
               [1., 2.]])
    """
    require_square("eig", a)
    if type(a) is np.ndarray:
        return EigResult(*np.linalg.eig(a))
    return EigResult(_eig_values(a), _eig_vectors(a))  # Tensors, and batched values under vmap


@implements(np.linalg.eigvals, namespaces=("linalg",))
def eigvals(a: Any) -> Any:
    """Eigenvalues of a general square matrix (distinct eigenvalues for derivatives)."""
    require_square("eigvals", a)
    return np.linalg.eigvals(a) if type(a) is np.ndarray else _eig_values(a)
