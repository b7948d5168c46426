"""Plots of derivatives and descent, served as :mod:`chainrule.plot` (see its docstring)."""

from __future__ import annotations

from .curves import loss_curve
from .field import gradient_grid, vector_field
from .paths import trajectories
from .tangent import slopes, tangent

__all__ = ["gradient_grid", "loss_curve", "slopes", "tangent", "trajectories", "vector_field"]
