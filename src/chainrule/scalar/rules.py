"""Every ``Scalar`` op and its local derivatives, written once.

A rule is written with ordinary arithmetic and a small math namespace ``m`` (``m.exp``,
``m.sin``, ...), so the same function runs

- on floats (``m = FLOATS``), when a node is built: the fast first-order local derivative
  stored on the node;
- on Scalars (``m = SCALARS``), in ``backward(create_graph=True)``: the local derivative as
  a Scalar expression of the parents, which can be differentiated again.

An op is a :class:`ScalarOp`, a ``str`` holding its display name (what micrograd keeps in
``Value._op``, e.g. ``'tanh'`` or ``'**2'``), so a node's op is its rule: nothing is parsed
back out of a label. Signatures: unary ``derivative(x, y, c, m)`` with ``y`` the output and
``c`` the op's constant (the exponent of ``**2``); binary ``derivative(a, b, y, m)`` returning
one local derivative per parent; with any number of parents (arity 0)
``derivative(head, numbers, m)``, ``numbers`` being the plain numbers the op was built with (the
last local derivatives) and ``head`` the parents before as many last ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


class ScalarOp(str):
    """An op's display name with its rule.

    - ``derivative``: the local derivative(s), see the module docstring; None when the op
      has no rule on Scalars (``backward(create_graph=True)`` then names the op);
    - ``arity``: 1 or 2, or 0 for any number of parents (a neuron's weighted sum);
    - ``constant``: the number that is part of the op (``**2`` keeps 2.0), else None;
    - ``piecewise_constant``: the local derivatives do not depend on the inputs (``+``, ``x * 3``,
      ``relu`` on each side of 0), so higher orders reuse the stored float values.
    """

    derivative: Callable[..., Any] | None
    arity: int
    constant: float | None
    piecewise_constant: bool

    def __new__(
        cls,
        name: str,
        arity: int,
        derivative: Callable[..., Any] | None,
        constant: float | None = None,
        piecewise_constant: bool = False,
    ) -> ScalarOp:
        op = super().__new__(cls, name)
        op.derivative, op.arity, op.constant, op.piecewise_constant = derivative, arity, constant, piecewise_constant
        return op

    # An op is immutable and its rule a function: copies share it (copy.deepcopy of a graph, of a model
    # holding Scalars computed from others, failed on str's default copy protocol).
    def __copy__(self) -> ScalarOp:
        return self

    def __deepcopy__(self, memo: Any) -> ScalarOp:
        return self


def plain(v: Any) -> float:
    """The float inside a Scalar, or the number itself."""
    return getattr(v, "data", v)


def power(a: float, b: float) -> float:
    """``a ** b`` on floats, inf (signed as the true result) where Python raises OverflowError, as PyTorch and
    NumPy give it (Scalar(10.0) ** 400 raised a bare OverflowError while Scalar(1e200) * 1e200 gave inf)."""
    try:
        return a**b
    except OverflowError:
        odd = b == int(b) and int(b) % 2 == 1
        return -math.inf if a < 0 and odd else math.inf


def float_power(a: float, b: float) -> float:
    """A Scalar's ``a ** b``: :func:`power`, with errors that name the op for 0 to a negative power and a
    negative base to a fractional one."""
    try:
        out = power(a, b)
    except ZeroDivisionError:
        raise ZeroDivisionError(f"Scalar **: 0.0 cannot be raised to a negative power ({b})") from None
    if isinstance(out, complex):
        raise ValueError(f"Scalar **: a negative base ({a}) to a fractional power ({b}) is not a real number")
    return out


def float_log(x: float) -> float:
    if x <= 0:
        raise ValueError(f"log: argument must be positive, got {x}")
    return math.log(x)


def float_sqrt(x: float) -> float:
    if x < 0:
        raise ValueError(f"sqrt: argument must be non-negative, got {x}")
    return math.sqrt(x)


def float_relu(x: float) -> float:
    return 0.0 if x <= 0 else x  # NaN stays NaN, as PyTorch's and the Tensor relu


def float_exp(x: float) -> float:
    """``e ** x`` on floats, inf past the largest float (as PyTorch and NumPy), not OverflowError."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def float_sigmoid(x: float) -> float:
    """``1 / (1 + e ** -x)`` on floats, without overflow for large ``|x|``."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def _nan_at_infinity(f: Callable[[float], float]) -> Callable[[float], float]:
    """``f`` (sin, cos, tan) with NaN at +-inf, as PyTorch and NumPy give, where ``math`` raises
    a bare ValueError('math domain error') that names no op."""

    def periodic(x: float) -> float:
        return math.nan if math.isinf(x) else f(x)

    periodic.__name__ = f.__name__
    return periodic


float_sin, float_cos, float_tan = _nan_at_infinity(math.sin), _nan_at_infinity(math.cos), _nan_at_infinity(math.tan)


class FLOATS:
    """The math namespace for rules evaluated on floats."""

    log = math.log
    sin, cos = staticmethod(float_sin), staticmethod(float_cos)
    exp = staticmethod(float_exp)
    sigmoid = staticmethod(float_sigmoid)

    @staticmethod
    def pole(x: Any, value: float, slope: float) -> float:
        return value


class SCALARS:
    """The math namespace for rules evaluated on Scalars (each call is a graph node)."""

    exp = staticmethod(lambda x: x.exp())
    log = staticmethod(lambda x: x.log())
    sin = staticmethod(lambda x: x.sin())
    cos = staticmethod(lambda x: x.cos())
    sigmoid = staticmethod(lambda x: x.sigmoid())

    # pole(x, value, slope): an infinite local derivative (sqrt at 0) as a node of x whose own derivative is
    # its one-sided limit ``slope``; set by chainrule.scalar (which builds nodes; importing it here would cycle)
    pole: Callable[[Any, float, float], Any]


# -- the rules ----------------------------------------------------------------------------------
def log_or_zero(a: Any, m: Any) -> Any:
    """log a, taken as 0 at a == 0 (the limit of d/db a**b = a**b log a for b > 0); NaN below 0."""
    value = plain(a)
    if value > 0:
        return m.log(a)
    return 0.0 if value == 0 else math.nan


def d_power_base(a: Any, b: Any, m: Any) -> Any:
    """d/da a**b = b a**(b-1); 0 when b == 0, infinite at a == 0 for b < 1."""
    exponent = plain(b)
    if exponent == 0:
        return 0.0
    if plain(a) == 0 and exponent < 1:  # d2/da2 = b (b - 1) a**(b-2): -inf from the right for 0 < b < 1
        return m.pole(a, math.inf, -math.inf if exponent > 0 else math.nan)
    if isinstance(a, float) and isinstance(b, float):
        return b * power(a, b - 1.0)
    return b * a ** (b - 1.0)


def _sqrt(x: Any, y: Any, c: Any, m: Any) -> Any:
    return 0.5 / y if plain(y) else m.pole(x, math.inf, -math.inf)


def _sign(x: Any, y: Any, c: Any, m: Any) -> float:
    return 1.0 if x > 0 else -1.0 if x < 0 else 0.0


ADD = ScalarOp("+", 2, lambda a, b, y, m: (1.0, 1.0), piecewise_constant=True)
SUB = ScalarOp("-", 2, lambda a, b, y, m: (1.0, -1.0), piecewise_constant=True)
MUL = ScalarOp("*", 2, lambda a, b, y, m: (b, a))
DIV = ScalarOp("/", 2, lambda a, b, y, m: (1.0 / b, -a / (b * b)))
POW = ScalarOp("**", 2, lambda a, b, y, m: (d_power_base(a, b, m), y * log_or_zero(a, m)))

# one Scalar and a number c: x + c, x - c, c - x, x * c, x / c (c is the derivative's only input)
ADD_NUMBER = ScalarOp("+", 1, lambda x, y, c, m: 1.0, piecewise_constant=True)
SUB_NUMBER = ScalarOp("-", 1, lambda x, y, c, m: 1.0, piecewise_constant=True)
NUMBER_SUB = ScalarOp("-", 1, lambda x, y, c, m: -1.0, piecewise_constant=True)
MUL_NUMBER = ScalarOp("*", 1, lambda x, y, c, m: c, piecewise_constant=True)
DIV_NUMBER = ScalarOp("/", 1, lambda x, y, c, m: 1.0 / c, piecewise_constant=True)

NEG = ScalarOp("neg", 1, lambda x, y, c, m: -1.0, piecewise_constant=True)
ABS = ScalarOp("abs", 1, _sign, piecewise_constant=True)
RELU = ScalarOp("relu", 1, lambda x, y, c, m: 0.0 if x <= 0 else 1.0, piecewise_constant=True)  # 1 at NaN
EXP = ScalarOp("exp", 1, lambda x, y, c, m: y)
LOG = ScalarOp("log", 1, lambda x, y, c, m: 1.0 / x)
SQRT = ScalarOp("sqrt", 1, _sqrt)
SIN = ScalarOp("sin", 1, lambda x, y, c, m: m.cos(x))
COS = ScalarOp("cos", 1, lambda x, y, c, m: -m.sin(x))
TAN = ScalarOp("tan", 1, lambda x, y, c, m: 1.0 + y * y)
TANH = ScalarOp("tanh", 1, lambda x, y, c, m: 1.0 - y * y)
SIGMOID = ScalarOp("sigmoid", 1, lambda x, y, c, m: y * (1.0 - y))
# an infinite first derivative at 0 (sqrt, x**0.5), made a node for the second derivative; no rule past that
POLE = ScalarOp("pole", 1, None)



def _weighted_sum(head: Any, numbers: Any, m: Any) -> list[Any]:
    """d/d(parents) of ``b + sum(x_i w_i) + sum(c_j w'_j)`` with parents ``[b, x_1, w_1, ..., x_k, w_k, w'_1, ...]``:
    the Scalar inputs each before its weight, then the weights of the plain numbers ``c_j``.

    ``head`` is ``[b, x_1, w_1, ..., x_k, w_k]`` (the weights of numbers are not needed: their
    derivatives are the numbers).
    """
    end = len(head)
    out = [1.0] * end
    out[1:end:2] = head[2:end:2]  # d/dx = w
    out[2:end:2] = head[1:end:2]  # d/dw = x
    out.extend(numbers)  # d/dw' = c
    return out


def dot(n_numbers: int) -> ScalarOp:
    """The op of a neuron's weighted sum as one node (nn.scalar), over ``n_numbers`` plain-number inputs.

    Its rule (any number of parents) is ``derivative(head, numbers, m)``: ``numbers`` are the
    last ``n_numbers`` local derivatives of the node, ``head`` the parents before the last ``n_numbers``.
    """
    return _with_number("dot", _weighted_sum, n_numbers, arity=0)


def _power_of(x: Any, y: Any, c: Any, m: Any) -> Any:
    return d_power_base(x, c, m)


def _base_to(x: Any, y: Any, c: Any, m: Any) -> Any:
    return y * log_or_zero(c, FLOATS)  # c is a number: its log is a number


_ops_with_a_number: dict[tuple[str, float], ScalarOp] = {}
_KEEP = 1024  # distinct constants remembered; past that each node gets its own op (same rule)


def power_of(c: float) -> ScalarOp:
    """The op ``x ** c`` (shown as ``**2``)."""
    return _with_number("**" + exact(c), _power_of, c)


def base_to(c: float) -> ScalarOp:
    """The op ``c ** x`` (shown as ``2**``)."""
    return _with_number(exact(c) + "**", _base_to, c)


def _with_number(name: str, derivative: Callable[..., Any], c: float, arity: int = 1) -> ScalarOp:
    key = (name, c)
    op = _ops_with_a_number.get(key)
    if op is None:
        op = ScalarOp(name, arity, derivative, constant=c)
        if len(_ops_with_a_number) < _KEEP:
            _ops_with_a_number[key] = op
    return op


def exact(c: float) -> str:
    """A short label for a constant that still reads back as the same float."""
    short = f"{c:g}"
    return short if float(short) == c else repr(c)
