"""Batch normalisation layers with PyTorch's names, arguments, parameters and buffers:
``BatchNorm1d`` (input (N, C) or (N, C, L)), ``BatchNorm2d`` (input (N, C, H, W)) and ``BatchNorm3d`` (input
(N, C, D, H, W)).

``weight`` (ones) and ``bias`` (zeros) when ``affine``; buffers ``running_mean`` (zeros),
``running_var`` (ones) and ``num_batches_tracked`` (an int64 count) when ``track_running_stats``: Tensors that
do not require grad, as PyTorch's, updated in place on their arrays.
In training mode a layer normalises by the batch's statistics and updates the running ones
(``momentum=None``: their cumulative average over the batches seen); in eval mode it normalises by
the running ones. A layer without running statistics always uses the batch's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops._define import shape_of
from . import functional as F
from .layers import _input
from .module import Module
from .module_placement import place
from .parameter import Parameter, resolve_dtype


def set_up_statistics(layer: Module, num_features: int, eps: float, momentum: float | None, affine: bool,
                      track_running_stats: bool, device: Any, dtype: Any, bias: bool = True) -> None:
    """The parameters and buffers of a per-channel normalisation (batch or instance norm): ``weight`` (ones)
    and ``bias`` (zeros) when ``affine``; ``running_mean``, ``running_var``, ``num_batches_tracked`` when
    ``track_running_stats`` (else None, as PyTorch's)."""
    name = type(layer).__name__
    if num_features <= 0:
        raise ValueError(f"{name}: num_features must be positive, got {num_features}")
    dt = resolve_dtype(dtype, name, device)
    layer.num_features, layer.eps, layer.momentum = int(num_features), float(eps), momentum
    layer.affine, layer.track_running_stats = bool(affine), bool(track_running_stats)
    layer.weight = Parameter(np.ones(num_features), dtype=dt) if affine else None
    layer.bias = Parameter(np.zeros(num_features), dtype=dt) if affine and bias else None
    if track_running_stats:
        layer.register_buffer("running_mean", np.zeros(num_features, dtype=dt))
        layer.register_buffer("running_var", np.ones(num_features, dtype=dt))
        layer.register_buffer("num_batches_tracked", np.array(0, dtype=np.int64))
    else:
        for buffer in ("running_mean", "running_var", "num_batches_tracked"):
            layer.register_buffer(buffer, None)
    layer._dtype = dt
    place(layer, device)  # PyTorch's device=: built here on the host, then moved


class _BatchNorm(Module):
    _dims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        set_up_statistics(self, num_features, eps, momentum, affine, track_running_stats, device, dtype, bias)

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches tracked."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def forward(self, x: Any) -> Any:
        nd = len(shape_of(x))
        if nd not in self._dims:
            wanted = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"{type(self).__name__}: expected {wanted} input (got {nd}D input)")
        dt = self.weight.dtype if self.weight is not None else self._dtype
        x = _input(x, dt, type(self).__name__)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            count = self.num_batches_tracked
            count._data += 1  # in place on the buffer's array (a device's array stays there)
            count._bump_version()
            # momentum None: the cumulative average, 1 / (batches seen so far)
            factor = 1.0 / float(count._data) if self.momentum is None else self.momentum
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(x, self.running_mean if keep else None, self.running_var if keep else None, self.weight,
                            self.bias, use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")  # (PyTorch 2.13's)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L) (as ``torch.nn.BatchNorm1d``): per channel, by the
    batch's statistics in training mode (updating the running ones), by the running ones in eval mode.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> bn = nn.BatchNorm1d(2)
        >>> y = bn(np.array([[1.0, 10.0], [3.0, 30.0]]))
        >>> np.round(y.numpy(), 3), bn.running_mean, int(bn.num_batches_tracked)
        (array([[-1., -1.],
               [ 1.,  1.]], dtype=float32), Tensor([0.2, 2. ], dtype=float32), 1)
    """

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W) (as ``torch.nn.BatchNorm2d``): per channel, over the batch
    and both spatial axes.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> bn = nn.BatchNorm2d(3).eval()
        >>> bn(np.ones((2, 3, 4, 4))).shape
        (2, 3, 4, 4)
    """

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over (N, C, D, H, W) (as ``torch.nn.BatchNorm3d``): per channel, over the batch
    and the three spatial axes.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> bn = nn.BatchNorm3d(3)
        >>> bn(np.ones((2, 3, 2, 4, 4))).shape, bn.running_var.shape
        ((2, 3, 2, 4, 4), (3,))
    """

    _dims = (5,)
