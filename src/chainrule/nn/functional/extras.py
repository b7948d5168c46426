"""More of ``torch.nn.functional``: activations (``leaky_relu``, ``elu``, ``hardtanh``, ``mish``, ...),
losses (``l1_loss``, ``smooth_l1_loss``, ``huber_loss``, ``binary_cross_entropy``, ``kl_div``) and
``normalize``, ``cosine_similarity``, ``one_hot``, ``pad``.

Each is a plain function built from chainrule's ops (importable from ``chainrule.nn.functional``), so it
has every derivative of them. PyTorch's derivative at a kink is kept by choosing which side a branch
point belongs to (``hardtanh``'s derivative is 0 at its bounds, ``hardswish``'s 0 at -3 and 1 at 3,
``elu``'s second derivative 0 at 0). Branches are selected with masks of the values and computed on safe
inputs, so the branch not taken never sends ``0 * inf = nan`` back.

Example:
    >>> import numpy as np
    >>> import chainrule.nn.functional as F
    >>> F.leaky_relu(np.array([-2.0, 3.0]), 0.1)
    array([-0.2,  3. ])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autodiff.batch_levels import is_batched, is_value
from ...core.device import as_array, xp_of
from ...ops import elementwise as ew
from ...ops._define import raw
from ...ops.reductions import mean
from ...ops.reductions import sum as reduce_sum
from ...ops.shape import broadcast_to
from ...tensor import Tensor
from .losses import broadcast_target, float_target
from .losses_binary import bce_terms

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _values(x: Any) -> Any:
    """The values, to choose branches by; inside ``vmap`` the batched value itself (its comparisons batch)."""
    v = raw(x)
    return v if is_batched(v) else as_array(v)


def _floating(name: str, x: Any) -> Any:
    if not isinstance(x, Tensor) and _values(x).dtype.kind not in "fc":
        return as_array(x, dtype=np.float64)
    return x


# -- activations --------------------------------------------------------------------------------------
def leaky_relu(x: Any, negative_slope: float = 0.01) -> Any:
    """``x`` where ``x > 0``, else ``negative_slope * x`` (derivative ``negative_slope`` at 0, as PyTorch)."""
    x = _floating("leaky_relu", x)
    return ew.where(_values(x) > 0, x, ew.multiply(x, negative_slope))


def _expm1_below(x: Any, scale: float = 1.0) -> Any:
    # expm1(x / scale) on the non-positive side only (0 elsewhere, chosen by the values: no tie at 0 halves the
    # gradient): the positive side never overflows into the gradient as 0 * inf
    v = _values(x)
    return ew.expm1(ew.multiply(ew.where(v <= 0, x, np.zeros((), v.dtype)), 1.0 / scale))


def _joined(x: Any, below: Any, slope_at_0: float) -> Any:
    """``x`` above 0, ``below`` under it; at 0 itself the line of slope ``slope_at_0`` (PyTorch's derivatives
    there: the left one first, 0 second)."""
    v = _values(x)  # a NaN is taken as above 0: NaN, with derivative 1 (PyTorch's)
    return ew.where(v < 0, below, ew.where(v == 0, ew.multiply(x, slope_at_0), x))


def elu(x: Any, alpha: float = 1.0) -> Any:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    x = _floating("elu", x)
    return _joined(x, ew.multiply(_expm1_below(x), alpha), alpha)


def selu(x: Any) -> Any:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    return ew.multiply(elu(x, _SELU_ALPHA), _SELU_SCALE)


def celu(x: Any, alpha: float = 1.0) -> Any:
    """``x`` where ``x > 0``, else ``alpha * (exp(x / alpha) - 1)``."""
    x = _floating("celu", x)
    return _joined(x, ew.multiply(_expm1_below(x, alpha), alpha), 1.0)


def hardtanh(x: Any, min_val: float = -1.0, max_val: float = 1.0) -> Any:
    """``x`` clipped to ``[min_val, max_val]``; derivative 1 strictly inside, 0 at the bounds, NaN stays NaN with
    derivative 1 (as PyTorch)."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val {min_val} is larger than max_val {max_val}")
    x = _floating("hardtanh", x)
    v = _values(x)
    bound = ew.where(v >= max_val, np.full((), max_val, v.dtype), np.full((), min_val, v.dtype))
    return ew.where((v <= min_val) | (v >= max_val), bound, x)


def relu6(x: Any) -> Any:
    """``hardtanh(x, 0, 6)``."""
    return hardtanh(x, 0.0, 6.0)


def threshold(x: Any, threshold: float, value: float) -> Any:
    """PyTorch's ``F.threshold``: ``x`` where ``x > threshold``, else ``value`` (derivative 1 above, 0 at and
    below); nn.functional's adds PyTorch's ``inplace`` flag (nn/functional/inplace_flags.py)."""
    x = _floating("threshold", x)
    v = _values(x)
    return ew.where(v <= threshold, np.full((), value, v.dtype), x)  # (NaN stays NaN, as PyTorch's)


def softsign(x: Any) -> Any:
    """``x / (1 + |x|)``."""
    return ew.divide(x, ew.add(ew.abs(x), 1.0))


def logsigmoid(x: Any) -> Any:
    """``log(sigmoid(x)) = -log(1 + exp(-x))``, stable for large ``|x|``."""
    return ew.negative(ew.logaddexp(ew.negative(x), 0.0))


def mish(x: Any) -> Any:
    """``x * tanh(log(1 + exp(x)))``."""
    return ew.multiply(x, ew.tanh(ew.logaddexp(x, 0.0)))


def hardswish(x: Any) -> Any:
    """0 up to -3, ``x * (x + 3) / 6`` on (-3, 3), ``x`` from 3 (derivative 0 at -3 and 1 at 3, NaN stays NaN with
    derivative 1, as PyTorch)."""
    x = _floating("hardswish", x)
    v = _values(x)
    inside = (v > -3) & (v < 3)
    xm = ew.where(inside, x, np.zeros((), v.dtype))  # the middle piece never sees NaN: no 0 * NaN in its gradient
    middle = ew.multiply(ew.multiply(xm, ew.add(xm, 3.0)), 1.0 / 6.0)
    return ew.where(v <= -3, np.zeros((), v.dtype), ew.where(inside, middle, x))


def hardsigmoid(x: Any) -> Any:
    """``x / 6 + 1/2`` clipped to [0, 1]; derivative 1/6 strictly inside (-3, 3), 0 elsewhere (as PyTorch)."""
    x = _floating("hardsigmoid", x)
    v = _values(x)
    outside = np.where(v >= 3, 1.0, np.where(v <= -3, 0.0, v)).astype(v.dtype)  # NaN stays NaN (no gradient)
    return ew.where((v > -3) & (v < 3), ew.add(ew.multiply(x, 1.0 / 6.0), 0.5), outside)


def glu(x: Any, dim: int = -1) -> Any:
    """Gated linear unit: the first half of ``dim`` times the sigmoid of the second half."""
    n = np.shape(raw(x))[dim]
    if n % 2:
        raise ValueError(f"glu: dim {dim} has odd size {n}; it must split into two halves")
    index = [slice(None)] * np.ndim(raw(x))
    first, second = list(index), list(index)
    first[dim], second[dim] = slice(0, n // 2), slice(n // 2, n)
    x = x if is_value(x) else Tensor(as_array(x))
    return ew.multiply(x[tuple(first)], ew.sigmoid(x[tuple(second)]))


# -- losses ---------------------------------------------------------------------------------------------
_REDUCTIONS = ("mean", "sum", "none")


def _reduced(name: str, losses: Any, reduction: str) -> Any:
    if reduction == "mean":
        return mean(losses)
    if reduction == "sum":
        return reduce_sum(losses)
    if reduction == "none":
        return losses
    raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def _difference(name: str, x: Any, y: Any) -> Any:
    broadcast_target(name, x, y, stacklevel=5)  # (the user's call, above the loss and this helper)
    return ew.subtract(x, float_target(x, y))


def l1_loss(input: Any, target: Any, reduction: str = "mean") -> Any:  # noqa: A002
    """Mean (or sum) of ``|input - target|``."""
    return _reduced("l1_loss", ew.abs(_difference("l1_loss", input, target)), reduction)


def smooth_l1_loss(input: Any, target: Any, reduction: str = "mean", beta: float = 1.0) -> Any:  # noqa: A002
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - beta / 2`` (``d = input - target``)."""
    d = _difference("smooth_l1_loss", input, target)
    if beta == 0:
        return _reduced("smooth_l1_loss", ew.abs(d), reduction)
    small = np.abs(_values(d)) < beta
    inside = ew.multiply(ew.multiply(d, d), 0.5 / beta)
    return _reduced("smooth_l1_loss", ew.where(small, inside, ew.subtract(ew.abs(d), 0.5 * beta)), reduction)


def huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0) -> Any:  # noqa: A002
    """``0.5 d**2`` where ``|d| < delta``, else ``delta * (|d| - delta / 2)`` (``d = input - target``)."""
    d = _difference("huber_loss", input, target)
    small = np.abs(_values(d)) < delta
    outside = ew.multiply(ew.subtract(ew.abs(d), 0.5 * delta), delta)
    return _reduced("huber_loss", ew.where(small, ew.multiply(ew.multiply(d, d), 0.5), outside), reduction)


def binary_cross_entropy(input: Any, target: Any, weight: Any = None, reduction: str = "mean") -> Any:  # noqa: A002
    """``-(y log p + (1 - y) log(1 - p))`` of probabilities ``p`` in [0, 1]; each log is clamped at -100, as
    PyTorch's (a probability of exactly 0 or 1 gives a finite loss). The derivatives are PyTorch's formulas,
    to second order (``nn/functional/losses_binary.py``): ``(p - y) / max(p (1 - p), 1e-12)``, and a second derivative
    that departs from the exact one where ``p`` or ``1 - p`` is tiny. For logits use
    ``binary_cross_entropy_with_logits``."""
    if np.shape(raw(input)) != np.shape(raw(target)):  # (PyTorch refuses to broadcast these)
        raise ValueError(f"binary_cross_entropy: input of shape {np.shape(raw(input))} and target of shape "
                         f"{np.shape(raw(target))} must have the same shape")
    v = _values(input)
    if not is_batched(v) and v.size and (np.nanmin(v) < 0 or np.nanmax(v) > 1):
        raise ValueError("binary_cross_entropy: input must hold probabilities in [0, 1]; for logits use "
                         "binary_cross_entropy_with_logits")
    losses = bce_terms(input, target)
    if weight is not None:
        losses = ew.multiply(losses, weight)
    return _reduced("binary_cross_entropy", losses, reduction)


def kl_div(input: Any, target: Any, reduction: str = "mean", log_target: bool = False) -> Any:  # noqa: A002
    """PyTorch's ``kl_div``: ``input`` holds log-probabilities; pointwise ``target * (log target - input)``
    (0 where the target is 0; NaN where it is negative, as PyTorch's), or ``exp(t) * (t - input)`` with
    ``log_target``. ``reduction="batchmean"`` divides the sum by the batch size (the true KL divergence); "mean"
    averages over every entry."""
    if log_target:
        pointwise = ew.multiply(ew.exp(target), ew.subtract(target, input))
    else:
        t = _values(target)
        zero = t == 0  # PyTorch's xlogy(t, t): 0 log 0 is 0; a negative or NaN target gives NaN, as there
        safe_log = ew.log(ew.where(zero, np.ones((), t.dtype), target))
        pointwise = ew.where(zero, ew.multiply(ew.negative(target), input),
                             ew.multiply(target, ew.subtract(safe_log, input)))
    if reduction == "batchmean":
        n = np.shape(raw(input))[0] if np.ndim(raw(input)) else 1
        return ew.divide(reduce_sum(pointwise), float(n))
    return _reduced("kl_div", pointwise, reduction)


# -- padding ------------------------------------------------------------------------------------------
_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input: Any, pad: Any, mode: str = "constant", value: float | None = None) -> Any:  # noqa: A002
    """PyTorch's ``pad``: ``pad`` lists (before, after) pairs starting from the LAST dimension, e.g.
    ``(1, 2)`` pads the last dim by 1 and 2, ``(1, 1, 0, 3)`` also the one before it. ``mode`` 'constant'
    (with ``value``), 'reflect', 'replicate' or 'circular'; a negative size crops, as PyTorch (after padding; in
    circular mode before, so that what is left wraps)."""
    from ...ops.arrays import pad as numpy_pad

    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be one of {sorted(_PAD_MODES)}, got {mode!r}")
    sizes = [int(n) for n in pad]
    nd = np.ndim(raw(input))
    if len(sizes) % 2 or len(sizes) // 2 > nd:
        raise ValueError(f"pad: needs (before, after) pairs for at most {nd} dims, got {tuple(sizes)}")
    widths, crop = [(0, 0)] * nd, [slice(None)] * nd
    shape = np.shape(raw(input))
    for k in range(len(sizes) // 2):
        before, after = sizes[2 * k], sizes[2 * k + 1]
        axis = nd - 1 - k
        widths[axis] = (max(before, 0), max(after, 0))
        if before < 0 or after < 0:  # PyTorch crops there
            size = shape[axis] + max(before, 0) + max(after, 0)
            if size + min(before, 0) + min(after, 0) < 0:
                raise ValueError(f"pad: padding {tuple(sizes)} crops dim {axis} of size {shape[axis]} below 0")
            crop[axis] = slice(-min(before, 0), size + min(after, 0))
    x = input if is_value(input) else Tensor(as_array(input))
    if mode == "constant":
        out = numpy_pad(x, tuple(widths), mode="constant", constant_values=0.0 if value is None else value)
        return out[tuple(crop)] if any(c != slice(None) for c in crop) else out
    if value is not None:
        raise ValueError(f"pad: value is only for mode='constant', got mode={mode!r}")
    cropped = any(c != slice(None) for c in crop)
    wraps = mode == "circular" and cropped
    if wraps:  # PyTorch's circular mode crops first and wraps what is left; reflect and replicate read the edge
        x = x[tuple(slice(c.start, None if c.stop is None else c.stop - w[0] - w[1]) for c, w in zip(crop, widths))]
    for axis, ((before, after), n) in enumerate(zip(widths, np.shape(raw(x)))):
        limit = {"reflect": n - 1, "circular": n}.get(mode, np.inf if n else 0)  # beyond: NumPy would reflect again
        if (before or after) and max(before, after) > limit:
            raise ValueError(f"pad: mode={mode!r} pads dim {axis} by {(before, after)}, but it has {n} entries"
                             f"{' after cropping' if wraps else ''}; the padding can be at most {limit} there "
                             "(PyTorch's rule)")
    out = numpy_pad(x, tuple(widths), mode=_PAD_MODES[mode])
    return out[tuple(crop)] if cropped and not wraps else out


# -- vectors ------------------------------------------------------------------------------------------
def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Any:  # noqa: A002
    """``input / max(||input||_p, eps)`` along ``dim``."""
    x = input if is_value(input) else Tensor(as_array(input, dtype=float))
    norm = x.norm(p=p, dim=dim, keepdim=True)
    return ew.divide(x, ew.maximum(norm, eps))


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Any:
    """``sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps))`` along ``dim`` (inputs broadcast), as PyTorch.

    As in PyTorch, the clamp at ``eps`` changes the norms' values only: the gradient flows through the
    unclamped norms (whose gradient at a zero vector is 0), so first and second derivatives match
    PyTorch's also at a zero vector."""
    a = x1 if is_value(x1) else Tensor(as_array(x1, dtype=float))
    b = x2 if is_value(x2) else Tensor(as_array(x2, dtype=float))
    if not is_batched(raw(a)) and not is_batched(raw(b)):
        # the norms are taken over the broadcast inputs, as PyTorch does: (3, 1) against (4,) counts each entry 4 times
        shape = np.broadcast_shapes(np.shape(raw(a)), np.shape(raw(b)))
        a, b = broadcast_to(a, shape), broadcast_to(b, shape)
    unit_a = ew.divide(a, _clamped_below(a.norm(dim=dim, keepdim=True), eps))
    unit_b = ew.divide(b, _clamped_below(b.norm(dim=dim, keepdim=True), eps))
    return reduce_sum(ew.multiply(unit_a, unit_b), axis=dim)


def _clamped_below(norm: Any, eps: float) -> Any:
    """``norm`` with its value raised to ``eps`` where smaller, its derivative left that of ``norm``."""
    value = _values(norm)
    return ew.add(norm, np.maximum(value, eps) - value)


def one_hot(tensor: Any, num_classes: int = -1) -> Any:
    """Integer class indices to one-hot int64 rows (``num_classes=-1``: one more than the largest index)."""
    idx = as_array(raw(tensor))
    if idx.dtype.kind not in "iu":
        raise TypeError(f"one_hot: expected integer class indices, got dtype {idx.dtype}")
    if idx.size and idx.min() < 0:
        raise ValueError("one_hot: class indices must be non-negative")
    n = int(idx.max()) + 1 if num_classes == -1 else int(num_classes)
    if idx.size and idx.max() >= n:
        raise ValueError(f"one_hot: class {int(idx.max())} is out of range for num_classes={n}")
    out = (idx[..., None] == xp_of(idx).arange(n)).astype(np.int64)  # where the indices are
    return Tensor._wrap(out) if isinstance(tensor, Tensor) else out


__all__ = ["leaky_relu", "elu", "selu", "celu", "hardtanh", "relu6", "softsign", "logsigmoid", "mish", "hardswish",
           "hardsigmoid", "glu", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "kl_div",
           "normalize", "cosine_similarity", "one_hot", "pad", "threshold"]
