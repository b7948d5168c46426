"""Sizes before allocating: how many numbers a GPT holds and roughly how many bytes training or
sampling it takes, checked against the machine's memory up front, so a size typed by mistake
(``--layers 1e6``) ends in one line naming the estimate and the limit instead of a MemoryError.

Example:
    >>> from chainrule import nn
    >>> from chainrule.gpt.memory import parameter_count
    >>> config = nn.GPTConfig(vocab_size=65, context_length=8, d_model=16, n_heads=2, n_layers=1)
    >>> parameter_count(config) == nn.GPT(config).num_parameters()
    True
"""

from __future__ import annotations

import os
from typing import Any

from .errors import GPTError

__all__ = ["parameter_count", "training_bytes", "sampling_bytes", "memory_limit", "check_fits"]

BYTES_PER_NEW_TOKEN = 64  # the int64 id, its Python int in the list that is decoded, and its text


def parameter_count(config: Any) -> int:
    """The numbers a :class:`chainrule.nn.GPT` of this config holds (tied embeddings counted once), by formula."""
    c = config
    d, b, h = int(c.d_model), int(bool(c.bias)), int(c.n_heads)
    kv = h if getattr(c, "n_kv_heads", None) is None else int(c.n_kv_heads)
    hidden = c.hidden if hasattr(c, "hidden") else int(c.mlp_ratio) * d
    norm = d if getattr(c, "norm", "layer") == "rms" else d * (1 + b)
    qkv = (h + 2 * kv) * (d // h)
    attn = d * qkv + b * qkv + d * d + b * d
    if getattr(c, "mlp", "gelu") == "swiglu":
        mlp = 3 * d * hidden + b * (2 * hidden + d)
    else:
        mlp = 2 * d * hidden + b * (hidden + d)
    positions = int(c.context_length) * d if getattr(c, "position", "learned") == "learned" else 0
    head = 0 if c.tied_embeddings else int(c.vocab_size) * d
    return int(c.vocab_size) * d + positions + int(c.n_layers) * (2 * norm + attn + mlp) + norm + head


def training_bytes(config: Any, batch_size: int, itemsize: int) -> int:
    """A rough (generous) estimate of the memory a training step takes: weights, gradients and the
    two AdamW moments, plus the activations kept for the backward pass (per token and layer about
    (11 + 2 mlp_ratio) d_model numbers and one attention row per head; logits three times), twice."""
    c = config
    tokens = int(batch_size) * int(c.context_length)
    d, heads, context = int(c.d_model), int(c.n_heads), int(c.context_length)
    per_token = int(c.n_layers) * ((11 + 2 * int(c.mlp_ratio)) * d + heads * context)
    activations = 2 * tokens * (per_token + 3 * int(c.vocab_size))
    return (4 * parameter_count(c) + activations) * int(itemsize)


def sampling_bytes(config: Any, new_tokens: int, itemsize: int) -> int:
    """A rough estimate of the memory sampling ``new_tokens`` takes: the weights, the key/value caches
    and, per new token, its id and its text."""
    c = config
    kv_share = getattr(c, "kv_heads", c.n_heads) / int(c.n_heads)  # grouped-query attention caches fewer heads
    caches = int(2 * int(c.n_layers) * int(c.context_length) * int(c.d_model) * kv_share) * int(itemsize)
    return parameter_count(c) * int(itemsize) + caches + BYTES_PER_NEW_TOKEN * int(new_tokens)


def memory_limit() -> int | None:
    """The memory this process may use: the machine's physical memory, or a smaller cgroup limit
    (containers); ``None`` where neither can be read."""
    limits = []
    try:
        limits.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit():
            limits.append(int(text))
    limits = [n for n in limits if n > 0]
    return min(limits) if limits else None


def _gb(n: float) -> str:
    return f"{n / 1e9:,.1f} GB" if n >= 1e8 else f"{n / 1e6:,.1f} MB"


def check_fits(what: str, needed: int, fix: str, limit: int | None = None) -> None:
    """Raise :class:`GPTError` when ``needed`` bytes exceed the memory limit, naming both and ``fix``."""
    limit = memory_limit() if limit is None else limit
    if limit is not None and needed > limit:
        raise GPTError(f"{what} needs about {_gb(needed)} of memory, more than this machine's {_gb(limit)}; {fix}")
