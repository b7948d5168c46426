"""``Rprop`` (steps from the gradient's sign alone) and ``ASGD`` (SGD with a running average of the iterates):
PyTorch's rules step for step (``foreach=False`` order of operations).

Example:
    >>> from chainrule import Tensor, optim
    >>> w = Tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.Rprop([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); w  # the first step: lr against the gradient's sign
    Tensor([ 0.9, -1.9], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.defaults import get_default_dtype
from .optimizers import Optimizer, implementation

__all__ = ["Rprop", "ASGD"]


class Rprop(Optimizer):
    """Rprop (resilient backpropagation): each entry has its own step size, multiplied by ``etas[1]`` while the
    gradient keeps its sign and by ``etas[0]`` when it flips (then that entry waits one step), kept within
    ``step_sizes``; ``p -= sign(g) * step_size``. Full-batch training is what it is for.

    Example:
        >>> from chainrule import Tensor, optim
        >>> w = Tensor([1.0], requires_grad=True)
        >>> opt = optim.Rprop([w], lr=0.5)
        >>> for _ in range(3):
        ...     opt.zero_grad(); (w * w).sum().backward(); opt.step(); print(round(float(w[0]), 6))
        0.5
        -0.1
        -0.1
    """

    _elementwise = True

    def __init__(self, params: Any, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Rprop: etas must satisfy 0 < etas[0] < 1 < etas[1], got {etas}")
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), maximize=maximize),
                         implementation("Rprop", foreach, None, differentiable))

    def _update(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        if not state:
            state["step"] = 0
            state["prev"] = np.zeros_like(p)
            state["step_size"] = np.full_like(p, group["lr"])
        state["step"] += 1
        etaminus, etaplus = group["etas"]
        low, high = group["step_sizes"]
        sign = np.sign(g * state["prev"])
        factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1.0)).astype(p.dtype)
        step_size = state["step_size"]
        step_size *= factor
        np.clip(step_size, low, high, out=step_size)
        g = np.where(factor == etaminus, 0, g).astype(p.dtype)  # a flipped sign: no step for that entry now
        p -= np.sign(g) * step_size
        state["prev"][...] = g


class ASGD(Optimizer):
    """Averaged SGD: ``p = p * (1 - lambd * eta) - eta * g`` with ``eta = lr / (1 + lambd * lr * step) ** alpha``,
    and ``ax``, the average of the iterates since step ``t0`` (kept in the state; the answer ASGD proposes), with
    L2 ``weight_decay`` (added to the gradient).

    Example:
        >>> from chainrule import Tensor, optim
        >>> w = Tensor([1.0], requires_grad=True)
        >>> opt = optim.ASGD([w], lr=0.1, t0=0)
        >>> (w * w).sum().backward(); opt.step(); round(float(w[0]), 5), round(float(opt.state[0]["ax"][0]), 5)
        (0.79999, 0.79999)
    """

    _elementwise = True

    def __init__(self, params: Any, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0.0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        if not 0.0 <= weight_decay:
            raise ValueError(f"ASGD: weight_decay must be >= 0, got {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      maximize=maximize), implementation("ASGD", foreach, None, differentiable))

    def _update(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        lr, lambd = group["lr"], group["lambd"]
        # eta and mu are kept in the default dtype (float32 unless set), as PyTorch keeps them in tensors of it
        kind = get_default_dtype().type
        if not state:
            state["step"] = 0
            state["eta"] = kind(lr)
            state["mu"] = kind(1.0)
            state["ax"] = np.zeros_like(p)
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p
        eta = float(state["eta"])  # (a float: arithmetic in the parameter's dtype, as PyTorch's eta.item())
        p *= 1 - lambd * eta
        p -= eta * g
        ax = state["ax"]
        mu = float(state["mu"])
        if mu != 1:
            ax += (p - ax) * mu
        else:
            ax[...] = p
        step = state["step"]
        state["eta"] = kind(lr / ((1 + lambd * lr * step) ** group["alpha"]))
        state["mu"] = kind(1 / max(1, step - group["t0"]))
