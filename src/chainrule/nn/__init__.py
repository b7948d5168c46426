"""Neural networks: modules, layers, activations, losses, initialisers, saving; both engines.

Tensor engine: :class:`Module`, :class:`Parameter`, ``Linear``, ``Embedding``, ``LayerNorm``,
``RMSNorm``, ``Dropout``, ``Conv1d`` / ``Conv2d``, ``ConvTranspose1d`` / ``ConvTranspose2d``, pooling,
``BatchNorm1d`` / ``BatchNorm2d``, ``GroupNorm``, ``InstanceNorm1d`` / ``InstanceNorm2d``, ``Upsample``,
``Sequential``, ``ModuleList``, ``MLP``; activation and loss layers; recurrent layers ``RNN``, ``LSTM``,
``GRU`` and their cells (PyTorch's parameter layout);
transformers: ``MultiheadAttention``, PyTorch's ``Transformer`` and its encoder and decoder (layers),
``CausalSelfAttention``, ``TransformerBlock``, and a small
language model ``GPT`` / ``GPTConfig`` with seeded sampling (``generate``, key/value cache);
``nn.functional`` (as ``torch.nn.functional``); ``nn.init``; ``jax.nn``'s functions with JAX's signatures
(``nn.relu``, ``nn.gelu``, ``nn.softmax(x, axis=-1)``, ``nn.one_hot``: :mod:`.jax_nn`). Scalar engine: ``nn.scalar``
(``Neuron``, ``Layer``, ``MLP``, micrograd's API). Saving: ``save`` / ``load`` /
``save_checkpoint`` / ``load_checkpoint`` (``.npz``, never unpickled).

Example:
    >>> import numpy as np
    >>> from chainrule import nn, optim
    >>> model = nn.MLP(4, [16, 3], rng=0)
    >>> opt = optim.Adam(model.parameters(), lr=1e-2)
    >>> x, y = np.random.default_rng(0).normal(size=(8, 4)), np.arange(8) % 3
    >>> for _ in range(100):
    ...     opt.zero_grad()
    ...     loss = nn.functional.cross_entropy(model(x), y)
    ...     loss.backward()
    ...     opt.step()
    >>> float(loss) < 0.05
    True
"""

from __future__ import annotations

import sys as _sys

from . import functional, init, initializers, parallel, utils
from . import scalar_nn as scalar
from .activations import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    Identity,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Softsign,
    Tanh,
    activation,
)
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .containers import ModuleDict, ModuleList, Sequential
from .conv import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    Conv1d,
    Conv2d,
    Conv3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
)
from .conv_transpose import (
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from .init import manual_seed
from .jax_nn import *  # noqa: F403  (jax.nn's functions: relu, gelu, softmax(x, axis=-1), one_hot, ...)
from .jax_nn import __all__ as _jax_nn
from .language_model.generate import generate
from .language_model.model import GPT, GPTConfig
from .layers import MLP, Dropout, Embedding, Flatten, LayerNorm, Linear, RMSNorm, Unflatten
from .layers_more import *  # noqa: F403  (PReLU, PixelShuffle, Dropout2d, ZeroPad2d, CosineSimilarity, ...)
from .layers_more import __all__ as _layers_more
from .lazy import (  # PyTorch's lazy layers: the input size read from the first input
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    LazyLinear,
    UninitializedBuffer,
    UninitializedParameter,
)
from .losses import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    LinearCrossEntropyLoss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .losses_more import *  # noqa: F403  (MarginRankingLoss, TripletMarginLoss, MultiMarginLoss, ...)
from .losses_more import __all__ as _losses_more
from .module import Module
from .module_state import LoadResult, StateDictError
from .norm_layers import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .param_containers import ParameterDict, ParameterList
from .parameter import Buffer, Parameter, get_default_dtype, set_default_dtype
from .progress import progress
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .recurrent import _RNNBase as RNNBase  # PyTorch's names of the recurrent layers' and cells' bases
from .recurrent_cells import _CellBase as RNNCellBase
from .serialize import DamagedFileError, UnsafeFileError, load, load_checkpoint, save, save_checkpoint
from .transformer import CausalSelfAttention, KVCache, MultiheadAttention, TransformerBlock
from .transformer_layers import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

# ``from chainrule.nn.scalar import MLP`` (the documented name) as well as ``nn.scalar.MLP``: the module is
# scalar_nn.py, so without this entry the import statement found no chainrule.nn.scalar
_sys.modules[f"{__name__}.scalar"] = scalar

__all__ = [
    "Module", "Parameter", "ParameterList", "ParameterDict", "StateDictError", "LoadResult",
    "Linear", "Embedding", "LayerNorm", "RMSNorm", "Dropout", "MLP", "Sequential", "ModuleList", "ModuleDict",
    "Flatten", "Unflatten", "NLLLoss",
    "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Identity", "activation",
    "MSELoss", "CrossEntropyLoss", "BCEWithLogitsLoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "BCELoss",
    "LeakyReLU", "ELU", "SELU", "CELU", "Hardtanh", "ReLU6", "Softsign", "LogSigmoid", "Mish", "Hardswish",
    "Hardsigmoid", "GLU", "Softplus",
    "functional", "init", "initializers", "utils", "scalar", "manual_seed", "get_default_dtype", "set_default_dtype",
    "save", "load", "save_checkpoint", "load_checkpoint", "UnsafeFileError", "DamagedFileError", "progress",
    "Conv1d", "Conv2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "BatchNorm1d", "BatchNorm2d",
    "MultiheadAttention", "CausalSelfAttention", "TransformerBlock", "KVCache", "GPT", "GPTConfig", "generate",
    "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell",
    "ConvTranspose1d", "ConvTranspose2d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",
    "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
    "Transformer", "TransformerEncoder", "TransformerEncoderLayer", "TransformerDecoder", "TransformerDecoderLayer",
]
__all__ += ["parallel"]
__all__ += ["Buffer", "RNNBase", "RNNCellBase", "UninitializedParameter", "UninitializedBuffer", "LazyLinear",
            "LazyConv1d", "LazyConv2d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyBatchNorm1d",
            "LazyBatchNorm2d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyConv3d", "LazyConvTranspose3d",
            "LazyBatchNorm3d", "LazyInstanceNorm3d"]
__all__ += [*_layers_more, *_losses_more, *_jax_nn]
__all__ += ["Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "BatchNorm3d", "InstanceNorm3d"]
__all__ += ["LinearCrossEntropyLoss"]
