"""Data for training loops: seeded shuffling mini-batches, a train/validation split, toy sets.

``Batches`` walks over arrays (features, labels, ...) in mini-batches, reshuffled every
epoch by its own seeded generator, so a run is reproducible. ``train_val_split`` splits
arrays the way scikit-learn's ``train_test_split`` does (optionally stratified).
``make_moons`` and ``make_spirals`` make the classic two-class toy problems with NumPy alone.

Example:
    >>> import numpy as np
    >>> from chainrule.data import Batches, train_val_split
    >>> X, y = np.arange(20.0).reshape(10, 2), np.arange(10) % 2
    >>> X_tr, X_val, y_tr, y_val = train_val_split(X, y, val_fraction=0.2, seed=0)
    >>> X_tr.shape, X_val.shape
    ((8, 2), (2, 2))
    >>> loader = Batches(X_tr, y_tr, batch_size=3, seed=0)
    >>> len(loader), [xb.shape[0] for xb, yb in loader]
    (3, [3, 3, 2])
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..distributed.sampler import DistributedSampler
from ..tensor import Tensor
from .datasets import ConcatDataset, Subset, random_split
from .loader import (
    ChainDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    TensorDataset,
    default_collate,
    default_convert,
)
from .samplers import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["Batches", "batches", "train_val_split", "make_moons", "make_spirals", "Dataset", "TensorDataset",
           "DataLoader", "default_collate"]
__all__ += ["IterableDataset", "ChainDataset", "default_convert", "Subset", "random_split", "ConcatDataset",
            "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
            "BatchSampler", "DistributedSampler"]


def _as_arrays(arrays: tuple[Any, ...], where: str) -> list[np.ndarray]:
    if not arrays:
        raise ValueError(f"{where}: give at least one array")
    out = []
    for i, a in enumerate(arrays):
        a = np.asarray(a._data if isinstance(a, Tensor) else a)
        if a.ndim == 0:
            raise ValueError(f"{where}: array {i} is 0-d; each array needs one row per example")
        out.append(a)
    n = {len(a) for a in out}
    if len(n) != 1:
        raise ValueError(
            f"{where}: the arrays must have the same number of rows (first axis), got {[len(a) for a in out]}"
        )
    return out


def _generator(seed: Any) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


class Batches:
    """Mini-batches of one or more arrays that share their first axis.

    Each ``for`` loop over it is one epoch; with ``shuffle=True`` every epoch draws a new
    order from a generator seeded once by ``seed``, so the sequence of epochs is the same
    on every run. Yields a tuple of arrays (or one array when one was given).
    ``drop_last=True`` skips a last, smaller batch.

    Example:
        >>> import numpy as np
        >>> from chainrule.data import Batches
        >>> b = Batches(np.arange(5), batch_size=2, shuffle=False)
        >>> [x.tolist() for x in b]
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, *arrays: Any, batch_size: int = 32, shuffle: bool = True, seed: Any = 0,
                 drop_last: bool = False) -> None:
        if int(batch_size) <= 0:
            raise ValueError(f"Batches: batch_size must be positive, got {batch_size}")
        self.arrays = _as_arrays(arrays, "Batches")
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.rng = _generator(seed)
        self.epoch = 0

    @property
    def n(self) -> int:
        """Number of examples."""
        return len(self.arrays[0])

    def __len__(self) -> int:
        return self.n // self.batch_size if self.drop_last else math.ceil(self.n / self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        order = self.rng.permutation(self.n) if self.shuffle else None
        self.epoch += 1
        stop = len(self) * self.batch_size
        for start in range(0, min(stop, self.n), self.batch_size):
            if order is None:
                batch = [a[start:start + self.batch_size] for a in self.arrays]
            else:
                idx = order[start:start + self.batch_size]
                batch = [a[idx] for a in self.arrays]
            yield batch[0] if len(batch) == 1 else tuple(batch)


def batches(*arrays: Any, batch_size: int = 32, shuffle: bool = True, seed: Any = 0,
            drop_last: bool = False) -> Iterator[Any]:
    """One pass (epoch) of mini-batches; see :class:`Batches`.

    Example:
        >>> import numpy as np
        >>> from chainrule.data import batches
        >>> sum(len(x) for x, y in batches(np.zeros((10, 3)), np.zeros(10), batch_size=4, seed=1))
        10
    """
    return iter(Batches(*arrays, batch_size=batch_size, shuffle=shuffle, seed=seed, drop_last=drop_last))


def train_val_split(*arrays: Any, val_fraction: float = 0.2, seed: Any = 0, shuffle: bool = True,
                    stratify: Any = None) -> list[np.ndarray]:
    """Split arrays into training and validation parts: returns ``[a_train, a_val, b_train, b_val, ...]``.

    ``val_fraction`` of the rows (rounded up, at least 1) go to validation. ``stratify``
    (labels) keeps each class's share the same in both parts.

    Example:
        >>> import numpy as np
        >>> from chainrule.data import train_val_split
        >>> y = np.array([0] * 8 + [1] * 4)
        >>> y_tr, y_val = train_val_split(y, val_fraction=0.25, stratify=y, seed=0)
        >>> sorted(y_val.tolist())
        [0, 0, 1]
    """
    data = _as_arrays(arrays, "train_val_split")
    n = len(data[0])
    if not 0.0 < float(val_fraction) < 1.0:
        raise ValueError(f"train_val_split: val_fraction must be between 0 and 1, got {val_fraction}")
    if n < 2:
        raise ValueError(f"train_val_split: need at least 2 rows to split, got {n}")
    rng = _generator(seed)
    if stratify is None:
        order = rng.permutation(n) if shuffle else np.arange(n)
        n_val = min(n - 1, max(1, math.ceil(n * val_fraction)))
        val_idx, train_idx = order[:n_val], order[n_val:]
        if not shuffle:
            val_idx, train_idx = order[n - n_val:], order[: n - n_val]
    else:
        labels = np.asarray(stratify._data if isinstance(stratify, Tensor) else stratify)
        if labels.shape[:1] != (n,):
            raise ValueError(f"train_val_split: stratify must have {n} labels, got shape {labels.shape}")
        val_parts, train_parts = [], []
        for c in np.unique(labels):
            members = np.flatnonzero(labels == c)
            members = rng.permutation(members) if shuffle else members
            k = int(round(len(members) * val_fraction))
            val_parts.append(members[:k])
            train_parts.append(members[k:])
        val_idx = np.concatenate(val_parts)
        train_idx = np.concatenate(train_parts)
        if shuffle:
            val_idx, train_idx = rng.permutation(val_idx), rng.permutation(train_idx)
        if len(val_idx) == 0 or len(train_idx) == 0:
            raise ValueError("train_val_split: the split left one part empty; use a larger val_fraction or more data")
    out: list[np.ndarray] = []
    for a in data:
        out.extend([a[train_idx], a[val_idx]])
    return out


def make_moons(n_samples: int = 100, noise: float = 0.1, seed: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles (scikit-learn's ``make_moons``): ``X`` (n, 2) float64, ``y`` in {0, 1}.

    Example:
        >>> from chainrule.data import make_moons
        >>> X, y = make_moons(100, noise=0.1, seed=0)
        >>> X.shape, sorted(set(y.tolist()))
        ((100, 2), [0, 1])
    """
    rng = _generator(seed)
    n_out = n_samples // 2
    n_in = n_samples - n_out
    t_out, t_in = np.linspace(0, np.pi, n_out), np.linspace(0, np.pi, n_in)
    outer = np.stack([np.cos(t_out), np.sin(t_out)], axis=1)
    inner = np.stack([1 - np.cos(t_in), 1 - np.sin(t_in) - 0.5], axis=1)
    X = np.concatenate([outer, inner])
    y = np.concatenate([np.zeros(n_out, dtype=np.int64), np.ones(n_in, dtype=np.int64)])
    if noise:
        X = X + rng.normal(scale=noise, size=X.shape)
    order = rng.permutation(n_samples)
    return X[order], y[order]


def make_spirals(n_samples: int = 200, noise: float = 0.2, turns: float = 1.5, seed: Any = 0
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaved spirals: ``X`` (n, 2) float64, ``y`` in {0, 1}.

    Example:
        >>> from chainrule.data import make_spirals
        >>> X, y = make_spirals(50, seed=0)
        >>> X.shape, int(y.sum())
        ((50, 2), 25)
    """
    rng = _generator(seed)
    n0 = n_samples // 2
    counts = (n0, n_samples - n0)
    parts, labels = [], []
    for label, count in enumerate(counts):
        r = np.linspace(0.2, 1.0, count)
        theta = r * turns * 2 * np.pi + label * np.pi
        pts = np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1) * 3
        parts.append(pts + rng.normal(scale=noise * 0.5, size=pts.shape))
        labels.append(np.full(count, label, dtype=np.int64))
    X, y = np.concatenate(parts), np.concatenate(labels)
    order = rng.permutation(n_samples)
    return X[order], y[order]
