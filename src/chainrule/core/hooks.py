"""Gradient hooks kept apart from the values they watch (``Tensor.register_hook``).

A computed value's hooks live on its node's output entry; a leaf has no node, so its hooks live
here, keyed by identity and held weakly: the entry goes away with the leaf.

``queue_callback(fn)`` (PyTorch's ``Variable._execution_engine.queue_callback``): called from a hook
during ``backward()``, it runs ``fn()`` once that backward has written every ``.grad`` (data-parallel
training finishes its gradient reductions there, before an optimiser reads them).

Example:
    >>> from chainrule.core.hooks import RemovableHandle, hooks_of, run_leaf_hooks
    >>> class Leaf: pass
    >>> leaf = Leaf()
    >>> hooks = hooks_of(leaf)
    >>> hooks.append(lambda g: g * 2)
    >>> run_leaf_hooks(leaf, 3)
    6
    >>> RemovableHandle(hooks, hooks[0]).remove(); run_leaf_hooks(leaf, 3)
    3
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

LEAF_HOOKS: dict[int, tuple[weakref.ref, list[Any]]] = {}  # id(leaf) -> (weak leaf, its hooks)
SWEEP_END: list[Any] = []  # callbacks queued during a backward, run when it has written the gradients


class RemovableHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook off (a second call does nothing)."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def _forget(key: int, ref: weakref.ref) -> None:
    if LEAF_HOOKS.get(key, (None,))[0] is ref:
        del LEAF_HOOKS[key]


def hooks_of(leaf: Any) -> list[Any]:
    """The (mutable) list of hooks of ``leaf``, made on first use."""
    key = id(leaf)
    entry = LEAF_HOOKS.get(key)
    if entry is None or entry[0]() is not leaf:  # none yet, or a dead leaf's id reused
        entry = LEAF_HOOKS[key] = (weakref.ref(leaf, functools.partial(_forget, key)), [])
    return entry[1]


def run_leaf_hooks(leaf: Any, g: Any) -> Any:
    """``g`` passed through ``leaf``'s hooks, in the order they were registered."""
    entry = LEAF_HOOKS.get(id(leaf))
    if entry is None or entry[0]() is not leaf:
        return g
    for hook in list(entry[1]):
        g = hook(g)
    return g


def queue_callback(fn: Any) -> None:
    """Run ``fn()`` at the end of the ``backward()`` in progress (after every ``.grad`` is written)."""
    SWEEP_END.append(fn)


def run_queued_callbacks() -> None:
    """Run (and forget) the callbacks queued during this backward, in the order they were queued."""
    queued = SWEEP_END[:]
    SWEEP_END.clear()  # (forgotten even if one raises: none may run at the end of a later backward)
    for fn in queued:
        fn()
