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
from .module import Module

__all__ = [
    "mse_loss", "cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
    "MSELoss", "CrossEntropyLoss", "BCEWithLogitsLoss",
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


class BCEWithLogitsLoss(Module):
    """Binary cross-entropy computed stably from logits."""

    def __init__(self, reduction: str = "mean", pos_weight: Any = None) -> None:
        super().__init__()
        self.reduction = reduction
        self.pos_weight = pos_weight

    def forward(self, logits: Any, target: Any) -> Any:
        return binary_cross_entropy_with_logits(logits, target, reduction=self.reduction, pos_weight=self.pos_weight)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"
