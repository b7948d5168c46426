"""PyTorch's ``torch.backends`` flags, and ``use_deterministic_algorithms``, for programs that set them.

chainrule runs on NumPy on the CPU, and on a GPU through CuPy: there is no cuDNN or MPS backend, so their
``is_available()`` is False; ``cuda.is_built()`` says whether the device ``"cuda"`` can be used
(``chainrule.cuda.is_available()``). The flags (``cudnn.benchmark``, ``cudnn.deterministic``,
``cuda.matmul.allow_tf32``, ...) and ``set_float32_matmul_precision`` may be set and read but change nothing:
float32 products are computed in float32, never TF32 or bfloat16. NumPy's CPU results are deterministic already.

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
           "are_deterministic_algorithms_enabled", "set_float32_matmul_precision", "get_float32_matmul_precision"]


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
def _cuda_built() -> bool:
    from . import cuda as _cuda  # (imported when asked: finding a GPU imports CuPy)

    return _cuda.is_available()


cuda = SimpleNamespace(is_built=_cuda_built, flash_sdp_enabled=_absent, mem_efficient_sdp_enabled=_absent,
                       matmul=SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                              allow_bf16_reduced_precision_reduction=True))

_deterministic = [False]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """``torch.use_deterministic_algorithms``: remembered; chainrule's ops are deterministic either way."""
    _deterministic[0] = bool(mode)


def are_deterministic_algorithms_enabled() -> bool:
    """What ``use_deterministic_algorithms`` was last given."""
    return _deterministic[0]


_PRECISIONS = ("highest", "high", "medium")
_precision = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """``torch.set_float32_matmul_precision``: remembered; chainrule's float32 products are always "highest"
    (float32 arithmetic: no TF32 or bfloat16 shortcut, whatever is asked)."""
    if precision not in _PRECISIONS:
        raise ValueError(f"set_float32_matmul_precision: expected one of {_PRECISIONS}, got {precision!r}")
    _precision[0] = precision


def get_float32_matmul_precision() -> str:
    """What ``set_float32_matmul_precision`` was last given ("highest" until then)."""
    return _precision[0]
