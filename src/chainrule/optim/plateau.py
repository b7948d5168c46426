"""``ReduceLROnPlateau``: PyTorch's scheduler that cuts the rate when a watched metric stops improving."""

from __future__ import annotations

import math
from typing import Any

from .optimizers import Optimizer
from .schedules import from_pytorch


class ReduceLROnPlateau:
    """Multiply each group's rate by ``factor`` (not below ``min_lr``) once the metric passed to ``step(metric)``
    has not improved for more than ``patience`` steps; PyTorch's arguments, defaults and results.

    It builds on the optimiser's current rates, as PyTorch's does, so a rate set by hand stays in effect.

    Example:
        >>> from chainrule import Tensor, optim
        >>> opt = optim.SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
        >>> sched = optim.ReduceLROnPlateau(opt, patience=1, factor=0.5)
        >>> for val_loss in [3.0, 2.0, 2.5, 2.4, 2.6, 2.7]:
        ...     sched.step(val_loss)
        >>> sched.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: float | list[float] = 0.0, eps: float = 1e-8) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"ReduceLROnPlateau: expected a chainrule optimiser, got {type(optimizer).__name__}")
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1.0, got {factor}")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"ReduceLROnPlateau: min_lr has {len(min_lr)} values for {n} parameter group(s)")
            self.min_lrs = [float(v) for v in min_lr]
        else:
            self.min_lrs = [float(min_lr)] * n
        self.optimizer = optimizer
        self.mode, self.factor, self.patience = mode, float(factor), int(patience)
        self.threshold, self.threshold_mode = float(threshold), threshold_mode
        self.cooldown, self.eps = int(cooldown), float(eps)
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs, self.cooldown_counter, self.last_epoch = 0, 0, 0
        self._last_lr = [float(g["lr"]) for g in optimizer.param_groups]

    def _better(self, a: float) -> bool:
        rel = self.threshold_mode == "rel"
        if self.mode == "min":
            return a < (self.best * (1.0 - self.threshold) if rel else self.best - self.threshold)
        return a > (self.best * (1.0 + self.threshold) if rel else self.best + self.threshold)

    def step(self, metrics: Any, epoch: int | None = None) -> None:
        """Record one value of the watched metric (e.g. the validation loss) and cut the rates if it stalled
        (``epoch``, PyTorch's deprecated argument, sets the step count)."""
        current = float(metrics.item() if hasattr(metrics, "item") else metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else int(epoch)
        if self._better(current):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, floor in zip(self.optimizer.param_groups, self.min_lrs, strict=False):
                old = float(group["lr"])
                new = max(old * self.factor, floor)
                if old - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [float(g["lr"]) for g in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The rates after the latest ``step`` (one per parameter group)."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        """The counters, best value and settings, to resume exactly."""
        return {k: (list(v) if isinstance(v, list) else v) for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict()`` or a PyTorch one (the rates themselves are the optimiser's state)."""
        for k, v in from_pytorch(self, state).items():
            if k not in self.__dict__ or k == "optimizer":
                raise KeyError(f"ReduceLROnPlateau.load_state_dict: unknown entry {k!r}")
            setattr(self, k, v.item() if hasattr(v, "item") and getattr(v, "ndim", 1) == 0 else v)
        saved = state.get("_last_lr")  # (the rates of the latest step, in both libraries' state dicts)
        self._last_lr = [float(v) for v in saved] if saved is not None else \
            [float(g["lr"]) for g in self.optimizer.param_groups]
