"""PyTorch's samplers: ``SequentialSampler``, ``RandomSampler``, ``SubsetRandomSampler``, ``WeightedRandomSampler``,
``BatchSampler``.

A sampler is an iterable of dataset indices (a batch sampler: of lists of indices), as in
``torch.utils.data``; ``DataLoader(sampler=...)`` or ``DataLoader(batch_sampler=...)`` takes them. Random
ones draw from ``generator`` (a ``chainrule.Generator``, a ``numpy.random.Generator`` or an int seed), or
without one from the generator of ``chainrule.manual_seed``: reproducible, but not the numbers PyTorch's
generator would draw.

Example:
    >>> from chainrule.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ..core.defaults import generator as default_generator
from ..tensor import Tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]


_rng = default_generator


class Sampler:
    """Base class: an iterable of indices into a dataset (define ``__iter__``, and ``__len__`` if known)."""

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__}: define __iter__ to yield dataset indices")


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A new random order of the indices each pass; ``replacement=True`` draws ``num_samples`` indices
    independently, and without replacement ``num_samples`` larger than the dataset chains several orders.

    Example:
        >>> from chainrule.data import RandomSampler
        >>> sorted(RandomSampler(range(4), generator=0))
        [0, 1, 2, 3]
        >>> len(list(RandomSampler(range(4), replacement=True, num_samples=10, generator=0)))
        10
    """

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: int | None = None,
                 generator: Any = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a bool, got {replacement!r}")
        self.data_source, self.replacement, self._num_samples = data_source, replacement, num_samples
        self.generator = generator if generator is None else _rng(generator)
        if isinstance(self.num_samples, bool) or not isinstance(self.num_samples, (int, np.integer)) \
                or self.num_samples <= 0:
            raise ValueError(f"RandomSampler: num_samples must be a positive int, got {self.num_samples!r}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, rng = len(self.data_source), _rng(self.generator)
        if self.replacement:
            yield from (int(i) for i in rng.integers(0, n, self.num_samples))
            return
        for _ in range(self.num_samples // n):
            yield from (int(i) for i in rng.permutation(n))
        yield from (int(i) for i in rng.permutation(n)[: self.num_samples % n])

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a new random order each pass (e.g. a validation split of one dataset)."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator if generator is None else _rng(generator)

    def __iter__(self) -> Iterator[Any]:
        for i in _rng(self.generator).permutation(len(self.indices)):
            yield self.indices[int(i)]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (``multinomial``)."""

    def __init__(self, weights: Any, num_samples: int, replacement: bool = True, generator: Any = None) -> None:
        if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)) or num_samples <= 0:
            raise ValueError(f"WeightedRandomSampler: num_samples must be a positive int, got {num_samples!r}")
        if not isinstance(replacement, bool):
            raise ValueError(f"WeightedRandomSampler: replacement must be a bool, got {replacement!r}")
        w = np.asarray(weights._data if isinstance(weights, Tensor) else weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights must be 1-d, got shape {w.shape}")
        self.weights, self.num_samples, self.replacement = w, int(num_samples), replacement
        self.generator = generator if generator is None else _rng(generator)

    def __iter__(self) -> Iterator[int]:
        from ..ops.pytorch.random_fill import multinomial  # on first use: keeps `import chainrule` light

        draws = multinomial(self.weights, self.num_samples, self.replacement, generator=_rng(self.generator))
        yield from (int(i) for i in draws._data)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter unless ``drop_last``).

    Example:
        >>> from chainrule.data import BatchSampler
        >>> list(BatchSampler(range(7), 3, drop_last=True))
        [[0, 1, 2], [3, 4, 5]]
    """

    def __init__(self, sampler: Iterable[Any], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
            raise ValueError(f"BatchSampler: batch_size must be a positive int, got {batch_size!r}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last must be a bool, got {drop_last!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, int(batch_size), drop_last

    def __iter__(self) -> Iterator[list[Any]]:
        it = iter(self.sampler)
        while batch := list(itertools.islice(it, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
