"""Four optimisers on two classic surfaces: gradient descent, momentum, Nesterov and Adam.

    python examples/05_optimizers.py [--out DIR]

Rosenbrock's curved valley is slow for plain gradient descent; momentum gets through it much
faster. Himmelblau's function has four minima: a grid of starts finds all of them.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from chainrule.optimize import minimize


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def himmelblau(x):
    return (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


SETTINGS = {  # learning rates that work for each method on Rosenbrock (Adam with a decaying rate)
    "gd": dict(lr=1.9e-3),
    "momentum": dict(lr=1e-3),
    "nesterov": dict(lr=1e-3),
    "adam": dict(lr=lambda t: 0.1 / (1 + t / 1000)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for the pictures (default: a temp folder)")
    out = parser.parse_args().out or Path(tempfile.mkdtemp(prefix="chainrule-example-"))

    print("Rosenbrock from (-1.2, 1), 2000 steps at most:")
    runs = {}
    for method, kw in SETTINGS.items():
        r = minimize(rosenbrock, np.array([-1.2, 1.0]), method=method, steps=2000, tol=1e-7, **kw)
        runs[method] = r
        print(
            f"  {method:<9} x = {np.array2string(r.x, precision=6)}  f = {r.fun:.2e}  steps {r.n_steps}"
            + ("  (converged)" if r.converged else "")
        )

    grid = np.linspace(-4.5, 4.5, 7)
    starts = np.array([(a, b) for a in grid for b in grid])
    r = minimize(himmelblau, starts, method="adam", lr=0.1, steps=3000, tol=1e-8)
    minima = np.unique(np.round(r.x, 6), axis=0)
    print(f"\nHimmelblau from a 7 x 7 grid of starts (adam): {r.message}")
    for m in minima:
        print(f"  minimum at ({m[0]: .6f}, {m[1]: .6f})")

    try:
        from chainrule.plot import loss_curve
    except ImportError:
        print("(matplotlib is missing: pip install chainrule[plot] for the picture)")
        return
    path = out / "optimizers.png"
    loss_curve(runs, ylabel="Rosenbrock f", title="Rosenbrock from (-1.2, 1): loss per step", path=path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
