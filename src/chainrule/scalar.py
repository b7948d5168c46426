"""``Scalar``: the tutorials' object, one Python float per node, built for speed.

Every node stores its parents and, for each parent, the local derivative
d(node)/d(parent) as a number (seed 000's ``local_derivatives``). The backward pass is
then one loop: ``parent.grad += node.grad * local``, in reverse topological order,
found without recursion.

micrograd programs run unchanged with ``from chainrule import Scalar as Value``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from numbers import Real
from operator import attrgetter
from typing import Any, Union

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
        raise TypeError(f"Scalar: argument '{name}' must be a real number, got {type(value).__name__}")
    return float(value)


class Scalar:
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

    # _n: creation number. Parents are always created before their children, so sorting
    # by it gives a topological order without a recursive (or even a post-order) walk.
    # A node keeps up to two parents in slots (_a, _b) with their local derivatives (_da,
    # _db), and any further (parent, local) pairs in _rest: no tuple per node, so a graph of
    # a million nodes is a million objects for Python's garbage collector, not three million.
    __slots__ = ("data", "grad", "label", "_op", "_n", "_a", "_da", "_b", "_db", "_rest")
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
        self._n = _next_number()
        if _children:
            raise TypeError(
                "Scalar: build nodes with operators (a + b, a.tanh(), ...); parents cannot be given directly"
            )

    # -- inspection ---------------------------------------------------------------------
    @property
    def op(self) -> str:
        """The operation that made this node ('' for a leaf)."""
        return self._op

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

    def __float__(self) -> float:
        return self.data

    # -- arithmetic ---------------------------------------------------------------------
    def __add__(self, other: Any) -> Scalar:
        if isinstance(other, Scalar):
            return _binary(self.data + other.data, self, 1.0, other, 1.0, "+")
        return _unary(self.data + _number(other, "other"), self, 1.0, "+")

    __radd__ = __add__

    def __sub__(self, other: Any) -> Scalar:
        if isinstance(other, Scalar):
            return _binary(self.data - other.data, self, 1.0, other, -1.0, "-")
        return _unary(self.data - _number(other, "other"), self, 1.0, "-")

    def __rsub__(self, other: Any) -> Scalar:
        return _unary(_number(other, "other") - self.data, self, -1.0, "-")

    def __mul__(self, other: Any) -> Scalar:
        if isinstance(other, Scalar):
            return _binary(self.data * other.data, self, other.data, other, self.data, "*")
        c = _number(other, "other")
        return _unary(self.data * c, self, c, "*")

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Scalar:
        if isinstance(other, Scalar):
            b = other.data
            _nonzero(b, "/")
            return _binary(self.data / b, self, 1.0 / b, other, -self.data / (b * b), "/")
        c = _number(other, "other")
        _nonzero(c, "/")
        return _unary(self.data / c, self, 1.0 / c, "/")

    def __rtruediv__(self, other: Any) -> Scalar:
        _nonzero(self.data, "/")
        return _number(other, "other") * self**-1  # as micrograd: two nodes, "**-1" then "*"

    def __pow__(self, other: Any) -> Scalar:
        a = self.data
        if isinstance(other, Scalar):
            b = other.data
            out = _power(a, b)
            return _binary(out, self, _dpow_base(a, b), other, out * _log_or_zero(a), "**")
        b = _number(other, "exponent")
        return _unary(_power(a, b), self, _dpow_base(a, b), "**" + _exact(b))

    def __rpow__(self, other: Any) -> Scalar:
        c = _number(other, "base")
        out = _power(c, self.data)
        return _unary(out, self, out * _log_or_zero(c), _exact(c) + "**")

    def __neg__(self) -> Scalar:
        return _unary(-self.data, self, -1.0, "neg")

    def __pos__(self) -> Scalar:
        return self

    def __abs__(self) -> Scalar:
        a = self.data
        return _unary(abs(a), self, 1.0 if a > 0 else -1.0 if a < 0 else 0.0, "abs")

    # -- functions ----------------------------------------------------------------------
    def exp(self) -> Scalar:
        out = math.exp(self.data)
        return _unary(out, self, out, "exp")

    def log(self) -> Scalar:
        a = self.data
        if a <= 0:
            raise ValueError(f"log: argument must be positive, got {a}")
        return _unary(math.log(a), self, 1.0 / a, "log")

    def sqrt(self) -> Scalar:
        a = self.data
        if a < 0:
            raise ValueError(f"sqrt: argument must be non-negative, got {a}")
        out = math.sqrt(a)
        return _unary(out, self, 0.5 / out if out else math.inf, "sqrt")

    def sin(self) -> Scalar:
        return _unary(math.sin(self.data), self, math.cos(self.data), "sin")

    def cos(self) -> Scalar:
        return _unary(math.cos(self.data), self, -math.sin(self.data), "cos")

    def tan(self) -> Scalar:
        out = math.tan(self.data)
        return _unary(out, self, 1.0 + out * out, "tan")

    def tanh(self) -> Scalar:
        out = math.tanh(self.data)
        return _unary(out, self, 1.0 - out * out, "tanh")

    def sigmoid(self) -> Scalar:
        a = self.data
        out = 1.0 / (1.0 + math.exp(-a)) if a >= 0 else math.exp(a) / (1.0 + math.exp(a))
        return _unary(out, self, out * (1.0 - out), "sigmoid")

    def relu(self) -> Scalar:
        a = self.data
        return _unary(a if a > 0 else 0.0, self, 1.0 if a > 0 else 0.0, "relu")

    # -- comparisons with numbers or Scalars: plain bools ---------------------------------
    def __lt__(self, other: Any) -> bool:
        return self.data < _value(other)

    def __le__(self, other: Any) -> bool:
        return self.data <= _value(other)

    def __gt__(self, other: Any) -> bool:
        return self.data > _value(other)

    def __ge__(self, other: Any) -> bool:
        return self.data >= _value(other)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Scalar, Real)):
            return self.data == _value(other)
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
        order = _graph(self, reset=True)
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

    def zero_grad(self) -> None:
        """Set ``.grad`` to 0 on this node and every node it was computed from."""
        for node in _graph(self, reset=False):
            node.grad = 0.0

    def graph(self, **kw: Any) -> Any:
        """A picture of the graph behind this value (Jupyter shows it inline); see ``chainrule.draw``."""
        from .graph import draw

        return draw(self, **kw)


_next_number = itertools.count().__next__
_new = object.__new__
_creation = attrgetter("_n")


# _unary and _binary are written out in full (no shared helper): they run once per
# operation, and a call less per node is measurable on a million-node graph.
def _unary(data: float, a: Scalar, da: float, op: str) -> Scalar:
    out = _new(Scalar)
    out.data = data
    out.grad = 0.0
    out.label = ""
    out._op = op
    out._n = _next_number()
    out._a = a
    out._da = da
    out._b = None
    out._rest = ()
    return out


def _binary(data: float, a: Scalar, da: float, b: Scalar, db: float, op: str) -> Scalar:
    out = _new(Scalar)
    out.data = data
    out.grad = 0.0
    out.label = ""
    out._op = op
    out._n = _next_number()
    out._a = a
    out._da = da
    out._b = b
    out._db = db
    out._rest = ()
    return out


def _node(data: float, prev: tuple[Scalar, ...], local: tuple[float, ...], op: str) -> Scalar:
    """A node with any number of parents (e.g. a neuron's weighted sum as one node)."""
    if len(prev) == 1:
        return _unary(data, prev[0], local[0], op)
    if len(prev) >= 2:
        out = _binary(data, prev[0], local[0], prev[1], local[1], op)
        out._rest = tuple(zip(prev[2:], local[2:]))
        return out
    out = Scalar(data, _op=op)
    return out


def _graph(root: Scalar, reset: bool) -> list[Scalar]:
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
        node.grad = node.grad + g if node.grad else g
        for parent, local in zip(node._prev, _differentiable_locals(node)):
            part = g * local
            grads[parent] = grads[parent] + part if parent in grads else part


def _differentiable_locals(node: Scalar) -> tuple[Any, ...]:
    """``node.local_derivatives`` as Scalar expressions of its parents (constants stay floats)."""
    op, prev = node._op, node._prev
    if not prev:
        return ()
    if op in ("+", "-", "neg", "abs", "relu") or (op in ("*", "/") and len(prev) == 1):
        return node._local  # constant on each linear piece
    if op == "*":
        return (prev[1], prev[0])
    if op == "/":
        a, b = prev
        return (1.0 / b, -a / (b * b))
    if op == "**":
        a, b = prev
        return (b * a ** (b - 1.0), node * (a.log() if a.data > 0 else 0.0))
    if op.startswith("**"):
        c = float(op[2:])
        return (c * prev[0] ** (c - 1.0),) if c != 0 else (0.0,)
    if op.endswith("**"):
        return (node * _log_or_zero(float(op[:-2])),)
    a = prev[0]
    rules = {
        "exp": lambda: node,
        "log": lambda: 1.0 / a,
        "sqrt": lambda: 0.5 / node,
        "sin": lambda: a.cos(),
        "cos": lambda: -a.sin(),
        "tan": lambda: 1.0 + node * node,
        "tanh": lambda: 1.0 - node * node,
        "sigmoid": lambda: node * (1.0 - node),
    }
    return (rules[op](),)


def _exact(c: float) -> str:
    """A short label for a constant that still reads back as the same float."""
    short = f"{c:g}"
    return short if float(short) == c else repr(c)


def _value(x: Any) -> float:
    return x.data if isinstance(x, Scalar) else x


def _nonzero(b: float, op: str) -> None:
    if b == 0:
        raise ZeroDivisionError(f"Scalar {op}: division by zero")


def _power(a: float, b: float) -> float:
    try:
        out = a**b
    except ZeroDivisionError:
        raise ZeroDivisionError(f"Scalar **: 0.0 cannot be raised to a negative power ({b})") from None
    if isinstance(out, complex):
        raise ValueError(f"Scalar **: a negative base ({a}) to a fractional power ({b}) is not a real number")
    return out


def _dpow_base(a: float, b: float) -> float:
    if b == 0:
        return 0.0
    return b * _power(a, b - 1) if a != 0 or b >= 1 else (math.inf if b < 1 else 0.0)


def _log_or_zero(a: float) -> float:
    # d/db a**b = a**b log a; at a == 0 the product is taken as 0 (the limit for b > 0)
    if a > 0:
        return math.log(a)
    return 0.0 if a == 0 else math.nan
