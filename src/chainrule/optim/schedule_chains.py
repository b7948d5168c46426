"""Schedules made of schedules: ``SequentialLR`` (one after another, switching at milestones) and
``ChainedScheduler`` (factors that multiply), with PyTorch's arguments and results.

Both drive the schedulers they are given (step only the combined one). As the other schedules, they
refuse to overwrite a rate set since their last step by code outside them (see schedules.py).

Example:
    >>> from chainrule import Tensor, optim
    >>> opt = optim.SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
    >>> warmup = optim.LinearLR(opt, start_factor=0.25, total_iters=2)
    >>> decay = optim.ExponentialLR(opt, gamma=0.5)
    >>> sched = optim.lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[3])
    >>> lrs = []
    >>> for _ in range(6):
    ...     lrs.append(opt.param_groups[0]["lr"]); opt.step(); sched.step()
    >>> lrs
    [0.25, 0.625, 1.0, 1.0, 0.5, 0.25]
"""

from __future__ import annotations

import bisect
from typing import Any

from .cyclic import ConstantLR, PolynomialLR
from .optimizers import Optimizer
from .schedules import ExponentialLR, LinearLR, LRScheduler, MultiStepLR, StepLR, from_pytorch


def _check_schedulers(where: str, schedulers: Any, optimizer: Optimizer | None) -> tuple[list[LRScheduler], Optimizer]:
    schedulers = list(schedulers)
    if not schedulers:
        raise ValueError(f"{where}: expected at least one scheduler, got none")
    for k, s in enumerate(schedulers):
        if not isinstance(s, LRScheduler):
            raise TypeError(
                f"{where}: scheduler {k} is a {type(s).__name__}, not a step-count schedule (LRScheduler); "
                "ReduceLROnPlateau watches a metric and must be stepped on its own"
            )
    optimizer = schedulers[0].optimizer if optimizer is None else optimizer
    for k, s in enumerate(schedulers):
        if s.optimizer is not optimizer:
            raise ValueError(f"{where}: scheduler {k} drives another optimiser than the one given; every scheduler "
                             "must be made on the same optimiser")
    return schedulers, optimizer


class _Combined(LRScheduler):
    """Shared by both: the rate check and state of the combined scheduler, and of each part."""

    _schedulers: list[LRScheduler]

    def _set(self, lrs: list[float]) -> None:
        self._last_lr = list(lrs)
        for group, lr in zip(self.optimizer.param_groups, lrs, strict=False):
            group["lr"] = lr

    def lr_at(self, base_lr: float, epoch: int) -> float:
        raise TypeError(f"{type(self).__name__}: the rate comes from the schedulers it holds; read get_last_lr()")

    def state_dict(self) -> dict[str, Any]:
        """The step count and every part's state (``_schedulers``: a list of their state dicts)."""
        state = super().state_dict()
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict()`` or a PyTorch one; the optimiser's rates are set for the restored step."""
        state = from_pytorch(self, state)
        parts = state.pop("_schedulers", None)
        if parts is not None:
            parts = [from_pytorch(s, part) for s, part in zip(self._schedulers, parts, strict=False)]
            state.setdefault("last_epoch", self.last_epoch if not parts else parts[0].get("last_epoch"))
        if parts is None or len(parts) != len(self._schedulers):
            raise KeyError(f"{type(self).__name__}.load_state_dict: expected the state of "
                           f"{len(self._schedulers)} scheduler(s) under '_schedulers'")
        for k, v in state.items():
            if k not in self.__dict__ or k.startswith("_") or k == "optimizer":
                raise KeyError(f"{type(self).__name__}.load_state_dict: unknown entry {k!r}")
            setattr(self, k, v)
        for s, part in zip(self._schedulers, parts, strict=True):
            s.__dict__.update({k: v for k, v in part.items() if k in s.__dict__ and not k.startswith("_")})
        self._set(self._rates())

    def _rates(self) -> list[float]:
        raise NotImplementedError


class SequentialLR(_Combined):
    """PyTorch's ``SequentialLR``: ``schedulers[0]`` until step ``milestones[0]``, then ``schedulers[1]``
    started afresh (its step 0 at the milestone), and so on. Step only the ``SequentialLR``.

    Example:
        >>> from chainrule import Tensor, optim
        >>> opt = optim.SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
        >>> sched = optim.SequentialLR(opt, [optim.StepLR(opt, 1, gamma=0.5), optim.StepLR(opt, 1, gamma=0.1)],
        ...                            milestones=[2])
        >>> lrs = []
        >>> for _ in range(4):
        ...     lrs.append(round(sched.get_last_lr()[0], 6)); opt.step(); sched.step()
        >>> lrs
        [1.0, 0.5, 1.0, 0.1]
    """

    def __init__(self, optimizer: Optimizer, schedulers: Any, milestones: Any, last_epoch: int = -1) -> None:
        schedulers, optimizer = _check_schedulers("SequentialLR", schedulers, optimizer)
        milestones = [int(m) for m in milestones]
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR: {len(schedulers)} schedulers need {len(schedulers) - 1} milestone(s), "
                             f"got {len(milestones)}: {milestones}")
        if milestones != sorted(milestones):
            raise ValueError(f"SequentialLR: milestones must be in increasing order, got {milestones}")
        self._schedulers, self.milestones = schedulers, milestones
        for group in optimizer.param_groups:  # the parts' own first steps changed it: start from the base rate
            group.setdefault("initial_lr", group["lr"])
            group["lr"] = group["initial_lr"]
        for s in schedulers:  # their own first steps are undone, as PyTorch does
            s.last_epoch -= 1
            s.chained = False  # (made one after another, they saw each other's rates: here they take turns)
        self.optimizer = optimizer
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch + 1
        self._last_lr: list[float] = []
        self._set(self._step_part(schedulers[bisect.bisect_right(milestones, 0)]))  # (a milestone may be 0)

    def step(self) -> None:
        """Advance one step: the scheduler whose segment holds the new step sets the rates."""
        self._check_untouched()
        self.last_epoch += 1
        idx = bisect.bisect_right(self.milestones, self.last_epoch)
        part = self._schedulers[idx]
        if idx and self.milestones[idx - 1] == self.last_epoch:
            part.last_epoch = -1  # at its milestone a scheduler starts afresh (PyTorch's step(0))
        self._set(self._step_part(part))

    def _step_part(self, part: LRScheduler) -> list[float]:
        part._last_lr = [g["lr"] for g in self.optimizer.param_groups]  # its check: the rates it finds are its own
        part.step()
        return part.get_last_lr()

    def _rates(self) -> list[float]:
        """The rates of the restored step (each part's own step count was restored with it)."""
        idx = bisect.bisect_right(self.milestones, self.last_epoch)
        part = self._schedulers[idx]
        part.last_epoch -= 1
        return self._step_part(part)


_FACTORS = (StepLR, MultiStepLR, ExponentialLR, LinearLR, ConstantLR, PolynomialLR)


class ChainedScheduler(_Combined):
    """PyTorch's ``ChainedScheduler``: every scheduler steps each time, their factors multiply
    (``lr = base_lr * factor_1(step) * factor_2(step) ...``). Step only the ``ChainedScheduler``.

    PyTorch chains schedulers by updating the current rate in place; that is a product of factors for
    ``StepLR``, ``MultiStepLR``, ``ExponentialLR`` and ``LinearLR``, which are the ones taken here
    (another raises: use ``LambdaLR`` with the product of the factors you want).

    Example:
        >>> from chainrule import Tensor, optim
        >>> opt = optim.SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
        >>> sched = optim.ChainedScheduler([optim.LinearLR(opt, start_factor=0.5, total_iters=2),
        ...                                 optim.ExponentialLR(opt, gamma=0.9)])
        >>> lrs = []
        >>> for _ in range(4):
        ...     lrs.append(round(sched.get_last_lr()[0], 6)); opt.step(); sched.step()
        >>> lrs
        [0.5, 0.675, 0.81, 0.729]
    """

    def __init__(self, schedulers: Any, optimizer: Optimizer | None = None) -> None:
        schedulers, optimizer = _check_schedulers("ChainedScheduler", schedulers, optimizer)
        for k, s in enumerate(schedulers):
            if not isinstance(s, _FACTORS):
                raise TypeError(
                    f"ChainedScheduler: scheduler {k} is a {type(s).__name__}; chainrule chains StepLR, MultiStepLR, "
                    "ExponentialLR, LinearLR, ConstantLR and PolynomialLR (factors that multiply, as PyTorch's "
                    "chaining gives for them). For other combinations use LambdaLR with the product of the factors, "
                    "or SequentialLR for schedules one after another"
                )
        for s in schedulers:
            s.chained = False  # (their factors multiply here, from the base rates)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = schedulers[0].last_epoch
        self._set(self._rates())

    def step(self) -> None:
        """Advance every scheduler one step; the rates are the base rates times all their factors."""
        self._check_untouched()
        self.last_epoch += 1
        for s in self._schedulers:
            s.last_epoch += 1
        self._set(self._rates())

    def _rates(self) -> list[float]:
        rates = []
        for base in self.base_lrs:
            lr = base
            for s in self._schedulers:
                lr *= s.lr_at(1.0, s.last_epoch)  # (these are linear in the base rate: lr_at(1) is the factor)
            rates.append(lr)
        for s in self._schedulers:
            s._last_lr = list(rates)
        return rates
