"""A progress bar for training loops: tqdm when installed (extra ``nn``), else a silent stand-in."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


class _Plain:
    """What ``progress`` returns without tqdm: iterates, and ignores ``set_postfix``."""

    def __init__(self, iterable: Iterable[Any] | None, total: int | None) -> None:
        self.iterable = iterable if iterable is not None else range(total or 0)
        self.total = total

    def __iter__(self) -> Iterator[Any]:
        return iter(self.iterable)

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        pass

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _Plain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress(iterable: Iterable[Any] | None = None, total: int | None = None, desc: str | None = None,
             disable: bool = False, **kwargs: Any) -> Any:
    """``tqdm(iterable, ...)`` if tqdm is installed (``pip install chainrule[nn]``), else a plain
    iterator with the same ``set_postfix`` method; ``disable=True`` never draws a bar.

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
            from tqdm.auto import tqdm
        except ImportError:
            pass
        else:
            return tqdm(iterable, total=total, desc=desc, **kwargs)
    return _Plain(iterable, total)
