"""Convolution benchmark: one forward + backward of ``conv2d`` (input, weight and bias all get gradients),
chainrule vs PyTorch eager (CPU), both on one thread (OpenBLAS capped by chainrule.runtime.blas, torch by
``torch.set_num_threads(1)``), float32, medians of repeats.

    python bench/bench_conv.py            # the layers of a small CIFAR CNN
    python bench/bench_conv.py --tiny     # seconds, for CI
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.runtime.blas import blas_threads_limited

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import available, median_time, parser, table  # noqa: E402

# (input shape, weight shape, keyword arguments): a first layer, a middle one, a strided one, a depthwise one
LAYERS = [
    ((32, 3, 32, 32), (16, 3, 3, 3), {"padding": 1}),
    ((32, 16, 16, 16), (32, 16, 3, 3), {"padding": 1}),
    ((32, 32, 16, 16), (32, 32, 3, 3), {"stride": 2, "padding": 1}),
    ((32, 32, 16, 16), (32, 1, 3, 3), {"padding": 1, "groups": 32}),
]


def rows(xs: tuple[int, ...], ws: tuple[int, ...], kw: dict[str, Any], repeats: int) -> list[tuple[str, float]]:
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=xs).astype(np.float32), rng.normal(size=ws).astype(np.float32)
    b = np.zeros(ws[0], np.float32)

    def chainrule_step() -> None:
        xt, wt, bt = (cr.Tensor(a, requires_grad=True) for a in (x, w, b))
        F.conv2d(xt, wt, bt, **kw).sum().backward()

    out = [("chainrule", median_time(chainrule_step, repeats) * 1e3)]
    torch = available("torch")
    if torch is not None:
        tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))

        def torch_step() -> None:
            for t in (tx, tw, tb):
                t.grad = None
            torch.nn.functional.conv2d(tx, tw, tb, **kw).sum().backward()

        out.append(("PyTorch eager", median_time(torch_step, repeats) * 1e3))
    return out


def main() -> None:
    args = parser(__doc__).parse_args()
    repeats = 1 if args.tiny else args.repeats
    torch = available("torch")
    if torch is not None:
        torch.set_num_threads(1)
    layers = [((2, xs[1], 8, 8), ws, kw) for xs, ws, kw in LAYERS] if args.tiny else LAYERS
    with blas_threads_limited(1):
        for xs, ws, kw in layers:
            table(f"conv2d forward + backward, input {xs}, weight {ws}, {kw} (median of {repeats})", "ms",
                  rows(xs, ws, kw, repeats))


if __name__ == "__main__":
    main()
