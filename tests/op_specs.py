"""One table of differentiable ops whose inputs need makers of their own (shapes, parameters,
spellings), shared by the finite-difference and the PyTorch tests. Ops declared with a test
domain and a PyTorch twin get their cases from the declaration (``tests/op_declared.py``).

Each entry: a name, the chainrule call, the equivalent PyTorch call (or None), a
hypothesis strategy drawing ``(input shapes, parameters)`` (broadcasting included), and a
maker that fills inputs of those shapes from a seeded NumPy generator, inside a domain
that avoids kinks and singularities (ties and kinks have their own tests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
from conftest import away_from, distinct

Shapes = tuple[tuple[int, ...], ...]
Maker = Callable[[np.random.Generator, Shapes, dict], list[np.ndarray]]

MAX_SIDE = 4


@dataclass(frozen=True)
class OpSpec:
    name: str
    fn: Callable[..., Any]
    torch: Callable[..., Any] | None
    shapes: st.SearchStrategy
    make: Maker
    tags: tuple[str, ...] = field(default=())

    def __repr__(self) -> str:  # hypothesis and pytest ids
        return self.name


# -- input makers ----------------------------------------------------------------------------
def uniform(lo: float, hi: float) -> Maker:
    return lambda rng, shapes, p: [rng.uniform(lo, hi, size=s) for s in shapes]


def nonzero(lo: float, hi: float, gap: float = 0.1) -> Maker:
    return lambda rng, shapes, p: [away_from(rng, s, lo, hi, gap) for s in shapes]


def all_distinct(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    return [distinct(rng, s) for s in shapes]


def interleaved(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    """Two inputs whose entries are never within 0.1 of each other (for maximum/minimum)."""
    x = 0.2 * rng.integers(-8, 8, size=shapes[0]) + 0.01 * rng.uniform()
    y = 0.2 * rng.integers(-8, 8, size=shapes[1]) + 0.1 + 0.01 * rng.uniform()
    return [x, y]


def positive_and_any(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    return [rng.uniform(0.5, 2.0, size=shapes[0]), rng.uniform(-2.0, 2.0, size=shapes[1])]


def any_and_nonzero(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    return [rng.uniform(-2.0, 2.0, size=shapes[0]), away_from(rng, shapes[1], -2.0, 2.0, 0.5)]


def value_and_bounds(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    """x, lo, hi with lo < hi and x never within 0.05 of either bound."""
    x = rng.uniform(-2.0, 2.0, size=shapes[0])
    lo = rng.uniform(-1.0, -0.1, size=shapes[1])
    hi = rng.uniform(0.1, 1.0, size=shapes[2])
    for b in (lo, hi):
        near = np.abs(x - b) < 0.05
        x = np.where(near, x + 0.1, x)
    return [x, lo, hi]


def off_bounds(lo: float | None, hi: float | None) -> Maker:
    def make(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
        x = rng.uniform(-2.0, 2.0, size=shapes[0])
        for b in (lo, hi):
            if b is not None:
                x = np.where(np.abs(x - b) < 0.05, b + np.copysign(0.05, x - b), x)
        return [x]

    return make


# -- shape strategies --------------------------------------------------------------------------
def bcast(n: int, min_dims: int = 0) -> st.SearchStrategy:
    """``n`` mutually broadcastable shapes (0-d to 3-d)."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=n, min_dims=min_dims, max_dims=3, min_side=1, max_side=MAX_SIDE
    ).map(lambda r: (r.input_shapes, {}))


def one(min_dims: int = 0, max_dims: int = 3) -> st.SearchStrategy:
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=MAX_SIDE).map(
        lambda s: ((s,), {})
    )


@st.composite
def reduction(draw: Any, min_count: int = 1, ddof: bool = False) -> tuple[Shapes, dict]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=MAX_SIDE))
    nd = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        axis = None
    elif kind == "int":
        axis = draw(st.integers(-nd, nd - 1))
    else:
        axis = tuple(draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True)))
    axes = range(nd) if axis is None else ([axis % nd] if isinstance(axis, int) else axis)
    count = int(np.prod([shape[a] for a in axes]))
    if count < min_count:  # e.g. std needs two entries to have a non-zero spread
        shape = tuple(max(n, 2) if i in axes else n for i, n in enumerate(shape))
    params = {"axis": axis, "keepdims": draw(st.booleans())}
    if ddof:
        params["ddof"] = draw(st.integers(0, 1))
    return (shape,), params


@st.composite
def along_axis(draw: Any) -> tuple[Shapes, dict]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=MAX_SIDE))
    return (shape,), {"axis": draw(st.integers(-len(shape), len(shape) - 1))}


@st.composite
def matmul_shapes(draw: Any) -> tuple[Shapes, dict]:
    n, k, m = (draw(st.integers(1, MAX_SIDE)) for _ in range(3))
    kind = draw(st.sampled_from(["mm", "batched", "vec-mat", "mat-vec", "vec-vec"]))
    if kind == "vec-vec":
        return ((k,), (k,)), {}
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3))
    ba, bb = batch.input_shapes if kind == "batched" else ((), ())
    if kind == "vec-mat":
        return ((k,), bb + (k, m)), {}
    if kind == "mat-vec":
        return (ba + (n, k), (k,)), {}
    return (ba + (n, k), bb + (k, m)), {}


EINSUM_SPECS = [
    "ij,jk->ik",
    "bij,bjk->bik",
    "ij->j",
    "ij->",
    "i,i->",
    "i,j->ij",
    "ij,ij->ij",
    "ij->ji",
    "...ij,...jk->...ik",
    "ijk,ik->j",
    "ij,jk,kl->il",
    "ij,jk",
    "bi,bj->bij",
    "ii->",
    "ii->i",
    "iij,jk->ik",
    "ij,jj->ij",
]


@st.composite
def einsum_shapes(draw: Any) -> tuple[Shapes, dict]:
    subscripts = draw(st.sampled_from(EINSUM_SPECS))
    sizes = {c: draw(st.integers(1, MAX_SIDE)) for c in sorted(set(subscripts) - set(",->."))}
    ell = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    lhs = subscripts.split("->")[0].split(",")
    shapes = tuple((ell if "..." in s else ()) + tuple(sizes[c] for c in s.replace("...", "")) for s in lhs)
    return shapes, {"subscripts": subscripts}


@st.composite
def dot_shapes(draw: Any) -> tuple[Shapes, dict]:
    k = draw(st.integers(1, MAX_SIDE))
    a_lead = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    kind = draw(st.sampled_from(["scalar", "vec", "mat", "nd"]))
    if kind == "scalar":
        return ((), a_lead + (k,)), {}
    if kind == "vec":
        return (a_lead + (k,), (k,)), {}
    if kind == "mat":
        return (a_lead + (k,), (k, draw(st.integers(1, 3)))), {}
    return (a_lead + (k,), (draw(st.integers(1, 3)), k, draw(st.integers(1, 3)))), {}


@st.composite
def tensordot_shapes(draw: Any) -> tuple[Shapes, dict]:
    free_a = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    free_b = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    common = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    if draw(st.booleans()):
        return (free_a + common, common + free_b), {"axes": len(common)}
    # explicit axes lists, contracted axes placed first in a and last in b (reversed order)
    a = common + free_a
    b = free_b + common[::-1]
    ax_a = list(range(len(common)))
    ax_b = [len(free_b) + len(common) - 1 - i for i in range(len(common))]
    return (a, b), {"axes": (ax_a, ax_b)}


@st.composite
def reshape_shapes(draw: Any) -> tuple[Shapes, dict]:
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=MAX_SIDE))
    size = int(np.prod(shape, dtype=int))
    d = draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
    target = draw(st.sampled_from([(size,), (d, size // d), (size // d, -1, 1), (-1,)]))
    return (shape,), {"shape": target}


@st.composite
def transpose_shapes(draw: Any) -> tuple[Shapes, dict]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=3))
    axes = draw(st.none() | st.permutations(range(len(shape))).map(tuple))
    return (shape,), {"axes": axes}


@st.composite
def swapaxes_shapes(draw: Any) -> tuple[Shapes, dict]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=MAX_SIDE))
    nd = len(shape)
    return (shape,), {"axis1": draw(st.integers(-nd, nd - 1)), "axis2": draw(st.integers(-nd, nd - 1))}


@st.composite
def expand_dims_shapes(draw: Any) -> tuple[Shapes, dict]:
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=MAX_SIDE))
    return (shape,), {"axis": draw(st.integers(-len(shape) - 1, len(shape)))}


@st.composite
def squeeze_shapes(draw: Any) -> tuple[Shapes, dict]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=3))
    ones = [i for i, n in enumerate(shape) if n == 1]
    axis = draw(st.none() | st.sampled_from(ones)) if ones else None
    return (shape,), {"axis": axis}


@st.composite
def broadcast_to_shapes(draw: Any) -> tuple[Shapes, dict]:
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    lead = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    target = lead + tuple(draw(st.integers(1, 3)) if n == 1 else n for n in shape)
    return (shape,), {"shape": target}


def _basic_item(draw: Any, n: int) -> Any:
    kind = draw(st.sampled_from(["int", "slice", "all"]))
    if kind == "int":
        return draw(st.integers(-n, n - 1))
    if kind == "all":
        return slice(None)
    step = draw(st.sampled_from([1, 2, -1, -2, None]))
    start = draw(st.none() | st.integers(-n, n))
    stop = draw(st.none() | st.integers(-n - 1, n))
    return slice(start, stop, step)


@st.composite
def getitem_shapes(draw: Any) -> tuple[Shapes, dict]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=MAX_SIDE))
    kind = draw(st.sampled_from(["basic", "newaxis", "mask", "ints", "ints2d", "mixed", "ellipsis"]))
    if kind == "basic":
        index: Any = tuple(_basic_item(draw, n) for n in shape[: draw(st.integers(1, len(shape)))])
    elif kind == "newaxis":
        index = (None, _basic_item(draw, shape[0]))
    elif kind == "ellipsis":
        index = (Ellipsis, _basic_item(draw, shape[-1]))
    elif kind == "mask":
        k = draw(st.integers(1, len(shape)))
        bits = draw(st.lists(st.booleans(), min_size=int(np.prod(shape[:k])), max_size=int(np.prod(shape[:k]))))
        index = np.array(bits, dtype=bool).reshape(shape[:k])
    elif kind == "ints":  # repeated and negative indices: their gradients add up
        index = np.array(draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=1, max_size=6)))
    elif kind == "ints2d":
        index = np.array(draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=4, max_size=4))).reshape(2, 2)
    else:
        ints = np.array(draw(st.lists(st.integers(0, shape[0] - 1), min_size=1, max_size=5)))
        index = (ints,) + ((slice(None, None, -1),) if len(shape) > 1 else ())
    return (shape,), {"index": index}


@st.composite
def concat_shapes(draw: Any) -> tuple[Shapes, dict]:
    base = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))
    axis = draw(st.integers(-len(base), len(base) - 1))
    k = draw(st.integers(1, 3))
    shapes = []
    for _ in range(k):
        s = list(base)
        s[axis] = draw(st.integers(1, 3))
        shapes.append(tuple(s))
    return tuple(shapes), {"axis": axis}


@st.composite
def stack_shapes(draw: Any) -> tuple[Shapes, dict]:
    base = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    k = draw(st.integers(1, 3))
    return (base,) * k, {"axis": draw(st.integers(-len(base) - 1, len(base)))}


@st.composite
def split_shapes(draw: Any) -> tuple[Shapes, dict]:
    shape = list(draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    if draw(st.booleans()):
        sections = draw(st.integers(1, 3))
        shape[axis] = sections * draw(st.integers(1, 2))
        return (tuple(shape),), {"indices_or_sections": sections, "axis": axis}
    n = shape[axis] = draw(st.integers(1, 5))
    cuts = sorted(draw(st.lists(st.integers(0, n), min_size=1, max_size=3)))
    return (tuple(shape),), {"indices_or_sections": cuts, "axis": axis}


@st.composite
def where_shapes(draw: Any) -> tuple[Shapes, dict]:
    r = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=MAX_SIDE))
    cshape, xshape, yshape = r.input_shapes
    return (xshape, yshape), {"cshape": cshape}


def on(x: Any, const: Any) -> Any:
    """A case's constant (a mask, a target, an order) where the case's input lives: as it is on the host; on a
    device the array a user there would pass (a device refuses host arrays mixed in, as CuPy does)."""
    arr = x._data if isinstance(x, cr.Tensor) else x
    return cr.devices.of(arr).from_host(np.asarray(const)) if cr.devices.is_off_host(arr) else const


def _condition(shape: tuple[int, ...]) -> np.ndarray:
    return (np.indices(shape).sum(axis=0) % 2 == 0) if shape else np.array(True)


# -- PyTorch helpers (only called when torch is installed) ------------------------------------
def _dims(t: Any, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(t.ndim))
    return (axis,) if isinstance(axis, int) else tuple(axis)


def _t_reduce(name: str) -> Callable[..., Any]:
    def fn(t: Any, axis: Any = None, keepdims: bool = False, ddof: int | None = None) -> Any:
        import torch

        dims = _dims(t, axis)
        if name in ("var", "std"):
            return getattr(torch, name)(t, dim=dims, correction=ddof or 0, keepdim=keepdims)
        return getattr(torch, name)(t, dim=dims, keepdim=keepdims)

    return fn


def _t_prod(t: Any, axis: Any = None, keepdims: bool = False) -> Any:
    dims = sorted(d % t.ndim for d in _dims(t, axis))
    for d in dims:
        t = t.prod(dim=d, keepdim=True)
    return t if keepdims else t.squeeze(tuple(dims))


def _t_getitem(t: Any, index: Any) -> Any:
    import torch

    positions = np.arange(t.numel()).reshape(tuple(t.shape))[index]
    if np.ndim(positions) == 0:
        return t.reshape(-1)[int(positions)]
    return t.reshape(-1)[torch.tensor(positions.tolist(), dtype=torch.long).reshape(positions.shape)]


def _t_dot(a: Any, b: Any) -> Any:
    import torch

    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if b.ndim <= 2:
        return torch.matmul(a, b)
    return torch.tensordot(a, b, dims=([a.ndim - 1], [b.ndim - 2]))


def _t_split(t: Any, indices_or_sections: Any, axis: int) -> Any:
    import torch

    return list(torch.tensor_split(t, indices_or_sections, dim=axis))


def _t(name: str) -> Callable[..., Any]:
    """torch.<name>, looked up only when called."""

    def fn(*args: Any, **kw: Any) -> Any:
        import torch

        return getattr(torch, name)(*args, **kw)

    return fn


def _t_where(x: Any, y: Any, cshape: tuple[int, ...]) -> Any:
    import torch

    return torch.where(torch.as_tensor(_condition(cshape)), x, y)


def _t_clip(lo: float | None, hi: float | None) -> Callable[..., Any]:
    return lambda t: t.clamp(lo, hi)


# -- the table -------------------------------------------------------------------------------
SPECS: list[OpSpec] = [
    # arithmetic, broadcasting
    OpSpec("operator_add", lambda x, y: x + y, lambda x, y: x + y, bcast(2), uniform(-2, 2)),
    OpSpec("operator_subtract", lambda x, y: x - y, lambda x, y: x - y, bcast(2), uniform(-2, 2)),
    OpSpec("operator_multiply", lambda x, y: x * y, lambda x, y: x * y, bcast(2), uniform(-2, 2)),
    OpSpec("operator_divide", lambda x, y: x / y, lambda x, y: x / y, bcast(2), any_and_nonzero),
    OpSpec("operator_power", lambda x, y: x**y, lambda x, y: x**y, bcast(2), positive_and_any),
    OpSpec("neg", lambda x: -x, lambda x: -x, one(), uniform(-2, 2)),
    OpSpec("radd", lambda x: 1.5 + x, lambda x: 1.5 + x, one(), uniform(-2, 2)),
    OpSpec("rsub", lambda x: 1.5 - x, lambda x: 1.5 - x, one(), uniform(-2, 2)),
    OpSpec("rmul", lambda x: 1.5 * x, lambda x: 1.5 * x, one(), uniform(-2, 2)),
    OpSpec("rdiv", lambda x: 1.5 / x, lambda x: 1.5 / x, one(), nonzero(-2, 2, 0.3)),
    OpSpec("pow_2", lambda x: x**2, lambda x: x**2, one(), uniform(-2, 2)),
    OpSpec("pow_3", lambda x: x**3, lambda x: x**3, one(), uniform(-2, 2)),
    OpSpec("pow_half", lambda x: x**0.5, lambda x: x**0.5, one(), uniform(0.2, 3)),
    OpSpec("pow_neg", lambda x: x**-1.5, lambda x: x**-1.5, one(), uniform(0.5, 3)),
    OpSpec("pow_0", lambda x: x**0, lambda x: x**0, one(), uniform(-2, 2)),
    OpSpec("rpow", lambda x: 2.0**x, lambda x: 2.0**x, one(), uniform(-2, 2)),
    # one argument (the functions themselves: declared, tests/op_declared.py), methods and NumPy spellings
    OpSpec("method_exp", lambda x: x.exp(), lambda x: x.exp(), one(), uniform(-2, 2)),
    OpSpec("builtin_abs", lambda x: abs(x), lambda x: abs(x), one(), nonzero(-2, 2)),
    OpSpec("np_ufunc_sin", lambda x: np.sin(x), _t("sin"), one(), uniform(-3, 3)),
    # two and three arguments
    OpSpec("where", lambda x, y, cshape: cr.where(on(x, _condition(cshape)), x, y), _t_where, where_shapes(),
           uniform(-2, 2)),
    OpSpec("clip", lambda x: cr.clip(x, -0.5, 0.7), _t_clip(-0.5, 0.7), one(), off_bounds(-0.5, 0.7)),
    OpSpec("clip_tensor_bounds", cr.clip, lambda x, lo, hi: x.clamp(lo, hi), bcast(3), value_and_bounds),
    OpSpec("clip_lo", lambda x: cr.clip(x, -0.5, None), _t_clip(-0.5, None), one(), off_bounds(-0.5, None)),
    OpSpec("clip_hi", lambda x: x.clip(None, 0.3), _t_clip(None, 0.3), one(), off_bounds(None, 0.3)),
    # reductions
    OpSpec("prod", cr.prod, _t_prod, reduction(), nonzero(-1.5, 1.5, 0.5)),
    OpSpec("var", cr.var, _t_reduce("var"), reduction(min_count=2, ddof=True), uniform(-2, 2)),
    OpSpec("std", cr.std, _t_reduce("std"), reduction(min_count=2, ddof=True), uniform(-2, 2)),
    OpSpec(
        "method_sum", lambda x, axis, keepdims: x.sum(axis, keepdims), _t_reduce("sum"), reduction(), uniform(-2, 2)
    ),
    OpSpec(
        "method_max",
        lambda x, axis, keepdims: x.max(axis=axis, keepdims=keepdims),
        _t_reduce("amax"),
        reduction(),
        all_distinct,
    ),
    OpSpec("softmax", cr.softmax, lambda t, axis: t.softmax(dim=axis), along_axis(), uniform(-3, 3)),
    OpSpec("log_softmax", cr.log_softmax, lambda t, axis: t.log_softmax(dim=axis), along_axis(), uniform(-3, 3)),
    # contractions
    OpSpec("matmul", lambda a, b: a @ b, _t("matmul"), matmul_shapes(), uniform(-2, 2)),
    OpSpec("fn_matmul", cr.matmul, _t("matmul"), matmul_shapes(), uniform(-2, 2)),
    OpSpec(
        "einsum",
        lambda *xs, subscripts: cr.einsum(subscripts, *xs),
        lambda *xs, subscripts: _t("einsum")(subscripts, *xs),
        einsum_shapes(),
        uniform(-2, 2),
    ),
    OpSpec("dot", cr.dot, _t_dot, dot_shapes(), uniform(-2, 2)),
    OpSpec("outer", cr.outer, lambda a, b: _t("outer")(a.reshape(-1), b.reshape(-1)), bcast(2), uniform(-2, 2)),
    OpSpec(
        "tensordot",
        cr.tensordot,
        lambda a, b, axes: _t("tensordot")(a, b, dims=axes),
        tensordot_shapes(),
        uniform(-2, 2),
    ),
    # shapes
    OpSpec("reshape", cr.reshape, lambda t, shape: t.reshape(shape), reshape_shapes(), uniform(-2, 2)),
    OpSpec(
        "method_reshape",
        lambda x, shape: x.reshape(*shape),
        lambda t, shape: t.reshape(shape),
        reshape_shapes(),
        uniform(-2, 2),
    ),
    OpSpec(
        "transpose",
        cr.transpose,
        lambda t, axes: t.permute(axes if axes is not None else tuple(range(t.ndim))[::-1]),
        transpose_shapes(),
        uniform(-2, 2),
    ),
    OpSpec("T", lambda x: x.T, lambda t: t.permute(tuple(range(t.ndim))[::-1]), one(), uniform(-2, 2)),
    OpSpec(
        "swapaxes", cr.swapaxes, lambda t, axis1, axis2: t.swapaxes(axis1, axis2), swapaxes_shapes(), uniform(-2, 2)
    ),
    OpSpec("expand_dims", cr.expand_dims, lambda t, axis: t.unsqueeze(axis), expand_dims_shapes(), uniform(-2, 2)),
    OpSpec(
        "squeeze",
        cr.squeeze,
        lambda t, axis: t.squeeze() if axis is None else t.squeeze(axis),
        squeeze_shapes(),
        uniform(-2, 2),
    ),
    OpSpec(
        "broadcast_to", cr.broadcast_to, lambda t, shape: t.broadcast_to(shape), broadcast_to_shapes(), uniform(-2, 2)
    ),
    OpSpec("getitem", lambda x, index: x[index], _t_getitem, getitem_shapes(), uniform(-2, 2)),
    OpSpec(
        "concatenate",
        lambda *xs, axis: cr.concatenate(list(xs), axis=axis),
        lambda *xs, axis: _t("cat")(list(xs), dim=axis),
        concat_shapes(),
        uniform(-2, 2),
    ),
    OpSpec(
        "stack",
        lambda *xs, axis: cr.stack(list(xs), axis=axis),
        lambda *xs, axis: _t("stack")(list(xs), dim=axis),
        stack_shapes(),
        uniform(-2, 2),
    ),
    OpSpec("split", cr.split, _t_split, split_shapes(), uniform(-2, 2)),
]

SPECS_BY_NAME = {s.name: s for s in SPECS}
assert len(SPECS_BY_NAME) == len(SPECS), "duplicate op names in the table"


def draw_inputs(spec: OpSpec, data: Any) -> tuple[list[np.ndarray], dict]:
    """Draw shapes, parameters and a seed with hypothesis; fill float64 inputs."""
    shapes, params = data.draw(spec.shapes, label="shapes, params")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    return spec.make(np.random.default_rng(seed), tuple(shapes), params), dict(params)


def call(spec: OpSpec, params: dict) -> Callable[..., Any]:
    return lambda *xs: spec.fn(*xs, **params)


def as_list(out: Any) -> Sequence[Any]:
    return list(out) if isinstance(out, (list, tuple)) else [out]
