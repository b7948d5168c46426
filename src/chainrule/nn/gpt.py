"""A small GPT (decoder-only transformer), read top to bottom:

tokens -> token embedding + position embedding -> n_layers x TransformerBlock -> LayerNorm -> logits.

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> model = nn.GPT(nn.GPTConfig(vocab_size=256, context_length=16, d_model=32, n_heads=2, n_layers=2), seed=0)
    >>> model(np.zeros((2, 16), dtype=np.int64)).shape
    (2, 16, 256)
    >>> model.generate(np.array([[1, 2, 3]]), max_new_tokens=5, seed=0).shape
    (1, 8)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..core.device import as_array, xp_of
from ..tensor import Tensor
from . import functional as F
from . import init
from .containers import ModuleList
from .generate import generate
from .gpt_decode import forward_arrays, standard_layout
from .layers import Dropout, Embedding, LayerNorm, Linear
from .module import Module
from .transformer import KVCache, TransformerBlock


@dataclass
class GPTConfig:
    """The shape of a GPT. ``mlp_ratio``: MLP width / d_model; ``tied_embeddings``: the output
    layer reuses the token embedding matrix; ``bias``: Linear and LayerNorm layers have biases."""

    vocab_size: int
    context_length: int = 128
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 4
    mlp_ratio: int = 4
    dropout: float = 0.0
    tied_embeddings: bool = True
    bias: bool = True

    def __post_init__(self) -> None:
        for name in ("vocab_size", "context_length", "d_model", "n_heads", "n_layers", "mlp_ratio"):
            if int(getattr(self, name)) <= 0:
                raise ValueError(f"GPTConfig: {name} must be a positive integer, got {getattr(self, name)!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"GPTConfig: d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"GPTConfig: dropout must be in [0, 1), got {self.dropout}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class GPT(Module):
    """A decoder-only transformer language model.

    - ``model(idx)``: integer tokens (B, T) with T <= context_length -> logits Tensor (B, T, vocab).
    - ``model.generate(idx, max_new_tokens, temperature=1.0, top_k=None, top_p=None, seed=None,
      use_cache=True)``: sample tokens, returns an int ndarray (B, T + max_new_tokens); with the
      key/value cache each new token costs one forward step of one token.
    - ``model.num_parameters()``: how many numbers the parameters hold (tied weights counted once).

    Parameter names: ``wte``, ``wpe`` (embeddings), ``blocks.<i>.{ln_1, attn.c_attn, attn.c_proj,
    ln_2, mlp.0, mlp.2}``, ``ln_f``, and ``lm_head`` when embeddings are not tied. Weights are drawn
    from N(0, 0.02) (residual projections 0.02 / sqrt(2 n_layers)), biases are 0, with ``seed``
    (None: the generator ``nn.manual_seed`` resets).

    Example:
        >>> from chainrule import nn
        >>> nn.GPT(nn.GPTConfig(vocab_size=65, context_length=8, d_model=16, n_heads=2, n_layers=1)).num_parameters()
        4480
    """

    def __init__(self, config: GPTConfig, seed: Any = None, dtype: Any = None) -> None:
        super().__init__()
        c = self.config = config
        self.wte = Embedding(c.vocab_size, c.d_model, dtype=dtype, rng=seed)
        self.wpe = Embedding(c.context_length, c.d_model, dtype=dtype, rng=seed)
        self.drop = Dropout(c.dropout, rng=seed)
        self.blocks = ModuleList(
            TransformerBlock(c.d_model, c.n_heads, c.mlp_ratio, c.dropout, c.bias, dtype, seed)
            for _ in range(c.n_layers)
        )
        self.ln_f = LayerNorm(c.d_model, bias=c.bias, dtype=dtype)
        self.lm_head = None if c.tied_embeddings else Linear(c.d_model, c.vocab_size, bias=False, dtype=dtype)
        self._init_weights(init.generator(seed))

    def forward(self, idx: Any, caches: list[KVCache] | None = None) -> Any:
        idx = as_array(idx)
        b, t = self._check_tokens(idx)
        start = caches[0].length if caches else 0
        x = self.drop(self.wte(idx) + self.wpe(xp_of(idx).arange(start, start + t)))  # positions where idx is
        for i, block in enumerate(self.blocks):
            x = block(x, caches[i] if caches else None)
        x = self.ln_f(x)
        return F.linear(x, self.wte.weight) if self.lm_head is None else self.lm_head(x)

    def generate(self, idx: Any, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None, seed: Any = None, use_cache: bool = True) -> np.ndarray:
        """Append ``max_new_tokens`` sampled tokens to ``idx`` (B, T); see :func:`chainrule.nn.generate.generate`."""
        return generate(self, idx, max_new_tokens, temperature, top_k, top_p, seed, use_cache)

    def sampling_logits(self, idx: Any, caches: list[KVCache] | None = None) -> np.ndarray:
        """``model(idx, caches)``'s logits as a NumPy array, for sampling (under ``no_grad``, in eval mode).

        A model with the standard layout runs on its parameters' arrays (the same arithmetic,
        without a Tensor per op: :mod:`chainrule.nn.gpt_decode`); any other runs ``model(idx, caches)``.
        """
        if standard_layout(self):
            return forward_arrays(self, as_array(idx), caches)
        logits = self(idx, caches)
        return logits._data if isinstance(logits, Tensor) else as_array(logits)

    def new_caches(self, batch: int) -> list[KVCache]:
        """One empty key/value cache per block, for ``batch`` sequences of up to context_length tokens."""
        c = self.config
        dt = self.wte.weight._data.dtype
        xp = xp_of(self.wte.weight._data)  # on the parameters' device
        return [KVCache(batch, c.n_heads, c.context_length, c.d_model // c.n_heads, dt, xp) for _ in range(c.n_layers)]

    # -- details -----------------------------------------------------------------------------------
    def _check_tokens(self, idx: np.ndarray) -> tuple[int, int]:
        c = self.config
        if idx.ndim != 2 or idx.dtype.kind not in "iu":
            raise ValueError(f"GPT: idx must be an integer array of shape (batch, time), got {idx.dtype} {idx.shape}")
        if idx.shape[1] > c.context_length:
            raise ValueError(
                f"GPT: {idx.shape[1]} tokens exceed context_length={c.context_length}; "
                f"pass idx[:, -{c.context_length}:]"
            )
        if idx.size and (idx.min() < 0 or idx.max() >= c.vocab_size):
            raise ValueError(f"GPT: token ids must be in [0, {c.vocab_size}), got {idx.min()}..{idx.max()}")
        return idx.shape

    def _init_weights(self, gen: np.random.Generator) -> None:
        residual_std = 0.02 / math.sqrt(2 * self.config.n_layers)
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                p._data[...] = 0.0
            elif name.startswith("ln") or ".ln_" in name:
                p._data[...] = 1.0
            else:
                std = residual_std if name.endswith(("c_proj.weight", "mlp.2.weight")) else 0.02
                p._data[...] = gen.normal(0.0, std, p._data.shape)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.config.to_dict().items())
