"""Pooling with PyTorch's names and arguments, built from differentiable ops (no rules of their own).

- ``max_pool1d`` / ``max_pool2d`` / ``max_pool3d``: the position of each window's maximum is found on the values
  (NumPy), then the output is ``take_along_axis`` of the input at those positions: its gradient goes
  to that one entry. Ties go to the first maximum in the window (row-major order), as PyTorch's CPU
  kernel; the indices are PyTorch's (into each flattened (H, W) plane, or (D, H, W) volume).
- ``avg_pool1d`` / ``avg_pool2d`` / ``avg_pool3d``: a window sum (the ``nn.conv`` primitive with a kernel of
  ones, one channel per plane) divided by a constant array of divisors (PyTorch's, ``ceil_mode`` and
  ``count_include_pad`` included).
- ``adaptive_avg_pool1d`` / ``2d`` / ``3d``: products with averaging matrices, one per axis (PyTorch's
  windows: from floor(i * L / out) to ceil((i + 1) * L / out)).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...core.device import as_array, xp_of
from .._define import on_device_of, raw, shape_of, wrap_like
from ..contraction import matmul
from ..declare import declare_function
from ..shape import reshape
from .convolution import as_float_input, batched, conv_primitive, pad_or_crop, tuple_arg, windows


def _output_size(size: int, k: int, s: int, p: int, dl: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size (a window that would start in the right padding is dropped)."""
    span = size + 2 * p - dl * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _geometry(name: str, x: Any, d: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: bool) -> tuple[tuple[int, ...], ...]:
    """(kernel, stride, padding, dilation, output size), checked as PyTorch checks them."""
    kernel = tuple_arg(name, "kernel_size", kernel_size, d)
    stride_t = kernel if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else tuple_arg(
        name, "stride", stride, d)
    pad = tuple_arg(name, "padding", padding, d, minimum=0)
    dil = tuple_arg(name, "dilation", dilation, d)
    if any(p * 2 > k for p, k in zip(pad, kernel)):
        raise ValueError(f"{name}: padding should be at most half of the kernel size, got padding={pad} and "
                         f"kernel_size={kernel}")
    size = shape_of(x)[2:]
    out = tuple(_output_size(size[i], kernel[i], stride_t[i], pad[i], dil[i], ceil_mode) for i in range(d))
    if any(o < 1 for o in out):
        raise ValueError(f"{name}: input of spatial shape {tuple(size)} is too small for kernel_size={kernel}, "
                         f"padding={pad}, dilation={dil} (output size {out})")
    return kernel, stride_t, pad, dil, out


def _pads(size: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...], pad: tuple[int, ...],
          dil: tuple[int, ...], out: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """(lo, hi) per axis such that the windows are exactly the ``out`` ones (hi < 0 crops unused entries)."""
    return tuple((p, (o - 1) * s + (k - 1) * dl + 1 - n - p) for n, k, s, p, dl, o in zip(size, kernel, stride, pad,
                                                                                          dil, out))


def _unbatch(y: Any, unbatched: bool) -> Any:
    return reshape(y, shape_of(y)[1:]) if unbatched else y


# -- max pooling --------------------------------------------------------------------------------------------
def _argmax_positions(xr: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...], pads: Any,
                      dil: tuple[int, ...], out: tuple[int, ...]) -> np.ndarray:
    """(N, C, *out) int64: the flat index (into each (N, C) plane) of each window's first maximum."""
    d = len(kernel)
    size = xr.shape[2:]
    fill = -np.inf if xr.dtype.kind == "f" else np.iinfo(xr.dtype).min
    view = windows(pad_or_crop(xr, pads, fill), kernel, stride, dil)  # (N, C, *out, *kernel)
    first = np.argmax(view.reshape(*view.shape[:2 + d], -1), axis=-1)  # NumPy: the first of equal maxima (and NaN)
    plane = pad_or_crop(xp_of(xr).arange(math.prod(size)).reshape(size), pads, -1)  # padded: -1 (never a max)
    where = windows(plane, kernel, stride, dil).reshape(*out, -1)
    lead = np.broadcast_to(where, (*xr.shape[:2], *out, where.shape[-1]))
    return np.take_along_axis(lead, first[..., None], axis=-1)[..., 0].astype(np.int64)


def _max_pool(name: str, d: int, input: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: bool, return_indices: bool) -> Any:
    x, unbatched = batched(name, as_float_input(input), d)
    kernel, stride_t, pad, dil, out = _geometry(name, x, d, kernel_size, stride, padding, dilation, ceil_mode)
    sx = shape_of(x)
    xr = as_array(raw(x))
    idx = _argmax_positions(xr, kernel, stride_t, _pads(sx[2:], kernel, stride_t, pad, dil, out), dil, out)
    flat = reshape(x, (sx[0], sx[1], -1))
    y = reshape(np.take_along_axis(flat, idx.reshape(sx[0], sx[1], -1), axis=2), (sx[0], sx[1], *out))
    y = _unbatch(y, unbatched)
    if return_indices:  # a Tensor input's indices are a Tensor, as PyTorch's
        return y, wrap_like(idx[0] if unbatched else idx, input)
    return y


def max_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Maximum over windows of the last axis (as ``torch.nn.functional.max_pool1d``); ``stride`` defaults
    to ``kernel_size``. The gradient goes to the first maximum of each window (PyTorch's choice among ties).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.max_pool1d(np.array([[[1.0, 3.0, 2.0, 2.0, 0.0]]]), 2)
        array([[[3., 2.]]])
    """
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Maximum over windows of the last two axes (as ``torch.nn.functional.max_pool2d``); ``stride``
    defaults to ``kernel_size``. The gradient goes to the first maximum of each window in row-major
    order (PyTorch's choice among ties); ``return_indices`` gives PyTorch's indices into each H * W plane.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> y, i = F.max_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2, return_indices=True)
        >>> y, i
        (array([[[[ 5.,  7.],
                 [13., 15.]]]]), array([[[[ 5,  7],
                 [13, 15]]]]))
    """
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


# -- average pooling ----------------------------------------------------------------------------------------
def _divisors(size: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...], pad: tuple[int, ...],
              out: tuple[int, ...], count_include_pad: bool) -> np.ndarray:
    """PyTorch's divisor of each window: its size clipped to the padded input (or to the input alone)."""
    total = np.ones((), dtype=np.float64)
    for n, k, s, p, o in zip(size, kernel, stride, pad, out):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        count = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        total = np.multiply.outer(total, count.astype(np.float64))
    return total


def _avg_pool(name: str, d: int, input: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
              count_include_pad: bool, divisor_override: Any = None) -> Any:
    x, unbatched = batched(name, as_float_input(input), d)
    kernel, stride_t, pad, dil, out = _geometry(name, x, d, kernel_size, stride, padding, 1, ceil_mode)
    sx = shape_of(x)
    dt = np.result_type(raw(x))
    planes = reshape(x, (sx[0] * sx[1], 1, *sx[2:]))
    ones = xp_of(raw(x)).ones((1, 1, *kernel), dtype=dt)
    sums = conv_primitive(planes, ones, stride=stride_t, padding=_pads(sx[2:], kernel, stride_t, pad, dil, out),
                          dilation=dil, groups=1)
    if divisor_override is not None:
        if not divisor_override:
            raise ValueError(f"{name}: divisor_override must be a non-zero number, got {divisor_override!r}")
        y = sums / dt.type(divisor_override)
    else:
        divisors = _divisors(sx[2:], kernel, stride_t, pad, out, count_include_pad).astype(dt)
        y = sums / xp_of(raw(x)).asarray(divisors)  # (a small copy to the device, where x is on one)
    return _unbatch(reshape(y, (sx[0], sx[1], *out)), unbatched)


def avg_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Any:
    """Mean over windows of the last axis (as ``torch.nn.functional.avg_pool1d``); ``stride`` defaults to
    ``kernel_size``; ``count_include_pad=False`` divides by the entries inside the input only.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.avg_pool1d(np.array([[[1.0, 3.0, 2.0, 2.0]]]), 2)
        array([[[2., 2.]]])
    """
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def avg_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: Any = None) -> Any:
    """Mean over windows of the last two axes (as ``torch.nn.functional.avg_pool2d``); ``stride``
    defaults to ``kernel_size``; ``divisor_override`` replaces every window's divisor.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.avg_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2)
        array([[[[ 2.5,  4.5],
                 [10.5, 12.5]]]])
    """
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


# -- adaptive average pooling ------------------------------------------------------------------------------
def _averaging_matrix(size: int, out: int, dtype: Any) -> np.ndarray:
    """(out, size): row i averages entries floor(i * size / out) to ceil((i + 1) * size / out) - 1."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    j = np.arange(size)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _adaptive(name: str, d: int, input: Any, output_size: Any) -> Any:
    x, unbatched = batched(name, as_float_input(input), d)
    size = shape_of(x)[2:]
    given = (output_size,) * d if isinstance(output_size, (int, np.integer)) or output_size is None else tuple(
        output_size)
    if len(given) != d:
        raise ValueError(f"{name}: output_size must be an int or a tuple of {d}, got {output_size!r}")
    out = tuple(size[i] if given[i] is None else given[i] for i in range(d))
    if any(not isinstance(o, (int, np.integer)) or o < 1 for o in out):
        raise ValueError(f"{name}: output_size must hold positive ints (or None), got {output_size!r}")
    dt = np.result_type(raw(x))
    return _unbatch(per_axis(x, [_averaging_matrix(n, o, dt) for n, o in zip(size, out)]), unbatched)


def per_axis(x: Any, matrices: list[np.ndarray]) -> Any:
    """x with each of its trailing ``len(matrices)`` axes taken through its (out, in) matrix: one ``matmul`` per
    axis (the last from the right; each earlier one from the left, the later axes as one), so that every
    derivative is the products'."""
    d = len(matrices)
    y = matmul(x, on_device_of(x, matrices[-1].T))
    for i in range(d - 2, -1, -1):
        shape = shape_of(y)
        at = len(shape) - d + i
        lead, rest = shape[:at], shape[at + 1:]
        rows = reshape(y, (*lead, shape[at], math.prod(rest)))
        y = reshape(matmul(on_device_of(x, matrices[i]), rows), (*lead, matrices[i].shape[0], *rest))
    return y


def adaptive_avg_pool1d(input: Any, output_size: Any) -> Any:
    """Mean over ``output_size`` windows that cover the last axis (as ``torch.nn.functional.adaptive_avg_pool1d``).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.adaptive_avg_pool1d(np.array([[[1.0, 2.0, 3.0, 4.0, 5.0]]]), 2)
        array([[[2., 4.]]])
    """
    return _adaptive("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input: Any, output_size: Any) -> Any:
    """Mean over an ``output_size`` grid of windows that covers the last two axes (as
    ``torch.nn.functional.adaptive_avg_pool2d``); ``1`` gives global average pooling.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.adaptive_avg_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 1)
        array([[[[7.5]]]])
    """
    return _adaptive("adaptive_avg_pool2d", 2, input, output_size)


def max_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Maximum over windows of the last three axes (as ``torch.nn.functional.max_pool3d``); ``stride``
    defaults to ``kernel_size``. The gradient goes to the first maximum of each window in row-major order
    (PyTorch's choice among ties); ``return_indices`` gives PyTorch's indices into each D * H * W volume.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> y, i = F.max_pool3d(np.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
        >>> y.shape, float(y.max()), int(i.max())
        ((1, 1, 1, 1, 1), 7.0, 7)
    """
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: Any = None) -> Any:
    """Mean over windows of the last three axes (as ``torch.nn.functional.avg_pool3d``); ``stride``
    defaults to ``kernel_size``; ``count_include_pad=False`` divides by the entries inside the input only;
    ``divisor_override`` replaces every window's divisor.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.avg_pool3d(np.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
        array([[[[[3.5]]]]])
    """
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def adaptive_avg_pool3d(input: Any, output_size: Any) -> Any:
    """Mean over an ``output_size`` grid of windows that covers the last three axes (as
    ``torch.nn.functional.adaptive_avg_pool3d``; ``None`` keeps that axis's size).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.adaptive_avg_pool3d(np.ones((2, 3, 4, 5, 6)), (1, None, 2)).shape
        (2, 3, 1, 5, 2)
    """
    return _adaptive("adaptive_avg_pool3d", 3, input, output_size)


for _fn in (max_pool1d, max_pool2d, max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d, adaptive_avg_pool1d,
            adaptive_avg_pool2d, adaptive_avg_pool3d):
    declare_function(_fn, namespaces=("ops", "nn.functional"), cases="none",
                     torch=f"torch.nn.functional.{_fn.__name__}")

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d"]
