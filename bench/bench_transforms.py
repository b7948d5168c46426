"""Jacobians and Hessians of plain NumPy functions: chainrule vs PyTorch (and HIPS autograd).

    python bench/bench_transforms.py [--tiny]

- Hessian of a scalar function of 100 variables (a smooth "energy");
- Jacobian of a map R^100 -> R^100, by reverse and by forward mode.
PyTorch uses torch.autograd.functional.hessian / jacobian on the CPU; each library gets the
same function written in its own array API.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import available, median_time, parser, table  # noqa: E402


def energy(np_, A, x):
    """sum(tanh(A x)^2) + sum(x^4) / 4: a dense, non-separable Hessian."""
    y = np_.tanh(A @ x)
    return (y * y).sum() + (x**4).sum() / 4


def vector_map(np_, A, x):
    return np_.sin(A @ x) * x


def rows_hessian(n: int, repeats: int):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(n, n)) / np.sqrt(n)
    x = rng.normal(size=n)
    rows = []
    import chainrule as cr

    rows.append(("chainrule hessian", median_time(lambda: cr.hessian(lambda v: energy(np, A, v))(x), repeats)))
    if available("torch"):
        import torch

        At, xt = torch.tensor(A), torch.tensor(x)
        f = lambda v: energy(torch, At, v)  # noqa: E731
        rows.append(("pytorch functional.hessian",
                     median_time(lambda: torch.autograd.functional.hessian(f, xt), repeats)))
    if available("autograd"):
        import autograd
        import autograd.numpy as anp

        rows.append(("HIPS autograd hessian",
                     median_time(lambda: autograd.hessian(lambda v: energy(anp, A, v))(x), repeats)))
    return rows


def rows_jacobian(n: int, repeats: int):
    rng = np.random.default_rng(1)
    A = rng.normal(size=(n, n)) / np.sqrt(n)
    x = rng.normal(size=n)
    import chainrule as cr

    f = lambda v: vector_map(np, A, v)  # noqa: E731
    rows = [
        ("chainrule jacobian (rev)", median_time(lambda: cr.jacobian(f, mode="rev")(x), repeats)),
        ("chainrule jacobian (fwd)", median_time(lambda: cr.jacobian(f, mode="fwd")(x), repeats)),
    ]
    if available("torch"):
        import torch

        At, xt = torch.tensor(A), torch.tensor(x)
        g = lambda v: vector_map(torch, At, v)  # noqa: E731
        rows.append(("pytorch functional.jacobian", median_time(lambda: torch.autograd.functional.jacobian(g, xt),
                                                                repeats)))
    if available("autograd"):
        import autograd
        import autograd.numpy as anp

        rows.append(("HIPS autograd jacobian",
                     median_time(lambda: autograd.jacobian(lambda v: vector_map(anp, A, v))(x), repeats)))
    return rows


def main() -> None:
    args = parser(__doc__).parse_args()
    n = 10 if args.tiny else 100
    repeats = 1 if args.tiny else args.repeats
    if available("torch"):
        import torch

        torch.set_num_threads(1)
    table(f"Hessian of a scalar function of {n} variables (median of {repeats})", "ms",
          [(k, v * 1e3) for k, v in rows_hessian(n, repeats)], baseline="chainrule hessian")
    table(f"Jacobian of R^{n} -> R^{n} (median of {repeats})", "ms",
          [(k, v * 1e3) for k, v in rows_jacobian(n, repeats)], baseline="chainrule jacobian (rev)")


if __name__ == "__main__":
    main()
