"""Which Tensors are views of which, so that an in-place change through one rewrites the history of all (PyTorch's
view tracking).

A view remembers its base (``_base``: the base Tensor and whether grad mode was on when it was made) and a base
its views (``_views``: weak references), so the base of a view of a view is the first base. A view is noted when an
op's output shares memory with the op's first argument (:func:`note_view`, called by ``apply``'s general path,
which every shape op takes, and by ``strided_view`` for ``diagonal``, ``unfold`` and ``as_strided``): ops that make
no view, and code that changes nothing in place, pay nothing. How to re-derive a view from its base is not
recorded: it is read from memory when a change needs it (:func:`positions`), so every way of making a view works
alike, a view of a view included.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..core import clock, state

_grad_enabled = state.grad_enabled


def note_view(out: Any, x: Any, base: Any) -> None:
    """``out`` (a new Tensor whose array's ``.base`` is ``base``) is a view of the Tensor ``x`` when its memory
    is ``x``'s: note it on both (NumPy's ``.base`` is the array owning the memory, for a view of a view too)."""
    xd = x._data
    if base is xd:  # x owns its memory: x is no view (an unset slot is costly to ask for: not asked)
        root = x
    elif base is xd.base and xd.__class__ is np.ndarray:
        made = getattr(x, "_base", None)
        root = x if made is None else made[0]
    else:
        return
    out._base = (root, _grad_enabled())
    ref = _ref(out)
    try:
        views = root._views
    except AttributeError:  # (its first view)
        root._views = [ref]
        return
    views.append(ref)
    if not len(views) & 63:  # now and then: drop the views that died (amortised; no callback per view)
        views[:] = [r for r in views if r() is not None]


_ref = weakref.ref


def check_view_write(name: str, t: Any) -> None:
    """PyTorch's refusals of a change in place of a view ``t`` in grad mode: a view of a leaf that requires grad,
    a view made under no_grad of a base that requires grad."""
    if not _grad_enabled():
        return
    made = getattr(t, "_base", None)
    if made is None or not made[0]._requires_grad:
        return
    root, made_with_grad = made
    if root._node is None:
        raise RuntimeError(
            f"{name}: a view of a leaf Variable that requires grad is being used in an in-place operation "
            "(PyTorch refuses this too). For an update step wrap it in chainrule.no_grad(); otherwise write it "
            "out of place (p = p.index_put(...) or cr.where(mask, v, p)), or change a clone (p.clone())")
    if not made_with_grad:
        raise RuntimeError(
            f"{name}: a view was created in no_grad mode and is being modified inplace with grad mode enabled "
            "(PyTorch refuses this too): its base's history would miss the change; make the view with grad mode "
            "on, or change it under no_grad too")


def base_of(t: Any) -> Any:
    """The base Tensor ``t`` is a view of, or None."""
    made = getattr(t, "_base", None)
    return None if made is None else made[0]


def family(root: Any) -> list[tuple[Any, bool]]:
    """The live views of ``root`` that still share its memory: ``(view, made with grad mode on)`` each."""
    refs = getattr(root, "_views", None)
    if not refs:
        return []
    owner = clock.owner(root._data)
    out = []
    for r in refs:
        v = r()
        if v is not None and v._data.__class__ is np.ndarray and clock.owner(v._data) is owner:
            out.append((v, v._base[1]))
    return out


def shared_outside(root: Any, members: list[Any]) -> bool:
    """Does anything besides ``root`` and its views ``members`` hold their memory (another Tensor made otherwise,
    a NumPy array handed out, a value a node saved for its rule)? The node that made ``root`` may hold root's own
    array (its output, kept for its rule): a change then makes that node's backward refuse (the version clock)."""
    data = root._data
    owner = clock.owner(data)
    node = root._node
    kept = id(node.ans) if node is not None and node.ans is not None else None  # (an id: no reference more)
    arrays = [data]
    for v in members:
        if v._data is not data:
            arrays.append(v._data)
    through = 0  # references to the owner from the arrays themselves (a view's .base)
    for a in arrays:
        # references: its Tensor's slot, the list, this loop's name, getrefcount's argument (and `data`, a kept output)
        if a is not owner and sys.getrefcount(a) > 4 + (a is data) + (id(a) == kept):
            return True
        through += a.base is owner
    del a
    # the arrays' .base, the names `owner` and getrefcount's argument; when the root owns it: its Tensor's slot, the
    # list and `data`; a kept output
    return sys.getrefcount(owner) > through + 2 + 3 * (owner is data) + (id(owner) == kept)


def positions(base: np.ndarray, view: np.ndarray) -> np.ndarray | None:
    """Where each entry of ``view`` is in ``base`` (an index into ``base.ravel()``, one per entry of ``view``, in
    its shape), read from their memory; None when some entry of ``view`` is not one of ``base``'s."""
    k = base.itemsize
    if view.dtype != base.dtype or any(s % k for s in base.strides + view.strides):
        return None
    if not view.size:
        return np.zeros(view.shape, np.int64)
    if not base.size:
        return None
    b0, v0 = base.__array_interface__["data"][0], view.__array_interface__["data"][0]
    blo, bhi = _extent(base, b0)
    vlo, vhi = _extent(view, v0)
    if vlo < blo or vhi > bhi or (v0 - blo) % k:
        return None
    at = np.full((bhi - blo) // k + 1, -1, np.int64)
    step = at.itemsize
    laid = as_strided(at[(b0 - blo) // k:], base.shape, tuple(s // k * step for s in base.strides))
    laid[...] = np.arange(base.size).reshape(base.shape)
    out = as_strided(at[(v0 - blo) // k:], view.shape, tuple(s // k * step for s in view.strides)).copy()
    return None if (out < 0).any() else out


def _extent(a: np.ndarray, start: int) -> tuple[int, int]:
    """The lowest and highest address of an entry of ``a`` (which starts at ``start``)."""
    lo = hi = start
    for n, s in zip(a.shape, a.strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi


def overlaps(a: np.ndarray) -> bool:
    """Do two entries of ``a`` share one memory location (an expanded tensor)?"""
    return any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape)) or (
        a.size > 1 and not a.flags.c_contiguous and not a.flags.f_contiguous and
        np.unique(positions_in_memory(a)).size != a.size)


def positions_in_memory(a: np.ndarray) -> np.ndarray:
    """The address offset (in entries) of every entry of ``a`` from its first."""
    k = a.itemsize
    grid = np.zeros(a.shape, np.int64)
    for axis, (n, s) in enumerate(zip(a.shape, a.strides)):
        grid += (np.arange(n) * (s // k)).reshape((-1,) + (1,) * (a.ndim - axis - 1))
    return grid.ravel()
