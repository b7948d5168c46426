"""PyTorch's ``torch.backends`` flags, and ``use_deterministic_algorithms``, for programs that set them.

chainrule runs on NumPy on the CPU: there is no cuDNN, MPS or CUDA backend, so their ``is_available()`` is
False and their flags (``cudnn.benchmark``, ``cudnn.deterministic``, ``cuda.matmul.allow_tf32``, ...) may be set
and read but change nothing. NumPy's CPU results are deterministic already.

Example:
    >>> import chainrule as cr
    >>> cr.backends.cudnn.benchmark = True
    >>> cr.backends.mps.is_available(), cr.backends.cudnn.is_available(), cr.backends.cudnn.benchmark
    (False, False, True)
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

__all__ = ["cudnn", "mps", "cuda", "mkldnn", "openmp", "mkl", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled"]


def _absent() -> bool:
    return False


def _backend(**flags: Any) -> SimpleNamespace:
    """A backend that is not there: ``is_available()`` and ``is_built()`` are False; ``flags`` are settable."""
    return SimpleNamespace(is_available=_absent, is_built=_absent, **flags)


cudnn = _backend(enabled=True, benchmark=False, deterministic=False, allow_tf32=True)
mps = _backend()
mkldnn = _backend(enabled=True)
mkl = _backend()
openmp = _backend()
cuda = _backend(matmul=SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                       allow_bf16_reduced_precision_reduction=True),
                flash_sdp_enabled=_absent, mem_efficient_sdp_enabled=_absent)

_deterministic = [False]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """``torch.use_deterministic_algorithms``: remembered; chainrule's ops are deterministic either way."""
    _deterministic[0] = bool(mode)


def are_deterministic_algorithms_enabled() -> bool:
    """What ``use_deterministic_algorithms`` was last given."""
    return _deterministic[0]
