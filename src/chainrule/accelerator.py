"""PyTorch's ``torch.accelerator`` spellings and ``torch.set_default_device``: which device a program should use.

chainrule's only accelerator is CUDA through CuPy (:mod:`chainrule.cuda`). There is no default device: the
constructors and layers build on the host unless given ``device=``, so ``set_default_device`` accepts the host
and refuses anything else with the fix, rather than leave a program's tensors silently on the CPU.

Example:
    >>> import chainrule as cr
    >>> device = cr.accelerator.current_accelerator().type if cr.accelerator.is_available() else "cpu"
    >>> cr.set_default_device("cpu"); str(cr.get_default_device())
    'cpu'
"""

from __future__ import annotations

from typing import Any

from . import cuda
from .core.device import CPU_DEVICE, Device


def is_available() -> bool:
    """True when an accelerator (a GPU through CuPy) can be used."""
    return cuda.is_available()


def current_accelerator() -> Device | None:
    """The accelerator's device (``device(type='cuda')``), or None when there is none, as PyTorch's."""
    return Device("cuda") if is_available() else None


def device_count() -> int:
    """The number of accelerators (GPUs) found."""
    return cuda.device_count()


def set_default_device(device: Any) -> None:
    """PyTorch's ``torch.set_default_device``: only the host (``"cpu"`` or None), which is always the default."""
    if device is None or Device(str(device)) == "cpu":
        return
    raise NotImplementedError(
        f"set_default_device({device!r}): chainrule has no default device (its tensors are built on the CPU); "
        f"pass device={str(device)!r} to the constructors (cr.zeros(3, device=...)) and move models with "
        f"model.to({str(device)!r})")


def get_default_device() -> Device:
    """PyTorch's ``torch.get_default_device``: always the CPU (see :func:`set_default_device`)."""
    return CPU_DEVICE
