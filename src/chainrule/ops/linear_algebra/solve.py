"""``numpy.linalg``'s inverse, determinants and solvers, differentiable: inv, det, slogdet, solve,
matrix_power, pinv, lstsq, multi_dot, tensorinv, tensorsolve.

Assumptions: ``inv``, ``slogdet``, ``solve`` need a non-singular matrix (a singular one raises a
``LinAlgError`` naming the function and the matrix); ``det`` is differentiable to any order at
singular matrices too (its gradient is the cofactor matrix); ``pinv``, ``lstsq`` need full rank.

Example:
    >>> import chainrule as cr, numpy as np
    >>> float(cr.grad(lambda a: np.linalg.slogdet(a)[1])(np.array([[2.0]]))[0, 0])
    0.5
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...autodiff import batch_levels as _batching
from ...autodiff.primitive import Primitive
from ...core.device import as_array, xp_of
from ...tensor import Tensor
from .. import elementwise, reductions
from .. import shape as shape_ops
from .._define import conj, is_complex, ndim_of, raw, shape_of, xp_where
from .._scans import exclusive_products
from ..contraction import matmul
from ..declare import implements
from .common import (
    checked_inv,
    conj_transpose,
    guarded,
    hermitian_read,
    modulus,
    require_full_rank,
    require_square,
    transpose_last,
)
from .decompositions import svdvals

_inv = Primitive("inv", guarded(
    "inv", np.linalg.inv, "it has no inverse (and no gradient)",
    "check the input, regularise it (a + eps * I), or use pinv / lstsq"))
_inv.defvjp(lambda g, ans, a: -(transpose_last(ans) @ g @ transpose_last(ans)))
_inv.defjvp(lambda t, ans, a: -(ans @ t @ ans))


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
    inverse = _inverse_if_well_conditioned(as_array(raw(a)))
    if inverse is not None:  # on Tensors the inverse is taken again, recorded (differentiable)
        return np.expand_dims(ans, (-2, -1)) * transpose_last(np.linalg.inv(a) if isinstance(a, Tensor) else inverse)
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
    return np.expand_dims(g_logabs, (-2, -1)) * transpose_last(checked_inv("slogdet", a, *_SLOGDET_FIX.split("; ")))


def _slogdet_jvp(t: Any, ans: Any, a: Any) -> Any:
    d_logabs = np.sum(transpose_last(checked_inv("slogdet", a, *_SLOGDET_FIX.split("; "))) * t, axis=(-2, -1))
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
    if is_complex(a):  # det / |det| moves with a complex a: not piecewise constant (traced or batched under vmap)
        return SlogdetResult(elementwise.sign(_det(a)), logabsdet)
    # a real sign is piecewise constant: a value without a gradient (as PyTorch marks it), never traced
    return SlogdetResult(Tensor._wrap(sign._data) if isinstance(sign, Tensor) else sign, logabsdet)


def _solve_stacks(a: Any, b: Any) -> Any:
    """``np.linalg.solve`` of the matrices ``b`` (..., M, K), the batch shapes of ``a`` and ``b`` broadcast here:
    CuPy's solve does not broadcast them."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if a.shape[:-2] != batch:
        a = np.broadcast_to(a, batch + a.shape[-2:])
    if b.shape[:-2] != batch:
        b = np.broadcast_to(b, batch + b.shape[-2:])
    return np.linalg.solve(a, b)


_solve = Primitive("solve", guarded(
    "solve", _solve_stacks, "a @ x = b has no unique solution (and no gradient)",
    "use lstsq (least squares), or regularise a (a + eps * I)"))
_solve.defvjp(  # (the rules call solve, not np.linalg.solve, for its broadcasting on every device)
    lambda g, ans, a, b: -(solve(transpose_last(a), g) @ transpose_last(ans)),
    lambda g, ans, a, b: solve(transpose_last(a), g),
)
_solve.defjvp(
    lambda t, ans, a, b: -solve(a, t @ ans),
    lambda t, ans, a, b: solve(a, t),
)


@implements(np.linalg.solve, namespaces=("linalg",))
def solve(a: Any, b: Any) -> Any:
    """x with a @ x = b; ``b`` is a vector when 1-D, else a stack of matrices (NumPy 2 rules)."""
    require_square("solve", a)
    if ndim_of(b) == 1:
        return shape_ops.getitem(_solve(a, shape_ops.expand_dims(b, -1)), (Ellipsis, 0))
    return _solve(a, b)



# -- built from the above ----------------------------------------------------------------------------------
@implements(np.linalg.matrix_power, namespaces=("linalg",))
def matrix_power(a: Any, n: int) -> Any:
    """a @ a @ ... (n times); n = 0 gives the identity, n < 0 powers of the inverse."""
    require_square("matrix_power", a)
    n = int(n)
    if n == 0:
        eye = xp_where(a).eye(shape_of(a)[-1], dtype=np.result_type(raw(a)))  # where a is
        return elementwise.add(elementwise.multiply(a, 0.0), eye)
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return shape_ops.fresh(result, a)  # n = 1: a copy, as PyTorch's


@implements(np.linalg.pinv, namespaces=("linalg",))
def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None, atol: Any = None) -> Any:
    """Moore-Penrose pseudo-inverse of a full-rank matrix; with ``rcond``/``rtol`` (a cutoff relative to the
    largest singular value) or ``atol`` (PyTorch's absolute one), through the SVD, the singular values at or below
    the cutoff dropped. ``hermitian``: the lower triangle is read, as NumPy's and PyTorch's (their eigh); the
    gradient is PyTorch's, the general pseudo-inverse's."""
    if not isinstance(a, Tensor):
        if atol is not None:
            return _pinv_cut(a, rcond if rcond is not None else (rtol or 0.0), atol, hermitian)
        kw = {} if rtol is None else {"rtol": rtol}
        return np.linalg.pinv(a, **({"rcond": rcond} if rcond is not None else kw), hermitian=hermitian)
    if hermitian:
        require_square("pinv", a)
        a = hermitian_read(a)
    if rcond is not None or rtol is not None or atol is not None:
        return _pinv_cut(a, rcond if rcond is not None else (rtol or 0.0), atol)
    if not isinstance(raw(a), _batching.BATCHED) and _rank_deficient(raw(a)):
        return _pinv_rank(a)
    require_full_rank("pinv", a)
    m, n = shape_of(a)[-2:]
    if m >= n:
        return solve(matmul(conj_transpose(a), a), conj_transpose(a))
    return conj_transpose(solve(matmul(a, conj_transpose(a)), a))


def _rank_deficient(a: np.ndarray) -> bool:
    return bool(np.any(np.linalg.matrix_rank(a) < min(a.shape[-2:])))


def _eyes(p: Any) -> tuple[Any, Any]:
    """Identities of the sizes of A P and P A (``p`` is n x m), made where ``p``'s values are (host or device)."""
    values = raw(p)
    xp = xp_of(values)
    n, m = shape_of(p)[-2:]
    return xp.eye(m, dtype=values.dtype), xp.eye(n, dtype=values.dtype)


def _pinv_rank_jvp(t: Any, ans: Any, a: Any) -> Any:
    """The derivative of the pseudo-inverse where the rank stays constant (Golub and Pereyra; JAX's rule):
    dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P."""
    p, tt = ans, conj_transpose(t)
    eye_m, eye_n = _eyes(p)
    away_a = elementwise.subtract(eye_m, matmul(a, p))
    away_p = elementwise.subtract(eye_n, matmul(p, a))
    return elementwise.add(elementwise.add(
        elementwise.negative(matmul(matmul(p, t), p)),
        matmul(matmul(matmul(p, conj_transpose(p)), tt), away_a)),
        matmul(matmul(away_p, tt), matmul(conj_transpose(p), p)))


def _pinv_rank_vjp(g: Any, ans: Any, a: Any) -> Any:
    """The transpose of the rule above (for complex values JAX's: the terms in dA^H transpose to conjugates):
    -P^T G P^T + conj((I - A P) G^T P P^H) + conj(P^H P G^T (I - P A))."""
    p, gt = ans, transpose_last(g)
    eye_m, eye_n = _eyes(p)
    away_a = elementwise.subtract(eye_m, matmul(a, p))
    away_p = elementwise.subtract(eye_n, matmul(p, a))
    pt, ph = transpose_last(p), conj_transpose(p)
    conjugated = conj if is_complex(p) or is_complex(g) else (lambda x: x)
    return elementwise.add(elementwise.add(
        elementwise.negative(matmul(matmul(pt, g), pt)),
        conjugated(matmul(matmul(away_a, gt), matmul(p, ph)))),
        conjugated(matmul(matmul(matmul(ph, p), gt), away_p)))


# NumPy's pinv of a rank-deficient matrix (its default cutoff), differentiated as JAX does: the rank held fixed
_pinv_rank = Primitive("pinv_constant_rank", lambda a: np.linalg.pinv(a), reads=("ans", 0))
_pinv_rank.defvjp(_pinv_rank_vjp)
_pinv_rank.defjvp(_pinv_rank_jvp)


def _pinv_cut(a: Any, cutoff: Any, atol: Any = None, hermitian: bool = False) -> Any:
    """``pinv`` with NumPy's cutoff: singular values ``<= cutoff * largest`` (or ``<= atol``, PyTorch's absolute
    one, whichever is larger) count as zero (all of them: zeros)."""
    from .decompositions import svd

    if hermitian and not isinstance(a, Tensor):
        a = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2).conj()  # the lower triangle read
    u, s, vh = svd(a, full_matrices=False)
    limit = np.asarray(raw(cutoff))[..., None] * raw(s).max(axis=-1, keepdims=True)
    if atol is not None:
        limit = np.maximum(limit, np.asarray(raw(atol))[..., None])
    kept = raw(s) > limit
    inverse = elementwise.where(kept, elementwise.divide(1.0, elementwise.where(kept, s, 1.0)), 0.0)
    scaled = elementwise.multiply(conj_transpose(vh), shape_ops.expand_dims(inverse, -2))
    return matmul(scaled, conj_transpose(u))


class LstsqResult(NamedTuple):
    """``lstsq``'s four results, by NumPy's order and PyTorch's names (``.solution``)."""

    solution: Any
    residuals: Any
    rank: Any
    singular_values: Any


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@implements(namespaces=("linalg",))
def lstsq(a: Any, b: Any, rcond: Any = None, *, driver: str | None = None) -> LstsqResult:
    """Least-squares solution of ``a @ x = b`` for a full-rank ``a``, as PyTorch's ``linalg.lstsq``: the fields
    hold what PyTorch's ``driver`` computes (``gelsy``, its default on a CPU: the solution and the rank; ``gels``:
    the solution and the residuals; ``gelsd``/``gelss``: everything), the others are empty.
    ``numpy.linalg.lstsq(tensor)`` gives NumPy's four results instead."""
    if driver is not None and driver not in _DRIVERS:
        raise ValueError(f"lstsq: driver must be one of {_DRIVERS} (or None: gelsy), got {driver!r}")
    driver = driver or "gelsy"
    x, residuals, rank, singular_values = numpy_lstsq(a, b, rcond)
    dt = np.result_type(raw(a))
    empty = xp_where(a).empty((0,), dtype=dt)
    return LstsqResult(x, residuals if driver != "gelsy" else empty,
                       np.asarray(rank, dtype=np.int64) if driver != "gels" else np.empty((0,), dtype=np.int64),
                       singular_values if driver in ("gelsd", "gelss") else empty)


@implements(np.linalg.lstsq, namespaces=())  # public as chainrule.numpy.linalg.lstsq
def numpy_lstsq(a: Any, b: Any, rcond: Any = None) -> LstsqResult:
    """numpy.linalg.lstsq: the least-squares solution, residuals, rank and singular values of a full-rank ``a``
    (named as PyTorch's fields: ``.solution``)."""
    if ndim_of(a) != 2:
        raise np.linalg.LinAlgError(f"lstsq: a must be 2-D, got shape {shape_of(a)}")
    require_full_rank("lstsq", a)
    m, n = shape_of(a)
    x = matmul(pinv(a), b)
    if m > n:
        resid = elementwise.subtract(b, matmul(a, x))
        resid = modulus(resid)
        residuals = reductions.sum(elementwise.multiply(resid, resid), axis=0)
        residuals = shape_ops.reshape(residuals, (1,)) if ndim_of(residuals) == 0 else residuals
    else:
        residuals = np.empty((0,), dtype=np.result_type(raw(a)))
    return LstsqResult(x, residuals, min(m, n), svdvals(a))  # full rank was required above (also under vmap)


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
def tensorsolve(a: Any, b: Any, axes: Any = None, *, dims: Any = None) -> Any:
    """x with tensordot(a, x, x.ndim) = b (``dims``: PyTorch's name for ``axes``)."""
    axes = axes if dims is None else dims
    if axes is not None:
        rest = [i for i in range(ndim_of(a)) if i not in [k % ndim_of(a) for k in axes]]
        a = shape_ops.transpose(a, rest + [k % ndim_of(a) for k in axes])
    s = shape_of(a)
    tail = s[ndim_of(b):]
    n = int(np.prod(tail))
    return shape_ops.reshape(solve(shape_ops.reshape(a, (-1, n)), shape_ops.ravel(b)), tail)


@implements(np.polyfit)
def polyfit(x: Any, y: Any, deg: int, rcond: Any = None, full: bool = False, w: Any = None, cov: Any = False) -> Any:
    """Least-squares polynomial fit (highest power first), NumPy's ``polyfit``, differentiable in ``x``, ``y`` and
    ``w``: NumPy's column-scaled Vandermonde system solved by ``lstsq`` (which needs full rank: ``deg`` below the
    number of distinct ``x``). ``full`` and ``cov`` return what NumPy's do.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> x = np.array([0.0, 1.0, 2.0, 3.0])
        >>> np.round(cr.grad(lambda y: np.polyfit(x, y, 1)[0])(2 * x + 1), 6)  # d slope / d y
        array([-0.3, -0.1,  0.1,  0.3])
    """
    from ..products import vander  # (products is a sibling: imported on first use keeps the module order free)

    order = int(deg) + 1
    if deg < 0:
        raise ValueError(f"polyfit: expected deg >= 0, got {deg}")
    if ndim_of(x) != 1:
        raise TypeError(f"polyfit: expected 1-D x, got shape {shape_of(x)}")
    if shape_of(x)[0] == 0:
        raise TypeError("polyfit: expected a non-empty vector x")
    if ndim_of(y) not in (1, 2):
        raise TypeError(f"polyfit: expected 1-D or 2-D y, got shape {shape_of(y)}")
    if shape_of(x)[0] != shape_of(y)[0]:
        raise TypeError(f"polyfit: expected x and y to have the same length, got {shape_of(x)[0]} and {shape_of(y)[0]}")
    if rcond is None:
        rcond = len(raw(x)) * np.finfo(np.result_type(raw(x), 0.0)).eps
    lhs, rhs = vander(x, order), y
    if w is not None:
        if ndim_of(w) != 1 or shape_of(w)[0] != shape_of(y)[0]:
            raise TypeError(f"polyfit: expected w of shape ({shape_of(y)[0]},), got {shape_of(w)}")
        lhs = elementwise.multiply(lhs, shape_ops.reshape(w, (-1, 1)))
        rhs = elementwise.multiply(rhs, w if ndim_of(y) == 1 else shape_ops.reshape(w, (-1, 1)))
    scale = elementwise.sqrt(reductions.sum(elementwise.multiply(lhs, lhs), axis=0))
    lhs = elementwise.divide(lhs, scale)
    c, resids, rank, s = numpy_lstsq(lhs, rhs)
    c = elementwise.divide(c, scale if ndim_of(y) == 1 else shape_ops.reshape(scale, (-1, 1)))
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    base = elementwise.divide(inv(matmul(transpose_last(lhs), lhs)), elementwise.multiply(
        shape_ops.reshape(scale, (-1, 1)), shape_ops.reshape(scale, (1, -1))))
    if cov == "unscaled":
        fac: Any = 1.0
    else:
        if shape_of(x)[0] <= order:
            raise ValueError("polyfit: the number of data points must exceed order to scale the covariance matrix")
        fac = elementwise.divide(resids, shape_of(x)[0] - order)
    if ndim_of(y) == 1:
        return c, elementwise.multiply(base, fac)
    return c, elementwise.multiply(shape_ops.reshape(base, shape_of(base) + (1,)), fac)
