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


class NumberSpellings:
    """``float``, ``bool``, ``int``, ``round``, ``format`` and ``.item()`` of ``self.data`` (a mixin of Scalar)."""

    __slots__ = ()
    data: float

    def __float__(self) -> float:
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
