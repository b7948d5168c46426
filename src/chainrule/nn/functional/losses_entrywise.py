"""Entrywise losses of ``chainrule.nn.functional``: ``binary_cross_entropy_with_logits`` and
``mse_loss``, as ``torch.nn.functional``'s.

Example:
    >>> import numpy as np
    >>> import chainrule.nn.functional as F
    >>> float(F.mse_loss(np.array([1.0, 2.0]), np.array([0.0, 0.0])))
    2.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autodiff.batch_levels import is_value
from ...autodiff.primitive import Primitive
from ...core.device import as_array
from ...ops._define import raw
from ...ops.elementwise import sigmoid, square
from .losses import _check_reduction, _reduce, broadcast_target, float_target

__all__ = ["binary_cross_entropy_with_logits", "mse_loss"]


# == binary cross entropy with logits =======================================================
def _softplus_neg(x: Any) -> Any:
    return np.logaddexp(0.0, -x)  # log(1 + exp(-x)), stable


def _bce_fn(x: Any, y: Any, pos_weight: Any = None) -> Any:
    sp = _softplus_neg(x)
    if pos_weight is None:
        return (1.0 - y) * x + sp
    return (1.0 - y) * x + (1.0 + (pos_weight - 1.0) * y) * sp


def _bce_dx(ans: Any, x: Any, y: Any, pos_weight: Any = None) -> Any:
    if pos_weight is None:
        return sigmoid(x) - y
    return (1.0 - y) - (1.0 + (pos_weight - 1.0) * y) * sigmoid(-x)


def _bce_dy(ans: Any, x: Any, y: Any, pos_weight: Any = None) -> Any:
    if pos_weight is None:
        return -x
    return -x + (pos_weight - 1.0) * _softplus_neg(x)


_bce = Primitive("nn.binary_cross_entropy_with_logits", _bce_fn)
_bce.defvjp(lambda g, ans, *a: g * _bce_dx(ans, *a), lambda g, ans, *a: g * _bce_dy(ans, *a), None)
_bce.defjvp(lambda t, ans, *a: t * _bce_dx(ans, *a), lambda t, ans, *a: t * _bce_dy(ans, *a), None)


def binary_cross_entropy_with_logits(
    logits: Any, target: Any, weight: Any = None, reduction: str = "mean", pos_weight: Any = None
) -> Any:
    """Binary cross-entropy of ``sigmoid(logits)`` against targets in [0, 1], computed stably from
    the logits (as ``torch.nn.functional.binary_cross_entropy_with_logits``, whose argument order it
    keeps: ``weight`` rescales each entry's loss, broadcast, before the reduction; ``pos_weight`` the
    positive term, per class).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> round(float(F.binary_cross_entropy_with_logits(np.array([0.0]), np.array([1.0]))), 4)
        0.6931
    """
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    sx, sy = np.shape(raw(logits)), np.shape(raw(target))
    if sx != sy:
        raise ValueError(
            f"binary_cross_entropy_with_logits: logits of shape {sx} and target of shape {sy} must have the "
            "same shape (reshape the target, e.g. y.reshape(-1, 1))"
        )
    dt = np.result_type(raw(logits))
    if dt.kind != "f":
        raise TypeError(f"binary_cross_entropy_with_logits: logits must be floating point, got dtype {dt}")
    if not is_value(target):
        target = as_array(target, dtype=dt)
    args = (logits, target) if pos_weight is None else (logits, target, as_array(raw(pos_weight), dtype=dt))
    losses = _bce(*args)
    if weight is not None:
        losses = losses * (weight if is_value(weight) else as_array(weight, dtype=dt))
    return _reduce("binary_cross_entropy_with_logits", losses, reduction)


# == mean squared error ======================================================================
def mse_loss(input: Any, target: Any, reduction: str = "mean") -> Any:  # noqa: A002
    """Mean (or sum) of squared differences (a target of another shape is broadcast, with PyTorch's warning).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> float(F.mse_loss(np.array([1.0, 2.0]), np.array([0.0, 0.0])))
        2.5
    """
    _check_reduction("mse_loss", reduction)
    broadcast_target("mse_loss", input, target)
    if not is_value(target):
        target = as_array(target, dtype=np.result_type(raw(input)))
    target = float_target(input, target)
    return _reduce("mse_loss", square(input - target), reduction)
