"""PyTorch's arithmetic, comparison and matrix-product spellings: ``sub(alpha=)``, ``div(rounding_mode=)``,
``eq``, ``rsqrt``, ``addcmul``, ``mm``, ``bmm``, ``addmm``, ``cross``, ..."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...tensor import Tensor
from ..declare import elementwise_op, tensor_method
from .common import also_method, declared, operand_shape, scaled

also_method("add", "add", lambda self, other, *, alpha=1: declared("add")(self, scaled(other, alpha)))
also_method("subtract", "sub", lambda self, other, *, alpha=1: declared("subtract")(self, scaled(other, alpha)))
also_method("multiply", "mul", lambda self, other: declared("multiply")(self, other))


def div(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Any:
    """PyTorch's ``div``: true division; ``rounding_mode="trunc"`` or ``"floor"`` rounds (zero gradient, as PyTorch)."""
    if rounding_mode is None:
        return declared("divide")(self, other)
    if rounding_mode == "floor":
        return declared("floor_divide")(self, other)
    if rounding_mode == "trunc":
        quotient = declared("floor_divide")(self, other)
        if np.dtype(quotient.dtype).kind not in "iu":
            return declared("trunc")(declared("divide")(self, other))
        # integers stay integers, as in PyTorch: floor rounded a negative inexact quotient down, so step it back up
        rounded_down = declared("logical_and")(declared("not_equal")(declared("multiply")(quotient, other), self),
                                               declared("less")(quotient, 0))
        return declared("add")(quotient, declared("astype")(rounded_down, quotient.dtype))
    raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")


also_method("divide", "div", div)
for _name, _method in [("negative", "neg"), ("reciprocal", "reciprocal"), ("sinh", "sinh"), ("cosh", "cosh"),
                       ("erf", "erf"), ("ceil", "ceil"), ("floor", "floor"), ("hypot", "hypot"),
                       ("arctan2", "atan2"), ("fmod", "fmod"), ("mod", "remainder"), ("equal", "eq"),
                       ("not_equal", "ne"), ("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                       ("less_equal", "le"), ("logical_not", "logical_not"), ("isnan", "isnan"),
                       ("isclose", "isclose"), ("allclose", "allclose"), ("array_equal", "equal"),
                       ("inner", "inner")]:
    also_method(_name, _method)

rsqrt = elementwise_op(
    "rsqrt", lambda x: 1.0 / np.sqrt(x), lambda ans, x: -0.5 * ans * ans * ans,
    doc="1 / sqrt(x), elementwise (PyTorch's ``rsqrt``).\n\n    Example:\n        >>> import chainrule as cr\n"
        "        >>> cr.rsqrt(cr.Tensor([4.0]))\n        Tensor([0.5])",
    method=True, domain="positive", torch="torch.rsqrt",
)


def addcmul(self: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    """PyTorch's ``addcmul``: ``self + value * tensor1 * tensor2``."""
    return declared("add")(self, scaled(declared("multiply")(tensor1, tensor2), value))


def addcdiv(self: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    """PyTorch's ``addcdiv``: ``self + value * tensor1 / tensor2``."""
    return declared("add")(self, scaled(declared("divide")(tensor1, tensor2), value))


def lerp(self: Tensor, end: Any, weight: Any) -> Any:
    """PyTorch's ``lerp``: ``self + weight * (end - self)``."""
    return declared("add")(self, declared("multiply")(weight, declared("subtract")(end, self)))


for _method, _body in [("addcmul", addcmul), ("addcdiv", addcdiv), ("lerp", lerp)]:
    tensor_method(_method, _body)  # composites of several ops


# -- matrix products (PyTorch's shapes checked: they do not broadcast) ----------------------------
def _need(name: str, what: str, t: Any, ndim: int) -> None:
    if len(operand_shape(t)) != ndim:
        raise ValueError(f"{name}: {what} must be {ndim}-D, got shape {operand_shape(t)}; use matmul to broadcast")


def mm(self: Tensor, mat2: Any) -> Any:
    """PyTorch's ``mm``: the product of two matrices (2-D only; ``matmul`` broadcasts)."""
    _need("mm", "self", self, 2)
    _need("mm", "mat2", mat2, 2)
    return declared("matmul")(self, mat2)


def bmm(self: Tensor, mat2: Any) -> Any:
    """PyTorch's ``bmm``: batched matrix products of two 3-D Tensors with the same batch size."""
    _need("bmm", "self", self, 3)
    _need("bmm", "mat2", mat2, 3)
    if self.shape[0] != operand_shape(mat2)[0]:
        raise ValueError(f"bmm: batch sizes differ: {self.shape} and {operand_shape(mat2)}")
    return declared("matmul")(self, mat2)


def mv(self: Tensor, vec: Any) -> Any:
    """PyTorch's ``mv``: a matrix times a vector."""
    _need("mv", "self", self, 2)
    _need("mv", "vec", vec, 1)
    return declared("matmul")(self, vec)


def _add_product(self: Tensor, product: Any, beta: Any, alpha: Any) -> Any:
    scaled_product = scaled(product, alpha)
    if beta == 0:  # self ignored, as PyTorch
        return scaled_product
    return declared("add")(scaled(self, beta), scaled_product)


def addmm(self: Tensor, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """PyTorch's ``addmm``: ``beta * self + alpha * (mat1 @ mat2)``."""
    return _add_product(self, mm(mat1, mat2) if isinstance(mat1, Tensor) else mm(Tensor(mat1), mat2), beta, alpha)


def baddbmm(self: Tensor, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """PyTorch's ``baddbmm``: ``beta * self + alpha * (batch1 @ batch2)``, batched."""
    return _add_product(self, bmm(batch1 if isinstance(batch1, Tensor) else Tensor(batch1), batch2), beta, alpha)


def addmv(self: Tensor, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """PyTorch's ``addmv``: ``beta * self + alpha * (mat @ vec)``."""
    return _add_product(self, mv(mat if isinstance(mat, Tensor) else Tensor(mat), vec), beta, alpha)


def addbmm(self: Tensor, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """PyTorch's ``addbmm``: ``beta * self + alpha * sum_b (batch1[b] @ batch2[b])``."""
    product = bmm(batch1 if isinstance(batch1, Tensor) else Tensor(batch1), batch2)
    return _add_product(self, declared("sum")(product, axis=0), beta, alpha)


for _method, _body in [("mm", mm), ("bmm", bmm), ("mv", mv), ("addmm", addmm), ("baddbmm", baddbmm),
                       ("addmv", addmv), ("addbmm", addbmm)]:
    also_method("matmul", _method, _body)


def outer(self: Tensor, vec2: Any) -> Any:
    """PyTorch's ``outer``: the outer product of two vectors."""
    _need("outer", "self", self, 1)
    _need("outer", "vec2", vec2, 1)
    return declared("outer")(self, vec2)


def cross(self: Tensor, other: Any, dim: int | None = None) -> Any:
    """PyTorch's ``cross``: the cross product along ``dim`` (default: the first dimension of size 3)."""
    if dim is None:
        sizes = np.broadcast_shapes(self.shape, operand_shape(other))
        dim = next((i for i, n in enumerate(sizes) if n == 3), None)
        if dim is None:
            raise ValueError(f"cross: no dimension of size 3 in shape {sizes}; pass dim=")
    return declared("cross")(self, other, axis=dim)


def addr(self: Tensor, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    """PyTorch's ``addr``: ``beta * self + alpha * outer(vec1, vec2)``."""
    return _add_product(self, outer(vec1 if isinstance(vec1, Tensor) else Tensor(vec1), vec2), beta, alpha)


also_method("outer", "outer", outer)
also_method("outer", "ger", outer)
also_method("outer", "addr", addr)
also_method("abs", "absolute", lambda self: declared("abs")(self))
also_method("cross", "cross", cross)
