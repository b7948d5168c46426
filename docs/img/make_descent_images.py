"""Regenerate the pictures used by docs/descent.md: ``python docs/img/make_descent_images.py``.

tangent.png (seed 002's first figure), vector_field.png and trajectories.png (seed 002's
descent on b(a + b)(a - b)), optimizers.png (four methods on Rosenbrock).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from chainrule.optimize import minimize
from chainrule.plot import loss_curve, tangent, trajectories, vector_field

HERE = Path(__file__).resolve().parent


def cubic(x):
    return x**3 - 10 * x**2 + 5 * x - 2


def L(x):
    return x[1] * (x[0] + x[1]) * (x[0] - x[1])


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def main() -> None:
    tangent(
        cubic,
        6.0,
        analytic=lambda x: 3 * x**2 - 20 * x + 5,
        xrange=(0, 10),
        label="$f(x) = x^3 - 10x^2 + 5x - 2$",
        title="Tangent of $f$ at $x_0 = 6$: autodiff, finite difference, analytic",
        path=HERE / "tangent.png",
    )
    labels = ("$a$", "$b$")
    vector_field(
        L,
        (-10, 10),
        (-10, 10),
        labels=labels,
        label="$L = b(a+b)(a-b)$",
        title="$L = b(a+b)(a-b)$ and its gradient field",
        path=HERE / "vector_field.png",
    )
    starts = np.random.default_rng(0).uniform(-10, 10, size=(50, 2))
    result = minimize(L, starts, method="gd", lr=1e-3, steps=25, tol=None)
    trajectories(
        result,
        L,
        labels=labels,
        label="$L = b(a+b)(a-b)$",
        title="50 descent paths on $L = b(a+b)(a-b)$ (lr = 1e-3, 25 steps)",
        path=HERE / "trajectories.png",
    )
    settings = {"gd": 1.9e-3, "momentum": 1e-3, "nesterov": 1e-3, "adam": lambda t: 0.1 / (1 + t / 1000)}
    runs = {
        m: minimize(rosenbrock, np.array([-1.2, 1.0]), method=m, lr=lr, steps=3000, tol=1e-7)
        for m, lr in settings.items()
    }
    loss_curve(
        runs, ylabel="Rosenbrock $f$", title="Rosenbrock from $(-1.2, 1)$: four methods", path=HERE / "optimizers.png"
    )
    for name in ("tangent.png", "vector_field.png", "trajectories.png", "optimizers.png"):
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
