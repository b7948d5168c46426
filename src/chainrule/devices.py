"""Devices: where a Tensor's values live and its ops run (PyTorch's ``device=``).

A device is a name bound to an array module with CuPy's spelling of the essentials (``ndarray``,
``asarray``, ``asnumpy``, NumPy's functions by name). ``"cpu"`` is NumPy. ``"cuda"`` is CuPy, bound the first
time it is asked for when CuPy imports and finds a GPU (``pip install 'chainrule[cuda12]'``). Any other array
module with that spelling can be bound with :func:`register` (the tests bind a strict double of CuPy).

Example:
    >>> import numpy as np
    >>> import chainrule as cr
    >>> from chainrule import devices
    >>> devices.of(np.zeros(2)).name
    'cpu'
    >>> cr.zeros(2, device="cpu").device
    device(type='cpu')
"""

from __future__ import annotations

from .core.device import (
    Backend,
    Device,
    as_array,
    backend,
    device_count,
    is_off_host,
    move,
    of,
    register,
    registered,
    unregister,
    xp_of,
)

device = Device  # PyTorch's spelling: torch.device("cuda"), isinstance(d, torch.device)

__all__ = ["Backend", "Device", "device", "as_array", "backend", "device_count", "is_off_host", "move", "of",
           "register", "registered", "unregister", "xp_of", "synchronize"]


def synchronize(device: object = None) -> None:
    """Wait until the work queued on ``device`` (every registered device when None) has finished."""
    from .core.device import _BY_NAME

    for b in ([backend(device)] if device is not None else list(_BY_NAME.values())):
        b.synchronize()
