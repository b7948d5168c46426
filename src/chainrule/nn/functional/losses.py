"""Class losses of ``chainrule.nn.functional``: ``cross_entropy`` (fused softmax + negative
log-likelihood) and ``nll_loss``, as ``torch.nn.functional``'s (the entrywise losses are in
``functional_entry_losses``; the fused cross-entropy primitive's rules in ``cross_entropy_rule``).

Example:
    >>> import numpy as np
    >>> import chainrule.nn.functional as F
    >>> round(float(F.cross_entropy(np.array([[0.0, 0.0]]), np.array([1]))), 4)
    0.6931
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...autodiff.batch_levels import is_batched
from ...core.device import (
    OFF_HOST,
    as_array,
    check_indices,
    check_later,
    indices_outside,
    kernel,
    xp_of,
)
from ...core.errors import ChainruleWarning
from ...ops._define import raw, where_is
from ...ops._saved import Saved
from ...ops.elementwise import multiply
from ...ops.reductions import log_softmax, mean
from ...ops.reductions import sum as reduce_sum
from ...ops.shape import getitem, moveaxis, reshape
from ...tensor import Tensor
from .cross_entropy_rule import _cross_entropy

__all__ = ["cross_entropy", "nll_loss"]

_REDUCTIONS = ("mean", "sum", "none")




def float_target(input: Any, target: Any) -> Any:  # noqa: A002  (PyTorch's name)
    """An integer or boolean target Tensor as the floating input's dtype: PyTorch's regression losses answer in the
    input's dtype (``mse_loss(float32, int64 labels)`` is float32), where NumPy's promotion would give float64."""
    if isinstance(target, Tensor) and target.dtype.kind in "biu":
        dt = np.result_type(raw(input))
        if dt.kind in "fc":
            return Tensor._wrap(target._data.astype(dt))  # an integer tensor carries no gradient
    return target


def broadcast_target(name: str, input: Any, target: Any, stacklevel: int = 3) -> None:  # noqa: A002
    """A regression loss's shapes, checked as PyTorch checks them: a target of another shape that broadcasts with
    the input is used broadcast, with PyTorch's warning (a column of predictions against a row of targets gives a
    matrix of losses: usually a bug); one that does not broadcast raises, naming both shapes."""
    si, st = np.shape(where_is(input)), np.shape(where_is(target))  # (shapes only: no value read)
    if si == st:
        return
    try:
        np.broadcast_shapes(si, st)
    except ValueError:
        raise ValueError(f"{name}: input of shape {si} and target of shape {st} do not broadcast; give them the "
                         "same shape") from None
    warnings.warn(f"{name}: using a target size {st} that is different to the input size {si}; this will likely "
                  "lead to incorrect results due to broadcasting: give them the same shape (e.g. "
                  "target.reshape(-1, 1) or input.squeeze(-1))", ChainruleWarning, stacklevel=stacklevel)


def _check_reduction(name: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def _reduce(name: str, losses: Any, reduction: str) -> Any:
    if reduction == "mean":
        return mean(losses)
    if reduction == "sum":
        return losses.sum() if isinstance(losses, Tensor) else np.sum(losses)
    return losses


def cross_entropy(
    logits: Any,
    target: Any,
    weight: Any = None,
    ignore_index: int | None = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Any:
    """Cross-entropy between ``softmax(logits)`` and the targets, as ``torch.nn.functional.cross_entropy``.

    ``logits``: shape (N, C), (C,) or (N, C, d1, ...) (classes on axis 1). ``target``: integer
    class indices of shape (N,) / () / (N, d1, ...), or class probabilities of the logits'
    shape. Rows whose target is ``ignore_index`` count for nothing (and are left out of the
    mean); ``ignore_index=None`` (chainrule's) ignores no row, which spares a device a wait for the answer to
    "are any rows ignored?" (a sync on a GPU). ``label_smoothing`` mixes the target with the uniform
    distribution. ``weight`` (C,) rescales each class; with class indices the mean divides by the summed weights of the
    targets, as PyTorch's. Stable for large logits; one fused node whose gradient is
    ``softmax - target`` (with ``weight``: log_softmax and a weighted sum).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> round(float(F.cross_entropy(np.array([[1000.0, 0.0]]), np.array([1]))), 1)
        1000.0
    """
    _check_reduction("cross_entropy", reduction)
    if not 0.0 <= float(label_smoothing) <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    if _batched(logits, target, weight) or (isinstance(target, Tensor) and target._requires_grad):
        if isinstance(target, Tensor) and target.dtype.kind == "f" and target.shape != np.shape(where_is(logits)):
            raise ValueError(f"cross_entropy: probability targets (float) must have the logits' shape "
                             f"{np.shape(where_is(logits))}, got {target.shape}")
        return _composed_cross_entropy(logits, target, weight, ignore_index, float(label_smoothing), reduction)
    if not isinstance(logits, Tensor):
        logits = as_array(logits)
    xr = logits._data if isinstance(logits, Tensor) else logits
    sx = xr.shape
    t = target._data if isinstance(target, Tensor) else as_array(target)
    if xr.dtype.kind != "f":
        raise TypeError(f"cross_entropy: logits must be floating point, got dtype {xr.dtype}")
    if len(sx) == 0:
        raise ValueError("cross_entropy: logits must have a class axis, got a 0-d value")
    c = sx[0] if len(sx) == 1 else sx[1]
    soft = t.dtype.kind == "f"
    in_range = True  # every class index lies in [0, c)
    if soft:
        if t.shape != sx:
            raise ValueError(
                f"cross_entropy: probability targets (float) must have the logits' shape {sx}, got {t.shape}; "
                "for class indices pass an integer array"
            )
    else:
        if t.dtype.kind not in "iu":
            raise TypeError(
                f"cross_entropy: target must hold integer class indices (or float probabilities), got {t.dtype}"
            )
        want = () if len(sx) == 1 else (sx[0], *sx[2:])
        if t.shape != want:
            raise ValueError(
                f"cross_entropy: logits of shape {sx} need a target of shape {want} (one class index per "
                f"{'input' if not want else 'row'}), got target of shape {t.shape}"
            )
        if ignore_index is None:  # no row is ignored: nothing to look for, and a device's check need not wait
            check_indices(t, c, lambda: IndexError(
                f"cross_entropy: target holds class {int(t[(t < 0) | (t >= c)].flat[0])}, outside [0, {c}) for "
                f"logits with {c} classes (ignore_index=None: no row is ignored)"))
        elif t.__class__ in OFF_HOST:  # a device's check is answered with the next read; every row is looked at
            in_range = False
            outside = kernel(t, "classes_outside", lambda xp, special: lambda i, ignored, size: xp.sum(
                (i != ignored) & ((i < 0) | (i >= size))))
            check_later(outside(t, int(ignore_index), c), lambda: IndexError(
                f"cross_entropy: target holds class {int(t[(t != ignore_index) & ((t < 0) | (t >= c))].flat[0])}, "
                f"outside [0, {c}) for logits with {c} classes (ignore_index={ignore_index})"))
        elif indices_outside(t, c):
            in_range = False
            bad = (t != ignore_index) & ((t < 0) | (t >= c))
            if bad.any():
                raise IndexError(
                    f"cross_entropy: target holds class {int(t[bad].flat[0])}, outside [0, {c}) for logits with "
                    f"{c} classes (ignore_index={ignore_index})"
                )
    x = logits
    if len(sx) == 1:
        x, t2 = reshape(x, (1, c)), t.reshape((1, c) if soft else (1,))
    elif len(sx) > 2:
        x = reshape(moveaxis(x, 1, -1), (-1, c))
        t2 = np.moveaxis(t, 1, -1).reshape(-1, c) if soft else t.reshape(-1)
    else:
        t2 = t
    if weight is not None:
        out = _weighted_cross_entropy(x, t2, _class_weights("cross_entropy", weight, c, xr.dtype), ignore_index,
                                      float(label_smoothing), reduction)
        if reduction == "none":
            out = reshape(out, () if len(sx) == 1 else (sx[0], *sx[2:]))
        return out
    # None: no target can be the ignored index, so no row is looked at for it
    ignored = None if ignore_index is None or in_range and not 0 <= ignore_index < c else int(ignore_index)
    saved = Saved(x)
    saved.values["classes_checked"] = True  # (a second check is a second sync with a GPU; a replay's is fresh)
    out = _cross_entropy(x, t2, ignore_index=ignored, smoothing=float(label_smoothing), reduction=reduction,
                         saved=saved)
    if reduction == "none":
        out = reshape(out, () if len(sx) == 1 else (sx[0], *sx[2:]))
    return out


def _batched(*values: Any) -> bool:
    """Whether any value is one example of a batch under ``vmap`` (its values cannot be read)."""
    return any(is_batched(v) for v in values)


def _composed_cross_entropy(x: Any, target: Any, weight: Any, ignore_index: int, smoothing: float,
                            reduction: str) -> Any:
    """``cross_entropy`` from ops that batch and differentiate in every argument (log_softmax, take_along_axis,
    where): inside ``vmap`` (the fused node reads the target's values, which differ between examples), and for
    probability targets that require a gradient (PyTorch's: ``-log_softmax(x)`` per class)."""
    axis = 0 if x.ndim == 1 else 1
    c = x.shape[axis]
    logp = log_softmax(x, axis=axis)
    w = None if weight is None else Tensor(as_array(raw(weight), dtype=x.dtype))
    w_shape = (c,) + (1,) * (x.ndim - axis - 1)
    if np.dtype(target.dtype).kind == "f":  # class probabilities
        q = target * (1.0 - smoothing) + smoothing / c if smoothing else target
        per_class = logp * q if w is None else logp * q * w.reshape(w_shape)
        return _reduce("cross_entropy", -per_class.sum(axis=axis), reduction)
    valid = target != ignore_index
    t = np.where(valid, target, 0)
    picked = -np.take_along_axis(logp, np.expand_dims(t, axis), axis=axis).squeeze(axis)
    row_w = valid * (1.0 if w is None else w[t])
    losses = picked * row_w
    if smoothing:
        spread = -(logp if w is None else logp * w.reshape(w_shape)).sum(axis=axis) * valid
        losses = losses * (1.0 - smoothing) + spread * (smoothing / c)
    if reduction == "none":
        return losses
    total = losses.sum()
    if reduction != "mean":
        return total
    kept = row_w.sum()
    empty = valid.sum() == 0  # every row ignored: NaN with a zero gradient, as PyTorch (see _mean_of)
    return total / np.where(empty, 1.0, kept) + np.where(empty, np.nan, 0.0)


def _class_weights(name: str, weight: Any, c: int, dtype: Any) -> np.ndarray:
    if isinstance(weight, Tensor) and weight._requires_grad:
        raise TypeError(f"{name}: weight must be a constant (no gradient flows into it); pass weight.detach()")
    w = as_array(raw(weight), dtype=dtype)
    if w.shape != (c,):
        raise ValueError(f"{name}: weight must have one entry per class, shape ({c},), got {w.shape}")
    return w


def _weighted_cross_entropy(x: Any, target: np.ndarray, w: np.ndarray, ignore_index: int, smoothing: float,
                            reduction: str) -> Any:
    """PyTorch's class-weighted cross-entropy of (N, C) logits, from log_softmax (so every order is exact)."""
    n, c = np.shape(raw(x))
    logp = log_softmax(x, axis=1)
    if target.dtype.kind == "f":  # probabilities: -sum_c w_c q_c log p_c per row; the mean is over rows
        q = target * (1.0 - smoothing) + smoothing / c if smoothing else target
        losses = -reduce_sum(multiply(logp, (q * w).astype(w.dtype)), axis=1)
        return _reduce("cross_entropy", losses, reduction)
    valid = target != ignore_index
    t = np.where(valid, target, 0)
    row_w = np.where(valid, w[t], 0.0).astype(w.dtype)
    xp = xp_of(w)  # where the weights are (the host or a device)
    picked = xp.zeros((n, c), dtype=w.dtype)
    picked[xp.arange(n), t] = row_w
    losses = -reduce_sum(multiply(logp, picked), axis=1)  # w[t] * nll, 0 on ignored rows
    if smoothing:
        uniform = -reduce_sum(multiply(logp, np.where(valid[:, None], w, 0.0).astype(w.dtype)), axis=1)
        losses = losses * (1.0 - smoothing) + uniform * (smoothing / c)
    if reduction == "none":
        return losses
    total = reduce_sum(losses)
    return _mean_of(total, row_w.sum(), valid.any()) if reduction == "mean" else total


def _mean_of(total: Any, weights: Any, any_kept: bool) -> Any:
    """``total / weights``, the mean over the rows kept. With every row ignored PyTorch's value is 0/0 = NaN but
    its gradient 0 (its backward visits no row), so the NaN is added as a constant."""
    return total / weights if any_kept else total * 0.0 + np.nan


def nll_loss(log_probs: Any, target: Any, weight: Any = None, ignore_index: int = -100,
             reduction: str = "mean") -> Any:
    """Negative log-likelihood of integer targets given log-probabilities of shape (N, C) (or PyTorch's
    (C,) with a 0-d target, and (N, C, d1, ...) with targets (N, d1, ...)).

    ``weight`` (C,) rescales each class; the mean then divides by the summed weights of the targets.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> bool(float(F.nll_loss(np.log(np.array([[0.5, 0.5]])), np.array([0]))) == -np.log(0.5))
        True
    """
    _check_reduction("nll_loss", reduction)
    s = np.shape(raw(log_probs))
    t = as_array(raw(target))
    if (len(s) == 1 and t.ndim == 0) or (len(s) > 2 and t.shape == s[:1] + s[2:]):
        # one example, or a class dim 1 with more dims after it: the rows of (N * d1 * ..., C), and back
        rows = reshape(log_probs, (1, s[0])) if len(s) == 1 else reshape(moveaxis(log_probs, 1, -1), (-1, s[1]))
        out = nll_loss(rows, t.reshape(-1), weight, ignore_index, reduction)
        return reshape(out, t.shape) if reduction == "none" else out
    if len(s) != 2 or t.shape != (s[0],) or t.dtype.kind not in "iu":
        raise ValueError(
            f"nll_loss: expected log_probs (N, C) and integer target (N,), got {s} and {t.shape} {t.dtype}"
        )
    valid = t != ignore_index
    if ((t < 0) | (t >= s[1]))[valid].any():
        raise IndexError(f"nll_loss: target outside [0, {s[1]}) (ignore_index={ignore_index})")
    dt = np.result_type(raw(log_probs))
    weights = valid.astype(dt)
    if weight is not None:
        weights = weights * _class_weights("nll_loss", weight, s[1], dt)[np.where(valid, t, 0)]
    picked = -getitem(log_probs, (np.arange(s[0]), np.where(valid, t, 0))) * weights
    if reduction == "none":
        return picked
    total = picked.sum()
    return total if reduction == "sum" else _mean_of(total, weights.sum(), valid.any())
