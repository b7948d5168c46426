"""``jit`` and ``Jitted``: trace on the first call, check each later call against the trace, replay it."""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff import batch_levels as batching
from ..core import clock, traces
from ..core.device import ARRAY_TYPES, as_array, is_off_host, of
from ..core.errors import PerformanceWarning
from ..core.node import Node
from ..core.state import forward_levels, grad_enabled, transform_depth
from ..ops.pytorch.dim_args import numpy_methods_for
from ..tensor import Tensor
from ..tree_util import tree_flatten, tree_unflatten
from .disabling import disabled as jit_disabled
from .guards import Guards
from .program import Program, ReplayNode
from .recording import Recorder
from .static_args import bind, split, static_names
from .tape import JitError, same_answer, slots_of

_WARN_AFTER = 8  # traces again for a changed value before a warning says the replays save nothing
_ARRAYS = (np.ndarray, float, np.floating)  # JAX's traced arguments (integers stay plain: sizes, counts)


def _is_array(a: Any) -> bool:
    """A traced argument: a NumPy array, a float, or a device's array (CuPy's)."""
    return a.__class__ in ARRAY_TYPES or isinstance(a, _ARRAYS)


def _arrays_in_containers(args: tuple) -> bool:
    """Arguments holding arrays inside lists, tuples or dicts (JAX's parameter pytrees), and no Tensor anywhere."""
    if not any(isinstance(a, (list, tuple, dict)) for a in args):
        return False
    leaves = tree_flatten(args)[0]
    return any(_is_array(v) for v in leaves) and not any(isinstance(v, Tensor) for v in leaves)


def under_vmap(args: tuple) -> bool:
    """True inside a vmap of this thread or task (a vmap in another thread changes nothing here)."""
    return bool(batching.open) and bool(batching.levels() or batching.batched_in(args, None))  # type: ignore[arg-type]


def _as_traced(a: Any, device: Any) -> Tensor:
    """An array argument as the Tensor a trace follows: a device's array stays there, and a float goes to the device
    of the other arguments (``device``, None for the host), where a Python number meets them in eager."""
    if device is not None and isinstance(a, (float, np.floating)):
        return Tensor._wrap(device.from_host(np.asarray(a)))
    return Tensor._wrap(as_array(a))


def _describe(a: Any) -> tuple:
    """(kind, shape, dtype, requires_grad, array type, device) of an array or Tensor argument; else ("value", type,
    value)."""
    if isinstance(a, Tensor):
        d = a._data
        return ("Tensor", d.shape, d.dtype, a._requires_grad, d.__class__, of(d).name)
    if a.__class__ in ARRAY_TYPES or isinstance(a, np.ndarray):
        return ("ndarray", a.shape, a.dtype, None, a.__class__, of(a).name)
    return ("value", type(a), a)


class OtherArguments(JitError):
    """A call whose arguments differ from the trace's (shapes, dtypes, plain values): ``jit`` traces again for them,
    as JAX does; ``jit_step`` and code that reads the replay directly see the JitError."""

    def __init__(self, message: str, owner: Any = None) -> None:
        super().__init__(message)
        self.owner = owner  # the Jitted whose trace the arguments differ from (not one called inside it)


def _outside_jit() -> int:
    """The stacklevel of the first frame outside this file (a warning points at the caller's line, however many of
    the jit's own frames the call went through)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    return level


class ReadChanged(OtherArguments):
    """A value the function read into Python during the trace (``bool(x > 0)``, ``.item()``, a sort's order) gives
    another answer now: the traced ops may not be the ones this call needs, so ``jit`` traces the call again (an
    eager run: its result is right), and after a few such calls runs the function as it is."""


def _explain_mismatch(name: str, i: int, traced: tuple, now: tuple, owner: Any = None) -> JitError:
    def say(d: tuple) -> str:
        if d[0] == "value":
            return f"{d[1].__name__} {d[2]!r:.40}"
        return (f"{d[0]} of shape {d[1]}, dtype {d[2]}" + (f", requires_grad={d[3]}" if d[0] == "Tensor" else "")
                + ("" if d[5] == "cpu" else f" on {d[5]}"))

    return OtherArguments(f"jit({name}): argument {i} is a {say(now)} but the function was traced with a "
                          f"{say(traced)}; call it with the traced shapes and dtypes, or make another jit(...) for "
                          "these", owner)


class Jitted:
    """A function traced on its first call and replayed on later ones (see :func:`jit`)."""

    def __init__(self, fn: Callable[..., Any], arrays_in_arrays_out: bool = True, static_argnums: Any = None,
                 static_argnames: Any = None) -> None:
        self.fn = fn
        self._static = static_names(fn, static_argnums, static_argnames) if (
            static_argnums is not None or static_argnames is not None) else None
        self._by_static: dict[tuple, Jitted] = {}  # JAX's static arguments and keywords: one trace per key
        self._by_arguments: dict[tuple, Jitted] = {}  # the traces of arguments unlike the first call's
        self._arrays_in_arrays_out = arrays_in_arrays_out  # False for jit_step's loss: it reads values itself
        self.name = getattr(fn, "__name__", type(fn).__name__)
        functools.update_wrapper(self, fn, updated=())  # not fn.__dict__: a custom rule's fn, jvp would replace ours
        self._signature: list[tuple] | None = None
        self._grad_mode: bool | None = None
        self._program: Program | None = None
        self._captured: list[tuple[Tensor, tuple, Any, bool, type]] = []
        self._inputs: list[int | None] = []
        self._out: Any = None  # how to rebuild the output: "single" or a tuple length
        self._grad_out: int | None = None  # which output carries the gradient
        self._passed: list[Any] = []
        self._parents: list[int] = []
        self._array_signature: list[tuple] = []  # the NumPy arguments of a trace on arrays, as given
        self._eager = False  # called on array arguments and could not be traced: runs as it is (see _call_on_arrays)
        self._by_structure: dict[Any, tuple[Jitted, list[Any]]] = {}  # arrays in containers (see _call_on_pytrees)
        self._guards = Guards()  # what the trace read by name (closed-over values, globals, modules' settings)
        self.traces = 0  # how many times the function was traced (again when a guard's value changed)
        self.traces_again = 0  # of them, for a changed value

    @property
    def source(self) -> str:
        """The generated Python of the replay (after the first call)."""
        return self._program.source if self._program is not None else ""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if jit_disabled():  # inside disable_jit(): the function as it is
            return self.fn(*args, **kwargs)
        if kwargs or self._static is not None:
            return self._call_static(args, kwargs)
        try:  # (inline, not a method: the warnings' stacklevel counts the frames up to the caller)
            if forward_levels() or under_vmap(args):  # JAX's vmap(jit(f)), jvp(jit(f)): a replay has no forward or
                return self.fn(*args)  # batched rules, so the function runs as it is (jit only saves time)
            if self._arrays_in_arrays_out and _arrays_in_containers(args):
                return self._call_on_pytrees(args)
            if self._arrays_in_arrays_out and any(_is_array(a) for a in args) and not any(
                isinstance(a, Tensor) for a in args
            ):
                return self._call_on_arrays(args)
            if self._eager:  # (it could not be traced: see _trace)
                return self.fn(*args)
            if self._program is None or self.expired():
                return self._trace_inside(args) if transform_depth() else self._trace(args)
            return self._replay(args)
        except ReadChanged as e:  # the traced ops may not hold for these values: traced again (an eager run)
            if e.owner is not self:
                raise
            return self._read_changed(args, e)
        except OtherArguments as e:  # new shapes, dtypes or plain values: a trace of their own, as JAX's jit
            if e.owner is not self:
                raise
            return self._other_arguments(args, e)

    def _read_changed(self, args: tuple, error: JitError) -> Any:
        self._program = None
        self.traces_again += 1
        if self.traces_again == _WARN_AFTER:  # values that steer the function on every call: replays save nothing
            warnings.warn(f"jit({self.name}) runs the function as it is from now on: {error}", PerformanceWarning,
                          stacklevel=_outside_jit())
            self._eager = True
        return self(*args)

    def _other_arguments(self, args: tuple, error: JitError) -> Any:
        try:
            key = tuple(_describe(a) for a in args)
            hash(key)
        except TypeError:  # (an unhashable plain argument: no trace can be looked up for it)
            raise error from None
        jitted = self._by_arguments.get(key)
        if jitted is None:
            jitted = self._by_arguments[key] = Jitted(self.fn, self._arrays_in_arrays_out)
            if len(self._by_arguments) == _WARN_AFTER:  # e.g. a float that changes on every call: nothing is saved
                warnings.warn(f"jit({self.name}) was traced for {_WARN_AFTER + 1} kinds of arguments (shapes, dtypes "
                              f"or plain values); the latest: {error}. Pass a changing number as an array or "
                              "Tensor (traced), or call without jit", PerformanceWarning, stacklevel=3)
        return jitted(*args)

    def _call_static(self, args: tuple, kwargs: dict[str, Any]) -> Any:
        """A call with static arguments or keywords (see ``replay.static_args``): the jitted function of the traced
        values, one per value of the static arguments."""
        nums, names = self._static if self._static is not None else ((), frozenset())
        key, traced = split(self.name, args, kwargs, nums, names)
        jitted = self._by_static.get(key)
        if jitted is None:
            jitted = self._by_static[key] = Jitted(bind(self.fn, key), self._arrays_in_arrays_out)
        return jitted(*traced)

    def _trace_inside(self, args: tuple) -> Any:
        """Called inside a transform (JAX's ``grad(jit(grad(f)))``): a function that cannot be traced runs as it
        is, with a warning, as on array arguments (jit only saves time)."""
        if self._eager:
            return self.fn(*args)
        try:
            return self._trace(args)
        except JitError as e:
            warnings.warn(f"jit({self.name}) runs the function as it is (no replay) inside a transform, as it cannot "
                          f"trace it: {e}", PerformanceWarning, stacklevel=3)
            self._eager = True
            return self.fn(*args)

    def _call_on_pytrees(self, args: tuple) -> Any:
        """JAX's ``jit(update)(params, x)`` with ``params`` a list, tuple or dict of arrays: the function of the
        arguments' leaves is jitted (one per structure of the arguments), and its results rebuilt as returned."""
        leaves, structure = tree_flatten(args)
        flat = self._by_structure.get(structure)
        if flat is None:
            returned: list[Any] = [None]  # the structure of the results, noted when the function runs

            def on_leaves(*given: Any) -> tuple:
                result = self.fn(*tree_unflatten(structure, list(given)))
                out, returned[0] = tree_flatten(result)
                return tuple(out)

            on_leaves.__name__ = self.name
            on_leaves.__wrapped__ = self.fn  # type: ignore[attr-defined]  (the guards read what fn reads by name)
            flat = self._by_structure[structure] = (Jitted(on_leaves), returned)
        jitted, returned = flat
        out = jitted(*leaves)
        return tree_unflatten(returned[0], list(out))

    def _call_on_arrays(self, args: tuple) -> Any:
        """JAX's ``jit(f)(array)``: NumPy arguments are traced as Tensors (ops on bare arrays would record
        nothing), the function sees NumPy's method meanings, and the results come back as arrays."""
        if self._eager:
            return self.fn(*args)
        device = next((of(a) for a in args if is_off_host(a)), None)
        wrapped = tuple(_as_traced(a, device) if _is_array(a) else a for a in args)
        with numpy_methods_for(args):
            if self._program is not None and not self.expired():
                for i, (a, traced) in enumerate(zip(args, self._array_signature, strict=False)):
                    now = _describe(a)  # said in the caller's terms (an ndarray), not the Tensor it is traced as
                    differs = now[:3] != traced[:3] or now[4:5] != traced[4:5]  # (index 4: the array type)
                    if differs and (now[0], traced[0]) != ("value", "value") or now[0] != traced[0]:
                        raise _explain_mismatch(self.name, i, traced, now, self)
                result = self._replay(wrapped)
            else:
                try:
                    self._array_signature = [_describe(a) for a in args]
                    result = self._trace(wrapped)
                except JitError as e:  # e.g. JAX's jit(jacfwd(f)): a replay holds no transform; jit only saves time
                    warnings.warn(f"jit({self.name}) runs the function as it is (no replay) on array arguments, as it "
                                  f"cannot trace it: {e}", PerformanceWarning, stacklevel=3)
                    self._eager = True
                    return self.fn(*args)

        def as_result(o: Any) -> Any:  # a result that carries a gradient (to a tensor read from outside) stays a Tensor
            return o._data if isinstance(o, Tensor) and not o._requires_grad else o

        return type(result)(map(as_result, result)) if isinstance(result, (tuple, list)) else as_result(result)

    def expired(self) -> bool:
        """True (and the trace forgotten) when a value the trace read by name changed (see ``replay.guards``)."""
        what = self._guards.changed() if self._guards.checks else None
        if what is None:
            return False
        self._program = None
        self.traces_again += 1
        if self.traces_again == _WARN_AFTER:  # a value that changes on every call: the replays save nothing
            warnings.warn(f"jit({self.name}) was traced {_WARN_AFTER + 1} times: {what} changed since the last "
                          "trace each time; pass such a value as an argument (a Tensor), or call without jit",
                          PerformanceWarning, stacklevel=3)
        return True

    def _as_it_is(self, result: Any, why: str) -> Any:
        """The function cannot be replayed: its first run was eager (the trace only watched it), so its result
        stands, and later calls run it as it is (jit only saves time), with this warning once."""
        warnings.warn(f"jit({self.name}) runs the function as it is (no replay): {why}", PerformanceWarning,
                      stacklevel=_outside_jit())
        self._eager = True
        self._program = None
        return result

    # -- first call: run eagerly and record ----------------------------------------------------
    def _trace(self, args: tuple) -> Any:
        self.traces += 1
        self._program = None
        trace = Recorder(self.name)
        for a in args:
            trace.inputs.append(trace.new_slot(a, a._data) if isinstance(a, Tensor)
                                else trace.new_slot(None, a) if isinstance(a, np.ndarray) or a.__class__ in ARRAY_TYPES
                                else None)
        with traces.tracing(trace):  # this thread's (task's) primitive calls go to the trace
            result = self.fn(*args)
        if trace.stopped is not None:  # the function ran to its end as it is: its result is the eager one
            return self._as_it_is(result, trace.why)
        trace.outside.function(self.fn)
        if hasattr(self.fn, "training"):  # jit(model): its settings (its __call__ noted it; a plain forward may not)
            trace.outside.module(self.fn)
        if clock.last_change[0] != trace.changes:
            return self._as_it_is(result, "the function changes a tensor in place (a replay would not); make the "
                                  "change outside the jitted function")
        outs = list(result) if isinstance(result, (tuple, list)) else [result]
        op_slots = {s for op in trace.ops for s in slots_of(op.out)}
        out_slots, self._passed = [], []  # outputs that are an argument or an outside tensor are returned as they are
        for k, o in enumerate(outs):
            s = trace.slot_of.get(id(o)) if isinstance(o, Tensor) else None
            if s is None:
                return self._as_it_is(result, f"output {k} is not a Tensor computed by chainrule ops inside the "
                                      f"function (got {type(o).__name__}); return Tensors computed from the inputs")
            if s in op_slots and s not in trace.inputs:
                out_slots.append(s)
                self._passed.append(None)
                continue
            if s in trace.inputs and o is args[trace.inputs.index(s)]:
                self._passed.append(trace.inputs.index(s))
            elif any(o is t for t, _ in trace.captured):
                self._passed.append(o)
            else:
                return self._as_it_is(result, f"output {k} is a new Tensor around an argument's values (e.g. "
                                      "detach()); return the argument itself")
            out_slots.append(None)
        differentiable = [k for k, o in enumerate(outs) if o._requires_grad and self._passed[k] is None]
        if len(differentiable) > 1:
            return self._as_it_is(result, f"outputs {differentiable} all require grad; a replay gives gradients "
                                  "through one output: return one (e.g. their sum)")
        for i, s in enumerate(trace.inputs):
            if s is not None and s not in trace.used and s not in out_slots and i not in self._passed:
                return self._as_it_is(result, f"argument {i} is not used by any chainrule op (converted with NumPy "
                                      "inside?), so a replay would freeze its first values; compute with chainrule "
                                      "ops (or leave an argument the function ignores out of its arguments)")
        self._grad_out = differentiable[0] if differentiable else None
        grad_slot = out_slots[self._grad_out] if differentiable else None
        self._program = Program(trace, [s for s in out_slots if s is not None], grad_slot)
        self._guards = trace.outside
        self._signature = [_describe(a) for a in args]
        self._grad_mode = grad_enabled()
        self._inputs = trace.inputs
        self._captured = [(t, t._data.shape, t._data.dtype, t._requires_grad, t._data.__class__)
                          for t, _ in trace.captured]
        self._out = None if not isinstance(result, (tuple, list)) else type(result)
        external_slots = [s for s in trace.inputs if s is not None] + [s for _, s in trace.captured]
        self._parents = [external_slots.index(s) for s in self._program.externals]
        return result

    # -- later calls: check, run the flat forward, hang one node --------------------------------
    def _replay(self, args: tuple) -> Any:
        program = self._program
        values, tensors = self._run_forward(args)
        outs = []
        positions = iter(program.out_positions)
        for k, passed in enumerate(self._passed):
            if passed is not None:  # the function returned an argument (by position) or an outside tensor
                outs.append(args[passed] if isinstance(passed, int) else passed)
                continue
            value = values[next(positions)]
            if k == self._grad_out:
                inputs = [tensors[i] for i in self._parents]
                edges = tuple((j, p if p._node is None else p._node, p._index, p._data.shape, p._data.dtype)
                              for j, p in enumerate(inputs))
                # the inputs' arrays are kept so that backward can see whether they changed in place since this call
                node = Node(ReplayNode(program, values), edges, None, [p._data for p in inputs], None, clock.tick())
                outs.append(Tensor._linked(value, node))
            else:
                outs.append(Tensor._wrap(value))
        return outs[0] if self._out is None else self._out(outs)

    def _run_forward(self, args: tuple) -> tuple[tuple, list[Any]]:
        """Check a call against the trace and run the flat forward: the slot values the backward reads,
        and the argument and outside tensors in the order of ``_parents``' indices."""
        program: Program = self._program  # type: ignore[assignment]  (set by the trace)
        sig = self._signature
        if len(args) != len(sig):
            raise OtherArguments(f"jit({self.name}): called with {len(args)} arguments, traced with {len(sig)}", self)
        sources: list[Any] = []
        tensors: list[Any] = []
        for i, a in enumerate(args):
            traced = sig[i]
            kind = traced[0]
            if kind == "Tensor":  # the common case first, without building a description
                ok = isinstance(a, Tensor) and a._data.shape == traced[1] and a._data.dtype == traced[2] and (
                    a._requires_grad == traced[3]) and a._data.__class__ is traced[4]  # (and on the traced device)
            elif kind == "ndarray":
                ok = a.__class__ is traced[4] and a.shape == traced[1] and a.dtype == traced[2]
            else:
                ok = _same_value(_describe(a), traced)
            if not ok:
                raise _explain_mismatch(self.name, i, traced, _describe(a), self)
            if self._inputs[i] is not None:
                sources.append(a._data if kind == "Tensor" else a)
                tensors.append(a)
        for t, shape, dtype, rg, kind in self._captured:
            d = t._data
            if d.shape != shape or d.dtype != dtype or t._requires_grad != rg:
                raise JitError(
                    f"jit({self.name}): a tensor the function reads from outside changed from shape {shape}, dtype "
                    f"{dtype}, requires_grad={rg} to shape {d.shape}, dtype {d.dtype}, requires_grad="
                    f"{t._requires_grad} since the trace; make another jit(...) after such a change"
                )
            if d.__class__ is not kind:
                raise JitError(
                    f"jit({self.name}): a tensor the function reads from outside (shape {shape}) moved to the device "
                    f"{of(d).name} since the trace; make another jit(...) after a move (e.g. after model.to(...))"
                )
            sources.append(d)
            tensors.append(t)
        grad_mode = grad_enabled()
        if grad_mode != self._grad_mode:
            raise JitError(f"jit({self.name}): traced with grad mode {'on' if self._grad_mode else 'off'}, called "
                           f"with it {'on' if grad_mode else 'off'}; make one jit(...) per mode")
        values = program.forward(*sources)
        for position, read, expected, what in program.guards:
            if not same_answer(read(values[position]), expected):
                raise ReadChanged(
                    f"during the trace the function read a tensor's value with {what} and got {expected!r:.60}; now "
                    "it gives another answer, so the traced ops (control flow, constants) may not be the ones this "
                    "call needs, and the call was traced again. Keep value-dependent branches out of the jitted "
                    "function (jnp.where / cr.where choose without reading)", self)
        return values, tensors


def _same_value(now: tuple, traced: tuple) -> bool:
    return now[0] == traced[0] and now[1] is traced[1] and same_answer(now[2], traced[2])


def jit(fn: Callable[..., Any] | None = None, *, static_argnums: Any = None, static_argnames: Any = None,
        donate_argnums: Any = None, donate_argnames: Any = None, keep_unused: bool = False,
        inline: bool = False, compiler_options: Any = None) -> Any:
    """Trace ``fn`` on its first call; replay it, forward and backward, on later calls.

    ``static_argnums``/``static_argnames`` (JAX's): arguments that choose what the function does (a count, a mode):
    the function sees their values and is traced once per value (they must be hashable). Keyword arguments are
    traced as positional ones are. ``donate_*``, ``keep_unused``, ``inline`` and ``compiler_options`` are accepted
    for JAX code and change nothing (there is no compiler, and NumPy has no buffers to donate). With ``fn`` left
    out, a decorator (``@jit(static_argnums=1)``).

    ``fn`` takes Tensors, arrays and plain values and returns a Tensor (or a tuple of Tensors, at
    most one of them requiring grad). It may read tensors from outside (a model's parameters):
    their current values are used on every call and gradients flow into them. A call with other shapes,
    dtypes, ``requires_grad`` or plain values is traced again (each trace is kept, as JAX's jit keeps them);
    the values the function read into Python must give the same answers, otherwise :class:`JitError` says
    what differs. The module docstring lists what a replay cannot do.

    Example:
        >>> import numpy as np
        >>> import chainrule as cr
        >>> f = cr.jit(lambda x: (x * x).sum())
        >>> x = cr.Tensor([1.0, 2.0], requires_grad=True)
        >>> f(x).backward(); x.grad
        Tensor([2., 4.])
        >>> x.grad = None; f(x).backward(); x.grad      # replayed
        Tensor([2., 4.])
    """
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames)
    if not callable(fn):
        raise TypeError(f"jit: expected a function, got {type(fn).__name__}")
    return Jitted(fn, static_argnums=static_argnums, static_argnames=static_argnames)
