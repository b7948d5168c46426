"""Masks: ``masked_fill`` (also a Tensor method) and a fused ``masked_softmax``.

Example:
    >>> import numpy as np
    >>> import chainrule as cr
    >>> x = cr.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = x.masked_fill(np.array([False, True, False]), 0.0)
    >>> y.sum().backward(); y.numpy(), x.grad.numpy()
    (array([1., 0., 3.]), array([1., 0., 1.]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff.batch_levels import is_batched
from ..autodiff.primitive import Primitive
from ..core.device import as_array
from ..tensor import Tensor
from ._define import implements, normalize_axis, raw
from .declare import tensor_method


def _bool_mask(name: str, mask: Any, shape: tuple[int, ...], what: str = "x") -> np.ndarray:
    m = as_array(raw(mask))
    if m.dtype != bool:
        raise TypeError(f"{name}: mask must be boolean, got dtype {m.dtype}; pass mask.astype(bool)")
    try:
        if np.broadcast_shapes(m.shape, shape) != tuple(shape):
            raise ValueError
    except ValueError:
        raise ValueError(
            f"{name}: mask of shape {m.shape} does not broadcast to {what}'s shape {tuple(shape)}"
        ) from None
    return m


def _masked_fill_fn(x: Any, mask: np.ndarray, *, value: Any) -> Any:
    dt = np.result_type(x)  # a number fills as a NumPy scalar: it goes with the values on any device
    fill = dt.type(value) if isinstance(value, (int, float, complex, np.generic)) else as_array(value, dtype=dt)
    return np.where(mask, fill, x)


_masked_fill = Primitive("masked_fill", _masked_fill_fn)
_masked_fill.defvjp(lambda g, ans, x, mask, *, value: np.where(mask, 0.0, g), None)
_masked_fill.defjvp(lambda t, ans, x, mask, *, value: np.where(mask, 0.0, t), None)
_masked_fill.declare_reads(())  # the mask (a constant) only: neither x nor the output is kept


@implements()
def masked_fill(x: Any, mask: Any, value: float) -> Any:
    """``x`` with ``value`` where the boolean ``mask`` is True; no gradient flows through filled entries into ``x``
    (a 0-d ``value`` Tensor that requires grad gets theirs summed, as PyTorch's).

    As ``torch.Tensor.masked_fill``: the mask broadcasts to x's shape. Also ``x.masked_fill(mask, value)``.

    Example:
        >>> import numpy as np
        >>> import chainrule as cr
        >>> cr.masked_fill(np.array([1.0, 2.0]), np.array([True, False]), -np.inf)
        array([-inf,   2.])
    """
    if is_batched(x) or is_batched(mask):  # under vmap: where batches (the fused node reads the mask's values)
        from . import elementwise

        return elementwise.where(mask, value, x)
    xr = raw(x) if isinstance(x, Tensor) else as_array(x)
    m = _bool_mask("masked_fill", mask, np.shape(xr))
    if isinstance(value, Tensor):  # PyTorch's masked_fill(mask, value_tensor): the value's derivative (reverse
        if value.ndim != 0:        # and forward, traced or not) sums over the filled entries
            raise ValueError(f"masked_fill: value must be a 0-d Tensor, got shape {tuple(value.shape)}")
        from . import elementwise, shape  # (they build on this module's neighbours; imported when needed)

        fill = value if value.dtype == xr.dtype else shape.astype(value, xr.dtype)
        return elementwise.where(m, fill, x)
    if np.ndim(value) != 0:
        raise ValueError(f"masked_fill: value must be a single number, got shape {np.shape(value)}")
    return _masked_fill(x if isinstance(x, Tensor) else xr, m, value=value)


tensor_method("masked_fill", lambda self, mask, value: masked_fill(self, mask, value))  # (vmap's values take it too)


# -- softmax over the entries a mask keeps --------------------------------------------------------
def _masked_softmax_fn(x: Any, mask: np.ndarray, *, axis: tuple[int, ...]) -> Any:
    s = np.where(mask, x, -np.inf)
    top = np.max(s, axis=axis, keepdims=True)
    top[~np.isfinite(top)] = 0.0  # a row with nothing kept: all zeros below, not NaN
    s -= top
    np.exp(s, out=s)
    total = np.sum(s, axis=axis, keepdims=True)
    total[total == 0] = 1.0
    s /= total
    return s


def _softmax_rule(g: Any, ans: Any, x: Any, mask: Any, *, axis: tuple[int, ...]) -> Any:
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))  # ans is 0 where masked: so is the gradient


_masked_softmax = Primitive("nn.masked_softmax", _masked_softmax_fn)
_masked_softmax.defvjp(_softmax_rule, None)
_masked_softmax.defjvp(_softmax_rule, None)
_masked_softmax.declare_reads(("ans",))  # the probabilities and the mask, not the scores


def masked_softmax(x: Any, mask: Any, dim: int = -1) -> Any:
    """Softmax along ``dim`` over the entries where the boolean ``mask`` is True (it broadcasts to
    x's shape); masked entries get probability 0 and no gradient; a slice with nothing kept gives
    zeros (not NaN). One fused node.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.masked_softmax(np.array([[1.0, 1.0, 5.0], [1.0, 2.0, 3.0]]), np.array([[True, True, False], [False] * 3]))
        array([[0.5, 0.5, 0. ],
               [0. , 0. , 0. ]])
    """
    xr = raw(x) if isinstance(x, Tensor) else as_array(x)
    if xr.dtype.kind != "f":
        if isinstance(x, Tensor):
            raise TypeError(f"masked_softmax: x must be floating point, got {xr.dtype}")
        x = xr = xr.astype(np.float64)
    m = _bool_mask("masked_softmax", mask, np.shape(xr))
    return _masked_softmax(x, m, axis=normalize_axis(dim, xr.ndim))
