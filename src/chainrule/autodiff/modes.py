"""``no_grad`` and ``enable_grad``: switch graph recording off or on, as context or decorator."""

from __future__ import annotations

import contextlib

from . import engine


class no_grad(contextlib.ContextDecorator):
    """Run without recording the graph (faster; results do not require grad).

    Example:
        >>> from chainrule import Tensor, no_grad
        >>> w = Tensor([1.0], requires_grad=True)
        >>> with no_grad():
        ...     y = w * 2
        >>> y.requires_grad
        False
    """

    _mode = False

    def __enter__(self) -> None:
        self._previous = engine.set_grad_enabled(self._mode)

    def __exit__(self, *exc: object) -> None:
        engine.set_grad_enabled(self._previous)


class enable_grad(no_grad):
    """Record the graph even inside ``no_grad``."""

    _mode = True
