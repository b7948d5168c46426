"""PyTorch's ``renorm``: each slice along ``dim`` whose ``p``-norm is above ``maxnorm`` scaled down to it.

As PyTorch's: the factor is ``maxnorm / (norm + 1e-7)`` where the norm is above ``maxnorm``, 1 elsewhere, and
the gradient flows through the norm too (the factor is not held constant).

Example:
    >>> import chainrule as cr
    >>> [[round(v, 6) for v in row] for row in cr.tensor([[3.0, 4.0], [0.3, 0.4]]).renorm(2, 0, 1.0).tolist()]
    [[0.6, 0.8], [0.3, 0.4]]
"""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from ..declare import tensor_method
from .common import checked_axis, declared, in_place, values_of


@tensor_method("renorm")
def renorm(self: Tensor, p: float, dim: int, maxnorm: float) -> Any:
    """PyTorch's ``renorm(p, dim, maxnorm)``: the slices along ``dim`` with ``p``-norm above ``maxnorm`` scaled
    to have that norm (``p > 0``; ``maxnorm >= 0``)."""
    if self.ndim < 2:
        raise ValueError(f"renorm: needs at least 2 dimensions, got shape {tuple(self.shape)}")
    if not p > 0:
        raise ValueError(f"renorm: p must be positive, got {p}")
    if maxnorm < 0:
        raise ValueError(f"renorm: maxnorm must be non-negative, got {maxnorm}")
    axis = checked_axis(self, dim, "renorm")
    others = tuple(d for d in range(self.ndim) if d != axis)
    norm = declared("vector_norm")(self, ord=p, axis=others, keepdims=True)
    above = values_of(norm, "renorm") > maxnorm if isinstance(norm, Tensor) else norm > maxnorm
    factor = declared("where")(above, declared("divide")(maxnorm, declared("add")(norm, 1e-7)), 1.0)
    return declared("multiply")(self, factor)


def _renorm_values(values: Any, p: float, dim: int, maxnorm: float) -> Any:
    from ...core.state import no_grad

    with no_grad():
        return renorm(Tensor._wrap(values), p, dim, maxnorm)._data


tensor_method("renorm_", in_place("renorm_", _renorm_values))
