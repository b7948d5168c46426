"""The tape of a jit trace: each primitive call of one eager run, with every value in a numbered slot."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff.primitive import Primitive
from ..core import clock
from ..core.device import ARRAY_TYPES, OFF_HOST, xp_of
from ..tensor import Tensor


class JitError(RuntimeError):
    """A replayed function cannot give the eager result: the call differs from the trace."""


class KwSlot:
    """A keyword argument of a tape op that is a slot's value (an array computed inside, e.g. a dropout mask)."""

    __slots__ = ("slot",)

    def __init__(self, slot: int) -> None:
        self.slot = slot


class TapeOp:
    __slots__ = ("prim", "spec", "kw", "out", "parents", "rg")

    def __init__(self, prim: Primitive, spec: tuple, kw: dict, out: int, parents: tuple, rg: bool) -> None:
        self.prim, self.spec, self.kw, self.out, self.parents, self.rg = prim, spec, kw, out, parents, rg


def _snapshot(v: Any) -> Any:
    if isinstance(v, np.ndarray) or v.__class__ in ARRAY_TYPES:
        return v.copy()  # (a device's array: a copy on the device)
    if isinstance(v, (list, tuple)):
        return type(v)(_snapshot(x) for x in v)
    return v


def same_answer(a: Any, b: Any) -> bool:
    """Equal values of equal type (NaN equals NaN): the test a recorded Python-level read must pass. A device's
    arrays are compared on the device, and one bool read back."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):  # (an index read as a Tensor: t.argsort(), t.nonzero())
        return a.__class__ is b.__class__ and same_answer(a._data, b._data)
    if a.__class__ in OFF_HOST or b.__class__ in OFF_HOST:
        return a.__class__ is b.__class__ and a.shape == b.shape and a.dtype == b.dtype and bool(
            xp_of(a).array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        if not isinstance(b, (np.ndarray, np.generic)) or not isinstance(a, (np.ndarray, np.generic)):
            return False
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and bool(
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same_answer(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


class Trace:
    """What one eager run of the function did, op by op, with every value in a numbered slot."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.slot_of: dict[int, int] = {}  # id(Tensor) -> slot
        self.slot_of_array: dict[int, int] = {}  # id(ndarray) -> slot (a value passed on as a raw array)
        self.values: list[Any] = []  # the traced value of each slot; held so that ids stay unique
        self.keep: list[Any] = []
        self.inputs: list[int | None] = []  # slot of each argument (None: a plain argument, compared by value)
        self.captured: list[tuple[Tensor, int]] = []
        self.ops: list[TapeOp] = []
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
            s = self.slot_of_array.get(id(t._data))  # e.g. detach(): a new Tensor around a traced array
            if s is not None:
                self.slot_of[id(t)] = s
                self.keep.append(t)
            elif t._stamp < self.start:  # made before the call: read afresh on every replay
                s = self.new_slot(t, t._data)
                self.captured.append((t, s))
        return s

    def record(self, prim: Primitive, args: tuple, kw: dict | None, out: Tensor) -> None:
        spec = []
        for a in args:
            s: int | None = None
            if isinstance(a, Tensor):
                s = self.slot(a)
                if s is None and a._requires_grad:
                    return self.cannot(f"'{prim.name}' got a tensor that requires grad but was created inside the "
                                       "function; create it outside (then read afresh on every call) or pass it in")
                spec.append((True, s) if s is not None else (False, a._data))
            elif (isinstance(a, np.ndarray) or a.__class__ in ARRAY_TYPES) and id(a) in self.slot_of_array:
                s = self.slot_of_array[id(a)]
                spec.append((True, s))
            else:
                spec.append((False, a))
            if s is not None:
                self.used.add(s)
        for k, v in (kw or {}).items():
            if getattr(v, "per_call", False):
                return self.cannot(f"'{prim.name}' keeps per-call state (a custom_vjp function's residuals) that a "
                                   "replay cannot recompute")
            if (isinstance(v, np.ndarray) or v.__class__ in ARRAY_TYPES) and id(v) in self.slot_of_array:  # a mask
                kw = {**kw, k: KwSlot(self.slot_of_array[id(v)])}  # type: ignore[dict-item]
                self.used.add(kw[k].slot)
            elif isinstance(v, Tensor):
                return self.cannot(f"'{prim.name}' got a traced value as keyword '{k}'")
        first = out[0] if isinstance(out, tuple) else out  # a multi-output primitive: one node, several slots
        edges = first._node.parents if first._node is not None else ()
        parents = tuple((edge[0], self.slot_of[id(args[edge[0]])]) for edge in edges)
        s_out: int | tuple[int, ...] = (tuple(self.new_slot(o, o._data) for o in out) if isinstance(out, tuple)
                                        else self.new_slot(out, out._data))
        self.ops.append(TapeOp(prim, tuple(spec), dict(kw) if kw else {}, s_out, parents, first._requires_grad))

    def cannot(self, why: str) -> None:
        """The call cannot be written to a tape (see ``Recorder.cannot``, which lets the function run on)."""
        raise JitError(f"jit({self.name}): {why}")

    def guard(self, t: Any, what: str, read: Callable[[Any], Any], result: Any) -> None:
        if not isinstance(t, Tensor):
            return
        s = self.slot(t)
        if s is not None:
            self.used.add(s)
            self.guards.append((s, read, _snapshot(result), what))


def slots_of(out: int | tuple[int, ...]) -> tuple[int, ...]:
    """The slots of an op's output (a multi-output primitive has several)."""
    return out if isinstance(out, tuple) else (out,)
