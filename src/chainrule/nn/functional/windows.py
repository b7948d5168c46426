"""``torch.nn.functional``'s sliding-window functions that the fused pooling ops do not cover: ``unfold`` /
``fold`` (im2col and its transpose), ``adaptive_max_pool1d`` / ``2d`` / ``3d`` (with ``return_indices``),
``lp_pool1d`` / ``2d`` / ``3d``, ``local_response_norm``, ``max_unpool1d`` / ``2d`` / ``3d`` and the
``max_pool1d_with_indices`` / ``2d`` / ``3d`` spellings.

``unfold`` and ``fold`` are one product with a 0/1 matrix of (window entry, position) pairs made on the host once
per call and sent where the input is (linear: every derivative follows); the adaptive max pools gather each
window, padded to the largest one, and keep the first largest entry (PyTorch's choice at ties: the gradient goes
to that entry only).

Example:
    >>> import numpy as np
    >>> import chainrule.nn.functional as F
    >>> F.unfold(np.arange(9.0).reshape(1, 1, 3, 3), 2).shape
    (1, 4, 4)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...autodiff.batch_levels import is_value
from ...core.device import as_array, indices_outside, is_off_host, of
from ...ops import elementwise as ew
from ...ops._define import on_device_of, raw, xp_where
from ...ops.arrays import pad as numpy_pad
from ...ops.contraction import matmul
from ...ops.fused.convolution import tuple_arg
from ...ops.fused.pooling import avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d
from ...ops.pytorch.indexing import scatter, scatter_add
from ...ops.reductions import sum as reduce_sum
from ...tensor import Tensor

__all__ = ["unfold", "fold", "adaptive_max_pool1d", "adaptive_max_pool2d", "lp_pool1d", "lp_pool2d",
           "local_response_norm", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_unpool1d", "max_unpool2d",
           "adaptive_max_pool3d", "lp_pool3d", "max_pool3d_with_indices", "max_unpool3d"]


def _host(a: Any) -> np.ndarray:
    return of(a).to_host(a) if is_off_host(a) else np.asarray(a)


def _tensor(x: Any) -> Any:
    if is_value(x):
        return x
    arr = as_array(x)
    return Tensor(arr if arr.dtype.kind in "fc" else arr.astype(np.float64))


def _pair(name: str, what: str, v: Any) -> tuple[int, int]:
    t = (int(v), int(v)) if isinstance(v, (int, np.integer)) else tuple(int(a) for a in v)
    if len(t) != 2:
        raise ValueError(f"{name}: {what} must be an int or a pair, got {v!r}")
    return t  # type: ignore[return-value]


def _window_matrix(name: str, size: tuple[int, int], kernel_size: Any, dilation: Any, padding: Any,
                   stride: Any) -> tuple[np.ndarray, tuple[int, int], tuple[int, int], int]:
    """The 0/1 matrix ``(kh * kw * L, Hp * Wp)``: row (k, l) picks the padded input's entry window l sees at k."""
    (kh, kw), (dh, dw) = _pair(name, "kernel_size", kernel_size), _pair(name, "dilation", dilation)
    (ph, pw), (sh, sw) = _pair(name, "padding", padding), _pair(name, "stride", stride)
    if min(kh, kw, dh, dw, sh, sw) <= 0 or min(ph, pw) < 0:
        raise ValueError(f"{name}: kernel_size, dilation and stride must be positive and padding non-negative")
    hp, wp = size[0] + 2 * ph, size[1] + 2 * pw
    oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(f"{name}: the padded input {hp}x{wp} is smaller than the dilated kernel "
                         f"{dh * (kh - 1) + 1}x{dw * (kw - 1) + 1}; pad it or use a smaller kernel")
    ki, kj, li, lj = np.meshgrid(np.arange(kh), np.arange(kw), np.arange(oh), np.arange(ow), indexing="ij")
    cols = ((li * sh + ki * dh) * wp + lj * sw + kj * dw).reshape(-1)
    m = np.zeros((cols.size, hp * wp))
    m[np.arange(cols.size), cols] = 1.0
    return m, (hp, wp), (ph, pw), oh * ow


def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Any:  # noqa: A002
    """im2col: ``(N, C, H, W)`` (or ``(C, H, W)``) to ``(N, C * kh * kw, L)``, each column one window's entries
    (channel first, then the kernel's rows and columns), as PyTorch's."""
    x = _tensor(input)
    shape = tuple(np.shape(raw(x)))
    if len(shape) not in (3, 4):
        raise ValueError(f"unfold: expects a 3-d (unbatched) or 4-d input, got shape {shape}")
    lead, (c, h, w) = shape[:-3], shape[-3:]
    m, (hp, wp), (ph, pw), n_windows = _window_matrix("unfold", (h, w), kernel_size, dilation, padding, stride)
    xp_ = numpy_pad(x, ((0, 0),) * (len(shape) - 2) + ((ph, ph), (pw, pw)), mode="constant") if ph or pw else x
    cols = matmul(xp_.reshape(*lead, c, hp * wp), on_device_of(raw(x), m.T.astype(np.result_type(raw(x)))))
    k = m.shape[0] // n_windows
    return cols.reshape(*lead, c, k, n_windows).reshape(*lead, c * k, n_windows)


def fold(input: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,  # noqa: A002
         stride: Any = 1) -> Any:
    """col2im, the transpose of :func:`unfold`: ``(N, C * kh * kw, L)`` to ``(N, C, H, W)``, overlapping entries
    summed."""
    x = _tensor(input)
    shape = tuple(np.shape(raw(x)))
    if len(shape) not in (2, 3):
        raise ValueError(f"fold: expects a 2-d (unbatched) or 3-d input, got shape {shape}")
    h, w = _pair("fold", "output_size", output_size)
    m, (hp, wp), (ph, pw), n_windows = _window_matrix("fold", (h, w), kernel_size, dilation, padding, stride)
    k = m.shape[0] // n_windows
    lead, (ck, n) = shape[:-2], shape[-2:]
    if ck % k or n != n_windows:
        raise ValueError(f"fold: input of shape {shape} does not fit: dim -2 must be a multiple of the kernel's "
                         f"{k} entries and dim -1 the number of windows {n_windows} for output_size {(h, w)}")
    out = matmul(x.reshape(*lead, ck // k, k * n), on_device_of(raw(x), m.astype(np.result_type(raw(x)))))
    out = out.reshape(*lead, ck // k, hp, wp)
    return out[..., ph:ph + h, pw:pw + w] if ph or pw else out


def _adaptive_windows(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's windows: ``[floor(i L / out), ceil((i + 1) L / out))``, as (index, valid) arrays padded to the
    largest."""
    starts = [(i * size) // out for i in range(out)]
    ends = [-(-((i + 1) * size) // out) for i in range(out)]
    width = max(e - s for s, e in zip(starts, ends))
    idx = np.array([[min(s + j, e - 1) for j in range(width)] for s, e in zip(starts, ends)])
    valid = np.array([[s + j < e for j in range(width)] for s, e in zip(starts, ends)])
    return idx, valid


def _adaptive_max(name: str, x: Any, output_size: tuple[int | None, ...], return_indices: bool) -> Any:
    x = _tensor(x)
    shape = tuple(np.shape(raw(x)))
    d = len(output_size)
    if len(shape) not in (d + 1, d + 2):
        raise ValueError(f"{name}: expects a {d + 1}-d (unbatched) or {d + 2}-d input, got shape {shape}")
    spatial = shape[-d:]
    outs = tuple(s if o is None else int(o) for s, o in zip(spatial, output_size))
    if min(outs) <= 0:
        raise ValueError(f"{name}: output_size must be positive, got {output_size}")
    windows = [_adaptive_windows(s, o) for s, o in zip(spatial, outs)]
    # axis k's (out, width) index array placed at positions k (the output) and d + k (the window), so that one
    # gather gives (..., *outs, *widths)
    picks, ok, flat = [], np.ones((1,) * 2 * d, bool), np.zeros((1,) * 2 * d, np.int64)
    for k, (idx, valid) in enumerate(windows):
        at = [1] * 2 * d
        at[k], at[d + k] = idx.shape
        picks.append(on_device_of(raw(x), idx.reshape(at)))
        ok = ok & valid.reshape(at)
        flat = flat * spatial[k] + idx.reshape(at)  # the flat (row-major) index into the spatial axes
    gathered = x[(Ellipsis, *picks)].reshape(*shape[:-d], *outs, -1)  # (..., *outs, entries of the window)
    ok, flat = ok.reshape(*outs, -1), flat.reshape(*outs, -1)
    xp = xp_where(x)
    g = raw(gathered)
    ok_d = on_device_of(raw(x), ok)
    lowest = xp.where(ok_d, g, -np.inf)
    nan = xp.isnan(g) & ok_d  # PyTorch's kernel takes a NaN as the largest
    chosen = xp.where(nan.any(axis=-1), nan.argmax(axis=-1), lowest.argmax(axis=-1))
    pick = xp.arange(g.shape[-1]) == chosen[..., None]
    out = reduce_sum(ew.where(pick, gathered, np.zeros((), g.dtype)), axis=-1)
    if not return_indices:
        return out
    indices = xp.take_along_axis(xp.broadcast_to(on_device_of(raw(x), flat), g.shape), chosen[..., None], -1)[..., 0]
    indices = indices.astype(np.int64)
    return out, Tensor._wrap(indices) if isinstance(out, Tensor) else indices


def adaptive_max_pool1d(input: Any, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Max over ``output_size`` windows of the last dim (PyTorch's window bounds); ``return_indices``: also where
    each maximum is (the first, at ties)."""
    return _adaptive_max("adaptive_max_pool1d", input, (output_size,) if not isinstance(output_size, (tuple, list))
                         else tuple(output_size), return_indices)


def adaptive_max_pool2d(input: Any, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Max over ``output_size`` (an int, a pair, None keeps that size) windows of the last two dims; indices are
    flat over (H, W), as PyTorch's."""
    size = (output_size, output_size) if not isinstance(output_size, (tuple, list)) else tuple(output_size)
    return _adaptive_max("adaptive_max_pool2d", input, size, return_indices)


def adaptive_max_pool3d(input: Any, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Max over ``output_size`` (an int, a triple, None keeps that size) windows of the last three dims; indices
    are flat over (D, H, W), as PyTorch's.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> y, i = F.adaptive_max_pool3d(np.arange(24.0).reshape(1, 2, 3, 4), (1, 2, None), return_indices=True)
        >>> y.shape, i[0, 0].tolist()
        ((1, 1, 2, 4), [[16, 17, 18, 19], [20, 21, 22, 23]])
    """
    size = (output_size,) * 3 if not isinstance(output_size, (tuple, list)) else tuple(output_size)
    return _adaptive_max("adaptive_max_pool3d", input, size, return_indices)


def _lp(name: str, pooled: Any, norm_type: float, count: int) -> Any:
    p = float(norm_type)
    v = raw(pooled)
    # PyTorch's (sign(out) * relu(|out|)) * count, to the power 1 / p: out's values, its derivative 0 at 0
    kept = ew.where(v != 0, pooled, np.zeros((), v.dtype))
    return ew.power(ew.multiply(kept, float(count)), 1.0 / p)


def lp_pool1d(input: Any, norm_type: float, kernel_size: int, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Any:
    """``(sum over each window of x**p) ** (1/p)``, as PyTorch's (through ``avg_pool1d``)."""
    x = _tensor(input)
    pooled = avg_pool1d(ew.power(x, float(norm_type)), kernel_size, stride, 0, ceil_mode)
    return _lp("lp_pool1d", pooled, norm_type, int(kernel_size))


def lp_pool2d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Any:
    """``(sum over each window of x**p) ** (1/p)`` over the last two dims, as PyTorch's."""
    x = _tensor(input)
    kh, kw = _pair("lp_pool2d", "kernel_size", kernel_size)
    pooled = avg_pool2d(ew.power(x, float(norm_type)), (kh, kw), stride, 0, ceil_mode)
    return _lp("lp_pool2d", pooled, norm_type, kh * kw)


def lp_pool3d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Any:
    """``(sum over each window of x**p) ** (1/p)`` over the last three dims, as PyTorch's (through ``avg_pool3d``).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> y = F.lp_pool3d(np.full((1, 1, 2, 2, 2), 3.0), 2, 2)  # sqrt(8 * 3**2)
        >>> y.shape, round(y.item(), 4)
        ((1, 1, 1, 1, 1), 8.4853)
    """
    x = _tensor(input)
    kernel = tuple_arg("lp_pool3d", "kernel_size", kernel_size, 3)
    pooled = avg_pool3d(ew.power(x, float(norm_type)), kernel, stride, 0, ceil_mode)
    return _lp("lp_pool3d", pooled, norm_type, math.prod(kernel))


def local_response_norm(input: Any, size: int, alpha: float = 1e-4, beta: float = 0.75,  # noqa: A002
                        k: float = 1.0) -> Any:
    """``x / (k + alpha * mean of x**2 over ``size`` neighbouring channels) ** beta`` (channels: dim 1; the mean
    counts the zero padding at the edges, as PyTorch's)."""
    x = _tensor(input)
    shape = tuple(np.shape(raw(x)))
    if len(shape) < 3:
        raise ValueError(f"local_response_norm: expects an input with 3 or more dims (N, C, ...), got shape {shape}")
    c = shape[1]
    sq = ew.multiply(x, x)
    widths = ((0, 0), (size // 2, (size - 1) // 2)) + ((0, 0),) * (len(shape) - 2)
    padded = numpy_pad(sq, widths, mode="constant")
    total = padded[:, 0:c]
    for j in range(1, size):
        total = ew.add(total, padded[:, j:j + c])
    div = ew.power(ew.add(ew.multiply(total, alpha / size), k), beta)
    return ew.divide(x, div)


def max_pool1d_with_indices(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = True) -> Any:
    """``max_pool1d(..., return_indices=True)`` (PyTorch's name)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = True) -> Any:
    """``max_pool2d(..., return_indices=True)`` (PyTorch's name)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool3d_with_indices(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = True) -> Any:
    """``max_pool3d(..., return_indices=True)`` (PyTorch's name)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def _unpool(name: str, x: Any, indices: Any, kernel: tuple[int, ...], stride: Any, padding: Any,
            output_size: Any) -> Any:
    x = _tensor(x)
    d = len(kernel)
    shape = tuple(np.shape(raw(x)))
    if len(shape) not in (d + 1, d + 2) or tuple(np.shape(raw(indices))) != shape:
        raise ValueError(f"{name}: expects a {d + 1}-d or {d + 2}-d input and indices of its shape, got input "
                         f"{shape} and indices {tuple(np.shape(raw(indices)))}")
    stride = kernel if stride is None else (stride,) * d if isinstance(stride, (int, np.integer)) else tuple(stride)
    padding = (padding,) * d if isinstance(padding, (int, np.integer)) else tuple(padding)
    size = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(shape[-d:], stride, padding, kernel))
    if output_size is not None:
        size = tuple(int(v) for v in tuple(output_size)[-d:])
    lead = shape[:-d]
    plane = int(np.prod(size))
    idx = as_array(raw(indices)).reshape(*lead, -1)
    if indices_outside(idx, plane):
        raise ValueError(f"{name}: found an invalid max index (the output has {plane} entries per plane, "
                         f"output size {size}); pass the indices the max pool returned and its output_size")
    dt = np.result_type(raw(x))
    zeros = Tensor(xp_where(x).zeros((*lead, plane), dtype=dt))
    values = x.reshape(*lead, -1)
    host = _host(idx).reshape(-1, idx.shape[-1])
    first = np.ones(host.shape, bool)  # overlapping windows may name one position twice (with the same value)
    for row, picks in zip(first, host):
        _, keep = np.unique(picks, return_index=True)
        row[:] = False
        row[keep] = True
    if first.all():
        return scatter(zeros, -1, idx, values).reshape(*lead, *size)
    # each position written once: the first of its copies (PyTorch's gradient reaches every copy; here the first)
    kept = ew.where(on_device_of(raw(x), first.reshape(idx.shape)), values, np.zeros((), dt))
    return scatter_add(zeros, -1, idx, kept).reshape(*lead, *size)


def max_unpool1d(input: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                 output_size: Any = None) -> Any:
    """The inverse of ``max_pool1d``: each value put back where ``indices`` says its maximum was, zeros
    elsewhere."""
    k = (int(kernel_size),) if isinstance(kernel_size, (int, np.integer)) else tuple(kernel_size)
    return _unpool("max_unpool1d", input, indices, k, stride, padding, output_size)


def max_unpool2d(input: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                 output_size: Any = None) -> Any:
    """The inverse of ``max_pool2d``: each value put back at its flat (H, W) index, zeros elsewhere."""
    k = _pair("max_unpool2d", "kernel_size", kernel_size)
    return _unpool("max_unpool2d", input, indices, k, stride, padding, output_size)


def max_unpool3d(input: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                 output_size: Any = None) -> Any:
    """The inverse of ``max_pool3d``: each value put back at its flat (D, H, W) index, zeros elsewhere.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> y, i = F.max_pool3d(np.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
        >>> F.max_unpool3d(y, i, 2).reshape(-1).tolist()
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 7.0]
    """
    k = tuple_arg("max_unpool3d", "kernel_size", kernel_size, 3)
    return _unpool("max_unpool3d", input, indices, k, stride, padding, output_size)
