"""Group and instance normalisation (PyTorch's ``group_norm`` and ``instance_norm``), built on the layer-norm
primitive: each (example, group) is one row normalised to mean 0 and variance 1, then each channel is
scaled and shifted. Gradients of every order come from ``nn.layer_norm``'s rules.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.device import ARRAY_TYPES, as_array
from ...tensor import Tensor
from .._define import raw, shape_of
from .._saved import Saved
from ..declare import declare_function
from ..shape import reshape
from .batch_norm import batch_norm
from .convolution import as_float_input
from .normalization import layer_norm_primitive


def _rows_normalised(x: Any, rows: int, eps: float) -> Any:
    """x (N, C, *) normalised over each of ``rows`` equal slices of its flattened values."""
    flat = reshape(x, (rows, -1))
    return reshape(layer_norm_primitive(flat, None, None, axes=(1,), eps=float(eps), saved=Saved(flat)), shape_of(x))


def _affine(name: str, y: Any, weight: Any, bias: Any, c: int, nd: int) -> Any:
    per_channel = (c,) + (1,) * (nd - 2)
    for what, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(shape_of(p)) != (c,):
            raise ValueError(f"{name}: {what} must have shape ({c},) (one per channel), got {tuple(shape_of(p))}")
    if weight is not None:
        y = y * reshape(weight, per_channel)
    if bias is not None:
        y = y + reshape(bias, per_channel)
    return y


def group_norm(input: Any, num_groups: int, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    """Normalise each example's channels in ``num_groups`` groups (over the group's channels and every spatial
    position), then scale each channel by ``weight`` and shift it by ``bias`` (as
    ``torch.nn.functional.group_norm``); input (N, C, *).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> np.round(F.group_norm(np.array([[1.0, 3.0, 10.0, 30.0]]), 2), 4)
        array([[-1.,  1., -1.,  1.]])
    """
    x = as_float_input(input)
    sx = shape_of(x)
    if len(sx) < 2:
        raise ValueError(f"group_norm: input must be (N, C, *), got shape {sx}")
    if not isinstance(num_groups, (int, np.integer)) or num_groups < 1 or sx[1] % num_groups:
        raise ValueError(f"group_norm: the {sx[1]} channels must divide into num_groups={num_groups!r} groups")
    y = _rows_normalised(x, sx[0] * int(num_groups), eps)
    return _affine("group_norm", y, weight, bias, sx[1], len(sx))


def instance_norm(input: Any, running_mean: Any = None, running_var: Any = None, weight: Any = None,
                  bias: Any = None, use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5) -> Any:
    """Normalise each channel of each example over its spatial positions, then scale and shift per channel
    (as ``torch.nn.functional.instance_norm``); input (N, C, *). With ``use_input_stats`` and running
    statistics given, these are updated in place (momentum, the examples' mean of the per-instance mean and
    unbiased variance); with ``use_input_stats=False`` the running statistics normalise.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> np.round(F.instance_norm(np.array([[[1.0, 3.0], [10.0, 30.0]]])), 4)
        array([[[-1.,  1.],
                [-1.,  1.]]])
    """
    name = "instance_norm"
    x = as_float_input(input)
    sx = shape_of(x)
    if len(sx) < 3:
        raise ValueError(f"{name}: input must be (N, C, *spatial), got shape {sx}")
    if not use_input_stats:
        return batch_norm(x, running_mean, running_var, weight, bias, training=False, eps=eps)
    count = int(np.prod(sx[2:]))
    if count <= 1:
        raise ValueError(f"{name}: expected more than 1 spatial element when training, got input of shape {sx}")
    y = _rows_normalised(x, sx[0] * sx[1], eps)
    def values() -> np.ndarray:  # (only with running statistics: under vmap there are none to update)
        return as_array(raw(x)).reshape(sx[0], sx[1], count)  # (on x's device)

    for what, running, stat in (("running_mean", running_mean, lambda: values().mean(axis=2).mean(axis=0)),
                                ("running_var", running_var, lambda: values().var(axis=2, ddof=1).mean(axis=0))):
        if running is not None:
            arr = running._data if isinstance(running, Tensor) else running
            if not (isinstance(arr, np.ndarray) or arr.__class__ in ARRAY_TYPES) or arr.shape != (sx[1],):
                raise ValueError(f"{name}: {what} must be an array of shape ({sx[1]},) to be updated in place, got "
                                 f"{type(running).__name__} of shape {np.shape(arr)}")
            arr *= 1.0 - momentum
            arr += (momentum * stat()).astype(arr.dtype)
            if isinstance(running, Tensor):
                running._bump_version()
    return _affine(name, y, weight, bias, sx[1], len(sx))


for _fn in (group_norm, instance_norm):
    declare_function(_fn, namespaces=("ops", "nn.functional"), cases="none",
                     torch=f"torch.nn.functional.{_fn.__name__}")

__all__ = ["group_norm", "instance_norm"]
