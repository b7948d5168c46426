"""``chainrule.lax``: JAX's ``jax.lax`` names, so that JAX programs run with chainrule.

Control flow (``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``, ``map``, ``associative_scan``) takes
JAX's arguments and pytrees and gives JAX's results. chainrule traces Python, so these run eagerly: a loop is a
Python loop over the traced ops, differentiable to any order in both modes, under ``vmap`` and ``jit`` as any
other code. Two differences from JAX follow:

- ``grad`` of a ``while_loop`` works (the loop that ran is differentiated; JAX refuses reverse mode there), and
  so does ``grad`` of a ``fori_loop`` whose bounds are traced.
- Only the branch taken runs (``cond``, ``switch``), so the branches' outputs are not compared with each other;
  under ``vmap`` with a batched predicate or index every branch runs and the results are selected, as JAX does,
  and so under ``jit`` with a traced one (a replay given another input takes that input's branch).
- Under ``jit``, a ``while_loop`` whose trip count depends on a traced value raises ``JitError`` when a replay
  would need another count (the trace holds the iterations that ran): leave such a loop out of ``jit``.

A loop's carry must keep its structure, shapes and dtypes from one step to the next: a change raises a
``TypeError`` naming the function and the leaf, as JAX does. The elementwise, reduction and shape functions
(``lax.exp``, ``lax.reduce_sum``, ``lax.dynamic_slice``, ``lax.pad``...) are chainrule's NumPy ops under JAX's
names and argument conventions.

Example:
    >>> import numpy as np
    >>> import chainrule as cr
    >>> from chainrule import lax
    >>> def cumulative(xs):
    ...     return lax.scan(lambda c, x: (c + x, c * x), 0.0, xs)
    >>> carry, ys = cumulative(np.array([1.0, 2.0, 3.0]))
    >>> float(carry), ys.tolist()
    (6.0, [0.0, 2.0, 9.0])
    >>> cr.grad(lambda x: lax.fori_loop(0, 3, lambda i, v: v * x, 1.0))(2.0)  # d/dx x**3 = 12
    12.0
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import numpy as cnp
from .autodiff.batch_levels import is_batched
from .core import traces
from .custom import stop_gradient
from .ops import elementwise as _elementwise
from .ops import index_update as _index_update
from .ops._define import raw
from .tree_util import tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten

__all__ = [
    "abs", "acos", "add", "argmax", "argmin", "asin", "associative_scan", "atan", "atan2", "broadcast_in_dim",
    "ceil", "clamp", "concatenate", "cond", "convert_element_type", "cos", "cosh", "cumprod", "cumsum", "digamma",
    "div", "dot", "dot_general", "dynamic_slice", "dynamic_update_slice", "erf", "erf_inv", "erfc", "exp", "exp2",
    "expand_dims", "expm1", "floor", "fori_loop", "full", "full_like", "integer_pow", "iota", "lgamma", "log",
    "log1p", "logistic", "map", "max", "min", "mul", "neg", "pad", "pow", "reduce_max", "reduce_min", "reduce_prod",
    "reduce_sum", "reshape", "rev", "round", "rsqrt", "scan", "select", "sign", "sin", "sinh", "slice", "sqrt",
    "square", "squeeze", "stop_gradient", "sub", "switch", "tan", "tanh", "transpose", "while_loop",
]

_map = builtins.map


# ---------------------------------------------------------------- control flow

def _predicate(pred: Any, name: str) -> Any:
    if np.ndim(pred) != 0:
        raise TypeError(f"lax.{name}: the predicate must be a scalar, got shape {np.shape(pred)}")
    return pred


def _every_branch(pred: Any) -> bool:
    """Run every branch and select: a predicate batched under vmap, or traced by jit (a replay given another
    input must take that input's branch, so both are on the tape)."""
    return is_batched(pred) or traces.current() is not None and hasattr(pred, "_data")


def _select(pred: Any, on_true: Any, on_false: Any, name: str) -> Any:
    """Leaf by leaf ``where(pred, on_true, on_false)``, the two sides checked to agree."""
    _check_same(on_false, on_true, name, "the branches", "output the same structure as each other")
    return tree_map(lambda a, b: cnp.where(pred, a, b), on_true, on_false)


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; only the branch taken runs, except
    under vmap with a batched ``pred`` and under jit with a traced one: both run and each example (each replay)
    gets its own, as JAX's vmap does (so the other branch must compute too: a NaN there, e.g. a ``log`` of a
    negative number, gives a NaN gradient through the selection, as in JAX).

    Example:
        >>> from chainrule import lax
        >>> lax.cond(3.0 > 0, lambda x: x * 2, lambda x: -x, 3.0)
        6.0
    """
    _predicate(pred, "cond")
    if _every_branch(pred):
        return _select(pred, true_fun(*operands), false_fun(*operands), "cond")
    return true_fun(*operands) if bool(pred) else false_fun(*operands)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[index](*operands)``, the index clamped into ``[0, len(branches) - 1]`` as JAX does.

    Example:
        >>> from chainrule import lax
        >>> lax.switch(7, [lambda x: x + 1, lambda x: x * 10], 2.0)  # 7 is clamped to 1
        20.0
    """
    branches = list(branches)
    if not branches:
        raise ValueError("lax.switch: branches is empty; pass at least one function")
    _predicate(index, "switch")
    last = len(branches) - 1
    if _every_branch(index):  # every branch runs; each example (each jit replay) picks its own
        index = cnp.clip(index, 0, last)
        out = branches[last](*operands)
        for k in range(last - 1, -1, -1):
            out = _select(index == k, branches[k](*operands), out, "switch")
        return out
    return branches[builtins.min(builtins.max(int(index), 0), last)](*operands)


def _aval(leaf: Any) -> tuple[tuple[int, ...], Any]:
    """Shape and dtype, with a Python number weakly typed (its kind only), as JAX's weak types."""
    if isinstance(leaf, (bool, int, float, complex)):
        return (), np.dtype(type(leaf)).kind
    dtype = getattr(leaf, "dtype", None)
    return tuple(np.shape(leaf)), np.result_type(leaf) if dtype is None else np.dtype(dtype)


def _same_type(old: Any, new: Any) -> bool:
    (s0, d0), (s1, d1) = _aval(old), _aval(new)
    if s0 != s1:
        return False
    if isinstance(d0, str) or isinstance(d1, str):  # a weakly typed Python number: its kind must match
        k0, k1 = (d if isinstance(d, str) else d.kind for d in (d0, d1))
        return k0 == k1 or {k0, k1} <= {"i", "u"}
    return d0 == d1


def _check_same(old: Any, new: Any, name: str, what: str, rule: str = "keep the structure of the carry") -> None:
    """The carry's structure, shapes and dtypes must stay (a cond's branches must agree): JAX's error, naming
    the leaf."""
    if tree_structure(old) != tree_structure(new):
        raise TypeError(f"lax.{name}: {what} must {rule}: {tree_structure(old)} and {tree_structure(new)}")
    for k, (a, b) in enumerate(zip(tree_leaves(old), tree_leaves(new))):
        if not _same_type(a, b):
            (s0, d0), (s1, d1) = _aval(a), _aval(b)
            raise TypeError(f"lax.{name}: {what} must keep each leaf's shape and dtype: leaf {k} was {d0}{list(s0)}, "
                            f"then {d1}{list(s1)}; cast it (x.astype(...)) or change the initial value")


def _whole(v: Any) -> np.ndarray:
    while is_batched(v):  # every example's values (under nested vmaps, every level's)
        v = v.value
    return np.asarray(raw(v))


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """``val = body_fun(val)`` while ``cond_fun(val)``; returns the final ``val``.

    Unlike JAX, reverse mode works: ``grad`` differentiates the iterations that ran (a step count that depends
    on the input has derivative zero, as the loop's value is piecewise smooth in it). Under vmap with a batched
    predicate the loop runs until every example is done, each keeping its own value once done, as JAX's.

    Example:
        >>> import chainrule as cr
        >>> from chainrule import lax
        >>> lax.while_loop(lambda v: v[0] < 5, lambda v: (v[0] + 1, v[1] * 2.0), (0, 1.0))
        (5, 32.0)
        >>> cr.grad(lambda x: lax.while_loop(lambda v: v < 10.0, lambda v: v * x, 1.0))(3.0)  # x**3: 3 x**2
        27.0
    """
    val = init_val
    pred = _predicate(cond_fun(val), "while_loop")
    while True:
        if is_batched(pred):
            if not _whole(pred).any():
                return val
            new = body_fun(val)
            _check_same(val, new, "while_loop", "body_fun")
            val = tree_map(lambda a, b: cnp.where(pred, a, b), new, val)
        elif bool(pred):
            new = body_fun(val)
            _check_same(val, new, "while_loop", "body_fun")
            val = new
        else:
            return val
        pred = _predicate(cond_fun(val), "while_loop")


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[int, Any], Any], init_val: Any, *,
              unroll: Any = None) -> Any:
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)`` (``i`` a Python int); returns ``val``.
    Under vmap with batched bounds it is a ``while_loop`` (each example runs its own count), as JAX's.

    Example:
        >>> from chainrule import lax
        >>> lax.fori_loop(0, 4, lambda i, v: v + i, 0)
        6
    """
    if is_batched(lower) or is_batched(upper):
        def step(state: tuple[Any, Any]) -> tuple[Any, Any]:
            i, v = state
            return i + 1, body_fun(i, v)

        return while_loop(lambda state: state[0] < upper, step, (lower, init_val))[1]
    val = init_val
    for i in range(int(lower), int(upper)):
        new = body_fun(i, val)
        _check_same(val, new, "fori_loop", "body_fun")
        val = new
    return val


def _length(xs: Any, length: int | None, name: str) -> int:
    sizes = {np.shape(leaf)[0] if np.ndim(leaf) else None for leaf in tree_leaves(xs)}
    if None in sizes:
        raise ValueError(f"lax.{name}: every leaf of xs must have a leading axis to scan over; one is a scalar")
    if length is not None:
        sizes.add(int(length))
    if len(sizes) > 1:
        raise ValueError(f"lax.{name}: the leaves of xs (and length=) disagree on the length: {sorted(sizes)}")
    if not sizes:
        raise ValueError(f"lax.{name}: xs has no leaves; pass length= to say how many steps to run")
    return sizes.pop()


def _stack(ys: list[Any], example: Any) -> Any:
    if not ys:  # no step ran: empty leaves of each output's shape, as JAX's
        return tree_map(lambda y: np.zeros((0, *np.shape(y)), dtype=_dtype(y)), example)
    leaves, treedef = tree_flatten(ys[0])
    columns = [tree_leaves(y) for y in ys]
    return tree_unflatten(treedef, [cnp.stack([c[k] for c in columns]) for k in range(len(leaves))])


def _dtype(x: Any) -> Any:
    return getattr(x, "dtype", None) or np.result_type(x)


def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: Any = 1, _split_transpose: bool = False) -> tuple[Any, Any]:
    """``carry, y = f(carry, x)`` for each ``x`` along the leading axis of ``xs`` (a pytree, or None with
    ``length=``); returns the last carry and the ``y``s stacked (``reverse=True``: from the end, stacked in
    the order of ``xs``). ``unroll`` is accepted and has no effect (every loop here is run step by step).

    Example:
        >>> import numpy as np
        >>> from chainrule import lax
        >>> carry, ys = lax.scan(lambda c, x: (c + x, c), 0.0, np.array([1.0, 2.0, 3.0]), reverse=True)
        >>> float(carry), ys.tolist()
        (6.0, [5.0, 3.0, 0.0])
    """
    n = _length(xs, length, "scan")
    carry, ys = init, [None] * n
    steps = range(n - 1, -1, -1) if reverse else range(n)
    for i in steps:
        x = tree_map(lambda leaf, i=i: leaf[i], xs)
        new, ys[i] = f(carry, x)
        _check_same(carry, new, "scan", "f's carry")
        carry = new
    if n == 0:  # JAX traces f to learn the outputs' shapes: run it on zeros, for the shapes only
        zeros = tree_map(lambda leaf: np.zeros(np.shape(leaf)[1:], dtype=_dtype(leaf)), xs)
        return carry, _stack([], f(init, zeros)[1])
    return carry, _stack(ys, ys[0])


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001  (jax.lax.map)
    """``f`` applied to each slice of ``xs`` along its leading axis, the results stacked (a pytree in and out).

    Example:
        >>> import numpy as np
        >>> from chainrule import lax
        >>> lax.map(lambda x: x.sum(), np.arange(6.0).reshape(3, 2)).tolist()
        [1.0, 5.0, 9.0]
    """
    return scan(lambda carry, x: (carry, f(x)), (), xs)[1]


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """Prefix combinations ``fn(... fn(fn(e0, e1), e2) ..., ek)`` along ``axis`` of each leaf of ``elems``
    (``reverse=True``: from the end), JAX's result, computed one step at a time.

    Example:
        >>> import numpy as np
        >>> from chainrule import lax
        >>> lax.associative_scan(np.add, np.array([1.0, 2.0, 3.0])).tolist()
        [1.0, 3.0, 6.0]
    """
    leaves, treedef = tree_flatten(elems)
    moved = [cnp.moveaxis(leaf, axis, 0) for leaf in leaves]
    n = _length(moved, None, "associative_scan")
    order = range(n - 1, -1, -1) if reverse else range(n)
    out, acc = [None] * n, None
    for i in order:
        e = tree_unflatten(treedef, [leaf[i] for leaf in moved])
        acc = e if acc is None else fn(acc, e)
        out[i] = acc
    stacked = tree_leaves(_stack(out, out[0]))
    return tree_unflatten(treedef, [cnp.moveaxis(leaf, 0, axis) for leaf in stacked])


# ---------------------------------------------------------------- elementwise and reductions: chainrule's ops

abs, sign, neg, square, sqrt = cnp.abs, cnp.sign, cnp.negative, cnp.square, cnp.sqrt  # noqa: A001
exp, exp2, expm1, log, log1p = cnp.exp, cnp.exp2, cnp.expm1, cnp.log, cnp.log1p
sin, cos, tan, asin, acos, atan, atan2 = cnp.sin, cnp.cos, cnp.tan, cnp.arcsin, cnp.arccos, cnp.arctan, cnp.arctan2
sinh, cosh, tanh = cnp.sinh, cnp.cosh, cnp.tanh
floor, ceil, round = cnp.floor, cnp.ceil, cnp.round  # noqa: A001
add, sub, mul, pow = cnp.add, cnp.subtract, cnp.multiply, cnp.power  # noqa: A001
max, min = cnp.maximum, cnp.minimum  # noqa: A001  (lax.max is elementwise)
logistic, erf = _elementwise.sigmoid, _elementwise.erf
select = cnp.where


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
    if np.result_type(_dtype(x), _dtype(y)).kind in "iu":
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
    return full(np.shape(x) if shape is None else shape, fill_value, _dtype(x) if dtype is None else dtype)


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Any:
    """``operand[start:limit:stride, ...]`` on every axis."""
    strides = strides or [1] * len(start_indices)
    return operand[tuple(_map(builtins.slice, start_indices, limit_indices, strides))]


def _starts(operand: Any, start_indices: Sequence[Any], sizes: Sequence[int], name: str,
            allow_negative_indices: Any) -> list[int]:
    """JAX's start indices: a negative one counts from the end (where allowed), then each is clamped so that the
    block fits in the operand."""
    if len(start_indices) != np.ndim(operand):
        raise TypeError(f"lax.{name}: {len(start_indices)} start indices for an operand of rank {np.ndim(operand)}")
    shape = np.shape(operand)
    negative = (allow_negative_indices if isinstance(allow_negative_indices, (list, tuple))
                else [allow_negative_indices] * len(shape))
    starts = [int(s) + n if ok and int(s) < 0 else int(s) for s, n, ok in zip(start_indices, shape, negative)]
    return [builtins.min(builtins.max(s, 0), n - k) for s, n, k in zip(starts, shape, sizes)]


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
    return operand[tuple(builtins.slice(s, s + k) for s, k in zip(starts, slice_sizes))]


def _set(x: Any, index: Any, values: Any) -> Any:
    return x.at[index].set(values) if hasattr(x, "at") else _index_update._updated(x, index, values, None)


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any], *,
                         allow_negative_indices: Any = True) -> Any:
    """``operand`` with ``update`` written at ``start_indices`` (negative: from the end; clamped to fit, as JAX)."""
    starts = _starts(operand, start_indices, np.shape(update), "dynamic_update_slice", allow_negative_indices)
    return _set(operand, tuple(builtins.slice(s, s + k) for s, k in zip(starts, np.shape(update))), update)


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
    out = full(shape, padding_value, _dtype(operand)) if np.ndim(padding_value) == 0 else None
    if out is None:
        raise ValueError(f"lax.pad: padding_value must be a scalar, got shape {np.shape(padding_value)}")
    spread = tuple(builtins.slice(builtins.max(lo, 0), builtins.max(lo, 0) + (n - 1) * (i + 1) + 1, i + 1)
                   for n, (lo, _, i) in zip(np.shape(operand), config))
    out = _set(out, spread, operand)
    return out[tuple(builtins.slice(builtins.max(-lo, 0), n - builtins.max(-hi, 0))
                     for n, (lo, hi, _) in zip(shape, config))]
