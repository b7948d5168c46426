"""``DistributedSampler``: each rank's share of a dataset's indices, one epoch at a time (PyTorch's rules).

Example (two ranks' shares of ten indices, as ``mpiexec -n 2`` would give them):
    >>> from chainrule.data import DistributedSampler
    >>> shares = [list(DistributedSampler(range(10), num_replicas=2, rank=r, shuffle=False)) for r in (0, 1)]
    >>> shares
    [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]]
    >>> s = DistributedSampler(range(5), num_replicas=2, rank=1, seed=3)
    >>> s.set_epoch(1); len(s), len(list(s))
    (3, 3)
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import collectives

__all__ = ["DistributedSampler"]


class DistributedSampler:
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` takes in the current epoch.

    ``shuffle``: a permutation drawn from ``seed + epoch`` (the same on every rank; call :meth:`set_epoch`
    at the start of each epoch for a new order). Every rank gets ``len(self)`` indices: with
    ``drop_last=False`` the order is padded by repeating its first indices up to a multiple of
    ``num_replicas``; with ``drop_last=True`` its tail is dropped instead. Rank r takes positions
    r, r + num_replicas, ... ``num_replicas`` and ``rank`` default to the process group's.
    """

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = collectives.get_world_size()
        if rank is None:
            rank = collectives.get_rank()
        if int(num_replicas) <= 0:
            raise ValueError(f"DistributedSampler: num_replicas must be positive, got {num_replicas}")
        if not 0 <= int(rank) < int(num_replicas):
            raise ValueError(f"DistributedSampler: invalid rank {rank}, rank should be in the interval "
                             f"[0, {int(num_replicas) - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, int(num_replicas), int(rank)
        self.shuffle, self.seed, self.drop_last, self.epoch = bool(shuffle), int(seed), bool(drop_last), 0
        n = len(dataset)
        if self.drop_last and n % self.num_replicas:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose order :meth:`__iter__` gives (with ``shuffle``, a new one per epoch)."""
        self.epoch = int(epoch)

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        order = (np.random.default_rng(self.seed + self.epoch).permutation(n) if self.shuffle
                 else np.arange(n)).tolist()
        if not self.drop_last:
            pad = self.total_size - n
            if pad > 0:
                order += (order * math.ceil(pad / max(n, 1)))[:pad]
        else:
            order = order[:self.total_size]
        return iter(order[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples
