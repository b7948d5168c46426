"""PyTorch twin of ``chainrule.nn.GPT`` for any recipe (the modern one: RMSNorm, rotary positions,
SwiGLU, grouped-query attention, no biases), written from the papers' definitions with torch's own
layers, for the oracle tests (tests/test_gpt_modern.py).

``TorchModernGPT(config)`` takes a ``chainrule.nn.GPTConfig``; its parameters have chainrule's names,
so ``_torch_gpt.copy_weights`` gives it a chainrule model's weights.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F


def rotate(x: torch.Tensor, positions: torch.Tensor, theta: float) -> torch.Tensor:
    """RoPE, "rotate half" layout: feature i pairs with i + hd/2, turned by position * theta^(-2i/hd)."""
    hd = x.shape[-1]
    inv_freq = theta ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    cos, sin = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)
    x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def norm(c: Any) -> nn.Module:
    return nn.RMSNorm(c.d_model, eps=1e-5) if c.norm == "rms" else nn.LayerNorm(c.d_model, bias=c.bias)


class Attention(nn.Module):
    def __init__(self, c: Any) -> None:
        super().__init__()
        self.h, self.kv, self.hd = c.n_heads, c.kv_heads, c.d_model // c.n_heads
        self.rope, self.theta = c.position == "rope", c.rope_theta
        self.c_attn = nn.Linear(c.d_model, (self.h + 2 * self.kv) * self.hd, bias=c.bias)
        self.c_proj = nn.Linear(c.d_model, c.d_model, bias=c.bias)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, cache: dict[str, torch.Tensor] | None) -> torch.Tensor:
        b, t, d = x.shape
        qkv = self.c_attn(x).view(b, t, self.h + 2 * self.kv, self.hd).transpose(1, 2)
        q, k, v = qkv.split([self.h, self.kv, self.kv], dim=1)
        if self.rope:
            q, k = rotate(q, positions, self.theta), rotate(k, positions, self.theta)
        causal = True
        if cache is not None:
            if "k" in cache:
                k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
                causal = False  # one new token (the twin's cache path is used one token at a time)
            cache["k"], cache["v"] = k, v
        rep = self.h // self.kv  # grouped-query attention: each key/value head serves `rep` query heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return self.c_proj(y.transpose(1, 2).reshape(b, t, d))


class SwiGLU(nn.Module):
    def __init__(self, c: Any) -> None:
        super().__init__()
        self.w1 = nn.Linear(c.d_model, c.hidden, bias=c.bias)
        self.w3 = nn.Linear(c.d_model, c.hidden, bias=c.bias)
        self.w2 = nn.Linear(c.hidden, c.d_model, bias=c.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, c: Any) -> None:
        super().__init__()
        self.ln_1, self.attn, self.ln_2 = norm(c), Attention(c), norm(c)
        self.mlp = SwiGLU(c) if c.mlp == "swiglu" else nn.Sequential(
            nn.Linear(c.d_model, c.hidden, bias=c.bias), nn.GELU(), nn.Linear(c.hidden, c.d_model, bias=c.bias))

    def forward(self, x: torch.Tensor, positions: torch.Tensor, cache: Any) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x), positions, cache)
        return x + self.mlp(self.ln_2(x))


class TorchModernGPT(nn.Module):
    def __init__(self, c: Any) -> None:
        super().__init__()
        self.config = c
        self.wte = nn.Embedding(c.vocab_size, c.d_model)
        self.wpe = nn.Embedding(c.context_length, c.d_model) if c.position == "learned" else None
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.n_layers))
        self.ln_f = norm(c)
        self.lm_head = None if c.tied_embeddings else nn.Linear(c.d_model, c.vocab_size, bias=False)

    def forward(self, idx: torch.Tensor, caches: list[dict[str, torch.Tensor]] | None = None) -> torch.Tensor:
        t = idx.shape[1]
        start = caches[0]["k"].shape[2] if caches and "k" in caches[0] else 0
        positions = torch.arange(start, start + t)
        x = self.wte(idx) if self.wpe is None else self.wte(idx) + self.wpe(positions)
        for i, block in enumerate(self.blocks):
            x = block(x, positions, caches[i] if caches else None)
        x = self.ln_f(x)
        return x @ self.wte.weight.T if self.lm_head is None else self.lm_head(x)


def greedy(model: TorchModernGPT, idx: torch.Tensor, n: int) -> torch.Tensor:
    """``n`` most likely tokens, one at a time with the key/value cache."""
    caches: list[dict[str, torch.Tensor]] = [{} for _ in model.blocks]
    step_in = idx
    with torch.no_grad():
        for _ in range(n):
            nxt = model(step_in, caches)[:, -1, :].argmax(-1, keepdim=True)
            idx, step_in = torch.cat([idx, nxt], dim=1), nxt
    return idx

