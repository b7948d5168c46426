"""Your own differentiable functions: ``primitive``, ``custom_vjp``; and ``stop_gradient``, ``checkpoint``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ._checkpoint import checkpoint  # noqa: F401  (re-exported: chainrule.checkpoint)
from .autodiff.primitive import Primitive, apply
from .tensor import Tensor


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

    ``fwd(*args) -> (out, residuals)`` runs on NumPy arrays; ``bwd(residuals, g)`` returns
    one gradient per argument. An optional ``defjvp(jvp)`` with
    ``jvp(primals, tangents) -> tangent_out`` enables forward mode.

    Example:
        >>> import numpy as np, chainrule as cr
        >>> @cr.custom_vjp
        ... def clip_grad_norm(x):
        ...     return x
        >>> clip_grad_norm.defvjp(lambda x: (x, None), lambda res, g: (np.clip(g, -1, 1),))
        >>> cr.grad(lambda x: 5 * clip_grad_norm(x))(2.0)
        1.0
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.jvp: Callable[..., Any] | None = None
        self.primitive = _CustomVJP(self)  # one for every call: each call's residuals live on its node
        functools.update_wrapper(self, fn)

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        self.fwd, self.bwd = fwd, bwd

    def defjvp(self, jvp: Callable[..., Any]) -> None:
        self.jvp = jvp

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None or self.bwd is None:
            raise TypeError(f"custom_vjp {self.fn.__name__}: call defvjp(fwd, bwd) before using it")
        raw = [a.data if isinstance(a, Tensor) else a for a in args]
        out, residuals = self.fwd(*raw)
        return apply(self.primitive, args, {"call": _Call(out, residuals)})


class _Call:
    """One call of a custom_vjp function: its output, its residuals and the gradients of one backward step.

    Kept in the call's graph node (its keyword arguments), so it goes with the node.
    """

    __slots__ = ("out", "residuals", "cache")
    per_call = True  # jit cannot replay it: the residuals belong to the traced call

    def __init__(self, out: Any, residuals: Any) -> None:
        self.out, self.residuals, self.cache = out, residuals, None

    def for_example(self, pick: Callable[[Any], Any]) -> _Call:
        """This call's part for one example of a vmap batch (``pick`` takes it from a batched value)."""

        def part(x: Any) -> Any:
            if isinstance(x, dict):
                return {k: part(v) for k, v in x.items()}
            if isinstance(x, (tuple, list)):
                return type(x)(part(v) for v in x)
            return pick(x)

        out = part(self.out)  # the forward value: plain arrays (under vmap of grad an example's part is traced)
        return _Call(out.data if isinstance(out, Tensor) else out, part(self.residuals))


class _CustomVJP(Primitive):
    """The primitive of a custom_vjp function: its forward hands back fwd's output, its rule calls bwd."""

    __slots__ = ("owner",)

    def __init__(self, owner: custom_vjp) -> None:
        super().__init__(owner.fn.__name__, lambda *a, call: call.out, register=False)
        self.owner = owner

    def vjp(self, argnum: int, g: Any, node: Any, lift: Any) -> Any:
        call = node.kw["call"]
        if call.cache is None or call.cache[0] is not g:
            if lift is not None:
                # higher order: rerun fwd on the traced inputs, so the residuals (and bwd's result,
                # written with NumPy functions) depend on them; with the stored residuals the
                # gradient would be a constant and every further derivative silently 0
                _, residuals = self.owner.fwd(*lift(node)[1])
                grads = self.owner.bwd(residuals, g)
            else:
                grads = self.owner.bwd(call.residuals, g.data if isinstance(g, Tensor) else g)
            grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
            if len(grads) != len(node.args):  # JAX refuses it too: a gradient would land on the wrong argument
                raise TypeError(f"custom_vjp {self.name}: bwd returned {len(grads)} gradient(s) for a call with "
                                f"{len(node.args)} argument(s); return a tuple with one gradient per argument "
                                "(None for an argument with no gradient)")
            call.cache = (g, grads)
        return call.cache[1][argnum]  # the sweep reduces it to the argument's shape and dtype

    def jvp(self, argnum: int, t: Any, ans: Any, args: Any, kw: dict[str, Any]) -> Any:
        if self.owner.jvp is None:
            raise TypeError(f"custom_vjp {self.name}: no forward rule; add one with defjvp(jvp)")
        tangents = [t if i == argnum else np.zeros_like(np.asarray(a.data if isinstance(a, Tensor) else a))
                    for i, a in enumerate(args)]
        # ``args`` are Tensors when outer derivatives are being traced (then the rule is recorded too)
        return self.owner.jvp(tuple(args), tuple(tangents))

    def has_vjp(self) -> bool:
        return True


def stop_gradient(x: Any) -> Any:
    """The value of ``x`` with no gradient (reverse or forward) flowing through it."""
    return Tensor._wrap(x.data) if isinstance(x, Tensor) else x
