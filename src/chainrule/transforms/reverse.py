"""Reverse-mode transforms: ``value_and_grad``, ``grad``, ``deriv``, ``elementwise_grad``, ``vjp``,
``holomorphic_grad``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..autodiff import batch_levels as _batching
from ..core import pytree as _pytree
from ..ops.pytorch.dim_args import numpy_methods_for
from ..scalar import Scalar
from ..tensor import Tensor
from ._common import (
    FLOAT0,
    _argnums,
    _as_array,
    _as_tensor,
    _callers_arrays,
    _check_inputs,
    _check_leaves,
    _check_output,
    _float,
    _grads,
    _is_float0,
    _lifted,
    _name,
    _named,
    _output,
    _prepare,
    _traced,
    _transform,
    hips_argnum,
)

_MISSING = object()  # no argument given


def value_and_grad(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False,
    allow_int: bool = False, *, argnum: int | None = None,
) -> Callable[..., Any]:
    """A function returning ``(f(*args), grad of f)``; ``f`` must return a scalar.

    With ``has_aux=True``, ``f`` returns ``(value, aux)`` and the result is ``((value, aux), grad)``.
    Complex inputs follow JAX: for real ``f`` the gradient is ``df/dx - 1j * df/dy``; with
    ``holomorphic=True`` (complex inputs and output) it is the complex derivative ``f'(z)``.
    Integer inputs are differentiated as real numbers (as HIPS autograd); with ``allow_int=True``
    (JAX's spelling and meaning) they are not: they stay integers and their gradient is zeros of
    NumPy's structured dtype ``float0`` (equal to ``jax.dtypes.float0``). ``argnum`` is HIPS autograd's name for
    ``argnums``.
    """
    argnums = hips_argnum(argnums, argnum, "value_and_grad")
    if allow_int:
        return _ints_held_out(lambda g, nums: value_and_grad(g, nums, has_aux, holomorphic), f, argnums)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _batching.levels():  # inside vmap: every example's gradient at once
            return _lifted().value_and_grad(f, argnums, has_aux, args, kwargs, holomorphic)
        nums = _argnums(argnums, len(args), "grad")
        with _transform(), numpy_methods_for(args):
            new_args, parts = _prepare(args, nums, "grad")
            result = f(*new_args, **kwargs)
            if has_aux and not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise TypeError(
                    f"grad: with has_aux=True the function must return a pair (value, aux), but it returned "
                    f"{'None' if result is None else f'a {type(result).__name__}'}"
                )
            out, aux = result if has_aux else (result, None)
            t = _as_tensor(out, "grad")
            if t is not None and t._data.size != 1:
                raise TypeError(
                    f"grad: the function must return a scalar, got an array of shape {t.shape}; "
                    "use jacobian() for vector outputs, or elementwise_grad() for elementwise ones"
                )
            fresh = [x for _, _, xs in parts for x in xs]
            _check_inputs("grad", holomorphic, fresh)
            _check_output("grad", holomorphic, out if t is None else t)
            seed = np.ones_like(t._data) if holomorphic and t is not None else None
            flat = _grads([t], [seed], fresh)
            grads, k = [], 0
            given = _callers_arrays(args)
            for treedef, leaves, xs in parts:
                gs = [_output(g, like, given) for g, like in zip(flat[k:k + len(xs)], leaves)]
                grads.append(_pytree.unflatten(treedef, gs))
                k += len(xs)
            value = _output(out if t is None else t, 0.0)
            if has_aux:  # Tensors in aux come back as arrays (still traced inside an outer transform)
                aux_leaves, aux_def = _pytree.flatten(aux)
                aux = _pytree.unflatten(
                    aux_def, [_output(a, a) if isinstance(a, (Tensor, Scalar)) else a for a in aux_leaves]
                )
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        return ((value, aux) if has_aux else value), g

    return wrapper


def grad(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False,
    allow_int: bool = False, *, argnum: int | None = None,
) -> Callable[..., Any]:
    """The gradient of a scalar function with respect to argument(s) ``argnums`` (or HIPS autograd's ``argnum``).

    For a real ``f`` of complex ``z = x + iy`` it is ``df/dx - 1j * df/dy`` (JAX's and HIPS
    autograd's convention: a gradient-descent step is ``z - lr * np.conj(g)``). With
    ``holomorphic=True`` (complex in, complex out) it is the complex derivative ``f'(z)``.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
        array([2., 4.])
        >>> cr.grad(lambda z: np.abs(z) ** 2)(1.0 + 2.0j)  # 2x - 2iy
        (2-4j)
        >>> cr.grad(lambda z: z ** 2, holomorphic=True)(1.0 + 2.0j)  # 2z
        (2+4j)
        >>> cr.grad(lambda x, i: x[i], argnums=(0, 1), allow_int=True)(np.ones(2), 1)  # i is an index
        (array([0., 1.]), array((b'',), dtype=[('float0', 'V')]))
    """
    argnums = hips_argnum(argnums, argnum, "grad")
    vg = value_and_grad(f, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        (value, aux), g = vg(*args, **kwargs) if has_aux else ((None, None), vg(*args, **kwargs)[1])
        return (g, aux) if has_aux else g

    return wrapper


def _is_integer(x: Any) -> bool:
    """An integer or boolean number or array (a Tensor, or a batched value under vmap, too)."""
    if isinstance(x, (bool, int, np.integer, np.bool_)):
        return True
    dtype = getattr(x, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype.kind in "biu"


def _ints_held_out(value_and_grad_of: Callable[[Callable[..., Any], tuple[int, ...]], Callable[..., Any]],
                   f: Callable[..., Any], argnums: int | Sequence[int]) -> Callable[..., Any]:
    """``allow_int=True``: value_and_grad (``value_and_grad_of(f, argnums)``) run with the integer leaves of the
    differentiated arguments taken out (``f`` gets them back as they were), their gradients float0 zeros. An
    argument that is all integers is not differentiated at all (under vmap too)."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), "grad")
        split = {i: _pytree.flatten(args[i]) for i in nums}
        held = {i: [_is_integer(leaf) for leaf in leaves] for i, (leaves, _) in split.items()}
        mixed = [i for i in nums if not (held[i] and all(held[i]))]  # the arguments with something to differentiate
        floats = list(args)
        for i in mixed:  # an integer leaf becomes None: an empty subtree
            leaves, treedef = split[i]
            floats[i] = _pytree.unflatten(treedef, [None if h else x for x, h in zip(leaves, held[i])])

        def rejoin(i: int, tree: Any, ints: Callable[[Any], Any]) -> Any:
            leaves, treedef = split[i]
            rest = iter(_pytree.flatten(tree)[0])
            return _pytree.unflatten(treedef, [ints(x) if h else next(rest) for x, h in zip(leaves, held[i])])

        def with_ints(*a: Any, **kw: Any) -> Any:
            return f(*[rejoin(i, x, lambda leaf: leaf) if i in mixed else x for i, x in enumerate(a)], **kw)

        if mixed:
            value, g = value_and_grad_of(with_ints, tuple(mixed))(*floats, **kwargs)
        else:  # nothing to differentiate: the value (and aux) from a plain call
            (value, _), g = value_and_grad_of(lambda *a, **kw: f(*args, **kwargs), ())(0.0), ()
        found = dict(zip(mixed, g))
        gs = tuple(rejoin(i, found.get(i), lambda leaf: np.zeros(getattr(leaf, "shape", ()), FLOAT0)) for i in nums)
        return value, (gs[0] if isinstance(argnums, int) else gs)

    return wrapper


def deriv(f: Callable[[Any], Any], order: int = 1) -> Callable[[Any], Any]:
    """d^order f / dx^order for a scalar function of one scalar variable.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.deriv(np.sin, order=2)(0.5) == -float(np.sin(0.5))
        True
    """
    if order < 0:
        raise ValueError(f"deriv: order must be >= 0, got {order}")
    for _ in range(order):
        f = grad(f)
    return f


def elementwise_grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0, *,
                     argnum: int | None = None) -> Callable[..., Any]:
    """The derivative of each output entry with respect to its matching input entry.

    For elementwise ``f`` this is the diagonal of the Jacobian (the gradient of ``sum(f(x))``).
    With a tuple ``argnums``, a tuple of them, one per argument (as ``grad``).

    Example:
        >>> import numpy as np
        >>> from chainrule import elementwise_grad
        >>> elementwise_grad(lambda x, y: x * y ** 2, argnums=(0, 1))(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
        (array([ 9., 16.]), array([ 6., 16.]))
    """
    argnums = hips_argnum(argnums, argnum, "elementwise_grad")

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), "elementwise_grad")
        if _batching.levels():
            grads = tuple(_lifted().elementwise_grad(f, k, args, kwargs) for k in nums)
            return grads[0] if isinstance(argnums, int) else grads
        with _named("elementwise_grad"):
            out, pullback = vjp(lambda *a: f(*a, **kwargs), *args)
        if isinstance(out, (tuple, list, dict)):
            raise TypeError(f"elementwise_grad: the function must return one array, got a {type(out).__name__}")
        shape_out = np.shape(_as_array(out, "elementwise_grad"))
        for k in nums:
            shape_in = np.shape(_as_array(args[k], "elementwise_grad"))
            if shape_in != shape_out:
                scalar = " (for the gradient of a function with one output, use grad())" if shape_out == () else ""
                raise ValueError(
                    f"elementwise_grad: the output has shape {shape_out} but argument {k} has shape {shape_in}; "
                    f"an elementwise function maps each entry to one entry: use jacobian() or vjp() instead{scalar}"
                )
        diags = pullback(np.ones(shape_out))
        # J^T u equals diag * u for every u only if the Jacobian is diagonal: check one random u
        u = np.random.default_rng(0).uniform(0.5, 1.5, size=shape_out)
        probes = pullback(u)
        for k in nums:
            d = np.asarray(_as_array(diags[k], "elementwise_grad"))
            p = np.asarray(_as_array(probes[k], "elementwise_grad"))
            if not np.allclose(p, d * u, rtol=1e-6, atol=1e-9 * (1.0 + float(np.max(np.abs(d), initial=0.0))),
                               equal_nan=True):
                raise ValueError(
                    f"elementwise_grad: the function is not elementwise in argument {k} (its Jacobian is not "
                    "diagonal: an output entry depends on other input entries); use jacobian() for the full "
                    "Jacobian or vjp() for J^T v products"
                )
        return diags[nums[0]] if isinstance(argnums, int) else tuple(diags[k] for k in nums)

    return wrapper


def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(f(*primals), vjp_fn)`` where ``vjp_fn(cotangent)`` returns one gradient per primal.

    With ``has_aux=True`` (as JAX), ``f`` returns ``(value, aux)`` and the result is ``(value, vjp_fn, aux)``.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> out, pullback = cr.vjp(lambda x: x * 3.0, np.array([1.0, 2.0]))
        >>> pullback(np.array([1.0, 10.0]))
        (array([ 3., 30.]),)
        >>> out, pullback, aux = cr.vjp(lambda x: (x * 3.0, x.sum()), np.array([1.0, 2.0]), has_aux=True)
        >>> float(aux)
        3.0
    """
    if has_aux:
        return _vjp_with_aux(f, primals)
    if _batching.levels():
        return _lifted().vjp(f, primals)
    nums = tuple(range(len(primals)))
    with _transform(), numpy_methods_for(primals):
        new_args, parts = _prepare(primals, nums, _name.get("vjp"))
        out = f(*new_args)
    out_leaves, out_def = _pytree.flatten(out)
    _check_leaves(out_leaves, out, _name.get("vjp"))
    out_tensors = [_as_tensor(o, "vjp") for o in out_leaves]
    fresh = [x for _, _, xs in parts for x in xs]

    def pullback(cotangent: Any = _MISSING, *more: Any) -> tuple[Any, ...]:
        if cotangent is _MISSING or more:
            n = 0 if cotangent is _MISSING else 1 + len(more)
            raise TypeError(f"vjp: the pullback takes one cotangent with the output's structure "
                            f"({_pytree.describe(out_def)}), got {n} arguments; pass several outputs' cotangents "
                            "as one tuple")
        if _batching.open and _batching.batched_tree(cotangent):  # vmap of a pullback: once per example
            return _lifted().pullback_per_example(pullback, cotangent)
        cts, ct_def = _pytree.flatten(cotangent)
        if len(cts) != len(out_leaves) or not _pytree.same_structure(ct_def, out_def):
            raise ValueError(f"vjp: the cotangent must have the output's structure, got {_pytree.describe(ct_def)} "
                             f"for an output {_pytree.describe(out_def)}")
        seeds = []
        for ct, o in zip(cts, out_leaves):
            shape = np.shape(o._data if isinstance(o, Tensor) else o)
            if np.shape(ct._data if isinstance(ct, Tensor) else ct) != shape:
                raise ValueError(f"vjp: cotangent of shape {np.shape(ct)} for an output of shape {shape}")
            if _is_float0(ct):  # JAX's cotangent for an integer output: zeros
                seeds.append(np.zeros(shape))
            else:
                seeds.append(ct if _traced(ct) else _float(_as_array(ct, "vjp")))
        with _transform():
            flat = _grads(out_tensors, seeds, fresh)
            results, k = [], 0
            given = _callers_arrays(primals, cotangent)
            for treedef, leaves, xs in parts:
                gs = [_output(g, like, given) for g, like in zip(flat[k:k + len(xs)], leaves)]
                results.append(_pytree.unflatten(treedef, gs))
                k += len(xs)
        return tuple(results)

    with _transform():
        given = _callers_arrays(primals)
        value = _pytree.unflatten(out_def, [_output(o, None, given) for o in out_leaves])
    return value, pullback


def _vjp_with_aux(f: Callable[..., Any], primals: tuple[Any, ...]) -> Any:
    """``vjp(..., has_aux=True)``: aux goes out as a second output (so it is returned as the value is, inside
    vmap too), and the pullback seeds it with zeros."""

    def both(*args: Any) -> Any:
        result = f(*args)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(
                f"vjp: with has_aux=True the function must return a pair (value, aux), but it returned "
                f"{type(result).__name__} {result!r:.60}"
            )
        return tuple(result)

    (value, aux), pull = vjp(both, *primals)
    aux_leaves, aux_def = _pytree.flatten(aux)
    zeros = _pytree.unflatten(aux_def, [np.zeros(np.shape(a)) for a in aux_leaves])

    def pullback(cotangent: Any) -> tuple[Any, ...]:
        return pull((cotangent, zeros))

    return value, pullback, aux


def holomorphic_grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0, *,
                     argnum: int | None = None) -> Callable[..., Any]:
    """The complex derivative ``f'(z)`` of a holomorphic scalar function: ``grad(f, holomorphic=True)``.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> bool(cr.holomorphic_grad(np.exp)(1j) == np.exp(1j))
        True
    """
    return grad(f, hips_argnum(argnums, argnum, "holomorphic_grad"), holomorphic=True)
