"""The old import path of the reverse-mode engine, now in :mod:`chainrule.core.sweep` (it knows no op and
no value type) and :mod:`chainrule.core.node` (the node record)."""

from __future__ import annotations

from ..core.state import is_grad_enabled, set_grad_enabled  # noqa: F401  (grad mode lives in core.state)
from ..core.sweep import backward_sweep, toposort  # noqa: F401
