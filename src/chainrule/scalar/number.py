"""Python's number spellings on a Scalar's value, as a float and a PyTorch 0-d tensor give them.

Without them ``bool(Scalar(0.0))`` was True and ``f"{loss:.4f}"`` raised.

Example:
    >>> from chainrule import Scalar
    >>> s = Scalar(2.5)
    >>> bool(Scalar(0.0)), int(s), round(s), f"{s:.2f}", s.item()
    (False, 2, 2, '2.50', 2.5)
"""

from __future__ import annotations

from typing import Any

from ..core.conversion import NO_DERIVATIVE as _NO_DERIVATIVE
from ..core.conversion import called_function


class NumberSpellings:
    """``float``, ``bool``, ``int``, ``round``, ``format`` and ``.item()`` of ``self.data`` (a mixin of Scalar)."""

    __slots__ = ()
    data: float

    def __float__(self) -> float:
        """The value, for ``float(s)`` (a read on purpose, as PyTorch's ``float(t)``); ``math.exp(s)`` and the other
        ``math`` functions call this too, and their result would carry no gradient: they raise."""
        fn = called_function(2)
        if getattr(fn, "__module__", None) in ("math", "cmath") and fn.__name__ not in _NO_DERIVATIVE:
            _refuse_math(fn, type(self))
        return self.data

    def __bool__(self) -> bool:
        return self.data != 0.0

    def __int__(self) -> int:
        return int(self.data)

    def __round__(self, ndigits: int | None = None) -> Any:
        return round(self.data, ndigits)

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"`` formats the value; no spec gives ``str(s)``."""
        return format(self.data, spec) if spec else str(self)

    def item(self) -> float:
        """The value as a Python float (PyTorch's spelling of ``.data``)."""
        return self.data


def _refuse_math(fn: Any, scalar_type: type) -> None:
    name, module = fn.__name__, fn.__module__
    fix = (f"Use the Scalar's own s.{name}()" if callable(getattr(scalar_type, name, None)) else
           "Write it with Scalar operations (+, *, **, s.exp(), s.log(), s.tanh(), ...)")
    raise TypeError(
        f"{module}.{name}() of a Scalar turns it into a plain float, so the gradient through it would be lost "
        f"(micrograd refuses this too). {fix}; to use the value on purpose, {module}.{name}(s.data)"
    )
