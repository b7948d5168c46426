"""Resampling (PyTorch's ``interpolate``): modes ``nearest``, ``nearest-exact``, ``linear`` (N, C, L),
``bilinear`` and ``bicubic`` (N, C, H, W), ``trilinear`` (N, C, D, H, W) and ``area``, by ``size`` or
``scale_factor``.

Each spatial axis is resampled by a constant matrix (out, in) whose rows hold the interpolation weights
(one 1 for nearest, two weights for linear, four for cubic: Keys' kernel with a = -0.75 over the neighbours
clamped to the edge, as PyTorch's), applied with ``matmul``: gradients of every order come from
the matrix product's rules, and the source positions are PyTorch's (``align_corners``, and 1 / scale_factor
as the step when a scale factor is given).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._define import raw, shape_of
from ..declare import declare_function
from .convolution import as_float_input
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, per_axis

_MODES = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "linear": (1,), "bilinear": (2,), "trilinear": (3,),
          "area": (1, 2, 3), "bicubic": (2,)}
_LINEAR = ("linear", "bilinear", "trilinear", "bicubic")  # the modes that take align_corners


def _cubic_weights(t: np.ndarray) -> np.ndarray:
    """PyTorch's cubic convolution weights (a = -0.75) of the neighbours at -1, 0, 1, 2 for offsets ``t``."""
    a = -0.75

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=-1)


def _matrix(mode: str, n_in: int, n_out: int, scale: float | None, align_corners: bool, dt: np.dtype) -> np.ndarray:
    """The (n_out, n_in) matrix taking an axis of n_in values to n_out (PyTorch's source positions)."""
    dst = np.arange(n_out, dtype=np.float64)
    m = np.zeros((n_out, n_in), dtype=dt)
    step = n_in / n_out if scale is None else 1.0 / scale
    if mode in ("nearest", "nearest-exact"):
        src = np.floor((dst + 0.5) * step) if mode == "nearest-exact" else np.floor(dst * step)
        m[np.arange(n_out), np.minimum(src.astype(np.int64), n_in - 1)] = 1
        return m
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        src = (dst + 0.5) * step - 0.5
        src = src if mode == "bicubic" else np.maximum(src, 0.0)  # (PyTorch clamps at 0 for the linear modes only)
    if mode == "bicubic":
        lo = np.floor(src).astype(np.int64)
        taps = np.clip(lo[:, None] + np.arange(-1, 3), 0, n_in - 1)  # the neighbours, clamped to the edge
        np.add.at(m, (np.repeat(np.arange(n_out), 4), taps.ravel()), _cubic_weights(src - lo).ravel())
        return m
    lo = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    frac = src - lo
    np.add.at(m, (np.arange(n_out), lo), 1.0 - frac)
    np.add.at(m, (np.arange(n_out), hi), frac)
    return m


def interpolate(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Any:
    """Resample the spatial axes of input (N, C, L), (N, C, H, W) or (N, C, D, H, W) to ``size``, or to
    floor(in * ``scale_factor``) (as ``torch.nn.functional.interpolate``). ``mode``: ``"nearest"``,
    ``"nearest-exact"``, ``"linear"`` (3-D input), ``"bilinear"`` or ``"bicubic"`` (4-D input), ``"trilinear"``
    (5-D input) or ``"area"``; ``align_corners`` (linear and cubic modes only): the corner pixels' centres line up.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.interpolate(np.array([[[1.0, 2.0]]]), scale_factor=2)
        array([[[1., 1., 2., 2.]]])
        >>> F.interpolate(np.array([[[1.0, 2.0]]]), size=3, mode="linear", align_corners=True)
        array([[[1. , 1.5, 2. ]]])
    """
    name = "interpolate"
    x = as_float_input(input)
    sx = shape_of(x)
    d = len(sx) - 2
    if mode not in _MODES:
        raise NotImplementedError(f"{name}: mode {mode!r} is not supported; chainrule has {sorted(_MODES)}")
    if d not in _MODES[mode]:
        raise ValueError(f"{name}: mode {mode!r} takes a {' or '.join(str(k + 2) for k in _MODES[mode])}-D input "
                         f"(N, C, *spatial), got shape {sx}")
    if align_corners is not None and mode not in _LINEAR:
        raise ValueError(f"{name}: align_corners can only be set with the linear modes, not mode={mode!r}")
    if antialias:
        raise NotImplementedError(f"{name}: antialias=True is not supported")
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{name}: give exactly one of size and scale_factor")
    spatial = sx[2:]
    scales: tuple[float | None, ...] = (None,) * d
    if size is not None:
        out = (size,) * d if isinstance(size, (int, np.integer)) else tuple(size)
        if len(out) != d or any(not isinstance(o, (int, np.integer)) or o < 1 for o in out):
            raise ValueError(f"{name}: size must be a positive int or a tuple of {d}, got {size!r}")
    else:
        factors = (scale_factor,) * d if isinstance(scale_factor, (int, float, np.number)) else tuple(scale_factor)
        if len(factors) != d or any(f <= 0 for f in factors):
            raise ValueError(f"{name}: scale_factor must be a positive number or a tuple of {d}, got {scale_factor!r}")
        out = tuple(math.floor(n * float(f)) for n, f in zip(spatial, factors))
        if any(o < 1 for o in out):
            raise ValueError(f"{name}: scale_factor {scale_factor!r} makes the input {spatial} empty")
        if not recompute_scale_factor:
            scales = tuple(float(f) for f in factors)
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[d - 1](x, out)
    dt = np.result_type(raw(x))
    corners = bool(align_corners)
    if dt.kind in "iub" and mode not in ("nearest", "nearest-exact"):
        # integer images (uint8): the fractional weights in float32 (in the input's dtype they were 0), the result
        # rounded back; PyTorch's uint8 kernel rounds fixed-point passes, so an entry may differ from it by 1
        weights = [_matrix(mode, n, o, f, corners, np.dtype(np.float32)) for n, o, f in zip(spatial, out, scales)]
        return np.rint(per_axis(x.astype(np.float32), weights)).astype(dt)
    return per_axis(x, [_matrix(mode, n, o, f, corners, dt) for n, o, f in zip(spatial, out, scales)])


declare_function(interpolate, namespaces=("ops", "nn.functional"), cases="none",
                 torch="torch.nn.functional.interpolate")

__all__ = ["interpolate"]
