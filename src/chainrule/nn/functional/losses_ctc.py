"""PyTorch's connectionist temporal classification loss (``ctc_loss``): the negative log-likelihood of a target
sequence summed over every alignment of it to the input's time steps (the labels in order, each repeated, with
blanks between and around them, a blank required between two equal labels).

The forward (alpha) recursion over the extended target ``blank, l1, blank, l2, ..., blank`` runs as chainrule
ops, one ``logsumexp`` of three shifted copies per time step, vectorised over the batch and the target's
positions: gradients of every order follow from the ops' rules. "Log 0" is a large negative number rather than
``-inf``, so that a state no alignment reaches gets a zero gradient instead of ``0 * inf``; a target no alignment
fits (too long for its input) gets PyTorch's infinite loss, and ``zero_infinity=True`` makes it 0 with a zero
gradient.

The gradient is the derivative with respect to ``log_probs`` (minus the alignments' posterior weights). PyTorch's
CTC kernel returns instead its derivative with respect to the logits under ``log_softmax`` (it adds
``exp(log_probs)``): the two agree on any gradient taken through ``log_softmax``, as CTC is used.

Example:
    >>> import numpy as np
    >>> import chainrule.nn.functional as F
    >>> log_probs = np.log(np.full((2, 1, 2), 0.5))  # 2 steps, 1 sequence, classes {blank, a}
    >>> loss = F.ctc_loss(log_probs, np.array([[1]]), [2], [1], reduction="sum")  # "a": aa, a_, _a
    >>> round(float(loss), 6), round(float(-np.log(3 * 0.25)), 6)
    (0.287682, 0.287682)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.device import is_off_host, of
from ...ops import elementwise as ew
from ...ops._define import on_device_of, raw
from ...ops.reductions import logsumexp, mean
from ...ops.reductions import sum as reduce_sum
from ...ops.shape import concatenate, reshape, stack, take_along_axis
from ...tensor import Tensor
from .losses_margin import _tensor

__all__ = ["ctc_loss"]

_LOG_ZERO = -1e30  # (float32 holds it; a sum of real log-probabilities stays far above half of it)
_REDUCTIONS = ("none", "mean", "sum")


def _host_ints(name: str, what: str, value: Any) -> np.ndarray:
    """Lengths and labels decide the recursion's shape: read on the host (one copy from a device)."""
    a = value._data if isinstance(value, Tensor) else value
    a = of(a).to_host(a) if is_off_host(a) else np.asarray(a)
    if a.dtype.kind not in "iu":
        raise ValueError(f"{name}: {what} must hold integers, got dtype {a.dtype}")
    return a.astype(np.int64)


def _labels(name: str, targets: np.ndarray, lengths: np.ndarray, n: int, unbatched: bool) -> np.ndarray:
    """The targets as (N, longest target), from PyTorch's padded (N, S) or concatenated (sum of lengths,) form."""
    if unbatched:
        if targets.ndim != 1:
            raise ValueError(f"{name}: an unbatched input (T, C) takes targets of shape (S,), got {targets.shape}")
        targets = targets[None]
    longest = int(lengths.max()) if n else 0
    if targets.ndim == 2:
        if targets.shape[0] != n or targets.shape[1] < longest:
            raise ValueError(f"{name}: padded targets of shape {targets.shape} do not fit a batch of {n} with target "
                             f"lengths up to {longest}: they need shape ({n}, S) with S >= {longest}")
        return targets[:, :longest]
    if targets.ndim != 1 or targets.shape[0] < lengths.sum():
        raise ValueError(f"{name}: targets must be padded (N, S) or concatenated (sum(target_lengths),), got shape "
                         f"{targets.shape} for target lengths summing to {int(lengths.sum())}")
    out = np.zeros((n, longest), np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    for i, (s, k) in enumerate(zip(starts, lengths)):
        out[i, :k] = targets[s:s + k]
    return out


def ctc_loss(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Any:
    """The CTC loss (as ``torch.nn.functional.ctc_loss``): ``log_probs`` (T, N, C) log-probabilities (or (T, C)
    unbatched), ``targets`` padded (N, S) or concatenated (sum(target_lengths),) class indices,
    ``input_lengths`` and ``target_lengths`` (N,) each; ``blank`` the blank class; ``reduction`` ``"mean"``
    (each loss divided by its target length, then averaged), ``"sum"`` or ``"none"``; ``zero_infinity``: a
    target no alignment fits gets loss 0 (and a zero gradient) instead of infinity.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> log_probs = F.log_softmax(np.random.default_rng(0).normal(size=(6, 2, 4)), dim=2)
        >>> F.ctc_loss(log_probs, np.array([[1, 2], [3, 3]]), [6, 5], [2, 2], reduction="none").shape
        (2,)
    """
    name = "ctc_loss"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    lp = _tensor(log_probs)
    shape = tuple(lp.shape)
    if len(shape) not in (2, 3):
        raise ValueError(f"{name}: log_probs must be (T, N, C) (or (T, C) unbatched), got shape {shape}")
    dt = np.result_type(raw(lp))
    if dt not in (np.float32, np.float64):
        raise ValueError(f"{name}: log_probs must be float32 or float64 (as PyTorch's CPU kernel), got {dt}")
    unbatched = len(shape) == 2
    if unbatched:
        lp = reshape(lp, (shape[0], 1, shape[1]))
    t_max, n, c = tuple(lp.shape)
    if not 0 <= blank < c:
        raise ValueError(f"{name}: blank must be a class index in [0, {c}), got {blank}")
    il = _host_ints(name, "input_lengths", input_lengths).reshape(-1)
    tl = _host_ints(name, "target_lengths", target_lengths).reshape(-1)
    if il.shape != (n,) or tl.shape != (n,):
        raise ValueError(f"{name}: input_lengths and target_lengths need one entry per sequence ({n}), got "
                         f"{il.size} and {tl.size}")
    if n and (il.min() < 0 or il.max() > t_max):
        raise ValueError(f"{name}: expected input_lengths from 0 to T = {t_max}, got {il.tolist()}")
    if n and tl.min() < 0:
        raise ValueError(f"{name}: target_lengths must not be negative, got {tl.tolist()}")
    labels = _labels(name, _host_ints(name, "targets", targets), tl, n, unbatched)
    real = np.arange(labels.shape[1])[None, :] < tl[:, None]
    if (labels[real] < 0).any() or (labels[real] >= c).any():
        raise ValueError(f"{name}: targets must be class indices in [0, {c}), got "
                         f"{sorted(set(labels[real][(labels[real] < 0) | (labels[real] >= c)].tolist()))}")
    labels = np.where(real, labels, blank)
    width = 2 * labels.shape[1] + 1  # the extended target: blank, l1, blank, l2, ..., blank
    extended = np.full((n, width), blank, np.int64)
    extended[:, 1::2] = labels
    skip = np.zeros((n, width), bool)  # from s - 2: onto a label that differs from the previous one (PyTorch's rule)
    skip[:, 3::2] = labels[:, 1:] != labels[:, :-1]

    emit = take_along_axis(lp, on_device_of(raw(lp), extended[None]), axis=2)  # (T, N, width)
    emit = ew.where(raw(emit) < _LOG_ZERO, dt.type(_LOG_ZERO), emit)  # (a log-probability of -inf)
    start = np.full((n, width), _LOG_ZERO, dt)
    start[:, 0] = 0.0  # before the first step: the state left of blank_0, entered from here onto s = 0 or 1
    alpha: Any = on_device_of(raw(lp), start)
    before = on_device_of(raw(lp), np.full((n, 2), _LOG_ZERO, dt))
    skip_d, log_zero = on_device_of(raw(lp), skip), dt.type(_LOG_ZERO)
    running = on_device_of(raw(lp), np.arange(t_max)[:, None, None] < il[None, :, None])  # (T, N, 1)
    for t in range(int(il.max()) if n else 0):
        shifted = concatenate([before, alpha], axis=1)  # (N, width + 2): alpha moved right by 0, 1, 2 below
        two = ew.where(skip_d, shifted[:, :width], log_zero)
        step = logsumexp(stack([alpha, shifted[:, 1:width + 1], two]), axis=0) + emit[t]
        alpha = ew.where(running[t], step, alpha)  # a sequence that has ended keeps its last step
    ends = np.stack([2 * tl, np.maximum(2 * tl - 1, 0)], axis=1)  # the last blank and the last label
    last = take_along_axis(alpha, on_device_of(raw(lp), ends), axis=1)
    last = ew.where(on_device_of(raw(lp), np.stack([tl >= 0, tl > 0], axis=1)), last, log_zero)
    log_likelihood = logsumexp(last, axis=1)  # (N,)
    losses = -log_likelihood
    impossible = raw(log_likelihood) < _LOG_ZERO / 2
    if zero_infinity:
        losses = ew.where(impossible, dt.type(0), losses)
    else:  # PyTorch's infinite loss, and a gradient that is not finite either (PyTorch's: NaN)
        losses = losses * ew.where(impossible, dt.type(np.inf), dt.type(1))
    if reduction == "mean":
        return mean(losses / on_device_of(raw(lp), np.maximum(tl, 1).astype(dt)))
    if reduction == "sum":
        return reduce_sum(losses)
    return reshape(losses, ()) if unbatched else losses
