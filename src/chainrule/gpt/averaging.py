"""One interface for averaging a training step's gradient over workers, with two implementations.

A :class:`GradientAverager` takes each micro-batch of the whole batch and splits its rows between
``processes`` workers, part k taking rows ``B*k//N`` to ``B*(k+1)//N``; each part's loss is weighted by
its share of the rows, so after :meth:`~GradientAverager.finish` every worker's ``.grad`` holds the
gradient of the batch's mean loss, as one process computes it up to float rounding.

- :class:`chainrule.gpt.workers.GradientWorkers`: forked processes sharing memory on one machine, no
  launcher; the default (``TrainConfig(workers=...)``).
- :class:`MPIRanks`: the processes of an ``mpiexec -n N`` (or ``srun``) job, on any number of machines.
  Every rank draws the same windows (the data generator is seeded alike), takes its part, and one
  ``Allreduce`` per optimiser step sums the parts' gradients (micro-batches accumulate locally first).
  Rank 0 alone writes checkpoints, the loss curve and the progress bar (:attr:`~GradientAverager.writer`);
  decisions taken from the clock (a time budget) are rank 0's, sent to all (:meth:`~GradientAverager.agree`).

Dropout masks match between the two: part 0 draws from the model's own generators, part k > 0 from
generators seeded by (seed, step, k).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from ..distributed import collectives as dist
from ..runtime.blas import blas_threads_limited
from ..runtime.threads import threads_limited
from ..tensor import Tensor

__all__ = ["GradientAverager", "MPIRanks", "wants_mpi"]


class GradientAverager(Protocol):
    """What the trainer asks of the workers that share its batches."""

    processes: int  # how many share each micro-batch
    writer: bool  # whether this process writes checkpoints, the loss curve and the progress bar

    def accumulate(self, x: np.ndarray, y: np.ndarray, scale: float, step: int, seed: int) -> float:
        """Add this process's part of d(scale * mean loss over the rows of x)/d(params) to ``.grad``; its loss part."""

    def finish(self, loss: float) -> float:
        """After a step's micro-batches: every ``.grad`` holds the whole gradient; returns the whole loss."""

    def agree(self, value: Any) -> Any:
        """Rank 0's ``value`` on every process (a decision taken from the clock)."""

    def close(self) -> None:
        """Stop the workers (the next step starts new ones, where that means anything)."""


def wants_mpi(parallel: str) -> bool:
    """Whether a trainer told ``parallel`` ("auto", "fork" or "mpi") averages over MPI ranks."""
    if parallel not in ("auto", "fork", "mpi"):
        raise ValueError(f"Trainer: parallel must be 'auto', 'fork' or 'mpi', got {parallel!r}")
    return parallel == "mpi" or (parallel == "auto" and dist.launched_by_mpi())


def _group() -> None:
    if not dist.is_initialized():
        dist.init_process_group(backend="mpi")


class MPIRanks:
    """The ranks of this MPI job share each batch; one ``Allreduce`` of the flattened gradients per step.

    Starting broadcasts rank 0's parameters, so the ranks begin equal even if their models were not.
    ``reduce_seconds``: the time the last step spent in the gradient ``Allreduce`` (waiting for the
    slowest rank included).
    """

    def __init__(self, model: Any, loss_fn: Callable[[Any, Any, Any], Any]) -> None:
        _group()
        self.model, self.loss_fn = model, loss_fn
        self.rank, self.processes = dist.get_rank(), dist.get_world_size()
        self.writer = self.rank == 0
        self.params = list({id(p): p for p in model.parameters()}.values())  # tied weights once
        for p in self.params:
            if not p._data.flags.c_contiguous:
                p.data = np.ascontiguousarray(p._data)
            dist.broadcast(p._data, src=0)
        dtypes = {p._data.dtype for p in self.params if p.requires_grad}
        self.flat = np.zeros(sum(p._data.size for p in self.params if p.requires_grad),
                             max(dtypes, key=lambda d: d.itemsize) if dtypes else np.float64)
        self.reduce_seconds = 0.0

    def accumulate(self, x: np.ndarray, y: np.ndarray, scale: float, step: int, seed: int) -> float:
        rows = len(x)
        lo, hi = rows * self.rank // self.processes, rows * (self.rank + 1) // self.processes
        if hi == lo:  # more ranks than rows: this one has nothing to add
            return 0.0
        if self.rank > 0:  # the masks a forked worker k would draw
            for number, (_, mod) in enumerate(self.model.named_modules()):
                if isinstance(getattr(mod, "rng", None), np.random.Generator):
                    mod.rng = np.random.default_rng([seed, step, self.rank, number])
        with threads_limited(1), blas_threads_limited(1):
            loss = self.loss_fn(self.model, x[lo:hi], y[lo:hi])
            (loss * (scale * (hi - lo) / rows)).backward()
        return float(loss) * (hi - lo) / rows

    def finish(self, loss: float) -> float:
        start = time.perf_counter()
        offset, trainable = 0, [p for p in self.params if p.requires_grad]
        for p in trainable:
            n = p._data.size
            if p.grad is None:
                self.flat[offset:offset + n] = 0
            else:
                self.flat[offset:offset + n] = p.grad._data.reshape(-1)
            offset += n
        dist.all_reduce(self.flat)
        total = np.array([loss], dtype=np.float64)
        dist.all_reduce(total)
        offset = 0
        for p in trainable:
            n = p._data.size
            p.grad = Tensor._wrap(self.flat[offset:offset + n].reshape(p._data.shape).astype(p._data.dtype, copy=True))
            offset += n
        self.reduce_seconds = time.perf_counter() - start
        return float(total[0])

    def agree(self, value: Any) -> Any:
        box = [value]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def matches(self, model: Any) -> bool:
        return model is self.model and list({id(p): 0 for p in model.parameters()}) == [id(p) for p in self.params]

    def close(self) -> None:
        """(The ranks stay: the job is theirs.)"""


# -- for ``chainrule gpt train`` under mpiexec -------------------------------------------------------
def launch_rank() -> int | None:
    """This process's rank when a launcher started several (joining the group), else None."""
    if not dist.launched_by_mpi():
        return None
    _group()
    return dist.get_rank()


def from_rank0(value: Any) -> Any:
    """Rank 0's ``value`` (the run's configuration) on every rank."""
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def end_job_if_mpi(status: int) -> None:
    """Under MPI, a rank that gives up ends every rank (the others would wait for it forever)."""
    if dist.is_initialized() and dist.get_world_size() > 1:
        print(f"rank {dist.get_rank()} failed: ending all {dist.get_world_size()} ranks of the job", file=sys.stderr)
        dist.abort_job(status)
