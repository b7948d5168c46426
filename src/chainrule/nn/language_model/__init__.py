"""The GPT language model: the GPT-2 block and the modern one (RoPE, RMSNorm, SwiGLU, grouped-query
attention), the key/value-cached decoding path, and seeded sampling."""

from __future__ import annotations

from .generate import generate
from .model import GPT, GPTConfig

__all__ = ["GPT", "GPTConfig", "generate"]
