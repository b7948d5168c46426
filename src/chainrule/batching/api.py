"""``vmap``: write a function for one example, run it on a batch in whole-array NumPy calls."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..autodiff import batch_levels as _state
from ..core import pytree as _pytree
from ..core.device import as_array
from ..ops.pytorch.dim_args import numpy_methods_for
from ..scalar import Scalar
from ..tensor import Tensor
from .rules import broadcast_batch
from .unbatched import handed_back, handed_over
from .value import Batched

_ids = itertools.count(1)


@contextmanager
def new_level(size: int) -> Iterator[int]:
    level = next(_ids)
    sizes = _state._SIZES.set(_state._SIZES.get() + ((level, size),))
    shown_levels = _state._LEVELS.set(_state._LEVELS.get() + (level,))
    _state.opened(1)
    try:
        yield level
    finally:
        _state.opened(-1)
        _state._LEVELS.reset(shown_levels)
        _state._SIZES.reset(sizes)


@contextmanager
def hidden(level: int) -> Iterator[None]:
    """Hide ``level`` from transforms entered now (they are handed the whole batch)."""
    token = _state._LEVELS.set(tuple(lv for lv in _state._LEVELS.get() if lv != level))
    try:
        yield
    finally:
        _state._LEVELS.reset(token)


@contextmanager
def shown(level: int) -> Iterator[None]:
    """Show ``level`` again while the function runs on Batched values of it."""
    current = _state._LEVELS.get()
    if level in current:
        yield
        return
    token = _state._LEVELS.set(tuple(sorted(current + (level,))))
    try:
        yield
    finally:
        _state._LEVELS.reset(token)


def _prefix(spec: Any, tree: Any, what: str) -> list[Any]:
    """``spec`` (a pytree prefix of ``tree``) broadcast to one entry per leaf of ``tree``."""
    out: list[Any] = []
    stack = [(spec, tree)]
    while stack:
        s, t = stack.pop()
        if s is None or isinstance(s, (int, np.integer)):
            out.extend([s] * len(_pytree.flatten(t)[0]))
        elif isinstance(s, (tuple, list)) and isinstance(t, (tuple, list)) and len(s) == len(t):
            stack.extend(reversed(list(zip(s, t))))
        elif isinstance(s, dict) and isinstance(t, dict) and set(s) == set(t):
            stack.extend(reversed([(s[k], t[k]) for k in _pytree.leaf_order(t)]))
        else:
            raise ValueError(
                f"vmap: {what} {spec!r} does not match the structure of the values it describes "
                f"(give an int or None, or a tuple/list/dict shaped like them)"
            )
    return out


def _leaf_shape(x: Any) -> tuple[int, ...]:
    if isinstance(x, (Tensor, Batched)):
        return tuple(x.shape)
    if isinstance(x, Scalar):
        return ()
    return np.shape(x)


def _as_value(x: Any) -> Any:
    if isinstance(x, (Tensor, Batched, np.ndarray)):
        return x
    if isinstance(x, Scalar):
        return np.asarray(x.data)
    return as_array(x)  # (a device's array stays there)


_UNSET: Any = object()


def vmap(
    f: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None, axis_size: int | None = None,
    spmd_axis_name: Any = None, *, in_dims: Any = _UNSET, out_dims: Any = _UNSET,
) -> Callable[..., Any]:
    """Vectorize ``f``, written for one example, over a batch axis of its arguments.

    ``in_axes``: which axis of each argument is the batch (an int, None for an argument that is
    the same for every example, negative ints count from the end), one entry per argument or a
    pytree prefix of the arguments; ``out_axes``: where the batch axis goes in the results.
    Keyword arguments are batched over axis 0. ``axis_size``: the batch size, needed only when no
    argument is batched (as JAX's). ``axis_name`` and ``spmd_axis_name`` are accepted for JAX code and
    change nothing (chainrule has no collectives that would read them). The batch runs as whole-array
    NumPy calls (no loop over examples); ``vmap`` nests and composes with ``grad``, ``jvp``, ``vjp``, ``jacfwd``,
    ``jacrev`` and ``hessian`` in any order. ``in_dims``/``out_dims`` are ``torch.vmap``'s names: given them, as
    PyTorch's, keyword arguments go to ``f`` unbatched (:func:`chainrule.func.vmap` is torch.func's whole ``vmap``).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> f = lambda x, w: np.sum(np.sin(x * w))
        >>> xs = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
        >>> cr.vmap(cr.grad(f), in_axes=(0, None))(xs, np.array([1.0, 2.0])).shape  # per-example gradients
        (3, 2)
    """

    if in_dims is not _UNSET or out_dims is not _UNSET:  # torch.vmap (import chainrule as torch)
        if in_axes != 0 or out_axes != 0:
            raise TypeError("vmap: got JAX's in_axes/out_axes and PyTorch's in_dims/out_dims; pass one spelling")
        return _torch_vmap(f, 0 if in_dims is _UNSET else in_dims, 0 if out_dims is _UNSET else out_dims)
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        spec = in_axes
        if isinstance(spec, list):
            spec = tuple(spec)
        if isinstance(spec, tuple) and len(spec) != len(args):
            raise ValueError(f"vmap: in_axes has {len(spec)} entries but the function got {len(args)} arguments")
        leaves, treedef = _pytree.flatten((args, kwargs))
        axes = _prefix((spec, 0), (args, kwargs), "in_axes")
        sizes = set()
        for index, (leaf, ax) in enumerate(zip(leaves, axes)):
            if ax is None:
                continue
            shape = _leaf_shape(leaf)
            if not -len(shape) <= ax < len(shape):
                raise ValueError(_axis_error(ax, shape, index, args, kwargs))
            sizes.add(shape[ax])
        if axis_size is not None:
            if sizes and sizes != {axis_size}:
                raise ValueError(f"vmap: axis_size={axis_size} but the batched arguments have batch size(s) "
                                 f"{sorted(sizes)}")
            sizes = {int(axis_size)}
        if not sizes:
            raise ValueError("vmap: no argument is batched (every in_axes is None); give one an axis, "
                             "or pass axis_size=")
        if len(sizes) > 1:
            raise ValueError(f"vmap: the batched arguments have different batch sizes {sorted(sizes)}")
        size = sizes.pop()
        with new_level(size) as level, numpy_methods_for(leaves):
            wrapped = []
            for leaf, ax in zip(leaves, axes):
                if ax is None:
                    wrapped.append(handed_over(leaf))
                    continue
                v = _as_value(leaf)
                if ax % len(_leaf_shape(leaf)) != 0:
                    v = np.moveaxis(v, ax, 0)
                wrapped.append(Batched(v, level))
            new_args, new_kwargs = _pytree.unflatten(treedef, wrapped)
            out = f(*new_args, **new_kwargs)
            out_leaves, out_def = _pytree.flatten(out)
            oaxes = _prefix(out_axes, out, "out_axes")
            results = [_unbatch(o, ax, level, size) for o, ax in zip(out_leaves, oaxes)]
            if not any(isinstance(leaf, Tensor) for leaf in leaves):  # NumPy in, NumPy out (a constant Tensor made
                results = [_untraced_as_array(r) for r in results]  # inside, as x.at[i].set on an array makes)
        return _pytree.unflatten(out_def, results)

    return wrapper


def _torch_vmap(f: Callable[..., Any], in_dims: Any, out_dims: Any) -> Callable[..., Any]:
    """``torch.vmap(f, in_dims, out_dims)``: keyword arguments go to ``f`` as they are, unbatched."""
    batched = vmap(f, in_dims, out_dims)

    @functools.wraps(f)
    def call(*args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            return batched(*args)
        return vmap(lambda *a: f(*a, **kwargs), in_dims, out_dims)(*args)

    return call


def _unbatch(x: Any, axis: Any, level: int, size: int) -> Any:
    _check_result(x)
    x = handed_back(x)
    if axis is None:
        if isinstance(x, Batched) and x.level == level:
            return _same_for_every_example(x)
        return x
    if isinstance(x, Batched) and x.level == level:
        v = x.value
    else:
        v = broadcast_batch(x.data if isinstance(x, Scalar) else x, size)
        if isinstance(v, np.ndarray):
            v = v.copy()  # a writable array, as for batched results
    nd = len(_leaf_shape(v))
    if not -nd <= axis < nd:
        raise ValueError(f"vmap: out_axes {axis} is out of range for a result with {nd - 1} axes per example")
    return v if axis % nd == 0 else np.moveaxis(v, 0, axis)


def _untraced_as_array(x: Any) -> Any:
    from ..transforms._common import _traced

    return x._data if isinstance(x, Tensor) and not _traced(x) else x


def _check_axes_spec(spec: Any, what: str) -> None:
    """Refuse, when vmap is built, an axes spec JAX refuses: a leaf that is not an int or None (a bool would
    silently read as axis 0 or 1), or an in_axes dict for the whole argument list."""
    if what == "in_axes" and isinstance(spec, dict):
        raise TypeError(f"vmap: in_axes must be an int, None, or a tuple with one entry per positional argument, "
                        f"got the dict {spec!r:.60}; for a dict argument write in_axes=({spec!r:.40},)")
    for leaf in _pytree.flatten(spec, is_leaf=lambda x: x is None)[0]:
        if leaf is not None and (isinstance(leaf, (bool, np.bool_)) or not isinstance(leaf, (int, np.integer))):
            raise TypeError(f"vmap: {what} must be an int, None, or a tuple/list/dict of them, got "
                            f"{type(leaf).__name__} {leaf!r:.40} in {what}={spec!r:.60}")


def _check_result(x: Any) -> None:
    """A result leaf must be an array or a number (JAX's rule): a string or another object cannot be stacked."""
    if isinstance(x, (Batched, Tensor, Scalar, np.ndarray, np.generic, int, float, complex, bool)):
        return
    raise TypeError(f"vmap: the function returned a {type(x).__name__} ({x!r:.60}), which is not an array; return "
                    "arrays or numbers, or tuples, lists and dicts of them")


def _same_for_every_example(x: Batched) -> Any:
    """A result given out_axes None: one example's value, if it is the same for every example.

    Batching cannot always see that a result does not depend on the batch (a jvp's primal output, a
    gradient at a point closed over): JAX's tracing can, so such results are compared here instead.
    """
    v, data, depth = x.value, x.value, 0
    while isinstance(data, Batched):  # a value of outer vmaps: their batch axes come first in the array
        data, depth = data.value, depth + 1
    data = data._data if isinstance(data, Tensor) else data
    if isinstance(data, np.ndarray):
        first = np.take(data, [0], axis=depth) if data.shape[depth] else data
        same = data == first
        if data.dtype.kind in "fc":  # a NaN result the same for every example is the same
            same |= np.isnan(data) & np.isnan(first)
        if bool(np.all(same)):
            return v[0]
    raise ValueError("vmap: out_axes is None for a result that differs per example; give it an axis")


def _axis_error(ax: int, shape: tuple[int, ...], index: int, args: tuple, kwargs: dict) -> str:
    """The message for an in_axes entry out of range (leaf ``index`` of (args, kwargs)), naming a keyword argument."""
    index -= len(_pytree.flatten(args)[0])
    for name, value in kwargs.items():
        index -= len(_pytree.flatten(value)[0])
        if index < 0:
            return (f"vmap: keyword argument {name!r} has shape {shape}, but keyword arguments are always batched "
                    "along axis 0 (as in JAX); pass it positionally with in_axes None for it, or bind it first "
                    "(functools.partial(f, " + f"{name}=...))")
    return (f"vmap: in_axes {ax} is out of range for an argument of shape {shape}; "
            "use None for an argument that is the same for every example")
