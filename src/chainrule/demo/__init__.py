"""``chainrule demo``: a guided tour of the tutorials' story with every number checked.

``run(out)`` prints each section, writes its pictures under ``out`` and returns the exit
code (0 when every check passed). The checks themselves live in ``seeds``.
"""

from __future__ import annotations

from .tour import FILES, SECTIONS, run

__all__ = ["FILES", "SECTIONS", "run"]
