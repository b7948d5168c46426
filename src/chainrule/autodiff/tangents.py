"""Forward mode inside ``apply``: the tangents of a primitive's outputs from its arguments' tangents."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import state
from ..core.node import unbroadcast as _unbroadcast
from ..tensor import Tensor

_grad_enabled = state.grad_enabled


def propagate_tangents(prim: Any, outs: tuple[Tensor, ...], args: tuple[Any, ...], kw: dict[str, Any] | None) -> None:
    """Give each output of ``prim`` (a Primitive) its tangent at every visible forward-mode level.

    A level's rule runs on Tensors when an outer transform differentiates through it (the arguments
    or the tangent given to ``jvp`` are traced), else on the raw arrays."""
    levels = set()
    for a in args:
        if isinstance(a, Tensor) and a._tangents:
            levels.update(lv for lv in a._tangents if state.visible(lv))
    if not levels:
        return
    several = prim.n_outputs != 1
    for out in outs:
        out._tangents = {}
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a rule's infinity is an answer (as backward)
        _push(prim, outs, args, kw, levels, several)


def _push(prim: Any, outs: tuple[Tensor, ...], args: tuple[Any, ...], kw: dict[str, Any] | None, levels: set,
          several: bool) -> None:
    for level in sorted(levels):
        with state.below(level):
            traced = any(
                isinstance(a, Tensor)
                and (
                    (a._requires_grad and _grad_enabled())
                    or _has_visible_tangent(a)
                    or _traced_tangent(a._tangents.get(level) if a._tangents else None)
                )
                for a in args
            )
            if traced:
                vals, ans = args, (outs if several else outs[0])
            else:
                vals = [a._data if isinstance(a, Tensor) else a for a in args]
                ans = tuple(o._data for o in outs) if several else outs[0]._data
            total: Any = None
            for argnum, a in enumerate(args):
                if not isinstance(a, Tensor) or not a._tangents:
                    continue
                t = a._tangents.get(level)
                if t is None:
                    continue
                if not traced and isinstance(t, Tensor):
                    t = t._data
                part = prim.jvp(argnum, t, ans, vals, kw)
                if several:
                    total = list(part) if total is None else [x + y for x, y in zip(total, part)]
                else:
                    total = part if total is None else total + part
            for out, tangent in zip(outs, total if several else (total,)):
                out._tangents[level] = _unbroadcast(tangent, out._data.shape, out._data.dtype)


def _has_visible_tangent(x: Any) -> bool:
    return isinstance(x, Tensor) and bool(x._tangents) and state.any_visible(x._tangents)


def _traced_tangent(t: Any) -> bool:
    """A tangent that an outer transform differentiates: reverse mode (grad with respect to the
    tangent given to jvp) or forward mode; its rule must then run on Tensors, not on raw data."""
    return isinstance(t, Tensor) and ((t._requires_grad and _grad_enabled()) or _has_visible_tangent(t))
