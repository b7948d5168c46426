"""``jit``: trace a function once, then replay it as a flat program, forward and backward.

Eager chainrule pays Python for every op: a Tensor, a graph node, a topological sort and a
dictionary of gradients. For small arrays that bookkeeping costs more than NumPy's arithmetic.
``jit(fn)`` runs ``fn`` eagerly once while recording each primitive it calls (the *tape*); later
calls with arguments of the same shapes and dtypes run the tape as two straight-line Python
functions generated from it: one calls the primitives' NumPy functions, the other their reverse
rules, in exactly the order (and with exactly the summation order) the eager engine would. The
result is one Tensor whose single graph node hands the tape's gradients to the inputs and to the
tensors ``fn`` reads from outside (e.g. a model's parameters), so ``loss.backward()`` and
optimisers work as usual, with bit-for-bit the eager results.

What a replay checks, raising :class:`JitError` when it fails: every argument has the traced
shape, dtype and ``requires_grad`` (numbers and other plain arguments are equal); the tensors read
from outside still have their traced shape, dtype and ``requires_grad``; every value the function
turned into Python during the trace (``bool()``, ``float()``, ``int()``, ``.item()``, ``.tolist()``,
``.numpy()``, ``np.asarray``, ``argmax``/``argmin``/``any``/``all``/``nonzero``/``argsort``, NumPy's
query functions, integer and boolean operators) gives the same answer, so control flow and
constants that depend on values are caught.

Limits (all raise, except the last): no forward mode (``jvp``) through a replay, no
``create_graph`` backward through one, no in-place changes and no ``backward`` inside the function,
at most one output that requires grad. **Values taken out with ``.data`` and computed on with NumPy
inside the function are frozen at their traced values**: compute with chainrule ops instead.
Tracing swaps a few module attributes while a first call runs; other threads' ops are not recorded.

Example:
    >>> import numpy as np
    >>> import chainrule as cr
    >>> w = cr.Tensor([1.0, 2.0], requires_grad=True)
    >>> f = cr.jit(lambda x: (cr.tanh(x * w) ** 2).sum())
    >>> x = np.array([0.5, -1.0])
    >>> f(x).backward()                  # first call: eager, recorded
    >>> g1 = w.grad.data.copy(); w.grad = None
    >>> f(x).backward()                  # later calls: replayed
    >>> bool(np.array_equal(w.grad.data, g1))
    True
"""

from __future__ import annotations

import functools
import linecache
import re
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from .autodiff import batching, primitive
from .autodiff.primitive import Primitive
from .core import clock, sweep
from .core.node import Node, unbroadcast
from .core.sparse import SliceGrad
from .core.state import forward_levels, grad_enabled
from .ops import _define
from .ops import elementwise as _elementwise
from .ops import methods as _methods
from .ops import queries as _queries
from .ops._saved import Saved
from .tensor import Tensor

__all__ = ["jit", "Jitted", "JitError"]


class JitError(RuntimeError):
    """A replayed function cannot give the eager result: the call differs from the trace."""


# -- the tape ------------------------------------------------------------------------------------
class _Op:
    __slots__ = ("prim", "spec", "kw", "out", "parents", "rg")

    def __init__(self, prim: Primitive, spec: tuple, kw: dict, out: int, parents: tuple, rg: bool) -> None:
        self.prim, self.spec, self.kw, self.out, self.parents, self.rg = prim, spec, kw, out, parents, rg


_INHERITED = object()  # marks a patched class attribute that the class inherited (removed again afterwards)
_VALUE_METHODS = ("__bool__", "__float__", "__int__", "__index__", "item", "tolist", "numpy", "__array__",
                  "argmax", "argmin", "any", "all", "argsort", "nonzero", "searchsorted")


def _snapshot(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, (list, tuple)):
        return type(v)(_snapshot(x) for x in v)
    return v


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal type (NaN equals NaN): the test a recorded Python-level read must pass."""
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        if not isinstance(b, (np.ndarray, np.generic)) or not isinstance(a, (np.ndarray, np.generic)):
            return False
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and bool(
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


class _Trace:
    """What one eager run of the function did, op by op, with every value in a numbered slot."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.slot_of: dict[int, int] = {}  # id(Tensor) -> slot
        self.slot_of_array: dict[int, int] = {}  # id(ndarray) -> slot (a value passed on as a raw array)
        self.values: list[Any] = []  # the traced value of each slot; held so that ids stay unique
        self.keep: list[Any] = []
        self.inputs: list[int | None] = []  # slot of each argument (None: a plain argument, compared by value)
        self.captured: list[tuple[Tensor, int]] = []
        self.ops: list[_Op] = []
        self.guards: list[tuple[int, Callable[[Any], Any], Any, str]] = []
        self.used: set[int] = set()
        self.start = clock.tick()
        self.changes = clock.last_change[0]

    def new_slot(self, owner: Any, value: Any) -> int:
        s = len(self.values)
        self.values.append(value)
        if owner is not None:
            self.slot_of[id(owner)] = s
            self.keep.append(owner)
        self.slot_of_array.setdefault(id(value), s)
        return s

    def slot(self, t: Tensor) -> int | None:
        """The slot of a Tensor, registering tensors from outside; None for a constant made inside."""
        s = self.slot_of.get(id(t))
        if s is None:
            s = self.slot_of_array.get(id(t.data))  # e.g. detach(): a new Tensor around a traced array
            if s is not None:
                self.slot_of[id(t)] = s
                self.keep.append(t)
            elif t._stamp < self.start:  # made before the call: read afresh on every replay
                s = self.new_slot(t, t.data)
                self.captured.append((t, s))
        return s

    def record(self, prim: Primitive, args: tuple, kw: dict | None, out: Tensor) -> None:
        spec = []
        for a in args:
            s: int | None = None
            if isinstance(a, Tensor):
                s = self.slot(a)
                if s is None and a._requires_grad:
                    raise JitError(
                        f"jit({self.name}): '{prim.name}' got a tensor that requires grad but was created inside "
                        "the function; create it outside (it is then read afresh on every call) or pass it in"
                    )
                spec.append((True, s) if s is not None else (False, a.data))
            elif isinstance(a, np.ndarray) and id(a) in self.slot_of_array:
                s = self.slot_of_array[id(a)]
                spec.append((True, s))
            else:
                spec.append((False, a))
            if s is not None:
                self.used.add(s)
        for k, v in (kw or {}).items():
            if getattr(v, "per_call", False):
                raise JitError(f"jit({self.name}): '{prim.name}' keeps per-call state (a custom_vjp function's "
                               "residuals) that a replay cannot recompute; call the function without jit")
            if isinstance(v, Tensor) or (isinstance(v, np.ndarray) and id(v) in self.slot_of_array):
                raise JitError(f"jit({self.name}): '{prim.name}' got a traced value as keyword '{k}'; "
                               "call the function without jit")
        first = out[0] if isinstance(out, tuple) else out  # a multi-output primitive: one node, several slots
        edges = first._node.parents if first._node is not None else ()
        parents = tuple((edge[0], self.slot_of[id(args[edge[0]])]) for edge in edges)
        s_out: int | tuple[int, ...] = (tuple(self.new_slot(o, o.data) for o in out) if isinstance(out, tuple)
                                        else self.new_slot(out, out.data))
        self.ops.append(_Op(prim, tuple(spec), dict(kw) if kw else {}, s_out, parents, first._requires_grad))

    def guard(self, t: Any, what: str, read: Callable[[Any], Any], result: Any) -> None:
        if not isinstance(t, Tensor):
            return
        s = self.slot(t)
        if s is not None:
            self.used.add(s)
            self.guards.append((s, read, _snapshot(result), what))


class _Tracing(threading.local):
    """The traces being recorded in this thread (the hooks are shared, the recording is not)."""

    def __init__(self) -> None:
        self.traces: list[_Trace] = []


_local = _Tracing()


def _recording_apply(original: Callable[..., Any]) -> Callable[..., Any]:
    def apply(prim: Primitive, args: tuple, kw: dict | None) -> Any:
        out = original(prim, args, kw)
        if _local.traces and (isinstance(out, Tensor) or isinstance(out, tuple) and prim.n_outputs > 1):
            _local.traces[-1].record(prim, args, kw, out)
        return out

    return apply


def _guarded_method(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def method(self: Tensor, *a: Any, **k: Any) -> Any:
        result = original(self, *a, **k)
        if _local.traces:
            _local.traces[-1].guard(self, f"{name}()", lambda v: original(Tensor._wrap(v), *a, **k), result)
        return result

    return method


def _guarded_values(original: Callable[..., Any], what: str) -> Callable[..., Any]:
    """For helpers that read the values of their Tensor arguments (integer operators, NumPy queries)."""

    def read(*args: Any) -> Any:
        if _local.traces:
            stack = list(args)
            while stack:
                v = stack.pop()
                if isinstance(v, Tensor):
                    _local.traces[-1].guard(v, what, lambda x: x, v.data)
                elif isinstance(v, (list, tuple)):
                    stack.extend(v)
        return original(*args)

    return read


_pseudo: dict[Any, Primitive] = {}


def _comparison(np_fn: Any) -> Primitive:
    """A rule-less primitive standing for a comparison (its result has no gradient)."""
    if np_fn not in _pseudo:
        _pseudo[np_fn] = Primitive(np_fn.__name__, np_fn, register=False)
    return _pseudo[np_fn]


def _recording_wrap_like(original: Callable[..., Any]) -> Callable[..., Any]:
    """Comparisons and predicates (``x > 0``, ``isnan``) become ops of the tape; other values computed
    outside the primitives are checked on replay (their inputs must read the same)."""
    boolean_code = _elementwise.equal.__code__  # every comparison is one closure of _boolean

    def wrap_like(value: Any, *inputs: Any) -> Any:
        out = original(value, *inputs)
        if _local.traces and isinstance(out, Tensor):
            caller = sys._getframe(1)
            if caller.f_code is boolean_code:
                np_fn, args = caller.f_locals["np_fn"], tuple(caller.f_locals["args"])
                _local.traces[-1].record(_comparison(np_fn), args, None, out)
            else:
                for t in inputs:
                    if isinstance(t, Tensor):
                        _local.traces[-1].guard(t, "an op without a gradient", lambda x: x, t.data)
        return out

    return wrap_like


_METADATA_CALLS = ("np.shape", "np.size", "np.ndim", "np.result_type", "np.iscomplexobj", "np.isrealobj",
                   "shape_of", "ndim_of")
_RAW_CALL = re.compile(r"\braw\(\w+\)")


@functools.lru_cache(maxsize=4096)
def _reads_metadata(filename: str, lineno: int) -> bool:
    """True when every ``raw(x)`` on this source line only feeds a shape, size or dtype question
    (``np.shape(raw(x))``, ``raw(x).dtype``): those reads do not depend on the values."""
    text = linecache.getline(filename, lineno)
    found = list(_RAW_CALL.finditer(text))
    if not found:
        return False
    for m in found:
        if re.match(r"\.(shape|dtype|ndim|size)\b", text[m.end():]):
            continue
        depth, i = 0, m.start() - 1
        while i >= 0:  # the call this raw(...) is an argument of
            if text[i] == ")":
                depth += 1
            elif text[i] == "(":
                if depth == 0:
                    break
                depth -= 1
            i -= 1
        callee = re.search(r"[\w.]+$", text[:max(i, 0)])
        if i < 0 or callee is None or callee.group(0) not in _METADATA_CALLS:
            return False
    return True


def _guarded_raw(original: Callable[..., Any]) -> Callable[..., Any]:
    """``raw(x)`` hands a function a tensor's ndarray: whatever it computes from the values outside the
    primitives would be frozen, so a replay checks that the values read are the same."""

    metadata_only = {_define.ndim_of.__code__, _define.shape_of.__code__,  # shapes, never values
                     _elementwise.equal.__code__}  # comparisons: recorded as ops by wrap_like
    where_code = _elementwise.where.__code__

    def raw(x: Any) -> Any:
        if _local.traces and isinstance(x, Tensor):
            caller = sys._getframe(1)
            line = (caller.f_code.co_filename, caller.f_lineno)
            if caller.f_code.co_name in ("<listcomp>", "<genexpr>") and caller.f_back is not None:
                caller = caller.f_back
            passed_on = caller.f_code is where_code and caller.f_locals.get("x") is not None  # straight into an op
            if caller.f_code not in metadata_only and not passed_on and not _reads_metadata(*line):
                _local.traces[-1].guard(x, f"{caller.f_code.co_name}() (it reads the values)", lambda v: v, x.data)
        return original(x)

    return raw


class _Patches:
    """Swap in the recording hooks while any thread traces, and put everything back after the last."""

    _lock = threading.Lock()
    _users = 0
    saved: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> None:
        with _Patches._lock:
            _Patches._users += 1
            if _Patches._users == 1:
                _Patches.saved = []
                self._install()

    def __exit__(self, *exc: object) -> None:
        with _Patches._lock:
            _Patches._users -= 1
            if _Patches._users == 0:
                for owner, name, value in reversed(_Patches.saved):
                    if value is _INHERITED:
                        delattr(owner, name)  # back to the mixin's method
                    else:
                        setattr(owner, name, value)

    def _install(self) -> None:
        # every chainrule module that bound these helpers by name
        hooks = [("apply", primitive.apply, _recording_apply(primitive.apply)),
                 ("wrap_like", _define.wrap_like, _recording_wrap_like(_define.wrap_like)),
                 ("raw", _define.raw, _guarded_raw(_define.raw))]
        for mod in list(sys.modules.values()):
            if getattr(mod, "__name__", "").startswith("chainrule"):
                for name, original, hook in hooks:
                    if getattr(mod, name, None) is original:
                        self._swap(mod, name, hook)
        for name in _VALUE_METHODS:  # defined on Tensor or inherited from its conversion mixin
            method = getattr(Tensor, name, None)
            if callable(method):
                self._swap(Tensor, name, _guarded_method(name, method))
        self._swap(_methods, "_on_values", _guarded_values(_methods._on_values, "an integer operator"))
        self._swap(_queries, "_unwrap", _guarded_values(_queries._unwrap, "a NumPy query"))
        self._swap(sweep, "backward_sweep", self._no_backward)

    def _swap(self, owner: Any, name: str, value: Any) -> None:
        inherited = isinstance(owner, type) and name not in owner.__dict__
        _Patches.saved.append((owner, name, _INHERITED if inherited else getattr(owner, name)))
        setattr(owner, name, value)

    @staticmethod
    def _no_backward(*a: Any, **k: Any) -> Any:
        raise JitError("jit: the function calls backward() or a gradient transform; jit the function that "
                       "computes the loss and call .backward() on its result")


# -- the generated program -----------------------------------------------------------------------
def _fitter(prim: Primitive, argnum: int, shape: tuple, dtype: Any) -> Callable[[Any], Any]:
    def fit_gradient(g: Any) -> Any:
        if g.__class__ is SliceGrad:  # a slice's gradient: already the input's shape and dtype
            return g.dense()
        try:
            return unbroadcast(g, shape, dtype)
        except ValueError:
            raise ValueError(
                f"{prim.name}: the reverse rule for argument {argnum} returned a gradient of shape "
                f"{np.shape(g)} for an input of shape {shape}; fix the rule"
            ) from None

    return fit_gradient


def _reverse_rule(prim: Primitive, argnum: int) -> Callable[..., Any]:
    rules = prim.vjps
    rule = rules[argnum] if argnum < len(rules) else None
    return rule if rule is not None else prim._rule(rules, prim.vjp_argnum, argnum, "reverse")


def _slots(out: int | tuple[int, ...]) -> tuple[int, ...]:
    return out if isinstance(out, tuple) else (out,)


def _fresh_saved(traced: Saved) -> Saved:
    """An empty ``Saved`` asking for the same gradients as the traced one."""
    fresh = Saved.__new__(Saved)
    fresh.wanted, fresh.values, fresh._g, fresh._grads = traced.wanted, {}, None, {}
    return fresh


class _Program:
    """The tape compiled to two Python functions: ``forward(*inputs) -> slot values`` and
    ``backward(g, values) -> gradients of the differentiable inputs``."""

    def __init__(self, trace: _Trace, out_slots: list[int], grad_slot: int | None) -> None:
        self.name = trace.name
        env: dict[str, Any] = {"ndarray": np.ndarray, "asarray": np.asarray}
        consts: dict[int, str] = {}

        def const(v: Any) -> str:
            key = id(v)
            if key not in consts:
                consts[key] = f"k{len(consts)}"
                env[consts[key]] = v
            return consts[key]

        sources = [s for s in trace.inputs if s is not None] + [s for _, s in trace.captured]
        # forward: every op in order; values that are never used again are still returned (the rules read them)
        lines = [f"def forward({', '.join(f'v{s}' for s in sources)}):"]
        calls: list[str] = []
        states: list[str] = []
        for n, op in enumerate(trace.ops):
            env[f"f{n}"] = op.prim.fn
            args = [f"v{a}" if is_slot else const(a) for is_slot, a in op.spec]
            kw = dict(op.kw)
            for key, value in op.kw.items():
                if isinstance(value, Saved):  # per-call state of a fused op: a fresh one on every replay
                    env[f"saved{n}_{key}"] = functools.partial(_fresh_saved, value)
                    lines.append(f"    sv{n}_{key} = saved{n}_{key}()")
                    states.append(f"sv{n}_{key}")
                    args.append(f"{key}=sv{n}_{key}")
                    del kw[key]
            if kw:
                env[f"kw{n}"] = kw
                args.append(f"**kw{n}")
            calls.append(", ".join(args))
            outs = _slots(op.out)
            lines.append(f"    {', '.join(f'v{s}' for s in outs)}{',' if isinstance(op.out, tuple) else ''} = "
                         f"f{n}({calls[-1]})")
            for s in outs:
                lines.append(f"    if v{s}.__class__ is not ndarray: v{s} = asarray(v{s})")
        self.kept = sorted({s for op in trace.ops for s in (*_slots(op.out), *[a for ok, a in op.spec if ok])}
                           | set(sources))
        held = "".join(f"v{s}, " for s in self.kept) + "".join(f"{name}, " for name in states)
        lines.append(f"    return ({held})")
        # backward: ops in reverse creation order, the engine's order; gradients summed in the engine's order
        self.externals: list[int] = []
        back = ["def backward(g, values):", f"    ({held}) = values"]
        if grad_slot is not None:
            back.append(f"    g{grad_slot} = g")
            have = {grad_slot}
            for n in range(len(trace.ops) - 1, -1, -1):
                op = trace.ops[n]
                outs = _slots(op.out)
                if not any(s in have for s in outs) or not op.parents:
                    continue
                if isinstance(op.out, tuple):  # one cotangent per output (None: it got none), as the engine
                    g_of = "[" + ", ".join(f"g{s}" if s in have else "None" for s in outs) + "]"
                    ans_of = "(" + ", ".join(f"v{s}" for s in outs) + ",)"
                else:
                    g_of, ans_of = f"g{op.out}", f"v{op.out}"
                for argnum, parent in op.parents:
                    env[f"r{n}_{argnum}"] = _reverse_rule(op.prim, argnum)
                    x = trace.values[parent]
                    shape, dtype = x.shape, x.dtype
                    env[f"s{n}_{argnum}"], env[f"d{n}_{argnum}"] = shape, dtype
                    env[f"fit{n}_{argnum}"] = _fitter(op.prim, argnum, np.shape(x), np.result_type(x))
                    back.append(f"    t = r{n}_{argnum}({g_of}, {ans_of}, {calls[n]})")
                    back.append(f"    if not (t.__class__ is ndarray and t.shape == s{n}_{argnum} "
                                f"and t.dtype is d{n}_{argnum}): t = fit{n}_{argnum}(t)")
                    back.append(f"    g{parent} = g{parent} + t" if parent in have else f"    g{parent} = t")
                    have.add(parent)
            self.externals = [s for s in sources if s in have and s != grad_slot]
        back.append(f"    return ({''.join(f'g{s}, ' for s in self.externals)})")
        source = "\n".join(lines) + "\n\n" + "\n".join(back) + "\n"
        self.source = source
        exec(compile(source, f"<jit {self.name}>", "exec"), env)  # noqa: S102  (our own generated code)
        self.forward = env["forward"]
        self.backward = env["backward"]
        self.position = {s: i for i, s in enumerate(self.kept)}
        self.out_positions = [self.position[s] for s in out_slots]
        self.guards = [(self.position[s], read, expected, what) for s, read, expected, what in trace.guards]


class _ReplayNode:
    """The single graph node of a replayed call: its reverse rule runs the tape's backward once."""

    __slots__ = ("name", "program", "values", "_g", "_grads")
    keeps = True  # its node keeps the inputs' arrays (to check them for in-place changes)
    n_outputs = 1
    fast_vjps = None  # the sweep calls vjp

    def __init__(self, program: _Program, values: tuple) -> None:
        self.name = f"jit({program.name})"
        self.program = program
        self.values = values
        self._g: Any = None
        self._grads: tuple = ()

    def vjp(self, argnum: int, g: Any, node: Any, lift: Any) -> Any:
        if lift is not None:
            raise JitError(f"{self.name}: backward with create_graph=True (higher derivatives) through a replayed "
                           "function is not supported; call the function without jit for that")
        if self._g is not g:  # the engine asks once per input, with the same output gradient
            self._grads = self.program.backward(g, self.values)
            self._g = g
        return self._grads[argnum]


# -- the wrapper ----------------------------------------------------------------------------------
def _describe(a: Any) -> tuple:
    if isinstance(a, Tensor):
        return ("Tensor", a.data.shape, a.data.dtype, a._requires_grad)
    if isinstance(a, np.ndarray):
        return ("ndarray", a.shape, a.dtype)
    return ("value", type(a), a)


def _explain_mismatch(name: str, i: int, traced: tuple, now: tuple) -> JitError:
    def say(d: tuple) -> str:
        if d[0] == "value":
            return f"{d[1].__name__} {d[2]!r:.40}"
        return f"{d[0]} of shape {d[1]}, dtype {d[2]}" + (f", requires_grad={d[3]}" if d[0] == "Tensor" else "")

    return JitError(f"jit({name}): argument {i} is a {say(now)} but the function was traced with a {say(traced)}; "
                    "call it with the traced shapes and dtypes, or make another jit(...) for these")


class Jitted:
    """A function traced on its first call and replayed on later ones (see :func:`jit`)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        functools.update_wrapper(self, fn)
        self._signature: list[tuple] | None = None
        self._grad_mode: bool | None = None
        self._program: _Program | None = None
        self._captured: list[tuple[Tensor, tuple, Any, bool]] = []
        self._inputs: list[int | None] = []
        self._out: Any = None  # how to rebuild the output: "single" or a tuple length
        self._grad_out: int | None = None  # which output carries the gradient
        self._passed: list[Any] = []
        self._parents: list[int] = []

    @property
    def source(self) -> str:
        """The generated Python of the replay (after the first call)."""
        return self._program.source if self._program is not None else ""

    def __call__(self, *args: Any) -> Any:
        if forward_levels():
            raise JitError(f"jit({self.name}): forward mode (jvp) through a replayed function is not supported; "
                           "call the function without jit inside jvp")
        if batching.open:
            raise JitError(f"jit({self.name}): vmap over a replayed function is not supported; "
                           "call the function without jit inside vmap")
        if self._program is None:
            return self._trace(args)
        return self._replay(args)

    # -- first call: run eagerly and record ----------------------------------------------------
    def _trace(self, args: tuple) -> Any:
        trace = _Trace(self.name)
        for a in args:
            trace.inputs.append(trace.new_slot(a, a.data) if isinstance(a, Tensor)
                                else trace.new_slot(None, a) if isinstance(a, np.ndarray) else None)
        _local.traces.append(trace)
        try:
            with _Patches():
                result = self.fn(*args)
        finally:
            _local.traces.pop()
        if clock.last_change[0] != trace.changes:
            raise JitError(f"jit({self.name}): the function changes a tensor in place; jit only replays "
                           "functions without in-place changes (make the change outside)")
        outs = list(result) if isinstance(result, (tuple, list)) else [result]
        op_slots = {s for op in trace.ops for s in _slots(op.out)}
        out_slots, self._passed = [], []  # outputs that are an argument or an outside tensor are returned as they are
        for k, o in enumerate(outs):
            s = trace.slot_of.get(id(o)) if isinstance(o, Tensor) else None
            if s is None:
                raise JitError(f"jit({self.name}): output {k} is not a Tensor computed by chainrule ops inside "
                               f"the function (got {type(o).__name__}); return Tensors computed from the inputs")
            if s in op_slots and s not in trace.inputs:
                out_slots.append(s)
                self._passed.append(None)
                continue
            if s in trace.inputs and o is args[trace.inputs.index(s)]:
                self._passed.append(trace.inputs.index(s))
            elif any(o is t for t, _ in trace.captured):
                self._passed.append(o)
            else:
                raise JitError(f"jit({self.name}): output {k} is a new Tensor around an argument's values "
                               "(e.g. detach()); return the argument itself or call without jit")
            out_slots.append(None)
        differentiable = [k for k, o in enumerate(outs) if o._requires_grad and self._passed[k] is None]
        if len(differentiable) > 1:
            raise JitError(f"jit({self.name}): outputs {differentiable} all require grad; a replay can give "
                           "gradients through one output: return one (e.g. their sum) or call without jit")
        for i, s in enumerate(trace.inputs):
            if s is not None and s not in trace.used and s not in out_slots and i not in self._passed:
                raise JitError(f"jit({self.name}): argument {i} is not used by any chainrule op (converted with "
                               "NumPy inside?); its values would be frozen at the first call. Convert it before "
                               "calling (e.g. x.astype(...)) or compute with chainrule ops")
        self._grad_out = differentiable[0] if differentiable else None
        grad_slot = out_slots[self._grad_out] if differentiable else None
        self._program = _Program(trace, [s for s in out_slots if s is not None], grad_slot)
        self._signature = [_describe(a) for a in args]
        self._grad_mode = grad_enabled()
        self._inputs = trace.inputs
        self._captured = [(t, t.data.shape, t.data.dtype, t._requires_grad) for t, _ in trace.captured]
        self._out = None if not isinstance(result, (tuple, list)) else type(result)
        external_slots = [s for s in trace.inputs if s is not None] + [s for _, s in trace.captured]
        self._parents = [external_slots.index(s) for s in self._program.externals]
        return result

    # -- later calls: check, run the flat forward, hang one node --------------------------------
    def _replay(self, args: tuple) -> Any:
        program = self._program
        sig = self._signature
        if len(args) != len(sig):
            raise JitError(f"jit({self.name}): called with {len(args)} arguments, traced with {len(sig)}")
        sources: list[Any] = []
        tensors: list[Any] = []
        for i, a in enumerate(args):
            traced = sig[i]
            kind = traced[0]
            if kind == "Tensor":  # the common case first, without building a description
                ok = isinstance(a, Tensor) and a.data.shape == traced[1] and a.data.dtype == traced[2] and (
                    a._requires_grad == traced[3])
            elif kind == "ndarray":
                ok = a.__class__ is np.ndarray and a.shape == traced[1] and a.dtype == traced[2]
            else:
                ok = _same_value(_describe(a), traced)
            if not ok:
                raise _explain_mismatch(self.name, i, traced, _describe(a))
            if self._inputs[i] is not None:
                sources.append(a.data if kind == "Tensor" else a)
                tensors.append(a)
        for t, shape, dtype, rg in self._captured:
            d = t.data
            if d.shape != shape or d.dtype != dtype or t._requires_grad != rg:
                raise JitError(
                    f"jit({self.name}): a tensor the function reads from outside changed from shape {shape}, dtype "
                    f"{dtype}, requires_grad={rg} to shape {d.shape}, dtype {d.dtype}, requires_grad="
                    f"{t._requires_grad} since the trace; make another jit(...) after such a change"
                )
            sources.append(d)
            tensors.append(t)
        grad_mode = grad_enabled()
        if grad_mode != self._grad_mode:
            raise JitError(f"jit({self.name}): traced with grad mode {'on' if self._grad_mode else 'off'}, called "
                           f"with it {'on' if grad_mode else 'off'}; make one jit(...) per mode")
        values = program.forward(*sources)
        for position, read, expected, what in program.guards:
            if not _same(read(values[position]), expected):
                raise JitError(
                    f"jit({self.name}): during the trace the function read a tensor's value with {what} and got "
                    f"{expected!r:.60}; now it gives another answer, so the traced ops (control flow, constants) may "
                    "not be the ones this call needs. Keep value-dependent branches out of the jitted function "
                    "(or call it without jit)"
                )
        outs = []
        positions = iter(program.out_positions)
        for k, passed in enumerate(self._passed):
            if passed is not None:  # the function returned an argument (by position) or an outside tensor
                outs.append(args[passed] if isinstance(passed, int) else passed)
                continue
            value = values[next(positions)]
            if k == self._grad_out:
                inputs = [tensors[i] for i in self._parents]
                edges = tuple((j, p if p._node is None else p._node, p._index, p.data.shape, p.data.dtype)
                              for j, p in enumerate(inputs))
                # the inputs' arrays are kept so that backward can see whether they changed in place since this call
                node = Node(_ReplayNode(program, values), edges, None, [p.data for p in inputs], None, clock.tick())
                outs.append(Tensor._linked(value, node))
            else:
                outs.append(Tensor._wrap(value))
        return outs[0] if self._out is None else self._out(outs)


def _same_value(now: tuple, traced: tuple) -> bool:
    return now[0] == traced[0] and now[1] is traced[1] and _same(now[2], traced[2])


def jit(fn: Callable[..., Any]) -> Jitted:
    """Trace ``fn`` on its first call; replay it, forward and backward, on later calls.

    ``fn`` takes Tensors, arrays and plain values and returns a Tensor (or a tuple of Tensors, at
    most one of them requiring grad). It may read tensors from outside (a model's parameters):
    their current values are used on every call and gradients flow into them. Later calls must
    have the traced shapes, dtypes and ``requires_grad``, and the values the function read into
    Python must give the same answers; otherwise :class:`JitError` says what differs. The module
    docstring lists what a replay cannot do.

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
    if not callable(fn):
        raise TypeError(f"jit: expected a function, got {type(fn).__name__}")
    return Jitted(fn)
