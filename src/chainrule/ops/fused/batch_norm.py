"""Batch normalisation (``torch.nn.functional.batch_norm``), built from differentiable ops.

Training: each channel is normalised by the mean and the biased variance of its batch, which is
layer normalisation of the (channels, everything else) matrix: the fused ``nn.layer_norm``
primitive, whose rules give gradients of every order. The running statistics are updated in
place from the values, as PyTorch: ``running = (1 - momentum) * running + momentum * batch``,
with the unbiased variance. Evaluation: the running statistics are constants.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.device import ARRAY_TYPES, as_array
from ...tensor import Tensor
from .._define import raw, shape_of
from .._saved import Saved
from ..declare import declare_function
from ..shape import reshape, swapaxes
from .convolution import as_float_input
from .normalization import layer_norm_primitive


def _update(name: str, what: str, running: Any, batch: np.ndarray, momentum: float) -> None:
    """running = (1 - momentum) * running + momentum * batch, in place (an ndarray buffer or a Tensor)."""
    arr = running._data if isinstance(running, Tensor) else running
    if arr.__class__ not in ARRAY_TYPES or arr.shape != batch.shape:  # (an ndarray, or a device's array)
        raise ValueError(f"{name}: {what} must be an array of shape {batch.shape} (one per channel) to be updated "
                         f"in place, got {type(running).__name__} of shape {np.shape(arr)}")
    arr *= 1.0 - momentum
    arr += (momentum * batch).astype(arr.dtype)
    if isinstance(running, Tensor):
        running._bump_version()


def batch_norm(input: Any, running_mean: Any, running_var: Any, weight: Any = None, bias: Any = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Any:
    """Normalise each channel (axis 1) of input (N, C, *) over the batch and the other axes, then scale
    by ``weight`` and shift by ``bias`` (as ``torch.nn.functional.batch_norm``).

    ``training``: use the batch's mean and biased variance, and update ``running_mean`` /
    ``running_var`` in place (when given) with ``momentum`` and the unbiased variance; otherwise use
    the running statistics.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> mean, var = np.zeros(2), np.ones(2)
        >>> y = F.batch_norm(np.array([[1.0, 10.0], [3.0, 30.0]]), mean, var, training=True, momentum=0.5)
        >>> np.round(y, 3), mean, var
        (array([[-1., -1.],
               [ 1.,  1.]]), array([ 1., 10.]), array([  1.5, 100.5]))
    """
    name = "batch_norm"
    x = as_float_input(input)
    sx = shape_of(x)
    if len(sx) < 2:
        raise ValueError(f"{name}: input must have a batch and a channel axis (N, C, *), got shape {sx}")
    c = sx[1]
    per_channel = (c,) + (1,) * (len(sx) - 2)
    for what, p in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if p is not None and tuple(shape_of(p)) != (c,):
            raise ValueError(f"{name}: {what} must have shape ({c},) (one per channel), got {tuple(shape_of(p))}")
    if training:
        count = int(np.prod(sx)) // c if c else 0
        if count == 1:
            raise ValueError(f"{name}: expected more than 1 value per channel when training, got input of shape {sx}")
        if count == 0:  # an empty batch: an empty output, the running statistics kept (PyTorch's)
            y = x * 0
        else:
            rows = reshape(swapaxes(x, 0, 1), (c, count))  # (C, N * spatial): one row per channel
            normal = layer_norm_primitive(rows, None, None, axes=(1,), eps=float(eps), saved=Saved(rows))
            y = swapaxes(reshape(normal, (c, sx[0], *sx[2:])), 0, 1)
        if count and (running_mean is not None or running_var is not None):
            values = as_array(raw(x))
            axes = (0, *range(2, len(sx)))
            if running_mean is not None:
                _update(name, "running_mean", running_mean, values.mean(axis=axes), momentum)
            if running_var is not None:
                _update(name, "running_var", running_var, values.var(axis=axes, ddof=1), momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError(f"{name}: running_mean and running_var are needed when training=False; pass them, or "
                             "training=True to normalise by the batch's statistics")
        dt = np.result_type(raw(x))
        mean, var = _statistic(running_mean, dt), _statistic(running_var, dt)
        y = (x - reshape(mean, per_channel)) / reshape(np.sqrt(var + eps), per_channel)
    if weight is not None:
        y = y * reshape(weight, per_channel)
    if bias is not None:
        y = y + reshape(bias, per_channel)
    return y


def _statistic(value: Any, dtype: Any) -> Any:
    """A running statistic as an array of ``dtype``; a Tensor, or a value a transform traces or batches (running
    statistics batched by ``vmap`` over an ensemble's buffers), is used as it is."""
    if isinstance(value, Tensor):  # (a module's buffer: an op's operand, never read into Python, so jit replays it)
        return value
    plain = raw(value)
    if not isinstance(plain, (np.ndarray, np.generic, list, tuple, float, int)):
        return value
    return as_array(plain, dtype=dtype)


declare_function(batch_norm, namespaces=("ops", "nn.functional"), cases="none",
                 torch="torch.nn.functional.batch_norm")

__all__ = ["batch_norm"]
