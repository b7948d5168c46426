"""Naming a rank that dies without a word, under MPICH's ``mpiexec`` (Hydra).

An uncaught exception is reported by the rank itself (``rank k failed: ...``, then ``MPI_Abort``).
A rank killed by a signal (the out-of-memory killer, ``kill -9``) or ending through ``os._exit``
cannot speak, and Hydra's message names a process id, sometimes of a rank it killed afterwards.
So, before MPI starts, the process Hydra launched forks: the child becomes the rank, and the
parent only waits for it. When the child ends badly without having reported it, the parent prints
``rank k failed: its process n was killed by signal SIGKILL ...`` and exits with that status, which
makes Hydra end the other ranks. The child dies with its parent (``PR_SET_PDEATHSIG``), so a rank
whose watcher Hydra kills does not linger. Signals sent to the watcher (Ctrl-C) go on to the rank.

Only under Hydra (its ``PMI_FD``: the child inherits the connection), on Linux; Open MPI's ``mpirun``
and Slurm's ``srun`` name the failed rank themselves. ``CHAINRULE_MPI_WATCH=0`` turns it off.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import sys

__all__ = ["watch_this_rank", "mark_reported"]

_REPORT_FD: list[int] = []  # the child's end of the pipe telling the watcher "I reported my failure"
_FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGQUIT")


def _wanted() -> bool:
    return (sys.platform.startswith("linux") and "PMI_FD" in os.environ and "mpi4py.MPI" not in sys.modules
            and os.environ.get("CHAINRULE_MPI_WATCH", "1") != "0" and not _REPORT_FD)


def _rank() -> str:
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"):
        if name in os.environ:
            return os.environ[name]
    return "?"


def watch_this_rank() -> None:
    """Fork a watcher for this rank (see the module notes); returns in the child, never in the watcher."""
    if not _wanted():
        return
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return
    if pid == 0:
        os.close(read_end)
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent:  # the watcher is gone already
            os._exit(1)
        _REPORT_FD.append(write_end)
        atexit.register(mark_reported)  # a Python exit (sys.exit(2), an error) speaks for itself
        return
    os.close(write_end)
    _wait_for(pid, read_end)


def _wait_for(pid: int, read_end: int) -> None:
    forwarded: list[int] = []  # a rank ended by a signal passed on (Hydra ending the job, Ctrl-C) is no news

    def forward(signum: int, _frame: object) -> None:
        forwarded.append(signum)
        os.kill(pid, signum)

    for name in _FORWARDED:
        signum = getattr(signal, name, None)
        if signum is not None:
            signal.signal(signum, forward)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            os._exit(1)
    code = os.waitstatus_to_exitcode(status)
    reported = False
    try:
        reported = bool(os.read(read_end, 1))
    except OSError:
        pass
    if code != 0 and not reported and not forwarded:
        if code < 0:
            name = signal.Signals(-code).name
            why = f"was killed by signal {name}" + (" (out of memory, or kill -9?)" if name == "SIGKILL" else "")
        else:
            why = f"exited with status {code} without raising an exception (os._exit, or a crash in native code?)"
        os.write(2, f"rank {_rank()} failed: its process {pid} {why}; ending the job\n".encode())
    os._exit(code if code >= 0 else 128 - code)


def mark_reported() -> None:
    """Tell the watcher that this rank has printed why it fails (so it stays silent)."""
    if _REPORT_FD:
        try:
            os.write(_REPORT_FD[0], b"r")
        except OSError:
            pass
