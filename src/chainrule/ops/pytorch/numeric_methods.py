"""More of PyTorch's numeric Tensor methods and functions: the special functions ``polygamma``, ``mvlgamma``,
``i0``, ``igamma``, ``igammac`` (``chainrule.special``'s, so with their derivatives; they need SciPy), ``ldexp``
and ``frexp``; and the ones without a derivative: ``nextafter``, ``gcd``, ``lcm``, the ``bitwise_*`` family
(with the ``<<`` and ``>>`` operators), ``histogram`` and ``unravel_index``.

An op without a derivative refuses a Tensor that requires grad where PyTorch's backward would fail
(``nextafter``), rather than drop its gradient; the integer ops refuse floats, as PyTorch's do.

Example:
    >>> import chainrule as cr
    >>> cr.tensor([12, 18]).gcd(cr.tensor([8, 27])).tolist(), (cr.tensor([1, 2]) << 2).tolist()
    ([4, 9], [4, 8])
    >>> cr.unravel_index(cr.tensor([5, 7]), (2, 4))[1].tolist()
    [1, 3]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ...autodiff.batch_levels import is_value
from ...core.device import xp_of
from ...core.promotion import result_dtype
from ...core.state import is_grad_enabled
from ...tensor import Tensor
from ..declare import DECLARATIONS, tensor_method
from .common import as_array


class FrexpResult(NamedTuple):
    mantissa: Any
    exponent: Any


class HistogramResult(NamedTuple):
    hist: Any
    bin_edges: Any


def _tensor(x: Any) -> Any:
    return x if is_value(x) else Tensor(x)


def _special(name: str) -> Any:
    from ... import special  # SciPy's functions, an optional extra: loaded only when called

    return getattr(special, name)


# -- with derivatives ------------------------------------------------------------------------------------
@tensor_method("polygamma")
def polygamma_method(self: Tensor, n: int) -> Any:
    """PyTorch's ``t.polygamma(n)``: the ``n``-th derivative of digamma (needs SciPy)."""
    return _special("polygamma")(n, self)


def polygamma(n: int, input: Any) -> Any:  # noqa: A002  (PyTorch's parameter name)
    """PyTorch's ``torch.polygamma(n, input)``: the ``n``-th derivative of digamma (needs SciPy)."""
    return _tensor(input).polygamma(n)


@tensor_method("mvlgamma")
def mvlgamma(self: Tensor, p: int) -> Any:
    """PyTorch's ``mvlgamma(p)``: the log of the multivariate Gamma function of dimension ``p``; every entry must
    be above ``(p - 1) / 2``, as PyTorch checks (needs SciPy)."""
    if p < 1:
        raise ValueError(f"mvlgamma: p must be at least 1, got {p}")
    if np.any(as_array(self) <= (p - 1) / 2):
        raise ValueError(f"mvlgamma: all entries must be greater than (p - 1) / 2 = {(p - 1) / 2}")
    return _special("multigammaln")(self, p)


@tensor_method("i0")
def i0(self: Tensor) -> Any:
    """PyTorch's ``i0``: the modified Bessel function of the first kind, order 0 (needs SciPy)."""
    return _special("i0")(self)


@tensor_method("igamma")
def igamma(self: Tensor, other: Any) -> Any:
    """PyTorch's ``igamma``: the regularized lower incomplete gamma function ``P(self, other)``; the gradient goes
    to ``other`` (PyTorch has none for ``self``; differentiating it raises here). Needs SciPy."""
    return _special("gammainc")(self, other)


@tensor_method("igammac")
def igammac(self: Tensor, other: Any) -> Any:
    """PyTorch's ``igammac``: the regularized upper incomplete gamma function ``Q(self, other)`` (needs SciPy)."""
    return _special("gammaincc")(self, other)


@tensor_method("ldexp")
def ldexp(self: Tensor, other: Any) -> Any:
    """PyTorch's ``ldexp``: ``self * 2 ** other`` (differentiable in ``self``)."""
    return DECLARATIONS["ldexp"].function(self, other)


@tensor_method("frexp")
def frexp(self: Tensor) -> FrexpResult:
    """PyTorch's ``frexp``: ``(mantissa, exponent)`` with ``self = mantissa * 2 ** exponent``, the exponent int32."""
    mantissa, exponent = DECLARATIONS["frexp"].function(self)
    return FrexpResult(mantissa, exponent if isinstance(exponent, Tensor) else Tensor._wrap(exponent))


# -- without derivatives ----------------------------------------------------------------------------------
def _no_gradient(name: str, *xs: Any) -> None:
    if is_grad_enabled() and any(isinstance(x, Tensor) and x.requires_grad for x in xs):
        raise NotImplementedError(f"{name}: has no derivative (as in PyTorch); call it on t.detach(), or under "
                                  "chainrule.no_grad()")


def _integers(name: str, xs: tuple[Any, ...], bools: bool) -> list[Any]:
    values = [as_array(x) for x in xs]
    allowed = "iub" if bools else "iu"
    for v in values:
        if v.dtype.kind not in allowed:
            kinds = "integer or boolean" if bools else "integer"
            raise TypeError(f"{name}: needs {kinds} Tensors (as PyTorch's), got dtype {v.dtype}")
    return values


def _integer_op(name: str, fn: Callable[..., Any], bools: bool = True) -> Callable[..., Any]:
    def method(self: Tensor, *others: Any) -> Any:
        operands = (self, *others)
        values = _integers(name, operands, bools)
        # PyTorch's promotion: a Python int keeps the Tensor's dtype (int32 << 2 stays int32, wrapping as there)
        dtype = result_dtype([x if isinstance(x, (bool, int, np.generic)) else v for x, v in zip(operands, values)])
        values = [v.astype(dtype, copy=False) for v in values]
        return Tensor._wrap(xp_of(values[0]).asarray(fn(*values)))

    method.__doc__ = f"PyTorch's ``{name}``: NumPy's ``{fn.__name__}`` on integer Tensors (no derivative)."
    return method


for _name, _fn, _bools in [("gcd", np.gcd, False), ("lcm", np.lcm, False), ("bitwise_and", np.bitwise_and, True),
                           ("bitwise_or", np.bitwise_or, True), ("bitwise_xor", np.bitwise_xor, True),
                           ("bitwise_not", np.invert, True), ("bitwise_left_shift", np.left_shift, False),
                           ("bitwise_right_shift", np.right_shift, False)]:
    tensor_method(_name, _integer_op(_name, _fn, _bools))
tensor_method("__lshift__", _integer_op("bitwise_left_shift", np.left_shift, False))
tensor_method("__rshift__", _integer_op("bitwise_right_shift", np.right_shift, False))


@tensor_method("nextafter")
def nextafter(self: Tensor, other: Any) -> Any:
    """PyTorch's ``nextafter``: the next float after ``self`` towards ``other`` (no derivative: a Tensor that
    requires grad raises, as PyTorch's backward does)."""
    _no_gradient("nextafter", self, other)
    values = as_array(self)
    return Tensor._wrap(xp_of(values).nextafter(values, as_array(other, values.dtype)))


@tensor_method("histogram")
def histogram(self: Tensor, bins: Any = 100, *, range: Any = None, weight: Any = None,  # noqa: A002
              density: bool = False) -> HistogramResult:
    """PyTorch's ``histogram``: ``(hist, bin_edges)`` of the values, in their float dtype (no derivative).
    ``bins``: a count or the edges (a Tensor); ``range``: ``(min, max)``; ``weight``: one per entry."""
    values = as_array(self)
    if values.dtype.kind != "f":
        raise TypeError(f"histogram: needs a floating-point Tensor (as PyTorch's), got dtype {values.dtype}")
    xp = xp_of(values)
    edges = bins if isinstance(bins, (int, np.integer)) else xp.asarray(as_array(bins))
    w = None if weight is None else xp.asarray(as_array(weight)).ravel()
    hist, bin_edges = xp.histogram(values.ravel(), bins=edges, range=range, weights=w, density=density)
    return HistogramResult(Tensor._wrap(hist.astype(values.dtype)), Tensor._wrap(bin_edges.astype(values.dtype)))


def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """PyTorch's ``torch.unravel_index(indices, shape)``: the coordinates of each flat index in ``shape``, one
    int64 Tensor per dimension."""
    idx = as_array(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: indices must be integers, got dtype {idx.dtype}")
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    size = int(np.prod(dims))
    if idx.size and (int(idx.min()) < -size or int(idx.max()) >= size):
        raise IndexError(f"unravel_index: an index is out of range for shape {dims} ({size} entries)")
    xp = xp_of(idx)
    coords = xp.unravel_index(idx % max(size, 1), dims)  # (PyTorch's negative indices count from the end)
    return tuple(Tensor._wrap(c.astype(np.int64)) for c in coords)


def histogram_function(input: Any, *args: Any, **kwargs: Any) -> HistogramResult:  # noqa: A002
    """PyTorch's ``torch.histogram(input, bins, ...)``: ``input.histogram(bins, ...)``."""
    return _tensor(input).histogram(*args, **kwargs)


# PyTorch's functions of these names that are not ``input.<name>(...)``
FUNCTIONS: dict[str, Callable[..., Any]] = {"polygamma": polygamma, "histogram": histogram_function,
                                            "unravel_index": unravel_index}
