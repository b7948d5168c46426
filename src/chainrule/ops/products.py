"""More products: kron, cross, vecdot, matvec, vecmat, convolve, correlate, polyval, vander, trapezoid.

Composites of broadcasting multiplication, indexing and ``matmul``, so each is exact to
any order in both modes (bilinear ones have zero third derivatives).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from . import elementwise, reductions
from . import shape as shape_ops
from ._define import conj, ndim_of, normalize_axis, np_attr, raw, shape_of, wrap_like, xp_where
from .contraction import matmul, outer, tensordot
from .declare import implements


@implements(np.kron)
def kron(a: Any, b: Any) -> Any:
    """Kronecker product: blocks ``a[i, j] * b``.

    Example:
        >>> import chainrule as cr
        >>> cr.kron(cr.Tensor([1.0, 2.0]), cr.Tensor([1.0, 10.0]))
        Tensor([ 1., 10.,  2., 20.])
    """
    sa, sb = shape_of(a), shape_of(b)
    nd = max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    wide_a = shape_ops.reshape(a, tuple(n for s in sa for n in (s, 1)))
    wide_b = shape_ops.reshape(b, tuple(n for s in sb for n in (1, s)))
    return shape_ops.reshape(elementwise.multiply(wide_a, wide_b), tuple(x * y for x, y in zip(sa, sb, strict=False)))


def _component(v: Any, i: int) -> Any:
    return shape_ops.getitem(v, (Ellipsis, i)) if shape_of(v)[-1] > i else 0.0


@implements(np.cross)
def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Any:
    """Cross product of 3-vectors (2-vectors are taken with a zero third component)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = shape_ops.moveaxis(a, axisa, -1)
    b = shape_ops.moveaxis(b, axisb, -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: vectors must have 2 or 3 components, got {na} and {nb}")
    a0, a1, a2 = (_component(a, i) for i in range(3))
    b0, b1, b2 = (_component(b, i) for i in range(3))
    z = elementwise.subtract(elementwise.multiply(a0, b1), elementwise.multiply(a1, b0))
    if na == nb == 2:
        return z
    x = elementwise.subtract(elementwise.multiply(a1, b2), elementwise.multiply(a2, b1))
    y = elementwise.subtract(elementwise.multiply(a2, b0), elementwise.multiply(a0, b2))
    parts = _broadcast(x, y, z)
    return shape_ops.moveaxis(shape_ops.stack(parts, axis=-1), -1, axisc)


def _broadcast(*xs: Any) -> list[Any]:
    shape = np.broadcast_shapes(*[shape_of(x) for x in xs])
    return [shape_ops.broadcast_to(x, shape) for x in xs]


@implements(np_attr("linalg.cross"), namespaces=())  # public as chainrule.linalg.cross
def linalg_cross(x1: Any, x2: Any, /, *, axis: int = -1, dim: Any = None) -> Any:
    """Cross product of 3-vectors along ``axis`` (numpy.linalg.cross; ``dim``: PyTorch's name for it)."""
    axis = axis if dim is None else dim
    if shape_of(x1)[axis] != 3 or shape_of(x2)[axis] != 3:
        raise ValueError(f"linalg.cross: vectors must have 3 components, got shapes {shape_of(x1)} and {shape_of(x2)}")
    return cross(x1, x2, axis=axis)


def _vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Dot product of vectors along ``axis`` (broadcasting the others)."""
    s1, s2 = shape_of(x1), shape_of(x2)
    if not s1 or not s2 or s1[axis] != s2[axis]:
        raise ValueError(f"vecdot: the vectors along axis {axis} must have one length, got shapes {s1} and {s2}")
    return reductions.sum(elementwise.multiply(conj(x1), x2), axis=axis)


@implements(np_attr("vecdot"), np_attr("linalg.vecdot"))
def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, dim: Any = None) -> Any:
    """Dot product of vectors along ``axis`` (broadcasting the others; ``dim``: PyTorch's name for it)."""
    return _vecdot(x1, x2, axis=axis if dim is None else dim)


vecdot.ufunc_kwargs = frozenset({"axis"})  # type: ignore[attr-defined]


@implements(np_attr("matvec"))
def matvec(x1: Any, x2: Any, /) -> Any:
    """Matrix times vector over the last axes: (..., m, n) and (..., n) give (..., m)."""
    return shape_ops.getitem(matmul(x1, shape_ops.expand_dims(x2, -1)), (Ellipsis, 0))


@implements(np_attr("vecmat"))
def vecmat(x1: Any, x2: Any, /) -> Any:
    """Vector times matrix over the last axes: (..., n) and (..., n, m) give (..., m)."""
    return shape_ops.getitem(matmul(shape_ops.expand_dims(conj(x1), -2), x2), (Ellipsis, 0, slice(None)))


# np.linalg's aliases of the contraction ops
implements(np_attr("linalg.outer"))(outer)
implements(np_attr("linalg.tensordot"))(tensordot)
implements(np_attr("linalg.matmul"))(matmul)


def _full_convolution(a: Any, v: Any) -> Any:
    n, m = shape_of(a)[0], shape_of(v)[0]
    zeros = xp_where(a).zeros(m - 1, dtype=np.result_type(raw(a)))  # where a is
    padded = shape_ops.concatenate([zeros, a, zeros])
    k = np.arange(n + m - 1)[:, None]
    j = np.arange(m)[None, :]
    return matmul(shape_ops.getitem(padded, k + (m - 1) - j), v)  # row k holds a[k - j], j = 0..m-1


def _check_1d(name: str, a: Any, v: Any) -> None:
    if ndim_of(a) != 1 or ndim_of(v) != 1 or not shape_of(a)[0] or not shape_of(v)[0]:
        raise ValueError(f"{name}: inputs must be non-empty 1-D arrays, got shapes {shape_of(a)} and {shape_of(v)}")


@implements(np.convolve)
def convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """Discrete linear convolution of two 1-D arrays (``mode`` 'full', 'same' or 'valid')."""
    _check_1d("convolve", a, v)
    if shape_of(v)[0] > shape_of(a)[0]:
        a, v = v, a
    n, m = shape_of(a)[0], shape_of(v)[0]
    full = _full_convolution(a, v)
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return shape_ops.getitem(full, slice(start, start + n))
    if mode == "valid":
        return shape_ops.getitem(full, slice(m - 1, n))
    raise ValueError(f"convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")


@implements(np.correlate)
def correlate(a: Any, v: Any, mode: str = "valid") -> Any:
    """Cross-correlation of two 1-D arrays: sum_n a[n + k] * v[n] (``mode`` as in ``convolve``)."""
    _check_1d("correlate", a, v)
    v = conj(v)  # numpy.correlate conjugates v
    flipped = shape_ops.getitem(v, slice(None, None, -1))
    if shape_of(v)[0] > shape_of(a)[0]:
        return shape_ops.getitem(convolve(shape_ops.getitem(a, slice(None, None, -1)), v, mode), slice(None, None, -1))
    return convolve(a, flipped, mode)


@implements(np.polyval)
def polyval(p: Any, x: Any) -> Any:
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's rule."""
    coeffs = list(p) if isinstance(p, (list, tuple)) else [shape_ops.getitem(p, i) for i in range(shape_of(p)[0])]
    y: Any = xp_where(x).zeros(shape_of(x), dtype=np.result_type(raw(x), 0.0))
    for c in coeffs:
        y = elementwise.add(elementwise.multiply(y, x), c)
    return y


@implements(np.vander)
def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """Columns of powers of the 1-D ``x`` (decreasing powers unless ``increasing``)."""
    if ndim_of(x) != 1:
        raise ValueError(f"vander: x must be 1-D, got shape {shape_of(x)}")
    cols = shape_of(x)[0] if N is None else int(N)
    if cols == 0:
        return wrap_like(xp_where(x).zeros((shape_of(x)[0], 0), dtype=np.result_type(raw(x))), x)
    powers: list[Any] = [xp_where(x).ones(shape_of(x), dtype=np.result_type(raw(x)))]
    for _ in range(1, cols):
        powers.append(elementwise.multiply(powers[-1], x))
    out = shape_ops.stack(powers, axis=1)
    out = out if increasing else shape_ops.getitem(out, (slice(None), slice(None, None, -1)))
    return wrap_like(out, x) if not isinstance(out, Tensor) else out  # (one column of ones: still a Tensor for one)


def _trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    nd = ndim_of(y)
    ax = normalize_axis(axis, nd)[0]
    head = (slice(None),) * ax
    upper, lower = shape_ops.getitem(y, head + (slice(1, None),)), shape_ops.getitem(y, head + (slice(None, -1),))
    if x is None:
        d: Any = dx
    elif ndim_of(x) == 1:
        shape = [1] * nd
        shape[ax] = -1
        d = shape_ops.reshape(elementwise.subtract(shape_ops.getitem(x, slice(1, None)),
                                                   shape_ops.getitem(x, slice(None, -1))), tuple(shape))
    else:
        xh = (slice(None),) * ax
        d = elementwise.subtract(shape_ops.getitem(x, xh + (slice(1, None),)),
                                 shape_ops.getitem(x, xh + (slice(None, -1),)))
    return reductions.sum(elementwise.multiply(d, elementwise.add(upper, lower)), axis=ax) / 2.0


@implements(np_attr("trapezoid"))
def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """Integral of ``y`` by the trapezoidal rule along ``axis`` (samples at ``x``, or spaced ``dx``)."""
    return _trapezoid(y, x, dx, axis)
