"""The process group and its collectives over mpi4py (see :mod:`chainrule.distributed`).

Each collective hands MPI the array's own buffer (``MPI.IN_PLACE`` for a reduction), so a
C-contiguous NumPy array or Tensor is reduced where it lies; anything else is refused with the fix
(a copy would silently leave the caller's array unchanged).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
import time
import traceback
from typing import Any

import numpy as np

from ..tensor import Tensor
from . import monitor

__all__ = ["ReduceOp", "Work", "init_process_group", "is_available", "is_initialized", "get_rank", "get_world_size",
           "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "all_gather_object",
           "broadcast_object_list", "barrier", "destroy_process_group", "launched_by_mpi", "processes"]

_PROCESSES: list[tuple[int, str]] = []
_COMM: list[Any] = []  # the group's communicator once initialised (a list: no global statement)
_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "SLURM_STEP_NUM_TASKS", "MV2_COMM_WORLD_SIZE")


class ReduceOp:
    """How :func:`all_reduce` combines the ranks' values (``torch.distributed.ReduceOp``'s names)."""

    SUM = "sum"
    AVG = "avg"
    MAX = "max"
    MIN = "min"
    PRODUCT = "product"


def _mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError:
        raise ImportError("chainrule.distributed needs mpi4py and an MPI runtime: pip install 'chainrule[mpi]' "
                          "(mpi4py and the MPICH wheel), or mpi4py built against your cluster's MPI") from None
    return MPI


def is_available() -> bool:
    """Whether mpi4py is installed (checked without starting MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def launched_by_mpi() -> bool:
    """Whether a launcher (``mpiexec``, ``mpirun``, ``srun``) started this process as one of several."""
    for name in _SIZE_VARIABLES:
        try:
            if int(os.environ.get(name, "1")) > 1:
                return True
        except ValueError:
            continue
    return False


def init_process_group(backend: str = "mpi", init_method: Any = None, world_size: int = -1, rank: int = -1,
                       **_: Any) -> None:
    """Join this process to the job's group (all ranks of ``mpiexec``); call it once per process.

    ``backend`` must be ``"mpi"``; ``world_size`` and ``rank``, when given (PyTorch's arguments),
    must agree with what the launcher assigned. Also makes an uncaught exception on any rank end
    the whole job, naming the rank (see :mod:`chainrule.distributed`).
    """
    if str(backend).lower() != "mpi":
        raise ValueError(f"init_process_group: chainrule's backend is 'mpi' (over mpi4py), got {backend!r}; "
                         "launch with mpiexec and pass backend='mpi'")
    if _COMM:
        raise RuntimeError("init_process_group: the process group is already initialised; call "
                           "destroy_process_group() first to make a new one")
    if is_available():
        monitor.watch_this_rank()  # (before MPI starts: under Hydra, a watcher names this rank if it dies)
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    for name, given, actual in (("world_size", world_size, comm.Get_size()), ("rank", rank, comm.Get_rank())):
        if given not in (-1, None) and int(given) != actual:
            raise ValueError(f"init_process_group: {name}={given} but mpiexec started this process with "
                             f"{name}={actual}; leave {name} out (MPI assigns it)")
    _COMM.append(comm)
    _PROCESSES[:] = comm.allgather((os.getpid(), socket.gethostname()))
    _install_abort_on_failure(comm)


def processes() -> list[tuple[int, str]]:
    """``(process id, host name)`` of each rank: mpiexec names a killed rank by its process id only."""
    _comm("processes")
    return list(_PROCESSES)


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has run (and :func:`destroy_process_group` has not)."""
    return bool(_COMM)


def _comm(where: str) -> Any:
    if not _COMM:
        raise RuntimeError(f"{where}: the default process group has not been initialized; call "
                           "chainrule.distributed.init_process_group(backend='mpi') first")
    return _COMM[0]


def get_rank(group: Any = None) -> int:
    """This process's number in the group, 0 to world size - 1."""
    return _comm("get_rank").Get_rank()


def get_world_size(group: Any = None) -> int:
    """How many processes the group has."""
    return _comm("get_world_size").Get_size()


def _buffer(x: Any, where: str, writes: bool = True) -> np.ndarray:
    """The NumPy array that MPI reads and writes in place: ``x`` itself, or a Tensor's ``.data``."""
    a = x._data if isinstance(x, Tensor) else x
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{where}: needs a NumPy array or a chainrule Tensor to work on in place, got "
                        f"{type(x).__name__}; wrap it with np.asarray first and use the result")
    if not a.flags.c_contiguous or (writes and not a.flags.writeable):
        raise ValueError(f"{where}: the array must be C-contiguous and writeable to be changed in place (shape "
                         f"{a.shape}, strides {a.strides}); pass np.ascontiguousarray(x) and use that array")
    if a.dtype.hasobject:
        raise TypeError(f"{where}: an array of Python objects has no MPI type; use a numeric dtype")
    return a


def _op(MPI: Any, op: Any, where: str) -> Any:
    ops = {"sum": MPI.SUM, "avg": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "product": MPI.PROD}
    name = getattr(op, "name", op)
    name = str(name).lower().rsplit(".", 1)[-1] if name is not None else ""
    if name not in ops:
        raise ValueError(f"{where}: op must be one of ReduceOp.SUM, AVG, MAX, MIN, PRODUCT, got {op!r}")
    return name, ops[name]


class Work:
    """A started collective (``async_op=True``): :meth:`wait` finishes it (then the array holds the result)."""

    def __init__(self, request: Any, then: Any = None) -> None:
        self._request, self._then = request, then

    def is_completed(self) -> bool:
        return self._request is None or bool(self._request.Test())

    def wait(self, timeout: Any = None) -> bool:
        if self._request is not None:
            self._request.Wait()
            self._request = None
            if self._then is not None:
                self._then()
        return True


def all_reduce(tensor: Any, op: Any = ReduceOp.SUM, group: Any = None, async_op: bool = False) -> Work | None:
    """Combine ``tensor`` over all ranks (sum, average, max, min, product); every rank gets the result in place.

    ``async_op=True`` starts the reduction and returns a :class:`Work` to ``wait()`` on (MPI's ``Iallreduce``).
    ``ReduceOp.AVG`` needs a floating dtype (the sum is divided by the world size).
    """
    comm = _comm("all_reduce")
    a = _buffer(tensor, "all_reduce")
    MPI = _mpi()
    name, mpi_op = _op(MPI, op, "all_reduce")
    if name == "avg" and not np.issubdtype(a.dtype, np.inexact):
        raise TypeError(f"all_reduce: ReduceOp.AVG needs a floating dtype, got {a.dtype}; use ReduceOp.SUM and "
                        "divide, or cast first")
    then = None
    if name == "avg":
        size = comm.Get_size()

        def then() -> None:
            np.divide(a, size, out=a)

    if async_op:
        return Work(comm.Iallreduce(MPI.IN_PLACE, a, op=mpi_op), then)
    comm.Allreduce(MPI.IN_PLACE, a, op=mpi_op)
    if then is not None:
        then()
    return None


def broadcast(tensor: Any, src: int = 0, group: Any = None, async_op: bool = False) -> Work | None:
    """Every rank's ``tensor`` becomes rank ``src``'s (in place; same shape and dtype on every rank)."""
    comm = _comm("broadcast")
    a = _buffer(tensor, "broadcast")
    if not 0 <= int(src) < comm.Get_size():
        raise ValueError(f"broadcast: src={src} is not a rank of this group (0 to {comm.Get_size() - 1})")
    if async_op:
        return Work(comm.Ibcast(a, root=int(src)))
    comm.Bcast(a, root=int(src))
    return None


def all_gather_into_tensor(output_tensor: Any, input_tensor: Any, group: Any = None, async_op: bool = False
                           ) -> Work | None:
    """Rank r's ``input_tensor`` lands in block r of ``output_tensor`` (along its first axis, world size blocks)."""
    comm = _comm("all_gather_into_tensor")
    out, a = _buffer(output_tensor, "all_gather_into_tensor"), _buffer(input_tensor, "all_gather_into_tensor", False)
    size = comm.Get_size()
    if out.dtype != a.dtype or out.size != size * a.size:
        raise ValueError(f"all_gather_into_tensor: the output must hold world_size={size} copies of the input "
                         f"({a.shape} {a.dtype}), got {out.shape} {out.dtype}")
    if async_op:
        return Work(comm.Iallgather(a, out))
    comm.Allgather(a, out)
    return None


def all_gather(tensor_list: list[Any], tensor: Any, group: Any = None, async_op: bool = False) -> None:
    """``tensor_list[r]`` becomes rank r's ``tensor`` on every rank (PyTorch's signature: fills the list in place)."""
    comm = _comm("all_gather")
    size = comm.Get_size()
    if len(tensor_list) != size:
        raise ValueError(f"all_gather: tensor_list needs one entry per rank ({size}), got {len(tensor_list)}")
    a = _buffer(tensor, "all_gather", False)
    outs = [_buffer(t, "all_gather") for t in tensor_list]
    for r, o in enumerate(outs):
        if o.shape != a.shape or o.dtype != a.dtype:
            raise ValueError(f"all_gather: tensor_list[{r}] is {o.shape} {o.dtype}, but the input is {a.shape} "
                             f"{a.dtype}; give entries like the input")
    gathered = np.empty((size, *a.shape), a.dtype)  # one message, then each rank's block to its entry
    comm.Allgather(a, gathered)
    for o, block in zip(outs, gathered):
        np.copyto(o, block)


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """``object_list[r]`` becomes rank r's ``obj`` (any picklable object)."""
    comm = _comm("all_gather_object")
    object_list[:] = comm.allgather(obj)


def broadcast_object_list(object_list: list[Any], src: int = 0, group: Any = None) -> None:
    """Every rank's ``object_list`` gets rank ``src``'s entries (picklable objects)."""
    comm = _comm("broadcast_object_list")
    object_list[:] = comm.bcast(list(object_list) if comm.Get_rank() == src else None, root=int(src))


def barrier(group: Any = None, async_op: bool = False) -> None:
    """Wait until every rank has reached this call."""
    _comm("barrier").Barrier()


def destroy_process_group(group: Any = None) -> None:
    """Leave the group (MPI itself stays up until the process exits, as mpi4py arranges)."""
    _comm("destroy_process_group").Barrier()
    _COMM.clear()
    _restore_excepthook()


# -- a failing rank ends the job ------------------------------------------------------------------
_PREVIOUS_HOOK: list[Any] = []


def _install_abort_on_failure(comm: Any) -> None:
    """An uncaught exception prints ``rank k failed: ...`` with its traceback and aborts every rank."""
    if _PREVIOUS_HOOK:
        return
    previous = sys.excepthook
    _PREVIOUS_HOOK.append(previous)

    def abort_job(kind: type, value: BaseException, tb: Any) -> None:
        rank = comm.Get_rank()
        text = "".join(traceback.format_exception(kind, value, tb))
        sys.stderr.write(f"rank {rank} failed: {kind.__name__}: {value}\n{text}"
                         f"rank {rank} failed: ending all {comm.Get_size()} ranks of the job\n")
        sys.stderr.flush()
        abort(comm, 1)

    sys.excepthook = abort_job


def _restore_excepthook() -> None:
    if _PREVIOUS_HOOK:
        sys.excepthook = _PREVIOUS_HOOK.pop()


def abort_job(code: int = 1) -> None:
    """End every rank of the job now, with exit status ``code`` (``MPI_Abort``)."""
    abort(_comm("abort_job"), code)


def abort(comm: Any, code: int) -> None:
    """End every rank of the job now (``MPI_Abort``); never returns."""
    sys.stdout.flush()
    sys.stderr.flush()
    monitor.mark_reported()
    # the launcher forwards each rank's output through a pipe: give it a moment to pass the last lines on before
    # Abort kills the ranks (under load a message printed just before could be lost)
    time.sleep(0.25)
    comm.Abort(int(code))
    os._exit(int(code))  # (Abort does not return; this is for an MPI that would)
