"""PyTorch's ``device=`` arguments: chainrule computes with NumPy on the CPU, so only the CPU is accepted.

Example:
    >>> check_cpu("zeros", "cpu:0")
    >>> check_cpu("zeros", "cuda")
    Traceback (most recent call last):
    ...
    ValueError: zeros: chainrule runs on the CPU (NumPy) only; device 'cuda' is not available
"""

from __future__ import annotations

from typing import Any


def check_cpu(where: str, device: Any) -> None:
    """Raise unless ``device`` is None or the CPU (``"cpu"``, ``"cpu:0"``, ``torch.device("cpu")``)."""
    if device is not None and str(device).split(":")[0] != "cpu":
        raise ValueError(f"{where}: chainrule runs on the CPU (NumPy) only; device {str(device)!r} is not available")
