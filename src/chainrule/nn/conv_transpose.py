"""Transposed convolutions and upsampling with PyTorch's names, arguments and parameter layouts:
``ConvTranspose1d``, ``ConvTranspose2d``, ``ConvTranspose3d``, ``Upsample``, ``UpsamplingNearest2d``,
``UpsamplingBilinear2d``.

A ``ConvTranspose2d`` holds ``weight`` (in_channels, out_channels / groups, kh, kw) and ``bias``
(out_channels,), drawn as PyTorch draws them, so a PyTorch model's ``state_dict`` converted to NumPy loads
as it is.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ops._define import shape_of
from ..ops.fused.convolution import tuple_arg
from . import functional as F
from . import init
from .conv import check_channels
from .layers import _input
from .module import Module
from .module_placement import place
from .parameter import Parameter, resolve_dtype


class _ConvTransposeNd(Module):
    _d = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None, *, rng: Any = None) -> None:
        super().__init__()
        name, d = type(self).__name__, self._d
        check_channels(name, in_channels, out_channels, groups)
        if padding_mode != "zeros":
            raise ValueError(f"{name}: only padding_mode='zeros' is supported for transposed convolutions (as "
                             f"PyTorch), got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = int(in_channels), int(out_channels), int(groups)
        self.kernel_size = tuple_arg(name, "kernel_size", kernel_size, d)
        self.stride = tuple_arg(name, "stride", stride, d)
        self.padding = tuple_arg(name, "padding", padding, d, minimum=0)
        self.output_padding = tuple_arg(name, "output_padding", output_padding, d, minimum=0)
        self.dilation = tuple_arg(name, "dilation", dilation, d)
        self.padding_mode = padding_mode
        dt = resolve_dtype(dtype, name, device)
        gen = init.generator(rng)
        self.weight = Parameter(np.zeros((in_channels, out_channels // groups, *self.kernel_size)), dtype=dt)
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), rng=gen)  # PyTorch's reset_parameters
        fan_in = (out_channels // groups) * math.prod(self.kernel_size)  # (PyTorch's fan_in: weight.shape[1] * k)
        bound = 1.0 / math.sqrt(fan_in)
        self.bias = Parameter(gen.uniform(-bound, bound, (out_channels,)), dtype=dt) if bias else None
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def _output_padding(self, x: Any, output_size: Any) -> tuple[int, ...]:
        """PyTorch's ``output_size=``: the output padding that gives the output that spatial size."""
        if output_size is None:
            return self.output_padding
        d, name = self._d, type(self).__name__
        want = tuple(int(n) for n in output_size)[-d:]
        spatial = shape_of(x)[-d:]
        least = tuple((m - 1) * s - 2 * p + dl * (k - 1) + 1 for m, s, p, dl, k in zip(
            spatial, self.stride, self.padding, self.dilation, self.kernel_size))
        if len(want) != d or any(not 0 <= w - lo < s for w, lo, s in zip(want, least, self.stride)):
            raise ValueError(f"{name}: output_size {tuple(output_size)} is not reachable: each spatial size must be "
                             f"from {least} to {tuple(lo + s - 1 for lo, s in zip(least, self.stride))}")
        return tuple(w - lo for w, lo in zip(want, least))

    def forward(self, x: Any, output_size: Any = None) -> Any:
        w = self.weight
        x = _input(x, w._data.dtype, type(self).__name__)
        conv = getattr(F, f"conv_transpose{self._d}d")
        return conv(x, w, self.bias, self.stride, self.padding, self._output_padding(x, output_size), self.groups,
                    self.dilation)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._d:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._d:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._d:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C, L) or (C, L) (as ``torch.nn.ConvTranspose1d``): the
    gradient of a ``Conv1d`` with respect to its input, used as a layer that lengthens.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> up = nn.ConvTranspose1d(4, 2, kernel_size=4, stride=2, padding=1, rng=0)
        >>> up(np.ones((3, 4, 8))).shape, up.weight.shape
        ((3, 2, 16), (4, 2, 4))
    """

    _d = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C, H, W) or (C, H, W) (as ``torch.nn.ConvTranspose2d``): weight
    (in_channels, out_channels / groups, kh, kw); ``forward(x, output_size=None)``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> up = nn.ConvTranspose2d(8, 3, kernel_size=3, stride=2, padding=1, output_padding=1, rng=0)
        >>> up
        ConvTranspose2d(8, 3, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))
        >>> up(np.ones((1, 8, 7, 7))).shape
        (1, 3, 14, 14)
    """

    _d = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C, D, H, W) or (C, D, H, W) (as ``torch.nn.ConvTranspose3d``):
    weight (in_channels, out_channels / groups, kd, kh, kw); ``forward(x, output_size=None)``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> up = nn.ConvTranspose3d(4, 2, kernel_size=2, stride=2, rng=0)
        >>> up
        ConvTranspose3d(4, 2, kernel_size=(2, 2, 2), stride=(2, 2, 2))
        >>> up(np.ones((1, 4, 2, 3, 4))).shape
        (1, 2, 4, 6, 8)
    """

    _d = 3


class Upsample(Module):
    """Resample the spatial axes (as ``torch.nn.Upsample``): to ``size`` or by ``scale_factor``, ``mode``
    ``"nearest"`` (default), ``"nearest-exact"``, ``"linear"``, ``"bilinear"``, ``"trilinear"`` or ``"area"``; see
    ``nn.functional.interpolate``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.Upsample(scale_factor=2, mode="bilinear")(np.ones((1, 3, 4, 5))).shape
        (1, 3, 8, 10)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, x: Any) -> Any:
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = f"scale_factor={self.scale_factor}" if self.scale_factor is not None else f"size={self.size}"
        return f"{what}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(size, scale_factor, mode="nearest")`` (PyTorch's older name).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.UpsamplingNearest2d(scale_factor=2)(np.ones((1, 1, 2, 2))).shape
        (1, 1, 4, 4)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(size, scale_factor, mode="bilinear", align_corners=True)`` (PyTorch's older name).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.UpsamplingBilinear2d(size=(3, 3))(np.ones((1, 1, 2, 2))).shape
        (1, 1, 3, 3)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
