"""``OneCycleLR``: PyTorch's 1cycle policy (rate up from ``max_lr / div_factor`` to ``max_lr``, then down to
``max_lr / (div_factor * final_div_factor)``; momentum cycled the other way)."""

from __future__ import annotations

import math
from typing import Any

from .optimizers import Optimizer
from .schedules import LRScheduler, from_pytorch


def _anneal(strategy: str, start: float, end: float, pct: float) -> float:
    if strategy == "cos":
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
    return (end - start) * pct + start


class OneCycleLR(LRScheduler):
    """PyTorch's ``OneCycleLR``, with its arguments, defaults and results (rates and momenta, per group).

    Call ``scheduler.step()`` after each batch's ``optimizer.step()``; stepping more than ``total_steps``
    times raises, as in PyTorch. With ``cycle_momentum=True`` (the default) the optimiser's ``momentum``
    (SGD, RMSprop) or first beta (Adam, AdamW) goes from ``max_momentum`` down to ``base_momentum`` and back.

    Example:
        >>> from chainrule import Tensor, optim
        >>> opt = optim.SGD([Tensor([0.0], requires_grad=True)], lr=0.1, momentum=0.9)
        >>> sched = optim.OneCycleLR(opt, max_lr=1.0, total_steps=4, pct_start=0.5, anneal_strategy="linear")
        >>> lrs = []
        >>> for _ in range(4):
        ...     lrs.append(round(sched.get_last_lr()[0], 4)); opt.step(); sched.step()
        >>> lrs
        [0.04, 1.0, 0.5, 0.0]
    """

    def __init__(
        self, optimizer: Optimizer, max_lr: float | list[float], total_steps: int | None = None,
        epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
        anneal_strategy: str = "cos", cycle_momentum: bool = True, base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95, div_factor: float = 25.0, final_div_factor: float = 1e4,
        three_phase: bool = False, last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"OneCycleLR: expected a chainrule optimiser, got {type(optimizer).__name__}")
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("OneCycleLR: pass total_steps, or both epochs and steps_per_epoch")
            if epochs <= 0 or steps_per_epoch <= 0:
                raise ValueError(f"OneCycleLR: epochs and steps_per_epoch must be positive, got {epochs} and "
                                 f"{steps_per_epoch}")
            total_steps = epochs * steps_per_epoch
        if total_steps <= 0:
            raise ValueError(f"OneCycleLR: total_steps must be positive, got {total_steps}")
        if not 0.0 <= pct_start <= 1.0:
            raise ValueError(f"OneCycleLR: pct_start must be in [0, 1], got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        groups = optimizer.param_groups
        self.total_steps, self.anneal_strategy = int(total_steps), anneal_strategy
        self.cycle_momentum = bool(cycle_momentum)
        first = float(pct_start * total_steps) - 1
        if three_phase:
            self.phases = [
                [first, "initial_lr", "max_lr", "max_momentum", "base_momentum"],
                [float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"],
                [self.total_steps - 1.0, "initial_lr", "min_lr", "max_momentum", "max_momentum"],
            ]
        else:
            self.phases = [
                [first, "initial_lr", "max_lr", "max_momentum", "base_momentum"],
                [self.total_steps - 1.0, "max_lr", "min_lr", "base_momentum", "max_momentum"],
            ]
        if self.cycle_momentum and not all("momentum" in g or "betas" in g for g in groups):
            raise ValueError(f"OneCycleLR: cycle_momentum=True needs an optimiser with momentum or betas, "
                             f"{type(optimizer).__name__} has neither; pass cycle_momentum=False")
        if last_epoch == -1:
            for group, top in zip(groups, _per_group(max_lr, len(groups), "max_lr"), strict=True):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = float(top)
                group["min_lr"] = group["initial_lr"] / final_div_factor
        if self.cycle_momentum:
            bases = _per_group(base_momentum, len(groups), "base_momentum")
            tops = _per_group(max_momentum, len(groups), "max_momentum")
            for group, low, high in zip(groups, bases, tops, strict=True):
                if last_epoch == -1:
                    _set_momentum(group, high)
                group["max_momentum"], group["base_momentum"] = float(high), float(low)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        raise TypeError("OneCycleLR: the rate depends on each group's max_lr; read get_last_lr() instead")

    def step(self, epoch: int | None = None) -> None:
        """Advance one step and set the optimiser's learning rates (and momenta, with ``cycle_momentum``); ``epoch``
        (PyTorch's deprecated argument) goes to that step instead."""
        self._check_untouched()
        self.last_epoch = self.last_epoch + 1 if epoch is None else self._epoch(epoch)
        self._apply()

    def _apply(self) -> None:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: stepped {step} times, but total_steps is {self.total_steps}; make "
                             "total_steps (or epochs * steps_per_epoch) cover every step")
        self._last_lr = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr0, lr1, m0, m1) in enumerate(self.phases):
                if step <= end or i == len(self.phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = _anneal(self.anneal_strategy, group[lr0], group[lr1], pct)
                    if self.cycle_momentum:
                        _set_momentum(group, _anneal(self.anneal_strategy, group[m0], group[m1], pct))
                    break
                start = end
            group["lr"] = lr
            self._last_lr.append(lr)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict()`` or a PyTorch one; the optimiser's rates (and momenta) are set for the restored
        step."""
        for k, v in from_pytorch(self, state).items():
            if k not in self.__dict__ or k.startswith("_") or k == "optimizer":
                raise KeyError(f"OneCycleLR.load_state_dict: unknown entry {k!r}")
            setattr(self, k, v.item() if hasattr(v, "item") and getattr(v, "ndim", 1) == 0 else v)
        self._apply()


def _per_group(value: Any, n: int, name: str) -> list[float]:
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"OneCycleLR: {name} has {len(value)} values for {n} parameter group(s); give one "
                             "per group, or a single number")
        return [float(v) for v in value]
    return [float(value)] * n


def _set_momentum(group: dict[str, Any], m: float) -> None:
    if "betas" in group:
        group["betas"] = (m, *group["betas"][1:])
    else:
        group["momentum"] = m
