"""The seeds' example graphs, shared by the tests/test_graph*.py files."""

from __future__ import annotations

import numpy as np

import chainrule as cr
from chainrule import Scalar


def seed002():
    """f = b * ((a + b) * (a - b)) with every node labelled, after backward()."""
    a, b = Scalar(1.0, label="a"), Scalar(2.0, label="b")
    c = a + b
    c.label = "c"
    d = a - b
    d.label = "d"
    e = c * d
    e.label = "e"
    f = e * b
    f.label = "f"
    f.backward()
    return {"a": a, "b": b, "c": c, "d": d, "e": e, "f": f}


def seed000_loss():
    """L = (y - (m x + c)) (y - (m x + c)), both factors built separately, as in seed 000."""
    y, m, x, c = (Scalar(v, label=n) for v, n in [(1.0, "y"), (2.0, "m"), (3.0, "x"), (4.0, "c")])
    left = y - (m * x + c)
    right = y - (m * x + c)
    L = left * right
    L.label = "L"
    return {"y": y, "m": m, "x": x, "c": c, "L": L}


def seed000_z():
    """z = (x + c) x: two paths from z to x."""
    x, c = Scalar(3.0, label="x"), Scalar(4.0, label="c")
    z = (x + c) * x
    z.label = "z"
    return {"x": x, "c": c, "z": z}


def diamonds(n: int):
    """n diamonds in a row (b = 2a, c = 3a, a' = b + c): depth 2n, 2**n paths, derivative 5**n."""
    x = Scalar(1.0, label="x")
    a = x
    for _ in range(n):
        a = (a * 2.0) + (a * 3.0)
    a.label = "out"
    return x, a


def tensor_mlp(seed: int = 0):
    """loss = sum(tanh(x @ W) * (x @ W) + sum(x)): three paths from loss to x."""
    rng = np.random.default_rng(seed)
    x = cr.Tensor(rng.normal(size=(2, 3)), requires_grad=True, label="x")
    W = cr.Tensor(rng.normal(size=(3, 4)), requires_grad=True, label="W")
    h = x @ W
    h.label = "h"
    loss = (cr.tanh(h) * h + x.sum()).sum()
    loss.label = "loss"
    return x, W, loss


def chain(n: int):
    """A Scalar chain of n operations (alternating + x and * constant): n + 1 nodes."""
    x = Scalar(0.5, label="x")
    y = x
    for i in range(n):
        y = y * 1.0000001 if i % 2 else y + x
    return x, y
