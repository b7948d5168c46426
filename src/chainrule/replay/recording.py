"""The hooks that record a jit trace: while a first call runs, ``apply``, ``raw``, ``wrap_like`` and
the Tensor methods that read values into Python are swapped for versions that write to the tape."""

from __future__ import annotations

import functools
import linecache
import re
import sys
import threading
from collections.abc import Callable
from typing import Any

from ..autodiff import primitive
from ..autodiff.primitive import Primitive
from ..core import sweep
from ..ops import _define
from ..ops import elementwise as _elementwise
from ..ops import methods as _methods
from ..ops import queries as _queries
from ..tensor import Tensor
from .tape import JitError, Trace

_INHERITED = object()  # marks a patched class attribute that the class inherited (removed again afterwards)
_VALUE_METHODS = ("__bool__", "__float__", "__int__", "__index__", "item", "tolist", "numpy", "__array__",
                  "argmax", "argmin", "any", "all", "argsort", "nonzero", "searchsorted")


class _Tracing(threading.local):
    """The traces being recorded in this thread (the hooks are shared, the recording is not)."""

    def __init__(self) -> None:
        self.traces: list[Trace] = []


in_this_thread = _Tracing()


def _recording_apply(original: Callable[..., Any]) -> Callable[..., Any]:
    def apply(prim: Primitive, args: tuple, kw: dict | None) -> Any:
        out = original(prim, args, kw)
        if in_this_thread.traces and (isinstance(out, Tensor) or isinstance(out, tuple) and prim.n_outputs > 1):
            in_this_thread.traces[-1].record(prim, args, kw, out)
        return out

    return apply


def _guarded_method(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def method(self: Tensor, *a: Any, **k: Any) -> Any:
        result = original(self, *a, **k)
        if in_this_thread.traces:
            in_this_thread.traces[-1].guard(self, f"{name}()", lambda v: original(Tensor._wrap(v), *a, **k), result)
        return result

    return method


def _guarded_values(original: Callable[..., Any], what: str) -> Callable[..., Any]:
    """For helpers that read the values of their Tensor arguments (integer operators, NumPy queries)."""

    def read(*args: Any) -> Any:
        if in_this_thread.traces:
            stack = list(args)
            while stack:
                v = stack.pop()
                if isinstance(v, Tensor):
                    in_this_thread.traces[-1].guard(v, what, lambda x: x, v._data)
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
        if in_this_thread.traces and isinstance(out, Tensor):
            caller = sys._getframe(1)
            if caller.f_code is boolean_code:
                np_fn, args = caller.f_locals["np_fn"], tuple(caller.f_locals["args"])
                in_this_thread.traces[-1].record(_comparison(np_fn), args, None, out)
            else:
                for t in inputs:
                    if isinstance(t, Tensor):
                        in_this_thread.traces[-1].guard(t, "an op without a gradient", lambda x: x, t._data)
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
        if in_this_thread.traces and isinstance(x, Tensor):
            caller = sys._getframe(1)
            line = (caller.f_code.co_filename, caller.f_lineno)
            if caller.f_code.co_name in ("<listcomp>", "<genexpr>") and caller.f_back is not None:
                caller = caller.f_back
            passed_on = caller.f_code is where_code and caller.f_locals.get("x") is not None  # straight into an op
            if caller.f_code not in metadata_only and not passed_on and not _reads_metadata(*line):
                what = f"{caller.f_code.co_name}() (it reads the values)"
                in_this_thread.traces[-1].guard(x, what, lambda v: v, x._data)
        return original(x)

    return raw


class RecordingHooks:
    """Swap in the recording hooks while any thread traces, and put everything back after the last."""

    _lock = threading.Lock()
    _users = 0
    saved: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> None:
        with RecordingHooks._lock:
            RecordingHooks._users += 1
            if RecordingHooks._users == 1:
                RecordingHooks.saved = []
                self._install()

    def __exit__(self, *exc: object) -> None:
        with RecordingHooks._lock:
            RecordingHooks._users -= 1
            if RecordingHooks._users == 0:
                for owner, name, value in reversed(RecordingHooks.saved):
                    if value is _INHERITED:
                        delattr(owner, name)  # back to the mixin's method
                    else:
                        setattr(owner, name, value)

    def _install(self) -> None:
        # every chainrule module that bound these helpers by name
        recording = _recording_apply(primitive.apply)
        hooks = [("apply", primitive.apply, recording),
                 # the unrolled forms (generated op functions) record through the general one
                 ("apply1", primitive.apply1, lambda prim, x: recording(prim, (x,), None)),
                 ("apply2", primitive.apply2, lambda prim, x, y: recording(prim, (x, y), None)),
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
        RecordingHooks.saved.append((owner, name, _INHERITED if inherited else getattr(owner, name)))
        setattr(owner, name, value)

    @staticmethod
    def _no_backward(*a: Any, **k: Any) -> Any:
        raise JitError("jit: the function calls backward() or a gradient transform; jit the function that "
                       "computes the loss and call .backward() on its result (for JAX's jit(grad(f)), write "
                       "grad(jit(f)), or leave out jit: it only saves time)")
