"""More of ``torch.nn.functional``'s losses: ``multi_margin_loss``, ``multilabel_margin_loss`` (the multi-class
hinge losses), ``gaussian_nll_loss`` and ``linear_cross_entropy`` (a linear layer's logits' cross-entropy).

Each follows PyTorch's formula, built from chainrule's ops; the hinge is ``max(0, z)`` with derivative 0 at
``z = 0``, as PyTorch's kernels take it.

Example:
    >>> import numpy as np
    >>> import chainrule.nn.functional as F
    >>> round(float(F.multi_margin_loss(np.array([[0.1, 0.2, 0.4, 0.8]]), np.array([3]))), 4)
    0.325
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...core.device import as_array, is_off_host, of
from ...ops import elementwise as ew
from ...ops._define import on_device_of, raw
from ...ops.contraction import matmul
from ...ops.reductions import sum as reduce_sum
from ...ops.shape import reshape, swapaxes
from .extras import _reduced, _values
from .losses import cross_entropy
from .losses_margin import _tensor

__all__ = ["multi_margin_loss", "multilabel_margin_loss", "gaussian_nll_loss", "linear_cross_entropy"]


def _hinge(z: Any) -> Any:
    v = _values(z)
    return ew.where(v > 0, z, np.zeros((), v.dtype))


def _classes(name: str, x: Any, target: Any) -> tuple[Any, np.ndarray, int]:
    shape = tuple(np.shape(raw(x)))
    t = as_array(raw(target))
    if is_off_host(t):  # the class indices pick entries and build masks: one host copy (masks go back as constants)
        t = of(t).to_host(t)
    if len(shape) not in (1, 2) or t.dtype.kind not in "iu":
        raise ValueError(f"{name}: expects input (N, C) or (C,) and integer class targets, got input {shape} and "
                         f"target of dtype {t.dtype}")
    return x, t, shape[-1]


def multi_margin_loss(input: Any, target: Any, p: int = 1, margin: float = 1.0, weight: Any = None,  # noqa: A002
                      reduction: str = "mean") -> Any:
    """Per sample ``sum_{i != y} max(0, margin - x[y] + x[i])**p / C`` (times ``weight[y]``), ``p`` 1 or 2."""
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: only p == 1 and p == 2 are supported, got p={p}")
    x, t, c = _classes("multi_margin_loss", _tensor(input), target)
    rows = x if np.ndim(raw(x)) == 2 else x.reshape(1, c)
    t2 = t.reshape(-1)
    if t2.shape[0] != np.shape(raw(rows))[0]:
        raise ValueError(f"multi_margin_loss: target of shape {t.shape} does not fit input {np.shape(raw(x))}")
    if t2.size and (t2.min() < 0 or t2.max() >= c):
        raise IndexError(f"multi_margin_loss: target {int(t2.max() if t2.max() >= c else t2.min())} is out of "
                         f"bounds for {c} classes")
    other = on_device_of(raw(x), (np.arange(c)[None, :] != t2[:, None]).astype(np.result_type(raw(x))))
    picked = rows[np.arange(t2.shape[0]), on_device_of(raw(x), t2)][:, None]
    z = _hinge(ew.add(ew.subtract(margin, picked), rows))
    if p == 2:
        z = ew.multiply(z, z)
    if weight is not None:
        z = ew.multiply(z, _tensor(weight)[on_device_of(raw(x), t2)][:, None])
    losses = ew.divide(reduce_sum(ew.multiply(z, other), axis=1), c)
    if np.ndim(raw(x)) == 1:
        losses = losses.reshape(())
    return _reduced("multi_margin_loss", losses, reduction)


def multilabel_margin_loss(input: Any, target: Any, reduction: str = "mean") -> Any:  # noqa: A002
    """Per sample ``sum_{j, i} max(0, 1 - (x[y_j] - x[i])) / C`` over the target classes ``y_j`` (listed first in
    ``target``, ended by the first -1) and the classes ``i`` not among them."""
    x, t, c = _classes("multilabel_margin_loss", _tensor(input), target)
    if t.shape != tuple(np.shape(raw(x))):
        raise ValueError(f"multilabel_margin_loss: target of shape {t.shape} must have input's shape "
                         f"{tuple(np.shape(raw(x)))}")
    t2 = t.reshape(-1, c)
    if ((t2 < -1) | (t2 >= c)).any():
        raise IndexError(f"multilabel_margin_loss: targets must lie in [-1, {c - 1}]")
    counts = np.zeros(t2.shape, dtype=np.result_type(raw(x)))  # how often each class is a target (before a -1)
    is_target = np.zeros(t2.shape, dtype=bool)
    for n, row in enumerate(t2):
        for cls in row:
            if cls < 0:
                break
            counts[n, cls] += 1
            is_target[n, cls] = True
    rows = x.reshape(-1, c)
    z = _hinge(ew.add(ew.subtract(1.0, rows[:, :, None]), rows[:, None, :]))  # [n, j, i]: 1 - x_j + x_i
    pairs = on_device_of(raw(x), counts[:, :, None] * ~is_target[:, None, :])
    losses = ew.divide(reduce_sum(ew.multiply(z, pairs), axis=(1, 2)), c)
    if np.ndim(raw(x)) == 1:
        losses = losses.reshape(())
    return _reduced("multilabel_margin_loss", losses, reduction)


def gaussian_nll_loss(input: Any, target: Any, var: Any, full: bool = False, eps: float = 1e-6,  # noqa: A002
                      reduction: str = "mean") -> Any:
    """``(log(max(var, eps)) + (input - target)**2 / max(var, eps)) / 2`` (plus ``log(2 pi) / 2`` with ``full``);
    as in PyTorch the clamp at ``eps`` changes the values only, the gradient flows to ``var`` unclamped.
    ``var`` has input's shape, or one dim fewer, or input's shape with 1 in one dim (PyTorch's rule: one variance
    shared along that dim), or is a number.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> float(F.gaussian_nll_loss(np.array([1.0]), np.array([1.0]), np.array([1.0])))
        0.0
    """
    x, y = _tensor(input), _tensor(target)
    sx = tuple(np.shape(raw(x)))
    v = _tensor(var) if hasattr(var, "shape") else _tensor(np.full((), float(var)))
    sv = tuple(np.shape(raw(v)))
    if sv != sx and sv:
        if sx[:-1] == sv:
            v = v.reshape(*sv, 1)
        elif not (len(sv) == len(sx) and [b for a, b in zip(sx, sv) if a != b] == [1]):
            raise ValueError(f"gaussian_nll_loss: var of shape {sv} does not fit input of shape {sx}: it must have "
                             "input's shape, or one dim fewer, or input's shape with one dim of 1")
    vv = _values(v)
    if (vv < 0).any():
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    v = ew.add(v, np.maximum(vv, eps) - vv)  # the clamp's value, the unclamped gradient (PyTorch's no_grad clamp_)
    d = ew.subtract(x, y)
    losses = ew.multiply(ew.add(ew.log(v), ew.divide(ew.multiply(d, d), v)), 0.5)
    if full:
        losses = ew.add(losses, 0.5 * math.log(2 * math.pi))
    return _reduced("gaussian_nll_loss", losses, reduction)


def linear_cross_entropy(input: Any, linear_weight: Any, target: Any, *, linear_bias: Any = None,  # noqa: A002
                         weight: Any = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Any:
    """PyTorch's ``linear_cross_entropy``: ``cross_entropy`` of the logits ``input @ linear_weight.T + linear_bias``,
    ``linear_weight`` of shape ``(C, *out_features, in_features)`` (a K-dimensional loss beyond ``(C, in)``).
    ``input`` is ``(N, in)`` or ``(in,)``; ``ignore_index`` None is -100 for class indices (and must be None for
    class probabilities). PyTorch's ``options`` choose how its kernel splits the work into chunks, which changes
    memory, not values: chainrule computes the logits at once and takes any ``options``.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> round(float(F.linear_cross_entropy(np.ones((2, 3)), np.zeros((4, 3)), np.array([0, 1]))), 4)
        1.3863
    """
    del options  # (a memory plan of PyTorch's chunked kernel: the values are the same)
    x, w = _tensor(input), _tensor(linear_weight)
    sx, sw = tuple(np.shape(raw(x))), tuple(np.shape(raw(w)))
    if len(sx) not in (1, 2) or len(sw) < 2 or sx[-1] != sw[-1]:
        raise ValueError(f"linear_cross_entropy: expects input (N, in_features) or (in_features,) and linear_weight "
                         f"(C, *out_features, in_features) with the same in_features, got {sx} and {sw}")
    classes, out_features = sw[0], sw[1:-1]
    if linear_bias is not None and tuple(np.shape(raw(linear_bias))) != sw[:-1]:
        raise ValueError(f"linear_cross_entropy: linear_bias must have shape {sw[:-1]}, got "
                         f"{tuple(np.shape(raw(linear_bias)))}")
    if out_features and len(sx) == 1:
        raise ValueError(f"linear_cross_entropy: a K-dimensional loss (linear_weight {sw}) needs a batch: input "
                         f"(N, {sx[-1]}), got {sx}")
    logits_shape = (*sx[:-1], classes, *out_features)
    if tuple(np.shape(raw(target))) == logits_shape and ignore_index is not None:
        raise ValueError("linear_cross_entropy: ignore_index cannot be given when target holds class probabilities")
    flat = int(np.prod(sw[:-1]))
    logits = matmul(x, swapaxes(reshape(w, (flat, sw[-1])), 0, 1))
    if linear_bias is not None:
        logits = ew.add(logits, reshape(_tensor(linear_bias), (flat,)))
    return cross_entropy(reshape(logits, logits_shape), target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index, label_smoothing=label_smoothing)
