"""Your own differentiable functions: ``primitive``, ``custom_vjp``, ``custom_jvp``; and ``stop_gradient``,
``checkpoint``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff.primitive import Primitive, apply
from ..core import pytree as _pytree
from ..core.device import as_array
from ..tensor import Tensor
from . import checkpoint_policies  # noqa: F401  (re-exported: chainrule.checkpoint_policies, JAX's)
from .checkpoint import checkpoint  # noqa: F401  (re-exported: chainrule.checkpoint)
from .checkpoint import checkpoint as remat  # noqa: F401  (JAX's other name for it)
from .jvp import (
    OwnedPrimitive,
    bind_positions,
    check_closure,
    custom_jvp,  # noqa: F401  (re-exported: chainrule.custom_jvp)
    name_of,
    nondiff_numbers,
    nondiff_positions,
)


def primitive(fn: Callable[..., Any]) -> Primitive:
    """Make ``fn`` (written with NumPy on plain arrays) a chainrule op; then give it rules.

    Rules are written with NumPy functions so they also run on Tensors (higher order).

    Example:
        >>> import numpy as np, chainrule as cr
        >>> @cr.custom.primitive
        ... def softplus(x):
        ...     return np.logaddexp(0.0, x)
        >>> softplus.defvjp(lambda g, ans, x: g / (1 + np.exp(-x)))
        >>> softplus.defjvp(lambda t, ans, x: t / (1 + np.exp(-x)))
        >>> round(cr.grad(softplus)(0.0), 3)
        0.5
    """
    return Primitive(fn.__name__, fn, register=False)  # the library's registry (ops.table()) lists its own ops only


class custom_vjp:
    """JAX-style custom reverse rule: ``f.defvjp(fwd, bwd)``.

    ``fwd(*args) -> (out, residuals)`` runs on NumPy arrays (it may call ``f`` itself, as in JAX);
    ``bwd(residuals, g)`` returns a tuple with one gradient per argument (None for none). Arguments
    and outputs may be tuples, lists and dicts of arrays, ``g`` has the output's structure and each
    gradient its argument's. ``nondiff_argnums`` (as JAX's, e.g. with ``functools.partial``) names
    arguments that are not differentiated (an int, a flag): they come first in bwd's arguments,
    ``bwd(*nondiff_args, residuals, g)``, which returns gradients for the other arguments only.
    An optional ``defjvp(jvp)`` with ``jvp(primals, tangents) -> tangent_out`` enables forward mode.

    Example:
        >>> import numpy as np, chainrule as cr
        >>> @cr.custom_vjp
        ... def clip_grad_norm(x):
        ...     return x
        >>> clip_grad_norm.defvjp(lambda x: (x, None), lambda res, g: (np.clip(g, -1, 1),))
        >>> cr.grad(lambda x: 5 * clip_grad_norm(x))(2.0)
        1.0
    """

    def __init__(self, fn: Callable[..., Any], nondiff_argnums: tuple[int, ...] = (),
                 nondiff_argnames: tuple[str, ...] = ()) -> None:
        self.fn = fn
        self.nondiff_argnums = nondiff_numbers("custom_vjp", fn, nondiff_argnums, nondiff_argnames)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.jvp: Callable[..., Any] | None = None
        self.keeps_none = False  # True (autograd.Function): None is no gradient, not zeros, in and out of bwd
        self._in_rule = 0  # > 0 while fwd runs: a call of f from inside fwd is a plain call of fn
        self._primitives: dict[int, _CustomVJP] = {}  # by number of output leaves; per-call state is on the node
        functools.update_wrapper(self, fn, updated=())  # not fn.__dict__: a custom rule's fn, jvp would replace ours

    @property
    def primitive(self) -> _CustomVJP:
        return self._primitive(1)

    def _primitive(self, n_outputs: int) -> _CustomVJP:
        if n_outputs not in self._primitives:
            self._primitives[n_outputs] = _CustomVJP(self, n_outputs)
        return self._primitives[n_outputs]

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any], symbolic_zeros: bool = False,
               optimize_remat: bool = False) -> None:
        """Set the rules. ``optimize_remat`` (a JAX memory hint) is accepted and changes nothing here."""
        if symbolic_zeros:
            raise NotImplementedError(f"custom_vjp {name_of(self.fn)}: symbolic_zeros=True is not supported; fwd "
                                      "gets plain arrays and bwd's cotangents for outputs with none are zeros")
        self.fwd, self.bwd = fwd, bwd

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        self.jvp = jvp
        return jvp

    def run_fwd(self, args: tuple[Any, ...]) -> tuple[Any, Any]:
        """fwd on ``args``; inside it, ``f(...)`` evaluates ``fn`` directly (JAX's fwd idiom ``return f(x), x``)."""
        self._in_rule += 1
        try:
            result = self.fwd(*args)
        finally:
            self._in_rule -= 1
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(f"custom_vjp {name_of(self.fn)}: fwd must return a pair (output, residuals), "
                            f"but it returned {type(result).__name__}")
        return result[0], result[1]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = bind_positions(self.fn, args, kwargs)
        if self._in_rule:
            return self.fn(*args)
        if self.fwd is None or self.bwd is None:
            raise TypeError(f"custom_vjp {name_of(self.fn)}: call defvjp(fwd, bwd) before using it")
        nondiff = nondiff_positions("custom_vjp", self.fn, self.nondiff_argnums, len(args))
        diff_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
        diff_leaves, diff_def = _pytree.flatten(diff_args)
        sizes = tuple(len(_pytree.flatten(a)[0]) for a in diff_args)
        raw = _pytree.unflatten(_pytree.flatten(args)[1], [a._data if isinstance(a, Tensor) else a
                                                            for a in _pytree.flatten(args)[0]])
        out, residuals = self.run_fwd(tuple(raw))
        out_leaves, out_def = _pytree.flatten(out)
        out_leaves = [o._data if isinstance(o, Tensor) else o for o in out_leaves]
        call = _Call(out_leaves, residuals, tuple(args[i] for i in sorted(nondiff)), diff_def, out_def, nondiff,
                     len(args), sizes)
        try:
            results = apply(self._primitive(len(out_leaves)), tuple(diff_leaves), {"call": call})
        except TypeError:  # (a call that is not differentiated records nothing: it runs)
            check_closure("custom_vjp", self.fn, args, out_leaves, "fwd")
            raise
        return _pytree.unflatten(out_def, list(results) if len(out_leaves) > 1 else [results])


class _Call:
    """One call of a custom_vjp function: its output, its residuals and the gradients of one backward step.

    Kept in the call's graph node (its keyword arguments), so it goes with the node.
    """

    __slots__ = ("out", "residuals", "nondiff", "diff_def", "out_def", "positions", "n_args", "sizes", "cache")
    per_call = True  # jit cannot replay it: the residuals belong to the traced call

    def __init__(self, out: list[Any], residuals: Any, nondiff: tuple[Any, ...], diff_def: Any, out_def: Any,
                 positions: set[int], n_args: int, sizes: tuple[int, ...]) -> None:
        self.out, self.residuals, self.nondiff, self.cache = out, residuals, nondiff, None
        self.diff_def, self.out_def, self.positions, self.n_args = diff_def, out_def, positions, n_args
        self.sizes = sizes

    def for_example(self, pick: Callable[[Any], Any]) -> _Call:
        """This call's part for one example of a vmap batch (``pick`` takes it from a batched value)."""

        def part(x: Any) -> Any:
            if isinstance(x, dict):
                return {k: part(v) for k, v in x.items()}
            if isinstance(x, (tuple, list)):
                return type(x)(part(v) for v in x)
            return pick(x)

        # the forward value: plain arrays (under vmap of grad an example's part is traced)
        out = [o._data if isinstance(o, Tensor) else o for o in part(self.out)]
        return _Call(out, part(self.residuals), part(self.nondiff), self.diff_def, self.out_def, self.positions,
                     self.n_args, self.sizes)

    def all_args(self, diff_leaves: list[Any]) -> tuple[Any, ...]:
        """The call's arguments in order, the differentiated ones rebuilt from ``diff_leaves``."""
        diff = iter(_pytree.unflatten(self.diff_def, diff_leaves))
        nondiff = iter(self.nondiff)
        return tuple(next(nondiff) if i in self.positions else next(diff) for i in range(self.n_args))

    def cotangent(self, g: Any, zeros: bool = True) -> Any:
        """The output cotangent in the output's structure (zeros, or None, for outputs that got no gradient)."""
        gs = list(g) if len(self.out) > 1 else [g]
        gs = [np.zeros_like(as_array(o)) if c is None and zeros else c for c, o in zip(gs, self.out)]
        return _pytree.unflatten(self.out_def, gs)


class _CustomVJP(OwnedPrimitive):
    """The primitive of a custom_vjp function: its forward hands back fwd's output, its rule calls bwd."""

    __slots__ = ()

    def vjp(self, argnum: int, g: Any, node: Any, lift: Any) -> Any:
        call = node.kw["call"]
        if call.cache is None or not _same(call.cache[0], g):
            owner = self.owner
            ct = call.cotangent(g, zeros=not owner.keeps_none)
            if lift is not None:
                # higher order: rerun fwd on the traced inputs, so the residuals (and bwd's result,
                # written with NumPy functions) depend on them; with the stored residuals the
                # gradient would be a constant and every further derivative silently 0
                _, residuals = owner.run_fwd(call.all_args(list(lift(node)[1])))
            else:  # first order: plain arrays in and out (an example's residuals under vmap may be Tensors)
                residuals, ct = _raw(call.residuals), _raw(ct)
            grads = owner.bwd(*call.nondiff, residuals, ct)
            grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
            if lift is None:
                grads = tuple(_raw(g) for g in grads)
                check_closure("custom_vjp", owner.fn, tuple(node.args or ()), _pytree.flatten(grads)[0], "bwd")
            n_diff = call.n_args - len(call.positions)
            if len(grads) != n_diff:  # JAX refuses it too: a gradient would land on the wrong argument
                skipped = " not counting nondiff_argnums" if call.positions else ""
                raise TypeError(f"custom_vjp {self.name}: bwd returned {len(grads)} gradient(s) for a call with "
                                f"{n_diff} argument(s){skipped}; return a tuple with one gradient per argument "
                                "(None for an argument with no gradient)")
            call.cache = (g, _grad_leaves(self.name, grads, call.diff_def, call.sizes,
                                          None if owner.keeps_none else 0.0))
        return call.cache[1][argnum]  # the sweep reduces it to the argument's shape and dtype

    def jvp(self, argnum: int, t: Any, ans: Any, args: Any, kw: dict[str, Any]) -> Any:
        owner = self.owner
        if owner.jvp is None:
            if owner.keeps_none:
                raise TypeError(f"autograd.Function {self.name}: no forward-mode rule; define a static "
                                "jvp(ctx, *input_tangents) (PyTorch's) to use it under jvp/jacfwd")
            if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
                raise TypeError(
                    f"custom_vjp {self.name}: forward mode (jvp, jacfwd) needs a forward rule, which a custom_vjp "
                    f"function lacks (JAX refuses jvp of one too); add one with {self.name}.defjvp(jvp), or use "
                    "reverse mode (grad, vjp, jacrev). Forward over reverse (jvp of grad, jacfwd of jacrev, "
                    "hessian) works: it differentiates fwd and bwd")
            return self._fwd_tangent(argnum, t, args, kw["call"])
        call = kw["call"]
        tangents = [t if i == argnum else np.zeros_like(as_array(a._data if isinstance(a, Tensor) else a))
                    for i, a in enumerate(args)]
        # ``args`` are Tensors when outer derivatives are being traced (then the rule is recorded too)
        if owner.keeps_none:  # autograd.Function: every argument, None for the tangent of one not differentiated
            every_t = call.all_args(tangents)
            out = owner.jvp(call.all_args(list(args)),
                            tuple(None if i in call.positions else t for i, t in enumerate(every_t)))
        else:
            diff = list(_pytree.unflatten(call.diff_def, list(args)))
            diff_t = list(_pytree.unflatten(call.diff_def, tangents))
            out = owner.jvp(tuple(diff), tuple(diff_t))
        leaves = _pytree.flatten(out)[0]
        return leaves[0] if self.n_outputs == 1 else tuple(leaves)

    def _fwd_tangent(self, argnum: int, t: Any, args: Any, call: _Call) -> Any:
        """The output's tangent by forward mode through ``fwd`` itself, as JAX's jvp of grad of a custom_vjp
        function differentiates fwd (and bwd, in the backward sweep): the values are those being recorded for an
        inner reverse pass."""
        from ..transforms.forward import jvp

        owner = self.owner

        def output(x: Any) -> Any:
            leaves = list(args)
            leaves[argnum] = x
            out, _ = owner.run_fwd(call.all_args(leaves))
            out_leaves = _pytree.flatten(out)[0]
            return out_leaves[0] if self.n_outputs == 1 else tuple(out_leaves)

        return jvp(output, (args[argnum],), (t,))[1]

    def has_vjp(self) -> bool:
        return True


def _raw(tree: Any) -> Any:
    """``tree`` with each Tensor leaf replaced by its array."""
    leaves, treedef = _pytree.flatten(tree)
    return _pytree.unflatten(treedef, [x._data if isinstance(x, Tensor) else x for x in leaves])


def _same(a: Any, b: Any) -> bool:
    """The same cotangent (the sweep hands one node's rule the same object for each argument)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b))
    return a is b


def _grad_leaves(name: str, grads: tuple[Any, ...], diff_def: Any, sizes: tuple[int, ...],
                 none: Any = 0.0) -> list[Any]:
    """bwd's gradients (one pytree per differentiated argument, ``sizes[k]`` leaves in argument k) as one
    gradient per argument leaf. As in JAX, a None anywhere in a gradient stands for zeros of that subtree
    (``none`` for each of its leaves: zero, or None, which the sweep reads as no gradient)."""
    args = _pytree.unflatten(diff_def, [0.0] * sum(sizes))  # the arguments' structure
    leaves: list[Any] = []
    for k, (grad, arg) in enumerate(zip(grads, args)):
        got = _laid_over(grad, arg, none)
        if got is None:
            raise TypeError(f"custom_vjp {name}: bwd's gradient for differentiated argument {k} has structure "
                            f"{_pytree.describe(_pytree.flatten(grad)[1])}, the argument "
                            f"{_pytree.describe(_pytree.flatten(arg)[1])}; give it the argument's structure "
                            "(None for zeros)")
        leaves.extend(got)
    return leaves


def _laid_over(grad: Any, arg: Any, none: Any = 0.0) -> list[Any] | None:
    """The leaves of ``grad`` for those of ``arg`` (``none`` for each under a None), or None if the structures
    differ."""
    if grad is None:
        return [none] * len(_pytree.flatten(arg)[0])
    arg_kids, arg_def = _pytree.flatten(arg, is_leaf=lambda x: x is not arg)  # one level: the children
    grad_kids, grad_def = _pytree.flatten(grad, is_leaf=lambda x: x is not grad)
    if arg_def[0] == "leaf" or grad_def[0] == "leaf":
        return [grad] if arg_def[0] == grad_def[0] else None
    if not _pytree.same_structure(arg_def, grad_def):
        return None
    leaves: list[Any] = []
    for g, a in zip(grad_kids, arg_kids):
        got = _laid_over(g, a, none)
        if got is None:
            return None
        leaves.extend(got)
    return leaves


def stop_gradient(x: Any) -> Any:
    """The value of ``x`` with no gradient (reverse or forward) flowing through it; ``x`` may be a tuple,
    list or dict of values (as JAX's ``lax.stop_gradient``), each leaf is stopped.

    Example:
        >>> import chainrule as cr
        >>> cr.grad(lambda x: x * cr.stop_gradient({"k": x})["k"])(3.0)
        3.0
    """
    leaves, treedef = _pytree.flatten(x)
    return _pytree.unflatten(treedef, [_stopped(leaf) for leaf in leaves])


def _stopped(x: Any) -> Any:
    if isinstance(x, Tensor):
        return Tensor._wrap(x._data)
    if hasattr(type(x), "__array_function__") and type(x) is not np.ndarray and not isinstance(x, np.generic):
        from ..batching.value import Batched  # a batched value under vmap: stop each example's part

        if isinstance(x, Batched):
            return Batched(_stopped(x.value), x.level)
    return x
