"""Slots: what an optimiser updates, whichever engine the parameters come from.

A :class:`TensorSlot` is one Tensor parameter: its ``.data`` is updated in place (dtype
kept) and its version is bumped so a graph built before the step cannot silently use the
new weights. A :class:`ScalarSlot` is a block of ``Scalar`` parameters seen as one float64
vector: values and gradients are gathered into arrays, the same update code runs, and the
new values are written back. So SGD, Adam and AdamW are written once for both engines.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..nn.parameter import Parameter
from ..scalar import Scalar
from ..tensor import Tensor


class TensorSlot:
    """One Tensor parameter."""

    __slots__ = ("param",)
    kind = "tensor"

    def __init__(self, param: Tensor) -> None:
        self.param = param

    @property
    def shape(self) -> tuple[int, ...]:
        return self.param.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.param.data.dtype

    def value(self) -> np.ndarray:
        """The parameter's array itself: update it in place, then call ``commit``."""
        return self.param.data

    def grad(self) -> np.ndarray | None:
        g = self.param.grad
        if g is None:
            return None
        return g.data if isinstance(g, Tensor) else np.asarray(g)

    def set_grad(self, g: np.ndarray) -> None:
        """Replace the gradient (a new array: gradients may share memory, so never scale them in place)."""
        self.param.grad = Tensor._wrap(g)

    def commit(self) -> None:
        self.param._bump_version()

    def zero_grad(self, set_to_none: bool = True) -> None:
        p = self.param
        p.grad = None if set_to_none or p.grad is None else Tensor._wrap(np.zeros_like(p.data))

    def params(self) -> list[Any]:
        return [self.param]


class ScalarSlot:
    """A block of Scalar parameters handled as one float64 vector."""

    __slots__ = ("scalars", "_buf")
    kind = "scalar"

    def __init__(self, scalars: list[Scalar]) -> None:
        self.scalars = scalars
        self._buf = np.empty(len(scalars), dtype=np.float64)

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self.scalars),)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.float64)

    def value(self) -> np.ndarray:
        buf = self._buf
        buf[:] = [s.data for s in self.scalars]
        return buf

    def grad(self) -> np.ndarray:
        return np.fromiter((s.grad for s in self.scalars), dtype=np.float64, count=len(self.scalars))

    def set_grad(self, g: np.ndarray) -> None:
        for s, v in zip(self.scalars, g.tolist(), strict=False):
            s.grad = v

    def commit(self) -> None:
        for s, v in zip(self.scalars, self._buf.tolist(), strict=False):
            s.data = v

    def zero_grad(self, set_to_none: bool = True) -> None:
        for s in self.scalars:
            s.grad = 0.0

    def params(self) -> list[Any]:
        return list(self.scalars)


Slot = TensorSlot | ScalarSlot


def as_param_list(params: Any, where: str) -> list[Any]:
    """A list of Tensors/Scalars from a Tensor, a Scalar, a Module, or an iterable of them."""
    if isinstance(params, (Tensor, Scalar)):
        return [params]
    if hasattr(params, "parameters") and callable(params.parameters) and not isinstance(params, dict):
        params = params.parameters()
    if isinstance(params, (str, bytes)) or not isinstance(params, Iterable):
        raise TypeError(f"{where}: params must be an iterable of Tensors or Scalars, got {type(params).__name__}")
    return list(params)


def make_slots(params: Iterable[Any], where: str) -> list[Slot]:
    """One slot per Tensor, and one for all the Scalars (kept in order), with clear errors."""
    slots: list[Slot] = []
    scalars: list[Scalar] = []
    for i, p in enumerate(params):
        if isinstance(p, Tensor):
            if p.data.dtype.kind != "f":
                raise TypeError(
                    f"{where}: parameter {i} has dtype {p.data.dtype}; only floating tensors can be trained"
                )
            if not p.requires_grad and not isinstance(p, Parameter):  # a frozen Parameter is fine: no grad, no step
                raise ValueError(
                    f"{where}: parameter {i} (shape {p.shape}) does not require grad; it would never be updated "
                    "(create it with requires_grad=True or use nn.Parameter)"
                )
            if not p.is_leaf:
                raise ValueError(
                    f"{where}: parameter {i} (shape {p.shape}) is not a leaf tensor (it was computed by "
                    f"'{p.op}'); optimise the leaves it was computed from"
                )
            slots.append(TensorSlot(p))
        elif isinstance(p, Scalar):
            scalars.append(p)
        else:
            raise TypeError(f"{where}: parameter {i} is a {type(p).__name__}, not a Tensor or a Scalar")
    if scalars:
        slots.append(ScalarSlot(scalars))
    return slots
