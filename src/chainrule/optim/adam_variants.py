"""Adam's variants ``Adamax``, ``NAdam`` and ``RAdam``: PyTorch's rules step for step (``foreach=False`` order).

All three keep Adam's first moment ``exp_avg`` (``m = b1 * m + (1 - b1) * g``) and differ in how they scale
it: Adamax by an infinity norm, NAdam by Nesterov's look-ahead with a decaying momentum, RAdam by a
rectification of the adaptive step that turns it on only once the second moment's variance is tractable.
PyTorch's ``foreach`` and ``fused`` update each group as one vector (:mod:`chainrule.optim.flat`), ``capturable``
changes nothing, ``differentiable=True`` is refused.

Example:
    >>> from chainrule import Tensor, optim
    >>> w = Tensor([1.0, -1.0], requires_grad=True)
    >>> opt = optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step(); w  # the first step moves each entry by lr
    Tensor([ 0.9, -0.9], requires_grad=True)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.defaults import get_default_dtype
from .optimizers import Optimizer, implementation

__all__ = ["Adamax", "NAdam", "RAdam", "SparseAdam"]

_IGNORED = ("foreach", "capturable", "differentiable", "fused")  # PyTorch's implementation switches


class _AdamFamily(Optimizer):
    """The shared part: checks of ``betas`` and ``eps``, the step count and the first and second moments."""

    _elementwise = True
    _second = "exp_avg_sq"  # the name of the second moment in the state (PyTorch's)

    def __init__(self, params: Any, defaults: dict[str, Any], ignored: dict[str, Any]) -> None:
        name = type(self).__name__
        unknown = set(ignored) - set(_IGNORED)
        if unknown:
            raise TypeError(f"{name}: unexpected keyword argument(s) {sorted(unknown)}")
        b1, b2 = (float(b) for b in defaults["betas"])
        if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0):
            raise ValueError(f"{name}: betas must be in [0, 1), got {tuple(defaults['betas'])}")
        if not defaults["eps"] >= 0.0:
            raise ValueError(f"{name}: eps must be >= 0, got {defaults['eps']}")
        super().__init__(params, {**defaults, "betas": (b1, b2)},
                         implementation(name, ignored.get("foreach"), ignored.get("fused"),
                                        ignored.get("differentiable", False)))

    def _moments(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> np.ndarray:
        """Count the step, apply weight decay, update ``exp_avg``; returns the gradient after weight decay."""
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p)
            state[self._second] = np.zeros_like(p)
            self._start(state)
        state["step"] += 1
        wd = group["weight_decay"]
        if wd != 0:
            if group.get("decoupled_weight_decay"):
                p *= 1 - group["lr"] * wd
            else:
                g = g + wd * p
        exp_avg = state["exp_avg"]
        exp_avg += (1 - group["betas"][0]) * (g - exp_avg)  # exp_avg.lerp_(g, 1 - b1)
        return g

    def _start(self, state: dict[str, Any]) -> None:
        """More state on the first step (NAdam's product of momenta)."""


class Adamax(_AdamFamily):
    """Adamax (Kingma and Ba): Adam with the infinity norm, ``u = max(b2 * u, |g| + eps)``;
    ``p -= lr / (1 - b1**t) * m / u``. ``weight_decay`` is L2 (added to the gradient).

    Example:
        >>> from chainrule import Tensor, optim
        >>> w = Tensor([2.0], requires_grad=True)
        >>> opt = optim.Adamax([w], lr=0.5)
        >>> (w * w).sum().backward(); opt.step(); round(float(w[0]), 6)
        1.5
    """

    _second = "exp_inf"

    def __init__(self, params: Any, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, maximize: bool = False, **ignored: Any) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize),
                         ignored)

    def _update(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        g = self._moments(p, g, group, state)
        b1, b2 = group["betas"]
        exp_inf = state["exp_inf"]
        exp_inf *= b2
        np.maximum(exp_inf, np.abs(g) + group["eps"], out=exp_inf)
        p += -(group["lr"] / (1 - b1 ** state["step"])) * state["exp_avg"] / exp_inf


class NAdam(_AdamFamily):
    """NAdam (Dozat): Adam with Nesterov momentum whose coefficient ``mu_t = b1 * (1 - 0.5 * 0.96**(t *
    momentum_decay))`` warms up; ``decoupled_weight_decay=True`` gives NAdamW (``p *= 1 - lr * weight_decay``).

    Example:
        >>> from chainrule import Tensor, optim
        >>> w = Tensor([1.0], requires_grad=True)
        >>> opt = optim.NAdam([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step(); round(float(w[0]), 4)
        0.8944
    """

    def __init__(self, params: Any, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False,
                 maximize: bool = False, **ignored: Any) -> None:
        if not momentum_decay >= 0.0:
            raise ValueError(f"NAdam: momentum_decay must be >= 0, got {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize), ignored)

    def _start(self, state: dict[str, Any]) -> None:
        # in the default dtype (float32 unless set), as PyTorch keeps it in a tensor of its default dtype
        state["mu_product"] = get_default_dtype().type(1.0)

    def _update(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        g = self._moments(p, g, group, state)
        b1, b2 = group["betas"]
        lr, step, decay = group["lr"], state["step"], group["momentum_decay"]
        mu = b1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        kind = get_default_dtype().type  # (a checkpoint gives it back as a float: the same value)
        state["mu_product"] = kind(state["mu_product"]) * kind(mu)
        mu_product = float(state["mu_product"])
        exp_avg_sq = state["exp_avg_sq"]
        exp_avg_sq *= b2
        exp_avg_sq += (1 - b2) * g * g  # addcmul's order: value * t1 * t2
        denom = np.sqrt(exp_avg_sq / (1 - b2**step))
        denom += group["eps"]
        p += (-lr * (1.0 - mu) / (1.0 - mu_product)) * g / denom  # addcdiv's order: value * t1 / t2
        p += (-lr * mu_next / (1.0 - mu_product * mu_next)) * state["exp_avg"] / denom


class RAdam(_AdamFamily):
    """RAdam (Liu et al.): Adam whose adaptive step is rectified by ``r_t``, and plain momentum SGD (with bias
    correction) while the variance estimate is not yet tractable (``rho_t <= 5``, the first steps);
    ``decoupled_weight_decay=True`` decays the weights as AdamW.

    Example:
        >>> from chainrule import Tensor, optim
        >>> w = Tensor([1.0], requires_grad=True)
        >>> opt = optim.RAdam([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step(); round(float(w[0]), 6)  # step 1: p -= lr * m / (1 - b1)
        0.8
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, maximize: bool = False,
                 **ignored: Any) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, maximize=maximize), ignored)

    def _update(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        g = self._moments(p, g, group, state)
        b1, b2 = group["betas"]
        lr, step = group["lr"], state["step"]
        exp_avg_sq = state["exp_avg_sq"]
        exp_avg_sq *= b2
        exp_avg_sq += (1 - b2) * g * g  # addcmul's order: value * t1 * t2
        bias_correction2 = 1 - b2**step
        corrected = state["exp_avg"] / (1 - b1**step)
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * step * (b2**step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = math.sqrt(bias_correction2) / (np.sqrt(exp_avg_sq) + group["eps"])
            p -= corrected * lr * adaptive * rect
        else:
            p -= corrected * lr


class SparseAdam:
    """PyTorch's ``SparseAdam`` (the lazy Adam of sparse embedding gradients) is not available: chainrule has no
    sparse gradients (``nn.Embedding(sparse=True)`` is refused), so making one raises, naming the way out.

    Example:
        >>> from chainrule import Tensor, optim
        >>> optim.SparseAdam([Tensor([1.0], requires_grad=True)])
        Traceback (most recent call last):
        ...
        NotImplementedError: SparseAdam: chainrule has no sparse gradients ...
    """

    def __init__(self, params: Any = None, lr: float = 1e-3, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "SparseAdam: chainrule has no sparse gradients (nn.Embedding(sparse=True) is refused), and SparseAdam "
            "updates only the rows a sparse gradient names; use optim.Adam (or AdamW), which updates every row: "
            "the moments of rows not looked up in a step decay too, so the two differ on rarely seen rows")
