"""Transposed convolution (PyTorch's ``conv_transpose1d`` / ``conv_transpose2d`` / ``conv_transpose3d``): the
input gradient of a convolution, read as a layer.

A transposed convolution of x with w is the gradient of the convolution ``conv(y, w)`` with respect to
its input y, given x as the output's gradient: the primitive ``nn.conv_input_grad`` of
``ops/fused/convolution.py``. That primitive's own rules are the other two convolution primitives, so the
transposed convolution has gradients of every order in both modes with no rule of its own. PyTorch's
weight layout (in_channels, out_channels / groups, *kernel) is the convolution's (out, in / groups, *kernel)
read the other way, so the weight passes as it is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._define import shape_of
from ..declare import declare_function
from ..shape import reshape
from .convolution import as_float_input, batched, conv_input_grad_primitive, tuple_arg


def _conv_transpose(name: str, d: int, input: Any, weight: Any, bias: Any, stride: Any, padding: Any,
                    output_padding: Any, groups: int, dilation: Any) -> Any:
    x = as_float_input(input)
    w = as_float_input(weight)
    sw = shape_of(w)
    if len(sw) != d + 2:
        raise ValueError(f"{name}: weight must be {d + 2}-D (in_channels, out_channels / groups, *kernel_size), "
                         f"got shape {sw}")
    x, unbatched = batched(name, x, d)
    sx = shape_of(x)
    if not isinstance(groups, (int, np.integer)) or groups < 1:
        raise ValueError(f"{name}: groups must be a positive int, got {groups!r}")
    if sx[1] != sw[0] or sw[0] % groups:
        raise ValueError(f"{name}: input with {sx[1]} channels does not fit weight of shape {sw} and groups={groups}: "
                         f"weight.shape[0] is the input's channels, divisible by groups")
    kernel = tuple(sw[2:])
    stride_t = tuple_arg(name, "stride", stride, d)
    dilation_t = tuple_arg(name, "dilation", dilation, d)
    pad_t = tuple_arg(name, "padding", padding, d, minimum=0)
    extra = tuple_arg(name, "output_padding", output_padding, d, minimum=0)
    if any(op >= s for op, s in zip(extra, stride_t)):
        raise ValueError(f"{name}: output_padding {extra} must be smaller than the stride {stride_t} (chainrule does "
                         "not take PyTorch's output_padding < dilation with a smaller stride)")
    size = tuple((m - 1) * s - 2 * p + dl * (k - 1) + op + 1
                 for m, s, p, dl, k, op in zip(sx[2:], stride_t, pad_t, dilation_t, kernel, extra))
    if any(n < 1 for n in size):
        raise ValueError(f"{name}: the output would have spatial size {size} (input {tuple(sx[2:])}, kernel "
                         f"{kernel}, stride {stride_t}, padding {pad_t}); pad less")
    y = conv_input_grad_primitive(x, w, stride=stride_t, padding=tuple((p, p) for p in pad_t), dilation=dilation_t,
                                  groups=int(groups), size=size)
    out_channels = sw[1] * groups
    if bias is not None:
        sb = shape_of(bias)
        if tuple(sb) != (out_channels,):
            raise ValueError(f"{name}: bias must have shape ({out_channels},) (out_channels), got {sb}")
        y = y + reshape(bias, (out_channels,) + (1,) * d)
    return reshape(y, shape_of(y)[1:]) if unbatched else y


def conv_transpose1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Any:
    """1-D transposed convolution (as ``torch.nn.functional.conv_transpose1d``): input (N, C_in, L) or
    (C_in, L), weight (C_in, C_out / groups, k); output length (L - 1) * stride - 2 * padding +
    dilation * (k - 1) + output_padding + 1.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.conv_transpose1d(np.array([[[1.0, 2.0]]]), np.array([[[1.0, 10.0]]]), stride=2)
        array([[[ 1., 10.,  2., 20.]]])
    """
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Any:
    """2-D transposed convolution (as ``torch.nn.functional.conv_transpose2d``): input (N, C_in, H, W) or
    (C_in, H, W), weight (C_in, C_out / groups, kh, kw).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.conv_transpose2d(np.ones((1, 3, 4, 4)), np.ones((3, 2, 4, 4)), stride=2, padding=1).shape
        (1, 2, 8, 8)
    """
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Any:
    """3-D transposed convolution (as ``torch.nn.functional.conv_transpose3d``): input (N, C_in, D, H, W) or
    (C_in, D, H, W), weight (C_in, C_out / groups, kd, kh, kw).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.conv_transpose3d(np.ones((1, 3, 2, 3, 4)), np.ones((3, 2, 2, 2, 2)), stride=2).shape
        (1, 2, 4, 6, 8)
    """
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


for _fn in (conv_transpose1d, conv_transpose2d, conv_transpose3d):
    declare_function(_fn, primitive=conv_input_grad_primitive, arity=2, namespaces=("ops", "nn.functional"),
                     cases="none", torch=f"torch.nn.functional.{_fn.__name__}")

__all__ = ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
