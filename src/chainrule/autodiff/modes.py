"""``no_grad`` and ``enable_grad``: switch graph recording off or on, as context or decorator.

They live in :mod:`chainrule.core.state` (per thread and per async task); this module keeps
the old import path.
"""

from __future__ import annotations

from ..core import state
from ..core.state import enable_grad, grad_mode, no_grad  # noqa: F401


class _Tracing:
    """How many function transforms are running in this thread or task (kept for old imports)."""

    @property
    def depth(self) -> int:
        return state.transform_depth()


tracing = _Tracing()
