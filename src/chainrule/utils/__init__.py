"""PyTorch's ``torch.utils`` path: ``chainrule.utils.data`` is :mod:`chainrule.data`, so
``from torch.utils.data import DataLoader, Dataset`` becomes ``from chainrule.utils.data import ...``."""

from __future__ import annotations

from . import data

__all__ = ["data"]
