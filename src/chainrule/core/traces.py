"""The current trace: what a primitive call does in this thread or async task, asked in one place.

Eager chainrule needs no trace: ``apply`` runs the primitive and records the graph for reverse
mode (and pushes tangents under ``jvp``; a batched argument under ``vmap`` goes to its batching
rule). A transform that must see every primitive call instead, such as ``jit``'s recording, opens a
trace with :func:`tracing`; ``apply`` then hands each call to the trace's ``process``, and the few
places that read a tensor's values into Python, draw random numbers or start a backward sweep tell
the trace too. The trace is held in a :class:`contextvars.ContextVar`, as grad mode is: a trace in
one thread (or task) never changes what another one does. ``open`` counts the traces running in the
whole process, so that the hot path pays one integer test while none runs.

A trace is any object with these methods (``chainrule.replay.recording.Recorder`` is one):

- ``process(prim, args, kw)``: the primitive call, done the trace's way (its result);
- ``read(t, what, again, result)``: ``result`` was read from tensor ``t`` into Python; ``again(values)``
  reads it from other values;
- ``read_all(what, args)``: the tensors among ``args`` (nested in lists and tuples) were read by value;
- ``read_raw(x, frame)``: ``raw(x)`` handed tensor ``x``'s array to the code running in ``frame``;
- ``wrapped(out, inputs, frame)``: a value computed outside the primitives from ``inputs`` was wrapped as ``out``;
- ``drew(make, args, out)``: ``out`` came from the random generator as ``make(*args)`` (see :func:`draw`);
- ``called(module)``: a module (``nn.Module``) was called;
- ``backward()``: a backward sweep starts.

Example:
    >>> from chainrule.core import traces
    >>> traces.current() is None     # eager: no trace
    True
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

_CURRENT: ContextVar[Any] = ContextVar("chainrule_trace", default=None)
current: Callable[[], Any] = _CURRENT.get
"""The trace of this thread or task (None: eager)."""
open = 0  # noqa: A001  (traces and vmap calls running in the process, all threads: gates the hot path's look-up)
_lock = threading.Lock()


def intercepting(delta: int) -> None:
    """Count ``delta`` more calls that intercept primitives somewhere in the process (a trace, a ``vmap``): while
    none runs, ``apply1`` and ``apply2`` (the unrolled forms of ``apply``) need not hand their calls to ``apply``."""
    global open
    with _lock:
        open += delta


@contextlib.contextmanager
def tracing(trace: Any) -> Iterator[Any]:
    """Make ``trace`` this thread's (task's) current trace for the block."""
    intercepting(1)
    token = _CURRENT.set(trace)
    try:
        yield trace
    finally:
        _CURRENT.reset(token)
        intercepting(-1)


def hide() -> Any:
    """No trace until :data:`unhide` is called with the returned token (a trace runs a call eagerly beneath it)."""
    return _CURRENT.set(None)


unhide: Callable[[Any], None] = _CURRENT.reset


def draw(make: Callable[..., Any], *args: Any) -> Any:
    """``make(*args)``: random values from a generator. A trace is told, so that a replay draws afresh
    (calling ``make(*args)`` again, in the same order as the eager run: the same seed, the same values).

    ``make`` must look its generator up from ``args`` on each call (a seed, a Generator, or None for the
    default one), and may do NumPy arithmetic on the draws (a dropout mask).
    """
    out = make(*args)
    if open:
        trace = _CURRENT.get()
        if trace is not None:
            trace.drew(make, args, out)
    return out


def reads_values(method: Callable[..., Any], name: str | None = None) -> Callable[..., Any]:
    """A Tensor method that reads the values into Python (``float(t)``, ``t.item()``, ``t.argmax()``): a
    trace is told what was read, so that a replay can check it reads the same."""
    what = f"{name or method.__name__}()"

    @functools.wraps(method)
    def reading(self: Any, *a: Any, **k: Any) -> Any:
        result = method(self, *a, **k)
        if open:
            trace = _CURRENT.get()
            if trace is not None:
                trace.read(self, what, lambda v: method(type(self)._wrap(v), *a, **k), result)
        return result

    return reading


def read(x: Any, what: str, recompute: Callable[[Any], Any], result: Any) -> None:
    """What :func:`reads_values` tells the trace, for a method that cannot take its wrapper (it counts frames)."""
    trace = _CURRENT.get()
    if trace is not None:
        trace.read(x, what, recompute, result)


def reads_all(what: str, args: Any) -> None:
    """The tensors among ``args`` (nested in lists and tuples) are read by value (a NumPy query, an integer op)."""
    trace = _CURRENT.get()
    if trace is not None:
        trace.read_all(what, args)


def backward_starts() -> None:
    """A backward sweep starts: the trace may refuse it."""
    trace = _CURRENT.get()
    if trace is not None:
        trace.backward()


def called(module: Any) -> None:
    """A module is called (its mode and settings shape what the trace records)."""
    trace = _CURRENT.get()
    if trace is not None:
        trace.called(module)
