"""The version clock: creation stamps and in-place changes, so a stale graph is refused.

One counter serves both: a node's ``stamp`` is its creation time (a node is always made after
its parents, which orders the graph), and an in-place change of an array records the time it
happened against the memory it wrote. A node whose saved arrays were changed after its stamp was
computed from values that no longer exist, and :func:`check_saved` refuses to differentiate it.

Changes are recorded by memory (the array that owns the buffer): views (slices, reshape, ``.T``,
``detach``) share memory with their base, so a change through any of them is seen. The owners
are held weakly, so in-place changes of temporaries in a long loop do not pile up. The counter is
process-wide (its ``next`` is atomic under the GIL): stamps only need to be increasing.
"""

from __future__ import annotations

import itertools
import weakref
from functools import partial
from typing import Any

import numpy as np

tick = itertools.count(1).__next__
"""The next stamp (an int larger than every stamp handed out before)."""

last_change = [0]  # stamp of the latest in-place change anywhere: nodes made after it need no check
_changed_memory: dict[int, tuple[weakref.ref, int]] = {}  # id(owner array) -> (weak owner, stamp)


def owner(arr: np.ndarray) -> np.ndarray:
    """The array that owns ``arr``'s memory (``arr`` itself, or the base of a view chain)."""
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def record_change(arr: np.ndarray) -> int:
    """Note that ``arr``'s memory was just written in place; returns the stamp of the change."""
    stamp = last_change[0] = tick()
    base = arr
    while isinstance(base.base, np.ndarray):  # owner(arr), inlined
        base = base.base
    key = id(base)
    entry = _changed_memory.get(key)
    if entry is not None and entry[0]() is base:  # changed before (an optimiser's step): only the stamp moves
        _changed_memory[key] = (entry[0], stamp)
        return stamp
    _changed_memory[key] = (weakref.ref(base, partial(_forget, key)), stamp)
    return stamp


def _forget(key: int, ref: weakref.ref) -> None:
    """The owner at ``key`` was freed: drop its entry (unless a newer array at the same address has one)."""
    if _changed_memory.get(key, (None,))[0] is ref:
        del _changed_memory[key]


def changed_after(arr: Any, stamp: int) -> bool:
    """True if ``arr``'s memory was written in place after ``stamp``."""
    if not isinstance(arr, np.ndarray):
        return False
    base = owner(arr)
    entry = _changed_memory.get(id(base))
    return entry is not None and entry[0]() is base and entry[1] > stamp


def version(arr: Any) -> int:
    """The stamp of the latest in-place change of ``arr``'s memory (0: never changed in place)."""
    if not isinstance(arr, np.ndarray):
        return 0
    base = owner(arr)
    entry = _changed_memory.get(id(base))
    return entry[1] if entry is not None and entry[0]() is base else 0
