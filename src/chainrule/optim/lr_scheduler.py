"""PyTorch's path for the schedules: ``optim.lr_scheduler.StepLR``, ``optim.lr_scheduler.OneCycleLR`` and so on."""

from __future__ import annotations

from .cyclic import ConstantLR, CosineAnnealingWarmRestarts, CyclicLR, PolynomialLR
from .onecycle import OneCycleLR
from .plateau import ReduceLROnPlateau
from .schedule_chains import ChainedScheduler, SequentialLR
from .schedules import (
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    LRScheduler,
    MultiplicativeLR,
    MultiStepLR,
    StepLR,
    WarmupCosineLR,
)

__all__ = [
    "LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
    "WarmupCosineLR", "OneCycleLR", "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler",
    "ConstantLR", "PolynomialLR", "CosineAnnealingWarmRestarts", "CyclicLR", "MultiplicativeLR",
]

_LRScheduler = LRScheduler  # PyTorch's former name of the base class (deprecated there), still subclassed by old code
