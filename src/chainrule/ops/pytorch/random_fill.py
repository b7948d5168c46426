"""PyTorch's in-place random fills ``Tensor.uniform_`` and ``Tensor.normal_`` (as ``nn.init`` uses them).

They draw from the generator of ``chainrule.nn.init.manual_seed`` (or ``generator=``), so they live
above the ops layer; the in-place rules are those of the other in-place methods (refused on a leaf
that requires grad outside ``no_grad``).

Example:
    >>> import chainrule as cr
    >>> w = cr.Tensor([0.0, 0.0, 0.0], requires_grad=True)
    >>> with cr.no_grad():
    ...     _ = w.uniform_(2.0, 2.5)
    >>> bool(((w >= 2.0) & (w < 2.5)).all())
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.defaults import generator as default_generator
from ...core.device import constant_on, is_off_host, uniform_like, xp_of
from ...tensor import Tensor
from ..declare import tensor_method
from .common import in_place

_generator = default_generator


def _draws(d: Any, how: Any, generator: Any) -> Any:
    """``how(random, shape)`` for the array ``d``: on a device from its own generator (seeded by ``manual_seed``;
    ``random`` is its ``xp.random``), else from ``generator`` (or the default one) on the host, copied to where
    ``d`` is."""
    if generator is None and is_off_host(d):
        return how(xp_of(d).random, d.shape)
    return constant_on(d, np.asarray(how(_generator(generator), d.shape)))


@tensor_method("uniform_")
def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    """In place: values drawn uniformly from [a, b) (``nn.init.manual_seed``'s generator, or ``generator``)."""
    return in_place("uniform_", lambda d: _draws(d, lambda r, s: r.uniform(a, b, s), generator))(self)


@tensor_method("normal_")
def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """In place: values drawn from a normal distribution (``nn.init.manual_seed``'s generator, or ``generator``)."""
    return in_place("normal_", lambda d: _draws(d, lambda r, s: r.normal(mean, std, s), generator))(self)


def multinomial(probs: Any, num_samples: int, replacement: bool = False, *, generator: Any = None) -> Tensor:
    """PyTorch's ``multinomial``: ``num_samples`` category indices per row of ``probs`` (1-d or 2-d, non-negative
    weights that need not sum to 1), drawn from ``nn.init.manual_seed``'s generator (or ``generator``); int64.
    Without ``replacement`` a category is drawn at most once per row (zero-weight ones last, as PyTorch).

    Example:
        >>> import chainrule as cr
        >>> cr.multinomial(cr.tensor([0.0, 1.0, 0.0]), 2, replacement=True)
        Tensor([1, 1])
    """
    data = probs._data if isinstance(probs, Tensor) else probs
    p = data.astype(np.float64) if is_off_host(data) else np.asarray(data, dtype=np.float64)
    if p.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: probs must be 1-d or 2-d, got shape {p.shape}")
    if isinstance(num_samples, bool) or int(num_samples) != num_samples or num_samples <= 0:
        raise RuntimeError(f"multinomial: cannot sample num_samples={num_samples!r}; it must be a positive int")
    num_samples = int(num_samples)
    if not np.isfinite(p).all() or (p < 0).any():
        raise RuntimeError("multinomial: probability tensor contains either inf, nan or element < 0")
    rows = p.reshape(-1, p.shape[-1])
    if (rows.sum(-1) <= 0).any():
        raise RuntimeError("multinomial: invalid multinomial distribution (sum of probabilities <= 0) in a row")
    if not replacement:
        if num_samples > p.shape[-1]:
            raise RuntimeError(f"multinomial: cannot sample {num_samples} > {p.shape[-1]} categories without "
                               "replacement; pass replacement=True")
    if is_off_host(p):
        return Tensor._wrap(_drawn_on_device(rows, num_samples, replacement, generator).reshape(
            p.shape[:-1] + (num_samples,)))
    rng = _generator(generator)
    if replacement:
        out = np.stack([rng.choice(len(r), num_samples, p=r / r.sum()) for r in rows])
    else:  # PyTorch's way: the largest p / Exp(1) keys; zero-weight categories come last
        keys = rows / rng.exponential(size=rows.shape)
        out = np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples]
    return Tensor._wrap(out.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64))


def _drawn_on_device(rows: Any, num_samples: int, replacement: bool, generator: Any) -> Any:
    """``multinomial``'s draws for a device's weights (rows x categories), made there: from the device's own
    generator (seeded by ``manual_seed``), or from ``generator`` on the host and copied, as PyTorch's CUDA draws
    differ from its CPU ones. With replacement, the inverse of each row's running sum; without, the same keys
    ``p / Exp(1)`` as on the host."""
    rng = None if generator is None else _generator(generator)
    if replacement:
        cdf = np.cumsum(rows, axis=-1)
        target = uniform_like(rows, (rows.shape[0], num_samples), rng) * cdf[:, -1:]
        picked = (target[:, :, None] >= cdf[:, None, :]).sum(axis=-1)  # the first category whose sum passes it
        return np.minimum(picked, rows.shape[-1] - 1).astype(np.int64)
    keys = rows / -np.log1p(-uniform_like(rows, rows.shape, rng))
    return np.argsort(-keys, axis=-1)[:, :num_samples].astype(np.int64)


tensor_method("multinomial", multinomial)
