"""More of PyTorch's schedules: ``ConstantLR``, ``PolynomialLR``, ``CosineAnnealingWarmRestarts``, ``CyclicLR``.

Closed-form functions of the step count, as the other schedules of :mod:`chainrule.optim.schedules`, so they
resume exactly from ``state_dict()``; the rates agree with ``torch.optim.lr_scheduler``'s to rounding.

Example:
    >>> from chainrule import Tensor, optim
    >>> opt = optim.SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
    >>> sched = optim.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 3)); opt.step(); sched.step()
    >>> lrs
    [1.0, 0.5, 1.0, 0.5, 1.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .optimizers import Optimizer
from .schedules import LRScheduler, from_pytorch

__all__ = ["ConstantLR", "PolynomialLR", "CosineAnnealingWarmRestarts", "CyclicLR"]


class ConstantLR(LRScheduler):
    """The base rate times ``factor`` for the first ``total_iters`` steps, then the base rate (a warm-up).

    Example:
        >>> from chainrule import Tensor, optim
        >>> sched = optim.ConstantLR(optim.SGD([Tensor([0.0], requires_grad=True)], lr=0.3), factor=0.5,
        ...                          total_iters=2)
        >>> [sched.lr_at(0.3, s) for s in range(3)]
        [0.15, 0.15, 0.3]
    """

    _CHAINS = True

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if not 0.0 <= factor <= 1.0:
            raise ValueError(f"ConstantLR: factor must be in [0, 1], got {factor}")
        self.factor, self.total_iters = float(factor), int(total_iters)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        return base_lr * (self.factor if epoch < self.total_iters else 1.0)


class PolynomialLR(LRScheduler):
    """``base_lr * (1 - min(step, total_iters) / total_iters) ** power``: down to 0 at ``total_iters``.

    Example:
        >>> from chainrule import Tensor, optim
        >>> sched = optim.PolynomialLR(optim.SGD([Tensor([0.0], requires_grad=True)], lr=1.0), total_iters=4)
        >>> [sched.lr_at(1.0, s) for s in range(6)]
        [1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
    """

    _CHAINS = True

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        if total_iters <= 0:
            raise ValueError(f"PolynomialLR: total_iters must be positive, got {total_iters}")
        self.total_iters, self.power = int(total_iters), float(power)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        return base_lr * (1.0 - min(self.total_iters, epoch) / self.total_iters) ** self.power


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov and Hutter): a cosine from the base rate to ``eta_min`` over ``T_0`` steps, then again
    from the top, each period ``T_mult`` times longer than the last. ``step(epoch)`` also takes a (fractional)
    epoch, as PyTorch's: ``scheduler.step(epoch + i / iters)`` inside an epoch."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        if isinstance(T_0, bool) or not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: T_0 must be a positive int, got {T_0!r}")
        if isinstance(T_mult, bool) or not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"CosineAnnealingWarmRestarts: T_mult must be an int >= 1, got {T_mult!r}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, float(eta_min)
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        """The rate at the position ``T_cur`` of the current period (``epoch`` is not needed)."""
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2

    def step(self, epoch: float | None = None) -> None:
        """Advance one step, or go to ``epoch`` (a float counts a part of an epoch)."""
        self._check_untouched()
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur % self.T_i, self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts.step: epoch must be >= 0, got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:  # the period that epoch falls in: T_0 * (1 + T_mult + ... + T_mult**(n-1)) <= epoch
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult**n
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self._last_lr = [self.lr_at(base, self.last_epoch) for base in self.base_lrs]
        for group, lr in zip(self.optimizer.param_groups, self._last_lr, strict=False):
            group["lr"] = lr


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[float]:
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"CyclicLR: expected {len(optimizer.param_groups)} values for {name} (one per "
                             f"parameter group), got {len(value)}")
        return [float(v) for v in value]
    return [float(value)] * len(optimizer.param_groups)


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith): the rate goes from ``base_lr`` up to ``max_lr`` in ``step_size_up`` steps
    and back in ``step_size_down``, the amplitude scaled per cycle (``triangular``: 1, ``triangular2``: halved
    each cycle, ``exp_range``: ``gamma**step``) or by ``scale_fn``. With ``cycle_momentum`` the momentum (or
    Adam's ``beta1``) moves the other way, between ``max_momentum`` and ``base_momentum``. Step it every batch.

    Example:
        >>> from chainrule import Tensor, optim
        >>> opt = optim.SGD([Tensor([0.0], requires_grad=True)], lr=1.0, momentum=0.9)
        >>> sched = optim.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
        >>> lrs = []
        >>> for _ in range(5):
        ...     lrs.append(round(sched.get_last_lr()[0], 3)); opt.step(); sched.step()
        >>> lrs
        [0.1, 0.3, 0.5, 0.3, 0.1]
    """

    def __init__(self, optimizer: Optimizer, base_lr: Any, max_lr: Any, step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular", gamma: float = 1.0,
                 scale_fn: Callable[[float], float] | None = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: Any = 0.8, max_momentum: Any = 0.9,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"CyclicLR: expected a chainrule optimiser, got {type(optimizer).__name__}")
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"CyclicLR: mode must be 'triangular', 'triangular2' or 'exp_range' (or give "
                             f"scale_fn), got {mode!r}")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size, self.step_ratio = up + down, up / (up + down)
        self.mode, self.gamma, self.scale_fn = mode, float(gamma), scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else ("iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(f"CyclicLR: cycle_momentum needs an optimiser with momentum or betas; "
                                 f"{type(optimizer).__name__} has neither (pass cycle_momentum=False)")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                self._set_momentums(self.max_momentums)
        self._start_lrs = base_lrs
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _scale(self, x: float) -> float:
        if self.scale_fn is not None:
            return self.scale_fn(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def _factors(self, epoch: int) -> tuple[float, float]:
        """(where in the cycle, from 0 at ``base_lr`` to 1 at ``max_lr``; the amplitude's scale)."""
        cycle = math.floor(1 + epoch / self.total_size)
        x = 1.0 + epoch / self.total_size - cycle
        position = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        return position, self._scale(cycle if self.scale_mode == "cycle" else epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        raise TypeError("CyclicLR: the rate depends on the group's max_lr too; see get_last_lr()")

    def _set_momentums(self, momentums: list[float]) -> None:
        for group, m in zip(self.optimizer.param_groups, momentums, strict=True):
            if self.use_beta1:
                group["betas"] = (m, *group["betas"][1:])
            else:
                group["momentum"] = m

    def _apply(self) -> None:
        position, scale = self._factors(self.last_epoch)
        bases = self.base_lrs if self._last_lr else self._start_lrs  # (the first step, inside __init__)
        self._last_lr = [b + (m - b) * position * scale for b, m in zip(bases, self.max_lrs, strict=True)]
        for group, lr in zip(self.optimizer.param_groups, self._last_lr, strict=True):
            group["lr"] = lr
        if self.cycle_momentum:
            self._set_momentums([m - (m - b) * position * scale
                                 for b, m in zip(self.base_momentums, self.max_momentums, strict=True)])

    def step(self, epoch: int | None = None) -> None:
        """Advance one batch: set the rates (and momenta) of the next one (or of batch ``epoch``, PyTorch's
        deprecated argument)."""
        self._check_untouched()
        self.last_epoch = self.last_epoch + 1 if epoch is None else self._epoch(epoch)
        self._apply()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict()`` or a PyTorch one (a ``scale_fn`` is not saved: the one given to this scheduler
        stays)."""
        for k, v in from_pytorch(self, state).items():
            if k == "scale_fn":
                continue
            if k not in self.__dict__ or k.startswith("_") or k == "optimizer":
                raise KeyError(f"CyclicLR.load_state_dict: unknown entry {k!r}")
            setattr(self, k, v)
        self._apply()
