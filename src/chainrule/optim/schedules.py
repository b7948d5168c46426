"""Learning-rate schedules: step decay (every ``step_size`` or at milestones), exponential, cosine,
linear warm-up, warm-up then cosine.

Used as in PyTorch: make the scheduler after the optimiser (this sets the learning rate of
step 0), call ``optimizer.step()`` then ``scheduler.step()`` once per step (or epoch). Each
schedule is a closed-form function of the step count ``last_epoch``, so resuming from
``state_dict()`` is exact. The schedules PyTorch chains (``StepLR``, ``MultiStepLR``, ``ExponentialLR``,
``CosineAnnealingLR``, ``LinearLR``, ``ConstantLR``, ``PolynomialLR``, ``MultiplicativeLR``) build on the
current rate as PyTorch's do once another scheduler on the same optimiser, or code setting
``param_groups[...]['lr']``, has changed it (``chained`` is then True): each step moves the rate by the
schedule's own change, so two of them stepped one after the other give PyTorch's rates. The others
(``LambdaLR``, ``OneCycleLR``, ``CyclicLR``, ...) would overwrite such a change: ``step()`` raises instead
(change their rate through ``scheduler.base_lrs``).

Example:
    >>> from chainrule import Tensor, optim
    >>> w = Tensor([1.0], requires_grad=True)
    >>> opt = optim.SGD([w], lr=1.0)
    >>> sched = optim.StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(opt.param_groups[0]["lr"]); opt.step(); sched.step()
    >>> lrs
    [1.0, 1.0, 0.5, 0.5, 0.25]
"""

from __future__ import annotations

import bisect
import math
from typing import Any

import numpy as np

from .optimizers import Optimizer

# A PyTorch scheduler's state dict holds its own bookkeeping besides the settings and the step count; chainrule's
# closed forms need none of it, so a torch.optim.lr_scheduler checkpoint loads without it (PyTorch's names)
TORCH_BOOKKEEPING = frozenset({"_step_count", "_get_lr_called_within_step", "_is_initial", "_last_lr", "verbose",
                               "_scale_fn_custom", "_scale_fn_ref", "default_min_lr", "mode_worse", "use_beta1"})


def from_pytorch(scheduler: Any, state: dict[str, Any]) -> dict[str, Any]:
    """A scheduler state dict in chainrule's names: PyTorch's bookkeeping left out, its spellings of the same
    settings renamed (``_milestones``, ``_schedule_phases``, ``_anneal_func_type``, a ``Counter`` of milestones);
    the state of its callable objects (``lr_lambdas``) goes to the functions given to ``scheduler``, as PyTorch."""
    out = {k: v for k, v in state.items() if k not in TORCH_BOOKKEEPING}
    lambdas = out.pop("lr_lambdas", None)
    for f, saved in zip(getattr(scheduler, "_lambdas", []), lambdas or [], strict=False):
        if saved is not None:
            f.__dict__.update(saved)
    if "_milestones" in out:
        out["milestones"] = out.pop("_milestones")
    if isinstance(out.get("milestones"), dict):  # (PyTorch's MultiStepLR keeps a Counter: a milestone twice counts)
        out["milestones"] = sorted(int(m) for m, n in out["milestones"].items() for _ in range(n))
    if "_anneal_func_type" in out:
        out["anneal_strategy"] = out.pop("_anneal_func_type")
    if "_schedule_phases" in out:
        out["phases"] = [[float(p["end_step"]), p["start_lr"], p["end_lr"], p["start_momentum"], p["end_momentum"]]
                         for p in out.pop("_schedule_phases")]
    return out


class LRScheduler:
    """Base class: sets ``group['lr'] = lr_at(group's base lr, step)`` at each ``step()``.

    A subclass gives ``lr_at(base_lr, step)``, or, as in PyTorch, ``get_lr()``: the rates of the groups at
    ``self.last_epoch`` (from ``self.base_lrs``).

    Example:
        >>> from chainrule import Tensor, optim
        >>> class Halving(optim.lr_scheduler.LRScheduler):  # PyTorch's way of writing a schedule
        ...     def get_lr(self):
        ...         return [base * 0.5 ** self.last_epoch for base in self.base_lrs]
        >>> opt = optim.SGD([Tensor([1.0], requires_grad=True)], lr=1.0)
        >>> sched = Halving(opt)
        >>> opt.step(); sched.step(); opt.step(); sched.step(); sched.get_last_lr()
        [0.25]
    """

    _CHAINS = False  # PyTorch's recursive form of this schedule builds on the current rate (see the module's doc)

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__}: expected a chainrule optimiser, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.chained = False  # building on a rate another scheduler (or code) set, as PyTorch's chaining
        self._last_lr: list[float] = []
        if self._CHAINS and last_epoch == -1:  # made after another scheduler that changed the rate: chained at once
            self._last_lr = list(self.base_lrs)
        self.step()

    def lr_at(self, base_lr: float, epoch: int) -> float:
        raise NotImplementedError

    def _rates_at(self, epoch: int) -> list[float]:
        """The rate of each parameter group at step ``epoch``."""
        if type(self).get_lr is not LRScheduler.get_lr:  # (a PyTorch-style subclass: its get_lr at last_epoch)
            return [float(lr) for lr in self.get_lr()]
        return [self.lr_at(base, epoch) for base in self.base_lrs]

    def get_lr(self) -> list[float]:
        """The rates of the groups at step ``last_epoch`` (a subclass may define it instead of ``lr_at``)."""
        return [self.lr_at(base, self.last_epoch) for base in self.base_lrs]

    def step(self, epoch: int | None = None) -> None:
        """Advance one step and set the optimiser's learning rates; ``epoch`` (PyTorch's deprecated argument) goes
        to that step count instead."""
        if self._CHAINS and epoch is None and not self.chained:
            self.chained = any(g["lr"] != mine for g, mine in zip(self.optimizer.param_groups, self._last_lr,
                                                                  strict=False))
        if not self.chained:
            self._check_untouched()
        before = self.last_epoch
        self.last_epoch = self.last_epoch + 1 if epoch is None else self._epoch(epoch)
        if self.chained and epoch is None:
            self._last_lr = self._chain(before, self.last_epoch)
        else:
            self._last_lr = self._rates_at(self.last_epoch)
        for group, lr in zip(self.optimizer.param_groups, self._last_lr, strict=False):
            group["lr"] = lr

    def _chain(self, before: int, now: int) -> list[float]:
        """PyTorch's recursive form: each group's current rate moved as this schedule moves from step ``before`` to
        ``now``, by the ratio of its closed forms above ``_floor()`` (the rate it tends to), or by their difference
        where the earlier one is at the floor (a cosine's restart, a polynomial's end)."""
        then = list(self.base_lrs) if before < 0 else self._rates_at(before)
        rates = []
        for group, old, new in zip(self.optimizer.param_groups, then, self._rates_at(now), strict=False):
            lr, floor = float(group["lr"]), self._floor()
            rates.append(lr + new - old if old == floor else floor + (lr - floor) * (new - floor) / (old - floor))
        return rates

    def _floor(self) -> float:
        return 0.0

    def _epoch(self, epoch: Any) -> int:
        if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or epoch < 0:
            raise ValueError(f"{type(self).__name__}.step: epoch must be an int >= 0, got {epoch!r}")
        return int(epoch)

    def _check_untouched(self) -> None:
        """Refuse to overwrite a rate set since this scheduler's last step (PyTorch would build on it)."""
        for g, (group, mine) in enumerate(zip(self.optimizer.param_groups, self._last_lr, strict=False)):
            if group["lr"] != mine:
                name = type(self).__name__
                raise ValueError(
                    f"{name}.step: the learning rate of parameter group {g} is {group['lr']!r}, but this scheduler "
                    f"set {mine!r}: another scheduler on the same optimiser, or code that set "
                    f"param_groups[...]['lr'], changed it. {name} is a function of the step count from the base "
                    "rates and would overwrite that change (only StepLR, MultiStepLR, ExponentialLR, "
                    "CosineAnnealingLR, LinearLR, ConstantLR, PolynomialLR and MultiplicativeLR build on the current "
                    "rate, as PyTorch's chainable ones); use one scheduler (e.g. LambdaLR with the product of the "
                    "factors, or SequentialLR / ChainedScheduler, which drive the schedulers given to them), and to "
                    f"change the rate set the scheduler's base_lrs[{g}], not param_groups[{g}]['lr']"
                )

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the latest ``step()`` (one per parameter group)."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        """The step count, base rates and settings (no functions), to resume exactly."""
        return {
            k: (list(v) if isinstance(v, (list, tuple)) else v)
            for k, v in self.__dict__.items()
            if k != "optimizer" and not callable(v) and not k.startswith("_")
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict()`` (or a PyTorch scheduler's); the optimiser's rates are set for the restored
        step."""
        for k, v in from_pytorch(self, state).items():
            if k not in self.__dict__ or k.startswith("_") or k == "optimizer":
                raise KeyError(f"{type(self).__name__}.load_state_dict: unknown entry {k!r}")
            setattr(self, k, v.item() if hasattr(v, "item") and getattr(v, "ndim", 1) == 0 else v)
        self.base_lrs = [float(b) for b in self.base_lrs]
        if getattr(self, "chained", False):  # the rate builds on others': it is the optimiser's own (PyTorch's way)
            self._last_lr = [float(g["lr"]) for g in self.optimizer.param_groups]
            return
        self._last_lr = self._rates_at(self.last_epoch)
        for group, lr in zip(self.optimizer.param_groups, self._last_lr, strict=False):
            group["lr"] = lr


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(step)``; ``lr_lambda`` may be a list, one function per parameter group (as PyTorch).

    Example:
        >>> from chainrule import Tensor, optim
        >>> a, b = Tensor([1.0], requires_grad=True), Tensor([1.0], requires_grad=True)
        >>> opt = optim.SGD([{"params": [a]}, {"params": [b]}], lr=1.0)
        >>> sched = optim.LambdaLR(opt, [lambda k: 0.5 ** k, lambda k: 1.0 / (k + 1)])
        >>> opt.step(); sched.step(); sched.get_last_lr()
        [0.5, 0.5]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups) if isinstance(optimizer, Optimizer) else 0
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n or not all(callable(f) for f in lr_lambda):
                raise ValueError(
                    f"LambdaLR: lr_lambda is a list of {len(lr_lambda)} item(s); it must hold one function per "
                    f"parameter group ({n}), or pass one function for all groups"
                )
            self._lambdas = list(lr_lambda)
        elif callable(lr_lambda):
            self.lr_lambda = lr_lambda
            self._lambdas = [lr_lambda] * n
        else:
            raise TypeError(f"LambdaLR: lr_lambda must be a function of the step (or a list of them, one per "
                            f"parameter group), got {type(lr_lambda).__name__}")
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        return base_lr * self._lambdas[0](epoch)

    def _rates_at(self, epoch: int) -> list[float]:
        return [base * f(epoch) for base, f in zip(self.base_lrs, self._lambdas, strict=True)]


class MultiplicativeLR(LambdaLR):
    """PyTorch's ``MultiplicativeLR``: each step multiplies the rate by ``lr_lambda(step)`` (one function, or one
    per parameter group): ``lr = base_lr * lr_lambda(1) * ... * lr_lambda(step)``, kept as a closed form of the
    step (the products are remembered, so resuming from ``state_dict`` is exact).

    Example:
        >>> from chainrule import Tensor, optim
        >>> opt = optim.SGD([Tensor([1.0], requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.MultiplicativeLR(opt, lambda k: 0.5)
        >>> for _ in range(3):
        ...     opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.125]
    """

    _CHAINS = True

    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1) -> None:
        self._products: list[list[float]] = []  # the products of the factors up to each step, per group
        super().__init__(optimizer, lr_lambda, last_epoch)

    def step(self, epoch: int | None = None) -> None:
        """Advance one step (PyTorch's deprecated ``epoch`` is refused: its MultiplicativeLR then multiplies the
        current rate by the one factor of that epoch, not by those of the epochs in between)."""
        if epoch is not None:
            raise TypeError(f"MultiplicativeLR.step(epoch={epoch!r}): a jump to an epoch is not a product of factors "
                            "(PyTorch's deprecated argument applies one factor); call step() once per epoch")
        super().step()

    def lr_at(self, base_lr: float, epoch: int) -> float:
        return base_lr * self._product(0, epoch)

    def _product(self, g: int, epoch: int) -> float:
        while len(self._products) <= g:
            self._products.append([1.0])
        products = self._products[g]
        while len(products) <= epoch:
            products.append(products[-1] * float(self._lambdas[g](len(products))))
        return products[max(epoch, 0)]

    def _rates_at(self, epoch: int) -> list[float]:
        return [base * self._product(g, epoch) for g, base in enumerate(self.base_lrs)]


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` steps."""

    _CHAINS = True

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        if step_size <= 0:
            raise ValueError(f"StepLR: step_size must be positive, got {step_size}")
        self.step_size, self.gamma = int(step_size), float(gamma)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        return base_lr * self.gamma ** (epoch // self.step_size)


class MultiStepLR(LRScheduler):
    """Multiply the rate by ``gamma`` at each step count in ``milestones``."""

    _CHAINS = True

    def __init__(self, optimizer: Optimizer, milestones: Any, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.milestones, self.gamma = sorted(int(m) for m in milestones), float(gamma)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        return base_lr * self.gamma ** bisect.bisect_right(self.milestones, epoch)


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every step."""

    _CHAINS = True

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = float(gamma)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        return base_lr * self.gamma**epoch


class CosineAnnealingLR(LRScheduler):
    """Cosine from the base rate down to ``eta_min`` over ``T_max`` steps (periodic after that, as PyTorch)."""

    _CHAINS = True

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:  # noqa: N803
        if T_max <= 0:
            raise ValueError(f"CosineAnnealingLR: T_max must be positive, got {T_max}")
        self.T_max, self.eta_min = int(T_max), float(eta_min)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2

    def _floor(self) -> float:
        return self.eta_min


class LinearLR(LRScheduler):
    """Scale the rate linearly from ``start_factor`` to ``end_factor`` over ``total_iters`` steps,
    then keep ``end_factor`` (a linear warm-up with the defaults of PyTorch's ``LinearLR``)."""

    _CHAINS = True

    def __init__(
        self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0, total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if not 0.0 <= start_factor <= 1.0 or not 0.0 <= end_factor <= 1.0:
            raise ValueError(f"LinearLR: factors must be in [0, 1], got {start_factor} and {end_factor}")
        if total_iters <= 0:
            raise ValueError(f"LinearLR: total_iters must be positive, got {total_iters}")
        self.start_factor, self.end_factor, self.total_iters = float(start_factor), float(end_factor), int(total_iters)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        frac = min(epoch, self.total_iters) / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * frac)


class WarmupCosineLR(LRScheduler):
    """Linear warm-up from ``start_factor * base_lr`` to ``base_lr`` over ``warmup_steps``, then
    cosine decay to ``eta_min`` at ``total_steps`` (and ``eta_min`` after): the usual schedule
    for transformers.

    Up to ``total_steps`` it equals PyTorch's chain
    ``SequentialLR(opt, [LinearLR(opt, start_factor, 1.0, total_iters=warmup_steps),
    CosineAnnealingLR(opt, T_max=total_steps - warmup_steps, eta_min=eta_min)],
    milestones=[warmup_steps])`` (checked to 1e-12 in tests/test_gpt_oracle.py). After the last
    step the two differ on purpose: PyTorch's cosine is periodic and climbs back towards the base
    rate, this one holds ``eta_min``, so training past the planned length never heats up again.
    With ``warmup_steps=0`` it is a plain cosine from the first step.

    Example:
        >>> from chainrule import Tensor, optim
        >>> opt = optim.SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
        >>> sched = optim.WarmupCosineLR(opt, warmup_steps=2, total_steps=4, start_factor=0.5)
        >>> [round(sched.lr_at(1.0, s), 3) for s in range(6)]
        [0.5, 0.75, 1.0, 0.5, 0.0, 0.0]
    """

    def __init__(
        self, optimizer: Optimizer, warmup_steps: int, total_steps: int, eta_min: float = 0.0,
        start_factor: float = 0.1, last_epoch: int = -1,
    ) -> None:
        if warmup_steps < 0 or total_steps <= warmup_steps:
            raise ValueError(
                f"WarmupCosineLR: need 0 <= warmup_steps < total_steps, got {warmup_steps} and {total_steps}"
            )
        if not 0.0 <= start_factor <= 1.0:
            raise ValueError(f"WarmupCosineLR: start_factor must be in [0, 1], got {start_factor}")
        self.warmup_steps, self.total_steps = int(warmup_steps), int(total_steps)
        self.eta_min, self.start_factor = float(eta_min), float(start_factor)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        if epoch < self.warmup_steps:
            return base_lr * (self.start_factor + (1 - self.start_factor) * epoch / self.warmup_steps)
        progress = min(epoch - self.warmup_steps, self.total_steps - self.warmup_steps)
        span = self.total_steps - self.warmup_steps
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * progress / span)) / 2
