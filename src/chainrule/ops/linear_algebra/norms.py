"""``numpy.linalg``'s norms and matrix summaries, differentiable: norm, vector_norm, matrix_norm, cond,
trace, diagonal.

The 2-norm has gradient 0 at the zero vector (and so have its derivatives, PyTorch's convention);
the spectral and nuclear norms and ``cond`` go through the singular values (distinct ones).

Example:
    >>> import chainrule as cr, numpy as np
    >>> cr.grad(np.linalg.norm)(np.array([3.0, 4.0]))
    array([0.6, 0.8])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autodiff.primitive import Primitive
from .. import elementwise, pointwise, reductions
from .. import shape as shape_ops
from .._define import is_complex, ndim_of, normalize_axis, np_attr, raw, shape_of, xp_where
from ..arrays import diagonal as _diagonal
from ..contraction import trace as _trace
from ..declare import implements
from .decompositions import svdvals
from .solve import inv


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


def _two_norm(x: Any, axes: tuple[int, ...] | None, keepdims: bool) -> Any:
    """sqrt(sum |x| ** 2) over ``axes`` (all when None). A complex ``x`` enters as its real and imaginary parts
    (a new first axis), not as its moduli: |z| has a kink at 0, so the norm of the moduli had a second derivative
    of 0 along an entry that is 0 while the others are not (the norm is smooth there; PyTorch's is the true one)."""
    if not is_complex(x):
        return _norm2(x, axis=axes, keepdims=keepdims)
    parts = shape_ops.stack([pointwise.real(x), pointwise.imag(x)])
    out = _norm2(parts, axis=None if axes is None else (0, *(a + 1 for a in axes)), keepdims=keepdims)
    return shape_ops.getitem(out, 0) if keepdims else out


def _vector_norm(x: Any, ord: Any, axes: tuple[int, ...] | None, keepdims: bool) -> Any:
    if ord is None or ord == 2:
        return _two_norm(x, axes, bool(keepdims))
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
    size = elementwise.abs(x)
    zero = raw(size) == 0  # (under vmap a batched mask: every example takes the masked path)
    # |0| ** p: p * 0 ** (p - 1) times sign(0) is inf * 0 = NaN for p < 1; PyTorch's is 0. The value is 0 for
    # p > 0 and inf for p < 0 (so the norm is 0, as NumPy's and PyTorch's)
    if not isinstance(zero, np.ndarray) or zero.any():
        dt = np.result_type(raw(size))
        at_zero = xp_where(x).full((), np.inf if float(ord) < 0 else 0.0, dt)  # where x is
        size = elementwise.where(zero, at_zero, elementwise.power(elementwise.where(zero, 1.0, size), float(ord)))
    else:
        size = elementwise.power(size, float(ord))
    return elementwise.power(reductions.sum(size, **ax), 1.0 / float(ord))


def _matrix_norm(x: Any, ord: Any, axes: tuple[int, int], keepdims: bool) -> Any:
    r, c = axes
    if ord is None or ord == "fro":
        out = _two_norm(x, tuple(sorted(axes)), False)
    elif ord in ("nuc", 2, -2):
        s = svdvals(shape_ops.moveaxis(x, (r, c), (-2, -1)))
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
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False, *, dim: Any = None,  # noqa: A002
         keepdim: Any = None) -> Any:
    """Vector or matrix norm, as numpy.linalg.norm (the 2-norm has gradient 0 at the zero vector); PyTorch's
    ``dim=``/``keepdim=`` too.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(np.linalg.norm)(np.array([3.0, 4.0]))
        array([0.6, 0.8])
    """
    axis, keepdims = _torch_dim("norm", axis, dim, keepdims, keepdim)
    nd = ndim_of(x)
    if axis is None:
        if ord is None:
            return _two_norm(x, None, bool(keepdims))
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
def vector_norm(x: Any, /, ord: Any = 2, dim: Any = None, keepdim: Any = None, *, axis: Any = None,  # noqa: A002
                keepdims: bool = False) -> Any:
    """The vector norm over ``axis`` (all axes by default, as one flat vector); PyTorch's ``vector_norm(x, ord,
    dim, keepdim)`` too (NumPy's takes only keywords)."""
    axis, keepdims = _torch_dim("vector_norm", axis, dim, keepdims, keepdim)
    axes = None if axis is None else normalize_axis(axis, ndim_of(x))
    return _vector_norm(x, ord, axes, keepdims)


@implements(np_attr("linalg.matrix_norm"), namespaces=("linalg",))
def matrix_norm(x: Any, /, ord: Any = "fro", dim: Any = None, keepdim: Any = None, *,  # noqa: A002
                keepdims: bool = False) -> Any:
    """The matrix norm of the last two axes; PyTorch's ``matrix_norm(x, ord, dim, keepdim)`` too (``dim``: the
    two axes; NumPy's takes only keywords)."""
    axis, keepdims = _torch_dim("matrix_norm", None, dim, keepdims, keepdim)
    nd = ndim_of(x)
    axes = (nd - 2, nd - 1) if axis is None else normalize_axis(axis, nd)
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError(f"matrix_norm: dim must name two different axes, got {dim!r}")
    return _matrix_norm(x, ord, (axes[0], axes[1]), keepdims)


def _torch_dim(name: str, axis: Any, dim: Any, keepdims: bool, keepdim: Any) -> tuple[Any, bool]:
    """NumPy's ``axis``/``keepdims`` from PyTorch's ``dim``/``keepdim`` (one of each pair)."""
    if dim is not None and axis is not None:
        raise TypeError(f"linalg.{name}: got both axis= and dim= (PyTorch's name); pass one")
    if keepdim is not None and keepdims:
        raise TypeError(f"linalg.{name}: got both keepdims= and keepdim= (PyTorch's name); pass one")
    return (axis if dim is None else dim), bool(keepdims if keepdim is None else keepdim)


@implements(np.linalg.cond, namespaces=("linalg",))
def cond(x: Any, p: Any = None) -> Any:
    """Condition number (ratio of extreme singular values for p None/2/-2)."""
    if p is None or p in (2, -2):
        s = svdvals(x)
        hi, lo = reductions.max(s, axis=-1), reductions.min(s, axis=-1)
        return elementwise.divide(hi, lo) if p != -2 else elementwise.divide(lo, hi)
    return elementwise.multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


@implements(np_attr("linalg.trace"), namespaces=())
def linalg_trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Sum of diagonal ``offset`` of the last two axes."""
    return _trace(x, offset, -2, -1)


@implements(np_attr("linalg.diagonal"), namespaces=())
def linalg_diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """Diagonal ``offset`` of the last two axes."""
    return _diagonal(x, offset, -2, -1)
