"""PyTorch's ``torch.autograd.forward_ad``: forward mode with dual tensors, as its forward-mode AD tutorial writes it.

Inside ``with dual_level():``, ``make_dual(x, t)`` is ``x`` carrying the tangent ``t``; every op on it carries the
tangent along (chainrule's forward mode, the one :func:`chainrule.jvp` uses), and ``unpack_dual(y)`` gives
``(primal, tangent)``: the value and the directional derivative of ``y`` in the direction ``t``. Reverse mode works
on the same ops as usual (a dual of a tensor that requires grad passes gradients back to it).

Example:
    >>> import chainrule as cr
    >>> import chainrule.autograd.forward_ad as fwAD
    >>> x = cr.tensor([0.0, 1.0], dtype=cr.float64)
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(x, cr.ones(2, dtype=cr.float64)).exp()
    ...     primal, tangent = fwAD.unpack_dual(y)
    >>> tangent.tolist() == primal.tolist()  # d/dx exp(x) = exp(x)
    True
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from ..core import state
from ..tensor import Tensor
from .forward import _dual

__all__ = ["dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor", "enter_dual_level", "exit_dual_level"]

_OPEN: contextvars.ContextVar[tuple[tuple[int, Any], ...]] = contextvars.ContextVar("dual_levels", default=())


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the value and its tangent (None where it has none at the level)."""

    primal: Any
    tangent: Any


def enter_dual_level() -> int:
    """Open a dual level (``with dual_level():`` is the usual way) and return it."""
    manager = state.new_level()
    level = manager.__enter__()
    _OPEN.set((*_OPEN.get(), (level, manager)))
    return level


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the innermost dual level (``level``, if given, must be it, as PyTorch's)."""
    open_levels = _OPEN.get()
    if not open_levels or level is not None and open_levels[-1][0] != level:
        raise RuntimeError(f"exit_dual_level: level {level} is not the innermost open dual level")
    _OPEN.set(open_levels[:-1])
    open_levels[-1][1].__exit__(None, None, None)


@contextlib.contextmanager
def dual_level() -> Iterator[int]:
    """A forward-mode level: the tangents given by ``make_dual`` inside it are carried until it closes."""
    level = enter_dual_level()
    try:
        yield level
    finally:
        exit_dual_level(level=level)


def _level(level: int | None, where: str) -> int:
    if level is not None:
        return level
    open_levels = _OPEN.get()
    if not open_levels:
        raise RuntimeError(f"{where}: no dual level is open; call it inside `with forward_ad.dual_level():`")
    return open_levels[-1][0]


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Tensor:
    """``tensor`` carrying ``tangent`` (of its shape) at ``level`` (the innermost open one by default)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"make_dual: expected a Tensor, got {type(tensor).__name__}")
    t = tangent if isinstance(tangent, Tensor) else Tensor(np.asarray(tangent))
    if t.shape != tensor.shape:
        raise ValueError(f"make_dual: the tangent has shape {t.shape} but the tensor has shape {tensor.shape}; "
                         "give a tangent of the tensor's shape")
    if tensor.dtype.kind not in "fc":
        raise ValueError(f"make_dual: expected a floating-point tensor, got {tensor.dtype} (make it float first)")
    lvl = _level(level, "make_dual")
    dual = _dual(tensor, t, lvl)
    if t.dtype == dual.dtype:
        dual._tangents[lvl] = t  # the tangent given, itself: unpack_dual gives it back, as PyTorch's
    return dual


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at ``level``: its value (still linked to the reverse graph) and its
    tangent, a Tensor (None if it carries none there, as PyTorch's)."""
    if not isinstance(tensor, Tensor) or level is None and not _OPEN.get():  # (outside every level: no tangent)
        return UnpackedDualTensor(tensor, None)
    lvl = _level(level, "unpack_dual")
    found = (tensor._tangents or {}).get(lvl)
    if tensor._requires_grad and state.is_grad_enabled():
        with state.below(lvl):  # (a view: its gradients reach tensor's graph; the level's tangent stays behind)
            primal = tensor.view_as(tensor)
    else:
        primal = Tensor._wrap(tensor._data)
    tangent = None if found is None else found if isinstance(found, Tensor) else Tensor._wrap(found)
    return UnpackedDualTensor(primal, tangent)
