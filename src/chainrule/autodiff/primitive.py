"""Primitives: a NumPy function plus its reverse (VJP) and forward (JVP) rules, and ``apply``.

A rule is written once, with NumPy functions and operators, and runs two ways:

- on plain ndarrays, for a fast first-order backward pass;
- on :class:`~chainrule.Tensor` values (NumPy dispatches to chainrule through
  ``__array_ufunc__`` / ``__array_function__``), so the rule itself is recorded and
  gradients of gradients, and forward-over-reverse, come for free.

Rules have one shape: ``vjp(g, ans, *args, **kwargs)`` returns the gradient of one
argument given the output gradient ``g``; ``jvp(t, ans, *args, **kwargs)`` returns the
output tangent given one argument's tangent ``t``. Broadcasting is undone by the core's
sweep (:func:`chainrule.core.node.unbroadcast`), once, not in each rule.

A primitive may declare what its reverse rules read (``reads=``): the graph node then keeps
only that, and the other inputs and the output are freed as soon as the program drops them.
A primitive with ``n_outputs=k`` returns a tuple; its outputs share one node, its reverse
rule receives one cotangent per output (None for an output that got no gradient) and its
forward rule returns one tangent per output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..core import state, traces
from ..core.clock import tick as _tick
from ..core.device import ARRAY_TYPES, OFF_HOST, mixed_devices
from ..core.device import of as _device_of
from ..core.node import Node
from ..scalar import Scalar
from ..tensor import LIFTED, Tensor
from ..tensor.views import note_view
from . import batch_levels as batching
from .device_args import device_zero, host_scalars
from .tangents import propagate_tangents

Rule = Callable[..., Any]

REGISTRY: dict[str, Primitive] = {}


class Primitive:
    """A differentiable function. Call it like the NumPy function it wraps.

    ``reads``: what the reverse rules read from the forward pass, a collection of argument
    positions and ``"ans"`` (default None: everything). ``n_outputs``: how many outputs ``fn``
    returns (as a tuple) when more than one.

    Example:
        >>> import numpy as np
        >>> from chainrule.autodiff.primitive import Primitive
        >>> cube = Primitive("cube", lambda x: x**3, reads=(0,))
        >>> cube.defvjp(lambda g, ans, x: g * 3 * x**2)
        >>> cube.defjvp(lambda t, ans, x: t * 3 * x**2)
        >>> from chainrule import Tensor
        >>> x = Tensor(2.0, requires_grad=True)
        >>> y = cube(x)
        >>> y._node.ans is None          # the rule reads x only: the output is not kept
        True
        >>> y.backward(); float(x.grad)
        12.0
    """

    __slots__ = ("name", "fn", "vjps", "jvps", "vjp_argnum", "jvp_argnum", "doc", "first_order_only", "real_only",
                 "n_outputs", "reads", "keeps", "keep_ans", "keep_args", "keep_first", "read_shapes", "fast_vjps",
                 "inline", "promotes", "floating", "keep_constants")

    def __init__(self, name: str, fn: Callable[..., Any], register: bool = True, *,
                 reads: Iterable[int | str] | None = None, n_outputs: int = 1) -> None:
        self.name = name
        self.fn = fn
        self.vjps: tuple[Rule | None, ...] = ()
        self.jvps: tuple[Rule | None, ...] = ()
        self.vjp_argnum: Rule | None = None  # rule(argnum, g, ans, *args) for variadic ops
        self.jvp_argnum: Rule | None = None
        self.doc = getattr(fn, "__doc__", None)
        # rules right at first order only (e.g. they read the input's values as constants): a
        # derivative of higher order through them raises instead of being silently wrong. The
        # library has none (tests/test_ops_registry.py checks); user primitives may set it.
        self.first_order_only = False
        # why the rules hold for real numbers only (None: they hold for complex numbers too)
        self.real_only: str | None = None
        if not isinstance(n_outputs, int) or n_outputs < 1:
            raise ValueError(f"Primitive {name!r}: n_outputs must be a positive int, got {n_outputs!r}")
        self.n_outputs = n_outputs
        self.fast_vjps: tuple[Rule | None, ...] | None = None
        # optional: ``inline(ans, args, kw) -> Inlined | None``, the same NumPy calls as ``fn`` and the reverse
        # rules written out for a jit replay's generated code (chainrule.replay.program), for traced arguments
        self.inline: Callable[..., Any] | None = None
        # PyTorch's type promotion (ops/promoting.py): the argument positions it casts to one dtype (None: the
        # op's own NumPy rule), and whether the op gives floats for integer inputs (true division, sqrt, ...)
        self.promotes: tuple[int, ...] | None = None
        self.floating = False
        # whether a node keeps the values of its constant (not differentiated) arguments: rules may read them
        # besides ``reads``; False for ops whose rules read none (add: a kept view would block changes in place)
        self.keep_constants = True
        self.declare_reads(reads)
        if register:
            REGISTRY[name] = self

    def declare_reads(self, reads: Iterable[int | str] | None) -> None:
        """Say what the reverse rules read: argument positions and/or ``"ans"`` (None: everything).

        Only differentiated arguments (Tensors that require grad) are ever dropped: constants are
        kept. A rule gets None for what it does not read, or, with ``"shapes"`` among ``reads``, a
        zero-stride array of the argument's shape and dtype (no values: for rules that read shapes).

        Example:
            >>> from chainrule.autodiff.primitive import Primitive
            >>> p = Primitive("twice_example", lambda x: 2 * x, register=False, reads=())
            >>> p.keeps, p.keep_ans, sorted(p.keep_args)
            (False, False, [])
        """
        if reads is None:
            self.reads, self.keep_ans, self.keep_args = None, True, None
        else:
            wanted = frozenset(reads)
            bad = [r for r in wanted if r not in ("ans", "shapes") and not (isinstance(r, int) and r >= 0)]
            if bad:
                raise ValueError(
                    f"Primitive {self.name!r}: reads= takes argument positions, 'ans' and 'shapes', got {bad}"
                )
            self.reads = wanted
            self.keep_ans = "ans" in wanted
            self.keep_args = frozenset(r for r in wanted if isinstance(r, int))
        # arguments 0 .. keep_first-1 are all read: a call with no more arguments than that drops none
        self.keep_first = 0
        while self.keep_args is not None and self.keep_first in self.keep_args:
            self.keep_first += 1
        # False: a node of this primitive keeps no value, so backward has nothing to free (and can run twice)
        self.keeps = self.reads is None or bool(self.keep_args) or self.keep_ans
        self.read_shapes = self.reads is not None and "shapes" in self.reads
        self._refresh()

    def _refresh(self) -> None:
        # The rules the core's sweep may call itself at first order, one per argument (no frame of
        # Primitive.vjp in between): only when vjp would just call them on the node's values.
        plain = type(self).vjp is Primitive.vjp and self.real_only is None and not self.read_shapes
        self.fast_vjps = self.vjps if plain and self.vjp_argnum is None and self.vjps else None

    def __repr__(self) -> str:
        return f"<chainrule primitive {self.name}>"

    # -- defining rules ------------------------------------------------------------
    def defvjp(self, *rules: Rule | None) -> None:
        """One reverse rule per positional argument (None: not differentiable)."""
        self.vjps = rules
        self._refresh()

    def defjvp(self, *rules: Rule | None) -> None:
        """One forward rule per positional argument (None: not differentiable)."""
        self.jvps = rules

    def defvjp_argnum(self, rule: Rule) -> None:
        """A reverse rule ``rule(argnum, g, ans, *args)`` for ops with any number of args."""
        self.vjp_argnum = rule
        self._refresh()

    def defjvp_argnum(self, rule: Rule) -> None:
        """A forward rule ``rule(argnum, t, ans, *args)`` for ops with any number of args."""
        self.jvp_argnum = rule

    def has_vjp(self) -> bool:
        return self.vjp_argnum is not None or any(r is not None for r in self.vjps)

    def has_jvp(self) -> bool:
        return self.jvp_argnum is not None or any(r is not None for r in self.jvps)

    # -- calling ---------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return apply(self, args, kwargs)

    def _rule(self, rules: tuple[Rule | None, ...], by_argnum: Rule | None, argnum: int, kind: str) -> Rule:
        if by_argnum is not None:
            return lambda *a, **k: by_argnum(argnum, *a, **k)
        rule = rules[argnum] if argnum < len(rules) else None
        if rule is None:
            raise TypeError(
                f"{self.name}: argument {argnum} is not differentiable ({kind} mode); "
                "pass it as a constant (a NumPy array or number), or detach() it"
            )
        return rule

    def no_complex(self, reason: str) -> None:
        """Declare that the rules hold for real inputs only: differentiating at a complex one raises."""
        self.real_only = reason
        self._refresh()

    def _check_real(self, values: Any) -> None:
        for v in values:
            if getattr(v, "dtype", None) is not None and v.dtype.kind == "c":
                raise TypeError(
                    f"{self.name}: the derivative is not defined for complex inputs ({self.real_only}); got dtype "
                    f"{v.dtype}. Differentiate a real function of the real and imaginary parts (np.real, np.imag, "
                    "np.abs) instead"
                )

    def vjp(self, argnum: int, g: Any, node: Node, lift: Callable[[Node], Any] | None) -> Any:
        """Gradient for argument ``argnum`` of ``node`` given its output gradient ``g``.

        ``lift`` is None for a first-order pass (the rule runs on the arrays the node kept), else
        the function that gives the node's output and arguments as graph values (``create_graph``).
        The result is not yet reduced to the argument's shape (the sweep does that).
        """
        if self.real_only is not None:
            self._check_real((*node.args, *(node.ans if self.n_outputs > 1 else (node.ans,))))
        rules = self.vjps
        rule = rules[argnum] if argnum < len(rules) else None
        if rule is None:
            rule = self._rule(rules, self.vjp_argnum, argnum, "reverse")
        kw = node.kw
        if lift is not None:
            if self.first_order_only:
                raise _second_order(self.name)
            ans, args = lift(node)
            if self.read_shapes:
                args = with_shapes(node, args, getattr(g, "data", g))
            return rule(g, ans, *args, **kw) if kw else rule(g, ans, *args)
        # the NumPy values seen in the forward pass (None where the rules declared they do not read)
        args = with_shapes(node, node.args, g) if self.read_shapes else node.args
        return rule(g, node.ans, *args, **kw) if kw else rule(g, node.ans, *args)

    def jvp(self, argnum: int, t: Any, ans: Any, args: Any, kw: dict[str, Any]) -> Any:
        if self.real_only is not None:
            outs = ans if self.n_outputs > 1 else (ans,)
            self._check_real([a._data if isinstance(a, Tensor) else a for a in (*args, *outs)])
        if self.first_order_only and (isinstance(t, Tensor) or any(isinstance(a, Tensor) for a in args)):
            raise _second_order(self.name)  # traced: an outer derivative would differentiate this rule
        rule = self._rule(self.jvps, self.jvp_argnum, argnum, "forward")
        return rule(t, ans, *args, **kw) if kw else rule(t, ans, *args)


@functools.lru_cache(maxsize=1024)
def _shaped(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return np.broadcast_to(np.zeros((), dtype), shape)  # read-only, no memory per entry


def with_shapes(node: Node, args: list[Any], like: Any = None) -> list[Any]:
    """``args`` with each argument the node did not keep replaced by a zero-stride array of its shape and dtype
    (on the device of ``like``, the output gradient, when that is not the CPU)."""
    out = list(args)
    for argnum, _, _, shape, dtype in node.parents:
        if out[argnum] is None:
            if like is not None and like.__class__ in OFF_HOST:
                out[argnum] = _device_of(like).xp.broadcast_to(device_zero(like, dtype), shape)
            else:
                out[argnum] = _shaped(shape, dtype)
    return out


def _second_order(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"{name}: its derivative rules are exact at first order only (first_order_only=True), so a derivative of "
        "second or higher order through it is not available; give it rules written with NumPy functions on their "
        "arguments (they are then recorded and differentiable again), or differentiate it once only"
    )


def apply(prim: Primitive, args: tuple[Any, ...], kw: dict[str, Any] | None) -> Any:
    """Run ``prim`` on ``args``: NumPy values in, NumPy out; a Tensor anywhere, a Tensor out.

    When an argument requires grad and grad mode is on, the outputs get one graph node that keeps
    what the primitive's reverse rules read (see ``Primitive(reads=...)``). Every primitive call comes
    here (``apply1`` and ``apply2`` too, while a trace runs): a trace of this thread or task (``jit``'s
    recording, see ``core/traces.py``) is asked to do the call its way. PyTorch's type promotion comes first
    (``PROMOTE``, ops/promoting.py): its casts are primitive calls too, so eager calls, a jit trace, vmap and
    forward mode all see the same dtypes.
    """
    if prim.promotes is not None:
        promoted = PROMOTE(prim, args)
        if promoted is not None:
            args = promoted
    if traces.open:  # a trace (or a vmap) runs somewhere in the process: this thread's (task's) trace decides
        trace = _current_trace()
        if trace is not None:
            return trace.process(prim, args, kw)
    if batching.open and batching.batched_in(args, kw):  # inside vmap: the op's batching rule
        return batching.dispatch(prim, args, kw)
    vals = list(args)
    parents = []
    tensors = False
    i = 0
    for a in args:
        if isinstance(a, Tensor):
            tensors = True
            d = vals[i] = a._data
            if a._requires_grad:
                node = a._node
                parents.append((i, a if node is None else node, a._index, d.shape, d.dtype))
        i += 1
    try:
        data = prim.fn(*vals, **kw) if kw else prim.fn(*vals)
    except (TypeError, ValueError) as e:
        scalars = host_scalars(args)
        if scalars is not None:
            return apply(prim, scalars, kw)
        raise _explain(prim, args, vals, e) from None
    if data is None:  # NumPy computed nothing (e.g. np.sum(None))
        raise _explain(prim, args, vals, TypeError(f"{prim.name}: no result"))
    if not tensors:
        return data
    if prim.n_outputs != 1:
        return _apply_several(prim, args, kw, vals, parents, data)
    if data.__class__ is not np.ndarray and data.__class__ not in ARRAY_TYPES:  # (a device's array stays there)
        data = np.asarray(data)
    out = _output(prim, data, tuple(parents), vals, kw, args)
    if data.__class__ is np.ndarray and data.base is not None:  # a view of its input? (getitem, reshape, .t(), ...)
        x = args[0]
        if x.__class__ is Tensor or isinstance(x, Tensor):
            note_view(out, x, data.base)
    return out


def _output(prim: Primitive, data: Any, parents: Any, vals: list[Any], kw: dict[str, Any] | None,
            args: tuple[Any, ...]) -> Tensor:
    """The node-creation path of a one-output primitive: ``data`` as a new Tensor and, when an argument
    requires grad (``parents``: its edges) and grad mode is on, one Node keeping what the rules read (``vals``:
    the arguments' values; constants stay). ``Tensor._set`` and ``Node.__init__`` are inlined here, and this
    body again in ``apply1`` and ``apply2``, unrolled for one and two Tensors (a chain of small ops is all
    Python overhead: a call more costs 4%); tests/test_primitive_fields.py checks that all of them assign the
    same fields as the originals."""
    out = _new(Tensor)
    out._data = data
    out._grad = out._label = out._tangents = out._index = None
    stamp = out._stamp = _tick()
    if parents and _grad_enabled():
        node = out._node = _new(Node)
        node.prim = prim
        node.parents = parents
        node.stamp = stamp
        node.kw = kw
        node.outputs = node.lifted = None
        keep = prim.keep_args
        if keep is None:
            node.ans = data
            node.args = vals
        else:  # only what the rules read (see Primitive.declare_reads); all of them when keep_first covers them
            node.ans = data if prim.keep_ans else None
            node.args = _kept(vals, parents, keep, prim.keep_constants) if len(vals) > prim.keep_first else vals
        out._requires_grad = True
    else:
        out._node = None
        out._requires_grad = False
    if _forward_levels():
        propagate_tangents(prim, (out,), args, kw)
        if out._tangents and out._node is not None:
            _keep_traced(out._node, out, args)
    return out


def apply1(prim: Primitive, x: Any) -> Any:
    """``apply(prim, (x,), None)``: the generated one-argument op functions call this.

    The same result as ``apply``, with the loop over arguments unrolled for a plain call on one
    Tensor (a chain of small ops is all Python overhead); anything else goes to ``apply``.
    """
    if traces.open or prim.n_outputs != 1 or not isinstance(x, Tensor):
        return apply(prim, (x,), None)
    xd = x._data
    if prim.floating and not x._requires_grad and xd.dtype.kind in "biu":  # sqrt(int_tensor): float32 as
        return apply(prim, (x,), None)  # PyTorch (ops/promoting.py); a Tensor that requires grad is a float one
    try:
        data = prim.fn(xd)
    except (TypeError, ValueError) as e:
        raise _explain(prim, (x,), [xd], e) from None
    if data.__class__ is not np.ndarray and data.__class__ not in ARRAY_TYPES:
        if data is None:
            raise _explain(prim, (x,), [xd], TypeError(f"{prim.name}: no result"))
        data = np.asarray(data)
    out = _new(Tensor)  # as in _output (tests/test_primitive_fields.py)
    out._data = data
    out._grad = out._label = out._tangents = out._index = None
    stamp = out._stamp = _tick()
    if x._requires_grad and _grad_enabled():
        node = out._node = _new(Node)
        node.prim = prim
        parent = x._node
        node.parents = ((0, x if parent is None else parent, x._index, xd.shape, xd.dtype),)
        node.stamp = stamp
        node.kw = node.outputs = node.lifted = None
        if prim.keep_args is None:
            node.ans = data
        else:  # keep_first > 0: the rules read argument 0
            node.ans = data if prim.keep_ans else None
            if not prim.keep_first:
                xd = None
        node.args = [xd]
        out._requires_grad = True
    else:
        out._node = None
        out._requires_grad = False
    if _forward_levels():
        propagate_tangents(prim, (out,), (x,), None)
        if out._tangents and out._node is not None:
            _keep_traced(out._node, out, (x,))
    return out


def apply2(prim: Primitive, x: Any, y: Any) -> Any:
    """``apply(prim, (x, y), None)``: the generated two-argument op functions and operators call this.

    The same result as ``apply``, unrolled for a plain call on two Tensors, or a float Tensor and a Python number
    (either side); anything else goes to ``apply``. Mixed dtypes go there too, for PyTorch's promotion
    (ops/promoting.py).
    """
    if traces.open or prim.n_outputs != 1:
        return apply(prim, (x, y), None)
    if isinstance(x, Tensor):
        xd = x._data
        xt = xd.dtype  # (read once: the edges below use them too)
        xg = x._requires_grad
        if isinstance(y, Tensor):
            yd = y._data
            yt = yd.dtype
            if xt is not yt and prim.promotes is not None or prim.floating and xt.kind in "biu":
                return apply(prim, (x, y), None)
            yg = y._requires_grad
        elif y.__class__ in _REAL_NUMBERS and xt.kind in "fc":  # x * 0.5: NumPy's dtype is PyTorch's
            yd = y
            yg = False
        else:
            return apply(prim, (x, y), None)
    elif x.__class__ in _REAL_NUMBERS and isinstance(y, Tensor):  # 0.5 * x
        yd = y._data
        yt = yd.dtype
        if yt.kind not in "fc":
            return apply(prim, (x, y), None)
        xd = x
        xg = False
        yg = y._requires_grad
    else:
        return apply(prim, (x, y), None)
    try:
        data = prim.fn(xd, yd)
    except (TypeError, ValueError) as e:
        scalars = host_scalars((x, y))
        if scalars is not None:
            return apply(prim, scalars, None)
        raise _explain(prim, (x, y), [xd, yd], e) from None
    if data.__class__ is not np.ndarray and data.__class__ not in ARRAY_TYPES:
        if data is None:
            raise _explain(prim, (x, y), [xd, yd], TypeError(f"{prim.name}: no result"))
        data = np.asarray(data)
    out = _new(Tensor)  # as in _output (tests/test_primitive_fields.py)
    out._data = data
    out._grad = out._label = out._tangents = out._index = None
    stamp = out._stamp = _tick()
    if (xg or yg) and _grad_enabled():
        node = out._node = _new(Node)
        node.prim = prim
        if xg:
            parent = x._node
            edge = (0, x if parent is None else parent, x._index, xd.shape, xt)
            if yg:
                parent = y._node
                node.parents = (edge, (1, y if parent is None else parent, y._index, yd.shape, yt))
            else:
                node.parents = (edge,)
        else:
            parent = y._node
            node.parents = ((1, y if parent is None else parent, y._index, yd.shape, yt),)
        node.stamp = stamp
        node.kw = node.outputs = node.lifted = None
        keep = prim.keep_args
        if keep is None:
            node.ans = data
        else:  # only what the rules read (keep_first 2: both are read); constants stay unless not kept
            node.ans = data if prim.keep_ans else None
            if prim.keep_first < 2:
                if 0 not in keep and (xg or not prim.keep_constants):
                    xd = None
                if 1 not in keep and (yg or not prim.keep_constants):
                    yd = None
        node.args = [xd, yd]
        out._requires_grad = True
    else:
        out._node = None
        out._requires_grad = False
    if _forward_levels():
        propagate_tangents(prim, (out,), (x, y), None)
        if out._tangents and out._node is not None:
            _keep_traced(out._node, out, (x, y))
    return out


def _keep_traced(node: Node, ans: Any, args: tuple[Any, ...]) -> None:
    """Under jvp, a rule run in a differentiable backward pass must see the tangents its values carry:
    the node keeps the call's own Tensors (output and arguments) for that, instead of rebuilding them."""
    node.lifted = {LIFTED: (ans, list(args))}


def _kept(vals: list[Any], parents: list[tuple], keep: frozenset[int], constants: bool) -> list[Any]:
    """The argument values a node keeps: those its rules read, and (``constants``) the constant ones. A constant
    kept for nothing holds its memory, and so blocks changes in place to it (``out[i] += x[i]`` reads ``out[i]``,
    a view of ``out``, into an addition that needs none of it: ``Primitive.keep_constants``)."""
    if not constants:
        return [v if i in keep else None for i, v in enumerate(vals)]
    for edge in parents:
        if edge[0] not in keep:
            vals[edge[0]] = None
    return vals


def _apply_several(prim: Primitive, args: tuple[Any, ...], kw: dict[str, Any] | None, vals: list[Any],
                   parents: list[tuple], data: Any) -> tuple[Tensor, ...]:
    """The outputs of a multi-output primitive: one Tensor each, sharing one node."""
    if not isinstance(data, (tuple, list)) or len(data) != prim.n_outputs:
        raise TypeError(f"{prim.name}: declared n_outputs={prim.n_outputs} but its function returned "
                        f"{type(data).__name__} {data!r:.60}; return a tuple of {prim.n_outputs} arrays")
    datas = tuple(d if d.__class__ in ARRAY_TYPES else np.asarray(d) for d in data)
    node = None
    stamp = _tick()
    if parents and _grad_enabled():
        keep = prim.keep_args
        node = Node(prim, tuple(parents), datas if keep is None or prim.keep_ans else None,
                    vals if keep is None else _kept(vals, parents, keep, prim.keep_constants), kw, stamp)
    outs = []
    for k, d in enumerate(datas):
        t = _new(Tensor)
        t._set(d, node, k if node is not None else None)
        t._stamp = stamp
        outs.append(t)
    outs = tuple(outs)
    if _forward_levels():
        propagate_tangents(prim, outs, args, kw)
        if node is not None and outs[0]._tangents:
            _keep_traced(node, outs, args)
    return outs


def _explain(prim: Primitive, args: tuple[Any, ...], vals: list[Any], e: Exception) -> Exception:
    """A clearer error for a failed forward computation: a wrong type, devices or shapes that don't fit."""
    mixed = mixed_devices(prim.name, vals)
    if mixed is not None:
        return mixed
    on = next((_device_of(v).name for v in vals if v.__class__ in OFF_HOST), None)
    if on is not None and isinstance(e, TypeError):
        return TypeError(f"{prim.name}: cannot run on the device {on!r} ({e}); run it on the cpu "
                         f"(x.cpu()) if it must be done, or write it with functions that device has")
    for i, a in enumerate(args):
        if isinstance(a, Scalar):
            method = prim.name.rsplit(".", 1)[-1]
            hint = f"call the Scalar's own method (s.{method}()), " if callable(getattr(Scalar, method, None)) else ""
            return TypeError(
                f"{prim.name}: argument {i} is a Scalar; the Tensor functions do not take Scalars: {hint}"
                "write a Scalar-only expression, or use Tensor(s.data, requires_grad=True)"
            )
        if a is None or isinstance(a, (str, bytes)) or (
            isinstance(a, (list, tuple)) and any(isinstance(v, (str, bytes)) or v is None for v in a)
        ):
            return TypeError(
                f"{prim.name}: argument {i} must be a number, an array of numbers or a Tensor, "
                f"got {type(a).__name__} {a!r:.40}"
            )
    if isinstance(e, ValueError) and any(w in str(e) for w in ("shape", "broadcast", "dimension")):
        shapes = " and ".join(str(np.shape(v)) for v in vals if isinstance(v, np.ndarray) or np.ndim(v))
        return ValueError(
            f"{prim.name}: cannot combine inputs of shapes {shapes or '()'} ({e}); make the shapes "
            "compatible (reshape, transpose, expand_dims or broadcast_to)"
        )
    return e


# ``promote(prim, args) -> args | None``: PyTorch's type promotion, installed by ops/promoting.py (None: NumPy's
# rule gives PyTorch's dtype, nothing to cast)
def _numpys_rule(prim: Primitive, args: tuple[Any, ...]) -> None:
    return None


PROMOTE: Callable[..., tuple[Any, ...] | None] = _numpys_rule
_REAL_NUMBERS = frozenset((float, int))
_new = object.__new__
_grad_enabled = state.grad_enabled
_forward_levels = state.forward_levels
_current_trace = traces.current
