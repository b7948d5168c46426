"""Forward-mode bookkeeping: which tangent levels are live and which are visible.

Every ``jvp`` call opens a new level with a fresh, increasing id. A tensor carries its
tangents in a dict ``{level: tangent}``. While the tangent of level L is computed, only
levels below L are visible, so a tangent carries tangents of outer levels only (as nested
dual numbers do) and two nested ``jvp`` calls never confuse their perturbations.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager

_ids = itertools.count(1)
active: set[int] = set()  # levels opened by a running jvp
ceiling: float = float("inf")  # levels above this are invisible right now


def visible(level: int) -> bool:
    return level in active and level <= ceiling


@contextmanager
def new_level() -> Iterator[int]:
    """Open a forward-mode level for the duration of one ``jvp`` call."""
    level = next(_ids)
    active.add(level)
    try:
        yield level
    finally:
        active.discard(level)


@contextmanager
def below(level: int) -> Iterator[None]:
    """Hide ``level`` and everything above it while its tangent is computed."""
    global ceiling
    previous, ceiling = ceiling, min(ceiling, level - 1)
    try:
        yield
    finally:
        ceiling = previous
