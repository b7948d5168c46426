"""Scalar graphs, build + backward: chainrule.Scalar vs micrograd, PyTorch 0-d tensors, HIPS autograd.

    python bench/bench_scalar.py [--tiny]

The graph: a running value updated by ``v = relu(v * w + b) + v * 0.5`` style steps over a
few leaves, so nodes have two parents and leaves are shared (time per node reported).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import available, median_time, parser, table  # noqa: E402


def build(value_cls, n_nodes):
    """A graph of about n_nodes nodes over 4 leaves; returns (leaves, output)."""
    leaves = [value_cls(0.1 * (i + 1)) for i in range(4)]
    v = leaves[0]
    count = 0
    i = 0
    while count < n_nodes:
        w, b = leaves[i % 4], leaves[(i + 1) % 4]
        v = (v * w + b).relu() + v * 0.5  # 5 nodes
        count += 5
        i += 1
    return leaves, v


def chainrule_run(n):
    from chainrule import Scalar

    def run():
        leaves, out = build(Scalar, n)
        out.backward()
        return leaves[0].grad

    return run


def micrograd_run(n):
    from micrograd.engine import Value

    def run():
        leaves, out = build(Value, n)
        out.backward()
        return leaves[0].grad

    return run


def torch_run(n):
    import torch

    class T:
        """0-d tensors behind the same tiny interface."""

        def __init__(self, x):
            self.t = x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=torch.float64, requires_grad=True)

        def __mul__(self, o):
            return T(self.t * (o.t if isinstance(o, T) else o))

        def __add__(self, o):
            return T(self.t + (o.t if isinstance(o, T) else o))

        def relu(self):
            return T(torch.relu(self.t))

    def run():
        leaves, out = build(T, n)
        out.t.backward()
        return leaves[0].t.grad

    return run


def autograd_run(n):
    import autograd
    import autograd.numpy as anp

    class A:
        def __init__(self, x):
            self.x = x

        def __mul__(self, o):
            return A(self.x * (o.x if isinstance(o, A) else o))

        def __add__(self, o):
            return A(self.x + (o.x if isinstance(o, A) else o))

        def relu(self):
            return A(anp.maximum(self.x, 0.0))

    def g(xs):
        a = [A(xs[i]) for i in range(4)]
        v = a[0]
        count, i = 0, 0
        while count < n:
            w, b = a[i % 4], a[(i + 1) % 4]
            v = (v * w + b).relu() + v * 0.5
            count += 5
            i += 1
        return v.x

    grad = autograd.grad(g)
    return lambda: grad(anp.array([0.1, 0.2, 0.3, 0.4]))


PEERS = {
    "chainrule": (None, chainrule_run),
    "micrograd": ("micrograd", micrograd_run),
    "pytorch (0-d tensors)": ("torch", torch_run),
    "HIPS autograd": ("autograd", autograd_run),
}


def main() -> None:
    args = parser(__doc__).parse_args()
    sizes = [200, 1000] if args.tiny else [1000, 100_000]
    repeats = 1 if args.tiny else args.repeats
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * max(sizes)))  # micrograd recurses
    for n in sizes:
        rows = []
        for name, (module, make) in PEERS.items():
            if module and not available(module):
                rows.append((name, "not installed"))
                continue
            reps = repeats if n <= 1000 else max(1, math.ceil(repeats / 2))
            try:
                rows.append((name, median_time(make(n), reps) / n * 1e6))
            except RecursionError:
                rows.append((name, "RecursionError"))
        table(f"scalar graph of {n} nodes, build + backward (median of {repeats})", "us per node", rows)


if __name__ == "__main__":
    main()
