"""``torch.nn.functional``'s fractional max pooling (Graham, 2014): ``fractional_max_pool2d`` / ``3d``.

Each plane (example and channel) has its own pseudo-random windows: one sample ``u`` in [0, 1) per spatial axis
gives the window starts ``int((i + u) * alpha) - int(u * alpha)`` for ``i < out - 1``, the last one at
``size - kernel``, with ``alpha = (size - kernel) / (out - 1)`` (PyTorch's kernel, in the input's dtype). The
samples are ``_random_samples`` (PyTorch's name: shape (N, C, 2) or (N, C, 3), the last axis in the order
width, height for 2-d and time, height, width for 3-d, as PyTorch reads them) or drawn from ``rng`` (a seed or
Generator; None: the default generator, seeded by ``manual_seed``). Each window is gathered, and its first
largest entry (a NaN counts as the largest) is the output: the gradient goes to that entry, as PyTorch's.

Example:
    >>> import numpy as np
    >>> import chainrule.nn.functional as F
    >>> x = np.arange(25.0).reshape(1, 1, 5, 5)
    >>> F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=np.full((1, 1, 2), 0.5)).tolist()
    [[[[6.0, 9.0], [21.0, 24.0]]]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.device import as_array, is_off_host, of
from ...ops import elementwise as ew
from ...ops._define import on_device_of, raw, xp_where
from ...ops.fused.convolution import tuple_arg
from ...ops.reductions import sum as reduce_sum
from ...tensor import Tensor
from .draws import drawn_like
from .losses_margin import _tensor

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices"]

_SAMPLE_AXES = {2: (1, 0), 3: (0, 1, 2)}  # which sample each spatial axis (height, width / t, h, w) reads


def _starts(u: np.ndarray, size: int, out: int, kernel: int) -> np.ndarray:
    """PyTorch's window starts along one axis for samples ``u`` (N, C): shape (N, C, out)."""
    starts = np.full((*u.shape, out), size - kernel, np.int64)
    if out > 1:
        alpha = u.dtype.type(size - kernel) / u.dtype.type(out - 1)
        i = np.arange(out - 1, dtype=u.dtype)
        starts[..., :-1] = ((i + u[..., None]) * alpha).astype(np.int64) - (u[..., None] * alpha).astype(np.int64)
    return starts


def _fractional_max(name: str, d: int, input: Any, kernel_size: Any, output_size: Any, output_ratio: Any,  # noqa: A002
                    return_indices: bool, samples: Any, rng: Any) -> Any:
    x = _tensor(input)
    shape = tuple(np.shape(raw(x)))
    if len(shape) not in (d + 1, d + 2):
        raise ValueError(f"{name}: expects a {d + 1}-d (unbatched) or {d + 2}-d input, got shape {shape}")
    unbatched = len(shape) == d + 1
    if unbatched:
        x = x.reshape(1, *shape)
    n, c, spatial = *np.shape(raw(x))[:2], np.shape(raw(x))[2:]
    kernel = tuple_arg(name, "kernel_size", kernel_size, d)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name}: pass output_size or output_ratio (one of them)")
    if output_size is None:
        ratio = (output_ratio,) * d if np.ndim(output_ratio) == 0 else tuple(output_ratio)
        if len(ratio) != d or not all(0 < float(r) < 1 for r in ratio):
            raise ValueError(f"{name}: output_ratio must be a number or {d} numbers in (0, 1), got {output_ratio!r}")
        outs = tuple(int(s * float(r)) for s, r in zip(spatial, ratio))
    else:
        outs = tuple_arg(name, "output_size", output_size, d)
    for s, o, k in zip(spatial, outs, kernel):
        if o <= 0 or o + k - 1 > s:
            raise ValueError(f"{name}: output size {outs} with kernel {kernel} does not fit input {tuple(spatial)}: "
                             "each needs output + kernel - 1 <= input size")
    dt = np.result_type(raw(x))
    if samples is None:
        samples = drawn_like(raw(x), rng, (n, c, d), dt, lambda u: u)
    u = as_array(raw(samples))
    u = of(u).to_host(u) if is_off_host(u) else u
    if u.ndim != 3 or u.shape[0] < n or u.shape[1:] != (c, d):
        raise ValueError(f"{name}: _random_samples must have shape {(n, c, d)} (batch, channels, {d}), got {u.shape}")
    u = u[:n].astype(dt)  # (PyTorch reads the first batch's samples only, for an unbatched input)
    # axis k's (N, C, out, kernel) index array placed so that one gather gives (N, C, *outs, *kernels)
    picks, flat = [], np.zeros((1,) * (2 + 2 * d), np.int64)
    for k in range(d):
        idx = _starts(u[..., _SAMPLE_AXES[d][k]], spatial[k], outs[k], kernel[k])[..., None] + np.arange(kernel[k])
        at = [n, c] + [1] * 2 * d
        at[2 + k], at[2 + d + k] = outs[k], kernel[k]
        picks.append(idx.reshape(at))
        flat = flat * spatial[k] + idx.reshape(at)  # the flat (row-major) index into the spatial axes
    planes = (np.arange(n).reshape(n, *[1] * (1 + 2 * d)), np.arange(c).reshape(1, c, *[1] * 2 * d))
    where = raw(x)
    gathered = x[tuple(on_device_of(where, p) for p in (*planes, *picks))].reshape(n, c, *outs, -1)
    xp = xp_where(x)
    g = raw(gathered)
    nan = xp.isnan(g)  # PyTorch's kernel takes a NaN as the largest
    chosen = xp.where(nan.any(axis=-1), nan.argmax(axis=-1), g.argmax(axis=-1))
    pick = xp.arange(g.shape[-1]) == chosen[..., None]
    out = reduce_sum(ew.where(pick, gathered, np.zeros((), g.dtype)), axis=-1)
    flat = xp.broadcast_to(on_device_of(where, flat.reshape(n, c, *outs, -1)), g.shape)
    indices = xp.take_along_axis(flat, chosen[..., None], -1)[..., 0].astype(np.int64)
    if unbatched:
        out, indices = out.reshape(*out.shape[1:]), indices[0]
    if not return_indices:
        return out
    return out, Tensor._wrap(indices) if isinstance(out, Tensor) else indices


def fractional_max_pool2d(input: Any, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False, _random_samples: Any = None, *,
                          rng: Any = None) -> Any:
    """Max over pseudo-random ``kernel_size`` windows of the last two dims, ``output_size`` of them (or
    ``output_ratio`` of the input's size); ``return_indices``: also where each maximum is (flat in the plane)."""
    return _fractional_max("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                           return_indices, _random_samples, rng)


def fractional_max_pool3d(input: Any, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False, _random_samples: Any = None, *,
                          rng: Any = None) -> Any:
    """:func:`fractional_max_pool2d` over the last three dims."""
    return _fractional_max("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                           return_indices, _random_samples, rng)


def fractional_max_pool2d_with_indices(input: Any, kernel_size: Any, output_size: Any = None,  # noqa: A002
                                       output_ratio: Any = None, return_indices: bool = True,
                                       _random_samples: Any = None, *, rng: Any = None) -> Any:
    """``fractional_max_pool2d(..., return_indices=True)`` (PyTorch's name)."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples, rng=rng)


def fractional_max_pool3d_with_indices(input: Any, kernel_size: Any, output_size: Any = None,  # noqa: A002
                                       output_ratio: Any = None, return_indices: bool = True,
                                       _random_samples: Any = None, *, rng: Any = None) -> Any:
    """``fractional_max_pool3d(..., return_indices=True)`` (PyTorch's name)."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples, rng=rng)
