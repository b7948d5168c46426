"""Optimisers (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD, Adafactor,
LBFGS, Muon), learning-rate schedules and gradient clipping, for Tensor and Scalar parameters.

The update arithmetic lives in :mod:`chainrule.optim.rules` (plain functions on arrays, shared
with ``chainrule.optimize.minimize``).

Example:
    >>> from chainrule import nn, optim
    >>> model = nn.MLP(2, [8, 1], rng=0)
    >>> opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    >>> sched = optim.CosineAnnealingLR(opt, T_max=100)
"""

from __future__ import annotations

from . import (
    lr_scheduler,  # PyTorch's path: optim.lr_scheduler.StepLR
    rules,
    swa_utils,  # PyTorch's path: optim.swa_utils.AveragedModel
)
from .adafactor import Adafactor
from .adam_variants import Adamax, NAdam, RAdam, SparseAdam
from .adaptive import Adadelta, Adagrad, RMSprop
from .clip import clip_grad_norm_, clip_grad_value_, total_norm
from .groups import weight_decay_groups
from .hooks import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from .lbfgs import LBFGS
from .lr_scheduler import *  # noqa: F403  (the schedules, also under PyTorch's optim.lr_scheduler path)
from .muon import Muon
from .optimizers import SGD, Adam, AdamW, Optimizer
from .params import ScalarSlot, ScalarVector, Slot, TensorSlot
from .sign_and_averaging import ASGD, Rprop

__all__ = [
    "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler",
    "clip_grad_norm_", "clip_grad_value_", "total_norm", "Slot", "ScalarVector", "TensorSlot", "ScalarSlot",
    "weight_decay_groups", "rules", *lr_scheduler.__all__,
    "Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS",
    "Rprop", "ASGD", "Adafactor", "Muon", "SparseAdam",
    "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook", "swa_utils",
]
