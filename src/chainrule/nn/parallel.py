"""Data-parallel training over MPI: ``nn.parallel.DistributedDataParallel`` (PyTorch's DDP, its names).

Every rank holds a copy of the model and takes its own share of each batch. Wrapping broadcasts rank 0's
parameters and buffers, so the copies start equal; after ``backward()`` each parameter's ``.grad`` is the
mean of the ranks' gradients, so one optimiser step keeps the copies equal. A batch of B rows split
into N equal shares of B / N rows then gives the gradient of the mean loss over all B rows: the
one-process result up to float rounding.

When: the gradients go to MPI in flattened buckets (``bucket_cap_mb`` each, parameters in reverse
registration order, about the order backward finds them). A leaf gradient hook copies each gradient
into its bucket and starts a bucket's non-blocking ``Iallreduce`` as soon as the bucket is full; a callback
queued on the sweep (``core.hooks.queue_callback``) waits for them at the end of ``backward()``, divides by
the world size and writes each ``.grad`` before ``backward()`` returns, so ``clip_grad_norm_`` and
``optimizer.step()`` read averaged gradients. (chainrule's sweep hands the leaves their gradients at its
end, so the reductions overlap the last of the backward work, not its bulk.)

``no_sync()`` skips the averaging for the backward passes of the forwards run inside it: their gradients
accumulate locally, and the first backward outside averages the sum. A parameter that got no gradient on
a rank raises (every rank must reduce the same buckets) unless ``find_unused_parameters=True``, which
counts it as zero there and leaves ``.grad`` alone where no rank used it (PyTorch's rules).

Example (under ``mpiexec -n 2`` each rank averages; in one process it is a group of one):
    >>> import numpy as np
    >>> from chainrule import distributed as dist, nn
    >>> dist.init_process_group(backend="mpi")
    >>> model = nn.parallel.DistributedDataParallel(nn.Linear(3, 1, rng=0))
    >>> x = np.ones((4, 3), dtype=np.float32)
    >>> model(x).sum().backward()
    >>> model.module.weight.grad.shape
    (1, 3)
    >>> dist.destroy_process_group()
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..core.hooks import hooks_of, queue_callback
from ..core.state import is_grad_enabled
from ..distributed import collectives as dist
from ..tensor import Tensor
from .module import Module

__all__ = ["DistributedDataParallel"]


class _Bucket:
    """A flat buffer holding the gradients of some parameters of one dtype, reduced with one message."""

    def __init__(self, params: list[tuple[str, Any]], dtype: np.dtype) -> None:
        self.params = params  # (name, parameter)
        self.offsets, end = [], 0
        for _, p in params:
            self.offsets.append(end)
            end += p._data.size
        self.flat = np.empty(end, dtype)
        self.ready: set[int] = set()  # indices into params whose gradient is in flat
        self.work: Any = None

    def put(self, index: int, grad: np.ndarray) -> None:
        start = self.offsets[index]
        self.flat[start:start + grad.size] = grad.reshape(-1)
        self.ready.add(index)

    def view(self, index: int) -> np.ndarray:
        start, p = self.offsets[index], self.params[index][1]
        return self.flat[start:start + p._data.size].reshape(p._data.shape)


class DistributedDataParallel(Module):
    """``module`` replicated on every rank, its gradients averaged over ranks after each ``backward()``.

    Call :func:`chainrule.distributed.init_process_group` first. ``module``: the model (``.module`` gives it
    back; ``state_dict()`` keys start with ``module.`` as PyTorch's). ``bucket_cap_mb``: the size of one
    reduction message. ``broadcast_buffers``: buffers (e.g. BatchNorm's running statistics) are copied from
    rank 0 at every forward. ``find_unused_parameters``: allow parameters that get no gradient in a step.
    ``device_ids`` and ``output_device`` are accepted for PyTorch's spellings (the CPU only).
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group: Any = None, bucket_cap_mb: float = 4.0,
                 find_unused_parameters: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: wraps an nn.Module, got {type(module).__name__}")
        if not dist.is_initialized():
            raise RuntimeError("DistributedDataParallel: the process group is not initialised; call "
                               "chainrule.distributed.init_process_group(backend='mpi') first (under mpiexec)")
        if not bucket_cap_mb > 0:
            raise ValueError(f"DistributedDataParallel: bucket_cap_mb must be positive, got {bucket_cap_mb}")
        self.module = module
        self.broadcast_buffers = bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.require_backward_grad_sync = True
        self._armed = False  # the last forward (grad on, not in no_sync) expects its backward to average
        self._queued = False
        self._next = 0
        seen: dict[int, tuple[str, Any]] = {}
        for name, p in module.named_parameters():
            if p.requires_grad and id(p) not in seen:  # tied weights once
                seen[id(p)] = (name, p)
        self._named = list(seen.values())
        self._check_same_parameters()
        self._sync_module_states()
        self._buckets, self._place = self._make_buckets(float(bucket_cap_mb) * 2**20)
        self._handles = []
        ref = weakref.ref(self)  # the hooks must not keep this wrapper alive
        for _, p in self._named:
            hook = _make_hook(ref, p)
            hooks = hooks_of(p)
            hooks.append(hook)
            self._handles.append((hooks, hook))

    # -- wrap time ---------------------------------------------------------------------------------
    def _check_same_parameters(self) -> None:
        mine = [(name, p._data.shape, p._data.dtype.str) for name, p in self._named]
        everyone: list[Any] = []
        dist.all_gather_object(everyone, mine)
        for rank, theirs in enumerate(everyone):
            if theirs != mine:
                diff = next((a, b) for a, b in zip([*mine, None], [*theirs, None]) if a != b)
                raise ValueError(f"DistributedDataParallel: rank {rank} has other parameters than rank "
                                 f"{dist.get_rank()} (first difference: {diff[1]} there, {diff[0]} here); build "
                                 "the same model on every rank")

    def _sync_module_states(self) -> None:
        """Rank 0's parameters and buffers on every rank."""
        tensors = [*self.module.parameters(), *self.module.buffers()]
        arrays = [t._data for t in tensors]
        for a in arrays:
            if a.flags.c_contiguous and a.flags.writeable:
                dist.broadcast(a, src=0)
            else:
                copy = np.ascontiguousarray(a)
                dist.broadcast(copy, src=0)
                a[...] = copy

    def _make_buckets(self, cap_bytes: float) -> tuple[list[_Bucket], dict[int, tuple[_Bucket, int]]]:
        buckets: list[_Bucket] = []
        current: list[tuple[str, Any]] = []
        size = 0
        for name, p in reversed(self._named):  # about the order in which backward reaches them
            if current and (size + p._data.nbytes > cap_bytes or p._data.dtype != current[0][1]._data.dtype):
                buckets.append(_Bucket(current, current[0][1]._data.dtype))
                current, size = [], 0
            current.append((name, p))
            size += p._data.nbytes
        if current:
            buckets.append(_Bucket(current, current[0][1]._data.dtype))
        place = {id(p): (b, i) for b in buckets for i, (_, p) in enumerate(b.params)}
        return buckets, place

    # -- forward -------------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if self.broadcast_buffers:
            for _, b in self.module.named_buffers():
                if b._data.flags.c_contiguous and b._data.flags.writeable:
                    dist.broadcast(b._data, src=0)
        self._armed = is_grad_enabled() and self.require_backward_grad_sync
        self._queued = False
        self._next = 0  # the next bucket to reduce
        for b in self._buckets:
            b.ready.clear()
            b.work = None
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Forwards run inside skip the averaging in their backward: gradients add up locally until the first
        forward-and-backward outside, which averages the sum (gradient accumulation with one reduction)."""
        before = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = before

    # -- backward ------------------------------------------------------------------------------
    def _gradient_ready(self, p: Any, g: Any) -> None:
        """A leaf hook saw ``p``'s gradient of this backward: its total (with what ``.grad`` held) joins its bucket."""
        if isinstance(g, Tensor):
            raise RuntimeError("DistributedDataParallel: backward(create_graph=True) is not supported (the averaged "
                               "gradients would not be differentiable); average by hand with distributed.all_reduce")
        if not self._queued:
            self._queued = True
            queue_callback(self._finish)
        bucket, index = self._place[id(p)]
        total = g if p.grad is None else p.grad._data + g
        bucket.put(index, total)
        if not self.find_unused_parameters:  # (with unused ones, the ranks first agree on which were used)
            self._launch_full()

    def _launch_full(self) -> None:
        """Start the reductions of the full buckets, in bucket order (every rank must start them in one order)."""
        while self._next < len(self._buckets) and len(self._buckets[self._next].ready) == \
                len(self._buckets[self._next].params):
            b = self._buckets[self._next]
            b.work = dist.all_reduce(b.flat, async_op=True)
            self._next += 1

    def _finish(self) -> None:
        """At the end of backward: every bucket reduced, each ``.grad`` set to the mean over ranks."""
        if not self._queued:  # (left over from a backward that failed: a new forward started over)
            return
        self._armed = self._queued = False
        used_here = np.array([int(i in b.ready) for b in self._buckets for i in range(len(b.params))], np.int32)
        missing = [b.params[i][0] for b in self._buckets for i in range(len(b.params)) if i not in b.ready]
        if missing and not self.find_unused_parameters:
            raise RuntimeError(
                f"DistributedDataParallel: rank {dist.get_rank()}: {len(missing)} parameter(s) got no gradient in "
                f"this backward ({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}), so the ranks would "
                "not reduce the same buckets; wrap with DistributedDataParallel(model, find_unused_parameters=True), "
                "or make every parameter take part in the loss")
        used_anywhere = used_here
        if self.find_unused_parameters:  # no reduction has started yet: this one comes first on every rank
            used_anywhere = used_here.copy()
            dist.all_reduce(used_anywhere, op=dist.ReduceOp.MAX)
            for b in self._buckets:  # a parameter unused here counts as its accumulated gradient, or zero
                for i, (_, p) in enumerate(b.params):
                    if i not in b.ready:
                        b.put(i, p.grad._data if p.grad is not None else np.zeros(p._data.shape, p._data.dtype))
            self._launch_full()
        size = dist.get_world_size()
        k = 0
        for b in self._buckets:
            b.work.wait()
            b.work = None
            b.flat /= size
            for i, (_, p) in enumerate(b.params):
                if used_anywhere[k]:
                    mean = b.view(i)
                    if p.grad is not None and p.grad._data.flags.writeable and p.grad._data.base is None:
                        np.copyto(p.grad._data, mean)
                    else:
                        p.grad = Tensor._wrap(mean.copy())
                k += 1
            b.ready.clear()

    def __del__(self) -> None:
        for hooks, hook in getattr(self, "_handles", ()):
            if hook in hooks:
                hooks.remove(hook)


def _make_hook(ref: weakref.ref, p: Any) -> Any:
    def average_later(g: Any) -> Any:
        ddp = ref()
        if ddp is not None and ddp._armed:
            ddp._gradient_ready(p, g)
        return g

    return average_later
