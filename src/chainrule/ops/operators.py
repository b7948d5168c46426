"""Python's binary operators on Tensors and operands that answer them themselves.

An operand whose class sets ``__array_ufunc__ = None`` (NumPy's protocol: ``pytest.approx``, units libraries)
handles a binary operator with an array itself, so a Tensor's operator answers ``NotImplemented`` for it, and
Python asks the other operand, as NumPy's arrays and PyTorch's tensors do. ``ops/declare.py`` builds the generated
operator methods with this in them, and wraps the others with :func:`deferring`.

Example:
    >>> import pytest, chainrule as cr
    >>> cr.tensor([1.0, 2.0]) == pytest.approx([1.0, 2.0])
    True
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

BINARY_OPERATORS = frozenset(
    f"__{r}{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "divmod", "pow", "matmul", "and",
                              "or", "xor", "lshift", "rshift") for r in ("", "r")
) | {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"}


def defers(other: Any) -> bool:
    """Whether ``other`` handles a binary operator with a Tensor itself (its class sets ``__array_ufunc__ = None``)."""
    return getattr(type(other), "__array_ufunc__", 0) is None


def deferring(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(self, other)``, or NotImplemented where it fails on an operand that :func:`defers` (a Python
    operator then asks the other operand)."""

    def method(self: Any, other: Any) -> Any:  # (an operator's two operands: no packing of more)
        try:
            return fn(self, other)
        except (TypeError, ValueError):  # (an operand read as a 0-d object array may fail either way)
            if defers(other):
                return NotImplemented
            raise

    functools.update_wrapper(method, fn)
    return method
