"""SciPy's special functions on any device: ``scipy.special`` for host arrays, the device's own module
(``cupyx.scipy.special`` on a GPU) for a device's arrays, and a clear error where the device lacks one.

Example:
    >>> import numpy as np
    >>> from chainrule.ops.special_functions.device import SPECIAL
    >>> float(SPECIAL.gammaln(np.array(3.0)))  # log(2!)
    0.6931471805599453
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...core.device import OFF_HOST
from ...core.device import of as _device_of


class OnDevice:
    """``SPECIAL.name(*args)``: ``scipy.special.name`` on host values, the device's version on a device's."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        import scipy.special

        host = getattr(scipy.special, name)

        def call(*args: Any, **kw: Any) -> Any:
            for a in args:
                if a.__class__ in OFF_HOST:
                    device = _device_of(a)
                    impl = getattr(device.special(), name, None)
                    if impl is None:
                        raise TypeError(f"{name}: not available on the device {device.name!r} (its scipy.special "
                                        f"has no {name}); compute it on the cpu (x.cpu())")
                    return impl(*args, **kw)
            return host(*args, **kw)

        call.__name__ = name
        call.__doc__ = host.__doc__
        setattr(self, name, call)  # found directly from now on
        return call


SPECIAL = OnDevice()
