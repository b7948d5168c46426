"""PyTorch's ``torch.utils.data`` path for :mod:`chainrule.data` (the same objects).

Example:
    >>> from chainrule.utils.data import DataLoader
    >>> import chainrule.data
    >>> DataLoader is chainrule.data.DataLoader
    True
"""

from __future__ import annotations

from ..data import *  # noqa: F403
from ..data import __all__  # noqa: F401
