"""JAX's top-level helpers around the transforms: ``eval_shape``, ``ShapeDtypeStruct``, ``linear_transpose``,
``device_put`` and ``block_until_ready``.

chainrule has no abstract tracer, so ``eval_shape`` runs the function on zeros of the given shapes and dtypes
(the cost of one call, and its side effects) and reports the shapes of the result; ``linear_transpose`` of a
linear function is its vector-Jacobian product (at zeros, as a linear function's is the same everywhere).
NumPy computes eagerly, so ``block_until_ready`` has nothing to wait for on the host (a device is synchronized).

Example:
    >>> import numpy as np
    >>> import chainrule as cr
    >>> cr.eval_shape(lambda x, w: np.tanh(x @ w), cr.ShapeDtypeStruct((8, 3), np.float32), np.ones((3, 5)))
    ShapeDtypeStruct(shape=(8, 5), dtype=float64)
    >>> t = cr.linear_transpose(lambda x: 2.0 * x[::-1], np.zeros(3))
    >>> t(np.array([1.0, 2.0, 3.0]))[0].tolist()
    [6.0, 4.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.device import is_off_host
from ..core.state import no_grad
from ..tensor import Tensor
from ..tree_util import tree_leaves, tree_map
from .reverse import vjp

__all__ = ["Array", "ShapeDtypeStruct", "block_until_ready", "device_put", "eval_shape", "linear_transpose"]

Array = np.ndarray
"""JAX's ``jax.Array``, the type of the functional API's arrays: NumPy's (a device's are CuPy's ``ndarray``)."""


class ShapeDtypeStruct:
    """A shape and a dtype, standing for an array (JAX's ``jax.ShapeDtypeStruct``)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Any, dtype: Any) -> None:
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype})"


def _zeros(leaf: Any) -> Any:
    return np.zeros(leaf.shape, leaf.dtype) if isinstance(leaf, ShapeDtypeStruct) else leaf


def _struct(leaf: Any) -> ShapeDtypeStruct:
    dtype = getattr(leaf, "dtype", None)
    return ShapeDtypeStruct(np.shape(leaf), np.result_type(leaf) if dtype is None else dtype)


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fun(*args, **kwargs)`` as ``ShapeDtypeStruct``s (the same pytree); arguments
    may be ``ShapeDtypeStruct``s (or anything with ``shape`` and ``dtype``). ``fun`` runs once, on zeros for
    them, without recording gradients (NumPy's warnings about zeros, such as a division, are silenced)."""
    args, kwargs = tree_map(_zeros, (args, kwargs))
    with no_grad(), np.errstate(all="ignore"):
        out = fun(*args, **kwargs)
    return tree_map(_struct, out)


def linear_transpose(fun: Callable[..., Any], *primals: Any, reduce_axes: tuple = ()) -> Callable[[Any], tuple]:
    """The transpose of the linear function ``fun`` (``primals``: arrays or ``ShapeDtypeStruct``s giving the
    inputs' shapes): a function of an output cotangent returning the tuple of input cotangents, as JAX's.
    ``fun`` must be linear: the result is its vector-Jacobian product at zeros."""
    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes is not supported (JAX removed it too)")
    _, pullback = vjp(fun, *tree_map(lambda leaf: np.zeros(np.shape(leaf), _struct(leaf).dtype), primals))
    return pullback


def device_put(x: Any, device: Any = None) -> Any:
    """``x`` (a pytree) as arrays on ``device`` (None or ``"cpu"``: NumPy arrays; Tensors stay Tensors, moved)."""
    def put(leaf: Any) -> Any:
        if isinstance(leaf, Tensor):
            return leaf if device is None else leaf.to(device)
        if device is None or str(device) == "cpu":
            return np.asarray(leaf)
        return Tensor(leaf).to(device)._data

    return tree_map(put, x)


def default_backend() -> str:
    """JAX's ``jax.default_backend()``: ``"cpu"``, where chainrule's arrays live unless ``device=`` says otherwise."""
    return "cpu"


def device_count(backend: str | None = None) -> int:
    """JAX's ``jax.device_count()``: how many devices of ``backend`` (default: the CPU, one) there are."""
    from ..devices import jax_devices

    return len(jax_devices(backend))


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Any]:
    """JAX's ``jax.local_devices()``: ``jax.devices()``, this process's being all there are."""
    from ..devices import jax_devices

    return jax_devices(backend)


local_device_count = device_count


def block_until_ready(x: Any) -> Any:
    """``x``, once computed: NumPy's arrays already are; arrays on a device wait for it."""
    for leaf in tree_leaves(x):
        data = leaf._data if isinstance(leaf, Tensor) else leaf
        if is_off_host(data):
            from ..devices import synchronize

            synchronize()
            break
    return x
