"""A progress bar that shows up only for steps that take over a second.

Uses tqdm when installed (the ``nn`` extra), else prints a plain line per sub-step once the
second has passed. Bars go to stderr, so the demo's report on stdout stays clean.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

DELAY = 1.0


class _Plain:
    """tqdm's update/close for when tqdm is not installed."""

    def __init__(self, desc: str, total: int, stream: Any) -> None:
        self.desc, self.total, self.stream = desc, total, stream
        self.n = 0
        self.start = time.perf_counter()

    def update(self, k: int = 1) -> None:
        self.n += k
        elapsed = time.perf_counter() - self.start
        if elapsed > DELAY:
            print(f"    ... {self.desc}: {self.n}/{self.total} ({elapsed:.1f} s)", file=self.stream, flush=True)

    def close(self) -> None:
        pass


def _bar(desc: str, total: int, stream: Any) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:
        return _Plain(desc, total, stream)
    return tqdm(total=total, desc=f"    {desc}", delay=DELAY, file=stream, leave=False, unit="step")


@contextmanager
def stage(desc: str, total: int, stream: Any = None) -> Iterator[Callable[[], None]]:
    """``with stage("drawing", 3) as tick: ...; tick()``: a bar over ``total`` ticks, shown after 1 s.

    Example:
        >>> with stage("counting", 2) as tick:
        ...     tick(); tick()
    """
    bar = _bar(desc, total, stream if stream is not None else sys.stderr)
    try:
        yield lambda: bar.update(1)
    finally:
        bar.close()
