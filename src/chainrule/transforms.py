"""Function transforms: ``grad``, ``value_and_grad``, ``jacobian``, ``hessian``, ``jvp``, ``vjp``...

JAX's names and semantics. Inputs may be floats, ints, NumPy arrays, ``Scalar``,
``Tensor``, or tuples, lists and dicts of them; results come back with the same
structure, as floats (for number inputs) or ndarrays. Transforms nest to any order and
in any mix (``grad(grad(f))``, ``jacfwd(jacrev(f))``): inside another transform they
return traced Tensors, so the outer one can differentiate them again.

Example:
    >>> import chainrule as cr
    >>> f = lambda a, b: b * ((a + b) * (a - b))
    >>> cr.grad(f, argnums=(0, 1))(1.0, 2.0)
    (4.0, -11.0)
    >>> cr.grad(cr.grad(f, argnums=1), argnums=1)(1.0, 2.0)
    -12.0
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from . import _pytree
from .autodiff import backprop
from .autodiff import batching as _batching
from .core import state
from .scalar import Scalar
from .tensor import Tensor

_transform = state.transform  # record the graph, and count the transform (inside one, results stay traced)


# The public transform being run (per thread and task), for error messages of the inner ones it is built on.
_NAME: ContextVar[str | None] = ContextVar("chainrule_transform_name", default=None)


class _TransformName:
    def get(self, default: str) -> str:
        return _NAME.get() or default


_name = _TransformName()


@contextmanager
def _named(name: str) -> Any:
    token = _NAME.set(_NAME.get() or name)
    try:
        yield
    finally:
        _NAME.reset(token)


def _lifted() -> Any:
    from .batching import lifted  # only inside vmap (the batching package imports this module)

    return lifted


def _traced(t: Any) -> bool:
    return isinstance(t, Tensor) and (
        t._requires_grad or bool(t._tangents and state.any_visible(t._tangents))
    )


def _as_array(x: Any, what: str) -> np.ndarray:
    if isinstance(x, Scalar):
        return np.asarray(x.data)
    if isinstance(x, Tensor):
        return x.data
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{what}: inputs must be numbers or arrays, got {type(x).__name__}")
    arr = np.asarray(x)
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"{what}: inputs must be numbers or arrays of numbers, got dtype {arr.dtype}")
    return arr


def _float(arr: np.ndarray) -> np.ndarray:
    return arr if arr.dtype.kind in "fc" else arr.astype(np.float64)


def _input(x: Any, what: str, reverse: bool = True) -> Tensor:
    """A fresh Tensor standing for ``x``, still linked to outer transforms.

    ``reverse``: the new tensor requires grad (it is what a reverse transform differentiates by).
    """
    if _traced(x):
        from .ops.shape import _identity

        t = _identity(x) if x.data.dtype.kind in "fc" else _identity(x.astype(np.float64))
    else:
        t = Tensor._wrap(_float(_as_array(x, what)))  # no copy: nothing writes to it
    if reverse:
        t._requires_grad = True
    return t


def _output(value: Any, like: Any = None) -> Any:
    """A result for the caller: traced Tensor inside an outer transform, else float or ndarray.

    Called from inside the transform's own context, so an outer transform means depth > 1.
    """
    if isinstance(value, Tensor):
        if state.transform_depth() > 1 and _traced(value):
            return value
        value = value.data
    if isinstance(value, Scalar):
        value = value.data
    arr = np.asarray(value)
    if arr.ndim == 0 and isinstance(like, (int, float, complex, Scalar, np.generic)):
        return arr.item() if arr.dtype.kind in "fiubc" else arr
    return arr


def _argnums(argnums: int | Sequence[int], n: int, name: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not isinstance(i, int) or not -n <= i < n:
            raise ValueError(f"{name}: argnums {argnums!r} out of range for a function called with {n} arguments")
    return tuple(i % n for i in nums)


def _prepare(args: tuple[Any, ...], nums: tuple[int, ...], name: str) -> tuple[list[Any], list[Any]]:
    """Replace the differentiated arguments by fresh Tensors; return (new args, per-arg (defs, leaves))."""
    new_args = list(args)
    parts = []
    for i in nums:
        leaves, treedef = _pytree.flatten(args[i])
        try:
            fresh = [_input(leaf, name) for leaf in leaves]
        except TypeError:
            raise _bad_input(args[i], i, leaves, name) from None
        new_args[i] = _pytree.unflatten(treedef, fresh)
        parts.append((treedef, leaves, fresh))
    return new_args, parts


def _bad_input(tree: Any, i: int, leaves: list[Any], name: str) -> TypeError:
    """The error for an argument with a leaf that is not a number or an array, naming where it sits."""
    for leaf, path in zip(leaves, _pytree.leaf_paths(tree)):
        try:
            _as_array(leaf, name)
        except TypeError:
            return TypeError(
                f"{name}: argument {i}{path} is a {type(leaf).__name__} ({leaf!r:.40}); the arguments that are "
                "differentiated must hold numbers or arrays of numbers only (None is an empty subtree): pass "
                "other values as arguments outside argnums, or close over them"
            )
    return TypeError(f"{name}: argument {i} must hold numbers or arrays of numbers")


def _returned(out: Any, name: str) -> TypeError:
    what = "None (did the function forget to `return`?)" if out is None else f"a {type(out).__name__} ({out!r:.40})"
    return TypeError(f"{name}: the function must return a number or an array, but it returned {what}")


def _check_leaves(leaves: list[Any], out: Any, name: str) -> None:
    """Every output leaf must be a number or an array of numbers (a None result is refused, not read as NaN)."""
    if out is None:
        raise _returned(None, name)
    for leaf in leaves:
        if isinstance(leaf, (Tensor, Scalar)):
            continue
        try:
            ok = np.asarray(leaf).dtype.kind in "biufc"
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise _returned(out if leaf is out else leaf, name)


def _as_tensor(out: Any, name: str) -> Tensor | None:
    if isinstance(out, Tensor):
        return out
    if out is None or isinstance(out, (str, bytes)):
        raise _returned(out, name)
    if isinstance(out, (list, tuple, dict)):  # NumPy would read a list of Tensors as constant numbers
        raise TypeError(
            f"{name}: the function must return a number or an array, got a {type(out).__name__}; "
            "use jacrev/jacfwd/vjp for several outputs, or has_aux=True to return extra values"
        )
    if isinstance(out, Scalar):
        out = out.data
    try:
        ok = np.asarray(out).dtype.kind in "biufc"
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise _returned(out, name)
    return None  # a constant: it does not depend on the inputs


def _kind(x: Any) -> str:
    return np.asarray(x.data if isinstance(x, (Tensor, Scalar)) else x).dtype.kind


def _check_inputs(name: str, holomorphic: bool, fresh: list[Tensor]) -> None:
    """JAX's rule: holomorphic=True needs complex inputs (jacfwd without it needs real ones)."""
    for x in fresh:
        complex_in = x.data.dtype.kind == "c"
        if holomorphic and not complex_in:
            raise TypeError(
                f"{name} with holomorphic=True requires inputs with a complex dtype, got {x.data.dtype}; "
                "pass complex inputs (e.g. x.astype(complex)), or drop holomorphic=True"
            )
        if name == "jacfwd" and complex_in and not holomorphic:
            raise TypeError(
                f"jacfwd requires real-valued inputs, got {x.data.dtype}. For holomorphic functions pass "
                "holomorphic=True; for other functions of complex inputs use jacrev (real outputs) or jvp directly"
            )


def _check_output(name: str, holomorphic: bool, out: Any) -> None:
    """JAX's rule: without holomorphic=True, reverse transforms need real outputs; with it, complex ones."""
    kind = _kind(out)
    if holomorphic and kind != "c":
        raise TypeError(
            f"{name} with holomorphic=True requires a complex output, got dtype {_as_array(out, name).dtype}"
        )
    if not holomorphic and kind == "c" and name != "jacfwd":
        raise TypeError(
            f"{name} requires a real-valued output, got a complex one. For a holomorphic function pass "
            f"holomorphic=True; for the gradient of a real function take np.real, np.imag or np.abs of it; "
            "or use vjp directly"
        )


def _grads(outs: list[Tensor | None], seeds: list[Any], fresh: list[Tensor]) -> list[Any]:
    live = [(o, s) for o, s in zip(outs, seeds) if o is not None and o._requires_grad]
    if not live:
        return [np.zeros_like(t.data) for t in fresh]
    create = state.transform_depth() > 1 or any(_traced(t) and t._node is not None for t in fresh)
    # retain: a pullback may be called again, and jacrev sweeps the same graph once per output entry
    return list(backprop.grad([o for o, _ in live], fresh, [s for _, s in live], create_graph=create,
                              retain_graph=True))


def value_and_grad(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """A function returning ``(f(*args), grad of f)``; ``f`` must return a scalar.

    With ``has_aux=True``, ``f`` returns ``(value, aux)`` and the result is ``((value, aux), grad)``.
    Complex inputs follow JAX: for real ``f`` the gradient is ``df/dx - 1j * df/dy``; with
    ``holomorphic=True`` (complex inputs and output) it is the complex derivative ``f'(z)``.
    """

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _batching.levels():  # inside vmap: every example's gradient at once
            return _lifted().value_and_grad(f, argnums, has_aux, args, kwargs)
        nums = _argnums(argnums, len(args), "grad")
        with _transform():
            new_args, parts = _prepare(args, nums, "grad")
            result = f(*new_args, **kwargs)
            if has_aux and not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise TypeError(
                    f"grad: with has_aux=True the function must return a pair (value, aux), but it returned "
                    f"{'None' if result is None else f'a {type(result).__name__}'}"
                )
            out, aux = result if has_aux else (result, None)
            t = _as_tensor(out, "grad")
            if t is not None and t.data.size != 1:
                raise TypeError(
                    f"grad: the function must return a scalar, got an array of shape {t.shape}; "
                    "use jacobian() for vector outputs, or elementwise_grad() for elementwise ones"
                )
            fresh = [x for _, _, xs in parts for x in xs]
            _check_inputs("grad", holomorphic, fresh)
            _check_output("grad", holomorphic, out if t is None else t)
            seed = np.ones(t.shape, t.data.dtype) if holomorphic and t is not None else None
            flat = _grads([t], [seed], fresh)
            grads, k = [], 0
            for treedef, leaves, xs in parts:
                gs = [_output(g, like) for g, like in zip(flat[k:k + len(xs)], leaves)]
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
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """The gradient of a scalar function with respect to argument(s) ``argnums``.

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
    """
    vg = value_and_grad(f, argnums, has_aux, holomorphic)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        (value, aux), g = vg(*args, **kwargs) if has_aux else ((None, None), vg(*args, **kwargs)[1])
        return (g, aux) if has_aux else g

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


def elementwise_grad(f: Callable[..., Any], argnums: int = 0) -> Callable[..., Any]:
    """The derivative of each output entry with respect to its matching input entry.

    For elementwise ``f`` this is the diagonal of the Jacobian (the gradient of ``sum(f(x))``).
    """

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _batching.levels():
            return _lifted().elementwise_grad(f, argnums, args, kwargs)
        with _named("elementwise_grad"):
            out, pullback = vjp(lambda *a: f(*a, **kwargs), *args)
        if isinstance(out, (tuple, list, dict)):
            raise TypeError(f"elementwise_grad: the function must return one array, got a {type(out).__name__}")
        arg = args[argnums]
        shape_in, shape_out = np.shape(_as_array(arg, "elementwise_grad")), np.shape(_as_array(out, "elementwise_grad"))
        if shape_in != shape_out:
            raise ValueError(
                f"elementwise_grad: the output has shape {shape_out} but argument {argnums} has shape {shape_in}; "
                "an elementwise function maps each entry to one entry: use jacobian() or vjp() instead"
            )
        diag = pullback(np.ones(shape_out))[argnums]
        # J^T u equals diag * u for every u only if the Jacobian is diagonal: check one random u
        u = np.random.default_rng(0).uniform(0.5, 1.5, size=shape_out)
        probe = pullback(u)[argnums]
        d, p = np.asarray(_as_array(diag, "elementwise_grad")), np.asarray(_as_array(probe, "elementwise_grad"))
        if not np.allclose(p, d * u, rtol=1e-6, atol=1e-9 * (1.0 + float(np.max(np.abs(d), initial=0.0))),
                           equal_nan=True):
            raise ValueError(
                "elementwise_grad: the function is not elementwise (its Jacobian is not diagonal: an output "
                "entry depends on other input entries); use jacobian() for the full Jacobian or vjp() for "
                "J^T v products"
            )
        return diag

    return wrapper


def vjp(f: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """``(f(*primals), vjp_fn)`` where ``vjp_fn(cotangent)`` returns one gradient per primal.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> out, pullback = cr.vjp(lambda x: x * 3.0, np.array([1.0, 2.0]))
        >>> pullback(np.array([1.0, 10.0]))
        (array([ 3., 30.]),)
    """
    if _batching.levels():
        return _lifted().vjp(f, primals)
    nums = tuple(range(len(primals)))
    with _transform():
        new_args, parts = _prepare(primals, nums, _name.get("vjp"))
        out = f(*new_args)
    out_leaves, out_def = _pytree.flatten(out)
    _check_leaves(out_leaves, out, _name.get("vjp"))
    out_tensors = [_as_tensor(o, "vjp") for o in out_leaves]
    fresh = [x for _, _, xs in parts for x in xs]

    def pullback(cotangent: Any) -> tuple[Any, ...]:
        if _batching.open and _batching.batched_tree(cotangent):  # vmap of a pullback: once per example
            return _lifted().pullback_per_example(pullback, cotangent)
        cts, ct_def = _pytree.flatten(cotangent)
        if len(cts) != len(out_leaves):
            raise ValueError(f"vjp: the cotangent has {len(cts)} leaves, the output {len(out_leaves)}")
        seeds = []
        for ct, o in zip(cts, out_leaves):
            shape = np.shape(o.data if isinstance(o, Tensor) else o)
            if np.shape(ct.data if isinstance(ct, Tensor) else ct) != shape:
                raise ValueError(f"vjp: cotangent of shape {np.shape(ct)} for an output of shape {shape}")
            seeds.append(ct if _traced(ct) else _float(_as_array(ct, "vjp")))
        with _transform():
            flat = _grads(out_tensors, seeds, fresh)
            results, k = [], 0
            for treedef, leaves, xs in parts:
                gs = [_output(g, like) for g, like in zip(flat[k:k + len(xs)], leaves)]
                results.append(_pytree.unflatten(treedef, gs))
                k += len(xs)
        return tuple(results)

    with _transform():
        value = _pytree.unflatten(out_def, [_output(o) for o in out_leaves])
    return value, pullback


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """Forward mode: ``(f(*primals), J @ tangents)`` in one pass.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.jvp(np.sin, (0.0,), (1.0,))
        (0.0, 1.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: 'primals' and 'tangents' must be tuples (one entry per argument of f)")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    if _batching.levels():
        return _lifted().jvp(f, primals, tangents)
    like = primals[0] if len(primals) == 1 else None
    with _transform():
        with state.new_level() as level:
            args = []
            for p, t in zip(primals, tangents):
                p_leaves, p_def = _pytree.flatten(p)
                t_leaves, _ = _pytree.flatten(t)
                if len(p_leaves) != len(t_leaves):
                    raise ValueError("jvp: each tangent must have the same structure as its primal")
                duals = [_dual(pl, tl, level) for pl, tl in zip(p_leaves, t_leaves)]
                args.append(_pytree.unflatten(p_def, duals))
            out = f(*args)
            leaves, treedef = _pytree.flatten(out)
            _check_leaves(leaves, out, _name.get("jvp"))
            tans = [o._tangents.get(level) if isinstance(o, Tensor) and o._tangents else None for o in leaves]
        # the level is closed: outputs are traced only by outer transforms now
        prim_out = [_output(o, like) for o in leaves]
        tan_out = [
            _output(np.zeros_like(_float(_as_array(o, "jvp"))) if t is None else t, like)
            for o, t in zip(leaves, tans)
        ]
    return _pytree.unflatten(treedef, prim_out), _pytree.unflatten(treedef, tan_out)


def _dual(primal: Any, tangent: Any, level: int) -> Tensor:
    x = _input(primal, _name.get("jvp"), reverse=False)
    t = tangent if _traced(tangent) else _as_array(tangent, "jvp")
    if np.shape(t.data if isinstance(t, Tensor) else t) != x.shape:
        raise ValueError(f"jvp: tangent of shape {np.shape(t)} for a primal of shape {x.shape}")
    if np.iscomplexobj(t.data if isinstance(t, Tensor) else t) and x.data.dtype.kind != "c":
        raise TypeError(
            f"jvp: a complex tangent for a real primal ({x.data.dtype}); make the primal complex "
            "(e.g. x.astype(complex)) or pass a real tangent"
        )
    if isinstance(t, Tensor):
        t = t if t.data.dtype == x.data.dtype else t.astype(x.data.dtype)
    else:
        t = np.asarray(t, dtype=x.data.dtype)
    x._tangents = dict(x._tangents or {})
    x._tangents[level] = t
    return x


def linearize(f: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(f(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals``."""
    out = f(*primals)
    return out, lambda *tangents: jvp(f, primals, tangents)[1]


def _basis(shape: tuple[int, ...], dtype: Any) -> Any:
    n = int(np.prod(shape))
    eye = np.eye(n, dtype=dtype)
    for i in range(n):
        yield eye[i].reshape(shape)


def holomorphic_grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The complex derivative ``f'(z)`` of a holomorphic scalar function: ``grad(f, holomorphic=True)``.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> bool(cr.holomorphic_grad(np.exp)(1j) == np.exp(1j))
        True
    """
    return grad(f, argnums, holomorphic=True)


def jacrev(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, holomorphic: bool = False
) -> Callable[..., Any]:
    """The Jacobian by reverse mode: one backward sweep per output entry.

    ``f`` may return a tuple, list or dict of arrays: the result has that structure, each
    entry holding the Jacobians for ``argnums`` (so ``hessian(f, argnums=(0, 1))[i][j]`` is
    d2f / d arg_i d arg_j, as in JAX). Complex inputs need real outputs (each row is a
    gradient in ``grad``'s convention) unless ``holomorphic=True``.
    """

    @functools.wraps(f)
    def wrapper(*args: Any) -> Any:
        if _batching.levels():
            return _lifted().jacrev(f, argnums, args)
        nums = _argnums(argnums, len(args), "jacrev")
        with _transform():
            new_args, parts = _prepare(args, nums, "jacrev")
            out = f(*new_args)
            out_leaves, out_def = _pytree.flatten(out)
            _check_leaves(out_leaves, out, "jacrev")
            fresh = [x for _, _, xs in parts for x in xs]
            _check_inputs("jacrev", holomorphic, fresh)
            likes = [leaf for _, leaves, _ in parts for leaf in leaves]
            stacker = _stack_traced if state.transform_depth() > 1 else np.stack
            per_output = []
            for out in out_leaves:
                t = _as_tensor(out, "jacrev")
                _check_output("jacrev", holomorphic, out)
                out_shape = np.shape(_as_array(out, "jacrev")) if t is None else t.shape
                rows: list[list[Any]] = [[] for _ in fresh]
                for seed in _basis(out_shape, t.data.dtype if t is not None else float):
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
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, holomorphic: bool = False
) -> Callable[..., Any]:
    """The Jacobian by forward mode: one JVP per input entry (outputs may be tuples, lists, dicts).

    Complex inputs need ``holomorphic=True`` (as in JAX): the Jacobian of a holomorphic function
    is its complex derivative; for other functions of complex inputs use ``jvp`` directly.
    """

    @functools.wraps(f)
    def wrapper(*args: Any) -> Any:
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
            out_shapes = [np.shape(o.data if isinstance(o, Tensor) else o) for o in leaves]

        with _transform(), _named("jacfwd"):
            stacker = _stack_traced if state.transform_depth() > 1 else np.stack
            for k, (leaves, treedef) in enumerate(leaves_per_arg):
                for j, leaf in enumerate(leaves):
                    arr = _float(_as_array(leaf, "jacfwd"))
                    cols: list[list[Any]] | None = None
                    for e in _basis(arr.shape, arr.dtype):
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
    from .ops.shape import stack

    return stack([i if isinstance(i, Tensor) else Tensor._wrap(np.asarray(i)) for i in items])


def _regroup(jacs: list[Any], parts: list[Any], argnums: Any) -> Any:
    grouped, k = [], 0
    for treedef, leaves, _ in parts:
        grouped.append(_pytree.unflatten(treedef, jacs[k:k + len(leaves)]))
        k += len(leaves)
    return grouped[0] if isinstance(argnums, int) else tuple(grouped)


def jacobian(f: Callable[..., Any], argnums: int | Sequence[int] = 0, mode: str = "rev") -> Callable[..., Any]:
    """The Jacobian of ``f``, shape ``out.shape + in.shape``; ``mode`` is "rev" or "fwd".

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.jacobian(lambda x: x ** 2)(np.array([1.0, 3.0]))
        array([[2., 0.],
               [0., 6.]])
    """
    if mode == "rev":
        return jacrev(f, argnums)
    if mode == "fwd":
        return jacfwd(f, argnums)
    raise ValueError(f"jacobian: mode must be 'rev' or 'fwd', got {mode!r}")


def hessian(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, holomorphic: bool = False
) -> Callable[..., Any]:
    """The matrix of second derivatives of a scalar function (reverse over reverse).

    Example:
        >>> import chainrule as cr
        >>> cr.hessian(lambda a, b: b * ((a + b) * (a - b)), argnums=1)(1.0, 2.0)
        -12.0
    """
    return jacrev(grad(f, argnums, holomorphic=holomorphic), argnums, holomorphic=holomorphic)


def hvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """Hessian-vector product of a scalar function, forward over reverse (no Hessian built)."""
    nums: int | tuple[int, ...] = 0 if len(primals) == 1 else tuple(range(len(primals)))
    return jvp(grad(f, argnums=nums), tuple(primals), tuple(tangents))[1]
