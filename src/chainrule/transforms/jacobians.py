"""Whole derivatives: ``jacrev``, ``jacfwd``, ``jacobian``, ``hessian`` and ``hvp``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..autodiff import batch_levels as _batching
from ..core import pytree as _pytree
from ..core import state
from ..core.device import xp_of
from ..core.memory import check_fits
from ..ops.pytorch.dim_args import numpy_methods_for
from ..tensor import Tensor
from ._common import (
    _argnums,
    _as_array,
    _as_tensor,
    _check_inputs,
    _check_leaves,
    _check_output,
    _float,
    _grads,
    _input,
    _lifted,
    _named,
    _output,
    _prepare,
    _transform,
    hips_argnum,
    with_aux,
)
from .forward import jvp
from .reverse import grad


def _basis(shape: tuple[int, ...], dtype: Any, like: Any = None) -> Any:
    """The one-hot arrays of ``shape``, one at a time (an identity matrix of them all could not fit), where
    ``like`` is: the host or a device."""
    n = int(np.prod(shape))
    xp = xp_of(like)
    for i in range(n):
        e = xp.zeros(n, dtype=dtype)
        e[i] = 1
        yield e.reshape(shape)


def _check_result_fits(name: str, out_shapes: Sequence[tuple[int, ...]], in_arrays: Sequence[Any]) -> None:
    """Refuse, before computing it, a Jacobian (out entries x in entries) that cannot fit in memory: its rows and
    their stacked copy are held at once. hessian is jacrev of a gradient, so this catches a big Hessian too."""
    n_out = sum(int(np.prod(s)) for s in out_shapes)
    n_in = sum(int(np.size(_as_array(x, name))) for x in in_arrays)
    itemsize = max([np.result_type(_as_array(x, name)).itemsize for x in in_arrays] + [8])
    check_fits(
        2.0 * n_out * n_in * itemsize,
        f"{name}: the Jacobian of {n_out:,} output entries by {n_in:,} input entries",
        "products with it never build the matrix: use jvp (J v) or vjp (v^T J), hvp for Hessian-vector products, "
        "or differentiate a part of the inputs at a time (argnums, or a function of a slice)",
    )


def jacrev(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """The Jacobian by reverse mode: one backward sweep per output entry.

    ``f`` may return a tuple, list or dict of arrays: the result has that structure, each
    entry holding the Jacobians for ``argnums`` (so ``hessian(f, argnums=(0, 1))[i][j]`` is
    d2f / d arg_i d arg_j, as in JAX). Complex inputs need real outputs (each row is a
    gradient in ``grad``'s convention) unless ``holomorphic=True``. ``has_aux=True``: ``f`` returns
    ``(output, aux)`` and the result is ``(jacobian, aux)``, as JAX's.
    """
    if has_aux:
        return with_aux("jacrev", lambda g: jacrev(g, argnums, holomorphic=holomorphic), f)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs:  # as JAX: keyword arguments are passed through, not differentiated
            return jacrev(functools.partial(f, **kwargs), argnums, holomorphic=holomorphic)(*args)
        if _batching.levels():
            return _lifted().jacrev(f, argnums, args)
        nums = _argnums(argnums, len(args), "jacrev")
        with _transform(), numpy_methods_for(args):
            new_args, parts = _prepare(args, nums, "jacrev")
            out = f(*new_args)
            out_leaves, out_def = _pytree.flatten(out)
            _check_leaves(out_leaves, out, "jacrev")
            fresh = [x for _, _, xs in parts for x in xs]
            _check_inputs("jacrev", holomorphic, fresh)
            likes = [leaf for _, leaves, _ in parts for leaf in leaves]
            _check_result_fits("jacrev", [np.shape(_as_array(o, "jacrev")) for o in out_leaves], likes)
            stacker = _stack_traced if state.transform_depth() > 1 else np.stack
            per_output = []
            for out in out_leaves:
                t = _as_tensor(out, "jacrev")
                _check_output("jacrev", holomorphic, out)
                out_shape = np.shape(_as_array(out, "jacrev")) if t is None else t.shape
                rows: list[list[Any]] = [[] for _ in fresh]
                dtype, like = (t._data.dtype, t._data) if t is not None else (float, None)
                for seed in _basis(out_shape, dtype, like):
                    gs = _grads([t], [seed], fresh)
                    for r, g in zip(rows, gs):
                        r.append(g)
                jacs = []
                for x, r, like in zip(fresh, rows, likes):
                    if not r:
                        jac = np.zeros(out_shape + x.shape)
                    else:
                        jac = stacker(r).reshape(out_shape + x.shape)
                    jacs.append(_output(jac, like))  # a number for a number in and a scalar out, as grad
                per_output.append(_regroup(jacs, parts, argnums))
        return _pytree.unflatten(out_def, per_output)

    return wrapper


def jacfwd(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """The Jacobian by forward mode: one JVP per input entry (outputs may be tuples, lists, dicts).

    Complex inputs need ``holomorphic=True`` (as in JAX): the Jacobian of a holomorphic function
    is its complex derivative; for other functions of complex inputs use ``jvp`` directly.
    ``has_aux=True``: ``f`` returns ``(output, aux)`` and the result is ``(jacobian, aux)``, as JAX's.
    """
    if has_aux:
        return with_aux("jacfwd", lambda g: jacfwd(g, argnums, holomorphic=holomorphic), f)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs:  # as JAX: keyword arguments are passed through, not differentiated
            return jacfwd(functools.partial(f, **kwargs), argnums, holomorphic=holomorphic)(*args)
        if _batching.levels():
            return _lifted().jacfwd(f, argnums, args)
        nums = _argnums(argnums, len(args), "jacfwd")
        leaves_per_arg = [_pytree.flatten(args[i]) for i in nums]
        _check_inputs("jacfwd", holomorphic, [_input(lf, "jacfwd", reverse=False)
                                              for leaves, _ in leaves_per_arg for lf in leaves])
        out_def: Any = None
        out_shapes: list[tuple[int, ...]] = []
        per_output: list[list[Any]] | None = None  # for each output leaf, its Jacobian per input leaf

        def learn_outputs(out: Any) -> None:
            nonlocal out_def, out_shapes
            leaves, out_def = _pytree.flatten(out)
            out_shapes = [np.shape(o._data if isinstance(o, Tensor) else o) for o in leaves]
            _check_result_fits("jacfwd", out_shapes, [lf for ls, _ in leaves_per_arg for lf in ls])
            if holomorphic:  # as jacrev and JAX: a real output of complex inputs is not holomorphic
                for o in leaves:
                    _check_output("jacfwd", holomorphic, o)

        with _transform(), _named("jacfwd"), numpy_methods_for(args):
            stacker = _stack_traced if state.transform_depth() > 1 else np.stack
            for k, (leaves, treedef) in enumerate(leaves_per_arg):
                for j, leaf in enumerate(leaves):
                    arr = _float(_as_array(leaf, "jacfwd"))
                    cols: list[list[Any]] | None = None
                    for e in _basis(arr.shape, arr.dtype, arr):
                        tangent_leaves = [
                            e if jj == j else np.zeros_like(_float(_as_array(lf, "jacfwd")))
                            for jj, lf in enumerate(leaves)
                        ]
                        tangents = [
                            _pytree.unflatten(treedef, tangent_leaves) if i == nums[k] else _zeros_like_tree(a)
                            for i, a in enumerate(args)
                        ]
                        out, col = jvp(f, tuple(args), tuple(tangents))
                        if out_def is None:
                            learn_outputs(out)
                        col_leaves = _pytree.flatten(col)[0]
                        if cols is None:
                            cols = [[] for _ in col_leaves]
                        for c, t in zip(cols, col_leaves):
                            c.append(t)
                    if cols is None:  # an input with no entries
                        if out_def is None:
                            learn_outputs(jvp(f, tuple(args), tuple(_zeros_like_tree(a) for a in args))[0])
                        jacs = [np.zeros(s + arr.shape) for s in out_shapes]
                    else:
                        jacs = []
                        for c, s in zip(cols, out_shapes):
                            jac = stacker(c).reshape(arr.shape + s)  # (in..., out...) -> (out..., in...)
                            n_in, n_out = arr.ndim, len(s)
                            jacs.append(_output(jac.transpose(tuple(range(n_in, n_in + n_out)) + tuple(range(n_in))),
                                                leaf))
                    if per_output is None:
                        per_output = [[] for _ in jacs]
                    for p, jac in zip(per_output, jacs):
                        p.append(jac)
            if per_output is None:  # no input entries at all
                learn_outputs(jvp(f, tuple(args), tuple(_zeros_like_tree(a) for a in args))[0])
                per_output = [[] for _ in out_shapes]
        parts = [(treedef, leaves, leaves) for leaves, treedef in leaves_per_arg]
        return _pytree.unflatten(out_def, [_regroup(jacs, parts, argnums) for jacs in per_output])

    return wrapper


def _zeros_like_tree(tree: Any) -> Any:
    leaves, treedef = _pytree.flatten(tree)
    return _pytree.unflatten(treedef, [np.zeros_like(_float(_as_array(x, "jacfwd"))) for x in leaves])


def _stack_traced(items: list[Any]) -> Any:
    from ..ops.shape import stack

    return stack([i if isinstance(i, Tensor) else Tensor._wrap(np.asarray(i)) for i in items])


def _regroup(jacs: list[Any], parts: list[Any], argnums: Any) -> Any:
    grouped, k = [], 0
    for treedef, leaves, _ in parts:
        grouped.append(_pytree.unflatten(treedef, jacs[k:k + len(leaves)]))
        k += len(leaves)
    return grouped[0] if isinstance(argnums, int) else tuple(grouped)


def jacobian(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, mode: str = "rev", holomorphic: bool = False,
    has_aux: bool = False, *, argnum: int | None = None,
) -> Callable[..., Any]:
    """The Jacobian of ``f``, shape ``out.shape + in.shape``; ``mode`` is "rev" or "fwd" (``holomorphic`` and
    ``has_aux`` as there; ``argnum`` is HIPS autograd's name for ``argnums``).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.jacobian(lambda x: x ** 2)(np.array([1.0, 3.0]))
        array([[2., 0.],
               [0., 6.]])
    """
    argnums = hips_argnum(argnums, argnum, "jacobian")
    if mode == "rev":
        return jacrev(f, argnums, has_aux=has_aux, holomorphic=holomorphic)
    if mode == "fwd":
        return jacfwd(f, argnums, has_aux=has_aux, holomorphic=holomorphic)
    raise ValueError(f"jacobian: mode must be 'rev' or 'fwd', got {mode!r}")


def hessian(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False, *,
    argnum: int | None = None,
) -> Callable[..., Any]:
    """The matrix of second derivatives of a scalar function (reverse over reverse); for an array or pytree
    output, each entry's, with shape ``out.shape + in.shape + in.shape`` (as JAX's). ``argnum`` is HIPS autograd's
    name for ``argnums``.

    Example:
        >>> import chainrule as cr
        >>> cr.hessian(lambda a, b: b * ((a + b) * (a - b)), argnums=1)(1.0, 2.0)
        -12.0
    """
    argnums = hips_argnum(argnums, argnum, "hessian")
    if has_aux:  # f returns (value, aux): the result is (hessian, aux), as JAX's
        return with_aux("hessian", lambda g: hessian(g, argnums, holomorphic=holomorphic), f)
    # jacrev twice, as JAX's jacfwd(jacrev): f may return an array or a pytree (each entry gets its Hessian)
    inner = jacrev(jacrev(f, argnums, holomorphic=holomorphic), argnums, holomorphic=holomorphic)
    if holomorphic:
        return inner

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for i in _argnums(argnums, len(args), "hessian"):
            if any(_is_complex(leaf) for leaf in _pytree.flatten(args[i])[0]):
                # without this, the error would name the jacrev inside (the gradient it differentiates is complex)
                raise TypeError(
                    f"hessian: argument {i} is complex; the Hessian of a real function of complex inputs is "
                    "not a complex matrix (JAX refuses it too). For a holomorphic f pass holomorphic=True; "
                    "otherwise split the input: "
                    "hessian(lambda re, im: f(re + 1j * im), argnums=(0, 1))(z.real, z.imag)")
        return inner(*args, **kwargs)

    return wrapper


def _is_complex(x: Any) -> bool:
    dtype = getattr(x, "dtype", None)
    return isinstance(x, complex) if dtype is None else np.dtype(dtype).kind == "c"


def hvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """Hessian-vector product of a scalar function, forward over reverse (no Hessian built)."""
    nums: int | tuple[int, ...] = 0 if len(primals) == 1 else tuple(range(len(primals)))
    return jvp(grad(f, argnums=nums), tuple(primals), tuple(tangents))[1]
