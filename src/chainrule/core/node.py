"""The graph node: one recorded call of a primitive, and what its rules will read.

A node is not its output. The values layer hands out output tensors that point at their node
(and at their position among the node's outputs); the node points at its parents, never at
its outputs, so an output dropped by the program is freed at once, and a node holds only what
its primitive declared its rules read (see ``Primitive(reads=...)``).

A parent is either another :class:`Node` or a *leaf*: any other object (the values layer uses
a Tensor that requires grad), which the reverse sweep only collects gradients for. Each edge
is the tuple ``(argnum, parent, index, shape, dtype)``:

- ``argnum``: the position of the argument in the call;
- ``parent``: the node that computed it, or the leaf itself;
- ``index``: which output of a multi-output parent it is (None: the parent's only output);
- ``shape``, ``dtype``: the argument's, so a gradient can be reduced to it (broadcasting
  undone) even when its value was not kept.

Example:
    >>> import numpy as np
    >>> from chainrule.core.node import Node, unbroadcast
    >>> Node.__slots__[:5]
    ('prim', 'parents', 'ans', 'args', 'kw')
    >>> unbroadcast(np.ones((3, 2)), (2,), np.dtype(float))
    array([3., 3.])
"""

from __future__ import annotations

from math import prod as _size
from typing import Any

import numpy as np

from . import clock

_SMALL = 4096  # entries: below this, unbroadcast writes a broadcast gradient into a new array (see there)


class Node:
    """One recorded primitive call (see the module docstring).

    ``prim``: the primitive (anything with ``vjp(argnum, g, node, lift)``, ``n_outputs``,
    ``keeps`` and ``fast_vjps``, see :func:`~chainrule.core.sweep.backward_sweep`); ``parents``: its
    edges; ``ans``: the output value(s) its rules read, or None; ``args``: the argument values
    its rules read (None in the places they do not), or None once freed by a backward pass;
    ``kw``: the keyword arguments (or None); ``stamp``: its creation time on the version
    clock; ``outputs``: ``{output index: [weak reference, keeps its grad, label, hooks]}`` for outputs the
    program linked to their node (``retain_grad``, ``register_hook``, a label for pictures), or None;
    ``lifted``: ``{output index: Tensor}``, the outputs rebuilt as graph values (for a
    differentiable backward pass and the pictures; the values layer's cache), or None.
    """

    __slots__ = ("prim", "parents", "ans", "args", "kw", "stamp", "outputs", "lifted")

    def __init__(self, prim: Any, parents: tuple, ans: Any, args: Any, kw: Any, stamp: int) -> None:
        self.prim = prim
        self.parents = parents
        self.ans = ans
        self.args = args
        self.kw = kw
        self.stamp = stamp
        self.outputs: dict[Any, Any] | None = None
        self.lifted: Any = None

    def __lt__(self, other: Node) -> bool:
        # the reverse sweep orders nodes by (-stamp, node): two nodes made with one stamp (by hand) tie-break here
        return id(self) < id(other)

    @property
    def n_outputs(self) -> int:
        """How many outputs the call returned (a tuple of them when more than one)."""
        return getattr(self.prim, "n_outputs", 1)

    @property
    def freed(self) -> bool:
        """True once a backward pass without ``retain_graph`` has released what the rules read."""
        return self.args is None

    def __repr__(self) -> str:
        name = getattr(self.prim, "name", type(self.prim).__name__)
        return f"<Node {name} stamp={self.stamp} parents={len(self.parents)}{' freed' if self.freed else ''}>"


def check_saved(node: Node) -> None:
    """Raise if an array the node's rules read was changed in place after the node was made."""
    stamp = node.stamp
    if clock.last_change[0] < stamp:
        return  # nothing anywhere changed in place since this node was made
    ans = node.ans
    for v in (*(ans if isinstance(ans, tuple) else (ans,)), *node.args):
        if clock.changed_after(v, stamp):
            raise RuntimeError(
                f"backward: a tensor of shape {np.shape(v)} needed by the gradient of "
                f"'{getattr(node.prim, 'name', node.prim)}' was modified in place after it was used; the gradient "
                "would be wrong. Compute on a copy (t = t.copy()) or make the change before using the tensor. "
                "(PyTorch's words: one of the variables needed for gradient computation has been modified by an "
                "inplace operation.)"
            )


def freed_error(node: Node) -> RuntimeError:
    return RuntimeError(
        f"backward: trying to go through the graph a second time (at '{getattr(node.prim, 'name', node.prim)}'), "
        "but the values its gradient reads were freed after the first backward pass. Pass retain_graph=True to "
        "the first backward() (or grad()) if you need to differentiate the same graph again (PyTorch's words: "
        "Specify retain_graph=True if you need to backward through the graph a second time)"
    )


def unbroadcast(g: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """Sum a gradient over broadcast axes (or broadcast it) to ``shape``, in ``dtype``.

    ``g`` is an ndarray, a number, or a graph value with the ndarray methods (a Tensor, when a
    backward pass is itself recorded). A complex gradient for a real input keeps its real part
    (JAX's rule: the real input's perturbations only reach the real part of ``real(g * t)``).

    Raises ValueError when ``g`` is neither broadcast from nor broadcastable to ``shape`` (a rule
    that returned the wrong shape must not give a silently wrong gradient).
    """
    array = isinstance(g, np.ndarray)
    if not array and isinstance(g, (int, float, complex, np.generic, list, tuple)):  # a number, not an array
        g, array = np.asarray(g), True
    gshape = g.shape
    if gshape != shape:
        lead = len(gshape) - len(shape)
        if lead > 0 or (lead == 0 and 1 in shape):
            axes = tuple(range(lead)) + tuple(
                i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1
            )
            if axes:
                g = g.sum(axis=axes)
        if g.shape != shape:
            same_size = not array or g.size == _size(shape)  # (a cheap first test for arrays)
            if same_size and tuple(n for n in g.shape if n != 1) == tuple(n for n in shape if n != 1):
                g = g.reshape(shape)  # only size-1 axes differ (e.g. kept reduced axes)
            elif array and _size(shape) <= _SMALL:
                # a small array: a new one costs ~0.3 us, broadcast_to's Python-level set-up ~2 us
                out = np.empty(shape, g.dtype)
                out[...] = g  # g has no more axes than shape here: the same rule as broadcast_to (and error)
                g = out
            else:
                g = np.broadcast_to(g, shape)  # raises for shapes that don't fit
    if not array:  # a graph value: differentiable conversions
        if g.dtype == dtype:
            return g
        if g.dtype.kind == "c" and np.dtype(dtype).kind != "c":
            g = np.real(g)
        return g if g.dtype == dtype else g.astype(dtype)
    if g.dtype != dtype:
        if g.dtype.kind == "c" and np.dtype(dtype).kind != "c":
            g = g.real
        return np.asarray(g, dtype=dtype)
    return g if type(g) is np.ndarray else np.asarray(g)
