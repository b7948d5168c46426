"""The old import path of :mod:`chainrule.core.sparse` (``SliceGrad``, ``densify``)."""

from __future__ import annotations

from ..core.sparse import SliceGrad, densify  # noqa: F401
