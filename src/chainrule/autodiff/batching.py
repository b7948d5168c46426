"""vmap bookkeeping shared with the core: which batch levels are open, and the hook that batches a primitive.

Each ``vmap`` call opens a level with a fresh, increasing id. ``open`` counts running ``vmap``
calls (``apply`` looks at it on every primitive call, so it is a plain int); ``levels`` lists
the levels a transform entered now must batch over (a transform hides the level it is handling
while it differentiates the whole batch at once). ``dispatch`` is set by ``chainrule.batching``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

open = 0  # noqa: A001  (number of vmap calls running)
levels: list[int] = []  # visible levels, innermost last
sizes: dict[int, int] = {}  # batch size of each open level
dispatch: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any] | None = None
BATCHED: tuple[type, ...] = ()  # the batched value class, set by chainrule.batching


def batched_in(args: tuple[Any, ...], kw: dict[str, Any]) -> bool:
    """True if a batched value is among ``args`` (or one level inside a tuple or list) or ``kw``'s values."""
    for a in args:
        if isinstance(a, BATCHED):
            return True
        if isinstance(a, (tuple, list)) and any(isinstance(b, BATCHED) for b in a):
            return True
    return any(isinstance(v, BATCHED) for v in kw.values()) if kw else False


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
