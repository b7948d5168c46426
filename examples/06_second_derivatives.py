"""Second derivatives: differentiate the derivative.

    python examples/06_second_derivatives.py

chainrule's transforms nest: grad(grad(f)), the Hessian (reverse over reverse), a
Hessian-vector product without building the Hessian (forward over reverse).
"""

from __future__ import annotations

import argparse

import numpy as np

import chainrule as cr


def L(a, b):
    return b * ((a + b) * (a - b))


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(f"dL/da, dL/db at (1, 2): {cr.grad(L, argnums=(0, 1))(1.0, 2.0)}")
    print(f"d2L/da2 = {cr.grad(cr.grad(L, argnums=0), argnums=0)(1.0, 2.0)}   (2b)")
    print(f"d2L/db2 = {cr.grad(cr.grad(L, argnums=1), argnums=1)(1.0, 2.0)}   (-6b)")

    point = np.array([1.0, 2.0])
    H = cr.hessian(lambda x: L(x[0], x[1]))(point)
    print(f"Hessian at (1, 2):\n{H}")
    v = np.array([1.0, 0.0])
    print(f"Hessian-vector product with {v}: {cr.hvp(lambda x: L(x[0], x[1]), (point,), (v,))}")

    f = lambda x: x**3 - 10 * x**2 + 5 * x - 2
    print(f"f(x) = x^3 - 10x^2 + 5x - 2: f''(6) = {cr.deriv(f, 2)(6.0)}, f'''(6) = {cr.deriv(f, 3)(6.0)}")


if __name__ == "__main__":
    main()
