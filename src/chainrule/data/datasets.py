"""PyTorch's dataset helpers: ``Subset``, ``random_split`` and ``ConcatDataset``.

Example:
    >>> from chainrule.data import ConcatDataset, random_split
    >>> [len(part) for part in random_split(range(10), [0.7, 0.3], generator=0)]
    [7, 3]
    >>> ConcatDataset([[1, 2], [3]])[2]
    3
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from ..core.errors import ChainruleWarning
from .loader import Dataset, IterableDataset
from .samplers import _rng

__all__ = ["Subset", "random_split", "ConcatDataset"]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[float], generator: Any = None) -> list[Subset]:
    """Split ``dataset`` at random into :class:`Subset` s of the given ``lengths``, or of the given fractions
    (summing to 1: each gets ``floor(n * fraction)``, the remainder goes one by one to the first ones, as
    PyTorch). ``generator``: a ``chainrule.Generator``, a NumPy generator or a seed.

    Example:
        >>> from chainrule.data import random_split
        >>> train, val = random_split(list("abcdefghij"), [8, 2], generator=1)
        >>> len(train), len(val), sorted(train[i] for i in range(8)) + sorted(val[i] for i in range(2)) != []
        (8, 2, True)
    """
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"random_split: fraction at index {i} is not between 0 and 1: {frac}")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"random_split: length of split at index {i} is 0; this split will be empty",
                              ChainruleWarning, stacklevel=2)
        lengths = sizes
    if any(isinstance(k, float) and not float(k).is_integer() for k in lengths):
        raise ValueError(f"random_split: lengths must be ints, or fractions that sum to 1, got {list(lengths)}")
    lengths = [int(k) for k in lengths]
    if sum(lengths) != n:
        raise ValueError(f"random_split: the lengths sum to {sum(lengths)}, but the dataset has {n} samples")
    order = _rng(generator).permutation(n).tolist()
    ends = list(itertools.accumulate(lengths))
    return [Subset(dataset, order[end - k:end]) for end, k in zip(ends, lengths, strict=True)]


class ConcatDataset(Dataset):
    """Map-style datasets one after the other: index ``i`` runs through the first, then the second, ...

    Example:
        >>> from chainrule.data import ConcatDataset
        >>> ds = ConcatDataset([[1, 2], [3, 4, 5]])
        >>> len(ds), ds[2], ds[-1]
        (5, 3, 5)
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset: does not support IterableDataset; use ChainDataset (or a + b)")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("ConcatDataset: absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        k = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[k][idx - (self.cumulative_sizes[k - 1] if k else 0)]
