"""Up-front memory checks: refuse a result that cannot fit, naming its size, before allocating it.

A dense Jacobian or Hessian grows as (outputs x inputs): a 30,000-dimensional Hessian needs 7.2 GB. Building
it part by part and then failing with a raw ``MemoryError`` (or driving the machine into swap) helps nobody,
so the transforms estimate the bytes first and raise :class:`ResultTooLargeError`, which says what to use
instead. ``CHAINRULE_MEMORY_CHECK=0`` in the environment turns the check off (to try anyway).

Example:
    >>> from chainrule.core.memory import check_fits, human_bytes
    >>> human_bytes(7.2e9)
    '7.2 GB'
    >>> check_fits(800, "jacobian", "use jvp instead")  # 800 bytes fit anywhere
"""

from __future__ import annotations

import os


class ResultTooLargeError(MemoryError):
    """A result that would not fit in the memory available, refused before any of it was allocated."""


def available_bytes() -> int | None:
    """The memory the system can still give this process (Linux's MemAvailable), or None when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def human_bytes(n: float) -> str:
    """``n`` bytes in the largest unit that keeps it at least 1 (decimal units, one decimal)."""
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def check_fits(needed: float, what: str, instead: str) -> None:
    """Raise :class:`ResultTooLargeError` if ``needed`` bytes exceed the memory available (when it is known)."""
    if os.environ.get("CHAINRULE_MEMORY_CHECK", "1").strip() in ("0", "false", "no", "off"):
        return
    free = available_bytes()
    if free is None or needed <= free:
        return
    raise ResultTooLargeError(
        f"{what} needs about {human_bytes(needed)}, but only {human_bytes(free)} of memory is available; "
        f"{instead}. (Set CHAINRULE_MEMORY_CHECK=0 in the environment to try anyway.)"
    )
