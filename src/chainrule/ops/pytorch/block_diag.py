"""PyTorch's ``torch.block_diag``: the matrices given, placed along the diagonal of one matrix of zeros.

It is concatenation of the blocks with zeros, so the gradient of each block is its block of the output's.

Example:
    >>> import chainrule as cr
    >>> cr.block_diag(cr.tensor([[1.0]]), cr.tensor([2.0, 3.0])).tolist()
    [[1.0, 0.0, 0.0], [0.0, 2.0, 3.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autodiff.batch_levels import is_value
from ...core.device import xp_of
from ...tensor import Tensor
from ..shape import concatenate


def block_diag(*tensors: Any) -> Any:
    """PyTorch's ``torch.block_diag(*tensors)``: a 0-d block is 1 x 1, a 1-D block one row; the dtype is their
    promotion; no blocks give a 1 x 0 matrix."""
    blocks = [t if is_value(t) else Tensor(t) for t in tensors]
    for i, b in enumerate(blocks):
        if b.ndim > 2:
            raise ValueError(f"block_diag: block {i} has {b.ndim} dimensions (shape {tuple(b.shape)}); each block "
                             "must have at most 2")
    blocks = [b.reshape((1, 1)) if b.ndim == 0 else b.reshape((1, -1)) if b.ndim == 1 else b for b in blocks]
    if not blocks:
        return Tensor(np.zeros((1, 0)))
    dtypes = [b.dtype for b in blocks]
    floats = [d for d in dtypes if d.kind in "fc"]  # PyTorch's promotion: a float block wins over integers
    dtype = np.result_type(*(floats or dtypes))
    xp = xp_of(blocks[0]._data if isinstance(blocks[0], Tensor) else np.zeros(0))
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        h, w = b.shape
        parts = [xp.zeros((h, left), dtype=dtype), b.astype(dtype) if b.dtype != dtype else b,
                 xp.zeros((h, width - left - w), dtype=dtype)]
        rows.append(concatenate(parts, axis=1))
        left += w
    return concatenate(rows, axis=0)
