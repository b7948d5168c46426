"""The transforms (grad, jvp, vjp, jacrev, jacfwd) entered inside ``vmap``: one example's answer, for every example.

A transform entered while a vmap level L is visible differentiates the whole batch at once: the
arguments it differentiates become whole batches (repeated if they are the same for every
example), the function runs on them as Batched values of L, and its results are taken as whole
batches again. This is exact because batching never mixes examples: the gradient of the sum of
per-example outputs is the stack of per-example gradients; a cotangent or tangent that is one basis
vector repeated over the batch gives every example's Jacobian row or column at once. Level L is
hidden while the plain transform runs, so a transform of outer levels is handled the same way next.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import transforms
from ..autodiff import batch_levels as _state
from ..core import pytree as _pytree
from ..core import state
from ..scalar import Scalar
from ..tensor import Tensor
from ..transforms._common import register_lifted
from .api import hidden, shown
from .rules import at, broadcast_batch
from .value import Batched


def _tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    if not isinstance(tree, (tuple, list, dict)):
        return fn(tree)
    leaves, treedef = _pytree.flatten(tree)
    return _pytree.unflatten(treedef, [fn(x) for x in leaves])


def _full(x: Any, level: int, size: int) -> Any:
    if at(x, level):
        return x.value
    return broadcast_batch(x.data if isinstance(x, Scalar) else x, size)


def _level() -> tuple[int, int]:
    level = _state.levels()[-1]
    return level, _state.size(level)


def _finish(x: Any) -> Any:
    """A Batched result handed back to the caller: plain values unless an outer transform traces them."""
    outer_traced = state.transform_depth() > 0 and isinstance(x, Batched) and transforms._traced(x.value)
    if isinstance(x, Batched) and isinstance(x.value, Tensor) and not outer_traced:
        return Batched(x.value._data, x.level)
    return x


def _batched_fn(f: Callable[..., Any], args: Sequence[Any], nums: Sequence[int], level: int, size: int,
                kwargs: dict[str, Any] | None = None) -> Callable[..., Any]:
    """``f`` as a function of whole batches of the arguments ``nums`` (results: whole batches)."""

    def whole(*batches: Any) -> Any:
        new = list(args)
        for i, b in zip(nums, batches):
            new[i] = _tree_map(lambda v: Batched(v, level), b)
        with shown(level):
            out = f(*new, **(kwargs or {}))
            return _tree_map(lambda o: _full(o, level, size), out)

    return whole


def value_and_grad(f: Callable[..., Any], argnums: Any, has_aux: bool, args: tuple, kwargs: dict,
                   holomorphic: bool = False) -> Any:
    level, size = _level()
    nums = transforms._argnums(argnums, len(args), "grad")
    batches = [_tree_map(lambda x: _full(x, level, size), args[i]) for i in nums]

    def summed(*bs: Any) -> Any:
        new = list(args)
        for i, b in zip(nums, bs):
            new[i] = _tree_map(lambda v: Batched(v, level), b)
        with shown(level):
            result = f(*new, **kwargs)
            out, aux = result if has_aux else (result, None)
            if isinstance(out, (list, tuple, dict)):
                transforms._as_tensor(out, "grad")  # raises the usual error
            whole = _full(out, level, size)
            shape = _shape(whole)[1:]
            if int(np.prod(shape, dtype=int)) != 1:
                raise TypeError(
                    f"grad: the function must return a scalar, got an array of shape {shape} (per example, "
                    "inside vmap); use jacobian() for vector outputs"
                )
            return whole.sum(), (whole, aux)

    with hidden(level):
        # the per-example outputs are summed: each example's f'(z) is the sum's derivative at its own input
        summed_grad = transforms.value_and_grad(summed, argnums=tuple(range(len(nums))), has_aux=True,
                                                holomorphic=holomorphic)
        (_, (whole, aux)), grads = summed_grad(*batches)
    value = _finish(Batched(whole, level))
    grads = tuple(_tree_map(lambda g: _finish(Batched(g, level)), g) for g in grads)
    g = grads[0] if isinstance(argnums, int) else grads
    if has_aux:
        return (value, _tree_map(_finish, aux)), g
    return value, g


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    level, size = _level()
    ps = [_tree_map(lambda x: _full(x, level, size), p) for p in primals]
    ts = [_tree_map(lambda x: _full(x, level, size), t) for t in tangents]
    whole = _batched_fn(f, list(primals), range(len(primals)), level, size)
    with hidden(level):
        out, tan = transforms.jvp(whole, tuple(ps), tuple(ts))
    wrap = lambda v: _finish(Batched(v, level))  # noqa: E731
    return _tree_map(wrap, out), _tree_map(wrap, tan)


def vjp(f: Callable[..., Any], primals: Sequence[Any]) -> Any:
    level, size = _level()
    ps = [_tree_map(lambda x: _full(x, level, size), p) for p in primals]
    whole = _batched_fn(f, list(primals), range(len(primals)), level, size)
    with hidden(level):
        out, pullback = transforms.vjp(whole, *ps)

    def batched_pullback(cotangent: Any) -> tuple[Any, ...]:
        cts = _tree_map(lambda c: _full(c, level, size), cotangent)
        grads = pullback(cts)
        return tuple(_tree_map(lambda g: _finish(Batched(g, level)), g) for g in grads)

    return _tree_map(lambda v: _finish(Batched(v, level)), out), batched_pullback


def pullback_per_example(pullback: Callable[[Any], Any], cotangent: Any) -> Any:
    """A pullback taken outside vmap, called on batched cotangents: once per example, stacked."""
    level = max(c.level for c in _pytree.flatten(cotangent)[0] if isinstance(c, Batched))
    size = _state.size(level)
    rows = [pullback(_tree_map(lambda c: c.value[b] if at(c, level) else c, cotangent)) for b in range(size)]
    leaves = [_pytree.flatten(r)[0] for r in rows]
    treedef = _pytree.flatten(rows[0])[1]
    return _pytree.unflatten(treedef, [Batched(np.stack([lv[k] for lv in leaves]), level)
                                       for k in range(len(leaves[0]))])


def _regroup(jacs: list[Any], defs: list[Any], counts: list[int], argnums: Any) -> Any:
    grouped, k = [], 0
    for treedef, n in zip(defs, counts):
        grouped.append(_pytree.unflatten(treedef, jacs[k:k + n]))
        k += n
    return grouped[0] if isinstance(argnums, int) else tuple(grouped)


def _shape(v: Any) -> tuple[int, ...]:
    return tuple(v.shape) if isinstance(v, (Tensor, Batched)) else np.shape(v)


def _basis(shape: tuple[int, ...]) -> Any:
    n = int(np.prod(shape, dtype=int))
    eye = np.eye(n)
    return [eye[i].reshape(shape) for i in range(n)]


def jacrev(f: Callable[..., Any], argnums: Any, args: tuple) -> Any:
    level, size = _level()
    nums = transforms._argnums(argnums, len(args), "jacrev")
    batches = [_tree_map(lambda x: _full(x, level, size), args[i]) for i in nums]
    flat = [_pytree.flatten(b) for b in batches]
    in_shapes = [_shape(x)[1:] for leaves, _ in flat for x in leaves]
    whole = _batched_fn(f, list(args), nums, level, size)
    with hidden(level):
        out, pullback = transforms.vjp(whole, *batches)
    out_leaves, out_def = _pytree.flatten(out)
    out_shapes = [_shape(o)[1:] for o in out_leaves]
    per_output = []
    for k, oshape in enumerate(out_shapes):
        rows: list[list[Any]] = [[] for _ in in_shapes]
        for e in _basis(oshape):
            ct = [np.broadcast_to(e, (size,) + oshape) if j == k else np.zeros((size,) + s)
                  for j, s in enumerate(out_shapes)]
            grads = _pytree.flatten(pullback(_pytree.unflatten(out_def, ct)))[0]
            for r, g in zip(rows, grads):
                r.append(g)
        jacs = [
            _finish(Batched(np.stack(r, axis=1).reshape((size,) + oshape + s) if r else np.zeros((size,) + oshape + s),
                            level))
            for r, s in zip(rows, in_shapes)
        ]
        per_output.append(_regroup(jacs, [d for _, d in flat], [len(lv) for lv, _ in flat], argnums))
    return _pytree.unflatten(out_def, per_output)


def jacfwd(f: Callable[..., Any], argnums: Any, args: tuple) -> Any:
    level, size = _level()
    nums = transforms._argnums(argnums, len(args), "jacfwd")
    batches = [_tree_map(lambda x: _full(x, level, size), args[i]) for i in nums]
    flat = [_pytree.flatten(b) for b in batches]
    all_leaves = [x for leaves, _ in flat for x in leaves]
    whole = _batched_fn(f, list(args), nums, level, size)

    def tangents(j: int, e: Any) -> tuple[Any, ...]:
        leaves = [np.broadcast_to(e, _shape(x)) if i == j else np.zeros(_shape(x)) for i, x in enumerate(all_leaves)]
        out, k = [], 0
        for lv, treedef in flat:
            out.append(_pytree.unflatten(treedef, leaves[k:k + len(lv)]))
            k += len(lv)
        return tuple(out)

    out_def = None
    out_shapes: list[tuple[int, ...]] = []
    per_input = []
    for j, x in enumerate(all_leaves):
        in_shape = _shape(x)[1:]
        cols: list[list[Any]] | None = None
        for e in _basis(in_shape) or [None]:
            with hidden(level):
                out, tan = transforms.jvp(whole, tuple(batches), tangents(j, 0.0 if e is None else e))
            out_leaves, out_def = _pytree.flatten(out)
            out_shapes = [_shape(o)[1:] for o in out_leaves]
            if e is None:
                break
            tan_leaves = _pytree.flatten(tan)[0]
            cols = cols or [[] for _ in tan_leaves]
            for c, t in zip(cols, tan_leaves):
                c.append(t)
        per_input.append([
            np.stack(c, axis=-1).reshape((size,) + s + in_shape) if cols else np.zeros((size,) + s + in_shape)
            for c, s in zip(cols or [[] for _ in out_shapes], out_shapes)
        ])
    if out_def is None:  # no differentiated inputs at all
        with hidden(level):
            out_def = _pytree.flatten(transforms.jvp(whole, tuple(batches), tuple(batches))[0])[1]
    n_out = len(out_shapes)
    per_output = [
        _regroup([_finish(Batched(per_input[j][k], level)) for j in range(len(all_leaves))],
                 [d for _, d in flat], [len(lv) for lv, _ in flat], argnums)
        for k in range(n_out)
    ]
    return _pytree.unflatten(out_def, per_output)


def elementwise_grad(f: Callable[..., Any], argnums: int, args: tuple, kwargs: dict) -> Any:
    level, size = _level()
    out, pullback = vjp(lambda *a: f(*a, **kwargs), args)
    ones = _tree_map(lambda o: Batched(np.ones(_shape(_full(o, level, size))), level), out)
    return pullback(ones)[argnums]


register_lifted(sys.modules[__name__])  # the transforms call these inside vmap (they cannot import this module)
