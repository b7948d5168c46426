"""The floor for small ops: the leanest reverse-mode engine we could write in Python for the 4x4 chain.

It has what any eager engine must do per op (a value object, a node with its parents and what its
rule reads, a reverse sweep in creation order that sums gradients) and nothing else: no hooks, no
in-place checks, no forward mode, no vmap, no broadcasting, no dtype checks, no error messages. A
real engine can only be slower; ``bench_tensor_chain.py`` prints it beside chainrule to show how far
chainrule's per-op cost is from what Python itself allows.
"""

from __future__ import annotations

import itertools
from heapq import heappop, heappush
from typing import Any

import numpy as np

_tick = itertools.count().__next__
_new = object.__new__


class Var:
    __slots__ = ("data", "node")  # node: (stamp, rule, parents, saved) or None for a leaf


def _mul_vjp(g: Any, saved: Any) -> tuple[Any, Any]:
    return g * saved[1], g * saved[0]


def _add_vjp(g: Any, saved: Any) -> tuple[Any, Any]:
    return g, g


def _tanh_vjp(g: Any, saved: Any) -> tuple[Any]:
    return (g * (1 - saved * saved),)


def _record(data: Any, rule: Any, parents: tuple, saved: Any) -> Var:
    out = _new(Var)
    out.data = data
    out.node = (_tick(), rule, parents, saved)
    return out


def _mul(x: Var, y: Var) -> Var:
    return _record(x.data * y.data, _mul_vjp, (x, y), (x.data, y.data))


def _add(x: Var, y: Var) -> Var:
    return _record(x.data + y.data, _add_vjp, (x, y), None)


Var.__mul__ = _mul
Var.__add__ = _add


def tanh(x: Var) -> Var:
    data = np.tanh(x.data)
    return _record(data, _tanh_vjp, (x,), data)


def leaf(data: Any) -> Var:
    v = _new(Var)
    v.data, v.node = data, None
    return v


def backward(root: Var) -> dict[Var, Any]:
    """d sum(root) / d leaf for every leaf; the gradient of every value is kept in one dict."""
    grads = {root: np.ones_like(root.data)}
    pending = [(-root.node[0], root)]
    while pending:
        var = heappop(pending)[1]
        _, rule, parents, saved = var.node
        for parent, pg in zip(parents, rule(grads.pop(var), saved)):
            prev = grads.get(parent)
            if prev is None:
                grads[parent] = pg
                if parent.node is not None:
                    heappush(pending, (-parent.node[0], parent))
            else:
                grads[parent] = prev + pg
    return grads
