"""``torch.nn.functional``'s rearrangements of channels and their dropout: ``pixel_shuffle``,
``pixel_unshuffle``, ``channel_shuffle``, ``dropout1d``, ``dropout2d``, ``dropout3d``, ``alpha_dropout``,
``feature_alpha_dropout``.

The rearrangements are reshapes and a transpose (linear: every derivative follows); the channel dropouts zero
whole channels, with one mask entry per (sample, channel) made where the input is.

Example:
    >>> import numpy as np
    >>> import chainrule.nn.functional as F
    >>> F.pixel_shuffle(np.arange(8.0).reshape(1, 4, 1, 2), 2).shape
    (1, 1, 2, 4)
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...core.device import as_array
from ...core.errors import ChainruleWarning
from ...ops import elementwise as ew
from ...ops._define import raw, xp_where
from ...ops.fused.attention import masked_by_dropout
from ...tensor import Tensor
from .. import init
from .draws import drawn_like
from .writes import written_over

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "dropout1d", "dropout2d", "dropout3d",
           "alpha_dropout", "feature_alpha_dropout"]

_SELU_ALPHA_PRIME = -1.7580993408473766  # -selu's scale * alpha: the value alpha dropout drops to


def _tensor(x: Any) -> Any:
    return x if isinstance(x, Tensor) or hasattr(x, "reshape") and not isinstance(x, (list, tuple)) else as_array(x)


def _shape(name: str, x: Any, least: int) -> tuple[int, ...]:
    shape = tuple(np.shape(raw(x)))
    if len(shape) < least:
        raise ValueError(f"{name}: expects an input with at least {least} dims, got shape {shape}")
    return shape


def pixel_shuffle(input: Any, upscale_factor: int) -> Any:  # noqa: A002
    """``(*, C * r**2, H, W)`` to ``(*, C, H * r, W * r)``, ``r = upscale_factor`` (sub-pixel convolution)."""
    x, r = _tensor(input), int(upscale_factor)
    *lead, c, h, w = _shape("pixel_shuffle", x, 3)
    if r <= 0 or c % (r * r):
        raise ValueError(f"pixel_shuffle: the channel dim (size {c}, of input shape {tuple(np.shape(raw(x)))}) must "
                         f"be divisible by upscale_factor**2 = {r * r}; upscale_factor must be positive")
    n = len(lead)
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Any, downscale_factor: int) -> Any:  # noqa: A002
    """``(*, C, H * r, W * r)`` to ``(*, C * r**2, H, W)``, ``r = downscale_factor``: undoes ``pixel_shuffle``."""
    x, r = _tensor(input), int(downscale_factor)
    *lead, c, h, w = _shape("pixel_unshuffle", x, 3)
    if r <= 0 or h % r or w % r:
        raise ValueError(f"pixel_unshuffle: height {h} and width {w} must be divisible by downscale_factor {r} "
                         "(a positive integer)")
    n = len(lead)
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    y = y.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return y.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input: Any, groups: int) -> Any:  # noqa: A002
    """``(N, C, *)``: the channels, seen as ``groups`` rows of ``C / groups``, read column by column."""
    x, g = _tensor(input), int(groups)
    n, c, *rest = _shape("channel_shuffle", x, 3)
    if g <= 0 or c % g:
        raise ValueError(f"channel_shuffle: the number of channels ({c}) must be divisible by groups ({g}), "
                         "a positive integer")
    y = x.reshape(n, g, c // g, *rest).swapaxes(1, 2)
    return y.reshape(n, c, *rest)


def _drops(name: str, p: float, training: bool) -> bool:
    """Whether a dropout with probability ``p`` changes anything (a ``p`` outside [0, 1] raises)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name}: dropout probability has to be between 0 and 1, but got {p}")
    return training and p != 0.0


def _channel_dropout(name: str, x: Any, p: float, training: bool, batched: bool, rng: Any) -> Any:
    if not _drops(name, p, training):
        return x
    x = _tensor(x)
    shape = tuple(np.shape(raw(x)))
    dt = np.result_type(raw(x))
    if dt.kind not in "fc":
        x, dt = x.astype(np.float64), np.dtype(np.float64)
    keep = 2 if batched else 1
    mask_shape = shape[:keep] + (1,) * (len(shape) - keep)
    if p == 1.0:
        return ew.multiply(x, xp_where(x).zeros(mask_shape, dt))
    where = x._data if isinstance(x, Tensor) else None
    return ew.multiply(x, masked_by_dropout(where, init.generator(rng) if rng is None else rng, mask_shape, p, dt))


def _out_of_place(name: str, inplace: bool, input: Any, fn: Any) -> Any:  # noqa: A002
    """``fn(input)``; with PyTorch's ``inplace=True`` written into the input, as PyTorch's (recorded in the graph:
    nn/functional/writes.py). The layers' flag (``nn.Dropout2d(inplace=True)``) computes out of place."""
    if not isinstance(inplace, bool):
        raise TypeError(f"{name}: inplace must be a bool, got {inplace!r}")
    return written_over(f"{name}_", fn)(input) if inplace else fn(input)


def _dims(name: str, x: Any, spatial: int) -> bool:
    nd = np.ndim(raw(x))
    if nd not in (spatial + 1, spatial + 2):
        raise ValueError(f"{name}: expected {spatial + 1}-d (unbatched) or {spatial + 2}-d (batched) input, got "
                         f"shape {tuple(np.shape(raw(x)))}")
    return nd == spatial + 2


def dropout1d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False,  # noqa: A002
              rng: Any = None) -> Any:
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` with probability ``p``, scaling the rest by 1/(1-p)."""
    return _out_of_place("dropout1d", inplace, input, lambda x: _channel_dropout(
        "dropout1d", x, p, training, _dims("dropout1d", x, 1), rng))


def dropout2d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False,  # noqa: A002
              rng: Any = None) -> Any:
    """Zero whole channels of ``(N, C, H, W)`` or ``(C, H, W)`` with probability ``p``. A 3-d input is taken as
    ``(N, C, L)``, as PyTorch does (with its warning)."""
    nd = np.ndim(raw(input))
    if nd == 3:
        warnings.warn("dropout2d: received a 3-d input; taken as (N, C, L), channel-wise 1-d dropout (PyTorch's "
                      "behaviour); use dropout1d for that, or add a batch dim", ChainruleWarning, stacklevel=2)
        return _out_of_place("dropout2d", inplace, input, lambda x: _channel_dropout(
            "dropout2d", x, p, training, True, rng))
    return _out_of_place("dropout2d", inplace, input, lambda x: _channel_dropout(
        "dropout2d", x, p, training, _dims("dropout2d", x, 2), rng))


def dropout3d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False,  # noqa: A002
              rng: Any = None) -> Any:
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` with probability ``p``."""
    return _out_of_place("dropout3d", inplace, input, lambda x: _channel_dropout(
        "dropout3d", x, p, training, _dims("dropout3d", x, 3), rng))


def _alpha(name: str, x: Any, p: float, training: bool, mask_shape: Any, rng: Any) -> Any:
    if not _drops(name, p, training):
        return x
    x = _tensor(x)
    dt = np.result_type(raw(x))
    if p == 1.0:
        return ew.multiply(x, xp_where(x).zeros((), dt))
    a = (1.0 / ((_SELU_ALPHA_PRIME ** 2 * p + 1) * (1 - p))) ** 0.5
    b = -a * _SELU_ALPHA_PRIME * p
    # PyTorch's (x * keep + alpha' * (1 - keep)) * a + b, as (x - alpha') * (a keep) + (a alpha' + b): one drawn array
    scale = drawn_like(x, rng, mask_shape, dt, _kept, p, a)
    return ew.add(ew.multiply(ew.subtract(x, _SELU_ALPHA_PRIME), scale), a * _SELU_ALPHA_PRIME + b)


def _kept(u: Any, p: float, scale: float) -> Any:
    return (u >= p) * scale


def alpha_dropout(input: Any, p: float = 0.5, training: bool = False, inplace: bool = False,  # noqa: A002
                  rng: Any = None) -> Any:
    """Dropout that keeps a SELU network's mean and variance: dropped entries take SELU's negative saturation,
    then all are scaled and shifted back."""
    return _out_of_place("alpha_dropout", inplace, input, lambda x: _alpha(
        "alpha_dropout", x, p, training, np.shape(raw(x)), rng))


def feature_alpha_dropout(input: Any, p: float = 0.5, training: bool = False, inplace: bool = False,  # noqa: A002
                          rng: Any = None) -> Any:
    """``alpha_dropout`` of whole channels (one draw per (sample, channel))."""
    shape = tuple(np.shape(raw(input)))
    return _out_of_place("feature_alpha_dropout", inplace, input, lambda x: _alpha(
        "feature_alpha_dropout", x, p, training, shape[:2] + (1,) * (len(shape) - 2), rng))
