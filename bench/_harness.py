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


def minor_faults() -> int:
    """Minor page faults of this process so far (0 where ``resource`` is missing, e.g. Windows)."""
    try:
        import resource
    except ImportError:
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def rss_mb() -> float | None:
    """Resident memory of this process now, in MB (Linux only; None elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    import os

    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def reset_peak_rss() -> bool:
    """Reset the kernel's high-water mark of resident memory (Linux 4.0+); False where not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float | None:
    """The process's high-water resident memory since the last ``reset_peak_rss``, in MB (None if unknown)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1e3  # kB
    except (OSError, ValueError):
        pass
    try:
        import resource
    except ImportError:
        return None
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1e6 if sys.platform == "darwin" else peak / 1e3


def _trim_heap() -> None:
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def step_memory(make: Callable[[], Callable[[], Any]], steps: int = 5) -> dict[str, float | None]:
    """Peak memory one implementation adds while it runs ``steps`` steps, in a fresh process.

    Call it from a child process (see ``memory_in_child``): the high-water mark of the process minus
    its resident memory before the model is built (imports and inputs do not count; the model does);
    page faults are counted after the first step.
    """
    import gc

    gc.collect()
    _trim_heap()  # memory freed earlier (imports, data) must not make the steps look free
    before = rss_mb() if reset_peak_rss() else None
    fn = make()
    fn()  # the first step counts for memory (lazy buffers, caches), not for page faults
    faults = minor_faults()
    for _ in range(steps):
        fn()
    peak = peak_rss_mb()
    return {"peak_mb": None if before is None or peak is None else max(0.0, peak - before),
            "faults_per_step": (minor_faults() - faults) / steps}


def memory_in_child(script: str, args: list[str], timeout: float = 300) -> dict[str, Any]:
    """Run ``script args`` in a fresh interpreter that prints one JSON line last; return it ({} on failure)."""
    import json
    import subprocess
    import sys

    try:
        out = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, timeout=timeout)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError, OSError):
        return {}
