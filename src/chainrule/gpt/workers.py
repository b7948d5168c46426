"""Data-parallel training steps on one machine: each batch is split between this process and forked
worker processes, each computing its rows' gradient on one core.

Why: on a few cores, a step made of many NumPy calls does not split well between threads. Every
NumPy call hands Python's GIL over, and the passes of a small model are too short to hide that.
On 2 cores a small GPT's step (batch 32) took 198 ms with two threads splitting each op, and 150 ms
as two processes taking 16 rows each on one core (PyTorch splits its ops in C++ threads, with no GIL).

How: at the first step the model's parameters move into one block of shared memory (an anonymous
``MAP_SHARED`` mapping) and the workers are forked, so a worker sees every optimiser update at once:
the arrays are the same pages. Each step, this process sends every worker its rows of the batch
(a pipe), computes the loss and gradient of its own rows, then adds the gradients the workers wrote
into their shared blocks. Each part's loss is weighted by its share of the rows, so the sum is the
batch's mean loss and its gradient, as one process computes them up to float rounding (the rows'
terms are summed in another order). During a step every process runs one thread (chainrule's split
passes and OpenBLAS), so the processes do not compete for cores.

Limits: only parameters are shared (a module's other state is the worker's copy from the first step);
a changed set of parameters (added, removed, reshaped, frozen) starts new workers. Dropout masks in a
worker come from generators seeded by (seed, step, worker), so a resumed run draws the same ones. On
platforms without ``fork`` the trainer runs in one process.

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> from chainrule.gpt.training import lm_loss
    >>> model = nn.GPT(nn.GPTConfig(vocab_size=256, context_length=8, d_model=16, n_heads=2, n_layers=1), seed=0)
    >>> x = np.random.default_rng(0).integers(0, 256, (4, 9))
    >>> with GradientWorkers(model, lm_loss, processes=2) as workers:
    ...     loss = workers.accumulate(x[:, :-1], x[:, 1:], scale=1.0, step=0, seed=0)
    >>> one = lm_loss(model, x[:, :-1], x[:, 1:])
    >>> bool(abs(loss - float(one)) < 1e-5)
    True
"""

from __future__ import annotations

import mmap
import os
import signal
import sys
import time
import traceback
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection, Pipe
from typing import Any

import numpy as np

from ..runtime.blas import blas_threads_limited
from ..runtime.threads import threads_limited
from ..tensor import Tensor

__all__ = ["GradientWorkers", "fork_available"]

_ALIGN = 64  # bytes: each shared array starts on a cache line
_LIVE: weakref.WeakSet[GradientWorkers] = weakref.WeakSet()  # a new worker closes its copies of their pipes
_STOP_WAIT = 10.0  # seconds a worker has to exit after being told to, before it is killed


def fork_available() -> bool:
    """Whether this platform can fork workers (Linux; macOS's system libraries are not fork-safe)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


class _SharedArrays:
    """Arrays of the given shapes and dtypes in one anonymous shared mapping (seen by forked children)."""

    def __init__(self, specs: list[tuple[tuple[int, ...], np.dtype]]) -> None:
        offsets, end = [], 0
        for shape, dtype in specs:
            end = -(-end // _ALIGN) * _ALIGN
            offsets.append(end)
            end += int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        self.block = mmap.mmap(-1, max(end, 1))  # MAP_SHARED | MAP_ANONYMOUS
        self.arrays = [np.frombuffer(self.block, dtype, int(np.prod(shape, dtype=np.int64)), off).reshape(shape)
                       for (shape, dtype), off in zip(specs, offsets)]


def _signature(params: list[Any]) -> list[tuple[int, tuple[int, ...], str, bool]]:
    return [(id(p), p._data.shape, p._data.dtype.str, bool(p.requires_grad)) for p in params]


class GradientWorkers:
    """``processes - 1`` forked workers that share the rows of each batch with this process.

    ``loss_fn(model, x, y)`` returns the mean loss over the rows of ``x`` as a Tensor. Close the
    workers with :meth:`close` (or use ``with``); they also end when this object is collected or
    this process exits.
    """

    def __init__(self, model: Any, loss_fn: Callable[[Any, Any, Any], Any], processes: int) -> None:
        if not fork_available():
            raise RuntimeError("GradientWorkers: this platform cannot fork worker processes; train in one process")
        if int(processes) < 2:
            raise ValueError(f"GradientWorkers: processes must be at least 2, got {processes}")
        self.model, self.loss_fn = model, loss_fn
        self.params = list({id(p): p for p in model.parameters()}.values())  # tied weights once
        self.signature = _signature(self.params)
        specs = [(p._data.shape, p._data.dtype) for p in self.params]
        self.values = _SharedArrays(specs)
        self._publish()
        self.grads = [_SharedArrays(specs) for _ in range(int(processes) - 1)]
        self.conns: list[Connection] = []
        self.pids: list[int] = []
        self.usage: list[tuple[float, int]] = []  # (peak resident MB, minor page faults) of each worker, last step
        for index, shared in enumerate(self.grads, start=1):
            ours, theirs = Pipe()
            try:
                pid = os.fork()
            except OSError:  # the workers started so far end too
                ours.close()
                theirs.close()
                self.close()
                raise
            if pid == 0:  # the worker: serve until the pipe closes, never return into the caller's code
                code = 0
                try:
                    ours.close()
                    for other in [*self.conns, *(c for group in _LIVE for c in group.conns)]:
                        other.close()  # our copies only: their workers still end when their parent says so
                    _serve(theirs, model, loss_fn, self.params, shared.arrays, index)
                except BaseException:
                    code = 1
                finally:
                    os._exit(code)
            theirs.close()
            self.conns.append(ours)
            self.pids.append(pid)
            self.usage.append((0.0, 0))
        _LIVE.add(self)

    writer = True  # this process alone writes (the workers only compute): see gpt/averaging.py's interface

    @property
    def processes(self) -> int:
        return len(self.conns) + 1

    def finish(self, loss: float) -> float:
        """(Each :meth:`accumulate` already added the workers' gradients.)"""
        return loss

    def agree(self, value: Any) -> Any:
        """(One process decides.)"""
        return value

    def matches(self, model: Any) -> bool:
        """Whether ``model`` still has the parameters (same tensors, shapes, dtypes, requires_grad) the workers hold."""
        return model is self.model and _signature(list({id(p): p for p in model.parameters()}.values())) == \
            self.signature

    def _publish(self) -> None:
        """Put each parameter's values in the shared block (an optimiser or load_state_dict may have rebound them)."""
        for p, shared in zip(self.params, self.values.arrays):
            if p._data is not shared:
                np.copyto(shared, p._data)
                p._data = shared

    def accumulate(self, x: np.ndarray, y: np.ndarray, scale: float, step: int, seed: int) -> float:
        """Add d(scale * mean loss over all rows of x)/d(parameter) to each parameter's ``.grad``; return the mean loss.

        ``step`` and ``seed`` seed the workers' dropout generators.
        """
        if not self.conns:
            raise RuntimeError("GradientWorkers: the workers were closed; make new ones")
        rows = len(x)
        if rows == 0 or len(y) != rows:
            raise ValueError(f"GradientWorkers.accumulate: need as many rows of x as of y, at least one; got "
                             f"{len(x)} and {len(y)}")
        self._publish()
        bounds = [rows * k // self.processes for k in range(self.processes + 1)]  # part k: rows bounds[k]:bounds[k+1]
        training = bool(getattr(self.model, "training", True))
        busy = [k for k in range(1, self.processes) if bounds[k + 1] > bounds[k]]  # workers with rows to do
        for k in busy:
            lo, hi = bounds[k], bounds[k + 1]
            try:
                self.conns[k - 1].send((x[lo:hi], y[lo:hi], scale * (hi - lo) / rows, seed, step, training))
            except OSError:
                raise self._stopped(k - 1) from None
        total = 0.0
        try:
            if bounds[1] > 0:
                with threads_limited(1), blas_threads_limited(1):
                    loss = self.loss_fn(self.model, x[:bounds[1]], y[:bounds[1]])
                    (loss * (scale * bounds[1] / rows)).backward()
                total = float(loss) * bounds[1] / rows
        finally:
            replies = [(k, self._receive(k - 1)) for k in busy]  # even if ours failed: keep the pipes in step
        for k, (part, peak_kb, faults) in replies:
            total += part * (bounds[k + 1] - bounds[k]) / rows
            self.usage[k - 1] = (peak_kb / 1024.0, faults)
            for p, g in zip(self.params, self.grads[k - 1].arrays):
                if p.requires_grad:
                    p.grad = Tensor._wrap(g.copy() if p.grad is None else p.grad._data + g)
        return total

    def _receive(self, k: int) -> tuple[float, int, int]:
        try:
            reply = self.conns[k].recv()
        except (EOFError, OSError):
            raise self._stopped(k) from None
        if reply[0] != "ok":
            self.close()
            raise RuntimeError(f"GradientWorkers: worker {k + 1} failed:\n{reply[1]}")
        return reply[1], reply[2], reply[3]

    def _stopped(self, k: int) -> RuntimeError:
        """Close every worker and say that worker k + 1 is gone."""
        pid = self.pids[k]
        self.close()
        return RuntimeError(
            f"GradientWorkers: worker {k + 1} (process {pid}) stopped during a step (killed, or out of memory?); "
            "train in one process with TrainConfig(workers=1)"
        )

    def close(self) -> None:
        """Tell the workers to exit and wait for them (one that does not exit in 10 s is killed)."""
        for conn in self.conns:
            try:
                conn.send(None)
            except OSError:  # it is gone already
                pass
            conn.close()
        deadline = time.monotonic() + _STOP_WAIT
        for pid in self.pids:
            try:
                while os.waitpid(pid, os.WNOHANG) == (0, 0):
                    if time.monotonic() > deadline:
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                        break
                    time.sleep(0.001)
            except ChildProcessError:
                pass
        self.conns, self.pids = [], []

    def __enter__(self) -> GradientWorkers:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "conns", None):
            self.close()


def _serve(conn: Connection, model: Any, loss_fn: Callable[[Any, Any, Any], Any], params: list[Any],
           grads: list[np.ndarray], index: int) -> None:
    """A worker's loop: for each (x, y, scale, seed, step, training) received, write d(scale * loss)/d(params)
    into ``grads`` and reply ("ok", loss, peak resident KiB, minor page faults); None or EOF ends it."""
    import resource  # (Unix only, as fork is)

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it then closes our pipe
    os.environ["CHAINRULE_NUM_THREADS"] = "1"
    with blas_threads_limited(1):
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                return
            if message is None:  # close()
                return
            x, y, scale, seed, step, training = message
            try:
                model.train(training)
                for number, (_, mod) in enumerate(model.named_modules()):
                    if isinstance(getattr(mod, "rng", None), np.random.Generator):
                        mod.rng = np.random.default_rng([seed, step, index, number])
                for p in params:
                    p.grad = None
                loss = loss_fn(model, x, y)
                (loss * scale).backward()
                for p, g in zip(params, grads):
                    if p.grad is None:
                        g.fill(0)
                    else:
                        np.copyto(g, p.grad._data)
                    p.grad = None
                usage = resource.getrusage(resource.RUSAGE_SELF)
                reply: tuple = ("ok", float(loss), usage.ru_maxrss, usage.ru_minflt)
            except BaseException:
                reply = ("error", traceback.format_exc())
            conn.send(reply)
