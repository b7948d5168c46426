"""The later additions to ``chainrule.nn.functional``, gathered for its ``__init__`` (one import line there):
activations (``activations_shrink``), channel rearrangements and dropouts (``channels``), distances
(``distances``), multi-class losses (``losses_multiclass``), sliding windows (``windows``) and PyTorch's
deprecated ``upsample`` spellings."""

from __future__ import annotations

import warnings
from typing import Any

from ...core.errors import ChainruleWarning
from ...ops.fused.interpolate import interpolate
from .activations_shrink import *  # noqa: F403
from .activations_shrink import __all__ as _activations
from .channels import *  # noqa: F403
from .channels import __all__ as _channels
from .distances import *  # noqa: F403
from .distances import __all__ as _distances
from .losses_multiclass import *  # noqa: F403
from .losses_multiclass import __all__ as _losses
from .windows import *  # noqa: F403
from .windows import __all__ as _windows


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


__all__ = [*_activations, *_channels, *_distances, *_losses, *_windows,
           "upsample", "upsample_nearest", "upsample_bilinear"]
