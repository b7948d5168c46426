"""``RMSprop``, ``Adagrad`` and ``Adadelta``: PyTorch's rules step for step (``foreach=False`` order of operations).

Example:
    >>> from chainrule import Tensor, optim
    >>> w = Tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.Adagrad([w], lr=0.5)
    >>> (w * w).sum().backward(); opt.step(); w  # the first Adagrad step moves each entry by about lr
    Tensor([ 0.5, -1.5], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .optimizers import Optimizer, implementation

__all__ = ["RMSprop", "Adagrad", "Adadelta"]


class RMSprop(Optimizer):
    """RMSprop: ``v = alpha * v + (1 - alpha) * g**2``; ``p -= lr * g / (sqrt(v) + eps)``, with PyTorch's
    options: ``centered`` (subtract the squared running mean of ``g`` from ``v``), ``momentum`` (a buffer
    of the steps) and L2 ``weight_decay`` (added to the gradient).

    Example:
        >>> from chainrule import Tensor, optim
        >>> w = Tensor([1.0], requires_grad=True)
        >>> opt = optim.RMSprop([w], lr=0.01)
        >>> (w * w).sum().backward(); opt.step(); round(float(w[0]), 4)
        0.9
    """

    _elementwise = True

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        maximize: bool = False,
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
    ) -> None:
        if not 0.0 <= alpha:
            raise ValueError(f"RMSprop: alpha must be >= 0, got {alpha}")
        if not 0.0 <= eps:
            raise ValueError(f"RMSprop: eps must be >= 0, got {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"RMSprop: momentum must be >= 0, got {momentum}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, maximize=maximize),
                         implementation("RMSprop", foreach, None, differentiable))

    def _update(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(p)
        state["step"] += 1
        alpha, lr, momentum = group["alpha"], group["lr"], group["momentum"]
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p
        square_avg = state["square_avg"]
        square_avg *= alpha
        square_avg += (1 - alpha) * (g * g)
        if group["centered"]:
            grad_avg = state.get("grad_avg")
            if grad_avg is None:
                grad_avg = state["grad_avg"] = np.zeros_like(p)
            grad_avg += (1 - alpha) * (g - grad_avg)  # grad_avg.lerp_(g, 1 - alpha)
            avg = np.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += group["eps"]
        if momentum > 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = np.zeros_like(p)
            buf *= momentum
            buf += g / avg
            p -= lr * buf
        else:
            p -= lr * (g / avg)


class Adagrad(Optimizer):
    """Adagrad: ``s += g**2``; ``p -= lr / (1 + (step - 1) * lr_decay) * g / (sqrt(s) + eps)``, with PyTorch's
    ``initial_accumulator_value`` (where ``s`` starts) and L2 ``weight_decay`` (added to the gradient).

    Example:
        >>> from chainrule import Tensor, optim
        >>> w = Tensor([3.0], requires_grad=True)
        >>> opt = optim.Adagrad([w], lr=1.0)
        >>> (w * w).sum().backward(); opt.step(); round(float(w[0]), 6)
        2.0
    """

    _elementwise = True

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        maximize: bool = False,
        *,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if not 0.0 <= lr_decay:
            raise ValueError(f"Adagrad: lr_decay must be >= 0, got {lr_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Adagrad: initial_accumulator_value must be >= 0, got {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Adagrad: eps must be >= 0, got {eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps,
                                      maximize=maximize), implementation("Adagrad", foreach, fused, differentiable))

    def _update(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        if not state:
            state["step"] = 0
            state["sum"] = np.full_like(p, group["initial_accumulator_value"])
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"] += g * g
        std = np.sqrt(state["sum"])
        std += group["eps"]
        p -= clr * (g / std)


class Adadelta(Optimizer):
    """Adadelta (Zeiler): ``v = rho * v + (1 - rho) * g**2``; ``d = sqrt(u + eps) / sqrt(v + eps) * g``;
    ``u = rho * u + (1 - rho) * d**2``; ``p -= lr * d``, with L2 ``weight_decay`` (added to the gradient).
    PyTorch's ``foreach`` is honoured (one vector per group: :mod:`chainrule.optim.flat`), ``capturable`` is
    accepted and changes nothing, ``differentiable=True`` is refused.

    Example:
        >>> from chainrule import Tensor, optim
        >>> w = Tensor([1.0], requires_grad=True)
        >>> opt = optim.Adadelta([w])
        >>> (w * w).sum().backward(); opt.step(); round(float(w[0]), 6)  # sqrt(1e-6) / sqrt(0.4 + 1e-6) * 2
        0.996838
    """

    _elementwise = True

    def __init__(self, params: Any, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0.0,
                 foreach: Any = None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Adadelta: rho must be in [0, 1], got {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Adadelta: eps must be >= 0, got {eps}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize),
                         implementation("Adadelta", foreach, None, differentiable))

    def _update(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(p)
            state["acc_delta"] = np.zeros_like(p)
        state["step"] += 1
        rho, eps = group["rho"], group["eps"]
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg *= rho
        square_avg += (1 - rho) * g * g  # addcmul's order: value * t1 * t2
        delta = np.sqrt(acc_delta + eps) / np.sqrt(square_avg + eps) * g
        acc_delta *= rho
        acc_delta += (1 - rho) * delta * delta
        p -= group["lr"] * delta
