"""PyTorch's encoder-decoder transformer: ``Transformer``, ``TransformerEncoder``, ``TransformerEncoderLayer``,
``TransformerDecoder``, ``TransformerDecoderLayer``, with PyTorch's arguments, defaults, parameter names
(so a ``torch.nn.Transformer``'s state dict loads as it is) and results.

Inputs are (S, N, E), or (N, S, E) with ``batch_first=True``, or (S, E) unbatched. Masks as
``MultiheadAttention`` takes them: boolean True = *not allowed*, or float added to the scores.
``is_causal`` (and ``tgt_is_causal``, ...) with no mask given means the causal mask. PyTorch's
inference fast path (nested tensors) writes zeros at padded positions in eval mode without gradients;
chainrule always computes them as the training path does (those positions are padding either way).

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> model = nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
    ...                        dim_feedforward=32, batch_first=True, rng=0)
    >>> src, tgt = np.ones((3, 7, 16), dtype=np.float32), np.ones((3, 5, 16), dtype=np.float32)
    >>> mask = nn.Transformer.generate_square_subsequent_mask(5)
    >>> model(src, tgt, tgt_mask=mask).shape
    (3, 5, 16)
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.device import backend, check_cpu
from ..tensor import Tensor
from . import functional as F
from . import init
from .containers import ModuleList
from .layers import Dropout, LayerNorm, Linear
from .module import Module
from .module_placement import place
from .transformer import MultiheadAttention

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def _activation(activation: str | Callable[[Any], Any], where: str) -> Callable[[Any], Any]:
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise ValueError(f"{where}: activation should be 'relu', 'gelu' or a callable, got {activation!r}")
        return _ACTIVATIONS[activation]
    if not callable(activation):
        raise TypeError(f"{where}: activation should be 'relu', 'gelu' or a callable, got {type(activation).__name__}")
    return activation


def _causal(mask: Any, is_causal: bool | None, size: int) -> bool:
    """PyTorch's reading of the ``is_causal`` hint: as given, or (None) whether ``mask`` is the causal one."""
    if is_causal is not None or mask is None:
        return bool(is_causal)
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    want = Transformer.generate_square_subsequent_mask(size, dtype=m.dtype if m.dtype.kind == "f" else None)
    return m.shape == want.shape and bool(np.all(m == want)) if m.dtype.kind == "f" else False


def _seq_len(x: Any, batch_first: bool) -> int:
    shape = np.shape(x._data if isinstance(x, Tensor) else x)
    return shape[1] if batch_first and len(shape) == 3 else shape[0]


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward network, each with a residual and a LayerNorm (as PyTorch's).

    Post-norm by default (``norm1(x + attention(x))``, ``norm2(x + ff(x))``); ``norm_first=True``: pre-norm
    (``x + attention(norm1(x))``, ``x + ff(norm2(x))``). ``ff(x) = linear2(dropout(activation(linear1(x))))``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, rng=0)
        >>> layer(np.ones((5, 3, 8), dtype=np.float32)).shape
        (5, 3, 8)
    """

    def __init__(
        self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
        activation: str | Callable[[Any], Any] = "relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
        norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None, *, rng: Any = None,
    ) -> None:
        super().__init__()
        check_cpu(type(self).__name__, device)
        gen = init.generator(rng)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, bias, batch_first=batch_first, dtype=dtype,
                                            rng=gen)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype, rng=gen)
        self.dropout = Dropout(dropout, rng=gen)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype, rng=gen)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout, rng=gen)
        self.dropout2 = Dropout(dropout, rng=gen)
        self.activation = _activation(activation, "TransformerEncoderLayer")
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def forward(self, src: Any, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Any:
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x: Any, mask: Any, padding: Any, is_causal: bool) -> Any:
        y = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(y)

    def _ff_block(self, x: Any) -> Any:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's output (``memory``), a feed-forward network; each with a
    residual and a LayerNorm (as PyTorch's; ``norm_first=True`` for pre-norm).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True, rng=0)
        >>> layer(np.ones((3, 4, 8), dtype=np.float32), np.ones((3, 6, 8), dtype=np.float32)).shape
        (3, 4, 8)
    """

    def __init__(
        self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
        activation: str | Callable[[Any], Any] = "relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
        norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None, *, rng: Any = None,
    ) -> None:
        super().__init__()
        check_cpu(type(self).__name__, device)
        gen = init.generator(rng)
        attention = {"batch_first": batch_first, "dtype": dtype, "rng": gen}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, bias, **attention)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout, bias, **attention)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype, rng=gen)
        self.dropout = Dropout(dropout, rng=gen)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype, rng=gen)
        self.norm_first = bool(norm_first)
        self.norm1, self.norm2, self.norm3 = (LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
                                              for _ in range(3))
        self.dropout1, self.dropout2, self.dropout3 = (Dropout(dropout, rng=gen) for _ in range(3))
        self.activation = _activation(activation, "TransformerDecoderLayer")
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Any:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x: Any, mask: Any, padding: Any, is_causal: bool) -> Any:
        y = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(y)

    def _mha_block(self, x: Any, memory: Any, mask: Any, padding: Any, is_causal: bool) -> Any:
        y = self.multihead_attn(x, memory, memory, attn_mask=mask, key_padding_mask=padding, need_weights=False,
                                is_causal=is_causal)[0]
        return self.dropout2(y)

    def _ff_block(self, x: Any) -> Any:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _clones(layer: Module, n: int) -> ModuleList:
    """n deep copies of ``layer`` (PyTorch's: each starts with the same weights), each with dropout
    generators of its own (copies would otherwise draw the same masks)."""
    layers = ModuleList([copy.deepcopy(layer) for _ in range(n)])
    seeds = init.generator(None)
    for m in layers.modules():
        if isinstance(m, Dropout):
            m.rng = np.random.default_rng(seeds.integers(2**63))
        elif isinstance(m, MultiheadAttention):
            m._rng = np.random.default_rng(seeds.integers(2**63))
    return layers


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` applied in turn, then ``norm`` if given (as PyTorch's).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True, rng=0)
        >>> encoder = nn.TransformerEncoder(layer, num_layers=2)
        >>> encoder(np.ones((3, 5, 8), dtype=np.float32), is_causal=True).shape
        (3, 5, 8)
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()  # (enable_nested_tensor, mask_check: PyTorch's fast-path switches, accepted)
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = int(num_layers)
        self.norm = norm

    def forward(self, src: Any, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None) -> Any:
        first = self.layers[0] if len(self.layers) else None
        batch_first = bool(first is not None and getattr(first.self_attn, "batch_first", False))
        causal = _causal(mask, is_causal, _seq_len(src, batch_first))
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=causal)
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` applied in turn, then ``norm`` if given (as PyTorch's).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16, rng=0)
        >>> decoder = nn.TransformerDecoder(layer, num_layers=2, norm=nn.LayerNorm(8))
        >>> decoder(np.ones((4, 3, 8), dtype=np.float32), np.ones((6, 3, 8), dtype=np.float32)).shape
        (4, 3, 8)
    """

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = int(num_layers)
        self.norm = norm

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Any:
        first = self.layers[0] if len(self.layers) else None
        batch_first = bool(first is not None and getattr(first.self_attn, "batch_first", False))
        causal = _causal(tgt_mask, tgt_is_causal, _seq_len(tgt, batch_first))
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=causal,
                      memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """PyTorch's encoder-decoder transformer ("Attention Is All You Need"): an encoder of
    ``num_encoder_layers`` layers and a decoder of ``num_decoder_layers``, each followed by a LayerNorm;
    every matrix drawn Xavier-uniform (PyTorch's ``_reset_parameters``). ``forward(src, tgt, src_mask,
    tgt_mask, memory_mask, src_key_padding_mask, tgt_key_padding_mask, memory_key_padding_mask, ...)``.
    No embedding or output layer: inputs and output have ``d_model`` features.

    Example:
        >>> from chainrule import nn
        >>> nn.Transformer.generate_square_subsequent_mask(3)
        array([[  0., -inf, -inf],
               [  0.,   0., -inf],
               [  0.,   0.,   0.]], dtype=float32)
    """

    def __init__(
        self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
        dim_feedforward: int = 2048, dropout: float = 0.1, activation: str | Callable[[Any], Any] = "relu",
        custom_encoder: Module | None = None, custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5,
        batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
        dtype: Any = None, *, rng: Any = None,
    ) -> None:
        super().__init__()
        gen = init.generator(rng)
        check_cpu("Transformer", device)
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias, None, dtype)  # built on the host, moved at the end
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, rng=gen), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, rng=gen), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        for p in self.parameters():  # PyTorch's _reset_parameters: every matrix Xavier-uniform
            if p.ndim > 1:
                init.xavier_uniform_(p, rng=gen)
        self.d_model, self.nhead, self.batch_first = int(d_model), int(nhead), bool(batch_first)
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def forward(self, src: Any, tgt: Any, src_mask: Any = None, tgt_mask: Any = None, memory_mask: Any = None,
                src_key_padding_mask: Any = None, tgt_key_padding_mask: Any = None,
                memory_key_padding_mask: Any = None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Any:
        s_batch = np.shape(src._data if isinstance(src, Tensor) else src)
        t_batch = np.shape(tgt._data if isinstance(tgt, Tensor) else tgt)
        axis = 0 if self.batch_first else 1
        if len(s_batch) == 3 and len(t_batch) == 3 and s_batch[axis] != t_batch[axis]:
            raise RuntimeError(f"Transformer: the batch number of src ({s_batch[axis]}) and tgt ({t_batch[axis]}) "
                               "must be equal")
        if s_batch[-1] != self.d_model or t_batch[-1] != self.d_model:
            raise RuntimeError(f"Transformer: the feature number of src and tgt must be equal to d_model "
                               f"({self.d_model}), got {s_batch[-1]} and {t_batch[-1]}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> np.ndarray:
        """The causal mask of size ``sz`` (PyTorch's): -inf above the diagonal, 0 on and below (float32), on
        ``device`` (the host when None)."""
        dt = np.dtype(np.float32 if dtype is None else dtype)
        check_cpu("generate_square_subsequent_mask", device)
        return backend(device).from_host(np.triu(np.full((sz, sz), -np.inf, dtype=dt), k=1))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, nhead={self.nhead}, batch_first={self.batch_first}"
