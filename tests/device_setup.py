"""The device the device tests run on: the strict double of CuPy (``tests/strict_device.py``), registered as
``"strict"``, or a real one named by ``CHAINRULE_TEST_DEVICE`` (``cuda`` on a GPU machine)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from chainrule import devices

NAME = os.environ.get("CHAINRULE_TEST_DEVICE", "strict")


def backend() -> Any:
    """The device under test (the strict double registered on first use)."""
    if NAME == "strict" and "strict" not in devices.registered():
        import strict_device

        strict_device.use()
    return devices.backend(NAME)


def to_device(a: Any) -> Any:
    """A host array (or number) as an array on the device under test."""
    return backend().from_host(np.asarray(a))


def host(a: Any) -> np.ndarray:
    """A device array (or Tensor of one) back on the host, for comparing."""
    a = _raw(a)
    if devices.of(a).name == "cpu":
        return np.asarray(a)
    return devices.of(a).to_host(a)


def on_device(a: Any) -> bool:
    return devices.of(_raw(a)).name == NAME


def _raw(a: Any) -> Any:
    from chainrule import Tensor

    return a._data if isinstance(a, Tensor) else a
