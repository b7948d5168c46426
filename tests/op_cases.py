"""Test cases for every primitive and every NumPy function chainrule covers, keyed by primitive.

Shared by ``test_ops_gradcheck.py`` (finite differences, both modes, second order),
``test_ops_registry.py`` (every registered primitive has a rule in each mode and a case
here) and ``test_oracle_ops.py`` (PyTorch's gradients, where it has the function).

A case: a name, the primitives it must exercise (checked by tracing it), the chainrule
call written as plain NumPy code (``np.cumsum(x)``: NumPy's dispatch is part of what is
tested), a hypothesis strategy drawing ``(input shapes, parameters)``, a maker filling
inputs away from kinks and singularities, and optionally the same function in PyTorch.
The cases of the first ops (``op_specs.SPECS``) are reused as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
import chainrule.nn.functional as F
import chainrule.numpy as cnp
from chainrule.ops.rotary import rotate
from op_declared import declared_case_fields
from op_specs import (
    SPECS,
    Maker,
    Shapes,
    _t_prod,
    _t_reduce,
    all_distinct,
    bcast,
    nonzero,
    off_bounds,
    on,
    one,
    reduction,
    uniform,
)

try:  # SciPy is an optional extra: without it there are no special-function cases (and no such primitives)
    import scipy.special as sc

    import chainrule.special as crs
except ImportError:  # pragma: no cover
    sc = crs = None

MAX_SIDE = 4


@dataclass(frozen=True)
class Case:
    name: str
    prims: tuple[str, ...]
    fn: Callable[..., Any]
    shapes: st.SearchStrategy
    make: Maker
    torch: Callable[..., Any] | None = None
    order: int = 2
    tol: float = 1.0  # scales gradcheck's rtol and atol
    tags: tuple[str, ...] = field(default=())

    def __repr__(self) -> str:
        return self.name


# -- strategies -------------------------------------------------------------------------------------
def fixed(*shapes: tuple[int, ...], **params: Any) -> st.SearchStrategy:
    return st.just((shapes, params))


@st.composite
def square(draw: Any, min_n: int = 1, max_n: int = 3, batch: bool = True, extra: int = 0) -> tuple[Shapes, dict]:
    """A (stack of) n x n matrices, plus ``extra`` right-hand sides (n,) or (n, k)."""
    n = draw(st.integers(min_n, max_n))
    lead = tuple(draw(st.lists(st.integers(1, 2), max_size=2 if batch else 0)))
    shapes: list[tuple[int, ...]] = [lead + (n, n)]
    for _ in range(extra):
        shapes.append(draw(st.sampled_from([(n,), (n, draw(st.integers(1, 3))), lead + (n, 2)])))
    return tuple(shapes), {}


@st.composite
def rectangular(draw: Any, batch: bool = True, tall: bool | None = None) -> tuple[Shapes, dict]:
    m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    if tall is True and m < n or tall is False and m > n:
        m, n = n, m
    lead = tuple(draw(st.lists(st.integers(1, 2), max_size=1 if batch else 0)))
    return (lead + (m, n),), {}


@st.composite
def axis_of(draw: Any, min_dims: int = 1, max_dims: int = 3, min_side: int = 1) -> tuple[Shapes, dict]:
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=MAX_SIDE))
    return (shape,), {"axis": draw(st.integers(-len(shape), len(shape) - 1))}


@st.composite
def axis_or_none(draw: Any, min_side: int = 1) -> tuple[Shapes, dict]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=min_side, max_side=MAX_SIDE))
    return (shape,), {"axis": draw(st.none() | st.integers(-len(shape), len(shape) - 1))}


@st.composite
def matrix_and_offset(draw: Any, min_dims: int = 2) -> tuple[Shapes, dict]:
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=MAX_SIDE))
    return (shape,), {"k": draw(st.integers(-2, 2))}


@st.composite
def vector(draw: Any, min_side: int = 1, max_side: int = 5, k: int = 1) -> tuple[Shapes, dict]:
    return tuple((draw(st.integers(min_side, max_side)),) for _ in range(k)), {}


# -- makers -----------------------------------------------------------------------------------------
def _orthogonal(rng: np.random.Generator, n: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(n, n)))
    return q * np.sign(np.diag(r))


def well_conditioned(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    """Square matrices I*n + noise (far from singular), then any right-hand sides."""
    out = []
    for k, s in enumerate(shapes):
        x = rng.uniform(-1, 1, size=s)
        if k == 0:
            x = x + 2.0 * s[-1] * np.eye(s[-1]) * rng.choice([-1.0, 1.0])
        out.append(x)
    return out


def symmetric_spread(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    """Symmetric matrices with eigenvalues at least 1 apart (for eigh)."""
    s = shapes[0]
    n = s[-1]
    batch = s[:-2]
    out = np.empty(s)
    for idx in np.ndindex(*batch):
        q = _orthogonal(rng, n)
        lam = np.arange(n) * 1.5 + rng.uniform(-2, 0) + rng.uniform(0, 0.3, size=n)
        out[idx] = (q * lam) @ q.T
    return [out]


def hermitian_spread(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    """Complex matrices whose Hermitian parts have eigenvalues at least 1 apart, off Hermitian by a small skew part
    (eigh reads one triangle: the part it ignores must get no gradient)."""
    s = shapes[0]
    n = s[-1]
    out = np.empty(s, dtype=complex)
    for idx in np.ndindex(*s[:-2]):
        q, _ = np.linalg.qr(rng.normal(size=(n, n)) + 1j * rng.normal(size=(n, n)))
        lam = np.arange(n) * 1.5 + rng.uniform(-2, 0) + rng.uniform(0, 0.3, size=n)
        skew = rng.uniform(-0.3, 0.3, size=(n, n)) + 1j * rng.uniform(-0.3, 0.3, size=(n, n))
        out[idx] = (q * lam) @ q.conj().T + (skew - skew.conj().T) / 2
    return [out]


def positive_definite(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    s = shapes[0]
    n = s[-1]
    out = np.empty(s)
    for idx in np.ndindex(*s[:-2]):
        q = _orthogonal(rng, n)
        out[idx] = (q * rng.uniform(0.5, 3.0, size=n)) @ q.T
    return [out]


def distinct_singular(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    """Matrices with singular values 1, 2, 3... (shuffled, jittered): distinct and non-zero."""
    s = shapes[0]
    m, n = s[-2], s[-1]
    k = min(m, n)
    out = np.empty(s)
    for idx in np.ndindex(*s[:-2]):
        u, v = _orthogonal(rng, m)[:, :k], _orthogonal(rng, n)[:, :k]
        sv = rng.permutation(np.arange(1.0, k + 1)) + rng.uniform(0, 0.2, size=k)
        out[idx] = (u * sv) @ v.T
    return [out]


def full_rank(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    return distinct_singular(rng, shapes[:1], p) + [rng.uniform(-1, 1, size=s) for s in shapes[1:]]


def positive(lo: float = 0.3, hi: float = 3.0) -> Maker:
    return uniform(lo, hi)


def with_nans(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    """Distinct values, some NaN; every line along every axis keeps at least two numbers (one if it is short)."""
    x = all_distinct(rng, shapes, p)[0]
    if x.ndim == 0:
        return [x]
    s = min(x.shape)
    keep = np.indices(x.shape).sum(axis=0) % s <= 1
    return [np.where(~keep & (rng.uniform(size=x.shape) < 0.5), np.nan, x)]


def with_nonfinite(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    x = rng.uniform(-2, 2, size=shapes[0])
    pick = rng.integers(0, 5, size=x.shape)
    return [np.where(pick == 0, np.nan, np.where(pick == 1, np.inf, np.where(pick == 2, -np.inf, x)))]


def off_grid(step: float) -> Maker:
    """Values whose x / step is at least 0.1 away from an integer (mod, floor_divide)."""

    def make(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
        k = rng.integers(-3, 3, size=shapes[0])
        return [(k + rng.uniform(0.1, 0.9, size=shapes[0])) * step]

    return make


def first_pos(lo: float, hi: float) -> Maker:
    """First input positive (lo..hi), the others anywhere in (-2, 2)."""

    def make(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
        return [rng.uniform(lo, hi, size=shapes[0])] + [rng.uniform(-2, 2, size=s) for s in shapes[1:]]

    return make


def knots_away(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    """Query points not within 0.05 of interp's knots, and values at the knots."""
    x = rng.uniform(-2, 3, size=shapes[0])
    for k in KNOTS:
        x = np.where(np.abs(x - k) < 0.05, k + 0.1, x)
    return [x, rng.uniform(-2, 2, size=shapes[1])]


KNOTS = np.array([-1.0, 0.0, 0.5, 2.0])


# -- PyTorch ------------------------------------------------------------------------------------------
def _torch() -> Any:
    import torch

    return torch


def T(name: str, **fixed_kw: Any) -> Callable[..., Any]:
    """torch.<dotted name>, looked up only when called."""

    def fn(*args: Any, **kw: Any) -> Any:
        obj = _torch()
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj(*args, **{**fixed_kw, **kw})

    return fn


def _tsym(x: Any) -> Any:
    return (x + x.transpose(-1, -2)) / 2


def _sym(x: Any) -> Any:
    return (x + np.swapaxes(x, -1, -2)) / 2


def _tflat(x: Any, axis: Any) -> tuple[Any, int]:
    """NumPy's axis=None (the flattened array) as a dim PyTorch's reductions take."""
    return (x.reshape(-1), 0) if axis is None else (x, axis)


def _tmedian(x: Any, axis: Any) -> Any:
    """NumPy's median: torch.median where the count is odd (PyTorch takes the lower of the two middle values
    where it is even, NumPy their mean: there torch.quantile(0.5), which averages them as NumPy does)."""
    x, dim = _tflat(x, axis)
    return _torch().median(x, dim).values if x.shape[dim] % 2 else _torch().quantile(x, 0.5, dim)


def _tnan_max(x: Any, axis: Any, sign: float) -> Any:
    x, dim = _tflat(x, axis)
    return sign * _torch().amax(sign * x.nan_to_num(nan=-sign * float("inf")), dim)


def _twhere_nan(x: Any, fill: float) -> Any:
    return _torch().where(_torch().isnan(x), _torch().full_like(x, fill), x)


def _tconvolve(a: Any, v: Any, mode: str, correlate: bool = False) -> Any:
    """numpy.convolve / numpy.correlate of 1-d arrays through conv1d (a cross-correlation): the full result,
    then NumPy's slice of it."""
    n, m = a.shape[0], v.shape[0]
    full = _torch().nn.functional.conv1d(a[None, None], (v if correlate else v.flip(0))[None, None],
                                         padding=m - 1)[0, 0]
    lo, hi = min(n, m), max(n, m)
    if mode == "full":
        return full
    if mode == "same":
        start = lo // 2 if correlate and m > n else (lo - 1) // 2
        return full[start:start + hi]
    return full[lo - 1:hi]


def _tnanvar(x: Any, dim: int) -> Any:
    """NumPy's nanvar (ddof 0) written out (torch has none); the NaN entries' deviations replaced by 0 before
    squaring, so that no NaN reaches a gradient."""
    keep = ~_torch().isnan(x)
    mean = _torch().nanmean(x, dim, keepdim=True)
    dev = _torch().where(keep, x - mean, _torch().zeros_like(x))
    return (dev**2).sum(dim) / keep.sum(dim)


def _tbetaln(a: Any, b: Any) -> Any:
    return _torch().lgamma(a) + _torch().lgamma(b) - _torch().lgamma(a + b)


def _tpolyval(p: Any, x: Any) -> Any:
    out = _torch().zeros_like(x)
    for c in p:
        out = out * x + c
    return out


# -- the cases ----------------------------------------------------------------------------------------
ANYWHERE = uniform(-2, 2)


def with_zeros(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    """Entries away from 0, with about a quarter (at least one, two where there is room) exactly 0:
    where "divide by the value" rules fail, and second derivatives of products are not 0."""
    out = []
    for s in shapes:
        x = nonzero(-1.5, 1.5, 0.4)(rng, (s,), p)[0]
        flat = x.reshape(-1)
        k = max(min(2, flat.size), flat.size // 4)
        flat[rng.choice(flat.size, size=k, replace=False)] = 0.0
        out.append(flat.reshape(s))
    return out


def case(name: str, fn: Callable[..., Any], shapes: st.SearchStrategy, make: Maker = ANYWHERE,
         prims: tuple[str, ...] | str = (), torch: Callable[..., Any] | None = None, **kw: Any) -> Case:
    prims = (prims,) if isinstance(prims, str) else tuple(prims)
    return Case(name, prims, fn, shapes, make, torch, **kw)


def unary(name: str, np_fn: Any, make: Maker, torch_name: str | None = None, prims: Any = None, **kw: Any) -> Case:
    return case(name, np_fn, one(), make, prims=name if prims is None else prims,
                torch=T(torch_name) if torch_name else None, **kw)


def binary(name: str, np_fn: Any, make: Maker, torch_name: str | None = None, prims: Any = None, **kw: Any) -> Case:
    return case(name, np_fn, bcast(2), make, prims=name if prims is None else prims,
                torch=T(torch_name) if torch_name else None, **kw)


ELEMENTWISE = [
    unary("sinc_near_0", np.sinc, uniform(-1e-4, 1e-4), None, prims="sinc"),  # torch loses digits there
    unary("rint", np.rint, off_grid(1.0), "round", prims="round"),
    unary("fix", np.fix, off_grid(1.0), "trunc", prims="trunc"),
    unary("fabs", np.fabs, nonzero(-2, 2), "abs", prims="abs"),
    unary("deg2rad", np.deg2rad, uniform(-90, 90), "deg2rad", prims="multiply"),
    unary("radians", np.radians, uniform(-90, 90), "deg2rad", prims="multiply"),
    unary("rad2deg", np.rad2deg, uniform(-2, 2), "rad2deg", prims="multiply"),
    unary("degrees", np.degrees, uniform(-2, 2), "rad2deg", prims="multiply"),
    unary("sign_np", np.sign, nonzero(-2, 2), "sign", prims="sign"),
    unary("positive", np.positive, uniform(-2, 2), "positive", prims=()),
    unary("conjugate", np.conjugate, uniform(-2, 2), "conj", prims=()),
    unary("real", np.real, uniform(-2, 2), None, prims=()),
    unary("imag", np.imag, uniform(-2, 2), None, prims="multiply"),
    case("heaviside", lambda x: np.heaviside(x, 0.5), one(), nonzero(-2, 2), prims="sign",
         torch=lambda x: (_torch().sign(x) + 1) / 2),  # = torch.heaviside(x, 0.5), which has no derivative
    case("copysign", lambda x, y: np.copysign(x, y), bcast(2), nonzero(-2, 2), prims="abs",
         torch=lambda x, y: _torch().copysign(x, y.detach())),
    binary("logaddexp2", np.logaddexp2, uniform(-3, 3), "logaddexp2", prims="logaddexp"),
    binary("fmax", np.fmax, lambda r, s, p: [r.uniform(-2, 2, s[0]), r.uniform(-2, 2, s[1]) + 5.0], "fmax",
           prims="where"),
    binary("fmin", np.fmin, lambda r, s, p: [r.uniform(-2, 2, s[0]), r.uniform(-2, 2, s[1]) + 5.0], "fmin",
           prims="where"),
    case("fmax_nan", lambda x, y: np.fmax(np.where(np.arange(np.size(x)).reshape(np.shape(x)) % 2 == 0, np.nan, x), y),
         bcast(2), lambda r, s, p: [r.uniform(-2, 2, s[0]), r.uniform(-2, 2, s[1]) + 5.0], prims="where"),
    binary("float_power", np.float_power, first_pos(0.5, 2.0), "float_power", prims="power"),
    case("mod", lambda x: np.mod(x, 0.7), one(), off_grid(0.7), prims="subtract",
         torch=lambda x: _torch().remainder(x, 0.7)),
    case("remainder_y", lambda x, y: np.remainder(x, y), fixed((3,), (3,)),
         lambda r, s, p: [np.array([0.3, 1.9, -1.1]), np.array([0.7, 0.8, 0.9])], prims="multiply",
         torch=lambda x, y: x - _torch().floor(x / y).detach() * y),
    case("fmod", lambda x: np.fmod(x, 0.7), one(), off_grid(0.7), prims="subtract",
         torch=lambda x: _torch().fmod(x, 0.7)),
    case("floor_divide", lambda x: np.floor_divide(x, 0.7), one(), off_grid(0.7), prims="floor",
         torch=lambda x: _torch().floor(x / 0.7)),  # (torch.floor_divide has no derivative)
    case("ldexp", lambda x: np.ldexp(x, np.arange(np.size(x)).reshape(np.shape(x)) % 3 - 1), one(), uniform(-2, 2),
         prims="ldexp",
         torch=lambda x: x * 2.0 ** _torch().tensor(np.arange(x.numel()).reshape(tuple(x.shape)) % 3 - 1.0)),
    case("astype", lambda x: np.sin(cr.astype(x, np.float64)), one(), uniform(-2, 2), prims="astype"),
    case("copy", lambda x: np.copy(x) * 2.0, one(), uniform(-2, 2), prims="identity", torch=lambda x: x.clone() * 2),
    # (an explicit neginf: the default, -1.8e308, overflows the checks' weighted sums; test_numpy_dispatch checks it)
    case("nan_to_num", lambda x: np.nan_to_num(x, nan=1.5, posinf=3.0, neginf=-2.5), one(1), with_nonfinite,
         prims="where", torch=lambda x: _torch().nan_to_num(x, nan=1.5, posinf=3.0, neginf=-2.5)),
    case("select", lambda x, y: np.select([_vals(x) > 0.5, _vals(y) < 0], [x * y, np.exp(y)], 0.25), bcast(2),
         prims="where"),
]


def _as_tensor(x: Any) -> Any:
    return x if isinstance(x, cr.Tensor) else cr.Tensor(x)


def _vals(x: Any) -> np.ndarray:
    """The values of a case's input, to build a condition from: where the input lives (a device's array stays
    there)."""
    arr = x._data if isinstance(x, cr.Tensor) else x
    return arr if cr.devices.is_off_host(arr) else np.asarray(x.data if hasattr(x, "data") else x)


CUMULATIVE = [
    case("cumsum", lambda x, axis: np.cumsum(x, axis=axis), axis_or_none(), prims="cumsum",
         torch=lambda x, axis: _torch().cumsum(x.reshape(-1) if axis is None else x, dim=0 if axis is None else axis)),
    case("cumsum_method", lambda x, axis: x.cumsum(axis) if hasattr(x, "cumsum") else np.cumsum(x, axis), axis_of(),
         prims="cumsum", torch=lambda x, axis: _torch().cumsum(x, dim=axis)),
    case("cumprod", lambda x, axis: np.cumprod(x, axis=axis), axis_or_none(), nonzero(-1.5, 1.5, 0.4), prims="cumprod",
         torch=lambda x, axis: _torch().cumprod(x.reshape(-1) if axis is None else x, dim=0 if axis is None else axis)),
    case("cumprod_with_zeros", lambda x, axis: np.cumprod(x, axis=axis), axis_or_none(min_side=2), with_zeros,
         prims="cumprod", order=3,
         torch=lambda x, axis: _torch().cumprod(x.reshape(-1) if axis is None else x, dim=0 if axis is None else axis)),
    case("prod_with_zeros", lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims), reduction(),
         with_zeros, prims="prod", order=3, torch=lambda x, axis, keepdims: _t_prod(x, axis, keepdims)),
    case("diff", lambda x, axis, n: np.diff(x, n=n, axis=axis), st.tuples(axis_of(min_side=3),
         st.integers(0, 2)).map(lambda t: (t[0][0], {**t[0][1], "n": t[1]})), prims="subtract",
         torch=lambda x, axis, n: _torch().diff(x, n=n, dim=axis) if n else x),
    case("diff_prepend_append", lambda x, y: np.diff(x, prepend=y, append=0.5), fixed((3, 4), (3, 1)),
         prims="concatenate", torch=lambda x, y: _torch().diff(x, prepend=y, append=_torch().full((3, 1), 0.5,
                                                                                               dtype=x.dtype))),
    case("ediff1d", lambda x: np.ediff1d(x, to_begin=[1.0], to_end=2.0), one(1), prims="subtract"),
    case("nancumsum", lambda x: np.nancumsum(x, axis=-1), one(1), with_nans, prims="cumsum",
         torch=lambda x: _torch().cumsum(_twhere_nan(x, 0.0), -1)),
    case("nancumprod", lambda x: np.nancumprod(x, axis=0), one(1), with_nans, prims="cumprod",
         torch=lambda x: _torch().cumprod(_twhere_nan(x, 1.0), 0)),
    case("cumulative_sum", lambda x: np.cumulative_sum(x, axis=0, include_initial=True), one(1), prims="cumsum",
         torch=lambda x: _torch().cat([x[:1] * 0, _torch().cumsum(x, 0)])),
    case("cumulative_prod", lambda x: np.cumulative_prod(x, axis=-1), one(1), nonzero(-1.5, 1.5, 0.4),
         prims="cumprod", torch=lambda x: _torch().cumprod(x, -1)),
]

ARRAYS = [
    case("diag_1d", lambda x, k: np.diag(x, k), st.tuples(vector(), st.integers(-2, 2)).map(
        lambda t: (t[0][0], {"k": t[1]})), prims="scatter_add", torch=lambda x, k: _torch().diag(x, k)),
    case("diag_2d", lambda x, k: np.diag(x, k), matrix_and_offset().filter(lambda t: len(t[0][0]) == 2),
         prims="getitem", torch=lambda x, k: _torch().diag(x, k)),
    case("diagflat", lambda x: np.diagflat(x, 1), one(1, 2), prims="scatter_add",
         torch=lambda x: _torch().diagflat(x, 1)),
    case("diagonal", lambda x, k: np.diagonal(x, k, -1, 0), matrix_and_offset(), prims="getitem",
         torch=lambda x, k: _torch().diagonal(x, k, -1, 0)),
    case("diagonal_method", lambda x, k: x.diagonal(k), matrix_and_offset(), prims="getitem",
         torch=lambda x, k: _torch().diagonal(x, k, 0, 1)),
    case("trace", lambda x, k: np.trace(x, k), matrix_and_offset(), prims="getitem",
         torch=lambda x, k: _torch().diagonal(x, k, 0, 1).sum(-1)),
    case("tril", lambda x, k: np.tril(x, k), matrix_and_offset(), prims="where",
         torch=lambda x, k: _torch().tril(x, k)),
    case("triu", lambda x, k: np.triu(x, k), matrix_and_offset(), prims="where",
         torch=lambda x, k: _torch().triu(x, k)),
    case("tril_1d", lambda x: np.tril(x), one(1, 1), prims="where"),
    case("flip", lambda x, axis: np.flip(x, axis), axis_or_none(), prims="getitem",
         torch=lambda x, axis: _torch().flip(x, tuple(range(x.ndim)) if axis is None else (axis,))),
    case("fliplr", np.fliplr, one(2), prims="getitem", torch=T("fliplr")),
    case("flipud", np.flipud, one(1), prims="getitem", torch=T("flipud")),
    case("rot90", lambda x, k: np.rot90(x, k, axes=(1, 0)), st.tuples(one(2), st.integers(-3, 4)).map(
        lambda t: (t[0][0], {"k": t[1]})), prims="getitem", torch=lambda x, k: _torch().rot90(x, k, (1, 0))),
    case("roll", lambda x, shift, axis: np.roll(x, shift, axis), st.tuples(axis_or_none(), st.integers(-5, 5)).map(
        lambda t: (t[0][0], {**t[0][1], "shift": t[1]})), prims="getitem",
         torch=lambda x, shift, axis: _torch().roll(x, shift, axis)),
    case("roll_multi", lambda x: np.roll(x, (1, -2), axis=(0, -1)), one(2), prims="getitem",
         torch=lambda x: _torch().roll(x, (1, -2), (0, -1))),
    case("rollaxis", lambda x: np.rollaxis(x, -1, 1), one(3, 3), prims="transpose"),
    case("moveaxis", lambda x: np.moveaxis(x, 0, -1), one(2), prims="transpose",
         torch=lambda x: _torch().movedim(x, 0, -1)),
    case("tile", lambda x, reps: np.tile(x, reps), st.tuples(one(0, 2), st.sampled_from([2, (2, 1), (1, 2, 2)])).map(
        lambda t: (t[0][0], {"reps": t[1]})), prims="broadcast_to", torch=lambda x, reps: _torch().tile(
            x, (reps,) if isinstance(reps, int) else reps)),
    case("repeat", lambda x, axis: np.repeat(x, 2, axis=axis), axis_or_none(), prims="getitem",
         torch=lambda x, axis: _torch().repeat_interleave(x, 2, dim=axis)),
    case("repeat_counts", lambda x: np.repeat(x, [2, 0, 1], axis=0), fixed((3, 2)), prims="getitem",
         torch=lambda x: _torch().repeat_interleave(x, _torch().tensor([2, 0, 1]), dim=0)),
    case("repeat_method", lambda x: x.repeat(repeats=3) if hasattr(x, "repeat") and not isinstance(x, np.ndarray)
         else np.repeat(x, 3), one(1), prims="getitem"),
    case("pad_constant", lambda x: np.pad(x, ((1, 0), (2, 1)), constant_values=((7, 8), (9, 10))), one(2, 2),
         prims="concatenate"),
    *[case(f"pad_{mode}", lambda x, mode=mode: np.pad(x, ((1, 2), (2, 0)), mode=mode), one(2, 2, ),
           lambda r, s, p: [r.uniform(-2, 2, size=tuple(max(n, 3) for n in s[0]))], prims="getitem",
           torch=None if mode == "symmetric" else lambda x, mode=mode: _torch().nn.functional.pad(  # (no symmetric)
               x[None], (2, 0, 1, 2), mode={"edge": "replicate", "wrap": "circular"}.get(mode, mode))[0])
      for mode in ("edge", "reflect", "symmetric", "wrap")],
    *[case(f"pad_{mode}_odd", lambda x, mode=mode: np.pad(x, ((3, 1), (0, 2)), mode=mode, reflect_type="odd"),
           one(2, 2), lambda r, s, p: [r.uniform(-2, 2, size=tuple(max(n, 2) for n in s[0]))], prims="matmul")
      for mode in ("reflect", "symmetric")],
    case("atleast_3d", lambda x: np.atleast_3d(x) * 1.0, one(0, 3), prims=(), torch=lambda x: _torch().atleast_3d(x)),
    case("dstack", lambda x, y: np.dstack([x, y]), fixed((2, 3), (2, 3)), prims="concatenate",
         torch=lambda x, y: _torch().dstack([x, y])),
    case("column_stack", lambda x, y: np.column_stack([x, y]), fixed((3,), (3, 2)), prims="concatenate",
         torch=lambda x, y: _torch().column_stack([x, y])),
    case("hstack_vstack", lambda x, y: np.vstack([np.hstack([x, y]), np.hstack([y, x])]), fixed((2,), (2,)),
         prims="concatenate"),
    case("append", lambda x, y: np.append(x, y), bcast(2), prims="concatenate"),
    case("append_axis", lambda x, y: np.append(x, y, axis=1), fixed((2, 3), (2, 1)), prims="concatenate"),
    case("delete", lambda x: np.delete(x, [0, 2], axis=-1), fixed((2, 4)), prims="getitem"),
    case("block", lambda x, y: np.block([[x, y], [y, 2.0 * x]]), fixed((2, 2), (2, 2)), prims="getitem"),
    case("block_promoted", lambda x, y: np.block([[x], [y]]), fixed((3,), (2, 3)), prims="getitem"),
    case("insert", lambda x, v: [np.insert(x, [0, 2, 2], v, axis=1), np.insert(x, 1, v[0])], fixed((2, 3), (3,)),
         prims="getitem"),
    case("resize", lambda x: np.resize(x, (3, 5)), fixed((2, 3)), prims="getitem"),
    case("choose", lambda x, y: [np.choose(np.array([[0, 1, 1], [1, 0, 0]]), [x, y]),
                                 np.choose(np.array([3, -1]), [x[0, :2], y[:2]], mode="wrap")], fixed((2, 3), (3,)),
         prims="getitem"),
    case("insert_free_splits", lambda x: [p * 1.0 for p in (*np.hsplit(x, 2), *np.vsplit(x, 2),
                                                            *np.dsplit(x.reshape(2, 2, 2), 2))],
         fixed((2, 4)), prims="getitem"),
    case("array_split", lambda x: np.array_split(x, [1, 3]), fixed((4, 2)), prims="getitem"),
    case("meshgrid", lambda x, y: np.meshgrid(x, y, indexing="xy"), vector(k=2), prims="broadcast_to",
         torch=lambda x, y: _torch().meshgrid(x, y, indexing="xy")),
    case("meshgrid_ij_sparse", lambda x, y: np.meshgrid(x, y, indexing="ij", sparse=True), vector(k=2),
         prims="reshape"),
    case("broadcast_arrays", lambda x, y: np.broadcast_arrays(x, y), bcast(2), prims="broadcast_to",
         torch=lambda x, y: _torch().broadcast_tensors(x, y)),
    case("concat", lambda x, y: np.concat([x, y], axis=-1), fixed((2, 3), (2, 1)), prims="concatenate"),
    case("permute_dims", lambda x: np.permute_dims(x, (1, 2, 0)), one(3, 3), prims="transpose",
         torch=lambda x: x.permute(1, 2, 0)),
    case("matrix_transpose", lambda x: np.matrix_transpose(x), one(2), prims="transpose",
         torch=lambda x: x.transpose(-1, -2)),
    case("unstack", lambda x: np.unstack(x, axis=1), one(2), prims="getitem",
         torch=lambda x: _torch().unbind(x, dim=1)),
    case("ravel_flatten", lambda x: np.ravel(x) * (x.flatten() if hasattr(x, "flatten") else np.ravel(x)), one(),
         prims="reshape"),
    case("atleast_1d_2d", lambda x: np.atleast_2d(np.atleast_1d(x)) * 1.0, one(0, 1), prims=()),
    case("take", lambda x: np.take(x, [2, 0, 0, -1]), fixed((2, 2)), prims="getitem",
         torch=lambda x: _torch().take(x, _torch().tensor([2, 0, 0, -1]))),
    case("take_axis", lambda x: np.take(x, [[1, 0], [0, 0]], axis=-1), fixed((3, 2)), prims="getitem",
         torch=lambda x: x[:, _torch().tensor([[1, 0], [0, 0]])]),
    case("take_along_axis", lambda x: np.take_along_axis(x, np.argsort(_vals(x), axis=0), axis=0), one(2),
         all_distinct, prims="getitem", torch=lambda x: _torch().take_along_dim(x, _torch().argsort(x, 0), 0)),
    case("compress", lambda x: np.compress([True, False, True], x, axis=0), fixed((3, 2)), prims="getitem"),
    case("extract", lambda x: np.extract(np.arange(6).reshape(2, 3) % 2 == 0, x), fixed((2, 3)), prims="getitem"),
]

SORTING = [
    case("sort", lambda x, axis: np.sort(x, axis=axis), axis_or_none(), all_distinct, prims="getitem",
         torch=lambda x, axis: _torch().sort(x.reshape(-1) if axis is None else x, dim=-1 if axis is None else
                                             axis).values),
    case("median", lambda x, axis: np.median(x, axis=axis), axis_or_none(), all_distinct, prims="getitem",
         torch=_tmedian),
    case("median_keepdims", lambda x: np.median(x, axis=(0, 1), keepdims=True), one(2, 3), all_distinct,
         prims="getitem", torch=lambda x: _tmedian(x.reshape(-1, *x.shape[2:]), 0).reshape(1, 1, *x.shape[2:])),
    case("quantile", lambda x, axis: np.quantile(x, [0.1, 0.5, 0.8], axis=axis), axis_or_none(), all_distinct,
         prims="getitem", torch=lambda x, axis: _torch().quantile(
             x, _torch().tensor([0.1, 0.5, 0.8], dtype=x.dtype), dim=axis)),
    # Tensor.median: PyTorch's, the lower middle entry of an even count (torch.median itself is the twin)
    case("median_method", lambda x, axis: _as_tensor(x).median() if axis is None else _as_tensor(x).median(axis)[0],
         axis_or_none(), all_distinct, prims=(), torch=lambda x, axis: _torch().median(x) if axis is None
         else _torch().median(x, axis).values),
    case("percentile", lambda x: np.percentile(x, 35.0, axis=-1, keepdims=True), one(1), all_distinct,
         prims="getitem", torch=lambda x: _torch().quantile(x, 0.35, dim=-1, keepdim=True)),
    # (not torch.nanmedian: like torch.median, it takes the lower of the two middle values, NumPy their mean)
    case("nanmedian", lambda x, axis: np.nanmedian(x, axis=axis), axis_or_none(), with_nans, prims="getitem",
         torch=lambda x, axis: (lambda t, d: _torch().nanquantile(t, 0.5, d))(*_tflat(x, axis))),
    case("nanquantile", lambda x: np.nanquantile(x, 0.3), one(1), with_nans, prims="getitem",
         torch=lambda x: _torch().nanquantile(x, 0.3)),
    case("nanpercentile", lambda x: np.nanpercentile(x, [20, 70], axis=0), one(1), with_nans, prims="getitem",
         torch=lambda x: _torch().nanquantile(x, _torch().tensor([0.2, 0.7], dtype=x.dtype), dim=0)),
    case("interp", lambda x, fp: np.interp(x, on(x, KNOTS), fp), fixed((5,), (4,)), knots_away, prims="getitem"),
    case("interp_bounds", lambda x, fp: np.interp(x, on(x, KNOTS), fp, left=fp[1], right=-1.0), fixed((2, 3), (4,)),
         knots_away, prims="where"),
]

STATS = [
    case("nansum", lambda x, axis: np.nansum(x, axis=axis), axis_or_none(), with_nans, prims="sum",
         torch=lambda x, axis: _torch().nansum(x, dim=axis) if axis is not None else _torch().nansum(x)),
    case("nanprod", lambda x: np.nanprod(x, axis=-1), one(1), with_nans, prims="prod",
         torch=lambda x: _torch().prod(_twhere_nan(x, 1.0), -1)),
    case("nanmean", lambda x, axis: np.nanmean(x, axis=axis), axis_or_none(), with_nans, prims="sum",
         torch=lambda x, axis: _torch().nanmean(x, dim=axis) if axis is not None else _torch().nanmean(x)),
    case("nanvar", lambda x: np.nanvar(x, axis=-1, ddof=0), one(1), with_nans, prims="sum",
         torch=lambda x: _tnanvar(x, -1)),
    case("nanstd", lambda x: np.nanstd(x, axis=0), fixed((3, 4)), with_nans, prims="sqrt",
         torch=lambda x: _tnanvar(x, 0).sqrt()),
    case("nanmax", lambda x, axis: np.nanmax(x, axis=axis), axis_or_none(), with_nans, prims="max",
         torch=lambda x, axis: _tnan_max(x, axis, 1.0)),
    case("nanmin", lambda x, axis: np.nanmin(x, axis=axis), axis_or_none(), with_nans, prims="min",
         torch=lambda x, axis: _tnan_max(x, axis, -1.0)),
    case("ptp", lambda x, axis: np.ptp(x, axis=axis), axis_or_none(), all_distinct, prims="max",
         torch=lambda x, axis: _torch().amax(*_tflat(x, axis)) - _torch().amin(*_tflat(x, axis))),
    case("average", lambda x, w: np.average(x, axis=-1, weights=w), fixed((3, 4), (4,)),
         lambda r, s, p: [r.uniform(-2, 2, s[0]), r.uniform(0.5, 2, s[1])], prims="sum",
         torch=lambda x, w: (x * w).sum(-1) / w.sum()),
    case("average_returned", lambda x: np.average(x, axis=0, returned=True), one(1), prims="mean",
         torch=lambda x: [x.mean(0), _torch().full(x.shape[1:], float(x.shape[0]), dtype=x.dtype)]),
    case("var_std", lambda x: [np.var(x, ddof=1), np.std(x, axis=0)], fixed((3, 2)), prims="mean",
         torch=lambda x: [_torch().var(x, correction=1), _torch().std(x, 0, correction=0)]),
    case("cov", lambda x: np.cov(x), fixed((3, 5)), prims="matmul", torch=T("cov")),
    case("cov_rowvar", lambda x, y: np.cov(x, y, rowvar=False, bias=True), fixed((5, 2), (5,)), prims="matmul",
         torch=lambda x, y: _torch().cov(_torch().cat([x, y[:, None]], 1).T, correction=0)),
    case("corrcoef", lambda x: np.corrcoef(x), fixed((3, 6)), prims="sqrt", torch=T("corrcoef")),
]

PRODUCTS = [
    case("kron", lambda a, b: np.kron(a, b), st.tuples(one(0, 2), one(0, 2)).map(lambda t: (t[0][0] + t[1][0], {})),
         prims="multiply", torch=T("kron"), order=3),
    case("cross", lambda a, b: np.cross(a, b), hnp.mutually_broadcastable_shapes(
        num_shapes=2, max_dims=2, max_side=2).map(lambda r: (tuple(s + (3,) for s in r.input_shapes), {})),
         prims="multiply", torch=lambda a, b: _torch().linalg.cross(*_torch().broadcast_tensors(a, b))),
    case("cross_2d", lambda a, b: np.cross(a, b), fixed((2, 2), (2,)), prims="multiply",  # (torch: 3-vectors only)
         torch=lambda a, b: a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]),
    case("cross_axis", lambda a, b: np.cross(a, b, axis=0), fixed((3, 2), (3, 2)), prims="multiply",
         torch=lambda a, b: _torch().linalg.cross(a, b, dim=0)),
    case("linalg_cross", lambda a, b: np.linalg.cross(a, b), fixed((2, 3), (3,)), prims="multiply",
         torch=lambda a, b: _torch().linalg.cross(*_torch().broadcast_tensors(a, b))),
    case("vecdot", lambda a, b: np.vecdot(a, b), st.tuples(bcast(2), st.integers(1, 4)).map(
        lambda t: (tuple(s + (t[1],) for s in t[0][0]), {})), prims="sum",
         torch=lambda a, b: (a * b).sum(-1)),
    case("vecdot_axis", lambda a, b: np.vecdot(a, b, axis=0), fixed((3, 2), (3, 1)), prims="sum",
         torch=T("linalg.vecdot", dim=0)),
    case("linalg_vecdot", lambda a, b: np.linalg.vecdot(a, b), fixed((2, 3), (3,)), prims="sum",
         torch=T("linalg.vecdot")),
    case("matvec", lambda a, b: np.matvec(a, b), fixed((2, 3, 4), (4,)), prims="matmul", order=3,
         torch=T("matmul")),
    case("vecmat", lambda a, b: np.vecmat(a, b), fixed((3,), (2, 3, 4)), prims="matmul", order=3,
         torch=T("matmul")),
    case("inner_vdot", lambda a, b: [np.inner(a, b), np.vdot(a, b)], fixed((2, 3), (2, 3)), prims="matmul",
         order=3, torch=lambda a, b: [_torch().inner(a, b), _torch().vdot(a.reshape(-1), b.reshape(-1))]),
    case("linalg_outer", lambda a, b: np.linalg.outer(a, b), vector(k=2), prims="multiply", torch=T("outer")),
    case("linalg_matmul_tensordot", lambda a, b: [np.linalg.matmul(a, b), np.linalg.tensordot(a, b, axes=1)],
         fixed((2, 3), (3, 2)), prims="matmul", order=3,
         torch=lambda a, b: [_torch().linalg.matmul(a, b), _torch().tensordot(a, b, dims=1)]),
    case("multi_dot", lambda a, b, c: np.linalg.multi_dot([a, b, c]), fixed((3,), (3, 2), (2, 4)), prims="matmul",
         order=3, torch=lambda a, b, c: _torch().linalg.multi_dot([a, b, c])),
    *[case(f"convolve_{mode}", lambda a, v, mode=mode: np.convolve(a, v, mode), st.tuples(vector(), vector()).map(
        lambda t: (t[0][0] + t[1][0], {})), prims="matmul",
           torch=lambda a, v, mode=mode: _tconvolve(a, v, mode)) for mode in ("full", "same", "valid")],
    *[case(f"correlate_{mode}", lambda a, v, mode=mode: np.correlate(a, v, mode), st.tuples(vector(), vector()).map(
        lambda t: (t[0][0] + t[1][0], {})), prims="matmul",
           torch=lambda a, v, mode=mode: _tconvolve(a, v, mode, correlate=True)) for mode in ("full", "same", "valid")],
    case("polyval", lambda p, x: np.polyval(p, x), st.tuples(vector(max_side=4), one()).map(
        lambda t: (t[0][0] + t[1][0], {})), prims="multiply", torch=_tpolyval),
    case("vander", lambda x: np.vander(x, 4), one(1, 1), prims="multiply",
         torch=lambda x: _torch().stack([x**k for k in (3, 2, 1, 0)], 1)),  # torch.vander's double backward fails
    case("vander_increasing", lambda x: np.vander(x, increasing=True), one(1, 1), prims="multiply",
         torch=lambda x: _torch().stack([x**k for k in range(len(x))], 1)),
    case("trapezoid", lambda y, axis: np.trapezoid(y, dx=0.5, axis=axis), axis_of(min_side=2), prims="sum",
         torch=lambda y, axis: _torch().trapezoid(y, dx=0.5, dim=axis)),
    case("trapezoid_x", lambda y, x: np.trapezoid(y, x), fixed((2, 4), (4,)), prims="sum",
         torch=lambda y, x: _torch().trapezoid(y, x)),
]


LINALG = [
    case("inv", lambda a: np.linalg.inv(a), square(), well_conditioned, prims="inv", torch=T("linalg.inv")),
    case("det", lambda a: np.linalg.det(a), square(), well_conditioned, prims="det", torch=T("linalg.det")),
    case("slogdet", lambda a: np.linalg.slogdet(a)[1], square(), well_conditioned, prims="slogdet",
         torch=lambda a: _torch().linalg.slogdet(a)[1]),
    case("slogdet_sign", lambda a: (lambda s: s[0] * s[1])(np.linalg.slogdet(a)), square(), well_conditioned,
         prims="slogdet", torch=lambda a: (lambda s: s[0] * s[1])(_torch().linalg.slogdet(a))),
    case("solve", lambda a, b: np.linalg.solve(a, b), square(batch=False, extra=1), well_conditioned, prims="solve",
         torch=T("linalg.solve")),
    case("solve_batched", lambda a, b: np.linalg.solve(a, b), fixed((2, 3, 3), (3, 2)), well_conditioned,
         prims="solve", torch=T("linalg.solve")),
    case("cholesky", lambda a: np.linalg.cholesky(_sym(a)), square(), positive_definite, prims="cholesky",
         torch=lambda a: _torch().linalg.cholesky(_tsym(a))),
    case("cholesky_upper", lambda a: np.linalg.cholesky(_sym(a), upper=True), square(batch=False), positive_definite,
         prims="cholesky", torch=lambda a: _torch().linalg.cholesky(_tsym(a), upper=True)),
    case("eigh_values", lambda a: np.linalg.eigh(_sym(a))[0], square(), symmetric_spread, prims="eigh",
         torch=lambda a: _torch().linalg.eigh(_tsym(a))[0]),
    case("eigvalsh_upper", lambda a: np.linalg.eigvalsh(_sym(a), UPLO="U"), square(), symmetric_spread,
         prims="eigh", torch=lambda a: _torch().linalg.eigvalsh(_tsym(a), UPLO="U")),
    # eigenvectors are defined up to sign: test sign-free functions of them
    case("eigh_vectors", lambda a: (lambda r: r.eigenvectors ** 2 + r.eigenvalues[..., None, :])(np.linalg.eigh(
        _sym(a))), square(min_n=2), symmetric_spread, prims="eigh",
         torch=lambda a: (lambda r: r[1] ** 2 + r[0][..., None, :])(_torch().linalg.eigh(_tsym(a))), tol=10),
    case("eigh_projector", lambda a: (lambda r: r[1][..., :1] @ np.swapaxes(r[1][..., :1], -1, -2))(np.linalg.eigh(
        _sym(a))), square(min_n=2), symmetric_spread, prims="eigh", tol=10,  # the eigenvectors alone
         torch=lambda a: (lambda v: v[..., :1] @ v[..., :1].mT)(_torch().linalg.eigh(_tsym(a))[1])),
    case("eigh_values_sum", lambda a: np.linalg.eigh(_sym(a)).eigenvalues.sum(), square(), symmetric_spread,
         prims="eigh", torch=lambda a: _torch().linalg.eigh(_tsym(a))[0].sum()),
    case("svd_s", lambda a: np.linalg.svd(a, compute_uv=False), rectangular(), distinct_singular, prims="svd",
         torch=T("linalg.svdvals")),
    case("svdvals", lambda a: np.linalg.svdvals(a), rectangular(), distinct_singular, prims="svd",
         torch=T("linalg.svdvals")),
    case("svd_u", lambda a: np.linalg.svd(a, full_matrices=False)[0] ** 2, rectangular(), distinct_singular,
         prims="svd", torch=lambda a: _torch().linalg.svd(a, full_matrices=False)[0] ** 2, tol=10),
    case("svd_vh", lambda a: np.linalg.svd(a, full_matrices=False).Vh ** 2, rectangular(), distinct_singular,
         prims="svd", torch=lambda a: _torch().linalg.svd(a, full_matrices=False)[2] ** 2, tol=10),
    case("svd_u_vh", lambda a: (lambda r: r[0] @ r[2])(np.linalg.svd(a, full_matrices=False)), rectangular(),
         distinct_singular, prims="svd",
         torch=lambda a: (lambda r: r[0] @ r[2])(_torch().linalg.svd(a, full_matrices=False)), tol=10),
    case("svd_all", lambda a: (lambda r: [r.U ** 2, r.S, r.Vh ** 2])(np.linalg.svd(a, full_matrices=False)),
         rectangular(), distinct_singular, prims="svd", tol=10,  # every output's cotangent in one rule
         torch=lambda a: (lambda r: [r[0] ** 2, r[1], r[2] ** 2])(_torch().linalg.svd(a, full_matrices=False))),
    case("svd_full_tall", lambda a: (lambda r: [r[0][..., :, :2] ** 2, r[1]])(np.linalg.svd(a)), fixed((4, 2)),
         distinct_singular, prims="svd", tol=10,
         torch=lambda a: (lambda r: [r[0][..., :, :2] ** 2, r[1]])(_torch().linalg.svd(a))),
    case("svd_full_wide", lambda a: (lambda r: [r[2][..., :2, :] ** 2, r[1]])(np.linalg.svd(a)), fixed((2, 4)),
         distinct_singular, prims="svd", tol=10,
         torch=lambda a: (lambda r: [r[2][..., :2, :] ** 2, r[1]])(_torch().linalg.svd(a))),
    case("qr", lambda a: list(np.linalg.qr(a)), rectangular(tall=True), distinct_singular, prims="qr",
         torch=lambda a: list(_torch().linalg.qr(a))),
    case("qr_wide", lambda a: list(np.linalg.qr(a)), fixed((2, 4)), distinct_singular, prims="qr",
         torch=lambda a: list(_torch().linalg.qr(a))),
    case("qr_q_only", lambda a: np.linalg.qr(a).Q, rectangular(tall=True), distinct_singular, prims="qr",
         torch=lambda a: _torch().linalg.qr(a)[0]),
    case("qr_r_mode", lambda a: np.linalg.qr(a, mode="r"), rectangular(tall=True), distinct_singular, prims="qr",
         torch=lambda a: _torch().linalg.qr(a)[1]),  # (torch differentiates no mode="r": the reduced R is it)
    case("qr_complete", lambda a: (lambda r: [r[0][:, :2], r[1]])(np.linalg.qr(a, mode="complete")), fixed((4, 2)),
         distinct_singular, prims="qr",  # (torch differentiates no tall mode="complete": reduced Q, R over zeros)
         torch=lambda a: (lambda r: [r[0], _torch().cat([r[1], _torch().zeros_like(r[1])])])(_torch().linalg.qr(a))),
    case("norm", lambda x: np.linalg.norm(x), one(), nonzero(-2, 2), prims="norm2",
         torch=lambda x: _torch().linalg.norm(x.reshape(-1))),
    case("norm_axis", lambda x, axis: np.linalg.norm(x, axis=axis, keepdims=True), axis_of(), nonzero(-2, 2),
         prims="norm2", torch=lambda x, axis: _torch().linalg.vector_norm(x, dim=axis, keepdim=True)),
    *[case(f"norm_vector_{o}", lambda x, o=o: np.linalg.norm(x, o), one(1, 1), all_distinct,
           prims=("abs",) if o != 3 else "power", torch=lambda x, o=o: _torch().linalg.vector_norm(x, ord=o))
      for o in (1, 3, np.inf, -np.inf)],
    *[case(f"norm_matrix_{o}", lambda x, o=o: np.linalg.norm(x, o), one(2, 2), distinct_singular if o in
           ("nuc", 2, -2) else nonzero(-2, 2), prims=(), torch=lambda x, o=o: _torch().linalg.matrix_norm(x, ord=o),
           tol=10) for o in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)],
    case("vector_norm", lambda x: np.linalg.vector_norm(x, ord=3, axis=(0, -1)), one(2), nonzero(-2, 2),
         prims="power", torch=lambda x: _torch().linalg.vector_norm(x, ord=3, dim=(0, -1))),
    case("matrix_norm", lambda x: np.linalg.matrix_norm(x), one(2), prims="norm2",
         torch=T("linalg.matrix_norm")),
    case("cond", lambda x: np.linalg.cond(x), square(min_n=2), distinct_singular, prims="svd",
         torch=T("linalg.cond"), tol=10),
    case("cond_1", lambda x: np.linalg.cond(x, 1), square(batch=False), well_conditioned, prims="inv",
         # (torch.linalg.cond(x, 1)'s backward fails on an in-place inverse: its definition written out)
         torch=lambda x: _torch().linalg.matrix_norm(x, 1) * _torch().linalg.matrix_norm(_torch().linalg.inv(x), 1)),
    *[case(f"matrix_power_{n}", lambda a, n=n: np.linalg.matrix_power(a, n), square(), well_conditioned,
           prims="matmul" if n > 1 else ("inv" if n < 0 else "multiply"),
           torch=lambda a, n=n: _torch().linalg.matrix_power(a, n)) for n in (0, 3, -2)],
    case("matrix_exp", lambda a: cr.linalg.matrix_exp(a), square(), prims="matrix_exp", torch=T("linalg.matrix_exp")),
    case("matrix_exp_large_norm", lambda a: cr.matrix_exp(a * 4.0), square(min_n=2, batch=False), prims="matrix_exp",
         torch=lambda a: _torch().linalg.matrix_exp(a * 4.0), tol=10),  # (scaled and squared)
    case("lu_factor", lambda a: cr.linalg.lu_factor(a).LU, square(), well_conditioned, prims="lu_unpivoted",
         torch=lambda a: _torch().linalg.lu_factor(a)[0]),
    case("lu_factors", lambda a: list(cr.linalg.lu(a))[1:], square(), well_conditioned, prims="lu_unpivoted",
         torch=lambda a: list(_torch().linalg.lu(a))[1:]),
    case("lu_solve", lambda a, b: cr.linalg.lu_solve(*cr.linalg.lu_factor(a), b), fixed((2, 3, 3), (3, 2)),
         well_conditioned, prims=("lu_unpivoted", "solve"),
         torch=lambda a, b: _torch().linalg.lu_solve(*_torch().linalg.lu_factor(a), b.expand(2, 3, 2))),
    case("solve_triangular", lambda a, b: cr.linalg.solve_triangular(a, b, upper=True), fixed((2, 3, 3), (2, 3, 2)),
         well_conditioned, prims="solve", torch=lambda a, b: _torch().linalg.solve_triangular(a, b, upper=True)),
    case("pinv", lambda a: np.linalg.pinv(a), rectangular(batch=False), distinct_singular, prims="solve",
         torch=T("linalg.pinv"), tol=10),
    # a rank-1 product, kept rank 1 by every perturbation of its factors (the derivative holds the rank fixed)
    case("pinv_rank_deficient", lambda u, v: np.linalg.pinv(u @ v), fixed((3, 1), (1, 2)), prims="pinv_constant_rank"),
    case("lstsq", lambda a, b: np.linalg.lstsq(a, b)[0], fixed((4, 2), (4,)), full_rank, prims="solve",
         torch=lambda a, b: _torch().linalg.pinv(a) @ b),
    case("tensorinv", lambda a: np.linalg.tensorinv(a.reshape(2, 3, 6) if hasattr(a, "reshape") else a, ind=2),
         fixed((6, 6)), well_conditioned, prims="inv",
         torch=lambda a: _torch().linalg.tensorinv(a.reshape(2, 3, 6), ind=2)),
    case("tensorsolve", lambda a, b: np.linalg.tensorsolve(a.reshape(2, 3, 6), b), fixed((6, 6), (2, 3)),
         well_conditioned, prims="solve", torch=lambda a, b: _torch().linalg.tensorsolve(a.reshape(2, 3, 6), b)),
    case("linalg_trace_diagonal", lambda a: [np.linalg.trace(a), np.linalg.diagonal(a, offset=1)], one(2, 3),
         prims="getitem", torch=lambda a: [_torch().diagonal(a, 0, -2, -1).sum(-1), _torch().diagonal(a, 1, -2, -1)]),
]

def _special_cases() -> list[Case]:
    return [
        unary("digamma", lambda x: sc.digamma(x), uniform(0.3, 4), "digamma", prims="polygamma"),
        unary("psi", lambda x: crs.psi(x), uniform(0.3, 4), "digamma", prims="polygamma"),
        case("polygamma", lambda x: crs.polygamma(2, x), one(), uniform(0.5, 4), prims="polygamma",
             torch=lambda x: _torch().polygamma(2, x)),
        unary("erf_scipy", lambda x: sc.erf(x), uniform(-2, 2), "erf", prims="erf"),
        unary("expit", lambda x: sc.expit(x), uniform(-4, 4), "sigmoid", prims="sigmoid"),
        unary("entr", lambda x: sc.entr(x), uniform(0.2, 3), "special.entr", prims="xlogy"),
        binary("xlogy", lambda x, y: sc.xlogy(x, y), lambda r, s, p: [r.uniform(-2, 2, s[0]), r.uniform(0.3, 3, s[1])],
               "xlogy", prims="xlogy"),
        case("xlogy_zero", lambda x, y: sc.xlogy(x * on(x, np.array([0.0, 1.0])), y), fixed((2,), (2,)),
             lambda r, s, p: [r.uniform(0.5, 2, s[0]), np.array([0.7, 1.5])], prims="xlogy", order=2,
             torch=lambda x, y: _torch().xlogy(x * _torch().tensor([0.0, 1.0], dtype=x.dtype), y)),
        binary("xlog1py", lambda x, y: sc.xlog1py(x, y), lambda r, s, p: [r.uniform(-2, 2, s[0]),
                                                                           r.uniform(-0.5, 2, s[1])],
               "special.xlog1py", prims="xlog1py"),
        # (torch has no beta functions: written out with lgamma, whose second derivative, torch's trigamma, is good to
        # 5e-10 only: SciPy's, which chainrule uses, to 1e-15 against mpmath)
        case("betaln", lambda a, b: sc.betaln(a, b), bcast(2), uniform(0.5, 3), prims="gammaln", torch=_tbetaln,
             tol=10),
        case("beta", lambda a, b: sc.beta(a, b), bcast(2), uniform(0.5, 3), prims="gammaln",
             torch=lambda a, b: _torch().exp(_tbetaln(a, b)), tol=10),
        case("multigammaln", lambda x: crs.multigammaln(x, 3), one(), uniform(1.5, 4), prims="gammaln",
             torch=lambda x: _torch().special.multigammaln(x, 3)),
        case("special_logsumexp", lambda x, w: crs.logsumexp(x, axis=-1, b=w), fixed((3, 4), (4,)),
             lambda r, s, p: [r.uniform(-2, 2, s[0]), r.uniform(0.5, 2, s[1])], prims="logsumexp",
             torch=lambda x, w: _torch().logsumexp(x + _torch().log(w), -1)),
        case("special_softmax", lambda x: [crs.softmax(x), crs.log_softmax(x, axis=0)], one(1), prims=("softmax",
                                                                                                      "log_softmax"),
             torch=lambda x: [_torch().softmax(x.reshape(-1), 0).reshape(x.shape), _torch().log_softmax(x, 0)]),
        # Bessel functions of a constant order, incomplete gamma of a constant shape (autograd's scipy.special)
        case("jn", lambda x: crs.jn(2, x), one(), uniform(0.5, 8), prims="jn"),
        case("jv", lambda x: crs.jv(on(x, np.array([0.5, 2.5])), x), fixed((3, 2)), uniform(0.5, 8), prims="jv"),
        case("yn", lambda x: crs.yn(3, x), one(), uniform(0.8, 8), prims="yn"),
        case("yv", lambda x: crs.yv(1.5, x), one(), uniform(0.8, 8), prims="yv"),
        case("iv", lambda x: crs.iv(on(x, np.array([1.0, 3.0])), x), fixed((3, 2)), uniform(-3, 3), prims="iv"),
        case("ive", lambda x: crs.ive(2.0, x), one(), nonzero(-4, 4, 0.3), prims="ive"),
        # Box-Cox transforms of a constant lmbda (JAX's lax_scipy_special_functions_test differentiates them)
        case("boxcox", lambda x: crs.boxcox(x, 0.5) + crs.boxcox(x, 0.0), one(), uniform(0.3, 3), prims="boxcox"),
        case("boxcox1p", lambda x: crs.boxcox1p(x, -1.5), one(), uniform(-0.5, 3), prims="boxcox1p"),
        # (PyTorch's gammainc: a derivative in x only, and in reverse mode only; its Bessel j/y: no derivative)
        case("gammainc", lambda x: crs.gammainc(on(x, np.array([0.7, 2.5])), x), fixed((3, 2)), uniform(0.3, 4),
             prims="gammainc", tags=("torch_reverse_only",),
             torch=lambda x: _torch().special.gammainc(_torch().tensor([0.7, 2.5], dtype=x.dtype), x)),
        case("gammaincc", lambda x: crs.gammaincc(1.5, x), one(), uniform(0.3, 4), prims="gammaincc",
             tags=("torch_reverse_only",), torch=lambda x: _torch().special.gammaincc(_torch().full_like(x, 1.5), x)),
    ]


SPECIAL = _special_cases() if sc is not None else []

NN = [
    case("nn_linear", lambda x, w, b: F.linear(x, w, b), fixed((2, 3), (4, 3), (4,)), prims="nn.linear",
         torch=T("nn.functional.linear"), order=3),
    case("nn_gelu", lambda x: F.gelu(x), one(), prims="nn.gelu", torch=T("nn.functional.gelu")),
    case("nn_gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), one(), prims="nn.gelu_tanh",
         torch=T("nn.functional.gelu", approximate="tanh")),
    case("nn_silu", lambda x: F.silu(x), one(), prims="nn.silu", torch=T("nn.functional.silu")),
    case("nn_cross_entropy", lambda x: F.cross_entropy(x, on(x, np.array([0, 2, 1]))), fixed((3, 4)),
         prims="nn.cross_entropy",
         torch=lambda x: _torch().nn.functional.cross_entropy(x, _torch().tensor([0, 2, 1]))),
    case("nn_bce_with_logits", lambda x, y: F.binary_cross_entropy_with_logits(x, y), fixed((3, 2), (3, 2)),
         lambda r, s, p: [r.uniform(-3, 3, s[0]), r.uniform(0, 1, s[1])], prims="nn.binary_cross_entropy_with_logits",
         torch=T("nn.functional.binary_cross_entropy_with_logits")),
    # PyTorch's second derivative (nn/functional/losses_binary.py) is the exact one up to 1e-12 / p(1 - p): inside
    # the domain
    case("nn_bce", lambda x, y: F.binary_cross_entropy(x, y), fixed((3, 2), (3, 2)),
         lambda r, s, p: [r.uniform(0.1, 0.9, s[0]), r.uniform(0, 1, s[1])],
         prims=("nn.binary_cross_entropy", "nn.binary_cross_entropy_gradient"),
         torch=T("nn.functional.binary_cross_entropy")),
]

def complex_uniform(lo: float = -2, hi: float = 2, gap: float = 0.0) -> Maker:
    """Complex entries with real and imaginary parts in (lo, hi), modulus at least ``gap``."""

    def make(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
        out = []
        for s in shapes:
            z = rng.uniform(lo, hi, size=s) + 1j * rng.uniform(lo, hi, size=s)
            out.append(np.where(np.abs(z) < gap, z + gap * (1 + 1j), z))
        return out

    return make


def complex_well_conditioned(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    return [a + 0.5j * rng.uniform(-1, 1, size=np.shape(a)) for a in well_conditioned(rng, shapes, p)]


Z = complex_uniform()


def _HOLOMORPHIC(xp: Any) -> list[Callable[..., Any]]:  # noqa: N802
    """Holomorphic functions, written in NumPy or PyTorch (xp)."""
    return [lambda z: xp.sin(z) * xp.exp(z) / (1 + z * z), lambda z: xp.sqrt(z + 3), lambda z: xp.log(z + 3),
            xp.tanh, lambda z: z**2.5, lambda z: xp.cumprod(z.reshape(-1), 0) if xp is not np else
            np.cumprod(np.ravel(z))]

COMPLEX = [  # complex inputs: the non-holomorphic parts (real, imag, conj, abs, angle) and conjugating ops
    case("complex_real", np.real, one(), Z, prims="real", torch=T("real")),
    case("complex_imag", np.imag, one(), Z, prims="imag", torch=T("imag")),
    # conj(z) z^T over the last axis (any number of batch axes)
    case("complex_conj", lambda z: np.conj(z)[..., None, :] * z[..., None] if np.ndim(z) else np.conj(z), one(), Z,
         prims="conjugate"),
    case("complex_abs", np.abs, one(), complex_uniform(gap=0.3), prims="abs", torch=T("abs")),
    case("complex_angle", np.angle, one(), complex_uniform(gap=0.3), prims="arctan2", torch=T("angle")),
    case("complex_sign", np.sign, one(), complex_uniform(gap=0.3), prims="abs"),
    case("complex_mixed", lambda x, z: np.abs(x * z + np.exp(x * 1j)) + np.real(x * z) * np.imag(z), bcast(2),
         lambda r, s, p: [r.uniform(-2, 2, s[0]), Z(r, s[1:], p)[0]], prims=("real", "imag", "abs"),
         torch=lambda x, z: (x * z + _torch().exp(x * 1j)).abs() + (x * z).real * z.imag),
    case("complex_holomorphic", lambda z: [np.sin(z) * np.exp(z) / (1 + z * z), np.sqrt(z + 3), np.log(z + 3),
                                           np.tanh(z), z ** 2.5, np.cumprod(np.ravel(z))], one(), Z,
         prims=("sin", "sqrt", "log", "tanh", "power", "cumprod")),
    case("complex_vdot", lambda a, b: np.vdot(a, b), fixed((3,), (3,)), Z, prims="conjugate"),
    case("complex_var", lambda z: [np.var(z, axis=-1), np.std(z)], fixed((2, 3)), Z, prims="abs",
         torch=lambda z: [_torch().var(z, -1, correction=0), _torch().std(z, correction=0)]),
    case("complex_norm", lambda z: [np.linalg.norm(z), np.linalg.norm(z, 1)], one(1, 2), complex_uniform(gap=0.3),
         prims="abs", torch=lambda z: [_torch().linalg.norm(z), _torch().linalg.norm(z, 1)]),
    case("complex_linalg", lambda a, b: [np.linalg.inv(a), np.linalg.det(a), np.linalg.solve(a, b),
                                         np.linalg.slogdet(a)[0], np.linalg.slogdet(a)[1]],
         fixed((3, 3), (3,)), complex_well_conditioned, prims=("inv", "det", "solve", "slogdet")),
    case("complex_matmul", lambda a, b: [a @ b, np.einsum("ij,jk->ik", a, b), np.cov(a)], fixed((2, 3), (3, 2)), Z,
         prims=("matmul", "einsum", "conjugate")),
    case("real_if_close",
         lambda z: np.real_if_close(z * on(z, np.array([1.0, 0.0])) + on(z, np.array([0.0, 2.0]))), fixed((2,)),
         lambda r, s, p: [r.uniform(-2, 2, size=s[0]) + 0j], prims="real",
         torch=lambda z: (z * _torch().tensor([1.0, 0.0], dtype=z.dtype) + _torch().tensor([0.0, 2.0])).real),
    # Hermitian eigh reads the lower triangle (and the diagonal's real part); the eigenvectors' phases are not
    # unique, so the case reads them through the projector v v^H and |v|
    case("complex_eigh", lambda a: (lambda r: [r[0], r[1][..., :1] @ np.conj(np.swapaxes(r[1][..., :1], -1, -2)),
                                               np.abs(r[1]), np.linalg.eigvalsh(a, "U")])(np.linalg.eigh(a)),
         fixed((2, 3, 3)), hermitian_spread, prims="eigh"),  # (PyTorch's eigh reads both triangles: no twin)
    # complex SVD: singular vectors through phase-free functions (|u|, |vh|, u vh), tall and wide
    *[case(f"complex_svd_{shape[0]}x{shape[1]}", lambda a: (lambda r: [np.abs(r[0]), r[1], np.abs(r[2]), r[0] @ r[2],
                                                                       np.linalg.svdvals(a)])(
        np.linalg.svd(a, full_matrices=False)), fixed(shape), complex_uniform(), prims="svd")
      for shape in ((3, 2), (2, 3))],
    # the complex-valued ones against PyTorch, each complex output read as one real array (_ri)
    case("complex_sign_ri", lambda z: _ri(np.sign(z)), one(), complex_uniform(gap=0.3), prims="abs",
         torch=lambda z: _ri(_torch().sgn(z))),
    case("complex_conj_ri", lambda z: _ri(np.conj(z)[..., None, :] * z[..., None]), one(1), Z, prims="conjugate",
         torch=lambda z: _ri(z.conj()[..., None, :] * z[..., None])),
    case("complex_holomorphic_ri", lambda z: [_ri(f(z)) for f in _HOLOMORPHIC(np)], one(), Z,
         prims=("sin", "sqrt", "log", "tanh", "power", "cumprod"),
         torch=lambda z: [_ri(f(z)) for f in _HOLOMORPHIC(_torch())]),
    case("complex_vdot_ri", lambda a, b: _ri(np.vdot(a, b)), fixed((3,), (3,)), Z, prims="conjugate",
         torch=lambda a, b: _ri(_torch().vdot(a, b))),
    case("complex_linalg_ri", lambda a, b: [_ri(np.linalg.inv(a)), _ri(np.linalg.det(a)), _ri(np.linalg.solve(a, b)),
                                            _ri(np.linalg.slogdet(a)[0]), np.linalg.slogdet(a)[1]],
         fixed((2, 3, 3), (3, 1)), complex_well_conditioned, prims=("inv", "det", "solve", "slogdet"),
         torch=lambda a, b: [_ri(_torch().linalg.inv(a)), _ri(_torch().linalg.det(a)), _ri(_torch().linalg.solve(a, b)),
                             _ri(_torch().linalg.slogdet(a)[0]), _torch().linalg.slogdet(a)[1]]),
    case("complex_matmul_ri", lambda a, b: [_ri(a @ b), _ri(np.einsum("ij,jk->ik", a, b)), _ri(np.cov(a))],
         fixed((2, 3), (3, 2)), Z, prims=("matmul", "einsum", "conjugate"),
         torch=lambda a, b: [_ri(a @ b), _ri(_torch().einsum("ij,jk->ik", a, b)), _ri(_torch().cov(a))]),
    # torch checks that a complex SVD's loss is free of the singular vectors' phases: |U|, |Vh|, U Vh are
    *[case(f"complex_svd_ri_{shape[0]}x{shape[1]}", lambda a: (lambda r: [np.abs(r[0]), r[1], np.abs(r[2]),
                                                                          _ri(r[0] @ r[2])])(
        np.linalg.svd(a, full_matrices=False)), fixed(shape), complex_uniform(), prims="svd", tol=10,
        torch=lambda a: (lambda r: [r[0].abs(), r[1], r[2].abs(), _ri(r[0] @ r[2])])(
            _torch().linalg.svd(a, full_matrices=False))) for shape in ((3, 2), (2, 3))],
]

def distinct_eigenvalues(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    """General (non-symmetric) matrices whose eigenvalues are at least about 1 apart."""
    s = shapes[0]
    n = s[-1]
    out = np.empty(s)
    for idx in np.ndindex(*s[:-2]):
        p_ = rng.uniform(-1, 1, size=(n, n)) + 2 * np.eye(n)
        out[idx] = p_ @ np.diag(np.arange(n) * 1.5 + rng.uniform(-0.2, 0.2, size=n)) @ np.linalg.inv(p_)
    return [out]


def rotation_like(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    """Real matrices with a pair of complex eigenvalues (and a real one): complex outputs from real input."""
    a = np.array([[0.3, -1.5, 0.0], [1.2, 0.1, 0.0], [0.0, 0.0, 2.5]]) + rng.uniform(-0.1, 0.1, size=(3, 3))
    return [a]


NUMPY_GAPS = [  # NumPy functions and spellings that used to fail on Tensors
    case("concatenate_positional_axis", lambda x, y: np.concatenate((x, y), 1), fixed((2, 3), (2, 1)),
         prims="concatenate", torch=lambda x, y: _torch().cat((x, y), 1)),
    case("vstack_dtype", lambda x, y: np.vstack((x, y), dtype=None), fixed((3,), (2, 3)), prims="concatenate"),
    case("einsum_sublist", lambda a, b: [np.einsum(a, [0, 1], b, [1, 2], [0, 2]), np.einsum(a, [0, 1], [1, 0]),
                                         np.einsum(a, [Ellipsis, 1], b, [1, 2])], fixed((2, 3), (3, 4)),
         prims="einsum"),
    case("cnp_lists", lambda x, y: [cnp.mean([x, y]), cnp.append([x, y], x), cnp.sum([x[0], y[1]]),
                                    cnp.dot([x, y], x)], fixed((3,), (3,)), prims=("mean", "concatenate")),
    case("cnp_r_c", lambda x, y: [cnp.r_[x, 0:2, y], cnp.c_[x, y], cnp.r_["0,2", x, y]], fixed((3,), (3,)),
         prims="concatenate"),
    case("linspace", lambda a, b: np.linspace(a, b, 5), fixed((), ()), prims="divide",
         torch=lambda a, b: a + (b - a) * _torch().linspace(0, 1, 5, dtype=a.dtype)),
    case("linspace_arrays", lambda a, b: list(np.linspace(a, b, 4, endpoint=False, retstep=True, axis=-1)),
         fixed((2,), (3, 1)), prims="divide"),
    case("linspace_one", lambda a, b: np.linspace(a, b, 1) + np.linspace(a, b, 2, axis=0), fixed((2,), (2,)),
         prims="add"),
    case("gradient", lambda x: np.gradient(x), one(1, 1).filter(lambda t: t[0][0][0] >= 2), prims="subtract",
         torch=lambda x: _torch().gradient(x)[0]),
    case("gradient_2d_edge2", lambda x: list(np.gradient(x, 0.5, edge_order=2)), fixed((3, 4)), prims="multiply",
         torch=lambda x: list(_torch().gradient(x, spacing=0.5, edge_order=2))),
    case("gradient_coords", lambda x: np.gradient(x, on(x, np.array([0.0, 0.5, 1.5, 3.0])), axis=-1, edge_order=2),
         fixed((2, 4)), prims="multiply"),
    # only the kth entries' places are NumPy's promise (CuPy's argpartition arranges the rest otherwise): the cases
    # read those, and the entries sorted
    case("partition", lambda x: (lambda p: [p[..., 1], np.sort(p, axis=-1)])(np.partition(x, 1, axis=-1)),
         one(1).filter(lambda t: t[0][0][-1] >= 2), all_distinct, prims="getitem"),
    case("partition_flat", lambda x: (lambda p: [p[[0, 2]], np.sort(p)])(np.partition(x, (0, 2), axis=None)),
         fixed((2, 3)), all_distinct, prims="getitem"),
    case("piecewise", lambda x: np.piecewise(x, [_vals(x) < 0, _vals(x) >= 0], [lambda v: v ** 2, np.sin]),
         one(1), nonzero(-2, 2), prims="scatter_add",
         torch=lambda x: _torch().where(x < 0, x ** 2, _torch().sin(x))),
    case("piecewise_default", lambda x: np.piecewise(x, [_vals(x) > 1], [lambda v: np.sqrt(v - 1), 0.5]), one(1),
         off_bounds(1.0, None), prims="sqrt"),
    case("apply_along_axis", lambda x: np.apply_along_axis(lambda v: np.cumsum(v) * v[0], 1, x), fixed((2, 3, 2)),
         prims="cumsum"),
    case("apply_along_axis_scalar", lambda x: np.apply_along_axis(np.sum, 0, x ** 2), fixed((3, 2)), prims="sum",
         torch=lambda x: (x ** 2).sum(0)),
    case("add_at", lambda x, v: cr.add_at(x, np.array([0, 0, 3]), v), fixed((4,), (3,)), prims="scatter_add"),
    case("add_at_2d", lambda x, v: cr.add_at(x, (np.array([1, 1]), slice(None)), v), fixed((2, 3), (3,)),
         prims="scatter_add"),
    # (torch.linalg.eig calls the same LAPACK routine as NumPy: the same order of eigenvalues)
    case("eig_values", lambda a: np.linalg.eig(a).eigenvalues, square(min_n=2), distinct_eigenvalues,
         prims="eig", torch=lambda a: _torch().linalg.eigvals(a).real),
    case("eig_vectors", lambda a: np.linalg.eig(a)[1], square(min_n=2), distinct_eigenvalues, prims="eig",
         tol=10),
    case("eig_complex", lambda a: [np.linalg.eigvals(a), np.abs(np.linalg.eig(a)[1]) ** 2, np.linalg.eig(a)[1]],
         fixed((3, 3)), rotation_like, prims="eig", tol=10),
    # what torch differentiates: functions of the eigenvectors free of their phases (|v|), complex outputs as real ones
    *[case(f"eig_phase_free_{name}", lambda a: (lambda r: [_ri(r[0]), np.abs(r[1]) ** 2])(np.linalg.eig(a)), shapes,
           make, prims="eig", tol=10, torch=lambda a: (lambda r: [_ri(r[0]), r[1].abs() ** 2])(_torch().linalg.eig(a)))
      for name, shapes, make in (("real", square(min_n=2), distinct_eigenvalues), ("complex", fixed((3, 3)),
                                                                                  rotation_like))],
]


def _ri(z: Any) -> Any:
    """A complex result as one real array (its real part plus twice its imaginary part): torch compares
    gradients of real outputs in the same convention as chainrule."""
    return z.real + 2 * z.imag


# numpy.fft: composites of matmul with the DFT matrix (chainrule/ops/fourier.py)
FFT = [
    case("fft", lambda x: _ri(np.fft.fft(x)), vector(), prims=(), torch=lambda x: _ri(_torch().fft.fft(x))),
    case("fft_n_ortho", lambda x: _ri(np.fft.fft(x, n=4, norm="ortho")), vector(min_side=2), prims=(),
         torch=lambda x: _ri(_torch().fft.fft(x, n=4, norm="ortho"))),
    case("ifft_forward", lambda x: _ri(np.fft.ifft(x, norm="forward")), vector(), prims=(),
         torch=lambda x: _ri(_torch().fft.ifft(x, norm="forward"))),
    case("rfft", lambda x: _ri(np.fft.rfft(x)), vector(), prims=(), torch=lambda x: _ri(_torch().fft.rfft(x))),
    case("irfft", lambda x: np.fft.irfft(np.fft.rfft(x) * (1 + 0.5j), n=5), vector(min_side=2), prims=(),
         torch=lambda x: _torch().fft.irfft(_torch().fft.rfft(x) * (1 + 0.5j), n=5)),
    case("fft2_rfftn", lambda x: [_ri(np.fft.fft2(x)), _ri(np.fft.rfftn(x, axes=(0,)))], fixed((3, 4)), prims=(),
         torch=lambda x: [_ri(_torch().fft.fft2(x)), _ri(_torch().fft.rfftn(x, dim=(0,)))]),
    case("irfft2", lambda x: np.fft.irfft2(np.fft.rfft2(x) ** 2), fixed((2, 3)), prims=(),
         torch=lambda x: _torch().fft.irfft2(_torch().fft.rfft2(x) ** 2)),
    case("fftshift", lambda x: np.fft.ifftshift(np.fft.fftshift(x, axes=1) * on(x, np.arange(x.size).reshape(x.shape))),
         fixed((3, 4)), prims=(), torch=lambda x: _torch().fft.ifftshift(
             _torch().fft.fftshift(x, dim=1) * _torch().arange(12.0, dtype=x.dtype).reshape(3, 4))),
    case("fft_complex", lambda z: [np.fft.fft(z), np.fft.ifftn(z * z)], fixed((3,)), complex_uniform(), prims=()),
    case("hfft_ihfft", lambda x: [np.fft.hfft(np.fft.ihfft(x) * (1 + 0.5j), n=6), _ri(np.fft.ihfft(x, norm="ortho")),
                                  np.fft.hfft(x, norm="forward")], fixed((2, 5)), prims=(),
         torch=lambda x: [_torch().fft.hfft(_torch().fft.ihfft(x) * (1 + 0.5j), n=6),
                          _ri(_torch().fft.ihfft(x, norm="ortho")), _torch().fft.hfft(x, norm="forward")]),
]

_SDPA_MASK = np.array([[1, 0, 1, 1, 0], [1, 1, 0, 1, 1], [0, 1, 1, 1, 1]], dtype=bool)
_KEEP = np.array([[True, False, True, True], [True, True, False, True], [False, False, False, True]])

_ROPE_COS, _ROPE_SIN = np.cos(np.arange(6.0).reshape(3, 2)), np.sin(np.arange(6.0).reshape(3, 2))


def _torch_rope(x: Any) -> Any:
    """The rotation by position written out in PyTorch (slices, products, a concatenation)."""
    torch = _torch()
    c, s = torch.tensor(_ROPE_COS, dtype=x.dtype), torch.tensor(_ROPE_SIN, dtype=x.dtype)
    return torch.cat([x[..., :2] * c - x[..., 2:] * s, x[..., 2:] * c + x[..., :2] * s], dim=-1)


def _torch_qkv_attention(qkv: Any, causal: bool, scale: float) -> Any:
    """PyTorch's attention written out (its fused CPU kernel has no second derivative)."""
    torch = _torch()
    q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
    s = q @ k.transpose(-1, -2) * scale
    if causal:
        t = s.shape[-1]
        s = s.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf"))
    return (torch.softmax(s, -1) @ v).transpose(1, 2)


GPT_OPS = [
    case("nn_sdpa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), fixed((2, 3, 4), (2, 5, 4), (2, 5, 3)),
         prims="nn.scaled_dot_product_attention", torch=T("nn.functional.scaled_dot_product_attention")),
    case("nn_sdpa_causal", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7),
         fixed((1, 2, 4, 3), (1, 2, 4, 3), (1, 2, 4, 2)), prims="nn.scaled_dot_product_attention",
         torch=T("nn.functional.scaled_dot_product_attention", is_causal=True, scale=0.7)),
    case("nn_sdpa_bool_mask", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=on(q, _SDPA_MASK)),
         fixed((2, 3, 4), (1, 5, 4), (2, 5, 3)), prims="nn.scaled_dot_product_attention",
         torch=lambda q, k, v: _torch().nn.functional.scaled_dot_product_attention(
             q, k, v, attn_mask=_torch().tensor(_SDPA_MASK))),
    case("nn_sdpa_float_mask", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
         fixed((2, 3, 4), (2, 5, 4), (2, 5, 3), (3, 5)), prims="nn.scaled_dot_product_attention",
         torch=lambda q, k, v, m: _torch().nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)),
    case("nn_qkv_attention", lambda qkv: F.qkv_attention(qkv), fixed((2, 4, 3, 2, 3)), prims="nn.qkv_attention",
         torch=lambda qkv: _torch_qkv_attention(qkv, True, 3**-0.5)),
    case("nn_qkv_attention_full", lambda qkv: F.qkv_attention(qkv, is_causal=False, scale=0.5), fixed((1, 3, 3, 2, 2)),
         prims="nn.qkv_attention", torch=lambda qkv: _torch_qkv_attention(qkv, False, 0.5)),
    case("nn_layer_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b), fixed((3, 4), (4,), (4,)), prims="nn.layer_norm",
         torch=lambda x, w, b: _torch().nn.functional.layer_norm(x, (4,), w, b)),
    case("nn_layer_norm_2d", lambda x, w: F.layer_norm(x, (2, 3), w, eps=1e-3), fixed((2, 2, 3), (2, 3)),
         prims="nn.layer_norm", torch=lambda x, w: _torch().nn.functional.layer_norm(x, (2, 3), w, eps=1e-3)),
    case("nn_layer_norm_plain", lambda x: F.layer_norm(x, x.shape[-1:]), one(1), prims="nn.layer_norm",
         torch=lambda x: _torch().nn.functional.layer_norm(x, x.shape[-1:])),
    case("nn_rms_norm", lambda x, w: F.rms_norm(x, (4,), w, eps=1e-6), fixed((3, 4), (4,)), prims="nn.rms_norm",
         torch=lambda x, w: _torch().nn.functional.rms_norm(x, (4,), w, eps=1e-6)),
    case("nn_rope", lambda x: rotate(x, _ROPE_COS, _ROPE_SIN), fixed((2, 3, 4)), prims="nn.rope", torch=_torch_rope),
    case("nn_rms_norm_plain", lambda x: F.rms_norm(x, x.shape[-1:]), one(1), nonzero(-2, 2), prims="nn.rms_norm",
         torch=lambda x: _torch().nn.functional.rms_norm(x, x.shape[-1:])),
    case("nn_masked_softmax", lambda x: F.masked_softmax(x, on(x, _KEEP)), fixed((3, 4)), prims="nn.masked_softmax",
         torch=lambda x: _torch().softmax(x.masked_fill(~_torch().tensor(_KEEP), float("-inf")), -1)),
    case("masked_fill", lambda x: cr.masked_fill(x, on(x, _KEEP), 2.5), fixed((3, 4)), prims="masked_fill",
         torch=lambda x: x.masked_fill(_torch().tensor(_KEEP), 2.5)),
    case("masked_fill_method", lambda x: cr.Tensor(x).masked_fill(_KEEP[0], -1.0) if not isinstance(
        x, cr.Tensor) else x.masked_fill(on(x, _KEEP[0]), -1.0), fixed((2, 4)), prims="masked_fill",
         torch=lambda x: x.masked_fill(_torch().tensor(_KEEP[0]), -1.0)),
]

_CONV_PRIMS = ("nn.conv", "nn.conv_input_grad", "nn.conv_weight_grad")  # the gradient of a conv uses all three


def _torch_batch_norm(x: Any, w: Any, b: Any) -> Any:
    return _torch().nn.functional.batch_norm(x, None, None, w, b, training=True, eps=1e-3)


CONV = [  # convolution, pooling, batch norm (ops/layers/: convolution.py, pooling.py, batch_norm.py)
    case("nn_conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), fixed((2, 2, 5, 4), (3, 2, 3, 2), (3,)),
         prims=_CONV_PRIMS, torch=T("nn.functional.conv2d", stride=2, padding=1), order=3),
    case("nn_conv2d_groups_dilation", lambda x, w: F.conv2d(x, w, stride=(1, 2), padding=(2, 0), dilation=(2, 1),
                                                              groups=2), fixed((1, 4, 5, 5), (2, 2, 2, 2)),
         prims=_CONV_PRIMS, torch=T("nn.functional.conv2d", stride=(1, 2), padding=(2, 0), dilation=(2, 1), groups=2)),
    case("nn_conv1d_same", lambda x, w, b: F.conv1d(x, w, b, padding="same", dilation=2), fixed((2, 2, 6), (2, 2, 2),
                                                                                               (2,)),
         prims=_CONV_PRIMS, torch=T("nn.functional.conv1d", padding="same", dilation=2)),
    case("nn_conv1d_unbatched_strided", lambda x, w: F.conv1d(x, w, stride=3, padding=2), fixed((2, 7), (3, 2, 3)),
         prims=_CONV_PRIMS, torch=T("nn.functional.conv1d", stride=3, padding=2)),
    case("nn_conv_transpose2d", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
         fixed((2, 2, 3, 2), (2, 3, 3, 2), (3,)), prims=_CONV_PRIMS,
         torch=T("nn.functional.conv_transpose2d", stride=2, padding=1, output_padding=1)),
    case("nn_conv_transpose2d_groups_dilation", lambda x, w: F.conv_transpose2d(x, w, padding=(1, 0), groups=2,
                                                                                 dilation=(2, 1)),
         fixed((1, 4, 3, 3), (4, 1, 2, 2)), prims=_CONV_PRIMS,
         torch=T("nn.functional.conv_transpose2d", padding=(1, 0), groups=2, dilation=(2, 1))),
    case("nn_conv_transpose1d_unbatched", lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3, output_padding=2),
         fixed((2, 3), (2, 2, 2), (2,)), prims=_CONV_PRIMS,
         torch=T("nn.functional.conv_transpose1d", stride=3, output_padding=2)),
    case("nn_group_norm", lambda x, w, b: F.group_norm(x, 2, w, b, eps=1e-3), fixed((2, 4, 3), (4,), (4,)),
         prims="nn.layer_norm",
         torch=lambda x, w, b: _torch().nn.functional.group_norm(x, 2, w, b, eps=1e-3)),
    case("nn_instance_norm", lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=1e-3),
         fixed((2, 2, 2, 3), (2,), (2,)), prims="nn.layer_norm",
         torch=lambda x, w, b: _torch().nn.functional.instance_norm(x, weight=w, bias=b, eps=1e-3)),
    case("nn_interpolate_bilinear", lambda x: F.interpolate(x, scale_factor=(1.5, 2), mode="bilinear"),
         fixed((1, 2, 3, 2)), prims="matmul",
         torch=T("nn.functional.interpolate", scale_factor=(1.5, 2), mode="bilinear")),
    case("nn_interpolate_linear_corners", lambda x: F.interpolate(x, size=5, mode="linear", align_corners=True),
         fixed((2, 1, 3)), prims="matmul",
         torch=T("nn.functional.interpolate", size=5, mode="linear", align_corners=True)),
    case("nn_interpolate_nearest", lambda x: F.interpolate(x, size=(3, 5)), fixed((1, 1, 2, 3)), prims="matmul",
         torch=T("nn.functional.interpolate", size=(3, 5))),
    case("nn_interpolate_trilinear", lambda x: F.interpolate(x, scale_factor=(1.5, 2, 1), mode="trilinear"),
         fixed((1, 2, 2, 3, 2)), prims="matmul",
         torch=T("nn.functional.interpolate", scale_factor=(1.5, 2, 1), mode="trilinear")),
    case("nn_conv3d", lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=2),
         fixed((1, 2, 3, 4, 3), (2, 1, 2, 2, 2), (2,)), prims=_CONV_PRIMS,
         torch=T("nn.functional.conv3d", stride=(1, 2, 1), padding=1, groups=2)),
    case("nn_conv_transpose3d", lambda x, w: F.conv_transpose3d(x, w, stride=2, output_padding=(1, 0, 0)),
         fixed((1, 2, 2, 2, 1), (2, 1, 2, 2, 2)), prims=_CONV_PRIMS,
         torch=T("nn.functional.conv_transpose3d", stride=2, output_padding=(1, 0, 0))),
    case("nn_max_pool3d", lambda x: F.max_pool3d(x, 2, stride=1, padding=1), fixed((1, 1, 2, 3, 2)), all_distinct,
         torch=T("nn.functional.max_pool3d", kernel_size=2, stride=1, padding=1)),
    case("nn_avg_pool3d", lambda x: F.avg_pool3d(x, 2, stride=1, padding=1, count_include_pad=False),
         fixed((1, 1, 2, 3, 2)), prims="nn.conv",
         torch=T("nn.functional.avg_pool3d", kernel_size=2, stride=1, padding=1, count_include_pad=False)),
    case("nn_adaptive_avg_pool3d", lambda x: F.adaptive_avg_pool3d(x, (2, 1, 2)), fixed((1, 2, 3, 2, 3)),
         prims="matmul", torch=T("nn.functional.adaptive_avg_pool3d", output_size=(2, 1, 2))),
    case("nn_grid_sample", lambda x, g: F.grid_sample(x, g, "bilinear", "border", False),
         fixed((1, 2, 3, 4), (1, 2, 3, 2)), lambda r, s, p: [r.normal(size=s[0]), r.uniform(-0.9, 0.9, s[1])],
         torch=lambda x, g: _torch().nn.functional.grid_sample(x, g, "bilinear", "border", False),
         tags=("torch_reverse_only",)),  # (PyTorch's grid_sampler_2d has no forward mode)
    case("nn_max_pool2d", lambda x: F.max_pool2d(x, 3, stride=2, padding=1), fixed((1, 2, 5, 4)), all_distinct,
         torch=T("nn.functional.max_pool2d", kernel_size=3, stride=2, padding=1)),
    case("nn_max_pool1d_ceil", lambda x: F.max_pool1d(x, 2, dilation=2, ceil_mode=True), fixed((2, 1, 6)),
         all_distinct, torch=T("nn.functional.max_pool1d", kernel_size=2, dilation=2, ceil_mode=True)),
    case("nn_avg_pool2d", lambda x: F.avg_pool2d(x, (2, 3), stride=2, padding=1, ceil_mode=True,
                                                 count_include_pad=False), fixed((1, 2, 5, 4)), prims="nn.conv",
         torch=T("nn.functional.avg_pool2d", kernel_size=(2, 3), stride=2, padding=1, ceil_mode=True,
                 count_include_pad=False)),
    case("nn_avg_pool1d", lambda x: F.avg_pool1d(x, 3, stride=2, padding=1), fixed((2, 2, 6)), prims="nn.conv",
         torch=T("nn.functional.avg_pool1d", kernel_size=3, stride=2, padding=1)),
    case("nn_adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), fixed((1, 2, 5, 4)), prims="matmul",
         torch=T("nn.functional.adaptive_avg_pool2d", output_size=(2, 3))),
    case("nn_adaptive_avg_pool1d", lambda x: F.adaptive_avg_pool1d(x, 3), fixed((2, 1, 7)), prims="matmul",
         torch=T("nn.functional.adaptive_avg_pool1d", output_size=3)),
    case("nn_batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True, eps=1e-3),
         fixed((3, 2, 2, 2), (2,), (2,)), prims="nn.layer_norm", torch=_torch_batch_norm),
    case("nn_batch_norm_eval",
         lambda x, w, b: F.batch_norm(x, on(x, np.array([0.5, -1.0])), on(x, np.array([2.0, 0.5])), w, b),
         fixed((3, 2, 4), (2,), (2,)), torch=lambda x, w, b: _torch().nn.functional.batch_norm(
             x, _torch().tensor([0.5, -1.0], dtype=x.dtype), _torch().tensor([2.0, 0.5], dtype=x.dtype), w, b)),
]

NUMPY_SPELLINGS = [  # the first ops again, called through NumPy's own functions
    case("np_reductions", lambda x, axis, keepdims: [
        f(x, axis=axis, keepdims=keepdims) for f in (np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod,
                                                     np.var, np.std)],
         reduction(min_count=2), all_distinct, prims=("sum", "mean", "max"),
         torch=lambda x, axis, keepdims: [_t_reduce(n)(x, axis, keepdims) for n in ("sum", "mean", "amax", "amin",
                                                                                    "amax", "amin")]
         + [_t_prod(x, axis, keepdims), _t_reduce("var")(x, axis, keepdims), _t_reduce("std")(x, axis, keepdims)]),
    case("np_contractions", lambda a, b: [np.dot(a, b), np.inner(a, b), np.vdot(a, b), np.outer(a, b), a @ b,
                                          np.matmul(a, b), np.tensordot(a, b, axes=1), np.einsum("i,i->", a, b)],
         vector(k=1).map(lambda t: (t[0] * 2, {})), prims="matmul", order=3,
         torch=lambda a, b: [_torch().dot(a, b), _torch().inner(a, b), _torch().vdot(a, b), _torch().outer(a, b), a @ b,
                             _torch().matmul(a, b), _torch().tensordot(a, b, dims=1), _torch().einsum("i,i->", a, b)]),
    case("np_shapes", lambda x: [np.reshape(x, (-1,)), np.transpose(x), np.swapaxes(x, 0, -1), np.squeeze(
        np.expand_dims(x, 0), 0), np.broadcast_to(x, (2, *np.shape(x))), *np.split(x, 1), np.stack([x, x]),
        np.concatenate([x, x]), np.hstack([x, x]), np.vstack([x, x]), np.ravel(x), np.atleast_2d(x),
        np.atleast_1d(x), np.moveaxis(x, 0, -1)], one(1), prims=("reshape", "transpose")),
    case("np_elementwise", lambda x, y: [f(x) for f in (np.exp, np.log, np.log1p, np.sqrt, np.sin, np.cos, np.tan,
                                                       np.tanh, np.abs, np.absolute, np.negative, np.square)]
         + [np.add(x, y), np.subtract(x, y), np.multiply(x, y), np.divide(x, y), np.true_divide(x, y),
            np.power(x, y), np.maximum(x, y), np.minimum(x, y), np.where(_vals(x) > 1, x, y), np.clip(x, 0.5, 1.5)],
         bcast(2), uniform(0.3, 2), prims=("exp", "log", "add")),
]

# Every op declared with a test domain: its case from the declaration (tests/op_declared.py).
DECLARED = [Case(**fields, tags=("declared",)) for fields in declared_case_fields()]

# The first ops' cases, and the primitives each one exercises.
_SPEC_PRIMS = {
    "operator_add": "add", "operator_subtract": "subtract", "operator_multiply": "multiply",
    "operator_divide": "divide", "operator_power": "power", "neg": "negative", "where": "where", "clip": "clip",
    "prod": "prod", "softmax": "softmax",
    "log_softmax": "log_softmax", "matmul": "matmul", "einsum": "einsum", "reshape": "reshape",
    "transpose": "transpose", "broadcast_to": "broadcast_to", "getitem": ("getitem", "scatter_add"),
    "concatenate": "concatenate",
}
FIRST_OPS = [
    Case(s.name, (_SPEC_PRIMS[s.name],) if isinstance(_SPEC_PRIMS.get(s.name), str) else tuple(
        _SPEC_PRIMS.get(s.name, ())), s.fn, s.shapes, s.make, s.torch, order=3 if s.name in (
            "dot", "matmul", "fn_matmul", "tensordot") else 2, tags=("first_ops",))
    for s in SPECS
]

def _moved(x: Any) -> Any:
    from chainrule import devices
    from chainrule.ops.device_ops import to_device

    here = devices.of(x._data if isinstance(x, cr.Tensor) else x).name
    return to_device(x, target=here, source=here)  # the move between devices, here from a device to itself


DEVICES = [case("to_device", _moved, one(2), prims="to_device")]

CASES: list[Case] = (
    FIRST_OPS + DECLARED + NUMPY_SPELLINGS + COMPLEX + NUMPY_GAPS + ELEMENTWISE + CUMULATIVE + ARRAYS + SORTING + STATS
    + PRODUCTS + LINALG + SPECIAL + NN + GPT_OPS + FFT + CONV + DEVICES
)
CASES_BY_NAME = {c.name: c for c in CASES}
assert len(CASES_BY_NAME) == len(CASES), "duplicate case names"

# primitive name -> the cases that exercise it (the registry test requires one for every primitive)
CASES_BY_PRIMITIVE: dict[str, list[Case]] = {}
for _c in CASES:
    for _p in _c.prims:
        CASES_BY_PRIMITIVE.setdefault(_p, []).append(_c)


def draw_inputs(c: Case, data: Any) -> tuple[list[np.ndarray], dict]:
    """Draw shapes, parameters and a seed with hypothesis; fill float64 (or complex128) inputs."""
    shapes, params = data.draw(c.shapes, label="shapes, params")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    made = c.make(np.random.default_rng(seed), tuple(shapes), params)
    return [np.asarray(a, dtype=np.result_type(a, np.float64)) for a in made], dict(params)
