"""Primitives: a NumPy function plus its reverse (VJP) and forward (JVP) rules.

A rule is written once, with NumPy functions and operators, and runs two ways:

- on plain ndarrays, for a fast first-order backward pass;
- on :class:`~chainrule.Tensor` values (NumPy dispatches to chainrule through
  ``__array_ufunc__`` / ``__array_function__``), so the rule itself is recorded and
  gradients of gradients, and forward-over-reverse, come for free.

Rules have one shape: ``vjp(g, ans, *args, **kwargs)`` returns the gradient of one
argument given the output gradient ``g``; ``jvp(t, ans, *args, **kwargs)`` returns the
output tangent given one argument's tangent ``t``. Broadcasting is undone here, once, not
in each rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import state
from . import batching

Rule = Callable[..., Any]

REGISTRY: dict[str, Primitive] = {}


class Primitive:
    """A differentiable function. Call it like the NumPy function it wraps.

    Example:
        >>> import numpy as np
        >>> from chainrule.autodiff.primitive import Primitive
        >>> cube = Primitive("cube", lambda x: x**3)
        >>> cube.defvjp(lambda g, ans, x: g * 3 * x**2)
        >>> cube.defjvp(lambda t, ans, x: t * 3 * x**2)
        >>> from chainrule import Tensor
        >>> x = Tensor(2.0, requires_grad=True)
        >>> cube(x).backward(); float(x.grad)
        12.0
    """

    __slots__ = ("name", "fn", "vjps", "jvps", "vjp_argnum", "jvp_argnum", "doc", "first_order_only", "real_only")

    def __init__(self, name: str, fn: Callable[..., Any], register: bool = True) -> None:
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
        if register:
            REGISTRY[name] = self

    def __repr__(self) -> str:
        return f"<chainrule primitive {self.name}>"

    # -- defining rules ------------------------------------------------------------
    def defvjp(self, *rules: Rule | None) -> None:
        """One reverse rule per positional argument (None: not differentiable)."""
        self.vjps = rules

    def defjvp(self, *rules: Rule | None) -> None:
        """One forward rule per positional argument (None: not differentiable)."""
        self.jvps = rules

    def defvjp_argnum(self, rule: Rule) -> None:
        """A reverse rule ``rule(argnum, g, ans, *args)`` for ops with any number of args."""
        self.vjp_argnum = rule

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

    def _check_real(self, values: Any) -> None:
        for v in values:
            if getattr(v, "dtype", None) is not None and v.dtype.kind == "c":
                raise TypeError(
                    f"{self.name}: the derivative is not defined for complex inputs ({self.real_only}); got dtype "
                    f"{v.dtype}. Differentiate a real function of the real and imaginary parts (np.real, np.imag, "
                    "np.abs) instead"
                )

    def vjp(self, argnum: int, g: Any, node: Any, create_graph: bool) -> Any:
        """Gradient for argument ``argnum`` of ``node`` given its output gradient ``g``."""
        if self.real_only is not None:
            self._check_real((*node._raw, node.data))
        rules = self.vjps
        rule = rules[argnum] if argnum < len(rules) else None
        if rule is None:
            rule = self._rule(rules, self.vjp_argnum, argnum, "reverse")
        kw = node._kw
        if create_graph:
            if self.first_order_only:
                raise _second_order(self.name)
            out = rule(g, node, *node._args, **kw) if kw else rule(g, node, *node._args)
        else:  # the NumPy values seen in the forward pass
            out = rule(g, node.data, *node._raw, **kw) if kw else rule(g, node.data, *node._raw)
        x = node._raw[argnum]
        if out.__class__ is np.ndarray and out.shape == x.shape and out.dtype is x.dtype:
            return out
        if out.__class__ is SliceGrad:  # already x's shape and dtype (see getitem's rule); the engine densifies
            return out
        try:
            return fit(out, np.shape(x), np.result_type(x))
        except ValueError:
            raise ValueError(
                f"{self.name}: the reverse rule for argument {argnum} returned a gradient of shape "
                f"{np.shape(out)} for an input of shape {np.shape(x)}; fix the rule"
            ) from None

    def jvp(self, argnum: int, t: Any, ans: Any, args: Any, kw: dict[str, Any]) -> Any:
        if self.real_only is not None:
            self._check_real([a.data if isinstance(a, Tensor) else a for a in (*args, ans)])
        if self.first_order_only and (isinstance(t, Tensor) or any(isinstance(a, Tensor) for a in args)):
            raise _second_order(self.name)  # traced: an outer derivative would differentiate this rule
        rule = self._rule(self.jvps, self.jvp_argnum, argnum, "forward")
        return rule(t, ans, *args, **kw) if kw else rule(t, ans, *args)


def _second_order(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"{name}: its derivative rules are exact at first order only (first_order_only=True), so a derivative of "
        "second or higher order through it is not available; give it rules written with NumPy functions on their "
        "arguments (they are then recorded and differentiable again), or differentiate it once only"
    )


def fit(g: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """Sum a gradient over broadcast axes (or broadcast it) to ``shape``, in ``dtype``.

    A complex gradient for a real input keeps its real part (JAX's rule: the real input's
    perturbations only reach the real part of the pairing ``real(g * t)``).

    Raises ValueError when ``g`` is neither broadcast from nor broadcastable to ``shape``
    (a rule that returned the wrong shape must not give a silently wrong gradient).
    """
    if not isinstance(g, (Tensor, np.ndarray)):
        g = np.asarray(g)
    gshape = g.shape
    if gshape != shape:
        lead = len(gshape) - len(shape)
        if lead >= 0:
            axes = tuple(range(lead)) + tuple(
                i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1
            )
            if axes:
                g = g.sum(axis=axes)
        if g.shape != shape:
            if tuple(n for n in g.shape if n != 1) == tuple(n for n in shape if n != 1):
                g = g.reshape(shape)  # only size-1 axes differ (e.g. kept reduced axes)
            else:
                g = np.broadcast_to(g, shape)  # raises for shapes that don't fit
    if isinstance(g, Tensor):
        if g.data.dtype == dtype:
            return g
        if g.data.dtype.kind == "c" and np.dtype(dtype).kind != "c":
            g = np.real(g)  # a differentiable real part
        return g if g.data.dtype == dtype else g.astype(dtype)
    if g.dtype != dtype:
        if g.dtype.kind == "c" and np.dtype(dtype).kind != "c":
            g = g.real
        return np.asarray(g, dtype=dtype)
    return g if type(g) is np.ndarray else np.asarray(g)


def apply(prim: Primitive, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """Run ``prim`` on ``args``: NumPy values in, NumPy out; a Tensor anywhere, a Tensor out."""
    if batching.open and batching.batched_in(args, kw):  # inside vmap: the op's batching rule
        return batching.dispatch(prim, args, kw)
    vals = []
    parents = []
    tensors = False
    i = 0
    for a in args:
        if isinstance(a, Tensor):
            tensors = True
            vals.append(a.data)
            if a._rg:
                parents.append((i, a))
        else:
            vals.append(a)
        i += 1
    try:
        data = prim.fn(*vals, **kw) if kw else prim.fn(*vals)
    except (TypeError, ValueError) as e:
        raise _explain(prim, args, vals, e) from None
    if data is None:  # NumPy computed nothing (e.g. np.sum(None))
        raise _explain(prim, args, vals, TypeError(f"{prim.name}: no result"))
    if not tensors:
        return data
    if data.__class__ is not np.ndarray:
        data = np.asarray(data)
    out = _new(Tensor)  # Tensor._wrap, inlined: this is the hottest path
    out.data = data
    out.grad = out.label = out._prim = out._tangents = None
    out._rg = out._retain = False
    out._parents = ()
    out._version = 0
    out._stamp = _tick()
    if parents and _grad_enabled():
        out._rg = True
        out._prim = prim
        out._args = args
        out._raw = vals
        out._kw = kw
        out._parents = tuple(parents)
    if _forward_levels():
        _propagate_tangents(prim, out, args, kw)
    return out


def _explain(prim: Primitive, args: tuple[Any, ...], vals: list[Any], e: Exception) -> Exception:
    """A clearer error for a failed forward computation: a wrong type, or shapes that don't fit."""
    for i, a in enumerate(args):
        if isinstance(a, Scalar):
            return TypeError(
                f"{prim.name}: argument {i} is a Scalar; Scalars and Tensors do not mix in one graph: "
                "use Tensor(s.data, requires_grad=True), or a Scalar-only expression"
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


def _propagate_tangents(prim: Primitive, out: Tensor, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
    levels = set()
    for a in args:
        if isinstance(a, Tensor) and a._tangents:
            levels.update(lv for lv in a._tangents if state.visible(lv))
    if not levels:
        return
    out._tangents = {}
    for level in sorted(levels):
        with state.below(level):
            traced = any(
                isinstance(a, Tensor)
                and (
                    (a._rg and _grad_enabled())
                    or _has_visible_tangent(a)
                    or _has_visible_tangent(a._tangents.get(level) if a._tangents else None)
                )
                for a in args
            )
            if traced:
                vals, ans = args, out
            else:
                vals, ans = [a.data if isinstance(a, Tensor) else a for a in args], out.data
            total = None
            for argnum, a in enumerate(args):
                if not isinstance(a, Tensor) or not a._tangents:
                    continue
                t = a._tangents.get(level)
                if t is None:
                    continue
                if not traced and isinstance(t, Tensor):
                    t = t.data
                part = prim.jvp(argnum, t, ans, vals, kw)
                total = part if total is None else total + part
            out._tangents[level] = fit(total, out.data.shape, out.data.dtype)


def _has_visible_tangent(x: Any) -> bool:
    return isinstance(x, Tensor) and bool(x._tangents) and state.any_visible(x._tangents)


from ..scalar import Scalar  # noqa: E402
from ..tensor import Tensor, _tick  # noqa: E402  (Tensor's methods call primitives; import last)
from .sparse import SliceGrad  # noqa: E402

_new = object.__new__
_grad_enabled = state.grad_enabled
_forward_levels = state.forward_levels
