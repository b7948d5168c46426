"""Gradient hooks kept apart from the values they watch (``Tensor.register_hook``).

A computed value's hooks live on its node's output entry. A leaf has no node, so its hooks live on the
leaf itself (its ``_hooks``), never in a module-level table: a hook that refers to its own leaf makes a
cycle the garbage collector frees, where a table holding the hooks would keep the leaf alive forever.
``LEAF_HOOKS`` only notes, weakly, which living leaves have hooks (empty: the sweep skips them all).

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

LEAF_HOOKS: dict[int, weakref.ref] = {}  # id(leaf) -> weak leaf, for the living leaves that have hooks

SWEEP_END: list[Any] = []  # callbacks queued during a backward, run when it has written the gradients


class HookList(list):
    """A leaf's hooks. They belong to that object: a copy or an unpickled leaf starts without any (as PyTorch's)."""

    def __deepcopy__(self, memo: Any) -> HookList:
        return HookList()

    def __reduce__(self) -> Any:
        return (HookList, ())


class RemovableHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook off (a second call does nothing)."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def _forget(key: int, ref: weakref.ref) -> None:
    if LEAF_HOOKS.get(key) is ref:
        del LEAF_HOOKS[key]


def hooks_of(leaf: Any) -> list[Any]:
    """The (mutable) list of hooks of ``leaf``, made on first use."""
    hooks = getattr(leaf, "_hooks", None)
    if hooks is None:
        hooks = leaf._hooks = HookList()
    key = id(leaf)
    ref = LEAF_HOOKS.get(key)
    if ref is None or ref() is not leaf:  # none yet, or a dead leaf's id reused
        LEAF_HOOKS[key] = weakref.ref(leaf, functools.partial(_forget, key))
    return hooks


def run_leaf_hooks(leaf: Any, g: Any) -> Any:
    """``g`` passed through ``leaf``'s hooks, in the order they were registered."""
    hooks = getattr(leaf, "_hooks", None)
    if not hooks:
        return g
    for hook in list(hooks):
        g = hook(g)
    return g


def queue_callback(fn: Any) -> None:
    """Run ``fn()`` at the end of the ``backward()`` in progress (after every ``.grad`` is written)."""
    SWEEP_END.append(fn)


def run_queued_callbacks() -> None:
    """Run (and forget) the callbacks queued during this backward, in the order they were queued; one queued by
    a callback runs too, after them (as PyTorch's engine)."""
    while SWEEP_END:
        queued = SWEEP_END[:]
        SWEEP_END.clear()  # (forgotten even if one raises: none may run at the end of a later backward)
        for fn in queued:
            fn()
