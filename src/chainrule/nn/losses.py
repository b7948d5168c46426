"""Loss layers: ``MSELoss``, ``CrossEntropyLoss``, ``BCEWithLogitsLoss`` (and the functions).

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    >>> round(float(loss_fn(np.array([[2.0, 0.0]]), np.array([0]))), 4)
    0.2269
"""

from __future__ import annotations

from typing import Any

from .functional import binary_cross_entropy_with_logits, cross_entropy, mse_loss, nll_loss
from .functional import extras as FX
from .module import Module

__all__ = [
    "mse_loss", "cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
    "MSELoss", "CrossEntropyLoss", "BCEWithLogitsLoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "BCELoss",
    "NLLLoss",
]


class MSELoss(Module):
    """Mean squared error (``reduction``: 'mean', 'sum' or 'none')."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return mse_loss(input, target, reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class CrossEntropyLoss(Module):
    """Softmax cross-entropy of logits against class indices (or probabilities)."""

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__()
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.label_smoothing = label_smoothing

    def forward(self, logits: Any, target: Any) -> Any:
        return cross_entropy(
            logits, target, ignore_index=self.ignore_index, reduction=self.reduction,
            label_smoothing=self.label_smoothing, weight=self.weight,
        )

    def extra_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, reduction={self.reduction!r}, label_smoothing={self.label_smoothing}"


class NLLLoss(Module):
    """Negative log-likelihood of log-probabilities (``F.nll_loss``; after ``LogSoftmax``) against class indices."""

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__()
        self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction

    def forward(self, log_probs: Any, target: Any) -> Any:
        return nll_loss(log_probs, target, weight=self.weight, ignore_index=self.ignore_index,
                        reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, reduction={self.reduction!r}"


class BCEWithLogitsLoss(Module):
    """Binary cross-entropy computed stably from logits."""

    def __init__(self, weight: Any = None, reduction: str = "mean", pos_weight: Any = None) -> None:
        super().__init__()
        if isinstance(weight, str):  # PyTorch's first argument is weight: a reduction there is a misplaced name
            raise TypeError(f"BCEWithLogitsLoss: the first argument is weight (as PyTorch's), got {weight!r}; "
                            f"pass reduction={weight!r}")
        self.weight = weight
        self.reduction = reduction
        self.pos_weight = pos_weight

    def forward(self, logits: Any, target: Any) -> Any:
        return binary_cross_entropy_with_logits(logits, target, weight=self.weight, reduction=self.reduction,
                                                pos_weight=self.pos_weight)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class _ReducedLoss(Module):
    """A loss layer ``fn(input, target, reduction=..., **options)`` with PyTorch's name and arguments."""

    fn: Any = None
    options: dict[str, Any] = {}

    def __init__(self, reduction: str = "mean", **options: Any) -> None:
        super().__init__()
        unknown = set(options) - set(self.options)
        if unknown:
            raise TypeError(f"{type(self).__name__}: unexpected arguments {sorted(unknown)}; it takes "
                            f"{['reduction', *self.options]}")
        self.reduction = reduction
        self.settings = {**self.options, **options}

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return type(self).fn(input, target, reduction=self.reduction, **self.settings)

    def extra_repr(self) -> str:
        return ", ".join([f"reduction={self.reduction!r}", *(f"{k}={v}" for k, v in self.settings.items())])


class L1Loss(_ReducedLoss):
    """Mean absolute error (``F.l1_loss``)."""

    fn = staticmethod(FX.l1_loss)


class SmoothL1Loss(_ReducedLoss):
    """``F.smooth_l1_loss``: quadratic below ``beta``, linear above."""

    fn = staticmethod(FX.smooth_l1_loss)
    options = {"beta": 1.0}


class HuberLoss(_ReducedLoss):
    """``F.huber_loss``: quadratic below ``delta``, linear (slope ``delta``) above."""

    fn = staticmethod(FX.huber_loss)
    options = {"delta": 1.0}


class KLDivLoss(_ReducedLoss):
    """``F.kl_div``: ``input`` holds log-probabilities (``reduction="batchmean"`` is the true KL divergence)."""

    fn = staticmethod(FX.kl_div)
    options = {"log_target": False}


class BCELoss(Module):
    """Binary cross-entropy of probabilities (``F.binary_cross_entropy``); for logits use ``BCEWithLogitsLoss``."""

    def __init__(self, weight: Any = None, reduction: str = "mean") -> None:
        super().__init__()
        self.weight, self.reduction = weight, reduction

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return FX.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"
