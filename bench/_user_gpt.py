"""A GPT a user writes from chainrule's public layers (docs/gpt.md's ``TinyGPT``), for the speed table of
bench_gpt_recipes.py: the same architecture and parameter names as ``nn.GPT``'s GPT-2 recipe, so it loads
that model's weights, and PyTorch's twin is bench/_torch_gpt.py's ``TorchGPT``."""

from __future__ import annotations

import numpy as np

import chainrule.nn.functional as F
from chainrule import nn


class SelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, t, d = x.shape
        h = self.n_heads
        qkv = self.c_attn(x).reshape(b, t, 3, h, d // h).transpose(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)
        return self.c_proj(y.transpose(0, 2, 1, 3).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(d_model), SelfAttention(d_model, n_heads)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab, context, d_model, n_heads, n_layers):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d_model), nn.Embedding(context, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(np.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)
