"""The demo's progress bar: :func:`chainrule.nn.progress`, shown only for steps that take over a second.

Bars go to stderr, so the demo's report on stdout stays clean.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..nn.progress import progress

DELAY = 1.0


@contextmanager
def stage(desc: str, total: int, stream: Any = None) -> Iterator[Callable[[], None]]:
    """``with stage("drawing", 3) as tick: ...; tick()``: a bar over ``total`` ticks, shown after 1 s.

    Example:
        >>> with stage("counting", 2) as tick:
        ...     tick(); tick()
    """
    bar = progress(total=total, desc=f"    {desc}", delay=DELAY, file=stream if stream is not None else sys.stderr,
                   leave=False, unit="step")
    try:
        yield lambda: bar.update(1)
    finally:
        bar.close()
