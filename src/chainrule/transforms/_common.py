"""What the transforms share: turning inputs into fresh Tensors and results back, argument
checks, the transform's name for error messages, and one gradient sweep (``_grads``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from ..autodiff import backprop
from ..core import pytree as _pytree
from ..core import state
from ..core.device import ARRAY_TYPES, as_array, is_off_host
from ..scalar import Scalar
from ..tensor import Tensor

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


# vmap's versions of the transforms (batching/lifted.py). That module imports the transforms, so it
# registers itself here when the batching package is imported, rather than being imported from here.
_LIFTED: list[Any] = []


def register_lifted(module: Any) -> None:
    """Called once by ``chainrule.batching.lifted``: the transforms to run when their input is batched."""
    _LIFTED[:] = [module]


def _lifted() -> Any:
    """vmap's lifted transforms; only called inside vmap, so the batching package is imported."""
    return _LIFTED[0]


def _traced(t: Any) -> bool:
    return isinstance(t, Tensor) and (
        t._requires_grad or bool(t._tangents and state.any_visible(t._tangents))
    )


FLOAT0 = np.dtype([("float0", np.void, 0)])  # JAX's dtype for the tangent of an integer value (jax.dtypes.float0)


def _is_float0(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == FLOAT0


def _as_array(x: Any, what: str) -> np.ndarray:
    if isinstance(x, Scalar):
        return np.asarray(x.data)
    if isinstance(x, Tensor):
        return x._data
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{what}: inputs must be numbers or arrays, got {type(x).__name__}")
    arr = as_array(x)
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
        from ..ops.shape import _identity

        t = _identity(x) if x._data.dtype.kind in "fc" else _identity(x.astype(np.float64))
    else:
        t = Tensor._wrap(_float(_as_array(x, what)))  # no copy: nothing writes to it
    if reverse:
        t._requires_grad = True
    return t


def _output(value: Any, like: Any = None, avoid: Sequence[np.ndarray] = ()) -> Any:
    """A result for the caller: traced Tensor inside an outer transform, else float or ndarray (a device's array
    stays one: a Python number would be a copy to the host).

    Called from inside the transform's own context, so an outer transform means depth > 1. ``avoid``: the
    caller's arrays (inputs are wrapped without a copy): a result sharing memory with one of them is copied, so
    writing into it never changes them (``jvp`` of the identity returns its primal and tangent).
    """
    if isinstance(value, Tensor):
        if state.transform_depth() > 1 and _traced(value):
            return value
        value = value._data
    if isinstance(value, Scalar):
        value = value.data
    arr = as_array(value)
    if arr.ndim == 0 and isinstance(like, (int, float, complex, Scalar, np.generic)) and not is_off_host(arr):
        return arr.item() if arr.dtype.kind in "fiubc" else arr
    if any(a.__class__ is arr.__class__ and np.may_share_memory(arr, a) for a in avoid):
        return arr.copy()
    return arr


def _callers_arrays(*trees: Any) -> list[np.ndarray]:
    """The NumPy arrays (and Tensors' arrays) among the leaves of what the caller passed."""
    found = []
    for tree in trees:
        for leaf in _pytree.flatten(tree)[0]:
            leaf = leaf._data if isinstance(leaf, Tensor) else leaf
            if isinstance(leaf, np.ndarray) or leaf.__class__ in ARRAY_TYPES:
                found.append(leaf)
    return found


def hips_argnum(argnums: int | Sequence[int], argnum: int | None, name: str) -> int | Sequence[int]:
    """``argnums``, or HIPS autograd's ``argnum=`` (its spelling: ``grad(f, argnum=1)``) when that is given."""
    if argnum is None:
        return argnums
    if argnums != 0:
        raise TypeError(f"{name}: got both argnums={argnums!r} and argnum={argnum!r}; pass one (argnum is HIPS "
                        "autograd's name for JAX's argnums)")
    return argnum


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
            ok = as_array(leaf).dtype.kind in "biufc"
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
        ok = as_array(out).dtype.kind in "biufc"
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise _returned(out, name)
    return None  # a constant: it does not depend on the inputs


def _kind(x: Any) -> str:
    return as_array(x._data if isinstance(x, Tensor) else x.data if isinstance(x, Scalar) else x).dtype.kind


def _check_inputs(name: str, holomorphic: bool, fresh: list[Tensor]) -> None:
    """JAX's rule: holomorphic=True needs complex inputs (jacfwd without it needs real ones)."""
    for x in fresh:
        complex_in = x._data.dtype.kind == "c"
        if holomorphic and not complex_in:
            raise TypeError(
                f"{name} with holomorphic=True requires inputs with a complex dtype, got {x._data.dtype}; "
                "pass complex inputs (e.g. x.astype(complex)), or drop holomorphic=True"
            )
        if name == "jacfwd" and complex_in and not holomorphic:
            raise TypeError(
                f"jacfwd requires real-valued inputs, got {x._data.dtype}. For holomorphic functions pass "
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
        return [np.zeros_like(t._data) for t in fresh]
    create = state.transform_depth() > 1 or any(_traced(t) and t._node is not None for t in fresh)
    # retain: a pullback may be called again, and jacrev sweeps the same graph once per output entry
    return list(backprop.grad([o for o, _ in live], fresh, [s for _, s in live], create_graph=create,
                              retain_graph=True))


def with_aux(name: str, transform: Callable[[Callable[..., Any]], Callable[..., Any]],
             f: Callable[..., Any]) -> Any:
    """JAX's ``has_aux=True`` for ``transform``: ``f`` returns ``(output, aux)``; the result is
    ``(transform(output), aux)``, ``aux`` from one more plain call of ``f`` (outer transforms still see it)."""

    def pair(*args: Any, **kwargs: Any) -> Any:
        result = f(*args, **kwargs)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(f"{name}: with has_aux=True the function must return a pair (output, aux), but it "
                            f"returned {type(result).__name__}")
        return result

    inner = transform(lambda *args, **kwargs: pair(*args, **kwargs)[0])

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return inner(*args, **kwargs), pair(*args, **kwargs)[1]

    return wrapper
