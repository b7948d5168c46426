"""More of PyTorch's loss layers, over ``nn.functional``'s losses: ``MarginRankingLoss``, ``HingeEmbeddingLoss``,
``SoftMarginLoss``, ``MultiLabelSoftMarginLoss``, ``CosineEmbeddingLoss``, ``TripletMarginLoss``,
``TripletMarginWithDistanceLoss``, ``PoissonNLLLoss``, ``GaussianNLLLoss``, ``MultiMarginLoss``,
``MultiLabelMarginLoss``, ``CTCLoss``. PyTorch's legacy ``size_average=`` and ``reduce=`` are read as PyTorch
reads them.

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> nn.MarginRankingLoss(margin=0.5)
    MarginRankingLoss(reduction='mean', margin=0.5)
    >>> float(nn.MarginRankingLoss()(np.array([1.0, 2.0]), np.array([2.0, 0.0]), np.array([1.0, 1.0])))
    0.5
"""

from __future__ import annotations

from typing import Any

from .functional import losses_margin as FL
from .functional import more as FM
from .losses import _legacy_reduction, _register_weights
from .module import Module

__all__ = ["MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
           "CosineEmbeddingLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "PoissonNLLLoss",
           "GaussianNLLLoss", "MultiMarginLoss", "MultiLabelMarginLoss", "CTCLoss"]


def _loss(name: str, fn: Any, doc: str, *options: tuple[str, Any], weighted: bool = False) -> type:
    """A loss layer ``fn(*inputs, <options>, reduction=...)`` with PyTorch's constructor (options first, then
    ``size_average``, ``reduce``, ``reduction``; ``weight`` first where PyTorch has it, or where ``options`` puts
    it); the weight is a buffer, as PyTorch's."""
    names = (["weight"] if weighted else []) + [n for n, _ in options] + ["size_average", "reduce", "reduction"]
    weighted = "weight" in names
    defaults = {**({"weight": None} if weighted else {}), **dict(options), "size_average": None, "reduce": None,
                "reduction": "mean"}

    def __init__(self: Module, *args: Any, **kw: Any) -> None:
        Module.__init__(self)
        if len(args) > len(names):
            raise TypeError(f"{name}: takes at most {len(names)} arguments ({', '.join(names)}), got {len(args)}")
        unknown = set(kw) - set(names)
        if unknown:
            raise TypeError(f"{name}: unexpected arguments {sorted(unknown)}; it takes {names}")
        values = {**defaults, **dict(zip(names, args, strict=False)), **kw}
        self.reduction = _legacy_reduction(values.pop("size_average"), values.pop("reduce"), values.pop("reduction"))
        if weighted:
            _register_weights(self, weight=values.pop("weight"))
        self.settings = values

    def forward(self: Module, *inputs: Any) -> Any:
        extra = {"weight": self.weight} if weighted else {}
        return fn(*inputs, **self.settings, **extra, reduction=self.reduction)

    def extra_repr(self: Module) -> str:
        return ", ".join([f"reduction={self.reduction!r}", *(f"{k}={v}" for k, v in self.settings.items())])

    return type(name, (Module,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr,
                                  "__doc__": doc, "__module__": __name__})


MarginRankingLoss = _loss("MarginRankingLoss", FL.margin_ranking_loss,
                          "``F.margin_ranking_loss``: ``max(0, -y (x1 - x2) + margin)``.", ("margin", 0.0))
HingeEmbeddingLoss = _loss("HingeEmbeddingLoss", FL.hinge_embedding_loss,
                           "``F.hinge_embedding_loss``: ``x`` for y = 1, ``max(0, margin - x)`` for y = -1.",
                           ("margin", 1.0))
SoftMarginLoss = _loss("SoftMarginLoss", FL.soft_margin_loss, "``F.soft_margin_loss``: ``log(1 + exp(-y x))``.")
MultiLabelSoftMarginLoss = _loss("MultiLabelSoftMarginLoss", FL.multilabel_soft_margin_loss,
                                 "``F.multilabel_soft_margin_loss``: binary cross-entropy per class, averaged.",
                                 weighted=True)
CosineEmbeddingLoss = _loss("CosineEmbeddingLoss", FL.cosine_embedding_loss,
                            "``F.cosine_embedding_loss``: ``1 - cos`` for y = 1, ``max(0, cos - margin)`` for -1.",
                            ("margin", 0.0))
TripletMarginLoss = _loss("TripletMarginLoss", FL.triplet_margin_loss,
                          "``F.triplet_margin_loss``: ``max(0, margin + d(a, p) - d(a, n))``.",
                          ("margin", 1.0), ("p", 2.0), ("eps", 1e-6), ("swap", False))
PoissonNLLLoss = _loss("PoissonNLLLoss", FL.poisson_nll_loss,
                       "``F.poisson_nll_loss``: negative log-likelihood of a Poisson target.",
                       ("log_input", True), ("full", False), ("eps", 1e-8))
GaussianNLLLoss = _loss("GaussianNLLLoss", FM.gaussian_nll_loss,
                        "``F.gaussian_nll_loss(input, target, var)``: Gaussian negative log-likelihood.",
                        ("full", False), ("eps", 1e-6))
MultiMarginLoss = _loss("MultiMarginLoss", FM.multi_margin_loss,
                        "``F.multi_margin_loss``: the multi-class hinge loss.", ("p", 1), ("margin", 1.0),
                        ("weight", None))
MultiLabelMarginLoss = _loss("MultiLabelMarginLoss", FM.multilabel_margin_loss,
                             "``F.multilabel_margin_loss``: the multi-label hinge loss.")


class TripletMarginWithDistanceLoss(Module):
    """``triplet_margin_with_distance_loss`` with PyTorch's keyword-only constructor."""

    def __init__(self, *, distance_function: Any = None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:
        super().__init__()
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: margin must be greater than 0, got {margin}")
        self.distance_function, self.margin, self.swap, self.reduction = distance_function, margin, swap, reduction

    def forward(self, anchor: Any, positive: Any, negative: Any) -> Any:
        return FM.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                    distance_function=self.distance_function, margin=self.margin,
                                                    swap=self.swap, reduction=self.reduction)


class CTCLoss(Module):
    """The connectionist temporal classification loss (as ``torch.nn.CTCLoss``): ``forward(log_probs, targets,
    input_lengths, target_lengths)``, see ``nn.functional.ctc_loss``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> log_probs = np.log(np.full((2, 1, 2), 0.5))
        >>> round(float(nn.CTCLoss(reduction="sum")(log_probs, np.array([[1]]), [2], [1])), 6)
        0.287682
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__()
        self.blank, self.reduction, self.zero_infinity = int(blank), reduction, bool(zero_infinity)

    def forward(self, log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any) -> Any:
        return FM.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                           self.zero_infinity)
