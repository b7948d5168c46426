"""``chainrule.autograd.Function``: PyTorch's way of writing an op with its own backward, on top of ``custom_vjp``.

Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)`` and call ``F.apply(...)``
(or PyTorch's other form: ``forward(*args)`` without ctx, and ``setup_context(ctx, inputs, output)``).
Tensor arguments are differentiated; any other argument (a number, a flag, None) is passed through and must get
``None`` from ``backward``, as in PyTorch. ``forward`` may return values that are not Tensors (a number, None, a
string) beside its Tensors: they are handed back as they are, and ``backward`` gets None for them. ``forward`` sees
Tensors that record nothing (PyTorch runs it under ``no_grad``); ``backward`` gets and returns Tensors, None
meaning no gradient for that input (its ``.grad`` stays None, as in PyTorch). Write ``backward`` with Tensor
operations and higher derivatives (``create_graph=True``, ``cr.grad(cr.grad(f))``) follow it, since for them
``forward`` is run again on the traced inputs, so what ``save_for_backward`` kept depends on them.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
from typing import Any

import numpy as np

from ..autodiff.primitive import Primitive, apply
from ..core.state import grad_enabled, no_grad
from ..tensor import Tensor
from . import custom_vjp


class FunctionCtx:
    """The ``ctx`` handed to ``forward`` and ``backward``: ``save_for_backward``, ``saved_tensors``,
    ``needs_input_grad``, ``mark_non_differentiable``, ``set_materialize_grads``, and any attribute you set on
    it in ``forward``."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self.saved_tensors: tuple[Any, ...] = ()
        self.materialize_grads = True
        self.non_differentiable: list[Any] = []

    @property
    def saved_variables(self) -> tuple[Any, ...]:
        """PyTorch's old name of ``saved_tensors`` (deprecated there too)."""
        warnings.warn("autograd.Function: ctx.saved_variables is deprecated; use ctx.saved_tensors", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep Tensors (or None) for ``backward`` as ``ctx.saved_tensors``."""
        self.saved_tensors = tuple(tensors)

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep Tensors (or None) for ``jvp`` (there ``ctx.saved_tensors``), as PyTorch's."""
        self.saved_for_forward = tuple(tensors)

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """These outputs of ``forward`` get no gradient: they come back with ``requires_grad=False`` (as
        PyTorch's); ``backward`` still gets a gradient slot for each (zeros)."""
        self.non_differentiable.extend(tensors)

    def mark_dirty(self, *tensors: Any) -> None:
        """Accepted for PyTorch code: ``forward`` runs on Tensors that record nothing, so an input it changed in
        place is only a changed value here (a graph that saved the old one raises at its backward)."""

    def set_materialize_grads(self, value: bool) -> None:
        """``False``: ``backward`` gets None, not zeros, for an output that received no gradient (PyTorch's)."""
        self.materialize_grads = bool(value)


def once_differentiable(backward: Any) -> Any:
    """PyTorch's ``torch.autograd.function.once_differentiable``: ``backward`` runs under ``no_grad`` on plain
    Tensors; a gradient it gives with ``create_graph=True`` can be used, but differentiating it again raises.

    Example:
        >>> import chainrule as cr
        >>> from chainrule.autograd.function import once_differentiable
        >>> class Square(cr.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     @once_differentiable
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * g
        >>> x = cr.Tensor(3.0, requires_grad=True)
        >>> float(cr.autograd.grad(Square.apply(x), x)[0])
        6.0
    """

    @functools.wraps(backward)
    def run(ctx: Any, *grads: Any) -> Any:
        with no_grad():
            return backward(ctx, *(g.detach() if isinstance(g, Tensor) else g for g in grads))

    run.once_differentiable = True  # type: ignore[attr-defined]
    return run


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

    _rules: dict[tuple[int, tuple[int, ...]], Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not _static_forward(type(self)):
            raise RuntimeError(
                f"autograd.Function {type(self).__name__}: forward is not a staticmethod. Legacy autograd function "
                "with non-static forward method is deprecated (and removed in PyTorch): write @staticmethod "
                "forward(ctx, ...) and backward(ctx, ...) and call the class's apply(...)")

    def __call__(self, *args: Any) -> Any:
        raise RuntimeError(f"autograd.Function {type(self).__name__}: call {type(self).__name__}.apply(...), not an "
                           "instance (Legacy autograd function with non-static forward method is deprecated)")

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any) -> Any:
        raise NotImplementedError("autograd.Function: define a static forward(ctx, *args) in your subclass")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple[Any, ...], output: Any) -> None:
        raise NotImplementedError("autograd.Function: setup_context is only used with forward(*args) without ctx")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("autograd.Function: define a static backward(ctx, *grad_outputs) in your subclass")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        """Run ``forward`` on ``args`` and record it so that the gradient comes from ``backward``."""
        if "forward" not in _defined(cls):
            raise NotImplementedError(f"autograd.Function {cls.__name__}: You must implement the forward function "
                                      "for custom autograd.Function (a static forward(ctx, *args))")
        if not _static_forward(cls):
            cls()  # raises PyTorch's error for a legacy (non-static) forward
        nondiff = tuple(i for i, a in enumerate(args) if not isinstance(a, Tensor))
        traced = grad_enabled() and any(isinstance(a, Tensor) and a.requires_grad for a in args)
        if len(nondiff) == len(args) or not traced:  # nothing to differentiate: a plain call (no_grad, as forward)
            ctx = FunctionCtx(tuple(False for _ in args))
            with no_grad():
                return _forward(cls, ctx, args)
        rules = cls.__dict__.get("_rules")
        if rules is None:
            rules = {}
            cls._rules = rules
        key = (len(args), nondiff)  # (a forward taking *args is called with different numbers of them)
        if key not in rules:
            rules[key] = _Rule(cls, len(args), nondiff)
        return rules[key](args)


def _static_forward(cls: type) -> bool:
    """Is the subclass's forward a staticmethod or a classmethod (not a legacy instance method)?"""
    for c in cls.__mro__:
        if "forward" in c.__dict__:
            return isinstance(c.__dict__["forward"], (staticmethod, classmethod))
    return False


def _forward(cls: type[Function], ctx: FunctionCtx, args: Any) -> Any:
    """``forward`` in either of PyTorch's forms (with ctx; or without, then ``setup_context``, which gets every
    input, the defaults of those not passed included)."""
    if "setup_context" in _defined(cls):
        out = cls.forward(*args)
        try:
            bound = inspect.signature(cls.forward).bind(*args)
            bound.apply_defaults()
            inputs = bound.args
        except (TypeError, ValueError):  # (a signature inspect cannot read: the arguments as passed)
            inputs = tuple(args)
        cls.setup_context(ctx, tuple(inputs), out)
        return out
    return cls.forward(ctx, *args)


def _backward_of(cls: type[Function]) -> Any:
    """``backward``, or its other name ``vjp``: the one the subclass defines (PyTorch's rules)."""
    defined = _defined(cls)
    if "backward" in defined and "vjp" in defined:
        raise RuntimeError(f"autograd.Function {cls.__name__}: Implementing both 'backward' and 'vjp' for a custom "
                           "Function is not allowed. You should only implement one of them.")
    if "vjp" in defined:
        return cls.vjp  # type: ignore[attr-defined]
    if "backward" not in defined:
        raise NotImplementedError(f"autograd.Function {cls.__name__}: You must implement either the backward or vjp "
                                  "method (a static backward(ctx, *grad_outputs) returning one gradient per forward "
                                  "input)")
    return cls.backward


def _defined(cls: type) -> set[str]:
    return {name for c in cls.__mro__ if c is not Function and c is not object for name in c.__dict__}


class _Rule:
    """The custom_vjp behind one Function for calls of one shape (number of arguments, which are Tensors).

    The custom_vjp sees the Tensor outputs only; ``layout`` says where the others were and what they were.
    """

    def __init__(self, cls: type[Function], n_args: int, nondiff: tuple[int, ...]) -> None:
        self.cls, self.n_args, self.nondiff = cls, n_args, nondiff
        # this thread's call in progress: .needs (needs_input_grad), .layout (the forward's: single, n outputs,
        # {position: non-Tensor value}, ctx), dropped once read so no ctx (and its saved tensors) is kept here
        self.call = threading.local()

        def fn(*args: Any) -> Any:
            return self._run(*args)[0]

        fn.__name__ = fn.__qualname__ = cls.__name__
        self.rule = custom_vjp(fn, nondiff_argnums=nondiff)
        self.rule.defvjp(self._run, self._bwd)
        self.rule.keeps_none = True  # None means no gradient (PyTorch's), both ways: see _bwd
        if "jvp" in _defined(cls):  # forward mode (jvp, jacfwd, hessian) through PyTorch's static jvp(ctx, ...)
            self.rule.defjvp(self._jvp)

    def __call__(self, args: tuple[Any, ...]) -> Any:
        self.call.needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        results = self.rule(*args)
        single, n, others, ctx = self.call.layout
        self.call.layout = None
        tensors = [results] if not isinstance(results, tuple) else list(results)
        full, k = [], 0
        for i in range(n):
            if i in others:
                full.append(others[i][0])
            else:
                t = tensors[k]
                if others.get(("nd", i)) and isinstance(t, Tensor):
                    t = t.detach()  # marked non-differentiable
                full.append(full[others[("same", i)]] if ("same", i) in others else t)
                k += 1
        return full[0] if single else tuple(full)

    def _run(self, *args: Any) -> tuple[Any, Any]:
        ctx = FunctionCtx(getattr(self.call, "needs", ()))
        wrapped = [a if i in self.nondiff else _as_tensor(a) for i, a in enumerate(args)]
        ctx.inputs = wrapped  # (for once_differentiable's error node under create_graph)
        out = _forward(self.cls, ctx, wrapped)
        single = not isinstance(out, (tuple, list))
        outs = [out] if single else list(out)
        marked = {id(t) for t in ctx.non_differentiable}
        others: dict[Any, Any] = {}
        tensors = []
        first: dict[int, int] = {}
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) or isinstance(o, np.ndarray):
                if id(o) in first:  # the same Tensor twice: one output object, as PyTorch gives
                    others[("same", i)] = first[id(o)]
                first.setdefault(id(o), i)
                tensors.append(o)
                if id(o) in marked:
                    others[("nd", i)] = True
            else:
                others[i] = (o,)
        if not tensors:
            raise TypeError(f"autograd.Function {self.cls.__name__}: forward returned no Tensor; return at least one")
        ctx.layout = (single, len(outs), others)
        ctx.tensor_outputs = tensors
        self.call.layout = (single, len(outs), others, ctx)
        return (tensors[0] if len(tensors) == 1 else tuple(tensors)), ctx

    def _jvp(self, primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
        """The custom_vjp's forward rule: ``forward`` on ``primals`` for the ctx, then the subclass's ``jvp``."""
        _, ctx = self._run(*primals)
        ctx.saved_tensors = getattr(ctx, "saved_for_forward", ())
        single, n, others = ctx.layout
        result = self.cls.jvp(ctx, *[_as_tensor(t) for t in tangents])  # type: ignore[attr-defined]
        result = list(result) if isinstance(result, (tuple, list)) else [result]
        if len(result) == n:  # one per output, None for a non-Tensor one: keep the Tensor outputs' own
            result = [r for i, r in enumerate(result) if i not in others]
        first_order = not any(isinstance(t, Tensor) for t in tangents)
        out = [np.zeros_like(np.asarray(o._data if isinstance(o, Tensor) else o)) if r is None
               else r._data if first_order and isinstance(r, Tensor) else r
               for r, o in zip(result, ctx.tensor_outputs)]
        return out[0] if len(out) == 1 else tuple(out)

    def _bwd(self, *rest: Any) -> tuple[Any, ...]:
        cls, name = self.cls, self.cls.__name__
        ctx, g = rest[-2], rest[-1]
        single, n, others = ctx.layout
        gs = list(g) if isinstance(g, (tuple, list)) else [g]
        traced = any(isinstance(x, Tensor) for x in gs)
        tensor_outs = [i for i in range(n) if i not in others]
        full: list[Any] = [None] * n
        for i, x in zip(tensor_outs, gs):
            full[i] = _as_tensor(x)
        if ctx.materialize_grads:  # zeros for an output that got no gradient (PyTorch's default)
            for i, x in zip(tensor_outs, ctx.tensor_outputs):
                if full[i] is None:
                    full[i] = Tensor(np.zeros_like(np.asarray(x._data if isinstance(x, Tensor) else x)))
        backward = _backward_of(cls)
        grads = backward(ctx, *full)
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        if len(grads) > self.n_args and all(g is None for g in grads[self.n_args:]):
            grads = grads[:self.n_args]  # extra Nones at the end are allowed (PyTorch's)
        if len(grads) != self.n_args:
            raise TypeError(f"autograd.Function {name}: backward returned {len(grads)} gradient(s) for "
                            f"{self.n_args} forward input(s); return one per input of forward (None for a non-Tensor "
                            "one)")
        for i in self.nondiff:
            if grads[i] is not None:
                raise TypeError(f"autograd.Function {name}: backward returned a gradient at position {i}, but that "
                                "forward input is not a Tensor; return None there (or pass a Tensor to differentiate)")
        out = [x for i, x in enumerate(grads) if i not in self.nondiff]
        if getattr(backward, "once_differentiable", False) and any(isinstance(x, Tensor) and x.requires_grad
                                                                   for x in gs):  # (PyTorch's condition)
            inputs = [a for i, a in enumerate(ctx.inputs) if i not in self.nondiff]
            return tuple(None if x is None else _once(name, x, inputs) for x in out)
        return tuple(x._data if not traced and isinstance(x, Tensor) else x for x in out)


def _once_fn(g: Any, *inputs: Any) -> Any:
    return g


def _once_error(name: str) -> Any:
    def rule(argnum: int, g: Any, ans: Any, *args: Any) -> Any:
        raise RuntimeError(f"autograd.Function {name}: trying to differentiate twice a function that was marked with "
                           "@once_differentiable; remove the decorator and write backward with Tensor operations "
                           "to get higher derivatives")
    return rule


_ONCE: dict[str, Primitive] = {}


def _once(name: str, grad: Any, inputs: list[Any]) -> Any:
    """A gradient given by a ``@once_differentiable`` backward under ``create_graph``: its value, linked to the
    Function's inputs so that differentiating it again reaches a node that raises (PyTorch's)."""
    prim = _ONCE.get(name)
    if prim is None:
        prim = _ONCE[name] = Primitive(f"{name}_once_differentiable", _once_fn, register=False)
        prim.defvjp_argnum(_once_error(name))
    value = grad._data if isinstance(grad, Tensor) else np.asarray(grad)
    return apply(prim, (value, *inputs), None)
