"""PyTorch's ``torch.utils`` path: ``chainrule.utils.data`` is :mod:`chainrule.data`, so
``from torch.utils.data import DataLoader, Dataset`` becomes ``from chainrule.utils.data import ...``;
``chainrule.utils.checkpoint`` is PyTorch's ``torch.utils.checkpoint``."""

from __future__ import annotations

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
