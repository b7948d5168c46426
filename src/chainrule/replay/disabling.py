"""``disable_jit()``: JAX's context manager under which ``jit`` runs its functions as they are (no trace, no
replay), to step through them with a debugger or print their values.

Example:
    >>> import numpy as np
    >>> import chainrule as cr
    >>> f = cr.jit(lambda x: x * 2.0)
    >>> with cr.disable_jit():
    ...     f(np.ones(2)).tolist(), f.traces  # ran eagerly: nothing traced
    ([2.0, 2.0], 0)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_DISABLED: ContextVar[bool] = ContextVar("chainrule_jit_disabled", default=False)
disabled = _DISABLED.get
"""True inside ``disable_jit()`` (of this thread or task)."""


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Inside the block, ``jit``'s functions run eagerly (``disable=False``: jit as usual again)."""
    token = _DISABLED.set(bool(disable))
    try:
        yield
    finally:
        _DISABLED.reset(token)
