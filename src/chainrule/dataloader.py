"""PyTorch's ``Dataset`` / ``TensorDataset`` / ``DataLoader`` spellings, on NumPy arrays.

Batches come out as NumPy arrays (chainrule's layers and losses take them as they are), or as Tensors where the
dataset holds Tensors (``TensorDataset(cr.tensor(x), ...)``, or samples that are Tensors), as in PyTorch, so
``xb.view(-1, 1, 28, 28)`` and the other Tensor methods work on them. They are collated as PyTorch's
default collate does: a sample that is a tuple, list or dict gives a batch of the same structure, each field
stacked along a new first axis. Shuffling draws a new order each epoch from a NumPy generator seeded once by
``seed`` (or ``generator``): reproducible, but not the order PyTorch's generator would give.
``num_workers``, ``pin_memory`` and ``persistent_workers`` are accepted and do nothing (loading runs in the
calling thread; the batches are the same).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from .tensor import Tensor


class Dataset:
    """Base class for a map-style dataset: define ``__len__`` and ``__getitem__(i)`` (one sample)."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: define __getitem__(self, index) to return one sample")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}: define __len__(self), the number of samples")


class TensorDataset(Dataset):
    """Arrays (or Tensors) that share their first axis; sample ``i`` is the tuple of their rows ``i``.

    Example:
        >>> import numpy as np
        >>> from chainrule.data import TensorDataset
        >>> ds = TensorDataset(np.arange(6.0).reshape(3, 2), np.array([0, 1, 0]))
        >>> len(ds), ds[1]
        (3, (array([2., 3.]), np.int64(1)))
    """

    def __init__(self, *tensors: Any) -> None:
        if not tensors:
            raise ValueError("TensorDataset: give at least one array")
        self.tensors = tuple(np.asarray(t._data if isinstance(t, Tensor) else t) for t in tensors)
        self._as_tensor = tuple(isinstance(t, Tensor) for t in tensors)  # given as Tensors: rows come out as Tensors
        sizes = [len(t) if t.ndim else None for t in self.tensors]
        if None in sizes or len(set(sizes)) != 1:
            raise ValueError(f"TensorDataset: the arrays must share their first axis, got lengths {sizes}")

    def __getitem__(self, index: Any) -> tuple[Any, ...]:
        return tuple(Tensor._wrap(np.asarray(t[index])) if wrap else t[index]
                     for t, wrap in zip(self.tensors, self._as_tensor, strict=True))

    def __len__(self) -> int:
        return len(self.tensors[0])


def default_collate(samples: list[Any]) -> Any:
    """Stack a list of samples into a batch, keeping their structure (tuples, lists, dicts), as PyTorch's.

    Example:
        >>> import numpy as np
        >>> from chainrule.data import default_collate
        >>> b = default_collate([{"x": np.zeros(2), "y": 1}, {"x": np.ones(2), "y": 0}])
        >>> b["x"].shape, b["y"].tolist()
        ((2, 2), [1, 0])
    """
    first = samples[0]
    if isinstance(first, Mapping):
        return {k: default_collate([s[k] for s in samples]) for k in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple stays one
        return type(first)(*(default_collate(list(f)) for f in zip(*samples, strict=True)))
    if isinstance(first, (tuple, list)):
        if any(len(s) != len(first) for s in samples):
            raise ValueError("default_collate: the samples of a batch have different numbers of fields")
        return type(first)(default_collate(list(f)) for f in zip(*samples, strict=True))
    if isinstance(first, (str, bytes)):
        return list(samples)
    batch = np.stack([np.asarray(s._data if isinstance(s, Tensor) else s) for s in samples])
    return Tensor._wrap(batch) if isinstance(first, Tensor) else batch


class DataLoader:
    """Mini-batches of a dataset (PyTorch's ``DataLoader``): ``batch_size``, ``shuffle``, ``drop_last``,
    ``collate_fn``; ``batch_size=None`` yields samples one by one, uncollated. See the module notes on the order.

    Example:
        >>> import numpy as np
        >>> from chainrule.data import DataLoader, TensorDataset
        >>> ds = TensorDataset(np.arange(10.0).reshape(5, 2), np.arange(5))
        >>> [(x.shape, y.tolist()) for x, y in DataLoader(ds, batch_size=2)]
        [((2, 2), [0, 1]), ((2, 2), [2, 3]), ((1, 2), [4])]
        >>> len(DataLoader(ds, batch_size=2, drop_last=True, shuffle=True, seed=0))
        2
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool = False, *, drop_last: bool = False,
                 collate_fn: Callable[[list[Any]], Any] | None = None, seed: Any = 0, generator: Any = None,
                 num_workers: int = 0, pin_memory: bool = False, persistent_workers: bool = False) -> None:
        if batch_size is not None and (isinstance(batch_size, bool) or int(batch_size) <= 0):
            raise ValueError(f"DataLoader: batch_size must be a positive int or None, got {batch_size!r}")
        if generator is not None and not isinstance(generator, np.random.Generator):
            raise TypeError(f"DataLoader: generator must be a numpy.random.Generator, got {type(generator).__name__}; "
                            "or pass seed=<int>")
        self.dataset, self.batch_size = dataset, None if batch_size is None else int(batch_size)
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        self.collate_fn = collate_fn
        self.rng = generator if generator is not None else np.random.default_rng(seed)

    def __len__(self) -> int:
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        n = len(self.dataset)
        order = self.rng.permutation(n) if self.shuffle else np.arange(n)
        if self.batch_size is None:
            for i in order:
                yield self.dataset[int(i)]
            return
        fast = type(self.dataset) is TensorDataset and self.collate_fn is None  # whole-batch indexing, same result
        for b in range(len(self)):
            idx = order[b * self.batch_size:(b + 1) * self.batch_size]
            if fast:
                yield tuple(Tensor._wrap(t[idx]) if wrap else t[idx]
                            for t, wrap in zip(self.dataset.tensors, self.dataset._as_tensor, strict=True))
            else:
                samples = [self.dataset[int(i)] for i in idx]
                yield (self.collate_fn or default_collate)(samples)
