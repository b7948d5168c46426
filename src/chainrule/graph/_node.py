"""What the graph tools need to know about a node, for ``Scalar`` and ``Tensor`` alike.

A ``Scalar`` stores its parents in ``_prev`` and one local derivative per parent in
``_local``; a ``Tensor`` stores ``(argnum, parent)`` pairs in ``_parents`` and its
primitive in ``_prim``. Everything else in :mod:`chainrule.graph` goes through here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..scalar import Scalar
from ..tensor import Tensor

SCALAR, TENSOR = "scalar", "tensor"


def kind_of(obj: Any, where: str) -> str:
    """'scalar' or 'tensor'; a clear TypeError for anything else."""
    if isinstance(obj, Scalar):
        return SCALAR
    if isinstance(obj, Tensor):
        return TENSOR
    raise TypeError(
        f"{where}: expected a chainrule Scalar or Tensor (the output of a computation), got {type(obj).__name__}; "
        "build the value with chainrule operations, e.g. Scalar(2.0) * x or Tensor([1.0], requires_grad=True)"
    )


def parents_getter(kind: str) -> Callable[[Any], Sequence[Any]]:
    """A fast function node -> tuple of parent nodes (one entry per edge, repeats kept)."""
    if kind == SCALAR:
        return lambda n: n._prev
    return lambda n: [p for _, p in n._parents]


def parents(node: Any) -> Sequence[Any]:
    if isinstance(node, Scalar):
        return node._prev
    return [p for _, p in node._parents]


def op_name(node: Any) -> str:
    return node._op if isinstance(node, Scalar) else node.op


def label_of(node: Any) -> str:
    return node.label or ""


def argnum(node: Tensor, slot: int) -> int:
    return node._parents[slot][0]


def n_args(node: Tensor) -> int:
    return len(node._args)


def local(node: Scalar, slot: int) -> float:
    return node._local[slot]


def num(v: float) -> str:
    """A short number: integers without '.0', others with 4 significant digits."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.4g}"


def value(v: float) -> str:
    """A node's data or grad, as the seeds print them (4 decimals), shorter when huge or tiny."""
    if not math.isfinite(v) or (v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3)):
        return f"{v:.4g}"
    return f"{v:.4f}"


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def array_text(a: np.ndarray, limit: int = 4) -> str:
    """Small arrays in full (rounded), bigger ones as shape only."""
    if a.size == 1:
        return value(float(a.reshape(-1)[0].real))
    if a.size <= limit:
        return "[" + ", ".join(num(float(x)) for x in a.reshape(-1).real) + "]"
    return shape_text(a.shape)


def data_text(node: Any) -> str:
    if isinstance(node, Scalar):
        return f"data {value(node.data)}"
    d = node.data
    return f"{shape_text(d.shape)} {d.dtype}" + (f" = {array_text(d)}" if d.size <= 4 else "")


def grad_text(node: Any) -> str:
    if isinstance(node, Scalar):
        return f"grad {value(node.grad)}"
    g = node.grad
    if g is None:
        return "grad None"
    raw = g.data if isinstance(g, Tensor) else np.asarray(g)
    return f"grad {array_text(raw)}"


def edge_text(child: Any, slot: int) -> str:
    """The label of the edge into ``child`` from its parent number ``slot``.

    Scalars: the local derivative d(child)/d(parent). Tensors: which argument of the op
    the parent is, when the op takes more than one.
    """
    if isinstance(child, Scalar):
        return num(child._local[slot])
    if n_args(child) > 1:
        return f"arg {argnum(child, slot)}"
    return ""


def name(node: Any) -> str:
    """The label, or the op for unlabeled intermediate nodes, or 'leaf'."""
    return label_of(node) or op_name(node) or "leaf"
