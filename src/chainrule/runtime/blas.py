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
    >>> from chainrule.runtime.blas import blas_threads_info
    >>> sorted(blas_threads_info())
    ['active', 'libraries', 'timeout']
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
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
        >>> from chainrule.runtime.blas import set_blas_spin
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


_ONE_THREAD = [False]  # inside blas_threads_limited(1): every product runs on one thread, none needs the check


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
    known = _ONE_THREAD[0]
    try:
        for (_, put), was in zip(pairs, before):
            if was > n:
                put(max(1, int(n)))
        _ONE_THREAD[0] = known or (bool(pairs) and n <= 1)
        yield
    finally:
        _ONE_THREAD[0] = known
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


# == Small products on one thread ===============================================================
# A threaded BLAS call ends when its slowest thread ends. On a busy machine (another process on a
# core) one of OpenBLAS's threads is often descheduled, and the call waits a whole time slice for
# it. Measured on 2 cores with other work running (float32, median of 20): 128x128x128 took 41 us
# on two threads and 20 us on one; 256x256x256 24 ms and 0.14 ms; 512x512x512 0.83 ms and 1.1 ms;
# (4096, 128) x (128, 512) 4.4 ms and 6.3 ms. Sampling 200 tokens from the README's GPT took 17
# to 51 s against 1.0 to 1.3 s. So a product below ONE_THREAD_BELOW flops runs on one thread, and a
# bigger one on OpenBLAS's count, where the threads pay even on a busy machine. The rule depends on
# the shapes alone, never on timings, so a result never depends on the machine's load (OpenBLAS's
# sums on one and on two threads differ in the last bits).
ONE_THREAD_BELOW = [int(os.environ.get("CHAINRULE_BLAS_ONE_THREAD_BELOW", 1 << 27))]


def set_blas_one_thread_below(flops: int) -> int:
    """Run chainrule's products of fewer than ``flops`` floating-point operations on one BLAS thread
    (0: leave every product to OpenBLAS, as ``CHAINRULE_BLAS_ONE_THREAD_BELOW=0`` does). Returns the
    previous bound (2**27 by default)."""
    was, ONE_THREAD_BELOW[0] = ONE_THREAD_BELOW[0], max(0, int(flops))
    return was


def matmul(a: Any, b: Any) -> Any:
    """``a @ b``, on one BLAS thread when the product is small (see above); anything but two NumPy
    arrays of at least one dimension each goes straight to ``@``.

    Example:
        >>> import numpy as np
        >>> float(matmul(np.ones((3, 4)), np.ones((4, 2)))[0, 0])
        4.0
    """
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim == 0 or b.ndim == 0:
        return a @ b
    if _ONE_THREAD[0] or 2 * a.size * (b.shape[-1] if b.ndim > 1 else 1) >= ONE_THREAD_BELOW[0]:
        return a @ b
    pairs = _thread_count_functions()
    if not pairs:
        return a @ b
    get, put = pairs[0]
    threads = get()
    if threads <= 1:
        return a @ b
    put(1)
    try:
        return a @ b
    finally:
        put(threads)
