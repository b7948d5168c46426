"""PyTorch's deprecated ``torch.range`` (the end included), alone in its module: ``chainrule.range`` is served on
first use, so that ``from chainrule import *`` keeps Python's ``range``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...core.defaults import get_default_dtype
from ...tensor import Tensor


def range(start: float, end: float, step: float = 1, *, dtype: Any = None,  # noqa: A001
          device: Any = None, requires_grad: bool = False) -> Tensor:
    """PyTorch's deprecated ``torch.range(start, end, step=1)``: from ``start`` to ``end`` *inclusive*, in the
    default float dtype (``arange`` stops before ``end``).

    Example:
        >>> import warnings, chainrule as cr
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     cr.range(1, 3).tolist()
        [1.0, 2.0, 3.0]
    """
    warnings.warn("torch.range is deprecated in favor of torch.arange and will be removed; range includes end, "
                  "arange does not", UserWarning, stacklevel=2)
    if step == 0:
        raise RuntimeError("range: step must be nonzero")
    count = int(np.floor((end - start) / step)) + 1
    values = start + step * np.arange(max(count, 0), dtype=np.float64)
    return Tensor(values.astype(dtype or get_default_dtype()), requires_grad=requires_grad, device=device)
