"""Forward-mode bookkeeping: which tangent levels are live and which are visible.

Every ``jvp`` call opens a new level with a fresh, increasing id. A tensor carries its
tangents in a dict ``{level: tangent}``. While the tangent of level L is computed, the levels
open from L up are hidden, so a tangent carries tangents of outer levels only (as nested dual
numbers do) and two nested ``jvp`` calls never confuse their perturbations; a level opened
meanwhile (a ``jvp`` inside a custom_jvp rule) is visible.

The live levels and the hidden ones are per thread and per async task; they are
kept in :mod:`chainrule.core.state`.
"""

from __future__ import annotations

from ..core.state import any_visible, below, forward_levels, new_level, visible  # noqa: F401
