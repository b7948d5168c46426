"""Loss layers: ``MSELoss``, ``CrossEntropyLoss``, ``BCEWithLogitsLoss`` (and the functions).

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    >>> round(float(loss_fn(np.array([[2.0, 0.0]]), np.array([0]))), 4)
    0.2269
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .functional import binary_cross_entropy_with_logits, cross_entropy, mse_loss, nll_loss
from .functional import extras as FX
from .functional.losses_multiclass import linear_cross_entropy
from .layers import Linear
from .module import Module

__all__ = [
    "mse_loss", "cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
    "MSELoss", "CrossEntropyLoss", "BCEWithLogitsLoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "BCELoss",
    "NLLLoss", "LinearCrossEntropyLoss",
]


def _legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """PyTorch's reading of the deprecated ``size_average`` and ``reduce``: either given overrides ``reduction``."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else ("mean" if size_average else "sum")


def _register_weights(module: Module, **weights: Any) -> None:
    """PyTorch's class weights are buffers (in ``state_dict``, moved by ``to``); one that requires grad stays the
    Tensor itself, so that its gradient is kept."""
    for name, w in weights.items():
        if isinstance(w, str):  # PyTorch's first argument is weight: a reduction there is a misplaced name
            raise TypeError(f"{type(module).__name__}: the first argument is {name} (as PyTorch's), got {w!r}; "
                            f"pass reduction={w!r}")
        if getattr(w, "requires_grad", False):
            setattr(module, name, w)
        else:
            module.register_buffer(name, w)


class CrossEntropyLoss(Module):
    """Softmax cross-entropy of logits against class indices (or probabilities); PyTorch's arguments, in its
    order (``size_average``/``reduce`` are the deprecated spellings of ``reduction``)."""

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__()
        _register_weights(self, weight=weight)
        self.ignore_index = ignore_index
        self.reduction = _legacy_reduction(size_average, reduce, reduction)
        self.label_smoothing = label_smoothing

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return cross_entropy(
            input, target, ignore_index=self.ignore_index, reduction=self.reduction,
            label_smoothing=self.label_smoothing, weight=self.weight,
        )

    def extra_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, reduction={self.reduction!r}, label_smoothing={self.label_smoothing}"


class NLLLoss(Module):
    """Negative log-likelihood of log-probabilities (``F.nll_loss``; after ``LogSoftmax``) against class indices."""

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        _register_weights(self, weight=weight)
        self.ignore_index, self.reduction = ignore_index, _legacy_reduction(size_average, reduce, reduction)

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                        reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, reduction={self.reduction!r}"


class BCEWithLogitsLoss(Module):
    """Binary cross-entropy computed stably from logits."""

    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 pos_weight: Any = None) -> None:
        super().__init__()
        _register_weights(self, weight=weight, pos_weight=pos_weight)
        self.reduction = _legacy_reduction(size_average, reduce, reduction)

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return binary_cross_entropy_with_logits(input, target, weight=self.weight, reduction=self.reduction,
                                                pos_weight=self.pos_weight)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class _ReducedLoss(Module):
    """A loss layer ``fn(input, target, reduction=..., **options)`` with PyTorch's name and arguments, in its order:
    ``size_average``, ``reduce`` (deprecated spellings of ``reduction``; not in ``HuberLoss``), ``reduction``, then
    the options."""

    fn: Any = None
    options: dict[str, Any] = {}
    legacy = True

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__()
        name = type(self).__name__
        names = (["size_average", "reduce"] if self.legacy else []) + ["reduction", *self.options]
        if len(args) > len(names):
            raise TypeError(f"{name}: takes at most {len(names)} arguments ({', '.join(names)}), got {len(args)}")
        unknown = set(kw) - set(names)
        if unknown:
            raise TypeError(f"{name}: unexpected arguments {sorted(unknown)}; it takes {names}")
        values = {"size_average": None, "reduce": None, "reduction": "mean", **self.options,
                  **dict(zip(names, args, strict=False)), **kw}
        if isinstance(values["size_average"], str):  # a reduction where PyTorch has size_average: a misplaced name
            raise TypeError(f"{name}: the first argument is size_average (as PyTorch's), got "
                            f"{values['size_average']!r}; pass reduction={values['size_average']!r}")
        self.reduction = _legacy_reduction(values.pop("size_average"), values.pop("reduce"), values.pop("reduction"))
        self.settings = values

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return type(self).fn(input, target, reduction=self.reduction, **self.settings)

    def extra_repr(self) -> str:
        return ", ".join([f"reduction={self.reduction!r}", *(f"{k}={v}" for k, v in self.settings.items())])


class MSELoss(_ReducedLoss):
    """Mean squared error (``reduction``: 'mean', 'sum' or 'none')."""

    fn = staticmethod(mse_loss)


class L1Loss(_ReducedLoss):
    """Mean absolute error (``F.l1_loss``)."""

    fn = staticmethod(FX.l1_loss)


class SmoothL1Loss(_ReducedLoss):
    """``F.smooth_l1_loss``: quadratic below ``beta``, linear above."""

    fn = staticmethod(FX.smooth_l1_loss)
    options = {"beta": 1.0}


class HuberLoss(_ReducedLoss):
    """``F.huber_loss``: quadratic below ``delta``, linear (slope ``delta``) above."""

    fn = staticmethod(FX.huber_loss)
    options = {"delta": 1.0}
    legacy = False


class KLDivLoss(_ReducedLoss):
    """``F.kl_div``: ``input`` holds log-probabilities (``reduction="batchmean"`` is the true KL divergence)."""

    fn = staticmethod(FX.kl_div)
    options = {"log_target": False}


class BCELoss(Module):
    """Binary cross-entropy of probabilities (``F.binary_cross_entropy``); for logits use ``BCEWithLogitsLoss``."""

    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        _register_weights(self, weight=weight)
        self.reduction = _legacy_reduction(size_average, reduce, reduction)

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        return FX.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class LinearCrossEntropyLoss(Module):
    """PyTorch's ``LinearCrossEntropyLoss(in_features, num_classes, *, out_features=(), bias=False, ...)``: the
    cross-entropy of the logits of its own ``linear`` layer (``F.linear_cross_entropy``); the layer's weight is
    stored flat, ``(num_classes * prod(out_features), in_features)``, as PyTorch's.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> loss = nn.LinearCrossEntropyLoss(5, 3)
        >>> loss.linear.weight.shape, loss(np.ones((2, 5), np.float32), np.array([0, 2])).shape
        ((3, 5), ())
    """

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple[int, ...] = (), bias: bool = False,
                 device: Any = None, dtype: Any = None, reduction: str = "mean", weight: Any = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0, options: Any = None) -> None:
        super().__init__()
        if weight is not None and tuple(getattr(weight, "shape", ())) != (num_classes,):
            raise ValueError(f"LinearCrossEntropyLoss: weight must have shape ({num_classes},) (one per class), got "
                             f"{tuple(getattr(weight, 'shape', ()))}")
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"LinearCrossEntropyLoss: label_smoothing must be in [0, 1], got {label_smoothing}")
        _register_weights(self, weight=weight)
        self.num_classes, self.out_features = int(num_classes), tuple(out_features)
        self.reduction, self.ignore_index, self.label_smoothing, self.options = (reduction, ignore_index,
                                                                                label_smoothing, options)
        size = self.num_classes * int(np.prod(self.out_features, dtype=np.int64))
        self.linear = Linear(in_features, size, bias=bias, device=device, dtype=dtype)

    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        shape = (self.num_classes, *self.out_features)
        bias = None if self.linear.bias is None else self.linear.bias.reshape(shape)
        return linear_cross_entropy(input, self.linear.weight.reshape((*shape, self.linear.in_features)), target,
                                    linear_bias=bias, weight=self.weight, reduction=self.reduction,
                                    ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                    options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")
