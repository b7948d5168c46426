"""Collectives between processes over MPI, with PyTorch's names (``torch.distributed``'s vocabulary).

Launch the same script on N processes with ``mpiexec -n N python script.py`` (one machine) or
``srun`` / ``mpiexec`` on a cluster (see docs/distributed.md). Each process calls
:func:`init_process_group` once; then :func:`all_reduce`, :func:`broadcast`, :func:`all_gather`,
:func:`barrier` act on NumPy arrays or chainrule Tensors (their ``.data``) in place, handing MPI the
array's own memory (no copy for a C-contiguous array). ``ReduceOp.AVG`` is a sum then one division.
Installing needs the ``mpi`` extra (``pip install chainrule[mpi]``: mpi4py and the MPICH runtime).

After :func:`init_process_group`, an exception that no code catches on one rank prints
``rank k failed: ...`` and ends every rank of the job (``MPI_Abort``), instead of leaving the others
waiting in a collective; a rank that is killed, or exits without a word, ends the job through ``mpiexec``
(under MPICH's, a watcher process prints which rank died and how: :mod:`chainrule.distributed.monitor`).

Example (run under ``mpiexec -n 2``; in one process it is a group of one):
    >>> import numpy as np
    >>> from chainrule import distributed as dist
    >>> dist.init_process_group(backend="mpi")
    >>> x = np.full(3, float(dist.get_rank() + 1))
    >>> dist.all_reduce(x, op=dist.ReduceOp.SUM)
    >>> bool(np.all(x == sum(range(1, dist.get_world_size() + 1))))
    True
    >>> dist.destroy_process_group()
"""

from __future__ import annotations

from .collectives import (
    ReduceOp,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    destroy_process_group,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    launched_by_mpi,
    processes,
)

__all__ = [
    "ReduceOp", "Work", "init_process_group", "is_available", "is_initialized", "get_rank", "get_world_size",
    "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "all_gather_object", "broadcast_object_list",
    "barrier", "destroy_process_group", "launched_by_mpi", "processes",
]
