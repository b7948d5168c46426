"""``jax.lax``'s names for operations chainrule has (``lax.exp``, ``lax.logistic``, ``lax.reduce_sum``,
``lax.dot_general``, ``lax.dynamic_slice``, ``lax.pad``, ...), with lax's arguments: each is a chainrule op, so
differentiable as the op is. ``chainrule.lax`` serves them beside its control flow.

Example:
    >>> import numpy as np
    >>> from chainrule import lax_ops
    >>> lax_ops.reduce_sum(np.ones((2, 3)), (1,)).tolist()
    [3.0, 3.0]
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import numpy as cnp
from .autodiff.batch_levels import is_batched
from .core import traces
from .ops import elementwise as _elementwise
from .ops import index_update as _index_update

__all__ = [
    "abs", "acos", "add", "argmax", "argmin", "asin", "atan", "atan2", "batch_matmul", "broadcast_in_dim", "ceil",
    "clamp", "concatenate", "convert_element_type", "cos", "cosh", "cumlogsumexp", "cummax", "cummin", "cumprod",
    "cumsum", "digamma", "div", "dot", "dot_general", "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim", "erf", "erf_inv", "erfc",
    "exp", "exp2", "expand_dims", "expm1", "floor", "full", "full_like", "index_in_dim", "integer_pow", "iota",
    "lgamma", "log", "log1p", "logistic", "max", "min", "mul", "neg", "pad", "pow", "reduce", "reduce_max",
    "reduce_min", "reduce_prod", "reduce_sum", "rem", "reshape", "rev", "round", "rsqrt", "select", "sign", "sin",
    "sinh", "slice", "slice_in_dim", "sort", "sqrt", "square", "squeeze", "sub", "tan", "tanh", "top_k", "transpose",
]
_map = builtins.map


def dtype_of(x: Any) -> Any:
    """The dtype of an array, a Tensor or a Python number."""
    return getattr(x, "dtype", None) or np.result_type(x)


abs, sign, neg, square, sqrt = cnp.abs, cnp.sign, cnp.negative, cnp.square, cnp.sqrt  # noqa: A001
exp, exp2, expm1, log, log1p = cnp.exp, cnp.exp2, cnp.expm1, cnp.log, cnp.log1p
sin, cos, tan, asin, acos, atan, atan2 = cnp.sin, cnp.cos, cnp.tan, cnp.arcsin, cnp.arccos, cnp.arctan, cnp.arctan2
sinh, cosh, tanh = cnp.sinh, cnp.cosh, cnp.tanh
floor, ceil, round = cnp.floor, cnp.ceil, cnp.round  # noqa: A001
add, sub, mul, pow = cnp.add, cnp.subtract, cnp.multiply, cnp.power  # noqa: A001
max, min = cnp.maximum, cnp.minimum  # noqa: A001  (lax.max is elementwise)
logistic, erf = _elementwise.sigmoid, _elementwise.erf
select = cnp.where
rem, batch_matmul = cnp.fmod, cnp.matmul  # lax.rem is C's remainder: the sign of the dividend, as fmod


def _scipy(name: str) -> Callable[[Any], Any]:
    def special_function(x: Any) -> Any:
        from . import special  # on first use: it needs SciPy (pip install chainrule[scipy])

        return getattr(special, name)(x)

    special_function.__name__ = special_function.__qualname__ = name
    special_function.__doc__ = f"SciPy's ``special.{name}``, differentiable (needs SciPy)."
    return special_function


erfc, erf_inv, lgamma, digamma = _scipy("erfc"), _scipy("erfinv"), _scipy("gammaln"), _scipy("digamma")


def rsqrt(x: Any) -> Any:
    """``1 / sqrt(x)``."""
    return 1.0 / cnp.sqrt(x)


def div(x: Any, y: Any) -> Any:
    """``x / y``; integers divide rounding toward zero, as C and JAX (NumPy's ``//`` rounds down)."""
    if np.result_type(dtype_of(x), dtype_of(y)).kind in "iu":
        return cnp.sign(x) * cnp.sign(y) * (cnp.abs(x) // cnp.abs(y))
    return cnp.divide(x, y)


def integer_pow(x: Any, y: int) -> Any:
    """``x ** y`` for a Python int ``y``."""
    return x ** int(y)


def clamp(min: Any, x: Any, max: Any) -> Any:  # noqa: A002  (JAX's argument order: clamp(min, x, max))
    """``x`` clipped into ``[min, max]``."""
    return cnp.clip(x, min, max)


def reduce_sum(operand: Any, axes: Sequence[int]) -> Any:
    return cnp.sum(operand, axis=tuple(axes))


def reduce_max(operand: Any, axes: Sequence[int]) -> Any:
    return cnp.max(operand, axis=tuple(axes))


def reduce_min(operand: Any, axes: Sequence[int]) -> Any:
    return cnp.min(operand, axis=tuple(axes))


def reduce_prod(operand: Any, axes: Sequence[int]) -> Any:
    return cnp.prod(operand, axis=tuple(axes))


def cumsum(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    return cnp.flip(cnp.cumsum(cnp.flip(operand, axis), axis), axis) if reverse else cnp.cumsum(operand, axis)


def cumprod(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    return cnp.flip(cnp.cumprod(cnp.flip(operand, axis), axis), axis) if reverse else cnp.cumprod(operand, axis)


def _prefix(combine: Callable[[Any, Any], Any], operand: Any, axis: int, reverse: bool) -> Any:
    """Running ``combine`` along ``axis`` by JAX's parallel prefix scan (the tree ``lax.associative_scan`` builds,
    so that a derivative splits between equal entries as JAX's does), of chainrule ops: differentiable, batched
    and jitted as those ops are."""
    axis = axis % np.ndim(operand)
    x = cnp.flip(operand, axis) if reverse else operand
    (x,) = prefix_scan(lambda a, b: [combine(a[0], b[0])], [x], axis)
    return cnp.flip(x, axis) if reverse else x


def prefix_scan(combine: Callable[[list[Any], list[Any]], list[Any]], leaves: list[Any], axis: int) -> list[Any]:
    """``combine``'s running reduction along ``axis`` of arrays ``leaves`` (of one length there; ``combine`` takes
    and gives lists of them): pairs combined, their scan (recursively), then the even entries from the odd ones
    (Blelloch's scan, as ``jax.lax.associative_scan``)."""
    n = np.shape(leaves[0])[axis]
    if n < 2:
        return leaves

    def cut(x: Any, start: int, stop: int | None, step: int = 1) -> Any:
        return x[(builtins.slice(None),) * axis + (builtins.slice(start, stop, step),)]

    odd = prefix_scan(combine, combine([cut(x, 0, -1, 2) for x in leaves], [cut(x, 1, None, 2) for x in leaves]),
                      axis)
    even = combine([cut(o, 0, -1) for o in odd] if n % 2 == 0 else odd, [cut(x, 2, None, 2) for x in leaves])
    out = []
    for x, e, o in zip(leaves, even, odd):
        e = cnp.concatenate([cut(x, 0, 1), e], axis=axis)
        m = np.shape(o)[axis]
        pairs = cnp.stack([cut(e, 0, m), o], axis=axis + 1)
        shape = list(np.shape(o))
        shape[axis] = 2 * m
        joined = cnp.reshape(pairs, tuple(shape))
        out.append(cnp.concatenate([joined, cut(e, m, None)], axis=axis) if np.shape(e)[axis] > m else joined)
    return out


def cummax(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    return _prefix(cnp.maximum, operand, axis, reverse)


def cummin(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    return _prefix(cnp.minimum, operand, axis, reverse)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """``log(cumsum(exp(operand)))``, each partial sum by ``logaddexp`` (no overflow, no underflow)."""
    return _prefix(cnp.logaddexp, operand, axis, reverse)


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """Sorted along ``dimension``; a tuple of operands is sorted by the first (``num_keys=1``), as JAX."""
    if not isinstance(operand, (tuple, list)):
        return cnp.sort(operand, axis=dimension)
    if num_keys != 1:
        raise NotImplementedError(f"lax.sort: num_keys={num_keys} is not supported; sort by one key (num_keys=1)")
    order = cnp.argsort(operand[0], axis=dimension, kind="stable")
    return tuple(cnp.take_along_axis(o, order, axis=dimension) for o in operand)


def top_k(operand: Any, k: int) -> tuple[Any, Any]:
    """The ``k`` largest entries along the last axis and their indices (int32, as JAX's), largest first; of equal
    entries the first comes first, as in JAX (a stable sort of the reversed entries, read backwards)."""
    n = np.shape(operand)[-1]
    order = (n - 1) - cnp.flip(cnp.argsort(cnp.flip(operand, -1), axis=-1, kind="stable"), -1)[..., :k]
    return cnp.take_along_axis(operand, order, axis=-1), order.astype(np.int32)


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any], dimensions: Sequence[int]) -> Any:
    """JAX's generic reduction: ``computation`` folded over ``dimensions``, starting from ``init_values`` (as in
    JAX, an identity of ``computation``: XLA may apply it any number of times).
    Sums, products, maxima and minima use chainrule's reductions; any other ``computation`` is folded step by step."""
    if isinstance(operands, (tuple, list)):
        raise NotImplementedError("lax.reduce: several operands (a variadic reduction) are not supported; reduce "
                                  "each operand on its own")
    known = {id(f): r for fs, r in [((cnp.add, np.add, add), cnp.sum), ((cnp.multiply, np.multiply, mul), cnp.prod),
                                     ((cnp.maximum, np.maximum), cnp.max), ((cnp.minimum, np.minimum), cnp.min)]
             for f in fs}
    dims = tuple(d % np.ndim(operands) for d in dimensions)
    if id(computation) in known:
        return computation(init_values, known[id(computation)](operands, axis=dims))
    rest = [a for a in range(np.ndim(operands)) if a not in dims]
    moved = cnp.reshape(cnp.transpose(operands, dims + tuple(rest)), (-1, *[np.shape(operands)[a] for a in rest]))
    out = init_values
    for row in range(np.shape(moved)[0]):
        out = computation(out, moved[row])
    return out


def argmax(operand: Any, axis: int, index_dtype: Any = np.int32) -> Any:
    return cnp.argmax(operand, axis=axis).astype(index_dtype)


def argmin(operand: Any, axis: int, index_dtype: Any = np.int32) -> Any:
    return cnp.argmin(operand, axis=axis).astype(index_dtype)


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    return cnp.asarray(operand).astype(new_dtype) if isinstance(operand, (int, float, bool, complex)) \
        else operand.astype(new_dtype)


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Vector and matrix products (``lhs @ rhs`` for ranks 1 and 2)."""
    return cnp.dot(lhs, rhs)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Any:
    """``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``: the result's axes are the batch axes,
    then ``lhs``'s free axes, then ``rhs``'s, as JAX's (an ``einsum``).

    Example:
        >>> import numpy as np
        >>> from chainrule import lax
        >>> lax.dot_general(np.ones((2, 3, 4)), np.ones((2, 4, 5)), (((2,), (1,)), ((0,), (0,)))).shape
        (2, 3, 5)
    """
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(a) for a in axes) for axes in (lc, rc, lb, rb))
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    left = [next(letters) for _ in range(np.ndim(lhs))]
    right = [next(letters) for _ in range(np.ndim(rhs))]
    for a, b in zip(lc + lb, rc + rb):
        right[b] = left[a]
    batch = [left[a] for a in lb]
    free_l = [c for k, c in enumerate(left) if k not in lc + lb]
    free_r = [c for k, c in enumerate(right) if k not in rc + rb]
    return cnp.einsum(f"{''.join(left)},{''.join(right)}->{''.join(batch + free_l + free_r)}", lhs, rhs)


def broadcast_in_dim(operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Any:
    """``operand``'s axis ``k`` becomes axis ``broadcast_dimensions[k]`` of a result of ``shape``."""
    kept = [1] * len(shape)
    for k, d in enumerate(broadcast_dimensions):
        kept[d] = np.shape(operand)[k]
    return cnp.broadcast_to(cnp.reshape(operand, tuple(kept)), tuple(shape))


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> Any:
    """``operand`` transposed by ``dimensions`` (if given), then reshaped (row-major) to ``new_sizes``."""
    if dimensions is not None:
        operand = cnp.transpose(operand, tuple(dimensions))
    return cnp.reshape(operand, tuple(new_sizes))


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    return cnp.transpose(operand, tuple(permutation))


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    return cnp.concatenate(list(operands), axis=dimension)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    return cnp.expand_dims(array, tuple(dimensions))


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    return cnp.squeeze(array, tuple(dimensions))


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    return cnp.flip(operand, tuple(dimensions))


def iota(dtype: Any, size: int) -> np.ndarray:
    return np.arange(size, dtype=dtype)


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    return cnp.broadcast_to(cnp.asarray(fill_value) if dtype is None else cnp.asarray(fill_value).astype(dtype),
                            tuple(shape)) * 1


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None) -> Any:
    return full(np.shape(x) if shape is None else shape, fill_value, dtype_of(x) if dtype is None else dtype)


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Any:
    """``operand[start:limit:stride, ...]`` on every axis."""
    strides = strides or [1] * len(start_indices)
    return operand[tuple(_map(builtins.slice, start_indices, limit_indices, strides))]


def _traced(index: Any) -> bool:
    """A start index whose value is not fixed: batched under vmap (each example its own), or traced by jit (a
    replay gets another)."""
    return is_batched(index) or traces.current() is not None and hasattr(index, "_data")


def _starts(operand: Any, start_indices: Sequence[Any], sizes: Sequence[int], name: str,
            allow_negative_indices: Any) -> list[Any]:
    """JAX's start indices: a negative one counts from the end (where allowed), then each is clamped so that the
    block fits in the operand. A traced index stays traced (computed with ops), any other becomes an int."""
    if len(start_indices) != np.ndim(operand):
        raise TypeError(f"lax.{name}: {len(start_indices)} start indices for an operand of rank {np.ndim(operand)}")
    shape = np.shape(operand)
    negative = (allow_negative_indices if isinstance(allow_negative_indices, (list, tuple))
                else [allow_negative_indices] * len(shape))
    starts = []
    for s, n, k, ok in zip(start_indices, shape, sizes, negative):
        if _traced(s):
            starts.append(cnp.clip(cnp.where(s < 0, s + n, s) if ok else s, 0, n - k))
        else:
            s = int(s) + n if ok and int(s) < 0 else int(s)
            starts.append(builtins.min(builtins.max(s, 0), n - k))
    return starts


def _picks(start: Any, size: int, n: int) -> Any:
    """``(size, n)`` booleans: row ``j`` is true at position ``start + j``; a comparison, so a traced start stays
    traced."""
    return cnp.expand_dims(start + np.arange(size), -1) == np.arange(n)


def _gather(x: Any, picks: Any, axis: int) -> Any:
    """``x``'s ``axis`` (``n``) narrowed to the ``size`` positions picked, by selections of ``x``'s values (under jit
    an index array, a product with a constant one-hot, or an ``&`` would read the start's value)."""
    rows = cnp.expand_dims(cnp.moveaxis(x, axis, -1), -2)
    return cnp.moveaxis(cnp.sum(cnp.where(picks, rows, 0), axis=-1), -1, axis)


def _scatter(x: Any, picks: Any, axis: int) -> Any:
    """``x``'s ``axis`` (``size``) spread to the ``n`` positions picked, zero elsewhere: ``_gather``'s transpose."""
    cols = cnp.expand_dims(cnp.moveaxis(x, axis, -1), -1)
    return cnp.moveaxis(cnp.sum(cnp.where(picks, cols, 0), axis=-2), -1, axis)


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int], *,
                  allow_negative_indices: Any = True) -> Any:
    """The block of ``slice_sizes`` at ``start_indices`` (negative: from the end), clamped to fit as JAX does.

    Example:
        >>> import numpy as np
        >>> from chainrule import lax
        >>> lax.dynamic_slice(np.arange(5.0), (4,), (2,)).tolist()  # the start is clamped to 3
        [3.0, 4.0]
    """
    starts = _starts(operand, start_indices, slice_sizes, "dynamic_slice", allow_negative_indices)
    if all(isinstance(s, int) for s in starts):
        return operand[tuple(builtins.slice(s, s + k) for s, k in zip(starts, slice_sizes))]
    for axis, (s, n, k) in enumerate(zip(starts, np.shape(operand), slice_sizes)):  # a traced start: select
        operand = _gather(operand, _picks(s, k, n), axis)
    return operand


def _set(x: Any, index: Any, values: Any) -> Any:
    if hasattr(x, "at"):
        return x.at[index].set(values)
    if x.__class__ is np.ndarray and (values.__class__ is np.ndarray or isinstance(values, (int, float, np.generic))):
        out = x.copy()  # NumPy's arrays in, NumPy's out, as the other lax functions (it gave a Tensor)
        out[index] = values
        return out
    return _index_update._updated(x, index, values, None)


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any], *,
                         allow_negative_indices: Any = True) -> Any:
    """``operand`` with ``update`` written at ``start_indices`` (negative: from the end; clamped to fit, as JAX)."""
    starts = _starts(operand, start_indices, np.shape(update), "dynamic_update_slice", allow_negative_indices)
    if all(isinstance(s, int) for s in starts):
        return _set(operand, tuple(builtins.slice(s, s + k) for s, k in zip(starts, np.shape(update))), update)
    # a traced start: the update spread over the operand's shape, selected inside the block (one where per axis:
    # under jit an ``&`` of the masks would read the start's value)
    spread = update
    for axis, (s, n, k) in enumerate(zip(starts, np.shape(operand), np.shape(update))):
        spread = _scatter(spread, _picks(s, k, n), axis)
    for axis, (s, n, k) in enumerate(zip(starts, np.shape(operand), np.shape(update))):
        position = np.arange(n).reshape((n,) + (1,) * (np.ndim(operand) - axis - 1))
        spread = cnp.where(position >= s, cnp.where(position < s + k, spread, operand), operand)
    return spread


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """Entry ``index`` along ``axis`` (the axis kept with ``keepdims``)."""
    out = slice_in_dim(operand, index, index + 1 if index != -1 else None, axis=axis)
    return out if keepdims else cnp.squeeze(out, axis)


def slice_in_dim(operand: Any, start_index: Any, limit_index: Any, stride: int = 1, axis: int = 0) -> Any:
    """``operand[start_index:limit_index:stride]`` along ``axis``."""
    return operand[(builtins.slice(None),) * (axis % np.ndim(operand)) + (builtins.slice(start_index, limit_index,
                                                                                           stride),)]


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0,
                         allow_negative_indices: bool = True) -> Any:
    """``dynamic_slice`` along one axis."""
    axis = axis % np.ndim(operand)
    starts = [0] * np.ndim(operand)
    starts[axis] = start_index
    sizes = list(np.shape(operand))
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True) -> Any:
    """Entry ``index`` (traced or not) along ``axis``."""
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else cnp.squeeze(out, axis)


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int) -> Any:
    """``dynamic_update_slice`` along one axis."""
    starts = [0] * np.ndim(operand)
    starts[axis % np.ndim(operand)] = start_index
    return dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int) -> Any:
    """``operand`` with entry ``index`` along ``axis`` replaced by ``update`` (that axis of size 1, or absent)."""
    axis = axis % np.ndim(operand)
    if np.ndim(update) == np.ndim(operand) - 1:
        update = cnp.expand_dims(update, axis)
    return dynamic_update_slice_in_dim(operand, update, index, axis)


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """JAX's ``lax.pad``: for each axis ``(low, high, interior)``: ``interior`` values between entries, then
    ``low`` before and ``high`` after (negative: that many entries cut off).

    Example:
        >>> import numpy as np
        >>> from chainrule import lax
        >>> lax.pad(np.array([1.0, 2.0, 3.0]), 0.0, [(1, -1, 1)]).tolist()
        [0.0, 1.0, 0.0, 2.0, 0.0]
    """
    config = [tuple(int(c) for c in axis) for axis in padding_config]
    if len(config) != np.ndim(operand) or any(i < 0 for _, _, i in config):
        raise ValueError(f"lax.pad: padding_config needs one (low, high, interior >= 0) per axis of the operand of "
                         f"shape {np.shape(operand)}, got {padding_config}")
    shape = [builtins.max(n + (n - 1) * i, 0) + builtins.max(lo, 0) + builtins.max(hi, 0)
             for n, (lo, hi, i) in zip(np.shape(operand), config)]
    out = full(shape, padding_value, dtype_of(operand)) if np.ndim(padding_value) == 0 else None
    if out is None:
        raise ValueError(f"lax.pad: padding_value must be a scalar, got shape {np.shape(padding_value)}")
    spread = tuple(builtins.slice(builtins.max(lo, 0), builtins.max(lo, 0) + (n - 1) * (i + 1) + 1, i + 1)
                   for n, (lo, _, i) in zip(np.shape(operand), config))
    out = _set(out, spread, operand)
    return out[tuple(builtins.slice(builtins.max(-lo, 0), n - builtins.max(-hi, 0))
                     for n, (lo, hi, _) in zip(shape, config))]
