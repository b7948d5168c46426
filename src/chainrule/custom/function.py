"""``chainrule.autograd.Function``: PyTorch's way of writing an op with its own backward, on top of ``custom_vjp``.

Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)`` and call ``F.apply(...)``.
Tensor arguments are differentiated; any other argument (a number, a flag, None) is passed through and must get
``None`` from ``backward``, as in PyTorch. ``forward`` sees Tensors that record nothing (PyTorch runs it under
``no_grad``); ``backward`` gets and returns Tensors. Write ``backward`` with Tensor operations and higher
derivatives (``create_graph=True``, ``cr.grad(cr.grad(f))``) follow it, since for them ``forward`` is run again on
the traced inputs, so what ``save_for_backward`` kept depends on them.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import custom_vjp


class FunctionCtx:
    """The ``ctx`` handed to ``forward`` and ``backward``: ``save_for_backward``, ``saved_tensors``,
    ``needs_input_grad``, and any attribute you set on it in ``forward``."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self.saved_tensors: tuple[Any, ...] = ()

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep Tensors (or None) for ``backward`` as ``ctx.saved_tensors``."""
        self.saved_tensors = tuple(tensors)

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Accepted for PyTorch code; chainrule gives such outputs' cotangents as zeros, which backward may ignore."""

    def set_materialize_grads(self, value: bool) -> None:
        """Accepted for PyTorch code; missing output gradients always arrive as zeros here."""


def _as_tensor(x: Any) -> Any:
    # first-order calls hand fwd/bwd plain arrays: wrap them (recording nothing) so Tensor methods work;
    # traced Tensors (higher order) are kept as they are, so the graph goes on through them
    return x if isinstance(x, Tensor) or x is None or not hasattr(x, "dtype") else Tensor(x)


class Function:
    """PyTorch's ``torch.autograd.Function``: an op with a hand-written backward.

    Example:
        >>> import chainrule as cr
        >>> class Cube(cr.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x, scale):
        ...         ctx.save_for_backward(x)
        ...         ctx.scale = scale
        ...         return scale * x ** 3
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return 3 * ctx.scale * x ** 2 * g, None
        >>> x = cr.Tensor([1.0, 2.0], requires_grad=True)
        >>> Cube.apply(x, 2.0).sum().backward()
        >>> x.grad.tolist()
        [6.0, 24.0]
    """

    _rules: dict[tuple[int, tuple[int, ...]], custom_vjp]

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any) -> Any:
        raise NotImplementedError("autograd.Function: define a static forward(ctx, *args) in your subclass")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("autograd.Function: define a static backward(ctx, *grad_outputs) in your subclass")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        """Run ``forward`` on ``args`` and record it so that the gradient comes from ``backward``."""
        nondiff = tuple(i for i, a in enumerate(args) if not isinstance(a, Tensor))
        if len(nondiff) == len(args):  # nothing to differentiate: a plain call
            return cls.forward(FunctionCtx((False,) * len(args)), *args)
        rules = cls.__dict__.get("_rules")
        if rules is None:
            rules = {}
            cls._rules = rules
        key = (len(args), nondiff)  # (a forward taking *args is called with different numbers of them)
        if key not in rules:
            rules[key] = _make_rule(cls, len(args), nondiff)
        return rules[key](*args)


def _make_rule(cls: type[Function], n_args: int, nondiff: tuple[int, ...]) -> custom_vjp:
    name = cls.__name__
    needs = tuple(i not in nondiff for i in range(n_args))

    def run(*args: Any) -> tuple[Any, FunctionCtx]:
        ctx = FunctionCtx(needs)
        wrapped = [a if i in nondiff else _as_tensor(a) for i, a in enumerate(args)]
        return cls.forward(ctx, *wrapped), ctx

    def fn(*args: Any) -> Any:
        return run(*args)[0]

    fn.__name__ = fn.__qualname__ = name

    def bwd(*rest: Any) -> tuple[Any, ...]:
        ctx, g = rest[-2], rest[-1]
        gs = [_as_tensor(x) for x in g] if isinstance(g, (tuple, list)) else [_as_tensor(g)]
        grads = cls.backward(ctx, *gs)
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        if len(grads) != n_args:
            raise TypeError(f"autograd.Function {name}: backward returned {len(grads)} gradient(s) for "
                            f"{n_args} forward input(s); return one per input of forward (None for a non-Tensor one)")
        for i in nondiff:
            if grads[i] is not None:
                raise TypeError(f"autograd.Function {name}: backward returned a gradient at position {i}, but that "
                                "forward input is not a Tensor; return None there (or pass a Tensor to differentiate)")
        out = [g for i, g in enumerate(grads) if i not in nondiff]
        first_order = not isinstance(g, Tensor) and not (isinstance(g, (tuple, list)) and
                                                         any(isinstance(x, Tensor) for x in g))
        return tuple(x._data if first_order and isinstance(x, Tensor) else x for x in out)

    rule = custom_vjp(fn, nondiff_argnums=nondiff)
    rule.defvjp(run, bwd)
    return rule
