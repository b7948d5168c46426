"""Flat groups: a parameter group updated as one vector, so an elementwise rule runs once per group.

On a GPU each array operation is a kernel launch, tens of microseconds from Python, and an Adam step is about
fourteen of them per parameter: a GPT with a hundred parameter arrays spent more time launching its optimiser's
kernels than running them. Seen as one vector (what PyTorch's ``foreach`` kernels do), a group's update is
those fourteen launches in all, plus one concatenation of the values, one of the gradients, and one copy back
per parameter. The rules are elementwise, so every entry sees the same arithmetic as in the loop over
parameters: the results are the same bit for bit.

The optimiser's state stays per parameter as the user sees it (``optimizer.state``, ``state_dict``): its arrays
are views of the flat ones. When anything replaced them (``load_state_dict``, a step that left a parameter
without a gradient out) the flat arrays are rebuilt from the per-parameter ones, or, when those no longer agree
(different step counts), the group goes back to the loop: never a silently stale state.

Example:
    >>> import numpy as np
    >>> from chainrule import Tensor, optim
    >>> a, b = Tensor(np.ones(2), requires_grad=True), Tensor(np.ones((2, 2)), requires_grad=True)
    >>> opt = optim.Adam([a, b], lr=0.1, foreach=True)
    >>> ((a * 2).sum() + (b * b).sum()).backward(); opt.step()
    >>> np.round(a.numpy(), 6).tolist(), opt.state[1]["exp_avg"].shape   # a view of the group's flat moment
    ([0.9, 0.9], (2, 2))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.device import of
from ..tensor import Tensor


class FlatGroup:
    """One parameter group's state held as flat arrays, with each parameter's entries as views of them."""

    __slots__ = ("indices", "shapes", "spans", "dicts", "state", "views", "kind")

    def __init__(self, indices: tuple[int, ...], shapes: list[tuple[int, ...]], dicts: list[dict[str, Any]],
                 state: dict[str, Any], kind: type) -> None:
        self.indices, self.shapes, self.dicts, self.state, self.kind = indices, shapes, dicts, state, kind
        sizes = [math.prod(s) for s in shapes]
        starts = np.cumsum([0, *sizes[:-1]]).tolist()
        self.spans = [(o, o + n) for o, n in zip(starts, sizes, strict=True)]
        self.views: dict[str, tuple[Any, list[Any]]] = {}  # key -> (flat array, its per-parameter views)
        self.distribute()

    def distribute(self) -> None:
        """Put the flat state into each parameter's state: views of new flat arrays, the shared scalars."""
        for key in [k for k in self.views if k not in self.state]:
            del self.views[key]
        for key, value in self.state.items():
            if isinstance(value, self.kind) and value.ndim == 1:
                known = self.views.get(key)
                if known is None or known[0] is not value:
                    views = [value[lo:hi].reshape(shape) for (lo, hi), shape in zip(self.spans, self.shapes,
                                                                                     strict=True)]
                    self.views[key] = (value, views)
                for d, view in zip(self.dicts, self.views[key][1], strict=True):
                    d[key] = view
            else:
                for d in self.dicts:
                    d[key] = value

    def current(self, indices: tuple[int, ...], state: dict[int, dict[str, Any]]) -> bool:
        """Whether the per-parameter state is still exactly the views and values this group put there."""
        if indices != self.indices:
            return False
        width = len(self.state)
        for i, d in zip(indices, self.dicts, strict=True):
            if state.get(i) is not d or len(d) != width:
                return False
        for key, value in self.state.items():
            known = self.views.get(key)
            if known is not None:
                if known[0] is not value or any(d.get(key) is not v for d, v in zip(self.dicts, known[1],
                                                                                     strict=True)):
                    return False
            elif any(not _same(d.get(key), value) for d in self.dicts):
                return False
        return True


def _same(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and a == b)


def gather(members: list[tuple[int, Any, Any, int | None]]) -> tuple[list[Any], list[Any]] | None:
    """(values, gradients) of a group's parameters, or None when they cannot be one vector: a Scalar block,
    mixed array types, dtypes or devices, a gradient of another shape or dtype."""
    values, grads = [], []
    kind = dtype = device = None
    for _, p, _, _ in members:
        if not isinstance(p, Tensor):
            return None
        g = p.grad
        v, g = p._data, g._data if isinstance(g, Tensor) else g
        if kind is None:
            kind, dtype, device = v.__class__, v.dtype, getattr(v, "device", None)
        if (v.__class__ is not kind or g.__class__ is not kind or v.dtype != dtype or g.dtype != dtype
                or g.shape != v.shape or getattr(v, "device", None) != device):
            return None
        values.append(v)
        grads.append(g)
    return (values, grads) if values else None


def build(indices: tuple[int, ...], values: list[Any], state: dict[int, dict[str, Any]]) -> FlatGroup | None:
    """The flat state of a group from its parameters' states (none yet: an empty one), or None when those do not
    line up (other keys, other step counts, arrays of other shapes): the group is then updated parameter by
    parameter."""
    kind = values[0].__class__
    shapes = [v.shape for v in values]
    dicts = [state.get(i) or {} for i in indices]
    flat: dict[str, Any] = {}
    if any(dicts):
        keys = set(dicts[0])
        if any(set(d) != keys for d in dicts):
            return None
        for key in keys:
            entries = [d[key] for d in dicts]
            if all(isinstance(e, kind) and e.shape == s for e, s in zip(entries, shapes, strict=True)):
                flat[key] = np.concatenate([e.reshape(-1) for e in entries])
            elif all(not isinstance(e, kind) and _same(e, entries[0]) for e in entries):
                flat[key] = entries[0]
            else:
                return None
    for i, d in zip(indices, dicts, strict=True):
        state[i] = d
    return FlatGroup(indices, shapes, dicts, flat, kind)


def in_memory_order(members: list[tuple[int, Any, Any, int | None]]) -> list[tuple[int, Any, Any, int | None]]:
    """Off the host, the group's parameters in the order of their memory, so that parameters packed together
    (``nn.module_placement.packed``) are one stretch of the group's vector whatever order the group lists them
    in; on the host as given. (The rules are elementwise: the order changes no result.)"""
    first = members[0][1]
    if not isinstance(first, Tensor) or first._data.__class__ is np.ndarray:
        return members
    if not all(isinstance(m[1], Tensor) and m[1]._data.__class__ is first._data.__class__ for m in members):
        return members
    b = of(first._data)
    return sorted(members, key=lambda m: b.address(m[1]._data))


def stretches(values: list[Any], spans: list[tuple[int, int]]) -> list[tuple[Any, int, int]] | None:
    """The group's parameters as stretches of memory: ``(memory, lo, hi)``, a 1-d view of consecutive parameters
    that are consecutive in memory too (a module moved to a device packs them: ``nn.module_placement.packed``)
    and their span in the group's vector; None when a parameter is not contiguous (each is then copied)."""
    b = of(values[0])
    out: list[tuple[Any, int, int]] = []
    end = root = None
    for v, (lo, hi) in zip(values, spans, strict=True):
        if not v.flags.c_contiguous or not v.size:
            return None
        r = v
        while r.base is not None:
            r = r.base
        here = b.address(v)
        if (out and end == here and b.address(r) == b.address(root) and root.dtype == v.dtype
                and root.flags.c_contiguous):  # (its flat view is a view, not a copy)
            memory, first, _ = out[-1]
            start = (b.address(memory) - b.address(root)) // v.itemsize
            out[-1] = (root.reshape(-1)[start:start + hi - first], first, hi)
        else:
            out.append((v.reshape(-1), lo, hi))
            root = r
        end = here + v.nbytes
    return out


def step(members: list[tuple[int, Any, Any, int | None]], state: dict[int, dict[str, Any]], update: Any,
         hyper: Any, maximize: bool, cache: dict[int, FlatGroup], key: int) -> bool:
    """One update of a group as one vector; False (nothing done) when it cannot be one: the caller loops.
    Parameters without a gradient are left out, as the loop leaves them (a frozen layer's, say)."""
    members = [m for m in members if getattr(m[1], "grad", None) is not None]
    if not members:
        return True
    members = in_memory_order(members)
    gathered = gather(members)
    if gathered is None:
        return False
    values, grads = gathered
    indices = tuple(m[0] for m in members)
    group = cache.get(key)
    if group is None or not group.current(indices, state):
        group = build(indices, values, state)
        if group is None:
            cache.pop(key, None)
            return False
        cache[key] = group
    runs = stretches(values, group.spans) if values[0].__class__ is not np.ndarray else None
    if runs is not None and len(runs) == 1 and runs[0][0].size == group.spans[-1][1]:
        p = runs[0][0]  # the parameters' own memory (a module packed on a device): updated where it is
        runs = []
    else:
        p = np.concatenate([v.reshape(-1) for v in values])
    g = np.concatenate([g.reshape(-1) for g in grads])
    if maximize:
        g = -g
    update(p, g, hyper, group.state)
    group.distribute()
    if runs is None:
        for v, (lo, hi) in zip(values, group.spans, strict=True):
            v[...] = p[lo:hi].reshape(v.shape)
    for memory, lo, hi in runs or ():  # one copy per stretch of memory, not per parameter
        memory[...] = p[lo:hi]
    for member in members:
        member[2]()
    return True
