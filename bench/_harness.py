"""Shared bench helpers: medians of repeats, peers that may be missing, a printed table."""

from __future__ import annotations

import argparse
import gc
import importlib
import statistics
import time
from collections.abc import Callable
from typing import Any


def available(module: str) -> Any:
    """The module if it imports, else None (a peer that is not installed is skipped)."""
    try:
        return importlib.import_module(module)
    except Exception:
        return None


def median_time(fn: Callable[[], Any], repeats: int, min_seconds: float = 0.05) -> float:
    """Median over ``repeats`` of the mean wall time of one ``fn()`` call, in seconds.

    Like timeit: each repeat runs ``fn`` enough times to last ``min_seconds``. The garbage
    collector stays on, as in a user's program (libraries whose nodes form reference cycles
    pay for it there too); it is emptied before each repeat.
    """
    start = time.perf_counter()
    fn()
    once = time.perf_counter() - start
    number = max(1, int(min_seconds / max(once, 1e-9)))
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--tiny", action="store_true", help="tiny sizes, one repeat (CI keeps the script runnable)")
    p.add_argument("--repeats", type=int, default=5)
    return p


def table(title: str, unit: str, rows: list[tuple[str, float | str]], baseline: str = "chainrule") -> None:
    """Print rows of (library, time) with each time's ratio to ``baseline``."""
    base = dict(rows).get(baseline)
    print(f"\n{title}")
    print(f"  {'library':<28}{unit:>16}{'vs chainrule':>16}")
    for name, value in rows:
        if isinstance(value, str):
            print(f"  {name:<28}{value:>16}{'':>16}")
            continue
        ratio = f"{value / base:.2f}x" if isinstance(base, float) and base > 0 else ""
        print(f"  {name:<28}{value:>16.3f}{ratio:>16}")
