"""PyTorch's in-place random fills ``Tensor.uniform_`` and ``Tensor.normal_`` (as ``nn.init`` uses them), and
``bernoulli_``, ``exponential_``, ``geometric_``, ``cauchy_``, ``log_normal_``, ``random_``, ``bernoulli``.

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

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core import defaults
from ...core.defaults import generator as default_generator
from ...core.device import constant_on, is_off_host, uniform_like, xp_of
from ...core.traces import draw
from ...tensor import Tensor
from ..declare import tensor_method
from .common import as_array, in_place

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


# -- more of PyTorch's fills: drawn through core.traces.draw, so that a jit replay draws afresh --------------
def _drawn(how: Callable[..., Any], rng: Any, shape: tuple[int, ...], params: tuple[Any, ...], dtype: Any) -> Any:
    return np.asarray(how(defaults.generator(rng), shape, *params)).astype(dtype)


def _filled(name: str, how: Callable[..., Any], *params: Any, generator: Any = None) -> Callable[[Tensor], Tensor]:
    """``Tensor.<name>``'s body: values drawn by ``how(generator, shape, *params)`` written in place."""
    def values(d: Any) -> Any:
        return constant_on(d, draw(_drawn, how, generator, tuple(d.shape), params, d.dtype))

    return in_place(name, values)


def _bernoulli(g: Any, shape: tuple[int, ...], p: Any) -> Any:
    return g.random(shape) < p


def _probability(name: str, p: Any) -> Any:
    chance = as_array(p).astype(np.float64) if isinstance(p, Tensor) else np.asarray(p, dtype=np.float64)
    if np.isnan(chance).any() or ((chance < 0) | (chance > 1)).any():
        raise RuntimeError(f"{name}: p must be in [0, 1], got {p!r:.60}")
    return chance


@tensor_method("bernoulli_")
def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """PyTorch's ``bernoulli_(p=0.5)``: 1 with probability ``p`` (a number or a tensor that broadcasts), else 0."""
    return _filled("bernoulli_", _bernoulli, _probability("bernoulli_", p), generator=generator)(self)


@tensor_method("bernoulli")
def bernoulli(self: Tensor, p: Any = None, *, generator: Any = None) -> Tensor:
    """PyTorch's ``bernoulli()``: 1 with probability each entry (or ``p`` for all), else 0; a new tensor."""
    chance = _probability("bernoulli", self if p is None else p)
    dt = self.dtype if np.dtype(self.dtype).kind == "f" else defaults.get_default_dtype()
    return Tensor._wrap(constant_on(self._data, draw(_drawn, _bernoulli, generator, tuple(self.shape), (chance,),
                                                     dt)))


def _exponential(g: Any, shape: tuple[int, ...], lambd: float) -> Any:
    return g.exponential(1.0 / lambd, shape)


def _geometric(g: Any, shape: tuple[int, ...], p: float) -> Any:
    return g.geometric(p, shape)


def _cauchy(g: Any, shape: tuple[int, ...], median: float, sigma: float) -> Any:
    return median + sigma * g.standard_cauchy(shape)


def _log_normal(g: Any, shape: tuple[int, ...], mean: float, std: float) -> Any:
    return g.lognormal(mean, std, shape)


def _integers(g: Any, shape: tuple[int, ...], low: int, high: int) -> Any:
    return g.integers(low, high, shape)


@tensor_method("exponential_")
def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """PyTorch's ``exponential_(lambd=1)``: draws of density ``lambd * exp(-lambd * x)``."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_: expects lambd > 0.0, but found lambd={lambd}")
    return _filled("exponential_", _exponential, lambd, generator=generator)(self)


@tensor_method("geometric_")
def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """PyTorch's ``geometric_(p)``: the number of trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_: p must be in (0, 1), got {p}")
    return _filled("geometric_", _geometric, p, generator=generator)(self)


@tensor_method("cauchy_")
def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
    """PyTorch's ``cauchy_(median=0, sigma=1)``: Cauchy draws."""
    return _filled("cauchy_", _cauchy, median, sigma, generator=generator)(self)


@tensor_method("log_normal_")
def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
    """PyTorch's ``log_normal_(mean=1, std=2)``: ``exp`` of normal draws of that mean and std."""
    return _filled("log_normal_", _log_normal, mean, std, generator=generator)(self)


@tensor_method("random_")
def random_(self: Tensor, from_: int = 0, to: int | None = None, *, generator: Any = None, **kw: Any) -> Tensor:
    """PyTorch's ``random_(from=0, to=None)``: integers drawn uniformly from ``[from, to)``; ``random_(to)`` is
    ``[0, to)``; without ``to``, up to the dtype's largest integer (2**mantissa bits for a float, as PyTorch)."""
    if "from" in kw:  # (PyTorch's keyword, a Python keyword here)
        from_ = kw.pop("from")
    elif to is None and from_ != 0:  # random_(to): [0, to)
        from_, to = 0, from_
    if kw:
        raise TypeError(f"random_: unexpected keyword(s) {sorted(kw)}")
    dt = np.dtype(self.dtype)
    if to is None:
        to = 2 ** (np.finfo(dt).nmant + 1) + 1 if dt.kind == "f" else int(np.iinfo(dt).max) + 1
    if to <= from_:
        raise RuntimeError(f"random_: expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    return _filled("random_", _integers, int(from_), int(to), generator=generator)(self)



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
