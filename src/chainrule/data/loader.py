"""PyTorch's ``Dataset`` / ``IterableDataset`` / ``TensorDataset`` / ``DataLoader`` spellings, on NumPy arrays.

Batches come out as Tensors, as PyTorch's default collate makes them from NumPy arrays and numbers, so
``xb.view(-1, 1, 28, 28)`` and the other Tensor methods work on them (``.data`` or ``.numpy()`` is the array).
They are collated as PyTorch's default collate does: a sample that is a tuple, list or dict gives a batch of the
same structure, each field stacked along a new first axis. Indices come from a sampler (``sampler=``, or
``batch_sampler=`` for whole batches; see :mod:`chainrule.data.samplers`); ``shuffle=True`` draws a new order each
epoch from a NumPy generator seeded once by ``seed`` (or ``generator``); without either, the seed is drawn from
chainrule's generator (the one ``chainrule.manual_seed`` resets), so that two loaders shuffle differently and a
program is reproducible after ``manual_seed``, as in PyTorch. The orders are NumPy's, not the ones PyTorch's
generator would give. ``num_workers``, ``pin_memory`` and ``persistent_workers`` are accepted and
change nothing: loading runs in the calling thread, as one worker (``worker_init_fn(0)`` is called at the start
of each epoch when ``num_workers > 0``, as in that worker), and the batches are the same.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..core import defaults
from ..tensor import Tensor
from .samplers import BatchSampler, RandomSampler, SequentialSampler


class Dataset:
    """Base class for a map-style dataset: define ``__len__`` and ``__getitem__(i)`` (one sample)."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: define __getitem__(self, index) to return one sample")

    def __len__(self) -> int:
        # a TypeError, as len() of an object without __len__ gives (PyTorch's Dataset has none): code that asks
        # for a length and copes without one (tqdm, `try: len(loader) except TypeError`) goes on
        raise TypeError(f"{type(self).__name__}: object has no len(); define __len__(self), the number of samples")


class IterableDataset(Dataset):
    """A stream of samples: define ``__iter__`` (no ``__getitem__``); ``DataLoader`` batches them in the order
    they come, without a sampler. ``a + b`` chains two of them.

    Example:
        >>> from chainrule.data import DataLoader, IterableDataset
        >>> class Count(IterableDataset):
        ...     def __iter__(self):
        ...         return iter(range(5))
        >>> [b.tolist() for b in DataLoader(Count(), batch_size=2)]
        [[0, 1], [2, 3], [4]]
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__}: define __iter__(self) to yield the samples")

    def __add__(self, other: Any) -> ChainDataset:
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other."""

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset: only IterableDatasets can be chained, got {type(d).__name__}")
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


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
    """Stack a list of samples into a batch of Tensors, keeping their structure (tuples, lists, dicts), as
    PyTorch's: arrays and Tensors are stacked, Python floats give float64, ints int64, bools bool; strings stay a
    list.

    Example:
        >>> import numpy as np
        >>> from chainrule.data import default_collate
        >>> b = default_collate([{"x": np.zeros(2), "y": 1}, {"x": np.ones(2), "y": 0}])
        >>> b["x"].shape, b["y"]
        ((2, 2), Tensor([1, 0]))
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
    if isinstance(first, np.ndarray) and first.dtype.kind in "SUO":
        raise TypeError(f"default_collate: arrays of {first.dtype} cannot be made a Tensor (PyTorch refuses them too); "
                        "pass a collate_fn")
    return Tensor._wrap(np.stack([np.asarray(s._data if isinstance(s, Tensor) else s) for s in samples]))


def default_convert(sample: Any) -> Any:
    """What ``DataLoader(batch_size=None)`` yields for a sample, as PyTorch's: NumPy arrays and scalars become
    Tensors, through tuples (which become lists, as PyTorch's), lists and dicts; other values stay as they are."""
    if isinstance(sample, Mapping):
        return {k: default_convert(v) for k, v in sample.items()}
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):
        return type(sample)(*(default_convert(v) for v in sample))
    if isinstance(sample, (tuple, list)):
        return [default_convert(v) for v in sample]
    if isinstance(sample, (np.ndarray, np.generic)) and np.asarray(sample).dtype.kind not in "SUO":
        return Tensor._wrap(np.asarray(sample))
    return sample


class DataLoader:
    """Mini-batches of a dataset (PyTorch's ``DataLoader``): ``batch_size``, ``shuffle``, ``sampler``,
    ``batch_sampler``, ``drop_last``, ``collate_fn``, ``generator``, ``worker_init_fn``; ``batch_size=None``
    yields samples one by one, uncollated. An :class:`IterableDataset` is batched in the order it yields, without
    a sampler. See the module notes on the order and the workers.

    Example:
        >>> import numpy as np
        >>> from chainrule.data import DataLoader, TensorDataset
        >>> ds = TensorDataset(np.arange(10.0).reshape(5, 2), np.arange(5))
        >>> [(x.shape, y.tolist()) for x, y in DataLoader(ds, batch_size=2)]
        [((2, 2), [0, 1]), ((2, 2), [2, 3]), ((1, 2), [4])]
        >>> len(DataLoader(ds, batch_size=2, drop_last=True, shuffle=True, seed=0))
        2
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = False, sampler: Any = None,
                 batch_sampler: Any = None, num_workers: int = 0, collate_fn: Callable[[list[Any]], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], Any] | None = None, *, seed: Any = None, generator: Any = None,
                 prefetch_factor: int | None = None, persistent_workers: bool = False, **ignored: Any) -> None:
        unknown = set(ignored) - {"multiprocessing_context", "pin_memory_device", "in_order"}
        if unknown:
            raise TypeError(f"DataLoader: unexpected keyword argument(s) {sorted(unknown)}")
        if batch_size is not None and (isinstance(batch_size, bool) or int(batch_size) <= 0):
            raise ValueError(f"DataLoader: batch_size must be a positive int or None, got {batch_size!r}")
        self.dataset, self.batch_size = dataset, None if batch_size is None else int(batch_size)
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        self.collate_fn, self.worker_init_fn, self.num_workers = collate_fn, worker_init_fn, int(num_workers)
        self.rng = _loader_rng(generator, seed, self.shuffle)
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if self.shuffle or sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader: an IterableDataset gives its own order; shuffle, sampler and "
                                 "batch_sampler cannot be used with it (shuffle inside its __iter__)")
        elif sampler is not None and self.shuffle:
            raise ValueError("DataLoader: sampler is mutually exclusive with shuffle (the sampler sets the order)")
        if batch_sampler is not None and (self.batch_size != 1 or self.shuffle or sampler is not None
                                          or self.drop_last):
            raise ValueError("DataLoader: batch_sampler is mutually exclusive with batch_size, shuffle, sampler and "
                             "drop_last (the batch sampler makes the batches)")
        if self.batch_size is None and self.drop_last and batch_sampler is None:
            raise ValueError("DataLoader: batch_size=None turns batching off and is mutually exclusive with "
                             "drop_last")
        self._default_batches = sampler is None and batch_sampler is None  # one permutation sliced: see _index_batches
        if batch_sampler is not None:
            self.batch_size, self.drop_last = None, False
        if self._iterable:
            self.sampler: Any = None
        elif sampler is None:
            self.sampler = RandomSampler(dataset, generator=self.rng) if self.shuffle else SequentialSampler(dataset)
        else:
            self.sampler = sampler
        if batch_sampler is None and self.batch_size is not None and not self._iterable:
            batch_sampler = BatchSampler(self.sampler, self.batch_size, self.drop_last)
        self.batch_sampler = batch_sampler

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self) -> Iterator[Any]:
        if self.worker_init_fn is not None and self.num_workers > 0:
            self.worker_init_fn(0)
        if self._iterable:
            yield from self._iter_stream()
            return
        if self.batch_sampler is None:
            for i in self.sampler:
                yield (self.collate_fn or default_convert)(self.dataset[i])
            return
        dataset, collate = self.dataset, self.collate_fn
        fast = type(dataset) is TensorDataset and collate is None  # whole-batch indexing, same result
        for idx in self._index_batches():
            if fast:
                yield tuple(Tensor._wrap(t[idx]) for t in dataset.tensors)
            else:
                yield (collate or default_collate)([dataset[int(i)] if isinstance(i, np.integer) else dataset[i]
                                                    for i in idx])

    def _index_batches(self) -> Iterable[Any]:
        """The indices of each batch: slices of one permutation for the default sampler, else the batch sampler's."""
        if self._default_batches:
            n = len(self.dataset)
            order = self.rng.permutation(n) if self.shuffle else np.arange(n)
            for b in range(len(self)):
                yield order[b * self.batch_size:(b + 1) * self.batch_size]
            return
        yield from self.batch_sampler

    def _iter_stream(self) -> Iterator[Any]:
        it = iter(self.dataset)
        if self.batch_size is None:
            for sample in it:
                yield (self.collate_fn or default_convert)(sample)
            return
        while batch := list(itertools.islice(it, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield (self.collate_fn or default_collate)(batch)


def _loader_rng(generator: Any, seed: Any, shuffle: bool) -> np.random.Generator:
    if generator is None and seed is None and shuffle:  # PyTorch's loaders draw from its global generator: so ours
        return np.random.default_rng(int(defaults.generator().integers(2**63)))
    if generator is None:
        return np.random.default_rng(0 if seed is None else seed)
    if hasattr(generator, "manual_seed") and isinstance(getattr(generator, "rng", None), np.random.Generator):
        return generator.rng  # chainrule.Generator
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"DataLoader: generator must be a numpy.random.Generator, got {type(generator).__name__}; "
                        "or pass a chainrule.Generator, or seed=<int>")
    return generator
