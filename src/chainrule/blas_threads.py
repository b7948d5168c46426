"""Idle BLAS worker threads sleep at once instead of spinning on a core for a tenth of a second.

Why: NumPy's wheels ship OpenBLAS built with its own thread pool. After each threaded BLAS call
(a large matmul) its worker threads busy-wait for the next one, by default for 2**28 CPU cycles
(~0.1 s), before they sleep. A training step alternates matmuls with other work every few
milliseconds, so the workers never sleep: on a machine with few cores one of them keeps a core
busy doing nothing, and every other pass of the step (chainrule's own threads for GELU, layer norm
and attention, or just the main thread) competes with it. On two cores a small GPT's training
step took 280 ms with the default and 230 ms with the workers sleeping at once; the matmuls
themselves lose nothing measurable (waking a sleeping worker costs microseconds, a matmul of a
training step milliseconds). PyTorch runs its own pool and does not have this problem.

What: at ``import chainrule`` (Linux with NumPy's OpenBLAS only) we set OpenBLAS's
``OPENBLAS_THREAD_TIMEOUT`` to its minimum (2**4 cycles) through its exported ``openblas_read_env``
and restart its thread pool (``blas_thread_shutdown_``; the next threaded call starts it again with
the new setting). The process environment is left as it was. Results do not change: only what idle
threads do.

Switch: set ``CHAINRULE_BLAS_SPIN=1`` before importing chainrule, or set
``OPENBLAS_THREAD_TIMEOUT`` yourself (chainrule then leaves OpenBLAS alone), or call
:func:`set_blas_spin`. Elsewhere (another BLAS, macOS, Windows, OpenBLAS built with OpenMP) every
function here does nothing and says so in its result.

:func:`blas_threads_limited` also caps OpenBLAS's thread count for a block of code (what
``threadpoolctl.threadpool_limits`` does, without the dependency), for work that runs one process
per core (:mod:`chainrule.gpt.workers`).

Example:
    >>> from chainrule.blas_threads import blas_threads_info
    >>> sorted(blas_threads_info())
    ['active', 'libraries', 'timeout']
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

QUIET_TIMEOUT = 4  # log2 of the cycles an idle worker spins: OpenBLAS's smallest allowed value
_SYMBOLS = ("openblas_read_env", "openblas_thread_timeout", "blas_thread_shutdown_")
_state: dict[str, Any] = {"active": False}


def _loaded_openblas() -> list[Any]:
    """The OpenBLAS libraries already loaded in this process that export what we need (Linux only)."""
    if not sys.platform.startswith("linux"):
        return []
    try:
        with open("/proc/self/maps") as fh:
            rows = [line.split(maxsplit=5) for line in fh]  # address perms offset device inode [path]
        paths = {row[5].strip() for row in rows if len(row) == 6}
    except OSError:
        return []
    found = []
    for path in sorted(p for p in paths if "openblas" in os.path.basename(p).lower() and ".so" in p):
        try:  # RTLD_NOLOAD: only a library that is already there, never a second copy
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            if all(hasattr(lib, name) for name in _SYMBOLS):
                found.append((path, lib))
        except OSError:
            continue
    return found


def _with_timeout(lib: Any, value: str | None) -> None:
    """Make OpenBLAS read its environment with OPENBLAS_THREAD_TIMEOUT=value (None: as the process has it),
    then restart its pool so the workers pick it up; os.environ is restored afterwards."""
    before = os.environ.get("OPENBLAS_THREAD_TIMEOUT")
    try:
        if value is not None:
            os.environ["OPENBLAS_THREAD_TIMEOUT"] = value
        lib.openblas_read_env()
    finally:
        if before is None:
            os.environ.pop("OPENBLAS_THREAD_TIMEOUT", None)
        else:
            os.environ["OPENBLAS_THREAD_TIMEOUT"] = before
    lib.blas_thread_shutdown_()


def set_blas_spin(spin: bool = False) -> bool:
    """Let idle OpenBLAS workers spin as OpenBLAS does by default (``spin=True``) or sleep at once.

    ``spin=False`` is what ``import chainrule`` does. Call it when no other thread is inside a
    BLAS call (the pool is restarted). Returns True if an OpenBLAS was changed, False where none
    is loaded (nothing is done).

    Example:
        >>> from chainrule.blas_threads import set_blas_spin
        >>> changed = set_blas_spin(False)   # what `import chainrule` already did (False without OpenBLAS)
    """
    libs = _loaded_openblas()
    for _, lib in libs:
        _with_timeout(lib, None if spin else str(QUIET_TIMEOUT))
    _state["active"] = bool(libs) and not spin
    return bool(libs)


def blas_threads_info() -> dict[str, Any]:
    """``libraries`` (the OpenBLAS files found), ``timeout`` (log2 of the cycles idle workers spin,
    0 for OpenBLAS's default of 28; None without OpenBLAS) and ``active`` (set by chainrule)."""
    libs = _loaded_openblas()
    timeout = None
    if libs:
        fn = libs[0][1].openblas_thread_timeout
        fn.restype = ctypes.c_int
        timeout = int(fn())
    return {"libraries": [path for path, _ in libs], "timeout": timeout, "active": _state["active"]}


# the thread-count functions under the names OpenBLAS builds export them (NumPy's wheels prefix theirs)
_SET_THREADS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
                "scipy_openblas_set_num_threads")
_GET_THREADS = tuple(name.replace("_set_", "_get_") for name in _SET_THREADS)


@functools.cache
def _thread_count_functions() -> tuple[tuple[Any, Any], ...]:
    """(get, set) of every loaded OpenBLAS that exports both (found once: a loaded library stays)."""
    pairs = []
    for _, lib in _loaded_openblas():
        get = next((getattr(lib, n) for n in _GET_THREADS if hasattr(lib, n)), None)
        put = next((getattr(lib, n) for n in _SET_THREADS if hasattr(lib, n)), None)
        if get is not None and put is not None:
            get.restype, put.argtypes = ctypes.c_int, [ctypes.c_int]
            pairs.append((get, put))
    return tuple(pairs)


@contextmanager
def blas_threads_limited(n: int) -> Iterator[None]:
    """Inside the block, OpenBLAS runs at most ``n`` threads (the count is process-wide: use it around
    work that runs one process per core). Without OpenBLAS it does nothing.

    Example:
        >>> import numpy as np
        >>> with blas_threads_limited(1):
        ...     float((np.ones((64, 64)) @ np.ones((64, 64)))[0, 0])
        64.0
    """
    pairs = _thread_count_functions()
    before = [get() for get, _ in pairs]
    try:
        for (_, put), was in zip(pairs, before):
            if was > n:
                put(max(1, int(n)))
        yield
    finally:
        for (_, put), was in zip(pairs, before):
            put(was)


def blas_threads_count() -> int | None:
    """The number of threads OpenBLAS uses now (None without OpenBLAS)."""
    pairs = _thread_count_functions()
    return int(pairs[0][0]()) if pairs else None


def _configure_from_environment() -> None:
    """Called once by ``import chainrule``: on unless ``CHAINRULE_BLAS_SPIN=1`` or the user set
    ``OPENBLAS_THREAD_TIMEOUT`` themselves."""
    setting = os.environ.get("CHAINRULE_BLAS_SPIN", "0").strip().lower()
    if setting in ("1", "true", "yes", "on") or "OPENBLAS_THREAD_TIMEOUT" in os.environ:
        return
    set_blas_spin(False)


# == Which thread count pays: measured per size of product ====================================
# A threaded BLAS call ends when its slowest thread ends. On a busy machine (another process on a
# core) one of OpenBLAS's threads is often descheduled, and the call waits a whole time slice for
# it: measured on 2 cores with other work running, a 256x256x256 float32 product took 18.7 ms on
# two threads and 0.41 ms on one, and sampling 200 tokens 1.4 to 8.4 s against 0.33 to 0.41 s.
# On an idle machine two threads do pay for big products. So small products always run on one
# thread, and for bigger ones each size class (a power of two of the flops) keeps the recent time
# per flop of both choices and runs the faster, trying the slower again now and then (ever less
# often while it keeps losing). Every such product is timed, so when the load changes the winner's
# time rises and the choice follows.
SMALL_FLOPS = 1 << 23  # below: one thread, no timing (never faster on two threads in our measurements)
_RETRY_FIRST, _RETRY_MOST = 8, 1024  # calls before the losing choice is tried again: doubles while it loses
_classes: dict[int, list[float]] = {}  # size class -> [s/flop on one thread, s/flop on all, calls left, retry]
_adaptive = [os.environ.get("CHAINRULE_BLAS_ADAPT", "1").strip().lower() not in ("0", "false", "no", "off")]


def set_blas_adaptive(on: bool = True) -> bool:
    """Choose BLAS threads per product as measured (True: the default) or leave them to OpenBLAS (False,
    as ``CHAINRULE_BLAS_ADAPT=0`` does). Returns the previous setting."""
    was, _adaptive[0] = _adaptive[0], bool(on)
    if on and not was:
        _classes.clear()
    return was


def _choice(size_class: int) -> bool:
    """Whether a product of the size class runs on one thread this time."""
    c = _classes.get(size_class)
    if c is None:
        c = _classes[size_class] = [0.0, 0.0, 0, _RETRY_FIRST]
    one, many, left, _ = c
    if not one or not many:  # measure each choice once before choosing
        return not one
    if left > 0:
        c[2] = left - 1
        return one <= many
    return one > many  # the losing choice, tried again


def _record(size_class: int, single: bool, seconds_per_flop: float) -> None:
    """Every timed product updates its choice's recent time; a retried loser that loses again waits longer."""
    c = _classes[size_class]
    explored = bool(c[0] and c[1]) and not c[2] and (c[0] <= c[1]) != single
    slot = 0 if single else 1
    c[slot] = seconds_per_flop if not c[slot] else 0.5 * (c[slot] + seconds_per_flop)
    if explored:
        c[3] = min(_RETRY_MOST, 2 * c[3]) if (c[0] <= c[1]) != single else _RETRY_FIRST
    if c[0] and c[1] and not c[2]:
        c[2] = c[3]


def matmul(a: Any, b: Any) -> Any:
    """``a @ b``, on the BLAS thread count that pays for its size (see above); anything but two
    NumPy arrays of at least one dimension each goes straight to ``@``.

    Example:
        >>> import numpy as np
        >>> float(matmul(np.ones((3, 4)), np.ones((4, 2)))[0, 0])
        4.0
    """
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim == 0 or b.ndim == 0 or not _adaptive[0]:
        return a @ b
    pairs = _thread_count_functions()
    if not pairs:
        return a @ b
    flops = 2.0 * a.size * (b.shape[-1] if b.ndim > 1 else 1)
    get, put = pairs[0]
    threads = get()
    if threads <= 1:
        return a @ b
    if flops < SMALL_FLOPS:
        put(1)
        try:
            return a @ b
        finally:
            put(threads)
    size_class = int(flops).bit_length()
    single = _choice(size_class)
    start = time.perf_counter()  # ~0.1 us against the millisecond of a product this size: every call is timed
    if single:
        put(1)
    try:
        out = a @ b
    finally:
        if single:
            put(threads)
    _record(size_class, single, (time.perf_counter() - start) / flops)
    return out
