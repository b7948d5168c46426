"""PyTorch twin of ``chainrule.nn.GPT``: the same layers, names and arithmetic, for the oracle
test (tests/test_gpt_oracle.py) and the speed comparison (bench_gpt.py).

``TorchGPT(config)`` takes a ``chainrule.nn.GPTConfig``; ``copy_weights(torch_model, cr_model)``
makes it hold the chainrule model's weights (same parameter names), and
``torch_weight_decay_groups`` splits its parameters as ``chainrule.optim.weight_decay_groups``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


class TorchAttention(nn.Module):
    def __init__(self, d: int, h: int, bias: bool, dropout: float) -> None:
        super().__init__()
        self.h = h
        self.c_attn = nn.Linear(d, 3 * d, bias=bias)
        self.c_proj = nn.Linear(d, d, bias=bias)
        self.dropout = dropout
        self.resid_drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, cache: dict[str, torch.Tensor] | None = None) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.c_attn(x).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        p = self.dropout if self.training else 0.0
        if cache is not None and "k" in cache:  # one new token attends to every cached one
            k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
            y = F.scaled_dot_product_attention(q, k, v)
        else:
            if cache is not None:
                cache["k"], cache["v"] = k, v
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p)
        return self.resid_drop(self.c_proj(y.transpose(1, 2).reshape(b, t, d)))


class TorchBlock(nn.Module):
    def __init__(self, d: int, h: int, ratio: int, bias: bool, dropout: float) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(d, bias=bias)
        self.attn = TorchAttention(d, h, bias, dropout)
        self.ln_2 = nn.LayerNorm(d, bias=bias)
        self.mlp = nn.Sequential(nn.Linear(d, ratio * d, bias=bias), nn.GELU(), nn.Linear(ratio * d, d, bias=bias),
                                 nn.Dropout(dropout))

    def forward(self, x: torch.Tensor, cache: dict[str, torch.Tensor] | None = None) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))


class TorchGPT(nn.Module):
    def __init__(self, c: Any) -> None:
        super().__init__()
        self.config = c
        self.wte = nn.Embedding(c.vocab_size, c.d_model)
        self.wpe = nn.Embedding(c.context_length, c.d_model)
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(TorchBlock(c.d_model, c.n_heads, c.mlp_ratio, c.bias, c.dropout)
                                    for _ in range(c.n_layers))
        self.ln_f = nn.LayerNorm(c.d_model, bias=c.bias)
        self.lm_head = None if c.tied_embeddings else nn.Linear(c.d_model, c.vocab_size, bias=False)
        std = 0.02 / math.sqrt(2 * c.n_layers)
        for name, p in self.named_parameters():  # GPT-2's initialisation, as chainrule's GPT
            with torch.no_grad():
                if name.endswith("bias"):
                    p.zero_()
                elif ".ln_" in name or name.startswith("ln"):
                    p.fill_(1.0)
                else:
                    p.normal_(0.0, std if name.endswith(("c_proj.weight", "mlp.2.weight")) else 0.02)

    def forward(self, idx: torch.Tensor, caches: list[dict[str, torch.Tensor]] | None = None) -> torch.Tensor:
        t = idx.shape[1]
        start = caches[0]["k"].shape[2] if caches and "k" in caches[0] else 0
        x = self.drop(self.wte(idx) + self.wpe(torch.arange(start, start + t, device=idx.device)))
        for i, block in enumerate(self.blocks):
            x = block(x, caches[i] if caches else None)
        x = self.ln_f(x)
        return x @ self.wte.weight.T if self.lm_head is None else self.lm_head(x)

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, max_new_tokens: int, gen: torch.Generator, use_cache: bool = True,
                 temperature: float = 1.0) -> torch.Tensor:
        """Sampling, the loop chainrule's ``generate`` runs: the prompt once, then one token per step
        with a key/value cache (``use_cache``; the sequence must stay within the context), or the
        whole window again for every token."""
        if use_cache and idx.shape[1] + max_new_tokens > self.config.context_length:
            raise ValueError("TorchGPT.generate: with the cache the sequence must fit the context")
        caches: list[dict[str, torch.Tensor]] | None = [{} for _ in self.blocks] if use_cache else None
        step_in = idx
        for _ in range(max_new_tokens):
            logits = self(step_in if use_cache else idx[:, -self.config.context_length:], caches)[:, -1, :]
            nxt = torch.multinomial(torch.softmax(logits / temperature, dim=-1), 1, generator=gen)
            idx = torch.cat([idx, nxt], dim=1)
            step_in = nxt
        return idx


def copy_weights(torch_model: nn.Module, cr_model: Any) -> None:
    """Give the torch twin the chainrule model's weights (and dtype)."""
    cr = dict(cr_model.named_parameters())
    names = [n for n, _ in torch_model.named_parameters()]
    if sorted(names) != sorted(cr):
        raise ValueError(f"the twins' parameter names differ: {sorted(set(names) ^ set(cr))}")
    dtype = torch.float64 if cr["wte.weight"].data.dtype == np.float64 else torch.float32
    torch_model.to(dtype)
    with torch.no_grad():
        for name, p in torch_model.named_parameters():
            p.copy_(torch.from_numpy(np.array(cr[name].data)))


def torch_weight_decay_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Decay only the weight matrices of Linear layers (biases, norms and embeddings not)."""
    quiet = {id(p) for m in model.modules() if isinstance(m, (nn.Embedding, nn.LayerNorm))
             for p in m.parameters(recurse=False)}
    decay, rest = [], []
    for name, p in model.named_parameters():
        (rest if id(p) in quiet or name.endswith("bias") or p.ndim < 2 else decay).append(p)
    return [g for g in ({"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0})
            if g["params"]]


def warmup_cosine(optimizer: torch.optim.Optimizer, warmup: int, total: int, eta_min: float,
                  start_factor: float = 0.1) -> torch.optim.lr_scheduler.LRScheduler:
    """PyTorch's schedulers chained: linear warm-up, then cosine to eta_min at ``total``."""
    lin = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=start_factor, end_factor=1.0, total_iters=warmup)
    cos = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total - warmup, eta_min=eta_min)
    return torch.optim.lr_scheduler.SequentialLR(optimizer, [lin, cos], milestones=[warmup])
