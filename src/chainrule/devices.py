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

import sys
import types

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
           "register", "registered", "unregister", "xp_of", "synchronize", "jax_devices"]


def jax_devices(backend_name: str | None = None) -> list[Device]:
    """JAX's ``jax.devices()`` (``cr.devices()``: this module is callable): the devices arrays live on by default,
    the CPU's (chainrule's arrays are NumPy's unless ``device=`` says otherwise); with ``"gpu"`` or ``"cuda"`` the
    GPUs, refused with the reason when there is none.

    Example:
        >>> import chainrule as cr
        >>> cr.devices()
        [device(type='cpu')]
    """
    if backend_name is None or backend_name == "cpu":
        return [Device("cpu")]
    name = "cuda" if backend_name == "gpu" else str(backend_name)
    backend(name)  # (raises, saying why, where the device is not available)
    return [Device(name, i) for i in range(max(device_count(name), 1))]


class _CallableModule(types.ModuleType):
    """This module, callable as JAX's ``jax.devices()`` (``import chainrule as jax; jax.devices()``)."""

    def __call__(self, backend: str | None = None) -> list[Device]:
        return jax_devices(backend)


sys.modules[__name__].__class__ = _CallableModule


def synchronize(device: object = None) -> None:
    """Wait until the work queued on ``device`` (every registered device when None) has finished."""
    from .core.device import _BY_NAME

    for b in ([backend(device)] if device is not None else list(_BY_NAME.values())):
        b.synchronize()
