"""A small GPT (decoder-only transformer), read top to bottom:

tokens -> token embedding + position embedding -> n_layers x TransformerBlock -> LayerNorm -> logits
(GPT-2's recipe); the modern recipe (``GPTConfig.from_recipe("modern", ...)``: RMSNorm, rotary positions,
SwiGLU, grouped-query attention, no biases) runs n_layers x :class:`chainrule.nn.language_model.modern.ModernBlock`
and adds no position embedding.

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
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ...core.device import as_array, check_cpu, check_indices, is_off_host, xp_of
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..containers import ModuleList
from ..layers import Dropout, Embedding, Linear
from ..module import Module
from ..module_placement import place
from ..transformer import KVCache, TransformerBlock
from .decode import forward_arrays, standard_layout
from .generate import generate
from .modern import ModernBlock, make_norm, modern_layout, swiglu_hidden
from .modern import forward_arrays as modern_forward_arrays

RECIPES: dict[str, dict[str, Any]] = {
    "gpt2": dict(norm="layer", mlp="gelu", position="learned", bias=True),
    "modern": dict(norm="rms", mlp="swiglu", position="rope", bias=False),
}
"""The recipes' choices; every other field keeps its default unless given."""


@dataclass
class GPTConfig:
    """The shape of a GPT. ``mlp_ratio``: MLP width / d_model; ``tied_embeddings``: the output
    layer reuses the token embedding matrix; ``bias``: Linear and LayerNorm layers have biases.

    The recipe (defaults: GPT-2's): ``norm`` "layer" or "rms" (RMSNorm); ``mlp`` "gelu" or "swiglu";
    ``position`` "learned" (a position embedding added to the tokens) or "rope" (rotary: queries and
    keys turned by position, base ``rope_theta``); ``n_kv_heads`` key/value heads (None: n_heads;
    fewer: grouped-query attention); ``mlp_hidden`` the MLP's width (None: ``mlp_ratio * d_model``,
    for SwiGLU 2/3 of it rounded up to a multiple of 8). :meth:`from_recipe` fills them by name.

    Example:
        >>> c = GPTConfig.from_recipe("modern", vocab_size=256, n_kv_heads=2)
        >>> c.recipe, c.norm, c.position, c.hidden, c.bias
        ('modern', 'rms', 'rope', 344, False)
    """

    vocab_size: int
    context_length: int = 128
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 4
    mlp_ratio: int = 4
    dropout: float = 0.0
    tied_embeddings: bool = True
    bias: bool = True
    norm: str = "layer"
    mlp: str = "gelu"
    position: str = "learned"
    n_kv_heads: int | None = None
    rope_theta: float = 10000.0
    mlp_hidden: int | None = None

    @classmethod
    def from_recipe(cls, recipe: str, **fields: Any) -> GPTConfig:
        """A config with ``recipe``'s choices ("gpt2" or "modern"; see :data:`RECIPES`), then ``fields``."""
        if recipe not in RECIPES:
            raise ValueError(f"GPTConfig: recipe must be one of {sorted(RECIPES)}, got {recipe!r}")
        return cls(**{**RECIPES[recipe], **fields})

    @property
    def recipe(self) -> str:
        """"gpt2" or "modern" when the norm, MLP, positions and biases are that recipe's, else "custom"."""
        for name, choices in RECIPES.items():
            if all(getattr(self, k) == v for k, v in choices.items()):
                return name
        return "custom"

    @property
    def kv_heads(self) -> int:
        return self.n_heads if self.n_kv_heads is None else int(self.n_kv_heads)

    @property
    def hidden(self) -> int:
        if self.mlp_hidden is not None:
            return int(self.mlp_hidden)
        return swiglu_hidden(self.d_model, self.mlp_ratio) if self.mlp == "swiglu" else self.mlp_ratio * self.d_model

    @property
    def gpt2_layout(self) -> bool:
        """True when the blocks are GPT-2's (:class:`TransformerBlock`) and positions are learned."""
        return (self.norm, self.mlp, self.position, self.kv_heads, self.hidden) == (
            "layer", "gelu", "learned", self.n_heads, self.mlp_ratio * self.d_model)

    def __post_init__(self) -> None:
        for name in ("vocab_size", "context_length", "d_model", "n_heads", "n_layers", "mlp_ratio"):
            if int(getattr(self, name)) <= 0:
                raise ValueError(f"GPTConfig: {name} must be a positive integer, got {getattr(self, name)!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"GPTConfig: d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"GPTConfig: dropout must be in [0, 1), got {self.dropout}")
        for name, allowed in (("norm", ("layer", "rms")), ("mlp", ("gelu", "swiglu")),
                              ("position", ("learned", "rope"))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"GPTConfig: {name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.n_kv_heads is not None and (int(self.n_kv_heads) <= 0 or self.n_heads % int(self.n_kv_heads)):
            raise ValueError(f"GPTConfig: n_kv_heads={self.n_kv_heads} must be a positive divisor of "
                             f"n_heads={self.n_heads} (or None: as many as n_heads)")
        if self.mlp_hidden is not None and int(self.mlp_hidden) <= 0:
            raise ValueError(f"GPTConfig: mlp_hidden must be a positive integer or None, got {self.mlp_hidden!r}")
        if self.position == "rope" and (self.d_model // self.n_heads) % 2:
            raise ValueError(f"GPTConfig: rotary positions turn feature pairs: the head size d_model / n_heads = "
                             f"{self.d_model // self.n_heads} must be even")
        if not (math.isfinite(self.rope_theta) and self.rope_theta > 1):
            raise ValueError(f"GPTConfig: rope_theta must be a finite number > 1, got {self.rope_theta!r}")

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
    ln_2, mlp.0, mlp.2}`` (modern: ``mlp.{w1, w3, w2}``, no ``wpe`` with rotary positions), ``ln_f``, and
    ``lm_head`` when embeddings are not tied. Weights are drawn
    from N(0, 0.02) (residual projections 0.02 / sqrt(2 n_layers)), biases are 0, with ``seed``
    (None: the generator ``nn.manual_seed`` resets).

    Example:
        >>> from chainrule import nn
        >>> nn.GPT(nn.GPTConfig(vocab_size=65, context_length=8, d_model=16, n_heads=2, n_layers=1)).num_parameters()
        4480
    """

    def __init__(self, config: GPTConfig, seed: Any = None, dtype: Any = None, *, device: Any = None) -> None:
        super().__init__()
        check_cpu("GPT", device)
        c = self.config = config
        self.wte = Embedding(c.vocab_size, c.d_model, dtype=dtype, rng=seed)
        self.wpe = Embedding(c.context_length, c.d_model, dtype=dtype, rng=seed) if c.position == "learned" else None
        self.drop = Dropout(c.dropout, rng=seed)
        if c.gpt2_layout:
            self.blocks = ModuleList(
                TransformerBlock(c.d_model, c.n_heads, c.mlp_ratio, c.dropout, c.bias, dtype, seed)
                for _ in range(c.n_layers)
            )
        else:
            self.blocks = ModuleList(ModernBlock(c, dtype, seed) for _ in range(c.n_layers))
        self.ln_f = make_norm(c, dtype)
        self.lm_head = None if c.tied_embeddings else Linear(c.d_model, c.vocab_size, bias=False, dtype=dtype)
        self._init_weights(init.generator(seed))
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def forward(self, idx: Any, caches: list[KVCache] | None = None) -> Any:
        idx = as_array(idx)
        b, t = self._check_tokens(idx, ids=False)
        start = caches[0].length if caches else 0
        x = self._token_embedding(idx)
        if self.wpe is not None:  # rows start..start+t of the table: a view (no index array, no gather, no check)
            if start + t > self.wpe.num_embeddings:
                raise IndexError(f"GPT: positions {start}..{start + t - 1} are past the {self.wpe.num_embeddings} "
                                 "learned ones (context_length); start a new cache for a longer text")
            x = x + self.wpe.weight[start:start + t]
        positions = None if self.config.gpt2_layout else xp_of(idx).arange(start, start + t)  # where idx is
        x = self.drop(x)
        for i, block in enumerate(self.blocks):
            cache = caches[i] if caches else None
            x = block(x, cache) if isinstance(block, TransformerBlock) else block(x, positions, cache)
        x = self.ln_f(x)
        return F.linear(x, self.wte.weight) if self.lm_head is None else self.lm_head(x)

    def generate(self, idx: Any, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None, seed: Any = None, use_cache: bool = True) -> np.ndarray:
        """Append ``max_new_tokens`` sampled tokens to ``idx`` (B, T); see :func:`chainrule.nn.generate`."""
        return generate(self, idx, max_new_tokens, temperature, top_k, top_p, seed, use_cache)

    def sampling_logits(self, idx: Any, caches: list[KVCache] | None = None) -> np.ndarray:
        """``model(idx, caches)``'s logits as a NumPy array, for sampling (under ``no_grad``, in eval mode).

        A model with the standard layout runs on its parameters' arrays (the same arithmetic,
        without a Tensor per op: :mod:`chainrule.nn.language_model.decode`, and for the modern blocks
        :func:`chainrule.nn.language_model.modern.forward_arrays`); any other runs ``model(idx, caches)``.
        """
        if standard_layout(self):
            return forward_arrays(self, as_array(idx), caches)
        if modern_layout(self):
            return modern_forward_arrays(self, as_array(idx), caches)
        logits = self(idx, caches)
        return logits._data if isinstance(logits, Tensor) else as_array(logits)

    def sampler(self) -> Callable[..., np.ndarray]:
        """:meth:`sampling_logits` with the layout checked once, for the steps of one sampling loop (which
        change neither the layers nor the mode)."""
        run = forward_arrays if standard_layout(self) else modern_forward_arrays if modern_layout(self) else None
        if run is None:
            return self.sampling_logits
        return lambda idx, caches=None: run(self, as_array(idx), caches)

    def new_caches(self, batch: int) -> list[KVCache]:
        """One empty key/value cache per block, for ``batch`` sequences of up to context_length tokens."""
        c = self.config
        dt = self.wte.weight._data.dtype
        xp = xp_of(self.wte.weight._data)  # on the parameters' device
        hd = c.d_model // c.n_heads
        return [KVCache(batch, c.kv_heads, c.context_length, hd, dt, xp) for _ in range(c.n_layers)]

    # -- details -----------------------------------------------------------------------------------
    def _token_embedding(self, idx: Any) -> Any:
        """``wte(idx)``, whose range check of the ids is the model's (one check). A device's ids: the check is
        queued (read with the next value read, see :func:`chainrule.core.device.check_indices`), then the rows."""
        if is_off_host(idx):
            check_indices(idx, self.config.vocab_size, lambda: self._ids_error(idx))
            return self.wte.weight[idx]
        try:
            return self.wte(idx)
        except IndexError as e:
            raise self._ids_error(idx) from e

    def _ids_error(self, idx: Any) -> ValueError:
        return ValueError(f"GPT: token ids must be in [0, {self.config.vocab_size}), got {int(idx.min())}.."
                          f"{int(idx.max())}")

    def _check_tokens(self, idx: np.ndarray, ids: bool = True) -> tuple[int, int]:
        """(batch, time) of ``idx``, checked: its type, its length, and (``ids``) the range of its ids."""
        c = self.config
        if idx.ndim != 2 or idx.dtype.kind not in "iu":
            raise ValueError(f"GPT: idx must be an integer array of shape (batch, time), got {idx.dtype} {idx.shape}")
        if idx.shape[1] > c.context_length:
            raise ValueError(
                f"GPT: {idx.shape[1]} tokens exceed context_length={c.context_length}; "
                f"pass idx[:, -{c.context_length}:]"
            )
        if ids:
            check_indices(idx, c.vocab_size, lambda: self._ids_error(idx))
        return idx.shape

    def _init_weights(self, gen: np.random.Generator) -> None:
        residual_std = 0.02 / math.sqrt(2 * self.config.n_layers)
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                p._data[...] = 0.0
            elif name.startswith("ln") or ".ln_" in name:
                p._data[...] = 1.0
            else:
                std = residual_std if name.endswith(("c_proj.weight", "mlp.2.weight", "mlp.w2.weight")) else 0.02
                p._data[...] = gen.normal(0.0, std, p._data.shape)

    def extra_repr(self) -> str:
        defaults = GPTConfig(vocab_size=1).to_dict()
        recipe_fields = ("norm", "mlp", "position", "n_kv_heads", "rope_theta", "mlp_hidden")
        return ", ".join(f"{k}={v}" for k, v in self.config.to_dict().items()
                         if k not in recipe_fields or v != defaults[k])
