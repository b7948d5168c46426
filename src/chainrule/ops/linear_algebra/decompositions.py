"""``numpy.linalg``'s decompositions, differentiable: svd, svdvals, qr (cholesky, eigh and eigvalsh, which read
one triangle: :mod:`.symmetric`).

Each decomposition is one primitive with several outputs (``eigh``: w, v; ``svd``: U, S, Vh;
``qr``: Q, R): one factorisation per call, kept on the graph node with the outputs (no cache);
its reverse rule receives every output's cotangent (None for an output that got none) and its
forward rule returns one tangent per output. The rules read only the outputs and are written
with NumPy functions, so under ``create_graph`` they run on the node's outputs as Tensors and
derivatives of every order are exact.

Assumptions (where the derivative does not exist or is not unique):

- ``cholesky``, ``eigh``, ``eigvalsh``: which triangle is read, and the two gradient conventions: :mod:`.symmetric`;
- ``eigh`` vectors: eigenvalues are distinct (repeated ones give inf/NaN); ``svd`` vectors:
  singular values are distinct and non-zero. Eigenvalues or singular values alone
  (``eigvalsh``, ``svd(compute_uv=False)``, ``svdvals``) need only distinct values for first order;
- ``svd`` with ``full_matrices=True`` on a non-square matrix and ``qr(mode='complete')`` on a tall
  one have extra columns that are not unique: a gradient reaching them raises (their forward-mode
  tangents are NaN);
- ``cholesky`` and ``qr`` rules are derived for real matrices: a complex input's derivative raises.
  ``eigh`` and ``svd`` have complex rules too; complex eigenvectors and singular vectors are unique
  only up to a phase each, and a loss that depends on those phases raises (reverse mode; forward
  mode returns the tangent in the gauge ``diag(V^H dV) = 0``).

Example:
    >>> import chainrule as cr, numpy as np
    >>> a = cr.Tensor([[2.0, 1.0], [1.0, 2.0]], requires_grad=True)
    >>> w, v = np.linalg.eigh(a)
    >>> w._node is v._node, w._node.prim.name
    (True, 'eigh')
    >>> w.sum().backward(); np.round(a.grad.numpy(), 12)   # d trace(a) / da = I
    array([[1., 0.],
           [0., 1.]])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...autodiff.primitive import Primitive
from ...core.device import as_array
from .. import shape as shape_ops
from .._define import conj, is_complex, np_attr, raw, shape_of, xp_where
from ..contraction import matmul
from ..declare import implements
from .common import (
    checked_inv,
    conj_transpose,
    diag_embed,
    diag_part,
    inverse_gaps,
    real_part,
    require_matrices,
    total_of,
    transpose_last,
)

_T = transpose_last


def _no_gradient_beyond(g: Any, keep: tuple[Any, ...], what: str, fix: str) -> Any:
    """``g[keep]``, after checking that the rest of ``g`` (outputs that are not unique) got no gradient."""
    if g is None:
        return None
    rest = tuple(slice(k.stop, None) if isinstance(k, slice) and k.stop is not None else k for k in keep)
    if np.any(raw(g[rest]) != 0):
        raise ValueError(f"{what} are not unique and have no derivative; {fix}")
    return g[keep]


def _nan_beyond(x: Any, extra: tuple[int, ...], axis: int) -> Any:
    """``x`` with NaN tangents appended along ``axis`` for outputs that are not unique."""
    pad = xp_where(x).full(extra, np.nan, dtype=np.result_type(raw(x)))  # where x is
    return shape_ops.concatenate([x, pad], axis=axis)


# -- singular value decomposition: one node, outputs (U, S, Vh) ------------------------------------------
_SVD_FIX = "use svd(a, full_matrices=False)"


def _svd_fn(a: np.ndarray, full_matrices: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return tuple(np.linalg.svd(a, full_matrices=full_matrices))


def _svd_reduced(g: Any, ans: Any) -> tuple[Any, Any, Any, Any, Any, Any]:
    """U, S, Vh and their cotangents cut to the k = min(m, n) unique columns (rows of Vh); a gradient
    reaching the rest (full_matrices=True) raises."""
    gu, gs, gvh = g
    u, s, vh = ans
    k = shape_of(s)[-1]
    if shape_of(u)[-1] > k:
        what = "svd: the extra columns of U (full_matrices=True, more rows than columns)"
        gu = _no_gradient_beyond(gu, (Ellipsis, slice(None), slice(None, k)), what, _SVD_FIX)
        u = u[..., :, :k]
    if shape_of(vh)[-2] > k:
        what = "svd: the extra rows of Vh (full_matrices=True, more columns than rows)"
        gvh = _no_gradient_beyond(gvh, (Ellipsis, slice(None, k), slice(None)), what, _SVD_FIX)
        vh = vh[..., :k, :]
    return gu, gs, gvh, u, s, vh


def _beyond_span(u: Any, s: Any, vh: Any) -> tuple[bool, bool]:
    """Whether the (reduced) U has more rows than columns (a tall matrix) and Vh more columns than rows (a wide one):
    only then do the derivatives have parts outside the singular vectors' span, which divide by s."""
    k = shape_of(s)[-1]
    return shape_of(u)[-2] > k, shape_of(vh)[-1] > k


def _svd_vjp(g: tuple[Any, Any, Any], ans: tuple[Any, Any, Any], a: Any, full_matrices: bool) -> Any:
    gu, gs, gvh, u, s, vh = _svd_reduced(g, ans)
    v = _T(vh)
    parts = []
    if gs is not None:
        parts.append((u * np.expand_dims(gs, -2)) @ vh)
    if gu is not None or gvh is not None:
        f = inverse_gaps(s * s)  # needs distinct singular values, and non-zero ones below
    # the parts outside the span of U (tall) or V (wide) divide by s: only there, so that a square matrix with a
    # zero singular value keeps finite derivatives (as PyTorch's), since those parts are zero for it
    tall, wide = _beyond_span(u, s, vh)
    if gu is not None:
        ut_g = _T(u) @ gu
        part = u @ ((f * (ut_g - _T(ut_g))) * np.expand_dims(s, -2))
        if tall:
            part = part + (gu - u @ ut_g) / np.expand_dims(s, -2)
        parts.append(part @ vh)
    if gvh is not None:
        gv = gvh @ v  # gvh is d/dVh (k, n); d/dV is its transpose
        inner = np.expand_dims(s, -1) * (f * (_T(gv) - gv))
        part = inner @ vh
        if wide:
            part = part + (gvh - gv @ vh) / np.expand_dims(s, -1)
        parts.append(u @ part)
    return total_of(parts, u @ vh)


def _svd_jvp(t: Any, ans: tuple[Any, Any, Any], a: Any, full_matrices: bool) -> tuple[Any, Any, Any]:
    _, _, _, u, s, vh = _svd_reduced((None, None, None), ans)
    v = _T(vh)
    tv = t @ v
    dp = _T(u) @ tv  # u.T t v
    row, col = np.expand_dims(s, -2), np.expand_dims(s, -1)
    with np.errstate(divide="ignore", invalid="ignore"):  # repeated or zero singular values: inf/NaN U, V tangents
        f = inverse_gaps(s * s)
        du = u @ (f * (dp * row + col * _T(dp)))
        dv = v @ (f * (col * dp + _T(dp) * row))
        tall, wide = _beyond_span(u, s, vh)
        if tall:
            du = du + (tv - u @ dp) / row
        if wide:
            dv = dv + (_T(t) @ u - v @ _T(dp)) / row
    dvh = _T(dv)
    m, n, k = shape_of(ans[0])[-2], shape_of(ans[2])[-1], shape_of(s)[-1]
    if shape_of(ans[0])[-1] > k:  # full_matrices, tall: the extra columns of U are not unique
        du = _nan_beyond(du, shape_of(du)[:-1] + (m - k,), -1)
    if shape_of(ans[2])[-2] > k:  # full_matrices, wide: the extra rows of Vh
        dvh = _nan_beyond(dvh, shape_of(dvh)[:-2] + (n - k, n), -2)
    return du, diag_part(dp), dvh


# Complex matrices: a = U S V^H with U, V unique up to a phase per singular value (U -> U D, V -> V D). The forward
# rule fixes the gauge diag(V^H dV) = 0, which puts i imag(diag(U^H da V)) / s into U^H dU; the reverse rule is its
# transpose for the pairing real(sum(g * t)) (JAX's), after checking that the loss does not depend on the phases.
# For real matrices both reduce to the rules above (which keep their own code: they are the hot path).
def _svd_vjp_complex(g: tuple[Any, Any, Any], ans: tuple[Any, Any, Any], a: Any, full_matrices: bool) -> Any:
    gu, gs, gvh, u, s, vh = _svd_reduced(g, ans)
    uc, v = conj(u), conj_transpose(vh)
    row, col = np.expand_dims(s, -2), np.expand_dims(s, -1)
    parts = []
    if gs is not None:
        parts.append((uc * np.expand_dims(gs, -2)) @ _T(v))
    if gu is not None or gvh is not None:
        f = inverse_gaps(s * s)  # needs distinct singular values, and non-zero ones below
        drift = 0.0
        tall, wide = _beyond_span(u, s, vh)
    if gu is not None:
        k_u = _T(u) @ gu
        drift = np.imag(diag_part(as_array(raw(k_u))))
        inner = (f * (k_u - conj_transpose(k_u))) * row + diag_embed(1j * np.imag(diag_part(k_u)) / s)
        parts.append(uc @ inner @ _T(v))
        if tall:
            outside = gu / row
            parts.append((outside - uc @ (_T(u) @ outside)) @ _T(v))
    if gvh is not None:
        x_v = conj_transpose(gvh)  # the cotangent of V
        k_v = _T(v) @ x_v
        drift = drift + np.imag(diag_part(as_array(raw(k_v))))
        inner = col * (f * (k_v - conj_transpose(k_v)))
        parts.append(uc @ inner @ _T(v))
        if wide:
            outside_h = conj_transpose(x_v / row)
            parts.append(uc @ (outside_h - (outside_h @ conj(v)) @ _T(v)))
    if gu is not None or gvh is not None:
        scale = 1.0 + max(float(np.max(np.abs(raw(x)))) for x in (gu, gvh) if x is not None)
        if np.size(drift) and np.max(np.abs(drift)) > 1e-8 * scale:
            raise TypeError(
                "svd: the derivative is not defined for complex singular vectors through their phases: each pair "
                "(u_j, v_j) is unique only up to a common factor e^(i phi), and this function of them depends on it. "
                "Differentiate a phase-free function of them instead (np.abs(u), u @ u.conj().T, U S Vh)")
    return total_of(parts, uc @ _T(v))


def _svd_jvp_complex(t: Any, ans: tuple[Any, Any, Any], a: Any, full_matrices: bool) -> tuple[Any, Any, Any]:
    _, _, _, u, s, vh = _svd_reduced((None, None, None), ans)
    v, uh = conj_transpose(vh), conj_transpose(u)
    tv = t @ v
    dp = uh @ tv  # U^H t V
    dph = conj_transpose(dp)
    row, col = np.expand_dims(s, -2), np.expand_dims(s, -1)
    with np.errstate(divide="ignore", invalid="ignore"):  # repeated or zero singular values: inf/NaN U, V tangents
        f = inverse_gaps(s * s)
        du = u @ (f * (dp * row + col * dph) + diag_embed(1j * np.imag(diag_part(dp)) / s))
        dv = v @ (f * (col * dp + dph * row))
        tall, wide = _beyond_span(u, s, vh)
        if tall:
            du = du + (tv - u @ dp) / row
        if wide:
            dv = dv + (conj_transpose(t) @ u - v @ dph) / row
    dvh = conj_transpose(dv)
    m, n, k = shape_of(ans[0])[-2], shape_of(ans[2])[-1], shape_of(s)[-1]
    if shape_of(ans[0])[-1] > k:
        du = _nan_beyond(du, shape_of(du)[:-1] + (m - k,), -1)
    if shape_of(ans[2])[-2] > k:
        dvh = _nan_beyond(dvh, shape_of(dvh)[:-2] + (n - k, n), -2)
    return du, real_part(diag_part(dp)), dvh


def _svd_vjp_any(g: tuple[Any, Any, Any], ans: tuple[Any, Any, Any], a: Any, full_matrices: bool) -> Any:
    return (_svd_vjp_complex if is_complex(ans[0]) else _svd_vjp)(g, ans, a, full_matrices)


def _svd_jvp_any(t: Any, ans: tuple[Any, Any, Any], a: Any, full_matrices: bool) -> tuple[Any, Any, Any]:
    return (_svd_jvp_complex if is_complex(ans[0]) else _svd_jvp)(t, ans, a, full_matrices)


_svd = Primitive("svd", _svd_fn, n_outputs=3, reads=("ans",))
_svd.defvjp(_svd_vjp_any)
_svd.defjvp(_svd_jvp_any)


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
    require_matrices("svd", a)
    if not compute_uv:
        return _svd(a, full_matrices=False)[1]
    return SVDResult(*_svd(a, full_matrices=bool(full_matrices)))


@implements(np_attr("linalg.svdvals"), namespaces=("linalg",))
def svdvals(x: Any, /) -> Any:
    """Singular values, descending."""
    return svd(x, compute_uv=False)


# -- QR: one node, outputs (Q, R) ---------------------------------------------------------------------------
_QR_FIX = ("its R factor is singular (the input is rank-deficient) and the derivative of the factorisation "
           "does not exist", "differentiate qr of a full-rank matrix (or use svd)")


def _copyltu(m: Any) -> Any:
    low = np.tril(m, -1)
    return low + _T(low) + diag_embed(diag_part(m))


def _qr_reduced(g: tuple[Any, Any], ans: tuple[Any, Any]) -> tuple[Any, Any, Any, Any]:
    """Q, R and their cotangents cut to the n unique columns of Q (mode='complete' on a tall matrix: a
    gradient reaching the other columns raises; the extra rows of R are zero whatever the input)."""
    gq, gr = g
    q, r = ans
    n = shape_of(r)[-1]
    if shape_of(q)[-1] > n:
        what = "qr: the extra columns of Q (mode='complete', more rows than columns)"
        gq = _no_gradient_beyond(gq, (Ellipsis, slice(None), slice(None, n)), what, "use qr(a, mode='reduced')")
        q, r = q[..., :, :n], r[..., :n, :]
        gr = None if gr is None else gr[..., :n, :]
    return gq, gr, q, r


def _qr_vjp(g: tuple[Any, Any], ans: tuple[Any, Any], a: Any, mode: str) -> Any:
    gq, gr, q, r = _qr_reduced(g, ans)
    m = (r @ _T(gr) if gr is not None else 0) - (_T(gq) @ q if gq is not None else 0)
    rhs = q @ _copyltu(m)
    if gq is not None:
        rhs = rhs + gq
    return rhs @ _T(checked_inv("qr", r, *_QR_FIX))


def _qr_jvp(t: Any, ans: tuple[Any, Any], a: Any, mode: str) -> tuple[Any, Any]:
    _, _, q, r = _qr_reduced((None, None), ans)
    rinv = checked_inv("qr", r, *_QR_FIX)
    x = _T(q) @ t @ rinv
    low = np.tril(x, -1)
    upper = x - (low - _T(low))  # x - omega, omega = low - low.T (skew)
    dq, dr = t @ rinv - q @ upper, upper @ r
    rows, n = shape_of(ans[0])[-2], shape_of(r)[-1]
    if shape_of(ans[0])[-1] > n:  # mode='complete', tall: the extra columns of Q are not unique, R's rows are 0
        dq = _nan_beyond(dq, shape_of(dq)[:-1] + (rows - n,), -1)
        zeros = xp_where(dr).zeros(shape_of(dr)[:-2] + (rows - n, n), dtype=np.result_type(raw(dr)))  # where dr is
        dr = shape_ops.concatenate([dr, zeros], -2)
    return dq, dr


_qr = Primitive("qr", lambda a, mode: tuple(np.linalg.qr(a, mode=mode)), n_outputs=2, reads=("ans",))
_qr.defvjp(_qr_vjp)
_qr.defjvp(_qr_jvp)


class QRResult(NamedTuple):
    Q: Any  # noqa: N815
    R: Any  # noqa: N815


@implements(np.linalg.qr, namespaces=("linalg",))
def qr(a: Any, mode: str = "reduced") -> Any:
    """Q with orthonormal columns and upper-triangular R, a = Q @ R (``mode`` 'reduced', 'complete' or 'r')."""
    s = require_matrices("qr", a)
    m, n = s[-2], s[-1]
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode {mode!r} is not supported on Tensors; use 'reduced', 'complete' or 'r'")
    if m >= n:
        q, r = _qr(a, mode="complete" if mode == "complete" else "reduced")
    else:  # wide: factor the leading square block, the rest of R is Q.H @ (remaining columns)
        q, r_head = _qr(shape_ops.getitem(a, (Ellipsis, slice(None), slice(0, m))), mode="reduced")
        tail = shape_ops.getitem(a, (Ellipsis, slice(None), slice(m, None)))
        r = shape_ops.concatenate([r_head, matmul(conj_transpose(q), tail)], axis=-1)
    return r if mode == "r" else QRResult(q, r)


# QR's rules are derived for real matrices; complex (unitary) ones need other formulas (svd's are written for
# complex matrices too).
_qr.no_complex("the rule is derived for real matrices")
