"""Every differentiable function, grouped by kind; ``table()`` lists them with their modes."""

from __future__ import annotations

from ..autodiff.primitive import REGISTRY
from . import methods as _methods  # noqa: F401  (attaches Tensor's operators)
from ._define import FUNCTIONS, NUMPY_FUNCTIONS, NUMPY_UFUNCS
from .contraction import dot, einsum, inner, matmul, outer, tensordot, trace, vdot
from .elementwise import (
    abs, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, cbrt, ceil, clip, cos, cosh,
    divide, erf, exp, exp2, expm1, floor, hypot, log, log1p, log2, log10, logaddexp, maximum, minimum,
    multiply, negative, positive, power, reciprocal, relu, round, sigmoid, sign, sin, sinh, sqrt,
    square, subtract, tan, tanh, trunc, where,
)
from .reductions import log_softmax, logsumexp, max, mean, min, prod, softmax, std, sum, var
from .shape import (
    astype, atleast_1d, atleast_2d, broadcast_to, concatenate, copy, expand_dims, flatten, getitem,
    hstack, moveaxis, ravel, reshape, split, squeeze, stack, swapaxes, take, take_along_axis,
    transpose, vstack,
)


def table() -> list[tuple[str, bool, bool]]:
    """(primitive name, has a reverse rule, has a forward rule) for every primitive."""
    return [(name, p.has_vjp(), p.has_jvp()) for name, p in sorted(REGISTRY.items())]


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations", "table")] + ["table"]
