"""Recurrent layers: chainrule's nn.LSTM / nn.GRU vs PyTorch's (CPU), forward + backward.

    python bench/bench_rnn.py [--tiny] [--threads 1]

A 2-layer LSTM(32 -> 64) and GRU(32 -> 64) on a batch (L=16, N=8, 32), sequence first: one forward,
the sum of the output, one backward (every parameter's gradient), in float32 and float64. Both
libraries run with the same number of threads (NumPy's OpenBLAS through chainrule.runtime.blas,
``torch.set_num_threads``). chainrule's layers are ordinary ops in a Python loop over time steps, so the
time is mostly per-op bookkeeping (about 16 ops per LSTM step), which PyTorch's fused kernels do not pay.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import available, median_time, parser, table  # noqa: E402


def rows(kind: str, dtype: type, shape: tuple[int, int, int], hidden: int, repeats: int) -> list[tuple[str, float]]:
    from chainrule import nn

    x = np.random.default_rng(0).normal(size=shape).astype(dtype)
    ours = getattr(nn, kind)(shape[2], hidden, num_layers=2, dtype=dtype, rng=0)

    def step_ours() -> None:
        ours.zero_grad()
        ours(x)[0].sum().backward()

    out = [("chainrule", median_time(step_ours, repeats) * 1e3)]
    if available("torch"):
        import torch

        theirs = getattr(torch.nn, kind)(shape[2], hidden, num_layers=2,
                                         dtype=torch.float32 if dtype == np.float32 else torch.float64)
        xt = torch.tensor(x)

        def step_theirs() -> None:
            theirs.zero_grad()
            theirs(xt)[0].sum().backward()

        out.append(("pytorch", median_time(step_theirs, repeats) * 1e3))
    return out


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    shape, hidden = ((3, 2, 4), 5) if args.tiny else ((16, 8, 32), 64)
    repeats = 1 if args.tiny else args.repeats
    if available("torch"):
        import torch

        torch.set_num_threads(args.threads)
    from chainrule.runtime.blas import blas_threads_limited

    with blas_threads_limited(args.threads):
        for kind in ("LSTM", "GRU"):
            for dtype in (np.float32, np.float64):
                table(f"{kind}({shape[2]} -> {hidden}, 2 layers), input {shape}, {np.dtype(dtype).name}, forward + "
                      f"backward (median of {repeats}, {args.threads} thread(s))", "ms",
                      rows(kind, dtype, shape, hidden, repeats))


if __name__ == "__main__":
    main()
