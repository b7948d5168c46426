"""``Adafactor`` (Shazeer and Stern, 2018), PyTorch's version step for step: the second moment of a matrix kept as a
row and a column factor (memory of a vector per dimension, not a copy of the matrix), a relative step size and
the update's RMS clipped at ``d``.

Example:
    >>> import numpy as np
    >>> from chainrule import Tensor, optim
    >>> w = Tensor(np.ones((2, 3)), requires_grad=True)
    >>> opt = optim.Adafactor([w])
    >>> (w * w).sum().backward(); opt.step(); opt.state[0]["row_var"].shape, opt.state[0]["col_var"].shape
    ((2, 1), (1, 3))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .optimizers import Optimizer, implementation

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor: ``beta2_t = 1 - step ** beta2_decay``; for a matrix (the last two dims) the running means of
    ``g**2`` over rows and over columns, their outer product over the rows' mean as the variance; for a vector the
    running mean of ``g**2``; ``u = g / sqrt(max(variance, eps1**2))``, its RMS clipped to ``d``;
    ``p -= max(eps2, rms(p)) * min(lr, 1/sqrt(step)) * u``. ``weight_decay`` is decoupled
    (``p *= 1 - lr * weight_decay``). ``eps1`` None: the dtype's machine epsilon.

    Example:
        >>> from chainrule import Tensor, optim
        >>> w = Tensor([1.0, 2.0], requires_grad=True)
        >>> opt = optim.Adafactor([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step(); w  # rms(p) * lr * u, u of RMS 1
        Tensor([0.84188612, 1.84188612], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        if not beta2_decay <= 0.0:
            raise ValueError(f"Adafactor: beta2_decay must be <= 0, got {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"Adafactor: eps[0] (epsilon1) must be >= 0, got {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"Adafactor: eps[1] (epsilon2) must be >= 0, got {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Adafactor: the clipping threshold d must be >= 1, got {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Adafactor: weight_decay must be >= 0, got {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=tuple(eps), d=d,
                                      weight_decay=weight_decay, maximize=maximize),
                         implementation("Adafactor", foreach, None, False))

    def _state_shape(self, key: str, shape: tuple[int, ...]) -> tuple[int, ...]:
        if key == "row_var":
            return shape[:-1] + (1,)
        if key == "col_var":
            return shape[:-2] + (1,) + shape[-1:]
        return shape

    def _update(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        if not state:
            state["step"] = 0
            if g.ndim > 1:
                state["row_var"] = np.zeros(g.shape[:-1] + (1,), dtype=g.dtype)
                state["col_var"] = np.zeros(g.shape[:-2] + (1,) + g.shape[-1:], dtype=g.dtype)
            else:
                state["variance"] = np.zeros_like(g)
        state["step"] += 1
        step, lr = state["step"], group["lr"]
        eps1, eps2 = group["eps"]
        eps1 = float(np.finfo(p.dtype).eps) if eps1 is None else eps1
        one_minus_beta2 = step ** group["beta2_decay"]
        rho = min(lr, 1 / step**0.5)
        alpha = max(eps2, float(np.linalg.norm(p.ravel())) / p.size**0.5) * rho
        if group["weight_decay"] != 0:
            p *= 1 - lr * group["weight_decay"]
        if g.ndim > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_var += ((g * g).mean(axis=-1, keepdims=True) - row_var) * one_minus_beta2  # lerp
            col_var += ((g * g).mean(axis=-2, keepdims=True) - col_var) * one_minus_beta2
            variance = row_var @ col_var
            variance /= np.maximum(row_var.mean(axis=-2, keepdims=True), eps1)
        else:
            var = state["variance"]
            var += (g * g - var) * one_minus_beta2
            variance = var.copy()
        update = 1 / np.sqrt(np.maximum(variance, eps1 * eps1))
        update *= g
        denom = max(1.0, float(np.linalg.norm(update.ravel())) / (update.size**0.5 * group["d"]))
        p -= (alpha / denom) * update
