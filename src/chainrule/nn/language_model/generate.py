"""Sampling from a language model: temperature, top-k, top-p (nucleus), seeded, with a key/value cache.

``generate(model, idx, max_new_tokens, ...)`` works with any model whose ``model(idx)`` gives
logits (B, T, vocab) and that has ``config.context_length``; models with ``new_caches(batch)``
and ``model(idx, caches)`` (as :class:`chainrule.nn.GPT`) are run with a key/value cache.
"""

from __future__ import annotations

import math
from contextlib import nullcontext
from typing import Any

import numpy as np

from ...core.defaults import generator
from ...core.device import CPU, as_array, is_off_host, move, of
from ...core.state import no_grad
from ...runtime.blas import ONE_THREAD_BELOW, blas_threads_limited
from ...tensor import Tensor


def filter_logits(logits: np.ndarray, top_k: int | None = None, top_p: float | None = None) -> np.ndarray:
    """Set to -inf every logit outside the ``top_k`` largest and outside the smallest set whose
    probabilities add up to ``top_p`` (rows of a 2-D array; ties at the k-th value are kept).

    Example:
        >>> import numpy as np
        >>> filter_logits(np.array([[1.0, 3.0, 2.0]]), top_k=2)
        array([[-inf,   3.,   2.]])
    """
    out = np.array(logits, dtype=np.float64)
    if top_k is not None:
        if int(top_k) < 1:
            raise ValueError(f"generate: top_k must be a positive integer, got {top_k!r}")
        k = min(int(top_k), out.shape[-1])
        kth = np.partition(out, -k, axis=-1)[:, -k:].min(axis=-1, keepdims=True)
        out[out < kth] = -np.inf
    if top_p is not None:
        if not 0.0 < float(top_p) <= 1.0:
            raise ValueError(f"generate: top_p must be in (0, 1], got {top_p!r}")
        order = np.argsort(-out, axis=-1, kind="stable")
        sorted_logits = np.take_along_axis(out, order, axis=-1)
        p = np.exp(sorted_logits - sorted_logits[:, :1])
        p /= p.sum(axis=-1, keepdims=True)
        before = np.cumsum(p, axis=-1) - p  # probability of the tokens ranked above each one
        drop_sorted = before >= float(top_p)  # keep a token while the ones above it hold less than top_p
        drop = np.zeros_like(drop_sorted)
        np.put_along_axis(drop, order, drop_sorted, axis=-1)
        out[drop] = -np.inf
    return out


def sample_next(logits: np.ndarray, temperature: float, top_k: int | None, top_p: float | None,
                gen: np.random.Generator) -> np.ndarray:
    """One token per row of ``logits`` (B, vocab); temperature 0 picks the most likely token.

    Non-finite probabilities are refused (as ``torch.multinomial`` does): a NaN or +inf logit, which
    a model with non-finite weights gives, raises instead of sampling token 0 again and again.
    """
    if not (math.isfinite(temperature) and temperature >= 0):
        raise ValueError(f"generate: temperature must be a finite number >= 0, got {temperature!r}")
    top = logits.max()  # NaN if any is NaN: one pass for the check of every token
    if not top < np.inf:
        row = int(np.argwhere(np.isnan(logits) | np.isposinf(logits))[0][0])
        raise ValueError(
            f"generate: the model's logits hold NaN or inf (row {row}), so the probabilities are not finite; "
            "its weights are probably not finite (a diverged training run): load a checkpoint from before"
        )
    if temperature == 0:
        return np.argmax(logits, axis=-1)
    with np.errstate(over="ignore", invalid="ignore"):
        z = filter_logits(as_array(logits, dtype=np.float64) / temperature, top_k, top_p)
        p = np.exp(z - z.max(axis=-1, keepdims=True))
    cdf = np.cumsum(p, axis=-1)
    if not np.isfinite(cdf[:, -1]).all():
        raise ValueError(
            f"generate: temperature {temperature!r} makes the probabilities non-finite (the logits divided by it "
            "overflow); use a larger temperature, or 0 for the most likely token"
        )
    u = gen.random((len(z), 1)) * cdf[:, -1:]  # one uniform per row: the same draws with or without a cache
    return np.minimum((cdf <= u).sum(axis=-1), z.shape[-1] - 1)


def sampler(model: Any) -> Any:
    """The function that gives ``model``'s logits for sampling: ``model.sampler()`` where it has one (GPT: on
    its parameters' arrays, its layers checked once for every step of the loop), else ``model.sampling_logits``,
    else the model itself. Call it again after changing the model's layers."""
    make = getattr(model, "sampler", None)
    return make() if make is not None else getattr(model, "sampling_logits", None) or model


def _on_device(run: Any, device: Any) -> Any:
    """``run`` fed with its host tokens moved to ``device`` (one copy of a few integers per step)."""

    def call(tokens: Any, *rest: Any) -> Any:
        return run(move(tokens, device), *rest)

    return call


def generate(model: Any, idx: Any, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
             top_p: float | None = None, seed: Any = None, use_cache: bool = True) -> np.ndarray:
    """Append ``max_new_tokens`` sampled tokens to every row of ``idx`` (B, T); returns int64 (B, T + N), on the
    device ``idx`` was given on (the tokens are sampled on the host: one copy of the prompt there and back).

    With ``use_cache`` the prompt runs once and each new token is one forward step of one token;
    once the sequence fills the context window, each step reruns the last ``context_length``
    tokens (as without a cache, so both give the same tokens for the same seed).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> m = nn.GPT(nn.GPTConfig(vocab_size=10, context_length=8, d_model=8, n_heads=2, n_layers=1), seed=0)
        >>> a = m.generate(np.array([[1, 2]]), 10, top_k=5, seed=3)
        >>> bool((a == m.generate(np.array([[1, 2]]), 10, top_k=5, seed=3, use_cache=False)).all())
        True
    """
    idx = as_array(idx._data if isinstance(idx, Tensor) else idx)
    given_on = of(idx)  # tokens given on a device come back there; they are sampled on the host
    if given_on is not CPU:
        idx = given_on.to_host(idx)
    if idx.ndim == 1:
        idx = idx[None, :]
    if idx.ndim != 2 or idx.shape[1] == 0 or idx.dtype.kind not in "iu":
        raise ValueError(f"generate: idx must be integer tokens of shape (batch, time>=1), got {idx.dtype} {idx.shape}")
    if int(max_new_tokens) < 0:
        raise ValueError(f"generate: max_new_tokens must be >= 0, got {max_new_tokens!r}")
    gen = generator(seed)  # None: the generator manual_seed resets, as PyTorch's sampling
    ctx = model.config.context_length
    out = idx.astype(np.int64)
    was_training = model.training
    model.eval()
    caches = None
    run = sampler(model)
    device = next((of(p._data) for p in model.parameters()), CPU) if hasattr(model, "parameters") else CPU
    if device is not CPU:  # a model on a GPU: the few new tokens go there, the last logits come back to sample
        run = _on_device(run, device)
    n = out.shape[1]
    # a one-token step whose products are all below blas_threads' bound runs on one BLAS thread anyway: say so
    # once for the whole step, and no product checks the thread count (one call into OpenBLAS each)
    sizes = [p._data.size for p in model.parameters()] if hasattr(model, "parameters") else []
    small = bool(sizes) and 2 * len(out) * max(sizes) < ONE_THREAD_BELOW[0]
    out = np.concatenate([out, np.zeros((len(out), int(max_new_tokens)), dtype=np.int64)], axis=1)
    try:
        with no_grad():
            for _ in range(int(max_new_tokens)):
                if use_cache and hasattr(model, "new_caches"):
                    if caches is not None and caches[0].length < ctx:
                        with blas_threads_limited(1) if small else nullcontext():
                            logits = run(out[:, n - 1:n], caches)  # one new token, the rest is cached
                    else:  # first step, or the window is full: run the (last ctx) tokens afresh
                        caches = model.new_caches(len(out))
                        logits = run(out[:, max(0, n - ctx):n], caches)
                else:
                    logits = run(out[:, max(0, n - ctx):n])
                last = (logits._data if isinstance(logits, Tensor) else as_array(logits))[:, -1, :]
                if is_off_host(last):
                    last = of(last).to_host(last)
                out[:, n] = sample_next(last, float(temperature), top_k, top_p, gen)
                n += 1
    finally:
        model.train(was_training)
    return out if given_on is CPU else given_on.from_host(out)
