"""The node-view protocol: what the graph tools need to know about a node.

Every node, ``Scalar`` or ``Tensor``, provides ``label``, ``op`` ('' for a leaf), ``data``,
``grad`` and ``parents`` (one entry per edge, so ``x * x`` lists ``x`` twice); the tools read
those directly. What differs between the two kinds is what an edge carries, and that is
all a :class:`NodeView` adds:

- a ``Scalar`` edge carries a number, the local derivative d(child)/d(parent);
- a ``Tensor`` edge carries a vector-Jacobian product (VJP), shown by its argument position.

:func:`view_of` is the one place that tells the kinds apart.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...autodiff.backprop import grad as tensor_grad
from ...core.node import check_saved
from ...core.sparse import densify
from ...core.state import no_grad
from ...core.sweep import edge_gradient
from ...scalar import Scalar
from ...tensor import Tensor
from .format import array_text, num, shape_text, value


class NodeView:
    """How to read the edges and values of one kind of node (see the module docstring).

    For pictures: ``data_text``, ``grad_text``, ``edge_label`` and the networkx attributes.
    For :func:`~chainrule.graph.explain`: ``seed`` (d final / d out), ``carry`` (a gradient
    across one edge, child to parent), ``chain_entry`` (what a path lists for that edge),
    ``backward_gradient`` (what ``backward()`` gives), ``agree``, ``add`` and ``zero``.
    """

    kind = ""
    edge_word = ""  # before the edge label in text trees
    numeric_edges = False

    def accepts(self, obj: Any) -> bool:
        raise NotImplementedError

    def data_text(self, node: Any) -> str:
        raise NotImplementedError

    def grad_text(self, node: Any) -> str:
        raise NotImplementedError

    def edge_label(self, child: Any, slot: int) -> str:
        raise NotImplementedError

    def node_attrs(self, node: Any) -> dict[str, Any]:
        raise NotImplementedError

    def edge_attrs(self, child: Any, slot: int) -> dict[str, Any]:
        raise NotImplementedError

    def seed(self, out: Any, gradient: Any) -> Any:
        raise NotImplementedError

    def carry(self, child: Any, slot: int, g: Any) -> Any:
        raise NotImplementedError

    def chain_entry(self, child: Any, slot: int, parent: Any, carried: Any) -> Any:
        raise NotImplementedError

    def backward_gradient(self, out: Any, wrt: Any, seed: Any, nodes: Sequence[Any]) -> Any:
        raise NotImplementedError

    def agree(self, a: Any, b: Any) -> bool:
        raise NotImplementedError

    def add(self, a: Any, b: Any) -> Any:
        return a + b

    def zero(self, wrt: Any) -> Any:
        raise NotImplementedError

    def sum(self, values: list[Any]) -> Any:
        raise NotImplementedError

    def not_recording(self) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()


class ScalarView(NodeView):
    kind = "scalar"
    edge_word = "local "
    numeric_edges = True

    def accepts(self, obj: Any) -> bool:
        return isinstance(obj, Scalar)

    def data_text(self, node: Any) -> str:
        return f"data {value(node.data)}"

    def grad_text(self, node: Any) -> str:
        return f"grad {value(node.grad)}"

    def edge_label(self, child: Any, slot: int) -> str:
        return num(child.local_derivatives[slot])

    def node_attrs(self, node: Any) -> dict[str, Any]:
        return {"data": node.data, "grad": node.grad}

    def edge_attrs(self, child: Any, slot: int) -> dict[str, Any]:
        return {"local": child.local_derivatives[slot]}

    def seed(self, out: Any, gradient: Any) -> float:
        return 1.0 if gradient is None else float(gradient)

    def carry(self, child: Any, slot: int, g: float) -> float:
        return g * child.local_derivatives[slot]

    def chain_entry(self, child: Any, slot: int, parent: Any, carried: Any) -> float:
        return child.local_derivatives[slot]

    def backward_gradient(self, out: Any, wrt: Any, seed: float, nodes: Sequence[Any]) -> float:
        """``out.backward(seed)`` read at ``wrt``, leaving every ``.grad`` as it was."""
        saved = [n.grad for n in nodes]
        try:
            for n in nodes:
                n.grad = 0.0
            out.backward(seed)
            return wrt.grad
        finally:
            for n, v in zip(nodes, saved, strict=True):
                n.grad = v

    def agree(self, a: float, b: float) -> bool:
        """Agreement up to rounding; NaN agrees with NaN (a NaN gradient is explained by a NaN sum)."""
        if math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)

    def zero(self, wrt: Any) -> float:
        return 0.0

    def sum(self, values: list[float]) -> float:
        return math.fsum(values)


@dataclass
class VJPStep:
    """One edge of a Tensor path: ``op`` takes the gradient of its output (``g_shape``) back to
    its argument ``argnum`` (``out_shape``); ``value`` is the gradient after this step."""

    op: str
    argnum: int
    g_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    value: np.ndarray = field(repr=False)

    def __str__(self) -> str:
        return f"{self.op} (arg {self.argnum}): vjp {shape_text(self.g_shape)} -> {shape_text(self.out_shape)}"


class TensorView(NodeView):
    kind = "tensor"

    def accepts(self, obj: Any) -> bool:
        return isinstance(obj, Tensor)

    def data_text(self, node: Any) -> str:
        d = node._data
        if not node.value_kept:  # an intermediate value no rule reads: the graph did not keep it
            return f"{shape_text(d.shape)} {d.dtype}"
        return f"{shape_text(d.shape)} {d.dtype}" + (f" = {array_text(d)}" if d.size <= 4 else "")

    def grad_text(self, node: Any) -> str:
        g = node.grad
        if g is None:
            return "grad None"
        return f"grad {array_text(np.asarray(g._data if isinstance(g, Tensor) else g))}"

    def _argnum(self, child: Any, slot: int) -> int:
        return child._node.parents[slot][0]

    def edge_label(self, child: Any, slot: int) -> str:
        return f"arg {self._argnum(child, slot)}" if len(child._node.args or child._node.parents) > 1 else ""

    def node_attrs(self, node: Any) -> dict[str, Any]:
        return {"shape": node.shape, "dtype": str(node.dtype)}

    def edge_attrs(self, child: Any, slot: int) -> dict[str, Any]:
        return {"argnum": self._argnum(child, slot)}

    def seed(self, out: Any, gradient: Any) -> np.ndarray:
        if gradient is None:
            if out._data.size != 1:
                raise ValueError(
                    f"explain: the output has shape {out.shape}, not one element; pass gradient= an array of shape "
                    f"{out.shape} (d final / d out), or explain a scalar such as out.sum()"
                )
            return np.ones_like(out._data)
        raw = np.asarray(gradient._data if isinstance(gradient, Tensor) else gradient, dtype=out._data.dtype)
        if raw.shape != out.shape:
            raise ValueError(f"explain: gradient has shape {raw.shape} but the output has shape {out.shape}")
        return raw

    def carry(self, child: Any, slot: int, g: Any) -> Any:
        node = child._node
        if node.freed:  # (said in explain's terms: the user called explain, not backward, and may not know why)
            raise RuntimeError(
                f"explain: the values the gradient of '{getattr(node.prim, 'name', node.prim)}' reads were freed by "
                "an earlier backward(); explain before calling backward() (explain runs its own backward without "
                "changing any .grad), or call backward(retain_graph=True)"
            )
        check_saved(node)
        return densify(edge_gradient(node, node.parents[slot], g, None))

    def chain_entry(self, child: Any, slot: int, parent: Any, carried: Any) -> VJPStep:
        return VJPStep(child.op, self._argnum(child, slot), child.shape, parent.shape, np.asarray(carried))

    def backward_gradient(self, out: Any, wrt: Any, seed: Any, nodes: Sequence[Any]) -> np.ndarray:
        (g,) = tensor_grad(out, wrt, grad_outputs=seed, retain_graph=True)  # explaining must not free the graph
        return np.asarray(g._data)

    def agree(self, a: Any, b: Any) -> bool:
        """Equal up to the rounding of their dtype (NaN agrees with NaN)."""
        a, b = np.asarray(a), np.asarray(b)
        rtol = 1e-7 if np.result_type(a, b).itemsize >= 8 else 1e-3
        scale = float(np.max(np.abs(b), initial=0.0)) if np.all(np.isfinite(b)) else 1.0
        return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=rtol * max(scale, 1.0), equal_nan=True))

    def zero(self, wrt: Any) -> np.ndarray:
        return np.zeros_like(wrt._data)

    def sum(self, values: list[Any]) -> np.ndarray:
        return np.sum(values, axis=0)

    def not_recording(self) -> contextlib.AbstractContextManager[Any]:
        return no_grad()


VIEWS: tuple[NodeView, ...] = (ScalarView(), TensorView())


def view_of(obj: Any, where: str) -> NodeView:
    """The view for ``obj``'s kind; a clear TypeError for anything that is not a graph node."""
    for view in VIEWS:
        if view.accepts(obj):
            return view
    raise TypeError(
        f"{where}: expected a chainrule Scalar or Tensor (the output of a computation), got {type(obj).__name__}; "
        "build the value with chainrule operations, e.g. Scalar(2.0) * x or Tensor([1.0], requires_grad=True)"
    )
