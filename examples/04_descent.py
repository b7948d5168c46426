"""Gradient descent on L = b(a + b)(a - b): one step by hand, then 50 starts in one vectorised run.

    python examples/04_descent.py [--out DIR] [--seed N]

A step against the gradient lowers L. chainrule.optimize.minimize runs many starts at once:
f is written for one point x = (a, b) and evaluated for all starts in one call.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

import chainrule as cr
from chainrule.optimize import minimize


def L(x):  # x = (a, b); with x of shape (2, n_starts) this evaluates every start at once
    return x[1] * (x[0] + x[1]) * (x[0] - x[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for the pictures (default: a temp folder)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="chainrule-example-"))

    x = np.array([1.0, 2.0])
    g = cr.grad(L)(x)
    print(f"L(1, 2) = {L(x)}, gradient {g}")
    alpha = 0.01
    print(f"a -= {alpha} * dL/da  ->  L = {L(np.array([1.0 - alpha * g[0], 2.0])):.6f}")
    print(f"b -= {alpha} * dL/db  ->  L = {L(np.array([1.0, 2.0 - alpha * g[1]])):.6f}")

    starts = np.random.default_rng(args.seed).uniform(-10, 10, size=(50, 2))
    result = minimize(L, starts, method="gd", lr=1e-3, steps=25, tol=None)
    values = result.trajectory.values
    print(f"\n50 starts, 25 steps: positions {result.trajectory.positions.shape}")
    print(f"L went down for {int(np.sum(values[-1] < values[0]))} of 50 starts")

    try:
        from chainrule.plot import trajectories, vector_field
    except ImportError:
        print("(matplotlib is missing: pip install chainrule[plot] for the pictures)")
        return
    labels = ("$a$", "$b$")
    path = out / "vector_field.png"
    vector_field(L, (-10, 10), (-10, 10), labels=labels, label="$L = b(a+b)(a-b)$", path=path)
    print(f"wrote {path}")
    path = out / "trajectories.png"
    trajectories(result, L, labels=labels, label="$L$", title="50 descent paths, lr = 1e-3, 25 steps", path=path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
