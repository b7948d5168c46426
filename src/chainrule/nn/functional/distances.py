"""``torch.nn.functional``'s functions of pairs of vectors: ``pairwise_distance``, ``pdist`` and ``bilinear``.

Example:
    >>> import numpy as np
    >>> import chainrule.nn.functional as F
    >>> float(F.pairwise_distance(np.array([3.0, 0.0]), np.array([0.0, 4.0]), eps=0.0))
    5.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autodiff.batch_levels import is_value
from ...core.device import as_array
from ...ops import elementwise as ew
from ...ops._define import on_device_of, raw
from ...ops.contraction import einsum
from ...ops.linear_algebra.norms import norm
from ...tensor import Tensor

__all__ = ["pairwise_distance", "pdist", "bilinear"]


def _tensor(x: Any) -> Any:
    if is_value(x):
        return x
    arr = as_array(x)
    return Tensor(arr if arr.dtype.kind in "fc" else arr.astype(np.float64))


def pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Any:
    """``||x1 - x2 + eps||_p`` over the last dim (inputs broadcast), as PyTorch's."""
    a, b = _tensor(x1), _tensor(x2)
    return norm(ew.add(ew.subtract(a, b), eps), ord=p, axis=-1, keepdims=keepdim)


def pdist(input: Any, p: float = 2.0) -> Any:  # noqa: A002
    """The ``p``-norm distances between the rows of an ``(N, M)`` input, for every pair ``i < j`` (in that order),
    as ``N * (N - 1) / 2`` values."""
    x = _tensor(input)
    shape = tuple(np.shape(raw(x)))
    if len(shape) != 2:
        raise ValueError(f"pdist: only supports 2-d inputs (N, M), got shape {shape}")
    i, j = np.triu_indices(shape[0], 1)
    i, j = on_device_of(raw(x), i), on_device_of(raw(x), j)
    return norm(ew.subtract(x[i], x[j]), ord=p, axis=-1)


def bilinear(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Any:
    """``y_k = x1 @ weight[k] @ x2 + bias[k]``: ``input1`` (*, in1), ``input2`` (*, in2), ``weight`` (out, in1, in2).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.bilinear(np.ones((2, 3)), np.ones((2, 4)), np.ones((5, 3, 4))).shape
        (2, 5)
    """
    a, b, w = _tensor(input1), _tensor(input2), _tensor(weight)
    sa, sb, sw = np.shape(raw(a)), np.shape(raw(b)), np.shape(raw(w))
    if len(sw) != 3 or not sa or not sb or sa[-1] != sw[1] or sb[-1] != sw[2] or sa[:-1] != sb[:-1]:
        raise ValueError(f"bilinear: input1 {tuple(sa)} and input2 {tuple(sb)} must share their leading dims and end "
                         f"with in1_features and in2_features of weight (out, in1, in2) {tuple(sw)}")
    out = einsum("...i,kij,...j->...k", a, w, b)
    return out if bias is None else ew.add(out, bias)
