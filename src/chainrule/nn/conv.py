"""Convolution and pooling layers with PyTorch's names, arguments, defaults and parameter layouts:
``Conv1d``, ``Conv2d``, ``Conv3d``, ``MaxPool1d``, ``MaxPool2d``, ``MaxPool3d``, ``AvgPool1d``, ``AvgPool2d``,
``AvgPool3d``, ``AdaptiveAvgPool1d``, ``AdaptiveAvgPool2d``, ``AdaptiveAvgPool3d``.

A ``Conv2d`` holds ``weight`` (out_channels, in_channels / groups, kh, kw) and ``bias``
(out_channels,), drawn as PyTorch draws them (Kaiming-uniform with a = sqrt(5): U(-b, b) with
b = 1 / sqrt(fan_in)), so a PyTorch model's ``state_dict`` converted to NumPy loads as it is.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..ops._define import shape_of
from ..ops.fused.convolution import tuple_arg
from . import functional as F
from . import init
from .layers import _input
from .module import Module
from .module_placement import place
from .parameter import Parameter, resolve_dtype

# PyTorch's padding_mode names -> numpy.pad's modes
_PADDING_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def check_channels(name: str, in_channels: int, out_channels: int, groups: int) -> None:
    """A convolution's channel counts: positive, and both divisible by ``groups`` (else a ValueError naming them)."""
    if in_channels <= 0 or out_channels <= 0:
        raise ValueError(f"{name}: channel counts must be positive, got in_channels={in_channels}, "
                         f"out_channels={out_channels}")
    if groups <= 0 or in_channels % groups or out_channels % groups:
        raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) must both be "
                         f"divisible by groups ({groups})")


class _ConvNd(Module):
    _d = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None, *, rng: Any = None) -> None:
        super().__init__()
        name, d = type(self).__name__, self._d
        check_channels(name, in_channels, out_channels, groups)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {sorted(_PADDING_MODES)}, got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = int(in_channels), int(out_channels), int(groups)
        self.kernel_size = tuple_arg(name, "kernel_size", kernel_size, d)
        self.stride = tuple_arg(name, "stride", stride, d)
        self.dilation = tuple_arg(name, "dilation", dilation, d)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: padding must be an int, a tuple, 'same' or 'valid', got {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided convolutions "
                                 f"(stride={self.stride}); give the padding as a number")
            self.padding: Any = padding
        else:
            self.padding = tuple_arg(name, "padding", padding, d, minimum=0)
        self.padding_mode = padding_mode
        dt = resolve_dtype(dtype, name, device)
        gen = init.generator(rng)
        self.weight = Parameter(np.zeros((out_channels, in_channels // groups, *self.kernel_size)), dtype=dt)
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), rng=gen)  # PyTorch's reset_parameters
        fan_in = (in_channels // groups) * math.prod(self.kernel_size)
        bound = 1.0 / math.sqrt(fan_in)
        self.bias = Parameter(gen.uniform(-bound, bound, (out_channels,)), dtype=dt) if bias else None
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def _side_pads(self) -> list[tuple[int, int]]:
        if self.padding == "valid":
            return [(0, 0)] * self._d
        if self.padding == "same":
            total = [dl * (k - 1) for k, dl in zip(self.kernel_size, self.dilation)]
            return [(t // 2, t - t // 2) for t in total]
        return [(p, p) for p in self.padding]

    def forward(self, x: Any) -> Any:
        w = self.weight
        x = _input(x, w.dtype, type(self).__name__)
        conv = getattr(F, f"conv{self._d}d")
        if self.padding_mode == "zeros":
            return conv(x, w, self.bias, self.stride, self.padding, self.dilation, self.groups)
        lead = len(shape_of(x)) - self._d
        x = np.pad(x, [(0, 0)] * lead + self._side_pads(), mode=_PADDING_MODES[self.padding_mode])
        return conv(x, w, self.bias, self.stride, 0, self.dilation, self.groups)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._d:
            s += f", padding={self.padding}"  # ('same' unquoted, as PyTorch prints it)
        if self.dilation != (1,) * self._d:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) or (C, L) (as ``torch.nn.Conv1d``); ``padding_mode`` one of
    ``"zeros"``, ``"reflect"``, ``"replicate"``, ``"circular"``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> conv = nn.Conv1d(2, 4, 3, padding=1, rng=0)
        >>> conv
        Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=(1,))
        >>> conv(np.ones((5, 2, 8))).shape, conv.weight.shape
        ((5, 4, 8), (4, 2, 3))
    """

    _d = 1


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) or (C, H, W) (as ``torch.nn.Conv2d``): weight
    (out_channels, in_channels / groups, kh, kw), PyTorch's initialisation; ``padding`` an int, a
    tuple, ``"same"`` or ``"valid"``; ``padding_mode`` one of ``"zeros"``, ``"reflect"``,
    ``"replicate"``, ``"circular"``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> conv = nn.Conv2d(3, 8, 3, stride=2, padding=1, rng=0)
        >>> conv
        Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))
        >>> conv(np.ones((4, 3, 32, 32))).shape
        (4, 8, 16, 16)
    """

    _d = 2


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W) (as ``torch.nn.Conv3d``): weight
    (out_channels, in_channels / groups, kd, kh, kw), PyTorch's initialisation; ``padding`` an int, a
    tuple, ``"same"`` or ``"valid"``; ``padding_mode`` one of ``"zeros"``, ``"reflect"``,
    ``"replicate"``, ``"circular"``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> conv = nn.Conv3d(2, 4, 3, padding=1, rng=0)
        >>> conv
        Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1))
        >>> conv(np.ones((1, 2, 4, 5, 6))).shape
        (1, 4, 4, 5, 6)
    """

    _d = 3


class _MaxPoolNd(Module):
    _d = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = bool(return_indices), bool(ceil_mode)

    def forward(self, x: Any) -> Any:
        pool = getattr(F, f"max_pool{self._d}d")
        return pool(x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                    self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Maximum over windows of the last axis (as ``torch.nn.MaxPool1d``; ``stride`` defaults to
    ``kernel_size``). Ties: the gradient goes to the first maximum of the window, as PyTorch.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.MaxPool1d(2)(np.array([[[1.0, 3.0, 2.0, 2.0]]]))
        array([[[3., 2.]]])
    """

    _d = 1


class MaxPool2d(_MaxPoolNd):
    """Maximum over windows of the last two axes (as ``torch.nn.MaxPool2d``; ``stride`` defaults to
    ``kernel_size``). Ties: the gradient goes to the first maximum in row-major order, as PyTorch.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.MaxPool2d(2)
        MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
        >>> nn.MaxPool2d(2)(np.ones((1, 3, 8, 8))).shape
        (1, 3, 4, 4)
    """

    _d = 2


class MaxPool3d(_MaxPoolNd):
    """Maximum over windows of the last three axes (as ``torch.nn.MaxPool3d``; ``stride`` defaults to
    ``kernel_size``). Ties: the gradient goes to the first maximum in row-major order, as PyTorch.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.MaxPool3d(2, return_indices=True)(np.ones((1, 3, 4, 4, 2)))[1].shape
        (1, 3, 2, 2, 1)
    """

    _d = 3


class AvgPool1d(Module):
    """Mean over windows of the last axis (as ``torch.nn.AvgPool1d``).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.AvgPool1d(2)(np.array([[[1.0, 3.0, 2.0, 2.0]]]))
        array([[[2., 2.]]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode, self.count_include_pad = padding, bool(ceil_mode), bool(count_include_pad)

    def forward(self, x: Any) -> Any:
        return F.avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """Mean over windows of the last two axes (as ``torch.nn.AvgPool2d``).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.AvgPool2d(2)(np.ones((1, 3, 8, 8))).shape
        (1, 3, 4, 4)
    """

    _d = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: Any = None) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode, self.count_include_pad = padding, bool(ceil_mode), bool(count_include_pad)
        self.divisor_override = divisor_override

    def forward(self, x: Any) -> Any:
        pool = getattr(F, f"avg_pool{self._d}d")
        return pool(x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                    self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """Mean over windows of the last three axes (as ``torch.nn.AvgPool3d``): ``count_include_pad``,
    ``divisor_override`` and ``ceil_mode`` as PyTorch's.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.AvgPool3d(2, padding=1, count_include_pad=False)(np.ones((1, 3, 4, 4, 4))).shape
        (1, 3, 3, 3, 3)
    """

    _d = 3


class AdaptiveAvgPool1d(Module):
    """Mean over ``output_size`` windows covering the last axis (as ``torch.nn.AdaptiveAvgPool1d``).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.AdaptiveAvgPool1d(1)(np.ones((2, 3, 7))).shape
        (2, 3, 1)
    """

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Any) -> Any:
        return F.adaptive_avg_pool1d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(Module):
    """Mean over an ``output_size`` grid of windows covering the last two axes (as
    ``torch.nn.AdaptiveAvgPool2d``); ``AdaptiveAvgPool2d(1)`` is global average pooling.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.AdaptiveAvgPool2d((1, 1))(np.ones((2, 3, 7, 5))).shape
        (2, 3, 1, 1)
    """

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Any) -> Any:
        return F.adaptive_avg_pool2d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """Mean over an ``output_size`` grid of windows covering the last three axes (as
    ``torch.nn.AdaptiveAvgPool3d``); ``None`` keeps that axis's size.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.AdaptiveAvgPool3d((1, None, 2))(np.ones((2, 3, 7, 5, 4))).shape
        (2, 3, 1, 5, 2)
    """

    def forward(self, x: Any) -> Any:
        return F.adaptive_avg_pool3d(x, self.output_size)
