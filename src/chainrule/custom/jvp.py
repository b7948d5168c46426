"""``custom_jvp``: JAX's custom forward rule, which reverse mode uses too.

The rule ``jvp(primals, tangents) -> (primal_out, tangent_out)`` is linear in the tangents. Reverse
mode needs its transpose: the rule is run once more on zero tangents that require grad, and the
cotangent is pulled back through ``tangent_out`` to them (the gradient of ``<g, tangent_out>`` by
the tangents, the same for every tangent since the map is linear). The rule is written with NumPy
functions, so with traced primals that pullback is recorded too and derivatives of any order come out.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff import backprop
from ..autodiff import batch_levels as _batching
from ..autodiff.primitive import Primitive, apply
from ..core import pytree as _pytree
from ..core.device import as_array
from ..core.state import enable_grad
from ..tensor import Tensor


class custom_jvp:
    """A function with its own forward-mode rule, as JAX's ``jax.custom_jvp``.

    ``f.defjvp(jvp)`` (usable as a decorator) with ``jvp(primals, tangents) -> (primal_out, tangent_out)``,
    ``primals`` and ``tangents`` tuples with one entry per argument; the rule may call ``f`` itself.
    ``f.defjvps(*rules)`` gives one ``rule(tangent, ans, *args)`` per argument instead (None: no
    derivative). Reverse mode (``grad``, ``vjp``, ``hessian``) transposes the rule, so it must be
    linear in the tangents and written with NumPy functions. ``nondiff_argnums`` (as JAX's): those
    arguments are not differentiated and come first in the rule's arguments, ``jvp(*nondiff, primals,
    tangents)``. Arguments and outputs may be tuples, lists and dicts of arrays.

    Example:
        >>> import numpy as np, chainrule as cr
        >>> @cr.custom_jvp
        ... def log1pexp(x):
        ...     return np.log1p(np.exp(x))
        >>> @log1pexp.defjvp
        ... def log1pexp_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return log1pexp(x), t / (1 + np.exp(-x))
        >>> cr.grad(log1pexp)(1000.0)  # the rule's stable form: 1, not exp(1000) / (1 + exp(1000)) = nan
        1.0
    """

    def __init__(self, fn: Callable[..., Any], nondiff_argnums: tuple[int, ...] = (),
                 nondiff_argnames: tuple[str, ...] = ()) -> None:
        self.fn = fn
        self.nondiff_argnums = nondiff_numbers("custom_jvp", fn, nondiff_argnums, nondiff_argnames)
        self.jvp: Callable[..., Any] | None = None
        self._in_rule = 0  # > 0 while the rule runs: a call of f from inside it is a plain call of fn
        self._primitives: dict[int, _CustomJVP] = {}
        functools.update_wrapper(self, fn, updated=())  # not fn.__dict__: a custom rule's fn, jvp would replace ours

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        if symbolic_zeros:
            raise NotImplementedError(f"custom_jvp {name_of(self.fn)}: symbolic_zeros=True is not supported; "
                                      "tangents of arguments with no tangent are passed as arrays of zeros")
        self.jvp = jvp
        return jvp

    def defjvps(self, *rules: Callable[..., Any] | None) -> None:
        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
            ans = self.fn(*primals)
            out: Any = 0.0
            for rule, t in zip(rules, tangents):
                if rule is not None:
                    out = out + rule(t, ans, *primals)
            return ans, out

        self.jvp = jvp

    def run_rule(self, nondiff: tuple[Any, ...], primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
        """The rule's tangent output (its primal output is not needed: the call computed it)."""
        self._in_rule += 1
        try:
            result = self.jvp(*nondiff, primals, tangents)
        finally:
            self._in_rule -= 1
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(f"custom_jvp {name_of(self.fn)}: the jvp rule must return a pair (primal_out, "
                            f"tangent_out), but it returned {type(result).__name__}")
        return result[1]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = bind_positions(self.fn, args, kwargs)
        if self._in_rule:
            return self.fn(*args)
        if self.jvp is None:
            raise TypeError(f"custom_jvp {name_of(self.fn)}: call defjvp(jvp) before using it")
        positions = nondiff_positions("custom_jvp", self.fn, self.nondiff_argnums, len(args))
        diff_leaves, diff_def = _pytree.flatten(tuple(a for i, a in enumerate(args) if i not in positions))
        leaves, treedef = _pytree.flatten(args)
        out = self.fn(*_pytree.unflatten(treedef, [a._data if isinstance(a, Tensor) else a for a in leaves]))
        out_leaves, out_def = _pytree.flatten(out)
        out_leaves = [o._data if isinstance(o, Tensor) else o for o in out_leaves]
        call = _JvpCall(out_leaves, out_def, tuple(args[i] for i in sorted(positions)), diff_def)
        n = len(out_leaves)
        if n not in self._primitives:
            self._primitives[n] = _CustomJVP(self, n)
        try:
            results = apply(self._primitives[n], tuple(diff_leaves), {"call": call})
        except TypeError:  # (a call that is not differentiated records nothing: it runs)
            check_closure("custom_jvp", self.fn, args, out_leaves, "function")
            raise
        return _pytree.unflatten(out_def, list(results) if n > 1 else [results])


class _JvpCall:
    """One call of a custom_jvp function: its output, its nondiff arguments, the structures; kept on its node."""

    __slots__ = ("out", "out_def", "nondiff", "diff_def", "cache")
    per_call = True  # jit cannot replay it: the output belongs to the traced call

    def __init__(self, out: list[Any], out_def: Any, nondiff: tuple[Any, ...], diff_def: Any) -> None:
        self.out, self.out_def, self.nondiff, self.diff_def, self.cache = out, out_def, nondiff, diff_def, None

    def for_example(self, pick: Callable[[Any], Any]) -> _JvpCall:
        """This call's part for one example of a vmap batch (``pick`` takes it from a batched value)."""
        out = [pick(o) for o in self.out]
        out = [o._data if isinstance(o, Tensor) else o for o in out]
        leaves, treedef = _pytree.flatten(self.nondiff)
        nondiff = _pytree.unflatten(treedef, [pick(v) for v in leaves])
        return _JvpCall(out, self.out_def, nondiff, self.diff_def)

    def primals(self, diff_leaves: list[Any]) -> tuple[Any, ...]:
        return tuple(_pytree.unflatten(self.diff_def, diff_leaves))


def bind_positions(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The call's arguments by position: as JAX, keyword arguments are bound to their positions."""
    if not kwargs:
        return args
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args


def check_closure(kind: str, fn: Callable[..., Any], args: tuple[Any, ...], values: list[Any], rule: str) -> None:
    """Raise the error for a differentiated call of a custom function whose ``rule`` gave a vmap-batched value though
    no argument is batched: it reads a batched value it closes over, which the recorded call cannot hold."""
    if _batching.open and any(_batching.is_batched(v) for v in values) and not _batching.batched_tree(args):
        raise NotImplementedError(
            f"{kind} {name_of(fn)}: its {rule} reads a value batched by an enclosing vmap that it closes over (no "
            "argument of the call is batched); chainrule cannot record that call: pass the value as an argument "
            "of the function instead (in nondiff_argnums if it needs no derivative)")


def name_of(fn: Callable[..., Any]) -> str:
    """A function's name for messages (a ``functools.partial`` has none of its own: its function's)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return getattr(fn, "__name__", type(fn).__name__)


def nondiff_numbers(kind: str, fn: Callable[..., Any], nondiff_argnums: Any, nondiff_argnames: Any) -> tuple[int, ...]:
    """``nondiff_argnums`` with the positions of ``nondiff_argnames`` (JAX's spelling by name) added, sorted."""
    nums = {int(i) for i in nondiff_argnums}
    if nondiff_argnames:
        names = [nondiff_argnames] if isinstance(nondiff_argnames, str) else list(nondiff_argnames)
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        for name in names:
            if name not in params:
                raise ValueError(f"{kind} {name_of(fn)}: nondiff_argnames names {name!r}, which is "
                                 f"not a positional parameter of the function (its parameters: {params})")
            nums.add(params.index(name))
    return tuple(sorted(nums))


def nondiff_positions(kind: str, fn: Callable[..., Any], nondiff_argnums: tuple[int, ...], n: int) -> set[int]:
    """The positions ``nondiff_argnums`` name in a call with ``n`` arguments (negative ones counted from the end)."""
    for i in nondiff_argnums:
        if not -n <= i < n:
            raise ValueError(f"{kind} {name_of(fn)}: nondiff_argnums {nondiff_argnums} out of range for a call with "
                             f"{n} argument(s)")
    return {i % n for i in nondiff_argnums}


class OwnedPrimitive(Primitive):
    """The primitive of one custom_jvp / custom_vjp function (``owner``): its forward hands back the output
    the call computed before (kept in the keyword ``call``); the subclass gives the rule."""

    __slots__ = ("owner",)

    def __init__(self, owner: Any, n_outputs: int) -> None:
        fn = (lambda *a, call: call.out[0]) if n_outputs == 1 else (lambda *a, call: tuple(call.out))
        super().__init__(name_of(owner.fn), fn, register=False, n_outputs=n_outputs)
        self.owner = owner


class _CustomJVP(OwnedPrimitive):
    """The primitive of a custom_jvp function: forward mode runs the rule, reverse mode its transpose."""

    __slots__ = ()

    def jvp(self, argnum: int, t: Any, ans: Any, args: Any, kw: dict[str, Any]) -> Any:
        call = kw["call"]
        tangents = [t if i == argnum else np.zeros_like(_float(a)) for i, a in enumerate(args)]
        # ``args`` are Tensors when outer derivatives are being traced (then the rule is recorded too)
        out = self.owner.run_rule(call.nondiff, call.primals(list(args)), call.primals(tangents))
        leaves = self._tangent_leaves(call, out)
        return leaves[0] if self.n_outputs == 1 else tuple(leaves)

    def _tangent_leaves(self, call: _JvpCall, out: Any) -> list[Any]:
        """The leaves of the rule's tangent output, checked against the function's output."""
        leaves = _pytree.flatten(out)[0]
        if len(leaves) != self.n_outputs:
            raise TypeError(f"custom_jvp {self.name}: the rule's tangent output has {len(leaves)} leaves, the "
                            f"function's output {self.n_outputs}; give it the output's structure")
        for k, (tangent, primal) in enumerate(zip(leaves, call.out)):
            shapes = _shape_of(tangent), _shape_of(primal)
            if None in shapes or shapes[0] == shapes[1]:
                continue
            # a tangent may broadcast (a 0.0 for no change), never change the output's shape
            if np.broadcast_shapes(*shapes) != shapes[1]:
                where = "" if self.n_outputs == 1 else f" for output {k}"
                raise TypeError(f"custom_jvp {self.name}: the rule's tangent output{where} has shape {shapes[0]}, "
                                f"the function's output {shapes[1]}; the tangent must have the output's shape")
            leaves[k] = np.broadcast_to(tangent, shapes[1])
        return leaves

    def vjp(self, argnum: int, g: Any, node: Any, lift: Any) -> Any:
        call = node.kw["call"]
        if call.cache is None or not _same(call.cache[0], g):
            call.cache = (g, self._transpose(call, g, list(lift(node)[1]) if lift is not None else list(node.args),
                                             lift is not None))
        return call.cache[1][argnum]  # the sweep reduces it to the argument's shape and dtype

    def _transpose(self, call: _JvpCall, g: Any, primal_leaves: list[Any], create: bool) -> list[Any]:
        """The cotangent ``g`` pulled back through the rule's (linear) tangent map, one result per argument."""
        with enable_grad():
            zeros = []
            for p in primal_leaves:
                z = Tensor._wrap(np.zeros_like(_float(p)))
                z._requires_grad = True
                zeros.append(z)
            out = self.owner.run_rule(call.nondiff, call.primals(primal_leaves), call.primals(list(zeros)))
            leaves = self._tangent_leaves(call, out)  # (a broadcast tangent is broadcast here, recorded)
        gs = list(g) if self.n_outputs > 1 else [g]
        pairs = [(o, c) for o, c in zip(leaves, gs)
                 if c is not None and isinstance(o, Tensor) and o._requires_grad]
        if not pairs:
            return [np.zeros_like(_float(p)) for p in primal_leaves]
        grads = backprop.grad([o for o, _ in pairs], zeros, [c for _, c in pairs], create_graph=create,
                              retain_graph=create)
        return list(grads) if create else [r._data if isinstance(r, Tensor) else r for r in grads]

    def has_vjp(self) -> bool:
        return True


def _shape_of(x: Any) -> tuple[int, ...] | None:
    """The shape of an array, Tensor or number; None for another value (a batched one under vmap)."""
    if isinstance(x, Tensor):
        return x._data.shape
    if isinstance(x, (np.ndarray, np.generic, int, float, complex)):
        return np.shape(x)
    return None


def _float(x: Any) -> np.ndarray:
    arr = as_array(x._data if isinstance(x, Tensor) else x)  # (a device's array stays there)
    return arr if arr.dtype.kind in "fc" else arr.astype(np.float64)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b))
    return a is b
