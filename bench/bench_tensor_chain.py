"""Small tensors, many ops: 4x4 arrays through 100 elementwise ops, forward + backward.

    python bench/bench_tensor_chain.py [--tiny]

This measures per-op overhead (the arrays are tiny), against PyTorch eager, HIPS autograd,
MyGrad and the same computation written by hand in NumPy (forward and backward). The "floor" row is
the leanest reverse-mode engine we could write in Python (``_floor_engine.py``: no features, no
checks): what an eager Python engine cannot go below.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import available, median_time, parser, table  # noqa: E402


def ops(x, w, tanh, n_ops):
    """n_ops elementwise ops: x = tanh(x * w + x) repeated (3 ops per step)."""
    for _ in range(n_ops // 3):
        x = tanh(x * w + x)
    return x


def make_chainrule(x0, w0, n_ops):
    import chainrule as cr

    def run():
        x = cr.Tensor(x0, requires_grad=True)
        w = cr.Tensor(w0, requires_grad=True)
        ops(x, w, cr.tanh, n_ops).sum().backward()
        return x.grad

    return run


def make_chainrule_jit(x0, w0, n_ops):
    import chainrule as cr

    try:
        f = cr.jit(lambda x, w: ops(x, w, cr.tanh, n_ops).sum())
    except AttributeError:  # a chainrule without jit
        return None

    def run():
        x = cr.Tensor(x0, requires_grad=True)
        w = cr.Tensor(w0, requires_grad=True)
        f(x, w).backward()
        return x.grad

    return run


def make_torch(x0, w0, n_ops):
    import torch

    def run():
        x = torch.tensor(x0, requires_grad=True)
        w = torch.tensor(w0, requires_grad=True)
        ops(x, w, torch.tanh, n_ops).sum().backward()
        return x.grad

    return run


def make_autograd(x0, w0, n_ops):
    import autograd
    import autograd.numpy as anp

    g = autograd.grad(lambda x, w: anp.sum(ops(x, w, anp.tanh, n_ops)), argnum=(0, 1))
    return lambda: g(x0, w0)


def make_mygrad(x0, w0, n_ops):
    import mygrad as mg

    def run():
        x = mg.tensor(x0)
        w = mg.tensor(w0)
        ops(x, w, mg.tanh, n_ops).sum().backward()
        return x.grad

    return run


def make_floor(x0, w0, n_ops):
    import _floor_engine as floor

    def run():
        x, w = floor.leaf(x0), floor.leaf(w0)
        y = ops(x, w, floor.tanh, n_ops)
        y.data.sum()  # the forward's sum (the sweep is seeded with ones, its gradient)
        return floor.backward(y)[x]

    return run


def make_numpy(x0, w0, n_ops):
    def run():
        xs, x = [], x0
        for _ in range(n_ops // 3):
            xs.append(x)
            x = np.tanh(x * w0 + x)
            xs.append(x)
        g = np.ones_like(x)
        gw = np.zeros_like(w0)
        for i in range(n_ops // 3 - 1, -1, -1):
            inp, out = xs[2 * i], xs[2 * i + 1]
            gu = g * (1 - out * out)
            gw += gu * inp
            g = gu * w0 + gu
        return g, gw

    return run


PEERS = {
    "chainrule": (None, make_chainrule),
    "chainrule.jit (replayed)": (None, make_chainrule_jit),
    "pytorch eager": ("torch", make_torch),
    "HIPS autograd": ("autograd", make_autograd),
    "MyGrad": ("mygrad", make_mygrad),
    "floor: leanest Python engine": (None, make_floor),
    "NumPy by hand": (None, make_numpy),
}


def main() -> None:
    args = parser(__doc__).parse_args()
    n_ops = 30 if args.tiny else 99
    repeats = 1 if args.tiny else max(args.repeats, 20)
    rng = np.random.default_rng(0)
    x0, w0 = rng.standard_normal((4, 4)), rng.standard_normal((4, 4)) * 0.5
    if available("torch"):
        import torch

        torch.set_num_threads(1)
    rows = []
    for name, (module, make) in PEERS.items():
        if module and not available(module):
            rows.append((name, "not installed"))
            continue
        run = make(x0, w0, n_ops)
        if run is None:
            rows.append((name, "not available"))
            continue
        run()  # warm up
        rows.append((name, median_time(run, repeats) / n_ops * 1e6))
    table(f"4x4 tensors, {n_ops} elementwise ops, forward + backward (median of {repeats})", "us per op", rows)


if __name__ == "__main__":
    main()
