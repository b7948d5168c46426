"""``numpy.linalg`` with derivatives: inv, det, slogdet, solve, cholesky, eigh, svd, qr, norm...

Every function works on stacks of matrices (leading axes are batch axes) and is
differentiable to any order in both modes: the rules below are written with NumPy
functions, so on Tensors they are recorded too. Decompositions with several outputs are
one primitive per output (``eigh_values``/``eigh_vectors``, ``svd_u``/``svd_s``/``svd_vh``,
``qr_q``/``qr_r``); the factorisation itself is computed once per input and reused.

Assumptions (where the derivative does not exist or is not unique):

- ``inv``, ``slogdet``, ``solve``: the matrix is non-singular (a singular one raises a
  ``LinAlgError`` naming the function and the matrix); ``det`` is differentiable to any
  order at singular matrices too (its gradient is the cofactor matrix);
- ``cholesky``, ``eigh``, ``eigvalsh``: the input is symmetric and only its lower triangle is
  read (as NumPy's); gradients are returned symmetrised, i.e. as derivatives with respect
  to a symmetric matrix (the forward rule uses the symmetric part of the tangent);
- ``eigh`` vectors: eigenvalues are distinct (repeated ones give inf/NaN); ``svd`` vectors:
  singular values are distinct and non-zero. Singular values alone (``eigvalsh``,
  ``svd(compute_uv=False)``, ``svdvals``) need only distinct values for first order;
- ``svd`` with ``full_matrices=True`` on a non-square matrix and ``qr(mode='complete')`` on
  a tall one have extra columns that are not unique: a gradient reaching them raises (their
  forward-mode tangents are NaN);
- ``norm``: the 2-norm has gradient 0 at the zero vector; ``pinv``, ``lstsq`` need full rank.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np

from ..autodiff.primitive import Primitive
from ..tensor import Tensor
from . import elementwise, reductions
from . import shape as shape_ops
from ._define import conj, is_complex, ndim_of, normalize_axis, np_attr, raw, shape_of
from ._scans import exclusive_products
from .arrays import diagonal as _diagonal
from .contraction import matmul
from .contraction import trace as _trace
from .declare import implements

# -- helpers that work on ndarrays and on Tensors -------------------------------------------------


def _T(x: Any) -> Any:
    return np.swapaxes(x, -1, -2)


def _sym(x: Any) -> Any:
    return (x + _T(x)) / 2


def _diag_part(m: Any) -> Any:
    return np.diagonal(m, axis1=-2, axis2=-1)


def _diag_embed(v: Any) -> Any:
    n = np.shape(v)[-1]
    return np.expand_dims(v, -1) * np.eye(n, dtype=np.result_type(raw(v)))


def _inv_gaps(w: Any) -> Any:
    """F[..., i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    eye = np.eye(np.shape(w)[-1], dtype=bool)
    return np.where(eye, 0.0, 1 / np.where(eye, 1.0, gaps))


# -- factorisations, each computed once per input (a few recent ones are kept) ----------------------
_CACHE: OrderedDict[Any, Any] = OrderedDict()  # results are copied out: callers may change theirs in place


def _factor(kind: str, a: np.ndarray) -> Any:
    """The factorisation of ``a`` (keyed by a hash of its bytes: O(n^2), far below the O(n^3) it saves)."""
    a = np.asarray(a)
    key = (kind, a.shape, a.dtype.str, hashlib.blake2b(np.ascontiguousarray(a).data, digest_size=16).digest())
    hit = _CACHE.get(key)
    if hit is None:
        if kind == "eigh":
            hit = np.linalg.eigh(a)
        elif kind == "svd":
            hit = np.linalg.svd(a, full_matrices=False)
        else:
            hit = np.linalg.qr(a)
        _CACHE[key] = hit
        if len(_CACHE) > 4:
            _CACHE.popitem(last=False)
    return hit


# -- inverse, determinants, solve -------------------------------------------------------------------
def _describe(a: Any) -> str:
    """"the 3x3 matrix" or "a 3x3 matrix of the stack (2,)": the words "shape"/"dimension" would make
    the forward pass's error handler read it as a broadcasting error."""
    s = shape_of(a)
    return f"a {s[-2]}x{s[-1]} matrix of the stack {s[:-2]}" if len(s) > 2 else f"the {s[-2]}x{s[-1]} matrix"


def _singular(name: str, a: Any, what: str, fix: str) -> np.linalg.LinAlgError:
    return np.linalg.LinAlgError(f"{name}: {_describe(a)} is singular, so {what}; {fix}")


def _guarded(name: str, fn: Any, what: str, fix: str) -> Any:
    """NumPy's ``fn``, with its bare "Singular matrix" replaced by an error naming ``name`` and the matrix."""

    def run(a: Any, *rest: Any) -> Any:
        try:
            return fn(a, *rest)
        except np.linalg.LinAlgError:
            raise _singular(name, a, what, fix) from None

    return run


def _checked_inv(name: str, a: Any, what: str, fix: str) -> Any:
    """inv(a) inside ``name``'s rules; a singular matrix names ``name``, its shape and the way out."""
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise _singular(name, a, what, fix) from None


_inv = Primitive("inv", _guarded(
    "inv", np.linalg.inv, "it has no inverse (and no gradient)",
    "check the input, regularise it (a + eps * I), or use pinv / lstsq"))
_inv.defvjp(lambda g, ans, a: -(_T(ans) @ g @ _T(ans)))
_inv.defjvp(lambda t, ans, a: -(ans @ t @ ans))


def require_square(name: str, a: Any) -> None:
    s = shape_of(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise np.linalg.LinAlgError(f"{name}: needs square matrices (..., n, n), got shape {s}")


@implements(np.linalg.inv, namespaces=("linalg",))
def inv(a: Any) -> Any:
    """The inverse matrix (of each matrix in a stack).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(lambda a: np.linalg.inv(a).sum())(np.array([[2.0]]))
        array([[-0.25]])
    """
    require_square("inv", a)
    return _inv(a)


def _inverse_if_well_conditioned(a: np.ndarray) -> np.ndarray | None:
    """inv(a) when det(a) * inv(a) is an accurate adjugate for every matrix of the stack (Frobenius condition
    number below 1e8: O(n^2) on top of the inverse), else None."""
    try:
        inverse = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        return None
    cond = np.linalg.norm(a, axis=(-2, -1)) * np.linalg.norm(inverse, axis=(-2, -1))
    return inverse if np.all(np.isfinite(cond)) and np.all(cond < 1e8) else None


def _cofactors_svd(a: np.ndarray) -> np.ndarray:
    """The cofactor matrix det(a) inv(a).T of plain arrays, from a = U diag(s) Vh, exact at singular a:
    det(U) det(Vh) U diag(prod of the other singular values) Vh."""
    u, s, vh = np.linalg.svd(a)
    before, after = exclusive_products(s)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return sign[..., None, None] * ((u * (before * after)[..., None, :]) @ vh)


def _cofactors_minors(a: Any) -> Any:
    """The cofactor matrix by its definition, (-1)^(i+j) det(minor_ij), with ``det`` itself: recorded on
    Tensors, so derivatives of every order are exact at singular matrices of any rank (each order takes
    determinants of minors one size smaller). O(n^5): used only for singular matrices, at higher order."""
    n = shape_of(a)[-1]
    others = np.array([[k for k in range(n) if k != i] for i in range(n)], dtype=np.intp)  # (n, n-1)
    rows = others[:, None, :, None]  # minor (i, j): rows but i, columns but j
    cols = others[None, :, None, :]
    minors = shape_ops.getitem(a, (Ellipsis, rows, cols))  # (..., n, n, n-1, n-1)
    signs = np.where(np.add.outer(np.arange(n), np.arange(n)) % 2 == 0, 1.0, -1.0)
    return elementwise.multiply(_det(minors), signs)


def _cofactors(ans: Any, a: Any) -> Any:
    """d det(a) / d a = det(a) inv(a).T, the transposed adjugate, which exists at singular matrices too."""
    n = shape_of(a)[-1]
    if n <= 1:
        return elementwise.add(elementwise.multiply(a, 0.0), 1.0)
    inverse = _inverse_if_well_conditioned(np.asarray(raw(a)))
    if inverse is not None:  # on Tensors the inverse is taken again, recorded (differentiable)
        return np.expand_dims(ans, (-2, -1)) * _T(np.linalg.inv(a) if isinstance(a, Tensor) else inverse)
    if isinstance(a, Tensor):
        return _cofactors_minors(a)
    return _cofactors_svd(a)


_det = Primitive("det", np.linalg.det)
_det.defvjp(lambda g, ans, a: np.expand_dims(g, (-2, -1)) * _cofactors(ans, a))
_det.defjvp(lambda t, ans, a: np.sum(_cofactors(ans, a) * t, axis=(-2, -1)))


@implements(np.linalg.det, namespaces=("linalg",))
def det(a: Any) -> Any:
    """Determinant; gradient the cofactor matrix det(a) inv(a).T, also at singular matrices.

    Derivatives of every order are exact at singular matrices too (rank n-1, n-2, ...).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(np.linalg.det)(np.array([[1.0, 2.0], [2.0, 4.0]]))
        array([[ 4., -2.],
               [-2.,  1.]])
    """
    require_square("det", a)
    return _det(a)


_SLOGDET_FIX = ("log|det| is -inf and its gradient inv(a).T does not exist; use det(a) (differentiable at "
                "singular matrices) or regularise a (a + eps * I)")


def _slogdet_vjp(g: Any, ans: Any, a: Any) -> Any:
    """Both outputs' cotangents in one rule: the sign is piecewise constant (for real a), so only
    log|det|'s cotangent counts; None when that output got no gradient."""
    g_logabs = g[1]
    if g_logabs is None:
        return np.zeros(np.shape(a), dtype=np.result_type(raw(a)))
    return np.expand_dims(g_logabs, (-2, -1)) * _T(_checked_inv("slogdet", a, *_SLOGDET_FIX.split("; ")))


def _slogdet_jvp(t: Any, ans: Any, a: Any) -> Any:
    d_logabs = np.sum(_T(_checked_inv("slogdet", a, *_SLOGDET_FIX.split("; "))) * t, axis=(-2, -1))
    return np.zeros(np.shape(ans[0]), dtype=np.result_type(raw(ans[0]))), d_logabs


# one primitive, two outputs (sign, log|det|) sharing one node: its rules get both cotangents
_slogdet = Primitive("slogdet", lambda a: tuple(np.linalg.slogdet(a)), n_outputs=2, reads=(0,))
_slogdet.defvjp(_slogdet_vjp)
_slogdet.defjvp(_slogdet_jvp)


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


@implements(np.linalg.slogdet, namespaces=("linalg",))
def slogdet(a: Any) -> SlogdetResult:
    """(sign, log|det|); the sign is piecewise constant (zero gradient)."""
    require_square("slogdet", a)
    sign, logabsdet = _slogdet(a)
    if is_complex(a) and isinstance(a, Tensor):  # det / |det| moves with a complex a: not piecewise constant
        return SlogdetResult(elementwise.sign(_det(a)), logabsdet)
    # a real sign is piecewise constant: a value without a gradient (as PyTorch marks it), never traced
    return SlogdetResult(Tensor._wrap(sign.data) if isinstance(sign, Tensor) else sign, logabsdet)


_solve = Primitive("solve", _guarded(
    "solve", np.linalg.solve, "a @ x = b has no unique solution (and no gradient)",
    "use lstsq (least squares), or regularise a (a + eps * I)"))
_solve.defvjp(
    lambda g, ans, a, b: -(np.linalg.solve(_T(a), g) @ _T(ans)),
    lambda g, ans, a, b: np.linalg.solve(_T(a), g),
)
_solve.defjvp(
    lambda t, ans, a, b: -np.linalg.solve(a, t @ ans),
    lambda t, ans, a, b: np.linalg.solve(a, t),
)


@implements(np.linalg.solve, namespaces=("linalg",))
def solve(a: Any, b: Any) -> Any:
    """x with a @ x = b; ``b`` is a vector when 1-D, else a stack of matrices (NumPy 2 rules)."""
    require_square("solve", a)
    if ndim_of(b) == 1:
        return shape_ops.getitem(_solve(a, shape_ops.expand_dims(b, -1)), (Ellipsis, 0))
    return _solve(a, b)


# -- Cholesky -----------------------------------------------------------------------------------------
def _half_lower(x: Any) -> Any:
    """The lower triangle with the diagonal halved."""
    return np.tril(x) - _diag_embed(_diag_part(x)) / 2


def _chol_vjp(g: Any, ans: Any, a: Any) -> Any:
    linv = np.linalg.inv(ans)
    return _sym(_T(linv) @ _half_lower(_T(ans) @ g) @ linv)


def _chol_jvp(t: Any, ans: Any, a: Any) -> Any:
    linv = np.linalg.inv(ans)
    return ans @ _half_lower(linv @ _sym(t) @ _T(linv))


def _cholesky_fn(a: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(
            f"cholesky: {_describe(a)} is not positive definite, so it has no Cholesky factor; check that it is "
            "symmetric with positive eigenvalues (e.g. add eps * I), or use eigh"
        ) from None


_cholesky = Primitive("cholesky", _cholesky_fn)
_cholesky.defvjp(_chol_vjp)
_cholesky.defjvp(_chol_jvp)


@implements(np.linalg.cholesky, namespaces=("linalg",))
def cholesky(a: Any, /, *, upper: bool = False) -> Any:
    """Lower-triangular L with a = L @ L.T (upper=True: U = L.T) for symmetric positive-definite a."""
    require_square("cholesky", a)
    low = _cholesky(a)
    return _T(low) if upper else low


# -- symmetric eigendecomposition ----------------------------------------------------------------------
_eigh_values = Primitive("eigh_values", lambda a: _factor("eigh", a)[0].copy())
_eigh_vectors = Primitive("eigh_vectors", lambda a: _factor("eigh", a)[1].copy())


def _eigvals_vjp(g: Any, ans: Any, a: Any) -> Any:
    v = _eigh_vectors(a)
    return (v * np.expand_dims(g, -2)) @ _T(v)


def _eigvals_jvp(t: Any, ans: Any, a: Any) -> Any:
    v = _eigh_vectors(a)
    return np.sum(v * (_sym(t) @ v), axis=-2)


def _eigvecs_vjp(g: Any, ans: Any, a: Any) -> Any:
    f = _inv_gaps(_eigh_values(a))
    return _sym(ans @ (f * (_T(ans) @ g)) @ _T(ans))


def _eigvecs_jvp(t: Any, ans: Any, a: Any) -> Any:
    f = _inv_gaps(_eigh_values(a))
    return ans @ (f * (_T(ans) @ _sym(t) @ ans))


_eigh_values.defvjp(_eigvals_vjp)
_eigh_values.defjvp(_eigvals_jvp)
_eigh_vectors.defvjp(_eigvecs_vjp)
_eigh_vectors.defjvp(_eigvecs_jvp)


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


def _lower(a: Any, uplo: str) -> Any:
    if uplo not in ("L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {uplo!r}")
    return a if uplo == "L" else _T(a)


@implements(np.linalg.eigh, namespaces=("linalg",))
def eigh(a: Any, UPLO: str = "L") -> EighResult:  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix (distinct eigenvalues assumed)."""
    require_square("eigh", a)
    a = _lower(a, UPLO)
    return EighResult(_eigh_values(a), _eigh_vectors(a))


@implements(np.linalg.eigvalsh, namespaces=("linalg",))
def eigvalsh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803
    """Eigenvalues (ascending) of a symmetric matrix."""
    require_square("eigvalsh", a)
    return _eigh_values(_lower(a, UPLO))


# -- singular value decomposition ----------------------------------------------------------------------
_svd_u = Primitive("svd_u", lambda a: _factor("svd", a)[0].copy())
_svd_s = Primitive("svd_s", lambda a: _factor("svd", a)[1].copy())
_svd_vh = Primitive("svd_vh", lambda a: _factor("svd", a)[2].copy())


def _usv(a: Any) -> tuple[Any, Any, Any]:
    return _svd_u(a), _svd_s(a), _T(_svd_vh(a))


def _svals_vjp(g: Any, ans: Any, a: Any) -> Any:
    u, _, v = _usv(a)
    return (u * np.expand_dims(g, -2)) @ _T(v)


def _svals_jvp(t: Any, ans: Any, a: Any) -> Any:
    u, _, v = _usv(a)
    return np.sum(u * (t @ v), axis=-2)


def _svd_u_vjp(g: Any, ans: Any, a: Any) -> Any:
    u, s, v = _usv(a)
    f = _inv_gaps(s * s)
    ut_g = _T(u) @ g
    inner = (f * (ut_g - _T(ut_g))) * np.expand_dims(s, -2)
    outside = (g - u @ ut_g) / np.expand_dims(s, -2)
    return (u @ inner + outside) @ _T(v)


def _svd_vh_vjp(g: Any, ans: Any, a: Any) -> Any:
    u, s, v = _usv(a)
    f = _inv_gaps(s * s)
    gv = g @ v  # g is d/dVh (k, n); d/dV is its transpose
    inner = np.expand_dims(s, -1) * (f * (_T(gv) - gv))
    outside = (g - gv @ _T(v)) / np.expand_dims(s, -1)
    return u @ (inner @ _T(v) + outside)


def _svd_u_jvp(t: Any, ans: Any, a: Any) -> Any:
    u, s, v = _usv(a)
    f = _inv_gaps(s * s)
    tv = t @ v
    dp = _T(u) @ tv
    return u @ (f * (dp * np.expand_dims(s, -2) + np.expand_dims(s, -1) * _T(dp))) + (tv - u @ dp) / np.expand_dims(
        s, -2
    )


def _svd_vh_jvp(t: Any, ans: Any, a: Any) -> Any:
    u, s, v = _usv(a)
    f = _inv_gaps(s * s)
    ttu = _T(t) @ u
    dp = _T(ttu) @ v  # u.T t v
    dv = v @ (f * (np.expand_dims(s, -1) * dp + _T(dp) * np.expand_dims(s, -2))) + (ttu - v @ _T(dp)) / np.expand_dims(
        s, -2
    )
    return _T(dv)


_svd_s.defvjp(_svals_vjp)
_svd_s.defjvp(_svals_jvp)
_svd_u.defvjp(_svd_u_vjp)
_svd_u.defjvp(_svd_u_jvp)
_svd_vh.defvjp(_svd_vh_vjp)
_svd_vh.defjvp(_svd_vh_jvp)


def _undetermined(name: str, fn: Any, what: str) -> Primitive:
    """Columns that are not unique (completing an orthonormal basis): no derivative.

    The reverse rule raises if a non-zero gradient reaches them; the forward rule gives NaN
    tangents (harmless unless they are used).
    """
    prim = Primitive(name, fn)

    def vjp(g: Any, ans: Any, a: Any) -> Any:
        if np.any(raw(g) != 0):
            raise ValueError(f"{what} are not unique and have no derivative; {_FIX[name]}")
        return np.zeros(np.shape(raw(a)), dtype=np.result_type(raw(a)))

    prim.defvjp(vjp)
    prim.defjvp(lambda t, ans, a: np.full(np.shape(raw(ans)), np.nan, dtype=np.result_type(raw(ans))))
    return prim


_FIX = {
    "svd_u_complement": "use svd(a, full_matrices=False)",
    "svd_vh_complement": "use svd(a, full_matrices=False)",
    "qr_q_complement": "use qr(a, mode='reduced')",
}
_svd_u_rest = _undetermined(
    "svd_u_complement", lambda a: np.linalg.svd(a)[0][..., :, a.shape[-1]:],
    "svd: the extra columns of U (full_matrices=True, more rows than columns)",
)
_svd_vh_rest = _undetermined(
    "svd_vh_complement", lambda a: np.linalg.svd(a)[2][..., a.shape[-2]:, :],
    "svd: the extra rows of Vh (full_matrices=True, more columns than rows)",
)


class SVDResult(NamedTuple):
    U: Any  # noqa: N815
    S: Any  # noqa: N815
    Vh: Any  # noqa: N815


@implements(np.linalg.svd, namespaces=("linalg",))
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """U, S, Vh with a = U @ diag(S) @ Vh (``compute_uv=False``: S only).

    Differentiating U or Vh needs distinct non-zero singular values. With
    ``full_matrices=True`` on a non-square matrix, the extra columns of U (rows of Vh) are
    not unique: a gradient reaching them raises. ``hermitian`` is accepted and ignored.
    """
    s = shape_of(a)
    if len(s) < 2:
        raise np.linalg.LinAlgError(f"svd: needs matrices (..., m, n), got shape {s}")
    if not compute_uv:
        return _svd_s(a)
    u, vh = _svd_u(a), _svd_vh(a)
    if full_matrices and s[-2] > s[-1]:
        u = shape_ops.concatenate([u, _svd_u_rest(a)], axis=-1)
    elif full_matrices and s[-2] < s[-1]:
        vh = shape_ops.concatenate([vh, _svd_vh_rest(a)], axis=-2)
    return SVDResult(u, _svd_s(a), vh)


@implements(np_attr("linalg.svdvals"), namespaces=("linalg",))
def svdvals(x: Any, /) -> Any:
    """Singular values, descending."""
    return svd(x, compute_uv=False)


# -- QR -------------------------------------------------------------------------------------------------
_QR_FIX = ("its R factor is singular (the input is rank-deficient) and the derivative of the factorisation "
           "does not exist", "differentiate qr of a full-rank matrix (or use svd)")
_qr_q = Primitive("qr_q", lambda a: _factor("qr", a)[0].copy())
_qr_r = Primitive("qr_r", lambda a: _factor("qr", a)[1].copy())


def _copyltu(m: Any) -> Any:
    low = np.tril(m, -1)
    return low + _T(low) + _diag_embed(_diag_part(m))


def _qr_backward(gq: Any, gr: Any, a: Any) -> Any:
    q, r = _qr_q(a), _qr_r(a)
    m = (r @ _T(gr) if gr is not None else 0) - (_T(gq) @ q if gq is not None else 0)
    rhs = q @ _copyltu(m)
    if gq is not None:
        rhs = rhs + gq
    return rhs @ _T(_checked_inv("qr", r, *_QR_FIX))


def _qr_tangents(t: Any, a: Any) -> tuple[Any, Any, Any, Any]:
    q, r = _qr_q(a), _qr_r(a)
    rinv = _checked_inv("qr", r, *_QR_FIX)
    x = _T(q) @ t @ rinv
    low = np.tril(x, -1)
    upper = x - (low - _T(low))  # x - omega, omega = low - low.T (skew)
    return q, r, rinv, upper


_qr_q.defvjp(lambda g, ans, a: _qr_backward(g, None, a))
_qr_r.defvjp(lambda g, ans, a: _qr_backward(None, g, a))


def _qr_q_jvp(t: Any, ans: Any, a: Any) -> Any:
    q, r, rinv, upper = _qr_tangents(t, a)
    return t @ rinv - q @ upper


def _qr_r_jvp(t: Any, ans: Any, a: Any) -> Any:
    q, r, rinv, upper = _qr_tangents(t, a)
    return upper @ r


_qr_q.defjvp(_qr_q_jvp)
_qr_r.defjvp(_qr_r_jvp)
_qr_q_rest = _undetermined(
    "qr_q_complement", lambda a: np.linalg.qr(a, mode="complete")[0][..., :, a.shape[-1]:],
    "qr: the extra columns of Q (mode='complete', more rows than columns)",
)


class QRResult(NamedTuple):
    Q: Any  # noqa: N815
    R: Any  # noqa: N815


@implements(np.linalg.qr, namespaces=("linalg",))
def qr(a: Any, mode: str = "reduced") -> Any:
    """Q with orthonormal columns and upper-triangular R, a = Q @ R (``mode`` 'reduced', 'complete' or 'r')."""
    s = shape_of(a)
    if len(s) < 2:
        raise np.linalg.LinAlgError(f"qr: needs matrices (..., m, n), got shape {s}")
    m, n = s[-2], s[-1]
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode {mode!r} is not supported on Tensors; use 'reduced', 'complete' or 'r'")
    if m >= n:
        q, r = _qr_q(a), _qr_r(a)
        if mode == "complete" and m > n:
            q = shape_ops.concatenate([q, _qr_q_rest(a)], axis=-1)
            r = shape_ops.concatenate([r, np.zeros(s[:-2] + (m - n, n), dtype=np.result_type(raw(a)))], axis=-2)
    else:  # wide: factor the leading square block, the rest of R is Q.T @ (remaining columns)
        head = shape_ops.getitem(a, (Ellipsis, slice(None), slice(0, m)))
        tail = shape_ops.getitem(a, (Ellipsis, slice(None), slice(m, None)))
        q = _qr_q(head)
        r = shape_ops.concatenate([_qr_r(head), matmul(_H(q), tail)], axis=-1)
    return r if mode == "r" else QRResult(q, r)


# -- norms ------------------------------------------------------------------------------------------------
def _safe(ans: Any) -> Any:
    # at a zero vector x / inf = 0: the gradient there is 0, and so are its derivatives (PyTorch's
    # convention); dividing by 1 instead would make the Hessian at 0 the identity
    return np.where(raw(ans) == 0, np.inf, ans)


_norm2 = Primitive("norm2", lambda x, axis, keepdims: np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims)))
_norm2.defvjp(
    lambda g, ans, x, axis, keepdims: reductions._restore(g, axis, keepdims, np.ndim(x))
    * x
    / reductions._restore(_safe(ans), axis, keepdims, np.ndim(x))
)
_norm2.defjvp(lambda t, ans, x, axis, keepdims: np.sum(t * x, axis=axis, keepdims=keepdims) / _safe(ans))


def _modulus(x: Any) -> Any:
    """|x| for complex x (norms are of moduli), x itself for real x."""
    return elementwise.abs(x) if is_complex(x) else x


def _vector_norm(x: Any, ord: Any, axes: tuple[int, ...] | None, keepdims: bool) -> Any:
    if ord is None or ord == 2:
        return _norm2(_modulus(x), axis=axes, keepdims=bool(keepdims))
    ax = {"axis": axes, "keepdims": keepdims}
    if ord == np.inf:
        return reductions.max(elementwise.abs(x), **ax)
    if ord == -np.inf:
        return reductions.min(elementwise.abs(x), **ax)
    if ord == 0:
        return reductions.sum(elementwise.multiply(elementwise.sign(elementwise.abs(x)), 1.0), **ax)
    if ord == 1:
        return reductions.sum(elementwise.abs(x), **ax)
    if isinstance(ord, str):
        raise ValueError(f"norm: ord {ord!r} is only for matrices (give a 2-tuple axis)")
    return elementwise.power(reductions.sum(elementwise.power(elementwise.abs(x), float(ord)), **ax), 1.0 / float(ord))


def _matrix_norm(x: Any, ord: Any, axes: tuple[int, int], keepdims: bool) -> Any:
    r, c = axes
    if ord is None or ord == "fro":
        out = _norm2(_modulus(x), axis=tuple(sorted(axes)), keepdims=False)
    elif ord in ("nuc", 2, -2):
        s = _svd_s(shape_ops.moveaxis(x, (r, c), (-2, -1)))
        largest = reductions.max(s, axis=-1) if ord == 2 else reductions.min(s, axis=-1)
        out = reductions.sum(s, axis=-1) if ord == "nuc" else largest
    elif ord in (1, -1):
        col = reductions.sum(elementwise.abs(x), axis=r)
        out = (reductions.max if ord == 1 else reductions.min)(col, axis=c - 1 if c > r else c)
    elif ord in (np.inf, -np.inf):
        row = reductions.sum(elementwise.abs(x), axis=c)
        out = (reductions.max if ord == np.inf else reductions.min)(row, axis=r - 1 if r > c else r)
    else:
        raise ValueError(f"norm: invalid norm order {ord!r} for matrices")
    if keepdims:
        shape = list(shape_of(x))
        shape[r] = shape[c] = 1
        out = shape_ops.reshape(out, tuple(shape))
    return out


@implements(np.linalg.norm, namespaces=("linalg",))
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """Vector or matrix norm, as numpy.linalg.norm (the 2-norm has gradient 0 at the zero vector).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(np.linalg.norm)(np.array([3.0, 4.0]))
        array([0.6, 0.8])
    """
    nd = ndim_of(x)
    if axis is None:
        if ord is None:
            return _norm2(_modulus(x), axis=None, keepdims=bool(keepdims))
        if nd == 1:
            return _vector_norm(x, ord, (0,), keepdims)
        if nd == 2:
            return _matrix_norm(x, ord, (0, 1), keepdims)
        raise ValueError(f"norm: improper number of dimensions ({nd}) for ord={ord!r}; give axis")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) == 1:
        return _vector_norm(x, ord, normalize_axis(axes, nd), keepdims)
    if len(axes) == 2:
        r, c = (int(a) % nd for a in axes)
        if r == c:
            raise ValueError(f"norm: duplicate axes {axis!r}")
        return _matrix_norm(x, ord, (r, c), keepdims)
    raise ValueError(f"norm: axis must be an int or a 2-tuple, got {axis!r}")


@implements(np_attr("linalg.vector_norm"), namespaces=("linalg",))
def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:  # noqa: A002
    """The vector norm over ``axis`` (all axes by default, as one flat vector)."""
    axes = None if axis is None else normalize_axis(axis, ndim_of(x))
    return _vector_norm(x, ord, axes, keepdims)


@implements(np_attr("linalg.matrix_norm"), namespaces=("linalg",))
def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002
    """The matrix norm of the last two axes."""
    nd = ndim_of(x)
    return _matrix_norm(x, ord, (nd - 2, nd - 1), keepdims)


@implements(np.linalg.cond, namespaces=("linalg",))
def cond(x: Any, p: Any = None) -> Any:
    """Condition number (ratio of extreme singular values for p None/2/-2)."""
    if p is None or p in (2, -2):
        s = _svd_s(x)
        hi, lo = reductions.max(s, axis=-1), reductions.min(s, axis=-1)
        return elementwise.divide(hi, lo) if p != -2 else elementwise.divide(lo, hi)
    return elementwise.multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


# -- built from the above ----------------------------------------------------------------------------------
@implements(np.linalg.matrix_power, namespaces=("linalg",))
def matrix_power(a: Any, n: int) -> Any:
    """a @ a @ ... (n times); n = 0 gives the identity, n < 0 powers of the inverse."""
    require_square("matrix_power", a)
    n = int(n)
    if n == 0:
        return elementwise.add(elementwise.multiply(a, 0.0), np.eye(shape_of(a)[-1], dtype=np.result_type(raw(a))))
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def _full_rank(name: str, a: Any) -> None:
    s = shape_of(a)
    if np.any(np.linalg.matrix_rank(raw(a)) < min(s[-2], s[-1])):
        raise np.linalg.LinAlgError(f"{name}: the {s[-2]}x{s[-1]} matrix is rank-deficient; chainrule's {name} needs "
                                    "full rank (its derivative does not exist where the rank changes)")


def _H(a: Any) -> Any:
    """The conjugate transpose of the last two axes."""
    return conj(_T(a))


@implements(np.linalg.pinv, namespaces=("linalg",))
def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:
    """Moore-Penrose pseudo-inverse of a full-rank matrix."""
    if not isinstance(a, Tensor):
        kw = {} if rtol is None else {"rtol": rtol}
        return np.linalg.pinv(a, **({"rcond": rcond} if rcond is not None else kw), hermitian=hermitian)
    _full_rank("pinv", a)
    m, n = shape_of(a)[-2:]
    if m >= n:
        return solve(matmul(_H(a), a), _H(a))
    return _H(solve(matmul(a, _H(a)), a))


@implements(np.linalg.lstsq, namespaces=("linalg",))
def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[Any, Any, Any, Any]:
    """Least-squares solution (x, residuals, rank, singular values) for a full-rank ``a``."""
    if ndim_of(a) != 2:
        raise np.linalg.LinAlgError(f"lstsq: a must be 2-D, got shape {shape_of(a)}")
    _full_rank("lstsq", a)
    m, n = shape_of(a)
    x = matmul(pinv(a), b)
    if m > n:
        resid = elementwise.subtract(b, matmul(a, x))
        resid = _modulus(resid)
        residuals = reductions.sum(elementwise.multiply(resid, resid), axis=0)
        residuals = shape_ops.reshape(residuals, (1,)) if ndim_of(residuals) == 0 else residuals
    else:
        residuals = np.empty((0,), dtype=np.result_type(raw(a)))
    return x, residuals, int(np.linalg.matrix_rank(raw(a))), svdvals(a)


@implements(np.linalg.multi_dot, namespaces=("linalg",))
def multi_dot(arrays: Any, *, out: Any = None) -> Any:
    """Chain of matrix products (first and last may be vectors)."""
    if out is not None:
        raise TypeError("multi_dot: the 'out' argument is not supported on Tensors")
    xs = list(arrays)
    if len(xs) < 2:
        raise ValueError("multi_dot: needs at least two arrays")
    result = xs[0]
    for x in xs[1:]:
        result = matmul(result, x)
    return result


@implements(np.linalg.tensorinv, namespaces=("linalg",))
def tensorinv(a: Any, ind: int = 2) -> Any:
    """Inverse of an N-d array seen as a matrix: the first ``ind`` axes against the rest."""
    s = shape_of(a)
    rows = int(np.prod(s[:ind]))
    return shape_ops.reshape(inv(shape_ops.reshape(a, (rows, -1))), s[ind:] + s[:ind])


@implements(np.linalg.tensorsolve, namespaces=("linalg",))
def tensorsolve(a: Any, b: Any, axes: Any = None) -> Any:
    """x with tensordot(a, x, x.ndim) = b."""
    if axes is not None:
        rest = [i for i in range(ndim_of(a)) if i not in [k % ndim_of(a) for k in axes]]
        a = shape_ops.transpose(a, rest + [k % ndim_of(a) for k in axes])
    s = shape_of(a)
    tail = s[ndim_of(b):]
    n = int(np.prod(tail))
    return shape_ops.reshape(solve(shape_ops.reshape(a, (-1, n)), shape_ops.ravel(b)), tail)


@implements(np_attr("linalg.trace"), namespaces=())
def linalg_trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Sum of diagonal ``offset`` of the last two axes."""
    return _trace(x, offset, -2, -1)


@implements(np_attr("linalg.diagonal"), namespaces=())
def linalg_diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """Diagonal ``offset`` of the last two axes."""
    return _diagonal(x, offset, -2, -1)


# Rules derived for real symmetric / real matrices; complex (Hermitian, unitary) ones need other formulas.
for _prim in (_cholesky, _eigh_values, _eigh_vectors, _svd_u, _svd_s, _svd_vh, _qr_q, _qr_r):
    _prim.no_complex("the rule is derived for real matrices")
