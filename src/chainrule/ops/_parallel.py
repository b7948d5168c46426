"""Big NumPy passes split over rows between a few threads, in cache-sized blocks.

NumPy releases the GIL inside a ufunc's inner loop, so two threads each running a chain of
ufuncs on their own rows of an array run at the same time. The fused primitives (GELU, layer
norm, attention's softmax, cross-entropy) hand :func:`for_blocks` a ``work(lo, hi)`` that
computes rows ``lo:hi`` of their result; every row is computed by the same operations whatever
the split, so the results are bit-identical on any number of threads (reductions run along a
row, never across rows).

``CHAINRULE_NUM_THREADS`` sets the number of threads (default: the CPU count, at most 4); it is
read at each call, so tests can change it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

_POOL: ThreadPoolExecutor | None = None
_DEFAULT = min(os.cpu_count() or 1, 4)


def num_threads() -> int:
    """Worker threads for the split passes: CHAINRULE_NUM_THREADS, else the CPU count (at most 4)."""
    env = os.environ.get("CHAINRULE_NUM_THREADS", "")
    return max(1, int(env)) if env.isdigit() else _DEFAULT


_POOL_PID = 0


def _pool(k: int) -> ThreadPoolExecutor:
    """The shared pool of ``k`` workers; a fresh one in a forked child (its parent's threads are not there)."""
    global _POOL, _POOL_PID
    if _POOL is None or _POOL._max_workers != k or _POOL_PID != os.getpid():
        _POOL, _POOL_PID = ThreadPoolExecutor(k, thread_name_prefix="chainrule"), os.getpid()
    return _POOL


def for_blocks(work: Callable[[int, int], None], n: int, block: int, min_blocks: int = 4) -> None:
    """Run ``work(lo, hi)`` over [0, n) in blocks of ``block`` rows (the last one shorter).

    With more than one thread and at least ``min_blocks`` blocks, whole blocks are dealt out
    between the threads in contiguous runs (the calling thread takes the first run). The blocks
    are the same on any number of threads.
    """
    block = max(1, int(block))
    if n <= block:  # one block (small arrays, e.g. one token at a time): no bookkeeping
        if n > 0:
            work(0, n)
        return
    k = num_threads()
    count = -(-n // block)
    if k == 1 or count < min_blocks:
        for lo in range(0, n, block):
            work(lo, min(lo + block, n))
        return
    k = min(k, count)
    per = -(-count // k) * block  # rows per thread: whole blocks

    def run(start: int) -> None:
        stop = min(start + per, n)
        for lo in range(start, stop, block):
            work(lo, min(lo + block, stop))

    futures = [_pool(k).submit(run, start) for start in range(per, n, per)]
    run(0)
    for f in futures:
        f.result()
