"""The trace that records a jit tape: ``apply`` hands it every primitive call of this thread (or task) while a
first call runs (see ``core/traces.py``); it runs the call eagerly and writes it to the tape. The few places
that read a tensor's values into Python tell it too: a replay checks that they read the same."""

from __future__ import annotations

import functools
import linecache
import re
from typing import Any

from ..autodiff import batch_levels as batching
from ..autodiff.primitive import Primitive, apply
from ..core import traces
from ..ops import _define
from ..ops import elementwise as _elementwise
from ..tensor import Tensor
from .guards import Guards
from .tape import TapeOp, Trace

_pseudo: dict[Any, Primitive] = {}


def _comparison(np_fn: Any) -> Primitive:
    """A rule-less primitive standing for a comparison (its result has no gradient)."""
    if np_fn not in _pseudo:
        _pseudo[np_fn] = Primitive(np_fn.__name__, np_fn, register=False)
    return _pseudo[np_fn]


def _drawn(make: Any, *args: Any) -> Any:
    return make(*args)


_DRAW = Primitive("random draw", _drawn, register=False)  # a replay calls the draw again: fresh values


_METADATA_CALLS = ("np.shape", "np.size", "np.ndim", "np.result_type", "np.iscomplexobj", "np.isrealobj",
                   "shape_of", "ndim_of",
                   # where an array lives, and arrays made like it (shape, dtype, device): no value is read
                   "xp_of", "of", "is_off_host", "uniform_like", "causal_bias",
                   "np.zeros_like", "np.ones_like", "np.empty_like", "np.full_like")
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


class Recorder(Trace):
    """The trace of one jit's first call (``core.traces``' protocol): each primitive call runs eagerly and is
    written to the tape; values read into Python become guards; random draws become ops of the tape."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.outside = Guards()  # values read by name (see replay.guards)
        self._boolean_code = _elementwise.equal.__code__  # every comparison is one closure of _boolean
        self._metadata_only = {_define.ndim_of.__code__, _define.shape_of.__code__,  # shapes, never values
                               self._boolean_code}  # comparisons: recorded as ops by wrapped()
        self._where_code = _elementwise.where.__code__
        self.stopped: Any = None  # the token of traces.hide() once the trace stopped (see cannot), and why
        self.why = ""

    def process(self, prim: Primitive, args: tuple, kw: dict | None) -> Any:
        if batching.open and batching.batched_in(args, kw):  # jit(vmap(f)): the batching rule's own primitive calls
            return batching.dispatch(prim, args, kw)  # on the whole batch are what the trace records
        token = traces.hide()  # the call runs eagerly: what it does inside is not the function's own
        try:
            out = apply(prim, args, kw)
        finally:
            traces.unhide(token)
        if isinstance(out, Tensor) or isinstance(out, tuple) and prim.n_outputs > 1:
            self.record(prim, args, kw, out)
        return out

    def read(self, t: Any, what: str, again: Any, result: Any) -> None:
        self.guard(t, what, again, result)

    def read_all(self, what: str, args: Any) -> None:
        stack = list(args)
        while stack:
            v = stack.pop()
            if isinstance(v, Tensor):
                self.guard(v, what, _same, v._data)
            elif isinstance(v, (list, tuple)):
                stack.extend(v)

    def read_raw(self, x: Tensor, caller: Any) -> None:
        """``raw(x)`` hands a function a tensor's ndarray: whatever it computes from the values outside the
        primitives would be frozen, so a replay checks that the values read are the same."""
        line = (caller.f_code.co_filename, caller.f_lineno)
        if caller.f_code.co_name in ("<listcomp>", "<genexpr>") and caller.f_back is not None:
            caller = caller.f_back
        passed_on = caller.f_code is self._where_code and caller.f_locals.get("x") is not None  # straight into an op
        if caller.f_code not in self._metadata_only and not passed_on and not _reads_metadata(*line):
            self.guard(x, f"{caller.f_code.co_name}() (it reads the values)", _same, x._data)

    def wrapped(self, out: Tensor, inputs: tuple, caller: Any) -> None:
        """Comparisons and predicates (``x > 0``, ``isnan``) become ops of the tape; other values computed
        outside the primitives are checked on replay (their inputs must read the same)."""
        if caller.f_code is self._boolean_code:
            np_fn, args = caller.f_locals["np_fn"], tuple(caller.f_locals["args"])
            self.record(_comparison(np_fn), args, None, out)
            return
        for t in inputs:
            if isinstance(t, Tensor):
                self.guard(t, "an op without a gradient", _same, t._data)

    def drew(self, make: Any, args: tuple, out: Any) -> None:
        """Random values: an op of the tape that draws again on each replay."""
        self.ops.append(TapeOp(_DRAW, ((False, make), *((False, a) for a in args)), {}, self.new_slot(None, out),
                               (), False))

    def called(self, module: Any) -> None:
        """A module was called: a replay checks that its mode and settings are the same (else traces again)."""
        self.outside.module(module)

    def backward(self) -> None:
        self.cannot("it calls backward() or a gradient transform, which a replay cannot hold; for speed, jit the "
                    "function that computes the loss and call .backward() on its result (for JAX's jit(grad(f)), "
                    "write grad(jit(f)))")

    def cannot(self, why: str) -> None:
        """What the function does cannot be written to a tape: the trace stops here and the function runs on to its
        end as it is (the ops so far ran eagerly too: nothing runs twice, and its result is the eager one); the jit
        then calls it as it is, saying why once (see ``Jitted._trace``)."""
        if self.stopped is None:
            self.stopped, self.why = traces.hide(), why


def _same(v: Any) -> Any:
    return v
