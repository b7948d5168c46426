"""More of PyTorch's ``nn`` layers, thin wrappers of ``nn.functional`` with PyTorch's constructor arguments and
``repr``: activations (``PReLU``, ``RReLU``, ``Softmin``, ``Softmax2d``, ``Softshrink``, ``Hardshrink``,
``Tanhshrink``, ``Threshold``), channels (``PixelShuffle``, ``PixelUnshuffle``, ``ChannelShuffle``,
``Dropout1d/2d/3d``, ``AlphaDropout``, ``FeatureAlphaDropout``), padding (``ZeroPad``, ``ConstantPad``,
``ReflectionPad``, ``ReplicationPad``, ``CircularPad``, each 1d/2d/3d) and pairs (``CosineSimilarity``,
``PairwiseDistance``, ``Bilinear``), windows (``Unfold``, ``Fold``, ``AdaptiveMaxPool1d/2d/3d``, ``LPPool1d/2d/3d``,
``LocalResponseNorm``, ``MaxUnpool1d/2d/3d``).

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> nn.ZeroPad2d((1, 0, 0, 0))(np.ones((1, 1, 1, 1))).tolist()
    [[[[0.0, 1.0]]]]
    >>> nn.PReLU()
    PReLU(num_parameters=1)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import init
from .functional import more as FM
from .functional import softmax
from .functional.extras import cosine_similarity, pad, threshold
from .layers import _input
from .module import Module
from .module_placement import place
from .parameter import Parameter, resolve_dtype

__all__ = ["PReLU", "RReLU", "Softmin", "Softmax2d", "Softshrink", "Hardshrink", "Tanhshrink", "Threshold",
           "PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout", "CosineSimilarity", "PairwiseDistance", "Bilinear", "Unfold", "Fold",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "LPPool1d", "LPPool2d", "LocalResponseNorm",
           "EmbeddingBag", "MaxUnpool1d", "MaxUnpool2d", "AdaptiveMaxPool3d", "LPPool3d", "MaxUnpool3d",
           "FractionalMaxPool2d", "FractionalMaxPool3d"]


def _simple(name: str, fn: Any, doc: str, *params: tuple[str, Any], show: str | None = None) -> type:
    """A Module ``fn(x, *its arguments)`` whose constructor takes ``params`` (name, default) in PyTorch's order;
    ``show``: the ``extra_repr`` as a format of the arguments (default ``name=value, ...``)."""

    def __init__(self: Module, *args: Any, **kw: Any) -> None:
        Module.__init__(self)
        names = [p for p, _ in params]
        if len(args) > len(names):
            raise TypeError(f"{name}: takes at most {len(names)} arguments ({', '.join(names)}), got {len(args)}")
        unknown = set(kw) - set(names) - {"inplace"}
        if unknown:
            raise TypeError(f"{name}: unexpected arguments {sorted(unknown)}; it takes {names}")
        values = {**dict(params), **dict(zip(names, args, strict=False)), **kw}
        missing = [p for p in names if values[p] is _REQUIRED]
        if missing:
            raise TypeError(f"{name}: missing required arguments {missing}")
        values.pop("inplace", None)
        for key, value in values.items():
            setattr(self, key, value)
        self._arguments = [p for p in names if p != "inplace"]

    def forward(self: Module, *inputs: Any) -> Any:
        return fn(*inputs, *(getattr(self, p) for p in self._arguments))

    def extra_repr(self: Module) -> str:
        args = {p: getattr(self, p) for p in self._arguments}
        return show.format(**args) if show is not None else ", ".join(f"{k}={v}" for k, v in args.items())

    return type(name, (Module,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr,
                                  "__doc__": doc, "__module__": __name__})


_REQUIRED = object()

Softmin = _simple("Softmin", lambda x, dim: FM.softmin(x, dim, _stacklevel=4), "``softmin`` along ``dim``.",
                  ("dim", None))
Softshrink = _simple("Softshrink", FM.softshrink, "``softshrink``: shrink towards 0 by ``lambd``.",
                     ("lambd", 0.5), show="{lambd}")
Hardshrink = _simple("Hardshrink", FM.hardshrink, "``hardshrink``: 0 where ``|x| <= lambd``.", ("lambd", 0.5),
                     show="{lambd}")
Tanhshrink = _simple("Tanhshrink", FM.tanhshrink, "``tanhshrink``: ``x - tanh(x)``.")
Threshold = _simple("Threshold", threshold, "``threshold``: ``x`` above ``threshold``, else ``value``.",
                    ("threshold", _REQUIRED), ("value", _REQUIRED), ("inplace", False))
PixelShuffle = _simple("PixelShuffle", FM.pixel_shuffle, "``pixel_shuffle``: (*, C r², H, W) to (*, C, H r, W r).",
                       ("upscale_factor", _REQUIRED))
PixelUnshuffle = _simple("PixelUnshuffle", FM.pixel_unshuffle, "``pixel_unshuffle``: undoes ``PixelShuffle``.",
                         ("downscale_factor", _REQUIRED))
ChannelShuffle = _simple("ChannelShuffle", FM.channel_shuffle, "``channel_shuffle`` in ``groups``.",
                         ("groups", _REQUIRED))
CosineSimilarity = _simple("CosineSimilarity", cosine_similarity, "``cosine_similarity`` along ``dim``.",
                           ("dim", 1), ("eps", 1e-8), show="")
PairwiseDistance = _simple("PairwiseDistance", FM.pairwise_distance, "``pairwise_distance`` over the last dim.",
                           ("p", 2.0), ("eps", 1e-6), ("keepdim", False), show="")

Unfold = _simple("Unfold", FM.unfold, "``unfold`` (im2col): every window's entries as a column.",
                 ("kernel_size", _REQUIRED), ("dilation", 1), ("padding", 0), ("stride", 1))
Fold = _simple("Fold", FM.fold, "``fold`` (col2im): the columns summed back into an image.",
               ("output_size", _REQUIRED), ("kernel_size", _REQUIRED), ("dilation", 1), ("padding", 0), ("stride", 1))
AdaptiveMaxPool1d = _simple("AdaptiveMaxPool1d", FM.adaptive_max_pool1d, "``adaptive_max_pool1d``.",
                            ("output_size", _REQUIRED), ("return_indices", False), show="output_size={output_size}")
AdaptiveMaxPool2d = _simple("AdaptiveMaxPool2d", FM.adaptive_max_pool2d, "``adaptive_max_pool2d``.",
                            ("output_size", _REQUIRED), ("return_indices", False), show="output_size={output_size}")
LPPool1d = _simple("LPPool1d", FM.lp_pool1d, "``lp_pool1d``: the p-norm of each window.", ("norm_type", _REQUIRED),
                   ("kernel_size", _REQUIRED), ("stride", None), ("ceil_mode", False))
LPPool2d = _simple("LPPool2d", FM.lp_pool2d, "``lp_pool2d``: the p-norm of each window.", ("norm_type", _REQUIRED),
                   ("kernel_size", _REQUIRED), ("stride", None), ("ceil_mode", False))
AdaptiveMaxPool3d = _simple("AdaptiveMaxPool3d", FM.adaptive_max_pool3d, "``adaptive_max_pool3d``.",
                            ("output_size", _REQUIRED), ("return_indices", False), show="output_size={output_size}")
LPPool3d = _simple("LPPool3d", FM.lp_pool3d, "``lp_pool3d``: the p-norm of each window.", ("norm_type", _REQUIRED),
                   ("kernel_size", _REQUIRED), ("stride", None), ("ceil_mode", False))
LocalResponseNorm = _simple("LocalResponseNorm", FM.local_response_norm, "``local_response_norm`` over channels.",
                            ("size", _REQUIRED), ("alpha", 1e-4), ("beta", 0.75), ("k", 1.0),
                            show="{size}, alpha={alpha}, beta={beta}, k={k}")



class _MaxUnpool(Module):
    fn: Any = None
    dims = 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()

        def sizes(v: Any) -> tuple[int, ...]:  # PyTorch keeps them as tuples of the layer's dims
            return (int(v),) * self.dims if isinstance(v, (int, np.integer)) else tuple(int(a) for a in v)

        self.kernel_size = sizes(kernel_size)
        self.stride, self.padding = sizes(kernel_size if stride is None else stride), sizes(padding)

    def forward(self, input: Any, indices: Any, output_size: Any = None) -> Any:  # noqa: A002
        return type(self).fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """``max_unpool1d``: undoes ``MaxPool1d(return_indices=True)``, zeros where no maximum was."""

    fn = staticmethod(FM.max_unpool1d)


class MaxUnpool2d(_MaxUnpool):
    """``max_unpool2d``: undoes ``MaxPool2d(return_indices=True)``, zeros where no maximum was."""

    fn = staticmethod(FM.max_unpool2d)
    dims = 2


class MaxUnpool3d(_MaxUnpool):
    """``max_unpool3d``: undoes ``MaxPool3d(return_indices=True)``, zeros where no maximum was."""

    fn = staticmethod(FM.max_unpool3d)
    dims = 3


class Softmax2d(Module):
    """``softmax`` over the channels of ``(N, C, H, W)`` or ``(C, H, W)``."""

    def forward(self, x: Any) -> Any:
        if np.ndim(x) not in (3, 4):
            raise ValueError(f"Softmax2d: expects a 3-d or 4-d input, got shape {tuple(np.shape(x))}")
        return softmax(x, dim=-3)


class PReLU(Module):
    """``prelu`` with a learned slope below 0: ``num_parameters`` of them (1, or one per channel), from ``init``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.PReLU()(np.array([-4.0, 2.0])).tolist()
        [-1.0, 2.0]
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters, self.init = int(num_parameters), float(init)
        self.weight = Parameter(np.full(self.num_parameters, self.init), dtype=resolve_dtype(dtype, "PReLU", device))
        place(self, device)

    def forward(self, x: Any) -> Any:
        return FM.prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """``rrelu``: random slopes from U(lower, upper) below 0 in training, their mean in eval mode."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False, *,
                 rng: Any = None) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace
        self.rng = None if rng is None else init.generator(rng)  # None: the generator manual_seed resets, at each call

    def forward(self, x: Any) -> Any:
        return FM.rrelu(x, self.lower, self.upper, self.training, rng=self.rng)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}"


class _ChannelDropout(Module):
    fn: Any = None

    def __init__(self, p: float = 0.5, inplace: bool = False, *, rng: Any = None) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{type(self).__name__}: dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = float(p), bool(inplace)
        self.rng = None if rng is None else init.generator(rng)  # None: the generator manual_seed resets, at each call

    def forward(self, x: Any) -> Any:
        return type(self).fn(x, self.p, self.training, rng=self.rng)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_ChannelDropout):
    """``dropout1d``: zero whole channels of (N, C, L) or (C, L) in training."""

    fn = staticmethod(FM.dropout1d)


class Dropout2d(_ChannelDropout):
    """``dropout2d``: zero whole channels of (N, C, H, W) or (C, H, W) in training."""

    fn = staticmethod(FM.dropout2d)


class Dropout3d(_ChannelDropout):
    """``dropout3d``: zero whole channels of (N, C, D, H, W) or (C, D, H, W) in training."""

    fn = staticmethod(FM.dropout3d)


class AlphaDropout(_ChannelDropout):
    """``alpha_dropout``: dropout that keeps a SELU network's mean and variance."""

    fn = staticmethod(FM.alpha_dropout)


class FeatureAlphaDropout(_ChannelDropout):
    """``feature_alpha_dropout``: ``alpha_dropout`` of whole channels."""

    fn = staticmethod(FM.feature_alpha_dropout)


class Bilinear(Module):
    """``y = x1 @ weight[k] @ x2 + bias[k]``; weight (out, in1, in2) and bias drawn from U(-1/sqrt(in1), ...)."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None, *, rng: Any = None) -> None:
        super().__init__()
        dt = resolve_dtype(dtype, "Bilinear", device)
        gen = init.generator(rng)
        self.in1_features, self.in2_features, self.out_features = int(in1_features), int(in2_features), int(
            out_features)
        bound = 1.0 / math.sqrt(in1_features)
        self.weight = Parameter(gen.uniform(-bound, bound, (out_features, in1_features, in2_features)), dtype=dt)
        self.bias = Parameter(gen.uniform(-bound, bound, (out_features,)), dtype=dt) if bias else None
        place(self, device)

    def forward(self, x1: Any, x2: Any) -> Any:
        dt = self.weight.dtype  # arrays become the layer's dtype; a Tensor of another float dtype is refused
        return FM.bilinear(_input(x1, dt, "Bilinear"), _input(x2, dt, "Bilinear"), self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class EmbeddingBag(Module):
    """A table of ``num_embeddings`` vectors (N(0, 1), the ``padding_idx`` row zero) read by bags:
    ``embedding_bag``'s sum, mean or max of each bag's rows.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.EmbeddingBag(10, 3, mode="sum")(np.array([[1, 2], [3, 3]])).shape
        (2, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False, _weight: Any = None,
                 include_last_offset: bool = False, padding_idx: int | None = None, device: Any = None,
                 dtype: Any = None, *, rng: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"EmbeddingBag: padding_idx {padding_idx} must be within num_embeddings "
                                 f"{num_embeddings}")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        table = init.generator(rng).standard_normal((num_embeddings, embedding_dim)) if _weight is None else _weight
        table = np.array(table, dtype=float)
        if padding_idx is not None and _weight is None:
            table[padding_idx] = 0.0
        self.weight = Parameter(table, dtype=resolve_dtype(dtype, "EmbeddingBag", device))
        place(self, device)

    def forward(self, input: Any, offsets: Any = None, per_sample_weights: Any = None) -> Any:  # noqa: A002
        return FM.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                                self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                                self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        return s + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


class _FractionalMaxPool(Module):
    """PyTorch's ``FractionalMaxPool<d>d(kernel_size, output_size=None, output_ratio=None, return_indices=False,
    _random_samples=None)``: max over pseudo-random windows (``F.fractional_max_pool2d``), new ones at each call
    unless ``_random_samples`` (a buffer, as PyTorch's) fixes them; ``rng``: the generator of the draws."""

    _d = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Any = None, *, rng: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        if (output_size is None) == (output_ratio is None):
            raise ValueError(f"{name}: pass output_size or output_ratio (exactly one of them), got output_size="
                             f"{output_size!r}, output_ratio={output_ratio!r}")
        ratios = (output_ratio,) * self._d if np.ndim(output_ratio) == 0 else tuple(output_ratio)
        if output_ratio is not None and not all(0 < float(r) < 1 for r in ratios):
            raise ValueError(f"{name}: output_ratio must be in (0, 1), got {output_ratio!r}")
        self.kernel_size, self.output_size, self.output_ratio = kernel_size, output_size, output_ratio
        self.return_indices, self.rng = bool(return_indices), rng
        self.register_buffer("_random_samples", _random_samples)

    def forward(self, input: Any) -> Any:  # noqa: A002
        fn = FM.fractional_max_pool2d if self._d == 2 else FM.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  self._random_samples, rng=self.rng)

    def extra_repr(self) -> str:
        size = f"output_size={self.output_size}" if self.output_size is not None else \
            f"output_ratio={self.output_ratio}"
        return f"kernel_size={self.kernel_size}, {size}"


class FractionalMaxPool2d(_FractionalMaxPool):
    """``fractional_max_pool2d`` as a layer (see :class:`_FractionalMaxPool` for the arguments).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.FractionalMaxPool2d(2, output_ratio=0.5, rng=0)(np.ones((1, 3, 8, 6))).shape
        (1, 3, 4, 3)
    """


class FractionalMaxPool3d(_FractionalMaxPool):
    """``fractional_max_pool3d`` as a layer (see :class:`_FractionalMaxPool` for the arguments)."""

    _d = 3


# -- padding -----------------------------------------------------------------------------------------
def _padding_layer(name: str, mode: str, dims: int, constant: bool = False) -> type:
    """PyTorch's ``<Mode>Pad<dims>d``: ``padding`` an int (every side) or ``2 * dims`` sizes, last dim first."""

    def __init__(self: Module, padding: Any, value: float = 0.0) -> None:
        Module.__init__(self)
        sizes = (int(padding),) * (2 * dims) if isinstance(padding, (int, np.integer)) else tuple(padding)
        if len(sizes) != 2 * dims:
            raise ValueError(f"{name}: padding must be an int or {2 * dims} sizes (left, right, ...), got {padding}")
        self.padding, self.value = sizes, float(value)

    def forward(self: Module, x: Any) -> Any:
        nd = np.ndim(x)
        if nd not in (dims + 1, dims + 2):
            raise ValueError(f"{name}: expects a {dims + 1}-d (unbatched) or {dims + 2}-d input, got shape "
                             f"{tuple(np.shape(x))}")
        return pad(x, self.padding, mode=mode, value=self.value if mode == "constant" else None)

    def extra_repr(self: Module) -> str:
        return f"padding={self.padding}, value={self.value}" if constant else f"{self.padding}"

    if constant:
        init_fn = __init__
    else:
        def init_fn(self: Module, padding: Any) -> None:
            __init__(self, padding)
    doc = f"Pad the last {dims} dims ({mode!r} mode of ``F.pad``)."
    return type(name, (Module,), {"__init__": init_fn, "forward": forward, "extra_repr": extra_repr,
                                  "__doc__": doc, "__module__": __name__})


for _n in (1, 2, 3):
    for _kind, _mode in (("Zero", "constant"), ("Constant", "constant"), ("Reflection", "reflect"),
                         ("Replication", "replicate"), ("Circular", "circular")):
        _name = f"{_kind}Pad{_n}d"
        globals()[_name] = _padding_layer(_name, _mode, _n, constant=_kind == "Constant")
        __all__.append(_name)
