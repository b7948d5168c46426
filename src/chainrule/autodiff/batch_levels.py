"""vmap bookkeeping shared with the core: which batch levels are open, and the hook that batches a primitive.

Each ``vmap`` call opens a level with a fresh, increasing id. The visible levels (those a
transform entered now must batch over; a transform hides the level it is handling while it
differentiates the whole batch at once) and each level's batch size are per thread and per async
task (``contextvars``, like grad mode). ``open`` counts the vmap calls running in the process: it
only gates the hook in ``apply`` (read on every primitive call, so a plain int); the hook then
looks for Batched arguments, which exist only inside their own vmap. ``dispatch`` is set by
``chainrule.batching``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from ..core import traces
from ..tensor import Tensor

open = 0  # noqa: A001  (number of vmap calls running in the process)
_open_lock = threading.Lock()
_LEVELS: ContextVar[tuple[int, ...]] = ContextVar("chainrule_vmap_levels", default=())
_SIZES: ContextVar[tuple[tuple[int, int], ...]] = ContextVar("chainrule_vmap_sizes", default=())
dispatch: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any] | None = None
# How a NumPy function or ufunc runs on batched arguments (value rules, else per example), and a function run once
# per example with the results stacked: set by chainrule.batching.protocol, for the layers below it (cnp, x.at[i]).
numpy_call: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any] | None = None
per_example: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any] | None = None
BATCHED: tuple[type, ...] = ()  # the batched value class, set by chainrule.batching

levels: Callable[[], tuple[int, ...]] = _LEVELS.get
"""The visible vmap levels in this thread or task, innermost last."""


def size(level: int) -> int:
    """The batch size of an open level."""
    return dict(_SIZES.get())[level]


def opened(delta: int) -> None:
    global open
    with _open_lock:
        open += delta
    traces.intercepting(delta)  # apply1 and apply2 test one counter for vmap and traces


def is_batched(x: Any) -> bool:
    """True for a batched value (one exists only inside its vmap): code above the ops asks this rather than
    naming vmap's class, e.g. to read every example's values at once."""
    return isinstance(x, BATCHED)


def is_value(x: Any) -> bool:
    """True for what the ops take as it is: a Tensor, or a batched value inside vmap (else convert first)."""
    return isinstance(x, Tensor) or isinstance(x, BATCHED)


def batched_in(args: tuple[Any, ...], kw: dict[str, Any]) -> bool:
    """True if a batched value is among ``args`` or ``kw``'s values (or one level inside a tuple or list: an index
    ``x[:, i]`` with ``i`` batched)."""
    for a in (*args, *kw.values()) if kw else args:
        if isinstance(a, BATCHED):
            return True
        if isinstance(a, (tuple, list)) and any(isinstance(b, BATCHED) for b in a):
            return True
    return False


def batched_tree(tree: Any) -> bool:
    """True if a batched value is a leaf of the (tuple/list/dict) tree."""
    stack = [tree]
    while stack:
        x = stack.pop()
        if isinstance(x, BATCHED):
            return True
        if isinstance(x, (tuple, list)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
    return False
