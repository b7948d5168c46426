"""The later additions to ``chainrule.nn.functional``, gathered for its ``__init__`` (one import line there):
activations (``activations_shrink``), channel rearrangements and dropouts (``channels``), distances
(``distances``), multi-class losses (``losses_multiclass``), the CTC loss (``losses_ctc``), sliding windows
(``windows``), fractional max pooling (``fractional_pool``) and PyTorch's deprecated ``upsample`` spellings."""

from __future__ import annotations

import warnings
from typing import Any

from ...core.errors import ChainruleWarning
from ...ops import elementwise as ew
from ...ops.fused.interpolate import interpolate
from .activations_shrink import *  # noqa: F403
from .activations_shrink import __all__ as _activations
from .channels import *  # noqa: F403
from .channels import __all__ as _channels
from .distances import *  # noqa: F403
from .distances import __all__ as _distances
from .embedding_bag import embedding_bag
from .extras import _reduced
from .fractional_pool import *  # noqa: F403
from .fractional_pool import __all__ as _fractional
from .losses_ctc import ctc_loss
from .losses_multiclass import *  # noqa: F403
from .losses_multiclass import __all__ as _losses
from .windows import *  # noqa: F403
from .windows import __all__ as _windows


def adaptive_max_pool1d_with_indices(input: Any, output_size: Any, return_indices: bool = True) -> Any:  # noqa: A002
    """``adaptive_max_pool1d(..., return_indices=True)`` (PyTorch's name)."""
    return adaptive_max_pool1d(input, output_size, return_indices=True)  # noqa: F405


def adaptive_max_pool2d_with_indices(input: Any, output_size: Any, return_indices: bool = True) -> Any:  # noqa: A002
    """``adaptive_max_pool2d(..., return_indices=True)`` (PyTorch's name)."""
    return adaptive_max_pool2d(input, output_size, return_indices=True)  # noqa: F405


def adaptive_max_pool3d_with_indices(input: Any, output_size: Any, return_indices: bool = True) -> Any:  # noqa: A002
    """``adaptive_max_pool3d(..., return_indices=True)`` (PyTorch's name)."""
    return adaptive_max_pool3d(input, output_size, return_indices=True)  # noqa: F405


native_channel_shuffle = channel_shuffle  # noqa: F405  (PyTorch's name of the same)


def triplet_margin_with_distance_loss(anchor: Any, positive: Any, negative: Any, *, distance_function: Any = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Any:
    """``max(0, margin + d(a, p) - d(a, n))`` with any ``distance_function`` (``pairwise_distance`` by default);
    ``swap`` takes the smaller of d(a, n) and d(p, n)."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: margin must be greater than 0, got {margin}")
    d = pairwise_distance if distance_function is None else distance_function  # noqa: F405
    d_pos, d_neg = d(anchor, positive), d(anchor, negative)
    if swap:
        d_neg = ew.minimum(d_neg, d(positive, negative))
    return _reduced("triplet_margin_with_distance_loss", ew.clip(ew.add(ew.subtract(d_pos, d_neg), margin), 0.0, None),
                    reduction)


def upsample(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",  # noqa: A002
             align_corners: bool | None = None) -> Any:
    """PyTorch's deprecated name of ``interpolate``."""
    warnings.warn("upsample is deprecated (as in PyTorch): use interpolate", ChainruleWarning, stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Any, size: Any = None, scale_factor: Any = None) -> Any:  # noqa: A002
    """PyTorch's deprecated ``interpolate(..., mode='nearest')``."""
    warnings.warn("upsample_nearest is deprecated (as in PyTorch): use interpolate", ChainruleWarning, stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Any, size: Any = None, scale_factor: Any = None) -> Any:  # noqa: A002
    """PyTorch's deprecated ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("upsample_bilinear is deprecated (as in PyTorch): use interpolate", ChainruleWarning, stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ = [*_activations, *_channels, *_distances, *_losses, *_windows, *_fractional, "embedding_bag",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "native_channel_shuffle",
           "triplet_margin_with_distance_loss", "upsample", "upsample_nearest", "upsample_bilinear",
           "adaptive_max_pool3d_with_indices", "ctc_loss"]
