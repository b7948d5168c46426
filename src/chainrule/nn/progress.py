"""The one progress bar of chainrule: tqdm when installed (extra ``nn``), else a stand-in.

Training loops use :func:`progress` as they would tqdm; the demo shows a bar only for steps
that take longer than ``delay`` seconds, on its own stream (``file=``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any


class _Plain:
    """What ``progress`` returns without tqdm: iterates, ignores ``set_postfix``, and, when given a
    ``file``, prints one line per update once ``delay`` seconds have passed."""

    def __init__(self, iterable: Iterable[Any] | None, total: int | None, desc: str | None, delay: float,
                 file: Any) -> None:
        self.iterable = iterable if iterable is not None else range(total or 0)
        if total is None:  # as tqdm counts: a length when there is one (a stream's DataLoader has none)
            try:
                total = len(self.iterable)  # type: ignore[arg-type]
            except (TypeError, AttributeError):
                total = None
        self.total, self.desc, self.delay, self.file = total, (desc or "").strip(), delay, file
        self.n = 0
        self.start = time.perf_counter()

    def __iter__(self) -> Iterator[Any]:
        for item in self.iterable:
            yield item
            self.update(1)

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        pass

    def update(self, n: int = 1) -> None:
        self.n += n
        if self.file is None:
            return
        elapsed = time.perf_counter() - self.start
        if elapsed > self.delay:
            print(f"    ... {self.desc}: {self.n}/{self.total} ({elapsed:.1f} s)", file=self.file, flush=True)

    def close(self) -> None:
        pass

    def __enter__(self) -> _Plain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress(iterable: Iterable[Any] | None = None, total: int | None = None, desc: str | None = None,
             disable: bool = False, delay: float = 0.0, file: Any = None, **kwargs: Any) -> Any:
    """``tqdm(iterable, ...)`` if tqdm is installed (``pip install chainrule[nn]``), else a plain
    iterator with the same ``update``, ``set_postfix`` and ``close`` methods; ``disable=True``
    never draws a bar. ``delay``: seconds before a bar appears; ``file``: the stream to draw on
    (without tqdm, a line per update is printed there after ``delay``; with no ``file``, nothing).

    Example:
        >>> from chainrule import nn
        >>> bar = nn.progress(range(3), disable=True)
        >>> for step in bar:
        ...     bar.set_postfix(loss=0.5)
        >>> step
        2
    """
    if not disable:
        try:
            import tqdm as package  # the package first: where it is missing (or blocked), so is tqdm.auto
            from tqdm.auto import tqdm as bar
        except ImportError:
            pass
        else:
            del package
            return bar(iterable, total=total, desc=desc, delay=delay, file=file, **kwargs)
    return _Plain(iterable, total, desc, delay, None if disable else file)
