"""``no_grad`` and ``enable_grad``: switch graph recording off or on, as context or decorator."""

from __future__ import annotations

import contextlib
from typing import Any

from . import engine


class no_grad(contextlib.ContextDecorator):
    """Run without recording the graph (faster; results do not require grad).

    A context manager, or a decorator with or without parentheses (``@no_grad`` or
    ``@no_grad()``). The mode is process-wide, not per thread.

    Example:
        >>> from chainrule import Tensor, no_grad
        >>> w = Tensor([1.0], requires_grad=True)
        >>> with no_grad():
        ...     y = w * 2
        >>> y.requires_grad
        False
    """

    _mode = False

    def __new__(cls, func: Any = None) -> Any:
        self = super().__new__(cls)
        self._previous: list[bool] = []
        if callable(func):  # used bare, as @no_grad
            return self(func)
        return self

    def __init__(self, func: Any = None) -> None:
        pass

    def __enter__(self) -> None:
        self._previous.append(engine.set_grad_enabled(self._mode))

    def __exit__(self, *exc: object) -> None:
        engine.set_grad_enabled(self._previous.pop())


class enable_grad(no_grad):
    """Record the graph even inside ``no_grad``."""

    _mode = True


class _Tracing:
    """How many function transforms (grad, jvp, jacobian, ...) are running right now."""

    depth = 0


tracing = _Tracing()
