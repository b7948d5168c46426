"""PyTorch's ``torch.cuda`` spellings: is a GPU there, how many, wait for it.

``cr.cuda.is_available()`` is True when CuPy imports and finds a GPU (``pip install 'chainrule[cuda12]'``).

Example:
    >>> import chainrule as cr
    >>> isinstance(cr.cuda.is_available(), bool)
    True
"""

from __future__ import annotations

from . import amp  # noqa: F401  torch.cuda.amp.GradScaler / autocast (PyTorch's older spelling): chainrule.amp's stand-ins
from .core import device as _device


def is_available() -> bool:
    """True when the device ``"cuda"`` can be used (CuPy installed, a GPU found)."""
    return device_count() > 0


def device_count() -> int:
    """The number of GPUs CuPy sees (0 without CuPy)."""
    return _device.device_count("cuda")


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: neither NumPy nor CuPy has a bfloat16 type (``chainrule.bfloat16`` is a name only)."""
    return False


def synchronize() -> None:
    """Wait until the work queued on the GPU has finished (timings need it; CuPy's calls return at once)."""
    _device.backend("cuda").synchronize()


def manual_seed(seed: int) -> None:
    """Seed the GPU's generator (``cr.manual_seed`` seeds every device)."""
    if is_available():
        _device.backend("cuda").seed(seed)


manual_seed_all = manual_seed


def max_memory_allocated() -> int:
    """The most bytes CuPy's memory pool has held (its ``total_bytes`` high-water mark as far as CuPy tells)."""
    import cupy

    return int(cupy.get_default_memory_pool().total_bytes())
