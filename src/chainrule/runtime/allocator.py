"""Keep freed array memory in the process instead of handing it back to the OS after every op.

Why: glibc's ``malloc`` serves every block above its *mmap threshold* (128 KiB at start) with a
fresh ``mmap`` and gives the block back with ``munmap`` when it is freed. Autodiff frees and
allocates large temporaries all the time (each op's result, each gradient), so every such array's
pages fault in again on first touch: a training step of a 784-512-512-10 MLP in float64 costs
thousands of minor page faults and runs up to 2x slower than the same arithmetic with the memory
kept. glibc also trims the top of its heap whenever more than ``M_TRIM_THRESHOLD`` bytes are free
there, with the same effect. PyTorch avoids this with its own caching allocator.

What: at ``import chainrule`` (on glibc only) we raise both thresholds with ``mallopt``:

- ``M_MMAP_THRESHOLD`` = 32 MiB (glibc's largest allowed value on 64-bit): blocks below it come
  from the heap, whose freed memory is reused by the next allocation of a similar size;
- ``M_TRIM_THRESHOLD`` = 1 GiB (``keep_bytes``): up to that much free memory stays mapped at the
  top of the heap instead of being returned after each step.

Results do not change (only where memory comes from). The cost is resident memory: freed memory
is kept for reuse, so the process's resident size stays near its peak. :func:`release_memory`
gives the free memory back on demand; :func:`allocator_info` reports what is held.

Switch: set the environment variable ``CHAINRULE_MALLOC=0`` before importing chainrule to leave
the allocator alone, or call :func:`set_allocator` (``set_allocator(False)`` restores glibc's
defaults as far as ``mallopt`` allows). On other platforms (macOS, Windows, musl) every function
here does nothing and says so in its result.

Example:
    >>> from chainrule.runtime.allocator import allocator_info
    >>> sorted(allocator_info())[:3]
    ['active', 'free_held_bytes', 'glibc']
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from typing import Any

_M_TRIM_THRESHOLD = -1  # mallopt parameter numbers, from glibc's malloc.h
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc refuses larger values on 64-bit (HEAP_MAX_SIZE / 2)
KEEP_BYTES = 1024 * 1024 * 1024
_GLIBC_MMAP_DEFAULT = 128 * 1024
_GLIBC_TRIM_DEFAULT = 128 * 1024


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
    )]


def _load_glibc() -> Any:
    """The C library if it is glibc (the only one whose ``mallopt`` we know), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version.restype = ctypes.c_char_p
        libc.gnu_get_libc_version()  # only glibc has it
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.mallopt.restype = ctypes.c_int
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        libc.malloc_trim.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    return libc


_libc = _load_glibc()
_state: dict[str, Any] = {"active": False, "keep_bytes": None}


def set_allocator(keep: bool = True, keep_bytes: int = KEEP_BYTES) -> bool:
    """Keep freed memory for reuse (``keep=True``, the default at import) or restore glibc's defaults.

    ``keep_bytes`` bounds the free memory kept at the top of the heap (beyond it, glibc returns
    memory to the OS as usual). Returns True if the allocator was changed, False where this
    platform's C library is not glibc (nothing is done there).

    Example:
        >>> from chainrule.runtime.allocator import set_allocator
        >>> changed = set_allocator(True)   # what `import chainrule` already did (False off glibc)
    """
    if _libc is None:
        return False
    if keep:
        keep_bytes = int(keep_bytes)
        if keep_bytes < 0:
            raise ValueError(f"set_allocator: keep_bytes must be >= 0, got {keep_bytes}")
        ok = _libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
        ok = _libc.mallopt(_M_TRIM_THRESHOLD, min(keep_bytes, 2**31 - 1)) == 1 and ok
        _state.update(active=ok, keep_bytes=keep_bytes if ok else None)
        return ok
    # glibc's start-up values (the dynamic mmap threshold cannot be switched back on from outside)
    _libc.mallopt(_M_MMAP_THRESHOLD, _GLIBC_MMAP_DEFAULT)
    _libc.mallopt(_M_TRIM_THRESHOLD, _GLIBC_TRIM_DEFAULT)
    _libc.malloc_trim(0)
    _state.update(active=False, keep_bytes=None)
    return True


def release_memory() -> bool:
    """Give free heap memory back to the operating system now (glibc's ``malloc_trim``).

    Useful after a large computation when the process goes on with little memory. Returns
    True if memory was released, False if none could be (or off glibc).
    """
    return _libc is not None and _libc.malloc_trim(0) == 1


def allocator_info() -> dict[str, Any]:
    """What the allocator holds: ``glibc`` (bool), ``active`` (thresholds raised by chainrule),
    ``keep_bytes``, and from ``mallinfo2`` (glibc 2.33+): ``in_use_bytes`` (allocated now),
    ``free_held_bytes`` (freed but kept for reuse), ``mmapped_bytes`` (large blocks mapped
    separately). Byte counts are None where they cannot be read."""
    info: dict[str, Any] = {"glibc": _libc is not None, "active": _state["active"], "keep_bytes": _state["keep_bytes"],
                            "in_use_bytes": None, "free_held_bytes": None, "mmapped_bytes": None}
    fn = getattr(_libc, "mallinfo2", None) if _libc is not None else None
    if fn is not None:
        fn.restype = _Mallinfo2
        m = fn()
        info.update(in_use_bytes=m.uordblks + m.hblkhd, free_held_bytes=m.fordblks, mmapped_bytes=m.hblkhd)
    return info


def _configure_from_environment() -> None:
    """Called once by ``import chainrule``: on unless ``CHAINRULE_MALLOC=0``."""
    setting = os.environ.get("CHAINRULE_MALLOC", "1").strip().lower()
    if setting in ("0", "false", "no", "off"):
        return
    set_allocator(True)
