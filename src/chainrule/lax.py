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
from .lax_ops import *  # noqa: F403  (lax's names for chainrule's ops: exp, reduce_sum, dot_general, pad, ...)
from .lax_ops import __all__ as _lax_ops
from .lax_ops import dtype_of, prefix_scan
from .ops._define import raw
from .ops.index_update import with_at as _with_at
from .ops.lax_windows import (
    ConvDimensionNumbers,
    conv,
    conv_dimension_numbers,
    conv_general_dilated,
    conv_with_general_padding,
    padtype_to_pads,
    reduce_window,
    select_n,
)
from .tree_util import tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten

__all__ = ["associative_scan", "cond", "fori_loop", "map", "scan", "stop_gradient", "switch", "while_loop"]
__all__ += _lax_ops  # lax's names for chainrule's ops
__all__ += ["ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
            "conv_with_general_padding", "padtype_to_pads", "reduce_window", "select_n"]


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
        return tree_map(lambda y: np.zeros((0, *np.shape(y)), dtype=dtype_of(y)), example)
    leaves, treedef = tree_flatten(ys[0])
    columns = [tree_leaves(y) for y in ys]
    return tree_unflatten(treedef, [cnp.stack([c[k] for c in columns]) for k in range(len(leaves))])


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
        zeros = tree_map(lambda leaf: np.zeros(np.shape(leaf)[1:], dtype=dtype_of(leaf)), xs)
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
    (``reverse=True``: from the end), by JAX's parallel scan: ``fn`` gets slices of the leaves along ``axis`` (it
    must work entry by entry, as JAX's requires) and the order of its applications is JAX's, so derivatives
    split between equal entries as there.

    Example:
        >>> import numpy as np
        >>> from chainrule import lax
        >>> lax.associative_scan(np.add, np.array([1.0, 2.0, 3.0])).tolist()
        [1.0, 3.0, 6.0]
    """
    leaves, treedef = tree_flatten(elems)
    axis = axis % np.ndim(leaves[0])
    _length([cnp.moveaxis(leaf, axis, 0) for leaf in leaves], None, "associative_scan")
    if reverse:
        leaves = [cnp.flip(leaf, axis) for leaf in leaves]

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        return tree_leaves(fn(tree_unflatten(treedef, a), tree_unflatten(treedef, b)))

    scanned = prefix_scan(combine, leaves, axis)
    return tree_unflatten(treedef, [cnp.flip(leaf, axis) if reverse else leaf for leaf in scanned])


def _returns_with_at(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` giving an ArrayWithAt where it gives a plain ndarray (JAX programs write ``lax.f(x).at[i]``)."""
    import functools

    @functools.wraps(fn)
    def returns_with_at(*args: Any, **kwargs: Any) -> Any:
        return _with_at(fn(*args, **kwargs))

    return returns_with_at


# lax's own functions (the cnp aliases among them, lax.exp, lax.max..., give ArrayWithAt already)
for _name in __all__:
    _fn = globals()[_name]
    if callable(_fn) and not isinstance(_fn, type) and getattr(_fn, "__module__", "") in (
            "chainrule.lax_ops", "chainrule.ops.lax_windows"):
        globals()[_name] = _returns_with_at(_fn)
