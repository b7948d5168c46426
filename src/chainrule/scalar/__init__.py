"""``Scalar``: the tutorials' object, one Python float per node, built for speed.

Every node stores its parents and, for each parent, the local derivative
d(node)/d(parent) as a number (seed 000's ``local_derivatives``). The backward pass is
then one loop: ``parent.grad += node.grad * local``, in reverse topological order,
found without recursion.

The local derivatives come from one table, :mod:`chainrule.scalar.rules`: each rule is
evaluated on floats when a node is built (first order, fast) and on Scalars by
``backward(create_graph=True)`` (higher orders). A node's ``_op`` is its rule.

Scalar keeps its own walk instead of the Tensor engine's (:mod:`chainrule.core.sweep`):
that engine asks each node for a tuple of ``(argnum, parent)`` pairs and calls its
primitive's ``vjp`` once per edge, where a Scalar keeps up to two parents in slots (no tuple
per node) and its sweep is one inlined multiply-add per edge. Nodes in the engine's form ran
the same graph 1.3-1.7x slower when measured, and carry a tuple more per node.

micrograd programs run unchanged with ``from chainrule import Scalar as Value``.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Iterable
from numbers import Real
from operator import attrgetter
from typing import Any, Union

from ..core import drawing
from .number import NumberSpellings
from .rules import (
    ABS,
    ADD,
    ADD_NUMBER,
    COS,
    DIV,
    DIV_NUMBER,
    EXP,
    FLOATS,
    LOG,
    MUL,
    MUL_NUMBER,
    NEG,
    NUMBER_SUB,
    POLE,
    POW,
    RELU,
    SCALARS,
    SIGMOID,
    SIN,
    SQRT,
    SUB,
    SUB_NUMBER,
    TAN,
    TANH,
    ScalarOp,
    base_to,
    float_cos,
    float_log,
    float_power,
    float_relu,
    float_sigmoid,
    float_sin,
    float_sqrt,
    float_tan,
    power_of,
)
from .rules import float_exp as _exp

Number = Union[int, float]


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        if getattr(value, "requires_grad", False):  # a Tensor: its gradient would be dropped silently
            raise TypeError(
                f"Scalar: argument '{name}' is a Tensor that requires grad; Scalar and Tensor graphs do not "
                "connect, so its gradient would be lost. Use Tensors throughout, or pass .item() for a constant"
            )
        if hasattr(value, "item") and getattr(value, "size", None) == 1:
            return float(value.item())
        hint = f" ({value}); pass float({value}) if you mean {float(value)}" if isinstance(value, bool) else ""
        raise TypeError(f"Scalar: argument '{name}' must be a real number, got {type(value).__name__}{hint}")
    return float(value)


def scalar_function(
    op: ScalarOp, value_of: Callable[[float], float], what: str, name: str = ""
) -> Callable[[Scalar], Scalar]:
    """The method for a function of one Scalar: its value, and its local derivative from ``op``'s rule."""
    derivative = op.derivative
    assert derivative is not None

    def method(self: Scalar) -> Scalar:
        x = self.data
        y = value_of(x)
        return _unary(y, self, derivative(x, y, None, FLOATS), op)

    method.__name__ = name or str(op)
    method.__qualname__ = f"Scalar.{method.__name__}"
    method.__doc__ = f"{what}, as a new node (op {str(op)!r})."
    return method


# the hottest rules, bound once (a module attribute lookup less per node)
_d_mul, _d_mul_number = MUL.derivative, MUL_NUMBER.derivative
# The rules of + and - read none of their inputs (the calls below pass none): evaluated once,
# not per node.
_ADD_DA, _ADD_DB = ADD.derivative(None, None, None, FLOATS)
_SUB_DA, _SUB_DB = SUB.derivative(None, None, None, FLOATS)
_ADD_NUMBER_LOCAL = ADD_NUMBER.derivative(None, None, None, FLOATS)
_SUB_NUMBER_LOCAL = SUB_NUMBER.derivative(None, None, None, FLOATS)
_NUMBER_SUB_LOCAL = NUMBER_SUB.derivative(None, None, None, FLOATS)


class ScalarMethods:
    """Scalar methods generated from op declarations that give a Scalar twin (``chainrule.ops.declare``)."""

    __slots__ = ()


class Scalar(ScalarMethods, NumberSpellings):
    """A number that remembers how it was computed, for reverse-mode differentiation.

    Example:
        >>> from chainrule import Scalar
        >>> a, b = Scalar(1.0, label="a"), Scalar(2.0, label="b")
        >>> L = b * ((a + b) * (a - b))
        >>> L.backward()
        >>> a.grad, b.grad
        (4.0, -11.0)

    ``backward()`` adds into the ``.grad`` of the leaves (a second call accumulates, as in
    PyTorch; use ``zero_grad()`` in between); the ``.grad`` of intermediate nodes holds the
    latest pass only.
    """

    # _stamp: creation number. Parents are always created before their children, so sorting
    # by it gives a topological order without a recursive (or even a post-order) walk.
    # A node keeps up to two parents in slots (_a, _b) with their local derivatives (_da,
    # _db), and any further (parent, local) pairs in _rest: no tuple per node, so a graph of
    # a million nodes is a million objects for Python's garbage collector, not three million.
    __slots__ = ("data", "grad", "label", "_op", "_stamp", "_a", "_da", "_b", "_db", "_rest")
    # NumPy must not fold a Scalar into an object array (its gradient would be lost):
    # with this, ndarray op Scalar defers to the Scalar's reflected operator, or fails.
    __array_ufunc__ = None

    def __init__(self, data: Any, _children: Iterable[Scalar] = (), _op: str = "", label: str = "") -> None:
        self.data = data.data if isinstance(data, Scalar) else _number(data, "data")
        self.grad = 0.0
        self.label = label
        self._a = self._b = None
        self._da = self._db = 0.0
        self._rest: tuple[tuple[Scalar, float], ...] = ()
        self._op = _op
        self._stamp = _next_number()
        if _children:
            raise TypeError(
                "Scalar: build nodes with operators (a + b, a.tanh(), ...); parents cannot be given directly"
            )

    # -- inspection ---------------------------------------------------------------------
    @property
    def op(self) -> str:
        """The operation that made this node ('' for a leaf)."""
        return str(self._op)

    @property
    def parents(self) -> tuple[Scalar, ...]:
        """The nodes this one was computed from."""
        if self._a is None:
            return ()
        if self._b is None:
            return (self._a,)
        return (self._a, self._b, *(p for p, _ in self._rest))

    _prev = parents  # micrograd's name

    @property
    def local_derivatives(self) -> tuple[float, ...]:
        """d(self)/d(parent) for each parent, in the order of ``parents``."""
        if self._a is None:
            return ()
        if self._b is None:
            return (self._da,)
        return (self._da, self._db, *(d for _, d in self._rest))

    _local = local_derivatives

    def __repr__(self) -> str:
        label = f", label={self.label!r}" if self.label else ""
        return f"Scalar(data={self.data!r}, grad={self.grad!r}{label})"

    # -- arithmetic: the local derivatives come from the rule table (scalar_rules) -------------
    def __add__(self, other: Any) -> Scalar:
        if isinstance(other, Scalar):
            return _binary(self.data + other.data, self, _ADD_DA, other, _ADD_DB, ADD)
        return _unary(self.data + _number(other, "other"), self, _ADD_NUMBER_LOCAL, ADD_NUMBER)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Scalar:
        if isinstance(other, Scalar):
            return _binary(self.data - other.data, self, _SUB_DA, other, _SUB_DB, SUB)
        return _unary(self.data - _number(other, "other"), self, _SUB_NUMBER_LOCAL, SUB_NUMBER)

    def __rsub__(self, other: Any) -> Scalar:
        return _unary(_number(other, "other") - self.data, self, _NUMBER_SUB_LOCAL, NUMBER_SUB)

    def __mul__(self, other: Any) -> Scalar:
        if isinstance(other, Scalar):
            a, b = self.data, other.data
            y = a * b
            da, db = _d_mul(a, b, y, FLOATS)
            return _binary(y, self, da, other, db, MUL)
        c = _number(other, "other")
        y = self.data * c
        return _unary(y, self, _d_mul_number(self.data, y, c, FLOATS), MUL_NUMBER)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Scalar:
        if isinstance(other, Scalar):
            a, b = self.data, other.data
            _nonzero(b, "/")
            y = a / b
            da, db = DIV.derivative(a, b, y, FLOATS)
            return _binary(y, self, da, other, db, DIV)
        c = _number(other, "other")
        _nonzero(c, "/")
        y = self.data / c
        return _unary(y, self, DIV_NUMBER.derivative(self.data, y, c, FLOATS), DIV_NUMBER)

    def __rtruediv__(self, other: Any) -> Scalar:
        _nonzero(self.data, "/")
        return _number(other, "other") * self**-1  # as micrograd: two nodes, "**-1" then "*"

    def __pow__(self, other: Any) -> Scalar:
        a = self.data
        if isinstance(other, Scalar):
            b = other.data
            y = float_power(a, b)
            da, db = POW.derivative(a, b, y, FLOATS)
            return _binary(y, self, da, other, db, POW)
        c = _number(other, "exponent")
        y = float_power(a, c)
        op = power_of(c)
        return _unary(y, self, op.derivative(a, y, c, FLOATS), op)

    def __rpow__(self, other: Any) -> Scalar:
        c = _number(other, "base")
        y = float_power(c, self.data)
        op = base_to(c)
        return _unary(y, self, op.derivative(self.data, y, c, FLOATS), op)

    def __pos__(self) -> Scalar:
        return self

    # -- functions of one Scalar: value and rule from the table --------------------------------
    __neg__ = scalar_function(NEG, operator.neg, "-x", "__neg__")
    __abs__ = scalar_function(ABS, abs, "|x|", "__abs__")
    exp = scalar_function(EXP, _exp, "e**x (inf past the largest float)")
    log = scalar_function(LOG, float_log, "the natural logarithm (x > 0)")
    sqrt = scalar_function(SQRT, float_sqrt, "the square root (x >= 0)")
    sin = scalar_function(SIN, float_sin, "sin x")
    cos = scalar_function(COS, float_cos, "cos x")
    tan = scalar_function(TAN, float_tan, "tan x")
    tanh = scalar_function(TANH, math.tanh, "tanh x")
    sigmoid = scalar_function(SIGMOID, float_sigmoid, "1 / (1 + e**-x), computed without overflow")
    relu = scalar_function(RELU, float_relu, "max(x, 0), with derivative 0 at 0")

    # -- comparisons with numbers or Scalars: plain bools ---------------------------------
    def __lt__(self, other: Any) -> bool:
        return self.data < _float_of(other)

    def __le__(self, other: Any) -> bool:
        return self.data <= _float_of(other)

    def __gt__(self, other: Any) -> bool:
        return self.data > _float_of(other)

    def __ge__(self, other: Any) -> bool:
        return self.data >= _float_of(other)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Scalar, Real)):
            return self.data == _float_of(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = object.__hash__

    # -- the backward pass ----------------------------------------------------------------
    def backward(self, gradient: float = 1.0, create_graph: bool = False) -> None:
        """Add d(self)/d(leaf) to ``leaf.grad`` for every leaf this node depends on.

        With ``create_graph=True`` the gradients are Scalars built from the graph, so they
        can be differentiated again (``x.grad.backward()`` after resetting ``x.grad``).
        """
        order = _reachable(self, reset=True)
        order.sort(key=_creation, reverse=True)
        if create_graph:
            return _backward_graph(self, order, gradient)
        self.grad += gradient
        for node in order:
            a = node._a
            if a is None:
                continue
            g = node.grad
            a.grad += g * node._da
            b = node._b
            if b is not None:
                b.grad += g * node._db
                for parent, local in node._rest:
                    parent.grad += g * local

    def __reduce__(self) -> tuple:
        """Pickling keeps the value, the gradient and the label, not the graph: a computed Scalar loads as a leaf
        (as PyTorch pickles a computed Tensor; the ops' rules are functions that cannot be pickled, and a deep graph
        would recurse). ``copy.deepcopy`` copies the graph."""
        return _leaf, (self.data, getattr(self.grad, "data", self.grad), self.label)

    def __copy__(self) -> Scalar:
        """A node with the same value, gradient and parents (the graph itself is shared, not copied)."""
        twin = _new(Scalar)
        for name in Scalar.__slots__:
            setattr(twin, name, getattr(self, name))
        return twin

    def __deepcopy__(self, memo: dict[int, Any]) -> Scalar:
        """A copy of this node and of everything it was computed from, made without recursion (Python's
        default copy recursed once per node: RecursionError on a chain of a few thousand operations)."""
        import copy

        if id(self) in memo:
            return memo[id(self)]
        nodes = [n for n in _reachable(self, reset=False) if id(n) not in memo]
        nodes.sort(key=_creation)  # parents first, and the copies keep that order in their numbers
        for node in nodes:
            twin = _new(Scalar)
            twin.data, twin.label, twin._op, twin._stamp = node.data, node.label, node._op, _next_number()
            twin._da = node._da
            twin._a = None if node._a is None else memo[id(node._a)]
            twin._b = None
            if node._b is not None:  # a one-parent node never sets _db
                twin._b, twin._db = memo[id(node._b)], node._db
            twin._rest = tuple((memo[id(p)], local) for p, local in node._rest)
            twin.grad = node.grad
            memo[id(node)] = twin
        for node in nodes:  # a Scalar grad (create_graph) is a graph of its own, copied once all nodes are mapped
            if isinstance(node.grad, Scalar):
                memo[id(node)].grad = copy.deepcopy(node.grad, memo)
        return memo[id(self)]

    def _backward(self) -> None:
        """One step of the backward pass, by hand: add ``self.grad * local`` to each parent's ``.grad``.

        micrograd's per-node ``_backward()``, which its lecture calls node by node from the output
        (``o.grad = 1.0; o._backward(); n._backward(); ...``) before ``backward()`` automates it.

        Example:
            >>> from chainrule import Scalar
            >>> x, w = Scalar(3.0), Scalar(-2.0)
            >>> o = x * w
            >>> o.grad = 1.0
            >>> o._backward()
            >>> x.grad, w.grad
            (-2.0, 3.0)
        """
        g = self.grad
        for parent, local in zip(self.parents, self.local_derivatives, strict=True):
            parent.grad += g * local

    def zero_grad(self) -> None:
        """Set ``.grad`` to 0 on this node and every node it was computed from."""
        for node in _reachable(self, reset=False):
            node.grad = 0.0

    def graph(self, **kw: Any) -> Any:
        """A picture of the graph behind this value (Jupyter shows it inline); see ``chainrule.draw``."""
        return drawing.draw(self, **kw)


_next_number = itertools.count().__next__
_new = object.__new__
_creation = attrgetter("_stamp")


# _unary and _binary are written out in full (no shared helper): they run once per
# operation, and a call less per node is measurable on a million-node graph.
def _unary(data: float, a: Scalar, da: float, op: ScalarOp) -> Scalar:
    out = _new(Scalar)
    out.data = data
    out.grad = 0.0
    out.label = ""
    out._op = op
    out._stamp = _next_number()
    out._a = a
    out._da = da
    out._b = None
    out._rest = ()
    return out


def _binary(data: float, a: Scalar, da: float, b: Scalar, db: float, op: ScalarOp) -> Scalar:
    out = _new(Scalar)
    out.data = data
    out.grad = 0.0
    out.label = ""
    out._op = op
    out._stamp = _next_number()
    out._a = a
    out._da = da
    out._b = b
    out._db = db
    out._rest = ()
    return out


def _node_with_parents(data: float, prev: tuple[Scalar, ...], local: tuple[float, ...], op: ScalarOp) -> Scalar:
    """A node with any number of parents (e.g. a neuron's weighted sum as one node)."""
    if len(prev) == 1:
        return _unary(data, prev[0], local[0], op)
    if len(prev) >= 2:
        out = _binary(data, prev[0], local[0], prev[1], local[1], op)
        out._rest = tuple(zip(prev[2:], local[2:]))
        return out
    out = Scalar(data, _op=op)
    return out


def _pole(x: Scalar, value: float, slope: float) -> Scalar:
    """An infinite local derivative (sqrt at 0) as a node of ``x``, so that the second derivative is its
    one-sided limit ``slope`` (-inf, as the Tensor engine and PyTorch give), not the 0 of a constant."""
    return _unary(value, x, slope, POLE)


SCALARS.pole = staticmethod(_pole)


def _leaf(data: float, grad: float, label: str) -> Scalar:
    """A leaf holding ``data`` with ``.grad`` set (what loading a pickled Scalar calls)."""
    s = Scalar(data, label=label)
    s.grad = grad
    return s


def _reachable(root: Scalar, reset: bool) -> list[Scalar]:
    """Every node ``root`` depends on, itself included (iterative; inner grads reset to 0)."""
    if reset and root._a is not None:
        root.grad = 0.0
    seen = {root}  # hashed by identity (see __hash__), so no id() ints are made
    nodes = [root]
    stack = [root]
    pop, push, mark, keep = stack.pop, stack.append, seen.add, nodes.append
    while stack:
        node = pop()
        if node._a is None:
            continue
        for parent in (node._a,) if node._b is None else node.parents:
            if parent not in seen:
                mark(parent)
                keep(parent)
                push(parent)
                if reset and parent._a is not None:
                    parent.grad = 0.0
    return nodes


def _backward_graph(root: Scalar, order: list[Scalar], gradient: float) -> None:
    """The backward pass with Scalar gradients: each local derivative rebuilt as a Scalar."""
    grads: dict[Scalar, Any] = {root: gradient if isinstance(gradient, Scalar) else Scalar(gradient)}
    for node in order:
        g = grads.pop(node, None)
        if g is None:
            continue
        # a Scalar grad of value 0 (an earlier create_graph pass) still carries its graph: keep it
        node.grad = node.grad + g if isinstance(node.grad, Scalar) or node.grad else g
        if node._a is None:
            continue
        for parent, local in zip(node._prev, _differentiable_locals(node)):
            part = g * local
            grads[parent] = grads[parent] + part if parent in grads else part


def _differentiable_locals(node: Scalar) -> tuple[Any, ...]:
    """``node.local_derivatives`` as Scalar expressions of its parents: the same rule, on Scalars."""
    op = node._op
    if op.piecewise_constant:
        return node.local_derivatives
    if op.derivative is None:
        raise NotImplementedError(
            f"Scalar.backward(create_graph=True): the op {str(op)!r} has no rule for higher derivatives; "
            "build it from +, * and functions of one Scalar to differentiate twice"
        )
    if op.arity == 0:
        n = len(node.parents) - int(op.constant or 0)  # the last local derivatives are plain numbers
        return op.derivative(node.parents[:n], node.local_derivatives[n:], SCALARS)
    if op.arity == 2:
        return op.derivative(node._a, node._b, node, SCALARS)
    return (op.derivative(node._a, node, op.constant, SCALARS),)


def _float_of(x: Any) -> float:
    return x.data if isinstance(x, Scalar) else x


def _nonzero(b: float, op: str) -> None:
    if b == 0:
        raise ZeroDivisionError(f"Scalar {op}: division by zero")
