"""Group and instance normalisation layers with PyTorch's names, arguments, parameters and buffers:
``GroupNorm``, ``InstanceNorm1d``, ``InstanceNorm2d``, ``InstanceNorm3d``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops._define import shape_of
from ..ops.shape import reshape
from . import functional as F
from .batchnorm import set_up_statistics
from .layers import _input
from .module import Module
from .module_placement import place
from .parameter import Parameter, resolve_dtype


class GroupNorm(Module):
    """Normalise each example over groups of channels (as ``torch.nn.GroupNorm``): ``num_channels`` split
    into ``num_groups`` groups; ``weight`` (ones) and ``bias`` (zeros) per channel when ``affine`` (no ``bias``
    with PyTorch's ``bias=False``).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> gn = nn.GroupNorm(2, 4)
        >>> gn(np.arange(16.0).reshape(2, 4, 2)).shape, gn.weight.shape
        ((2, 4, 2), (4,))
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        dt = resolve_dtype(dtype, "GroupNorm", device)
        self.num_groups, self.num_channels, self.eps, self.affine = int(num_groups), int(num_channels), float(eps), \
            bool(affine)
        self.weight = Parameter(np.ones(num_channels), dtype=dt) if affine else None
        self.bias = Parameter(np.zeros(num_channels), dtype=dt) if affine and bias else None
        self._dtype = dt
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def forward(self, x: Any) -> Any:
        x = _input(x, self._dtype if self.weight is None else self.weight._data.dtype, "GroupNorm")
        sx = shape_of(x)
        if len(sx) < 2 or sx[1] != self.num_channels:
            raise ValueError(f"GroupNorm: expected input (N, {self.num_channels}, *), got shape {sx}")
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _InstanceNorm(Module):
    _d = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        set_up_statistics(self, num_features, eps, momentum, affine, track_running_stats, device, dtype, bias)

    def forward(self, x: Any) -> Any:
        name, d = type(self).__name__, self._d
        x = _input(x, self._dtype if self.weight is None else self.weight._data.dtype, name)
        sx = shape_of(x)
        if len(sx) not in (d + 1, d + 2):
            raise ValueError(f"{name}: expected {d + 1}D (unbatched) or {d + 2}D (batched) input, got shape {sx}")
        unbatched = len(sx) == d + 1
        if unbatched:
            x = reshape(x, (1, *sx))
        if shape_of(x)[1] != self.num_features and self.affine:
            raise ValueError(f"{name}: expected input with {self.num_features} channels, got shape {sx}")
        # as PyTorch: the input's statistics in training mode, or always without running statistics
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return reshape(y, sx) if unbatched else y

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")  # (PyTorch 2.13's)


class InstanceNorm1d(_InstanceNorm):
    """Normalise each channel of each example over its length (as ``torch.nn.InstanceNorm1d``): input
    (N, C, L) or (C, L); ``affine=False`` and ``track_running_stats=False`` by default, as PyTorch.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> np.round(nn.InstanceNorm1d(2)(np.array([[[1.0, 3.0], [10.0, 30.0]]])), 4)
        array([[[-1.,  1.],
                [-1.,  1.]]], dtype=float32)
    """

    _d = 1


class InstanceNorm2d(_InstanceNorm):
    """Normalise each channel of each example over its height and width (as ``torch.nn.InstanceNorm2d``):
    input (N, C, H, W) or (C, H, W); with ``track_running_stats=True`` eval mode uses the running statistics.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.InstanceNorm2d(3, affine=True)(np.ones((2, 3, 4, 4))).shape
        (2, 3, 4, 4)
    """

    _d = 2


class InstanceNorm3d(_InstanceNorm):
    """Normalise each channel of each example over its depth, height and width (as ``torch.nn.InstanceNorm3d``):
    input (N, C, D, H, W) or (C, D, H, W); with ``track_running_stats=True`` eval mode uses the running statistics.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.InstanceNorm3d(3, affine=True)(np.ones((2, 3, 2, 4, 4))).shape
        (2, 3, 2, 4, 4)
    """

    _d = 3
