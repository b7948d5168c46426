"""Big NumPy passes split over rows between a few threads, in cache-sized blocks.

NumPy releases the GIL inside a ufunc's inner loop, so two threads each running a chain of
ufuncs on their own rows of an array run at the same time. The fused primitives (GELU, layer
norm, attention's softmax, cross-entropy) hand :func:`for_blocks` a ``work(lo, hi)`` that
computes rows ``lo:hi`` of their result; every row is computed by the same operations whatever
the split, so the results are bit-identical on any number of threads (reductions run along a
row, never across rows).

``CHAINRULE_NUM_THREADS`` sets the number of threads (default: the CPU count, at most 4); it is
read at each call, so tests can change it. :func:`threads_limited` lowers it for a block of code in
the calling thread (a data-parallel training step runs one thread per process).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar

_POOL: ThreadPoolExecutor | None = None
_DEFAULT = min(os.cpu_count() or 1, 4)
_LIMIT: ContextVar[int | None] = ContextVar("chainrule_thread_limit", default=None)


def num_threads() -> int:
    """Worker threads for the split passes: CHAINRULE_NUM_THREADS, else the CPU count (at most 4),
    at most the innermost :func:`threads_limited` around the call."""
    env = os.environ.get("CHAINRULE_NUM_THREADS", "")
    n = max(1, int(env)) if env.isdigit() else _DEFAULT
    limit = _LIMIT.get()
    return n if limit is None else min(n, limit)


@contextmanager
def threads_limited(n: int) -> Iterator[None]:
    """Inside the block, the split passes of the calling thread use at most ``n`` threads.

    Example:
        >>> with threads_limited(1):
        ...     num_threads()
        1
    """
    token = _LIMIT.set(max(1, int(n)))
    try:
        yield
    finally:
        _LIMIT.reset(token)


_POOL_PID = 0


def _pool(k: int) -> ThreadPoolExecutor:
    """The shared pool of ``k`` workers; a fresh one in a forked child (its parent's threads are not there)."""
    global _POOL, _POOL_PID
    if _POOL is None or _POOL._max_workers != k or _POOL_PID != os.getpid():
        _POOL, _POOL_PID = ThreadPoolExecutor(k, thread_name_prefix="chainrule"), os.getpid()
    return _POOL


def for_blocks(work: Callable[[int, int], None], n: int, block: int, min_blocks: int = 4) -> None:
    """Run ``work(lo, hi)`` over [0, n) in blocks of ``block`` rows (the last one shorter).

    With more than one thread and at least ``min_blocks`` blocks, the threads (the calling one
    among them) take the next block as soon as they are free, so a thread the OS delays does
    fewer blocks instead of holding the others up. The blocks are the same on any number of
    threads, and each is computed the same way by whichever thread takes it.
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
    starts = iter(range(0, n, block))  # shared: next() on a range iterator is atomic under the GIL

    def run() -> None:
        for lo in starts:
            work(lo, min(lo + block, n))

    futures = [_pool(k - 1).submit(run) for _ in range(min(k, count) - 1)]
    started = futures
    try:
        run()
    finally:
        # the caller's run ends when every block is taken: a worker that has not started has nothing left to
        # do, and may never start (a for_blocks inside a pool worker), so it is cancelled, not waited for;
        # one that has started is waited for, so no worker writes into the caller's arrays after we return
        started = [f for f in futures if not f.cancel()]
        for f in started:
            f.exception()
    for f in started:
        f.result()
