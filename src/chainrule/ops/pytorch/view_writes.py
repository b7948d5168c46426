"""An in-place change in the graph of a tensor that has views, or of a view (``z[1:].mul_(y)``, ``a[i].copy_(h)``,
``z.t().relu_()``), recorded as PyTorch records it.

The base is the one that changes: its new value is its old one with the view's entries replaced by the op's result
on them (PyTorch's ``CopySlices``), a scatter into a copy of the old values, so the gradient reaches the old
values outside the view and, through the op, the ones inside. Then every live view of the base made with grad
mode on (the changed one, views of views, views made earlier) takes the node of its entries read from the new
base (a gather), as PyTorch regenerates a view's ``grad_fn`` from its base: each sees the new history. Which
entries of the base a view holds is read from memory (``tensor/views.py``), so every view op is covered alike.

PyTorch's refusals hold: a view of a leaf that requires grad, a view made under ``no_grad`` of a base that
requires grad, entries that overlap (an expanded base, ``unfold``'s windows). Memory held by anything else (a
Tensor not made as a view, a value a node saved) is refused as for a tensor without views; the node that made the
base may keep its output for its rule, and its backward then refuses (the version clock), as PyTorch's does.

Example:
    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> z = x * 1
    >>> z[1:].mul_(x[1:]).tolist()
    [4.0, 9.0]
    >>> z.sum().backward(); x.grad.tolist()
    [1.0, 4.0, 6.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.state import no_grad
from ...tensor import Tensor
from ...tensor import views as _views


def record_in_family(self: Tensor, root: Tensor, name: str, compute: Callable[[Tensor], Any],
                     fitted: Callable[..., Tensor], shared_error: Callable[[], Exception]) -> Tensor:
    """``self`` (``root`` or one of its views) becomes ``compute(old)`` in the graph, and so do ``root`` and
    its views: see the module's docstring. ``fitted(name, self, result)`` checks the result's shape and dtype."""
    members = [v for v, _ in _views.family(root)]
    if self is not root and all(v is not self for v in members):
        raise RuntimeError(f"{name}: this view no longer shares memory with its base (the base's data was replaced); "
                           "clone() it first, or write it out of place")
    if _views.overlaps(root._data):
        raise RuntimeError(
            f"{name}: the base of this view has entries that refer to one memory location (an expand()ed tensor), "
            "so a change in place through a view would change several entries; clone() the base first (PyTorch "
            "refuses this too)")
    if _views.shared_outside(root, members):
        raise shared_error()
    at = {}
    for v in members:
        where = _views.positions(root._data, v._data)
        if where is None:  # its entries are not the base's (another dtype: .real of a complex tensor, view(dtype))
            raise RuntimeError(
                f"{name}: a view of this tensor's memory reads it as another dtype ({v._data.dtype}, the base is "
                f"{root._data.dtype}: .real, .imag or view(dtype)), which chainrule cannot re-derive after the change; "
                "clone() that view, or write it out of place")
        at[id(v)] = np.unravel_index(where, root._data.shape or (1,))
    if self is not root and np.unique(_views.positions(root._data, self._data)).size != self._data.size:
        raise RuntimeError(f"{name}: more than one entry of this view refers to one memory location (unfold's "
                           "overlapping windows), so its change is not one value per entry; clone() it first "
                           "(PyTorch refuses this too)")
    kept = root._data.copy()
    old = Tensor._linked(kept, root._node, root._index) if root._node is not None else Tensor._wrap(kept)
    if root._tangents:
        old._tangents = root._tangents
    if self is root:
        new_root = fitted(name, root, compute(old))
        retained = _drop_retained(self)
        root._data[...] = new_root._data
    else:
        where = at[id(self)]  # (for each axis of the base, the view's entries' indices)
        new_view = fitted(name, self, compute(_read(old, where)))
        retained = _drop_retained(self)
        new_root = _written(old, where, new_view)
        self._data[...] = new_view._data
    root._bump_version()
    _take(root, new_root)
    for v, with_grad in _views.family(root):
        if id(v) not in at:  # (made during the change: already of the new base)
            continue
        if with_grad:
            _take(v, _read(new_root, at[id(v)]))
        else:  # made under no_grad: no history, as there, but its tangents are the new ones
            with no_grad():
                _take(v, _read(new_root, at[id(v)]))
    if retained:
        self.retain_grad()
    return self


def _read(t: Tensor, where: tuple[np.ndarray, ...]) -> Tensor:
    """The entries of ``t`` at ``where`` (a gather: a new array)."""
    return t[where] if t.ndim else t.reshape((1,))[where]


def _written(t: Tensor, where: tuple[np.ndarray, ...], values: Tensor) -> Tensor:
    """``t`` with ``values`` at ``where`` (a scatter into a copy)."""
    return t.at[where].set(values) if t.ndim else t.reshape((1,)).at[where].set(values).reshape(())


def _drop_retained(t: Tensor) -> bool:
    """``t`` retains its grad: the old node stops writing it (the grad kept is the new value's, as PyTorch's)."""
    retained = t.retains_grad
    if retained:
        t._node.outputs[t._index][1] = False
    return retained


def _take(t: Tensor, result: Tensor) -> None:
    """``t`` (whose memory already holds ``result``'s values) takes ``result``'s place in the graph."""
    t._node, t._index, t._stamp = result._node, result._index, result._stamp
    t._requires_grad = result._requires_grad
    if t._tangents or result._tangents:
        t._tangents = result._tangents
