"""Margin and ranking losses of ``chainrule.nn.functional``, as ``torch.nn.functional``'s:
``margin_ranking_loss``, ``hinge_embedding_loss``, ``soft_margin_loss``, ``multilabel_soft_margin_loss``,
``cosine_embedding_loss``, ``triplet_margin_loss`` and ``poisson_nll_loss``.

Each follows PyTorch's own formula step by step (its ``clamp_min`` at 0 passes the gradient at the kink, its
``where`` on the target picks a branch), so values and derivatives of every order agree with PyTorch's,
also at ties and exact zeros.

Example:
    >>> import numpy as np
    >>> import chainrule.nn.functional as F
    >>> float(F.margin_ranking_loss(np.array([1.0, 2.0]), np.array([2.0, 0.0]), np.array([1.0, 1.0])))
    0.5
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...autodiff.batch_levels import is_batched, is_value
from ...core.device import as_array
from ...ops import elementwise as ew
from ...ops._define import raw
from ...ops.linear_algebra.norms import norm
from ...ops.reductions import sum as reduce_sum
from ...tensor import Tensor
from .extras import _reduced

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss"]



def _tensor(x: Any) -> Any:
    if is_value(x):
        return x
    arr = as_array(x)
    return Tensor(arr if arr.dtype.kind == "f" else arr.astype(np.float64))


def _values(x: Any) -> Any:
    v = raw(x)
    return v if is_batched(v) else as_array(v)


def _clamp_min0(x: Any) -> Any:
    return ew.clip(x, 0.0, None)  # PyTorch's clamp_min: the gradient passes at 0 itself


def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0, reduction: str = "mean") -> Any:
    """``max(0, -target * (input1 - input2) + margin)``; ``target`` holds 1 or -1.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.margin_ranking_loss(np.array([1.0]), np.array([0.0]), np.array([-1.0]), reduction="none")
        Tensor([1.])
    """
    diff = ew.subtract(_tensor(input1), _tensor(input2))
    return _reduced("margin_ranking_loss", _clamp_min0(ew.add(ew.multiply(ew.negative(target), diff), margin)),
                    reduction)


def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0, reduction: str = "mean") -> Any:  # noqa: A002
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1 (PyTorch's: an entry whose target is
    neither counts both terms).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.hinge_embedding_loss(np.array([0.3, 0.3]), np.array([1.0, -1.0]), reduction="none")
        Tensor([0.3, 0.7])
    """
    x, t = _tensor(input), _values(target)
    zero = np.zeros((), dtype=_values(x).dtype)
    margin_part = ew.where(t != 1, _clamp_min0(ew.subtract(margin, x)), zero)
    return _reduced("hinge_embedding_loss", ew.add(margin_part, ew.where(t != -1, x, zero)), reduction)


def soft_margin_loss(input: Any, target: Any, reduction: str = "mean") -> Any:  # noqa: A002
    """``log(1 + exp(-target * input))`` (as PyTorch computes it: large ``-target * input`` overflows to inf).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> round(float(F.soft_margin_loss(np.array([0.0]), np.array([1.0]))), 4)
        0.6931
    """
    z = ew.exp(ew.multiply(ew.negative(_tensor(input)), target))
    return _reduced("soft_margin_loss", ew.log1p(z), reduction)


def multilabel_soft_margin_loss(input: Any, target: Any, weight: Any = None,  # noqa: A002
                                reduction: str = "mean") -> Any:
    """``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))`` per class, times ``weight``, averaged over the classes
    (the last axis), then reduced over the batch.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> round(float(F.multilabel_soft_margin_loss(np.array([[0.0, 0.0]]), np.array([[1.0, 0.0]]))), 4)
        0.6931
    """
    x = _tensor(input)

    def logsigmoid(v: Any) -> Any:
        return ew.negative(ew.logaddexp(ew.negative(v), 0.0))

    per_class = ew.negative(ew.add(ew.multiply(target, logsigmoid(x)),
                                   ew.multiply(ew.subtract(1.0, target), logsigmoid(ew.negative(x)))))
    if weight is not None:
        per_class = ew.multiply(per_class, weight)
    c = np.shape(_values(x))[-1]
    losses = ew.divide(reduce_sum(per_class, axis=-1), float(c))
    return _reduced("multilabel_soft_margin_loss", losses, reduction)


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0,
                          reduction: str = "mean") -> Any:
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1 (cosine over the
    last axis, with PyTorch's 1e-12 added to each squared norm).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> float(F.cosine_embedding_loss(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), np.array([1.0])))
        1.0
    """
    a, b = _tensor(input1), _tensor(input2)
    axis = 0 if np.ndim(_values(a)) == 1 else 1
    dot = reduce_sum(ew.multiply(a, b), axis=axis)
    sq1 = ew.add(reduce_sum(ew.multiply(a, a), axis=axis), 1e-12)
    sq2 = ew.add(reduce_sum(ew.multiply(b, b), axis=axis), 1e-12)
    cos = ew.divide(dot, ew.sqrt(ew.multiply(sq1, sq2)))
    t = _values(target)
    zero = np.zeros((), dtype=_values(cos).dtype)
    pos = ew.where(t == 1, ew.subtract(1.0, cos), zero)
    neg = ew.where(t == -1, _clamp_min0(ew.subtract(cos, margin)), zero)
    return _reduced("cosine_embedding_loss", ew.add(pos, neg), reduction)


def _pairwise_distance(x1: Any, x2: Any, p: float, eps: float) -> Any:
    return norm(ew.add(ew.subtract(x1, x2), eps), ord=p, axis=-1)


def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-6, swap: bool = False, reduction: str = "mean") -> Any:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with PyTorch's ``pairwise_distance``
    ``d(x, y) = ||x - y + eps||_p`` over the last axis; ``swap`` takes the smaller of d(a, n) and d(p, n).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> a, p, n = np.array([[0.0, 0.0]]), np.array([[0.0, 1.0]]), np.array([[0.0, 3.0]])
        >>> float(F.triplet_margin_loss(a, p, n, eps=0.0))
        0.0
    """
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: margin must be greater than 0, got {margin}")
    a, pos, neg = _tensor(anchor), _tensor(positive), _tensor(negative)
    d_pos, d_neg = _pairwise_distance(a, pos, p, eps), _pairwise_distance(a, neg, p, eps)
    if swap:
        d_neg = ew.minimum(d_neg, _pairwise_distance(pos, neg, p, eps))
    return _reduced("triplet_margin_loss", _clamp_min0(ew.add(ew.subtract(d_pos, d_neg), margin)), reduction)


def poisson_nll_loss(input: Any, target: Any, log_input: bool = True, full: bool = False,  # noqa: A002
                     eps: float = 1e-8, reduction: str = "mean") -> Any:
    """Negative log-likelihood of a Poisson ``target``: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``; ``full`` adds Stirling's ``t log t - t + log(2 pi t) / 2`` where t > 1.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> float(F.poisson_nll_loss(np.array([0.0]), np.array([1.0])))
        1.0
    """
    x = _tensor(input)
    if log_input:
        losses = ew.subtract(ew.exp(x), ew.multiply(target, x))
    else:
        losses = ew.subtract(x, ew.multiply(target, ew.log(ew.add(x, eps))))
    if full:
        t = _tensor(target)
        tv = _values(t)
        safe = ew.where(tv > 1, t, np.ones((), dtype=tv.dtype))  # (log of t <= 1 never computed: no inf * 0)
        stirling = ew.add(ew.subtract(ew.multiply(safe, ew.log(safe)), safe),
                          ew.multiply(ew.log(ew.multiply(safe, 2 * math.pi)), 0.5))
        losses = ew.add(losses, ew.where(tv > 1, stirling, np.zeros((), dtype=tv.dtype)))
    return _reduced("poisson_nll_loss", losses, reduction)
