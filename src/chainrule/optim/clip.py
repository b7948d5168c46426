"""Gradient clipping by global norm and by value (PyTorch's rules), for Tensors and Scalars.

Clipped gradients are new arrays (gradients can share memory in a graph, so they are never
scaled in place). Gradients off the host (a GPU's) are seen as one vector: one concatenation, one product
and one scaling in all, where one per parameter would each be a kernel launch.

Example:
    >>> from chainrule import Tensor, optim
    >>> w = Tensor([3.0, 4.0], requires_grad=True)
    >>> (w * w).sum().backward()          # grad = [6, 8], norm 10
    >>> round(float(optim.clip_grad_norm_([w], max_norm=1.0)), 6)
    10.0
    >>> [round(v, 4) for v in w.grad.tolist()]
    [0.6, 0.8]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.device import kernel, xp_of
from ..tensor import Tensor
from .params import Slot, as_param_list, make_slots


def _slots(params: Any, where: str) -> list[Slot]:
    return make_slots(as_param_list(params, where), where)


def _grads(slots: list[Slot]) -> list[tuple[Slot, np.ndarray]]:
    out = []
    for s in slots:
        g = s.grad()
        if g is not None:
            out.append((s, g))
    return out


def total_norm(params: Any, norm_type: float = 2.0) -> float:
    """The ``norm_type``-norm of all gradients seen as one vector (``inf`` for the largest |g|)."""
    return _total(_grads(_slots(params, "total_norm")), float(norm_type))


def _one_vector(grads: list[tuple[Slot, np.ndarray]]) -> Any:
    """The gradients as one vector when they are off the host and of one array type and dtype, else None."""
    kind, dtype = grads[0][1].__class__, grads[0][1].dtype
    if kind is np.ndarray or any(g.__class__ is not kind or g.dtype != dtype for _, g in grads):
        return None
    return np.concatenate([g.reshape(-1) for _, g in grads])


def _total(grads: list[tuple[Slot, np.ndarray]], p: float, flat: Any = None) -> float:
    if not grads:
        return 0.0
    if flat is not None and p == 2.0:
        return math.sqrt(float(np.dot(flat, flat)))
    if math.isinf(p):
        return float(max(float(np.max(np.abs(g))) if g.size else 0.0 for _, g in grads))
    if p == 2.0:  # summed where the gradients are (in float64), read once: one host sync, not one per parameter
        squares = [np.dot(g.ravel(), g.ravel()).astype(np.float64) for _, g in grads]
        return math.sqrt(float(sum(squares[1:], squares[0])))
    if p <= 0:
        raise ValueError(f"clip_grad_norm_: norm_type must be positive or inf, got {p}")
    return float(sum(float(np.sum(np.abs(g) ** p)) for _, g in grads) ** (1.0 / p))


def clip_grad_norm_(params: Any, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale all gradients by ``min(1, max_norm / (total_norm + 1e-6))``; returns the norm before clipping, a
    0-d Tensor in the gradients' dtype on their device, as PyTorch's (``float(norm)``, ``norm.item()``).
    ``foreach`` (PyTorch's choice of kernel) is accepted: gradients off the host are always seen as one vector,
    and scaled there without the host reading the norm (no sync on a GPU, unless ``error_if_nonfinite``).

    ``params``: Tensors and/or Scalars (an iterable, one parameter, or a Module).
    """
    grads = _grads(_slots(params, "clip_grad_norm_"))
    flat = _one_vector(grads) if grads and float(norm_type) == 2.0 else None
    if flat is not None and not error_if_nonfinite:
        return _clip_on_device(grads, flat, float(max_norm))
    norm = _total(grads, float(norm_type), flat)
    if error_if_nonfinite and not math.isfinite(norm):
        raise RuntimeError(
            f"clip_grad_norm_: the total norm of the gradients is {norm}; the gradients cannot be clipped "
            "(pass error_if_nonfinite=False to scale them anyway)"
        )
    coef = float(max_norm) / (norm + 1e-6)
    if coef < 1.0 and flat is not None:
        _set_from_vector(grads, flat * flat.dtype.type(coef))
    elif coef < 1.0:
        for slot, g in grads:
            slot.set_grad(g * g.dtype.type(coef))
    dtype = getattr(grads[0][1], "dtype", None) if grads else None  # (a Scalar's gradient may be a float)
    dtype = dtype if dtype is not None and dtype.kind == "f" else np.float64
    return Tensor((np if flat is None else xp_of(flat)).asarray(norm, dtype=dtype))


def _clip_on_device(grads: list[tuple[Slot, np.ndarray]], flat: Any, max_norm: float) -> Tensor:
    """Clip the gradients of a device seen as one vector, where they are: the norm, a kernel that scales by
    ``min(1, max_norm / (norm + 1e-6))`` (by 1 when below: the same values), and no read on the host."""
    norm = np.sqrt(np.dot(flat, flat))
    scale = kernel(flat, "clip_by_norm", lambda xp, special: lambda g, norm, most: g * xp.minimum(
        most / (norm + 1e-6), 1.0))
    _set_from_vector(grads, scale(flat, norm, flat.dtype.type(max_norm)))
    return Tensor(norm)


def _set_from_vector(grads: list[tuple[Slot, np.ndarray]], flat: Any) -> None:
    """Each gradient a view of ``flat`` (a new vector that nothing else holds)."""
    start = 0
    for slot, g in grads:
        slot.set_grad(flat[start:start + g.size].reshape(g.shape))
        start += g.size


def clip_grad_value_(params: Any, clip_value: float, foreach: bool | None = None) -> None:
    """Clip every gradient entry to [-clip_value, clip_value]. ``foreach`` is accepted and changes nothing."""
    if clip_value < 0:
        raise ValueError(f"clip_grad_value_: clip_value must be >= 0, got {clip_value}")
    for slot, g in _grads(_slots(params, "clip_grad_value_")):
        slot.set_grad(np.clip(g, -clip_value, clip_value))
