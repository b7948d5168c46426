"""The tape compiled to two straight-line Python functions (forward, backward), and the one graph node
a replayed call hangs on its output."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff.inlined import Inlined
from ..autodiff.primitive import Primitive
from ..core.device import of
from ..core.node import unbroadcast
from ..core.sparse import SliceGrad
from ..ops._saved import Saved
from .tape import JitError, KwSlot, Trace, slots_of


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



def _fresh_saved(traced: Saved) -> Saved:
    """An empty ``Saved`` asking for the same gradients as the traced one."""
    fresh = Saved.__new__(Saved)
    fresh.wanted, fresh.values, fresh._g, fresh._grads = traced.wanted, {}, None, {}
    return fresh


def _inlined(op: Any, trace: Trace) -> Inlined | None:
    """The op's NumPy calls written out (see ``autodiff.inlined``), when its primitive offers them for these
    arguments and for every argument the backward asks a gradient for; else None (the op is called)."""
    inline = getattr(op.prim, "inline", None)
    if inline is None or isinstance(op.out, tuple) or any(isinstance(v, KwSlot) for v in op.kw.values()):
        return None
    code = inline(trace.values[op.out], [trace.values[a] if is_slot else a for is_slot, a in op.spec], op.kw)
    if code is None or not all(argnum in code.backward for argnum, _ in op.parents):
        return None
    return code


class Program:
    """The tape compiled to two Python functions: ``forward(*inputs) -> slot values`` and
    ``backward(g, values) -> gradients of the differentiable inputs``."""

    def __init__(self, trace: Trace, out_slots: list[int], grad_slot: int | None) -> None:
        self.name = trace.name
        env: dict[str, Any] = {"ndarray": np.ndarray, "asarray": np.asarray, "np": np}
        consts: dict[int, str] = {}
        kinds: dict[Any, str] = {np.ndarray: ""}  # a device's array type -> the suffix of its names in env

        def kind(s: int) -> str:
            """The suffix of ``ndarray``/``asarray`` for slot ``s``'s traced device (none for the host): a value
            comes back as an array of the device it was traced on, never copied between devices."""
            cls = trace.values[s].__class__
            if cls not in kinds:
                b = of(trace.values[s])
                if b.ndarray is not cls:  # not a device's array: NumPy's (a NumPy scalar becomes a 0-d array)
                    return ""
                kinds[cls] = suffix = f"_{len(kinds)}"
                env[f"ndarray{suffix}"], env[f"asarray{suffix}"] = b.ndarray, b.xp.asarray
            return kinds[cls]

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
        inlined: dict[int, tuple[Inlined, dict[str, str]]] = {}  # ops written out as NumPy calls, with their names
        for n, op in enumerate(trace.ops):
            env[f"f{n}"] = op.prim.fn
            args = [f"v{a}" if is_slot else const(a) for is_slot, a in op.spec]
            code = _inlined(op, trace)
            if code is not None:
                names = {"out": f"v{op.out}", "p": f"_{n}_", **{f"a{i}": a for i, a in enumerate(args)}}
                env.update({f"_{n}_{key}": value for key, value in code.consts.items()})
                lines.extend(f"    {line.format(**names)}" for line in code.forward)
                k = kind(op.out)
                lines.append(f"    if v{op.out}.__class__ is not ndarray{k}: v{op.out} = asarray{k}(v{op.out})")
                states.extend(name.format(**names) for name in code.keep)
                inlined[n] = (code, names)
                calls.append("")
                continue
            kw = dict(op.kw)
            for key, value in op.kw.items():
                if isinstance(value, KwSlot):  # a value computed inside (a dropout mask): its slot
                    args.append(f"{key}=v{value.slot}")
                    del kw[key]
                elif isinstance(value, Saved):  # per-call state of a fused op: a fresh one on every replay
                    env[f"saved{n}_{key}"] = functools.partial(_fresh_saved, value)
                    lines.append(f"    sv{n}_{key} = saved{n}_{key}()")
                    states.append(f"sv{n}_{key}")
                    args.append(f"{key}=sv{n}_{key}")
                    del kw[key]
            if kw:
                env[f"kw{n}"] = kw
                args.append(f"**kw{n}")
            calls.append(", ".join(args))
            outs = slots_of(op.out)
            lines.append(f"    {', '.join(f'v{s}' for s in outs)}{',' if isinstance(op.out, tuple) else ''} = "
                         f"f{n}({calls[-1]})")
            for s in outs:
                k = kind(s)
                lines.append(f"    if v{s}.__class__ is not ndarray{k}: v{s} = asarray{k}(v{s})")
        read = {v.slot for op in trace.ops for v in op.kw.values() if isinstance(v, KwSlot)}
        self.kept = sorted({s for op in trace.ops for s in (*slots_of(op.out), *[a for ok, a in op.spec if ok])}
                           | set(sources) | read)
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
                outs = slots_of(op.out)
                if not any(s in have for s in outs) or not op.parents:
                    continue
                if isinstance(op.out, tuple):  # one cotangent per output (None: it got none), as the engine
                    g_of = "[" + ", ".join(f"g{s}" if s in have else "None" for s in outs) + "]"
                    ans_of = "(" + ", ".join(f"v{s}" for s in outs) + ",)"
                else:
                    g_of, ans_of = f"g{op.out}", f"v{op.out}"
                for argnum, parent in op.parents:
                    if n in inlined:  # the rule's NumPy calls, written out: t has the argument's shape and dtype
                        code, names = inlined[n]
                        back.extend(f"    {line.format(g=g_of, **names)}" for line in code.backward[argnum])
                        back.append(f"    g{parent} = g{parent} + t" if parent in have else f"    g{parent} = t")
                        have.add(parent)
                        continue
                    env[f"r{n}_{argnum}"] = _reverse_rule(op.prim, argnum)
                    x = trace.values[parent]
                    shape, dtype = x.shape, x.dtype
                    env[f"s{n}_{argnum}"], env[f"d{n}_{argnum}"] = shape, dtype
                    env[f"fit{n}_{argnum}"] = _fitter(op.prim, argnum, np.shape(x), np.result_type(x))
                    back.append(f"    t = r{n}_{argnum}({g_of}, {ans_of}, {calls[n]})")
                    back.append(f"    if not (t.__class__ is ndarray{kind(parent)} and t.shape == s{n}_{argnum} "
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


class ReplayNode:
    """The single graph node of a replayed call: its reverse rule runs the tape's backward once."""

    __slots__ = ("name", "program", "values", "_g", "_grads")
    keeps = True  # its node keeps the inputs' arrays (to check them for in-place changes)
    n_outputs = 1
    fast_vjps = None  # the sweep calls vjp

    def __init__(self, program: Program, values: tuple) -> None:
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
