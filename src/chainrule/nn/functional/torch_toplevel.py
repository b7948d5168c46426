"""The ``torch.nn.functional`` ops PyTorch also exports at the top level (``torch.layer_norm``, ``torch.embedding``,
``torch.kl_div``, ``torch.celu_``...), with the top-level spellings where they differ from the functional ones:
``torch.embedding(weight, indices)`` takes the weight first; the losses take ``reduction`` as PyTorch's integer
(0 'none', 1 'mean', 2 'sum') or a string, and reduce nothing unless told (PyTorch's top-level default);
``torch.dropout(input, p, train)`` says ``train``; ``torch.adaptive_max_pool1d`` and
``torch.max_pool1d_with_indices`` give ``(values, indices)``. Served as ``chainrule.<name>`` on first use
(``import chainrule`` stays light); the ``_`` forms change their input in place under PyTorch's rules (recorded in
the graph, see ``chainrule.ops.pytorch.in_place_methods``).

Example:
    >>> import chainrule as cr
    >>> w = cr.tensor([[0.0, 1.0], [2.0, 3.0]])
    >>> cr.embedding(w, cr.tensor([1, 0])).tolist()
    [[2.0, 3.0], [0.0, 1.0]]
    >>> float(cr.hinge_embedding_loss(cr.tensor([0.5, 2.0]), cr.tensor([1.0, -1.0]), 1.0, 2))
    0.5
"""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .writes import written_over

# the same as nn.functional's
layer_norm, rms_norm, pixel_shuffle, pixel_unshuffle, channel_shuffle = (
    F.layer_norm, F.rms_norm, F.pixel_shuffle, F.pixel_unshuffle, F.channel_shuffle)
native_channel_shuffle, bilinear, cosine_similarity, pairwise_distance, pdist = (
    F.channel_shuffle, F.bilinear, F.cosine_similarity, F.pairwise_distance, F.pdist)

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(name: str, reduction: Any) -> str:
    """PyTorch's top-level losses take the reduction as an integer (its enum); the strings are accepted too."""
    if isinstance(reduction, str):
        return reduction
    if reduction in _REDUCTIONS and not isinstance(reduction, bool):
        return _REDUCTIONS[int(reduction)]
    raise ValueError(f"{name}: reduction must be 0 ('none'), 1 ('mean') or 2 ('sum'), got {reduction!r}")


def embedding(weight: Any, indices: Any, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Any:
    """PyTorch's ``torch.embedding(weight, indices, padding_idx=-1)``: the rows of ``weight`` at ``indices`` (the
    weight first, unlike ``nn.functional.embedding``; -1: no padding row)."""
    return F.embedding(indices, weight, padding_idx=None if padding_idx < 0 else padding_idx,
                      scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def feature_dropout(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """PyTorch's ``torch.feature_dropout(input, p, train)``: whole channels zeroed (``nn.functional.dropout2d``)."""
    return F.dropout2d(input, p, train)


def kl_div(input: Any, target: Any, reduction: Any = 0, log_target: bool = False) -> Any:  # noqa: A002
    """PyTorch's ``torch.kl_div(input, target, reduction=0, log_target=False)`` (0: no reduction)."""
    return F.kl_div(input, target, reduction=_reduction("kl_div", reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None, pos_weight: Any = None,  # noqa: A002
                                     reduction: Any = 0) -> Any:
    """PyTorch's ``torch.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction=0)``."""
    return F.binary_cross_entropy_with_logits(input, target, weight=weight, pos_weight=pos_weight,
                            reduction=_reduction("binary_cross_entropy_with_logits", reduction))


def poisson_nll_loss(input: Any, target: Any, log_input: bool = True, full: bool = False, eps: float = 1e-8,  # noqa: A002
                     reduction: Any = 0) -> Any:
    """PyTorch's ``torch.poisson_nll_loss(input, target, log_input, full, eps, reduction)``."""
    return F.poisson_nll_loss(input, target, log_input=log_input, full=full, eps=eps,
                             reduction=_reduction("poisson_nll_loss", reduction))


def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-6, swap: bool = False, reduction: Any = 0) -> Any:
    """PyTorch's ``torch.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=0)``."""
    return F.triplet_margin_loss(anchor, positive, negative, margin=margin, p=p, eps=eps, swap=swap,
                                reduction=_reduction("triplet_margin_loss", reduction))


def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0, reduction: Any = 0) -> Any:
    """PyTorch's ``torch.margin_ranking_loss(input1, input2, target, margin=0, reduction=0)``."""
    return F.margin_ranking_loss(input1, input2, target, margin=margin,
                                reduction=_reduction("margin_ranking_loss", reduction))


def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0, reduction: Any = 0) -> Any:  # noqa: A002
    """PyTorch's ``torch.hinge_embedding_loss(input, target, margin=1, reduction=0)``."""
    return F.hinge_embedding_loss(input, target, margin=margin, reduction=_reduction("hinge_embedding_loss", reduction))


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0, reduction: Any = 0) -> Any:
    """PyTorch's ``torch.cosine_embedding_loss(input1, input2, target, margin=0, reduction=0)``."""
    return F.cosine_embedding_loss(input1, input2, target, margin=margin,
                                  reduction=_reduction("cosine_embedding_loss", reduction))


def constant_pad_nd(input: Any, pad: Any, value: float = 0.0) -> Any:  # noqa: A002
    """PyTorch's ``torch.constant_pad_nd(input, pad, value=0)``: ``nn.functional.pad`` with a constant."""
    return F.pad(input, tuple(pad), mode="constant", value=value)


def adaptive_max_pool1d(input: Any, output_size: Any) -> tuple[Any, Any]:  # noqa: A002
    """PyTorch's ``torch.adaptive_max_pool1d(input, output_size)``: ``(values, indices)``."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def max_pool1d_with_indices(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False) -> tuple[Any, Any]:
    """PyTorch's ``torch.max_pool1d_with_indices``: ``nn.functional.max_pool1d``'s ``(values, indices)``."""
    return F.max_pool1d(input, kernel_size, stride=stride or None, padding=padding, dilation=dilation,
                       ceil_mode=ceil_mode, return_indices=True)


def dropout(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """PyTorch's ``torch.dropout(input, p, train)``: ``nn.functional.dropout``."""
    return F.dropout(input, p, train)


def alpha_dropout(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """PyTorch's ``torch.alpha_dropout(input, p, train)``: ``nn.functional.alpha_dropout``."""
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Any, p: float, train: bool) -> Any:  # noqa: A002
    """PyTorch's ``torch.feature_alpha_dropout(input, p, train)``: ``nn.functional.feature_alpha_dropout``."""
    return F.feature_alpha_dropout(input, p, train)


def rrelu(input: Any, lower: float = 1 / 8, upper: float = 1 / 3, training: bool = False,  # noqa: A002
          generator: Any = None) -> Any:
    """PyTorch's ``torch.rrelu(input, lower, upper, training=False, generator=None)``."""
    return F.rrelu(input, lower, upper, training, rng=generator)


def threshold(input: Any, threshold: float, value: float) -> Any:  # noqa: A002
    """PyTorch's ``torch.threshold(input, threshold, value)``: ``value`` where ``input <= threshold``."""
    return F.threshold(input, threshold, value)


def celu(input: Any, alpha: float = 1.0) -> Any:  # noqa: A002
    """PyTorch's ``torch.celu(input, alpha=1.0)``."""
    return F.celu(input, alpha)


def selu(input: Any) -> Any:  # noqa: A002
    """PyTorch's ``torch.selu(input)``."""
    return F.selu(input)


celu_, selu_, rrelu_, threshold_ = (written_over("celu_", celu), written_over("selu_", selu),
                                    written_over("rrelu_", rrelu), written_over("threshold_", threshold))
dropout_, alpha_dropout_ = written_over("dropout_", dropout), written_over("alpha_dropout_", alpha_dropout)
feature_dropout_ = written_over("feature_dropout_", feature_dropout)
feature_alpha_dropout_ = written_over("feature_alpha_dropout_", feature_alpha_dropout)
